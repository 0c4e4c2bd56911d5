"""Benchmark nimlab's Grundy sequences against the plain quadratic method, in the same run.

    python bench/bench_grundy.py            # ratios against the baselines, two quick targets
    python bench/bench_grundy.py --full     # plus every published target (minutes), each in a
                                            # fresh process for its own time and peak memory
    python bench/bench_grundy.py --only 0.354 --only 0.6

The quick run also times a game with a digit before the point (4.16: splits that take nothing)
against the pure-Python twin, and shows that G(10**30) of Dawson's Kayles costs what G(10)
costs once the period is proven (ratio ~1).

    python bench/bench_grundy.py --race     # nimlab against ogs (rare/common RC and RC2, when
                                            # cargo is there) and nimlab's previous revision
    python bench/bench_grundy.py --race --size 16777216 --games 0.16,0.356 --repeat 1

Machines are noisy (and often shared): compare the ratios, not the absolute times. Times are
wall-clock and CPU seconds of the call itself; Numba compilation is excluded by a warm-up call.
The race times whole processes (start-up included), as a user meets them, the median of
``--repeat`` runs: ``nimlab grundy CODE --max N --json`` now, the same command at the revision
``--previous`` (unpacked from git into a temporary folder: the method before the vectorised
search and the second thread) and ogs; then the library alone in a bare Python process (kernels
loaded, no command line) on one and on two threads, in values/s and values per CPU second,
checked against ogs's G(N - 1) and largest value.
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
PEERS = os.environ.get("NIMLAB_PEERS", "/work/shared/peers")
PREVIOUS = "58bf219"
"""nimlab before the vectorised search and the second thread (one thread, every pending value
looked for pair by pair): ``--previous REV`` names another revision of this repository."""
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


def previous_source(rev: str) -> str | None:
    """The ``src`` folder of revision ``rev`` of this repository, unpacked into a temporary
    folder (its kernels compile there once), or None without git or that revision."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    folder = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"nimlab-previous-{rev}")
    if os.path.isdir(os.path.join(folder, "src", "nimlab")):
        return os.path.join(folder, "src")
    os.makedirs(folder, exist_ok=True)
    archive = subprocess.run(
        ["git", "-C", root, "archive", rev, "src"], capture_output=True, check=False
    )
    if archive.returncode != 0:
        return None
    subprocess.run(["tar", "-x", "-C", folder], input=archive.stdout, check=True)
    return os.path.join(folder, "src")


def race(games: list[str], size: int, rev: str, repeat: int) -> None:
    """Whole-process wall time of ``nimlab grundy GAME --max N --json`` now, at revision
    ``rev`` and of ogs (best of RC and RC2), side by side; then the library alone (kernels
    loaded) on one and two threads: values/s and values per CPU second (per core)."""
    nimlab = shutil.which("nimlab") or os.path.join(os.path.dirname(sys.executable), "nimlab")
    ogs = ogs_driver()
    old_src = previous_source(rev)
    old_env = None
    if old_src is not None:
        old_env = dict(os.environ, PYTHONPATH=old_src)
    old_cli = [sys.executable, "-c", "import sys; from nimlab.cli import main; main()"]
    print(
        f"race to {size:,} values, median of {repeat} (whole processes; ogs: "
        f"{'best of RC, RC2' if ogs else 'none'}; previous: {rev if old_src else 'none'})"
    )
    args = ["grundy", "", "--max", str(size), "--json"]
    for game in games:
        args[1] = game
        # warm: compiled kernels in the cache, both versions
        wall([nimlab, *args[:2], "--max", "5000"], 3600)
        if old_env is not None:
            wall([*old_cli, *args[:2], "--max", "5000"], 3600, old_env)
        now_t, old_t, ogs_t = [], [], []
        capped = False
        ogs_says = None
        for _ in range(repeat):
            n_t, _ = wall([nimlab, *args], 3600)
            now_t.append(n_t or float("inf"))
            if old_env is not None:
                o_t, _ = wall([*old_cli, *args], 3600, old_env)
                old_t.append(o_t or float("inf"))
            if ogs:
                best = None
                for method in ("rc", "rc2"):
                    cap = max(10.0, 3 * now_t[-1])
                    p_t, p_out = wall([ogs, game, str(size - 1), method], cap)
                    capped = capped or p_t is None
                    m = re.search(r"G\(n\)=(\d+) max=(\d+)", p_out)
                    ogs_says = (int(m[1]), int(m[2])) if m else ogs_says
                    best = min(best or cap, p_t or cap)
                ogs_t.append(best or float("inf"))
        cells = [f"{game:>6}", f"nimlab {_rate(median(now_t), size)}"]
        if old_t:
            cells.append(f"previous {_rate(median(old_t), size)}")
            cells.append(f"previous/nimlab {median(old_t) / median(now_t):5.2f}x")
        if ogs_t:
            more = "+" if capped else ""  # ogs stopped at the cap at least once
            cells.append(f"ogs {_rate(median(ogs_t), size)}{more}")
            cells.append(f"ogs/nimlab {median(ogs_t) / median(now_t):5.2f}x{more}")
        print("  ".join(cells))
        lib = []
        for threads in (1, 2):
            _, out = wall([sys.executable, "-c", LIBRARY, game, str(size), str(threads)], 3600)
            if out:
                r = json.loads(out)
                if ogs_says is not None and (r["last"], r["max"]) != ogs_says:
                    lib.append(f"DISAGREE with ogs: G(n), max {ogs_says}, nimlab {r}")
                lib.append(
                    f"library on {threads} thread{'s' if threads > 1 else ''}: "
                    f"{size / r['wall'] / 1e6:5.2f}M values/s, "
                    f"{size / r['cpu'] / 1e6:5.2f}M per CPU second"
                )
        if lib:
            print(f"{'':>8}" + "; ".join(lib))
        sys.stdout.flush()


def median(xs: list[float]) -> float:
    return statistics.median(xs)


def _rate(seconds: float, size: int) -> str:
    return f"{seconds:6.2f} s {size / seconds / 1e6:5.2f}M/s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="run every published target")
    parser.add_argument("--only", action="append", default=[], help="run only these targets")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--race", action="store_true", help="nimlab against ogs and before")
    parser.add_argument("--size", type=int, default=1 << 20, help="values in the race")
    parser.add_argument("--games", default=RACE_GAMES, help="games in the race")
    parser.add_argument("--previous", default=PREVIOUS, help="the revision to race against")
    parser.add_argument("--repeat", type=int, default=3, help="runs per game (the median)")
    args = parser.parse_args()
    if args.race:
        race(args.games.split(","), args.size, args.previous, args.repeat)
        return
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
