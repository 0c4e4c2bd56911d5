"""Benchmark: SplitSolver (compiled search) against ExactSolver (pure Python), in one run.

    python bench/bench_splitsearch.py            # every target
    python bench/bench_splitsearch.py --quick    # skip the large targets

For each target both solvers start from an empty table and solve the same position; the script
checks that they agree (outcome and remoteness), and prints wall and CPU seconds, the positions
each stored, positions per CPU second and the ratio of the CPU times. The large targets are
solved by SplitSolver only (ExactSolver would need minutes; its rate per position falls as the
positions grow, so no estimate is printed). Numba's compile time is measured in a fresh process
with an empty cache and excluded from every figure. Machines are noisy (and shared): read the
CPU columns and the ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

from nimlab.theory.octal import TakeAndBreak
from nimlab.theory.positions import Canon
from nimlab.theory.solver import ExactSolver, Value
from nimlab.theory.splitsearch import SplitSolver

CLASSIC_ENDS: frozenset[Canon] = frozenset({(2, 2, 2), (1, 2, 3), (1, 1, 2, 2)})
KAYLES = TakeAndBreak.octal("0.77")
DAWSON = TakeAndBreak.octal("0.07")


@dataclass(frozen=True)
class Target:
    label: str
    rule: TakeAndBreak
    misere: bool
    ends: frozenset[Canon]
    position: Canon


SMALL = [
    Target("misère Kayles", KAYLES, True, frozenset(), (20, 20)),
    Target("misère Kayles", KAYLES, True, frozenset(), (26, 26)),
    Target("Kayles, classic ends, misère", KAYLES, True, CLASSIC_ENDS, (6, 8, 10, 12)),
    Target("Dawson's Kayles misère", DAWSON, True, frozenset(), (25, 30)),
    Target("0.137 normal play", TakeAndBreak.octal("0.137"), False, frozenset(), (20, 22)),
]
LARGE = [
    Target("misère Kayles", KAYLES, True, frozenset(), (30, 40)),
    Target("Kayles, classic ends, misère", KAYLES, True, CLASSIC_ENDS, (20, 20, 20)),
    Target("Dawson's Kayles misère", DAWSON, True, frozenset(), (40, 50)),
]


def max_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def timed_split(t: Target) -> tuple[float, float, int, int, Value]:
    """Wall and CPU seconds, positions stored and bytes held by a cold SplitSolver."""
    solver = SplitSolver(t.rule, misere=t.misere, end_positions=t.ends)
    wall, cpu = time.perf_counter(), time.process_time()
    value = solver.value(t.position)
    return (
        time.perf_counter() - wall,
        time.process_time() - cpu,
        len(solver),
        solver.nbytes,
        value,
    )


def timed_exact(t: Target) -> tuple[float, float, int, Value]:
    solver = ExactSolver(t.rule, misere=t.misere, end_positions=t.ends, budget=10**8)
    wall, cpu = time.perf_counter(), time.process_time()
    value = solver.value(t.position)
    return time.perf_counter() - wall, time.process_time() - cpu, len(solver), value


def child_compile() -> None:
    """Run in a fresh process with an empty NUMBA_CACHE_DIR: the first query compiles."""
    start = time.perf_counter()
    SplitSolver(KAYLES, misere=True).value((3, 4))
    print(json.dumps({"seconds": time.perf_counter() - start}))


def compile_seconds() -> float:
    with tempfile.TemporaryDirectory() as cache_dir:
        out = subprocess.run(
            [sys.executable, __file__, "--compile"],
            check=True,
            capture_output=True,
            text=True,
            env={**os.environ, "NUMBA_CACHE_DIR": cache_dir},
        )
    seconds: float = json.loads(out.stdout.strip().splitlines()[-1])["seconds"]
    return seconds


def rate(positions: int, seconds: float) -> str:
    return f"{positions / seconds / 1e6:6.2f} M/s" if seconds > 0 else "     - M/s"


def main(quick: bool) -> None:
    print(f"{os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.1f}")
    print(f"Numba kernels: compile {compile_seconds():.1f} s (empty cache, fresh process)")
    start = time.perf_counter()
    SplitSolver(KAYLES, misere=True).value((3, 4))
    print(f"load from cache {1e3 * (time.perf_counter() - start):.0f} ms; both excluded below\n")

    header = (
        f"{'target':<30}{'position':<14}{'stored':>10}{'Split wall':>11}{'CPU':>8}"
        f"{'rate':>12}{'Exact CPU':>11}{'stored':>10}{'rate':>12}{'ratio':>8}"
    )
    print(header)
    print("-" * len(header))
    for t in SMALL:
        s_wall, s_cpu, s_stored, _, s_value = timed_split(t)
        for _ in range(2):  # best of three
            w, c, _n, _b, _v = timed_split(t)
            s_wall, s_cpu = min(s_wall, w), min(s_cpu, c)
        _e_wall, e_cpu, e_stored, e_value = timed_exact(t)
        assert s_value == e_value, (t, s_value, e_value)
        print(
            f"{t.label:<30}{t.position!s:<14}{s_stored:>10,}{s_wall:>10.2f}s{s_cpu:>7.2f}s"
            f"{rate(s_stored, s_cpu):>12}{e_cpu:>10.2f}s{e_stored:>10,}{rate(e_stored, e_cpu):>12}"
            f"{e_cpu / s_cpu:>7.0f}x"
        )
        print(f"{'':<30}value {s_value.outcome.value}, remoteness {s_value.remoteness}")
    if quick:
        return
    for t in LARGE:
        s_wall, s_cpu, s_stored, nbytes, s_value = timed_split(t)
        print(
            f"{t.label:<30}{t.position!s:<14}{s_stored:>10,}{s_wall:>10.2f}s{s_cpu:>7.2f}s"
            f"{rate(s_stored, s_cpu):>12}{'not run':>11}"
        )
        print(
            f"{'':<30}value {s_value.outcome.value}, remoteness {s_value.remoteness}; table "
            f"{nbytes / 2**20:.0f} MB, max RSS {max_rss_mb():.0f} MB"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="skip the large targets")
    parser.add_argument("--compile", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.compile:
        child_compile()
    else:
        main(args.quick)
