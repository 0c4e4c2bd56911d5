"""Benchmark nimlab's Grundy sequences against the plain quadratic method, in the same run.

    python bench/bench_grundy.py            # ratios against the baselines, two quick targets
    python bench/bench_grundy.py --full     # plus every published target (minutes), each in a
                                            # fresh process for its own time and peak memory
    python bench/bench_grundy.py --only 0.354 --only 0.6

The quick run also times a game with a digit before the point (4.16: splits that take nothing)
against the pure-Python twin, and shows that G(10**30) of Dawson's Kayles costs what G(10)
costs once the period is proven (ratio ~1).

    python bench/bench_grundy.py --race                 # nimlab against ogs at 2^20, 2^24, 2^26
    python bench/bench_grundy.py --race --quick         # 2^20 only, one run per game
    python bench/bench_grundy.py --race --sizes 24 --games alike --repeat 1

Machines are noisy (and often shared): compare the ratios, not the absolute times. Times are
wall-clock and CPU seconds of the call itself; Numba compilation is excluded by a warm-up call.

The race (against the ogs crate's rare/common solvers RC and RC2, built with cargo from the
peers' folder, as the peers' race.py does) prints, for each size in ``--sizes``, the median of
``--repeat`` runs per game and the ratio ogs / nimlab, then a table of the ratios. Sizes up to
``--in-process`` (2^20) are raced warm and in-process: a running Python times
``nimlab.grundy(code, N)`` (start-up and kernels paid before), ogs its own compute time. Larger
sizes are raced as whole processes, start-up included, as a user meets them: ``nimlab grundy
CODE --max N --json`` against the ogs driver's process (ogs stopped at max(10 s, 3x nimlab's
time), shown "+"); then the library alone in a process (kernels loaded) says how much of the
time start-up and the rest took. Every size checks G(N - 1) and the largest value against
ogs's (exit status 1 on a disagreement). ``--previous REV`` races a revision of this repository
too (unpacked from git into a temporary folder), in the same runs. The load average is printed
before and after each size.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Any

from nimlab.theory.grundy import grundy_sequence, grundy_value, naive_grundy
from nimlab.theory.octal import TakeAndBreak
from revisions import source_at


@dataclass(frozen=True)
class Target:
    code: str
    maximum: int
    published: str
    period: int | None = None
    preperiod: int | None = None
    budget: str = ""


TARGETS = [
    # rare values (tczajka/octal-games SolvedGames.md, after Flammenkamp): 0.16 53 (mask 0x1e),
    # 0.127 693 (mask 1 + heap parity), 0.376 510 (0xfe), 0.354 132 (0x3f)
    Target("0.16", 1 << 21, "preperiod 105,351, period 149,459; 53 rare", 149_459, 105_351, "1 s"),
    # "last exception at n = 46,577" (OEIS A071464): G(46577) != G(46581), periodic after it
    Target("0.127", 1 << 21, "last exception 46,577, period 4; 693 rare", 4, 46_578, "1 s"),
    Target(
        "0.354", 1 << 26, "preperiod 10,061,916, period 1,180; 132 rare", 1_180, 10_061_916, "30 s"
    ),
    Target("0.376", 1 << 24, "preperiod 2,268,248, period 4; 510 rare", 4, 2_268_248, "60 s"),
    # "The last exception is at n = 160,949,017" (OEIS A071509, from Flammenkamp)
    Target(
        "0.1777",
        1 << 29,
        "period 60,620,715, last exception 160,949,017",
        60_620_715,
        160_949_018,
        "10 min, 2 GB",
    ),
    Target("0.6", 1 << 21, "open: values to 2**21, number of rare values"),
    Target("0.106", 1 << 21, "open: values to 2**21, number of rare values"),
]


def max_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: kilobytes


def timed(fn: Any, *args: Any, **kwargs: Any) -> tuple[Any, float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - wall, time.process_time() - cpu


def run_target(code: str) -> dict[str, Any]:
    """One target in this process: warm up, run, report (printed as one JSON line)."""
    target = next(t for t in TARGETS if t.code == code)
    rule = TakeAndBreak.octal(code)
    grundy_sequence(rule, 5000, prove=True)  # compile / load the cached kernels
    prove = target.period is not None
    seq, wall, cpu = timed(grundy_sequence, rule, target.maximum, prove=prove)
    out: dict[str, Any] = {
        "code": code,
        "wall": wall,
        "cpu": cpu,
        "max_rss_mb": max_rss_mb(),
        "values": len(seq),
        "period": seq.period,
        "preperiod": seq.preperiod,
        "proven": seq.proven,
        "rare_mask": seq.rare_mask,
        "rare_positional": seq.rare_positional,
        "rare_count": seq.rare_count,
        "last_rare": seq.last_rare,
        "max_value": int(seq.values.max()) if len(seq) else 0,
    }
    if prove:
        ok = seq.proven and (seq.period, seq.preperiod) == (target.period, target.preperiod)
        if ok and seq.preperiod:  # the last exception really is one
            last = seq.preperiod - 1
            ok = bool(seq.values[last] != seq.values[last + seq.period])
        out["reproduced"] = ok
    return out


def run_in_child(code: str) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, __file__, "--child", code], capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        return {"code": code, "error": proc.stderr.strip().splitlines()[-1:]}
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def report(result: dict[str, Any]) -> None:
    target = next(t for t in TARGETS if t.code == result["code"])
    if "error" in result:
        print(f"{target.code:>7}  FAILED: {result['error']}")
        return
    rare = result["rare_count"]
    rare_text = (
        f"{rare:,} rare values (mask {result['rare_mask']:#x}"
        f"{' with the heap parity' if result['rare_positional'] else ''}, "
        f"last {result['last_rare']:,})"
        if rare is not None
        else "no rare/common split"
    )
    verdict = (
        f"reproduced: {'YES' if result['reproduced'] else 'NO'}" if "reproduced" in result else ""
    )
    print(
        f"{target.code:>7}  {result['wall']:8.2f} s wall {result['cpu']:8.2f} s cpu  "
        f"{result['max_rss_mb']:6.0f} MB peak  {result['values']:>12,} values  "
        f"period {result['period']}, preperiod {result['preperiod']}, "
        f"proven {result['proven']}  {verdict}"
    )
    print(f"{'':>9}{rare_text}, largest value {result['max_value']}")
    print(f"{'':>9}published: {target.published}; target {target.budget or '-'}")


def ratios() -> None:
    """The same work by the pure-Python twin, the compiled quadratic method and the fast path."""
    rule = TakeAndBreak.octal("0.16")
    grundy_sequence(rule, 5000)
    grundy_sequence(rule, 5000, method="quadratic")
    size = 1000
    _, naive_t, _ = timed(naive_grundy, rule, size)
    while naive_t < 2.0 and size < 8000:  # a size where the naive twin takes a few seconds
        size *= 2
        _, naive_t, _ = timed(naive_grundy, rule, size)
    reps = 20
    _, quad_t, _ = timed(
        lambda: [grundy_sequence(rule, size, method="quadratic") for _ in range(reps)]
    )
    _, fast_t, _ = timed(lambda: [grundy_sequence(rule, size) for _ in range(reps)])
    quad_t, fast_t = quad_t / reps, fast_t / reps
    print(f"0.16, {size:,} values (naive pure Python {naive_t:.2f} s):")
    for name, seconds in (("compiled quadratic", quad_t), ("nimlab (auto)", fast_t)):
        print(f"  {name:<19} {seconds * 1e3:9.2f} ms   naive / this = {naive_t / seconds:8.0f}x")

    big = 60_000
    _, quad_big, _ = timed(grundy_sequence, rule, big, method="quadratic")
    _, fast_big, _ = timed(grundy_sequence, rule, big)
    print(
        f"0.16, {big:,} values: compiled quadratic {quad_big:.2f} s, nimlab {fast_big:.3f} s,"
        f" quadratic / nimlab = {quad_big / fast_big:.0f}x"
    )

    proof = 2 * 160_949_018 + 2 * 60_620_715 + 4
    per_pair = naive_t / (size * size)
    print(
        f"0.1777 needs {proof:,} values: the naive method would take about "
        f"{per_pair * proof * proof / 3.15e7:,.0f} years at this rate"
    )


def full_notation() -> None:
    """A code with 4 before the point through the kernels, and huge heaps by the proven period."""
    rule = TakeAndBreak.octal("4.16")
    grundy_sequence(rule, 5000)
    size = 500
    _, naive_t, _ = timed(naive_grundy, rule, size)
    while naive_t < 1.0 and size < 8000:
        size *= 2
        _, naive_t, _ = timed(naive_grundy, rule, size)
    reps = 20
    _, fast_t, _ = timed(lambda: [grundy_sequence(rule, size) for _ in range(reps)])
    fast_t /= reps
    print(
        f"4.16, {size:,} values: naive {naive_t:.2f} s, nimlab {fast_t * 1e3:.2f} ms,"
        f" naive / nimlab = {naive_t / fast_t:.0f}x"
    )
    dawson = TakeAndBreak.octal("0.07")
    _, first, _ = timed(grundy_value, dawson, 10**30)
    calls = 100_000
    _, small, _ = timed(lambda: [grundy_value(dawson, 10 + i % 50) for i in range(calls)])
    _, huge, _ = timed(lambda: [grundy_value(dawson, 10**30 + i) for i in range(calls)])
    print(
        f"0.07: first G(10**30) {first * 1e3:.1f} ms (finds and proves the period); then "
        f"G(10**30 + i) {huge / calls * 1e6:.2f} us vs G(10 + i) {small / calls * 1e6:.2f} us"
        f" per call, ratio {huge / small:.2f}"
    )


RACE_GAMES = "0.6,0.14,0.36,0.16,0.356"
ALIKE_GAMES = "0.37,0.64,0.56,0.106,0.07"
"""Other octal games to race, "alike" the five of the issue (open games with rare values:
0.37, 0.64 and 0.56 like 0.6, 0.106 like 0.16 with few; Dawson's Kayles proven periodic):
``--games alike``."""
PEERS = os.environ.get("NIMLAB_PEERS", "/work/shared/peers")
WARM = (
    "import json, sys, time, nimlab\n"
    "code, n, runs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])\n"
    "nimlab.grundy(code, 5000)\n"
    "walls = []\n"
    "for _ in range(runs):\n"
    "    began = time.perf_counter()\n"
    "    g = nimlab.grundy(code, n, seconds=86400)\n"
    "    walls.append(time.perf_counter() - began)\n"
    "print(json.dumps({'walls': walls, 'last': g.values[-1], 'max': max(g.values),\n"
    "                  'stopped': g.stopped}))\n"
)
"""A running Python (start-up and kernels paid by a first small call) timing ``runs`` calls of
``nimlab.grundy(code, n)``, the library as a user calls it (the values as a tuple of ints)."""
LIBRARY = (
    "import json, sys, time; import nimlab.theory.grundy as G;"
    " from nimlab.theory.octal import TakeAndBreak; G.warm_up();"
    " G._THREADS = min(G._THREADS, int(sys.argv[3]));"
    " w, c = time.perf_counter(), time.process_time();"
    " s = G.grundy_sequence(TakeAndBreak.octal(sys.argv[1]), int(sys.argv[2]));"
    " print(json.dumps({'wall': time.perf_counter() - w, 'cpu': time.process_time() - c,"
    " 'last': int(s.values[-1]), 'max': int(s.values.max())}))"
)
"""The library alone in a bare process, kernels loaded first: the computation's own wall and
CPU seconds, on at most ``argv[3]`` threads."""
OGS_LINE = re.compile(r"time=\s*([0-9.]+)s.*G\(n\)=(\d+) max=(\d+)")


def ogs_driver() -> str | None:
    """The ogs race driver (built once with cargo, offline), or None without cargo or peers."""
    target = os.path.join(os.environ.get("TMPDIR", "/tmp"), "ogsbench-target")
    binary = os.path.join(target, "release", "ogsbench")
    source = os.path.join(PEERS, "ogsbench")
    if os.path.exists(binary):
        return binary
    if shutil.which("cargo") is None or not os.path.isdir(source):
        return None
    build = ["cargo", "build", "--release", "--offline", "-q", "--target-dir", target]
    done = subprocess.run(build, cwd=source, capture_output=True, check=False)
    return binary if done.returncode == 0 and os.path.exists(binary) else None


def wall(
    cmd: list[str], timeout: float, env: dict[str, str] | None = None
) -> tuple[float | None, str]:
    began = time.perf_counter()
    try:
        out = subprocess.run(
            cmd, capture_output=True, text=True, timeout=timeout, check=False, env=env
        )
    except subprocess.TimeoutExpired:
        return None, ""
    return time.perf_counter() - began, out.stdout


@dataclass
class Peer:
    """ogs on one game and size: the best of RC and RC2 (both on the first run, then the faster
    one), its process wall times, its own compute times, and what it says G(N - 1) and the
    largest value are. ``capped``: neither method finished within the cap (max(10 s, 3x
    nimlab's time)) at least once, so its times are lower bounds."""

    binary: str
    game: str
    size: int
    method: str | None = None
    walls: list[float] | None = None
    computes: list[float] | None = None
    says: tuple[int, int] | None = None
    capped: bool = False

    def run(self, cap: float) -> None:
        best_wall, best_compute = cap, cap
        for method in (self.method,) if self.method else ("rc", "rc2"):
            took, out = wall([self.binary, self.game, str(self.size - 1), method], cap)
            m = OGS_LINE.search(out)
            if took is None or m is None:
                continue
            self.says = (int(m[2]), int(m[3]))
            if took < best_wall:
                best_wall, best_compute = took, float(m[1])
                self.method = self.method or method
        self.capped = self.capped or best_wall >= cap  # neither method finished
        self.walls = [*(self.walls or []), best_wall]
        self.computes = [*(self.computes or []), best_compute]


def _load() -> str:
    return f"load {os.getloadavg()[0]:.1f}"


def _exponent(text: str) -> int:
    """``"24"`` is 2^24 values; a larger number is a count of values itself."""
    n = int(text)
    return 1 << n if n < 64 else n


def _size_name(size: int) -> str:
    e = size.bit_length() - 1
    return f"2^{e}" if size == 1 << e else f"{size:,}"


def race(
    games: list[str], sizes: list[int], rev: str | None, repeat: int, in_process_up_to: int
) -> int:
    """Race ogs at every size: up to ``in_process_up_to`` values in-process and warm (a running
    Python calls ``nimlab.grundy(code, n)`` with start-up and kernels paid; ogs's own compute
    time), beyond it as whole processes (``nimlab grundy CODE --max N --json`` against the ogs
    driver's process, start-up included, as race.py does; then the library alone in a process,
    kernels loaded, which also gives G(N - 1) and the largest value). Medians of ``repeat``
    runs; the agreement with ogs is checked at every size. Prints the ratios ogs / nimlab, a
    table of them at the end, and returns the number of disagreements."""
    nimlab = [sys.executable, "-m", "nimlab"]  # (this interpreter and its PYTHONPATH)
    ogs = ogs_driver()
    old_src = source_at(rev) if rev else None
    old_env = dict(os.environ, PYTHONPATH=old_src) if old_src else None
    old_cli = [sys.executable, "-c", "import sys; from nimlab.cli import main; main()"]
    print(
        f"grundy race, median of {repeat} (ogs: {'best of RC, RC2' if ogs else 'not found'}; "
        f"previous: {rev if old_src else 'none'}; {os.cpu_count()} cores, {_load()})"
    )
    table: dict[tuple[str, int], str] = {}
    wrong = 0
    for game in games:  # kernels compiled and cached, for both versions
        wall([*nimlab, "grundy", game, "--max", "5000"], 3600)
        if old_env is not None:
            wall([*old_cli, "grundy", game, "--max", "5000"], 3600, old_env)
    for size in sizes:
        warm = size <= in_process_up_to
        kind = (
            "in-process, warm (nimlab.grundy in a running Python; ogs: its own compute time)"
            if warm
            else "whole processes (nimlab grundy CODE --max N --json; ogs: its process)"
        )
        print(f"\n{_size_name(size)} = {size:,} values, {kind}; {_load()}")
        for game in games:
            cells, says, ratio = _race_one(game, size, warm, repeat, nimlab, ogs, old_cli, old_env)
            print("  ".join(cells))
            nimlab_says, peer = says
            if peer.says is not None and nimlab_says is not None and nimlab_says != peer.says:
                wrong += 1
                print(f"{'':>8}DISAGREE: ogs G(N-1), max = {peer.says}, nimlab {nimlab_says}")
            table[game, size] = ratio
            sys.stdout.flush()
        print(f"({_load()})")
    print("\nogs / nimlab (goal: 2x; '+': ogs stopped at its cap, a lower bound)")
    print(f"{'game':>7}" + "".join(f"{_size_name(s):>12}" for s in sizes))
    for game in games:
        print(f"{game:>7}" + "".join(f"{table[game, s]:>12}" for s in sizes))
    if wrong:
        print(f"{wrong} disagreements with ogs")
    return wrong


def _race_one(
    game: str,
    size: int,
    warm: bool,
    repeat: int,
    nimlab: list[str],
    ogs: str | None,
    old_cli: list[str],
    old_env: dict[str, str] | None,
) -> tuple[list[str], tuple[tuple[int, int] | None, Peer], str]:
    """One game at one size: the row's cells, (nimlab's and ogs's G(N - 1) and largest value),
    and the ratio's text."""
    peer = Peer(ogs or "", game, size)
    now_t: list[float] = []
    old_t: list[float] = []
    says: tuple[int, int] | None = None
    cells = [f"{game:>7}"]
    lib = ""
    if warm:
        _, out = wall([sys.executable, "-c", WARM, game, str(size), str(repeat)], 3600)
        if out:
            r = json.loads(out)
            now_t = r["walls"]
            says = (r["last"], r["max"])
            if r["stopped"]:
                cells.append(f"STOPPED ({r['stopped']})")
        if old_env is not None:
            _, out = wall([sys.executable, "-c", WARM, game, str(size), str(repeat)], 3600, old_env)
            old_t = json.loads(out)["walls"] if out else []
        for run in range(repeat):
            if ogs:
                peer.run(max(10.0, 3 * now_t[min(run, len(now_t) - 1)] + 1.0) if now_t else 600)
        peer_t = peer.computes or []
    else:
        args = ["grundy", game, "--max", str(size), "--json"]
        for _ in range(repeat):
            took, out = wall([*nimlab, *args], 7200)
            if took is None or _answered(out) != size:
                cells.append("FAILED (nimlab grundy gave no answer)")
                return cells, (None, peer), "-"
            now_t.append(took)
            if old_env is not None:
                took, out = wall([*old_cli, *args], 7200, old_env)
                old_t.append(took if took is not None and _answered(out) == size else float("inf"))
            if ogs:
                peer.run(max(10.0, 3 * now_t[-1]))
        peer_t = peer.walls or []
        _, out = wall([sys.executable, "-c", LIBRARY, game, str(size), "2"], 7200)
        if out:
            r = json.loads(out)
            says = (r["last"], r["max"])
            lib = (
                f"library alone {_rate(r['wall'], size)} ({r['cpu'] / r['wall']:.2f} cores), "
                f"start-up and the rest {median(now_t) - r['wall']:.2f} s"
            )
    ratio = "-"
    if now_t:
        cells.append(f"nimlab {_rate(median(now_t), size)}")
    if old_t:
        cells.append(f"previous {_rate(median(old_t), size)}")
        cells.append(f"previous/nimlab {median(old_t) / median(now_t):5.2f}x")
    if peer_t and now_t:
        more = "+" if peer.capped else ""
        ratio = f"{max(median(peer_t), 1e-6) / median(now_t):.2f}x{more}"
        cells.append(f"ogs ({peer.method}) {_rate(median(peer_t), size)}{more}")
        cells.append(f"ogs/nimlab {ratio}")
    if says is not None:
        cells.append(f"G(N-1) {says[0]}, max {says[1]}")
    if lib:
        cells.append(lib)
    return cells, (says, peer), ratio


def _answered(out: str) -> int | None:
    """How many values a ``nimlab grundy --json`` answer says it computed (None: no answer)."""
    try:
        return int(json.loads(out)["max"])
    except (ValueError, KeyError, TypeError):
        return None


def median(xs: list[float]) -> float:
    return statistics.median(xs)


def _rate(seconds: float, size: int) -> str:
    seconds = max(seconds, 1e-6)  # (ogs prints its time to the millisecond)
    if seconds < 1:
        return f"{seconds * 1e3:7.1f} ms {size / seconds / 1e6:6.2f}M/s"
    return f"{seconds:7.2f} s  {size / seconds / 1e6:6.2f}M/s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="run every published target")
    parser.add_argument("--only", action="append", default=[], help="run only these targets")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--race", action="store_true", help="nimlab against ogs")
    parser.add_argument(
        "--sizes",
        default="20,24,26",
        help="race sizes: exponents (20 is 2^20 values) or counts, comma-separated",
    )
    parser.add_argument("--size", type=int, help="race one size (a count of values)")
    parser.add_argument(
        "--in-process",
        type=_exponent,
        default=1 << 20,
        help="sizes up to this one race in-process and warm, larger ones as whole processes",
    )
    parser.add_argument(
        "--games", default=RACE_GAMES, help=f"games in the race ('alike': {ALIKE_GAMES})"
    )
    parser.add_argument("--previous", help="also race this revision of nimlab (e.g. 58bf219)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per game (the median)")
    parser.add_argument(
        "--quick", action="store_true", help="the race at 2^20 only, one run per game"
    )
    args = parser.parse_args()
    if args.race:
        sizes = [args.size] if args.size else [_exponent(x) for x in args.sizes.split(",")]
        repeat = args.repeat
        if args.quick:
            sizes, repeat = [1 << 20], 1
        games = (ALIKE_GAMES if args.games == "alike" else args.games).split(",")
        wrong = race(games, sizes, args.previous, repeat, args.in_process)
        sys.exit(1 if wrong else 0)
    if args.child:
        print(json.dumps(run_target(args.child)))
        return
    if not args.only:
        ratios()
        full_notation()
        print()
    codes = args.only or [t.code for t in TARGETS if args.full or t.code in ("0.16", "0.127")]
    for code in codes:
        report(run_in_child(code))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
