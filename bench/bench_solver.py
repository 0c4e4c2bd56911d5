"""Benchmark: DenseSolver (retrograde tables) against a plain memoised recursion, in one run.

    python bench/bench_solver.py            # every target
    python bench/bench_solver.py --quick    # skip the 10-piles-of-20 table
    python bench/bench_solver.py --batch    # only the batch of whole processes (last section)

Game: misère Nim with the extra end positions (2,2,2), (1,2,3), (1,1,2,2) (seed 000's rules).
For each target it prints the cold DenseSolver time (table built from nothing, then the query),
the time of the baseline (functools.lru_cache over sorted tuples, full remoteness) measured in the
same run, ExactSolver (nimlab.theory.solver) as a second reference, the ratios, and max RSS.
Numba's compile time is reported separately (measured in a subprocess with an empty cache).
Machines are noisy: read the ratios; each time is the best of a few repetitions.

The last section times whole processes, as a user meets them: ``nimlab analyze --batch FILE
--misere --defaults`` (start-up, imports, loading the compiled kernels from their cache, the
tables, every move's value, the JSON lines) against the memoised recursion in a process of its
own that reads the same file (one cache for the whole batch, printing each position's outcome and
remoteness, which must agree), on a batch of 40 positions of 4 to 7 piles of 1 to 20 (seeded).
Each is the least CPU time (user + system) of a few runs, after one run of nimlab that writes the
bytecode and the kernel cache. The goal: at least 20x.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from memo_reference import ENDS, MISERE, RULE, memoised_solver
from nimlab.theory.outcome import Outcome
from nimlab.theory.positions import Canon, canonical
from nimlab.theory.retrograde import DenseSolver, table_size
from nimlab.theory.solver import ExactSolver, Value

T = TypeVar("T")

BATCH_SEED = 37
BATCH_SIZE = 40
BATCH_GOAL = 20.0


def max_rss_mb() -> float:
    """This process's peak resident memory so far, in MB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def best_of(repeats: int, run: Callable[[], T]) -> tuple[float, T]:
    """The least wall time of ``repeats`` calls of ``run``, and its last result."""
    best = float("inf")
    result: T | None = None
    for _ in range(repeats):
        start = time.perf_counter()
        result = run()
        best = min(best, time.perf_counter() - start)
    assert result is not None
    return best, result


def lru_baseline(position: Canon) -> Value:
    """The plain memoised recursion (:mod:`memo_reference`), a fresh cache per call, so every
    call is cold."""
    solve = memoised_solver()
    next_wins, remoteness = solve(position)
    return Value(Outcome.of(next_wins), remoteness)


def exact(position: Canon) -> Value:
    return ExactSolver(RULE, misere=MISERE, end_positions=ENDS, budget=10**7).value(position)


def dense_cold(position: Canon) -> Value:
    solver = DenseSolver.covering(RULE, position, misere=MISERE, end_positions=ENDS)
    return solver.value(position)


def fmt_time(seconds: float) -> str:
    return f"{seconds * 1e3:9.2f} ms" if seconds < 10 else f"{seconds:9.2f} s "


# -- subprocess jobs ----------------------------------------------------------------------------


def child_table(max_piles: int, max_heap: int, repeats: int) -> None:
    """Run in a fresh process: build one table cold (best of ``repeats`` fresh solvers) and print
    its wall and CPU time and the peak memory of the process."""
    DenseSolver(RULE, misere=MISERE, end_positions=ENDS, max_heap=2, max_piles=2).build()  # JIT
    rss_before = max_rss_mb()
    wall = cpu = float("inf")
    for _ in range(repeats):
        start, start_cpu = time.perf_counter(), time.process_time()
        solver = DenseSolver(
            RULE, misere=MISERE, end_positions=ENDS, max_heap=max_heap, max_piles=max_piles
        )
        value = solver.value((max_heap,) * max_piles)
        wall = min(wall, time.perf_counter() - start)
        cpu = min(cpu, time.process_time() - start_cpu)
        del solver
    print(
        json.dumps(
            {
                "seconds": wall,
                "cpu_seconds": cpu,
                "rss_mb": max_rss_mb(),
                "rss_before_mb": rss_before,
                "value": [value.outcome.value, value.remoteness],
            }
        )
    )


def child_compile() -> None:
    """Run in a fresh process with an empty NUMBA_CACHE_DIR: the first build compiles."""
    start = time.perf_counter()
    DenseSolver(RULE, misere=MISERE, end_positions=ENDS, max_heap=2, max_piles=2).build()
    print(json.dumps({"seconds": time.perf_counter() - start}))


def run_child(*args: str, env: dict[str, str] | None = None) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, __file__, *args],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    )
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


REFERENCE = str(Path(__file__).with_name("memo_reference.py"))
"""The reference process of the batch: :func:`lru_baseline`'s recursion with one cache for the
whole batch (see :mod:`memo_reference`)."""


def batch_positions() -> list[list[int]]:
    """The batch: :data:`BATCH_SIZE` positions of 4 to 7 piles of 1 to 20 (seeded)."""
    rng = random.Random(BATCH_SEED)
    return [[rng.randint(1, 20) for _ in range(rng.randint(4, 7))] for _ in range(BATCH_SIZE)]


def cpu_run(argv: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """CPU time (user + system) and wall time of one whole process ``python ARGV``, and its
    stdout; fails when it fails."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, *argv], env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr}")
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return cpu, wall, done.stdout


def main_batch(repeat: int) -> None:
    """The batch of whole processes (see the module docstring)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    positions = batch_positions()
    piles = sorted({len(p) for p in positions})
    print(
        f"whole processes: a batch of {len(positions)} positions of {piles[0]} to {piles[-1]} "
        f"piles of 1 to 20, CPU time (user + system), best of {repeat}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "batch.jsonl"
        path.write_text("".join(json.dumps(p) + "\n" for p in positions))
        nimlab = ["-m", "nimlab", "analyze", "--batch", str(path), "--misere", "--defaults"]
        cpu_run(nimlab, env)  # writes the bytecode (and compiles the kernels when not cached)
        runs = [cpu_run(nimlab, env) for _ in range(repeat)]
        refs = [cpu_run([REFERENCE, str(path)], env) for _ in range(repeat)]
    answers = [json.loads(line) for line in runs[0][2].splitlines()]
    expected = [json.loads(line) for line in refs[0][2].splitlines()]
    assert [[a["outcome"], a["remoteness"]] for a in answers] == expected
    ours, ref = min(r[0] for r in runs), min(r[0] for r in refs)
    label = "reference: memoised recursion, one cache"
    print(f"  {label:<50} {ref:8.2f} s  (wall {min(r[1] for r in refs):.2f} s)")
    label = "nimlab analyze --batch FILE --misere --defaults"
    print(
        f"  {label:<50} {ours:8.2f} s  (wall {min(r[1] for r in runs):.2f} s)  "
        f"{ref / ours:5.1f}x ({'at least' if ref / ours >= BATCH_GOAL else 'below'} "
        f"the goal of {BATCH_GOAL:g}x)"
    )


# -- main ---------------------------------------------------------------------------------------


def main(quick: bool) -> None:
    print(f"misère Nim, extra end positions {sorted(ENDS)}; {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory() as cache_dir:
        compile_s = run_child("--compile", env={**os.environ, "NUMBA_CACHE_DIR": cache_dir})
    start = time.perf_counter()
    DenseSolver(RULE, misere=MISERE, end_positions=ENDS, max_heap=2, max_piles=2).build()
    load_s = time.perf_counter() - start
    print(
        f"Numba kernel (Nim): compile {compile_s['seconds']:.2f} s (empty cache, fresh process); "
        f"load from cache {load_s * 1e3:.0f} ms in this process; both excluded below\n"
    )

    header = (
        f"{'target':<22}{'positions':>12}  {'DenseSolver':>12}  {'lru_cache':>12}"
        f"{'ratio':>9}  {'ExactSolver':>12}{'ratio':>9}  {'max RSS':>9}"
    )
    print(header)
    print("-" * len(header))
    per_position: list[float] = []
    for heaps in ([20, 20, 20, 20], [10] * 6):
        position = canonical(heaps)
        t_dense, v_dense = best_of(20, functools.partial(dense_cold, position))
        t_base, v_base = best_of(3, functools.partial(lru_baseline, position))
        t_exact, v_exact = best_of(3, functools.partial(exact, position))
        assert v_dense == v_base == v_exact, (heaps, v_dense, v_base, v_exact)
        size = table_size(max(heaps), len(heaps))
        per_position.append(t_base / size)
        print(
            f"{heaps!s:<22}{size:>12,}  {fmt_time(t_dense):>12}  {fmt_time(t_base):>12}"
            f"{t_base / t_dense:>8.0f}x  {fmt_time(t_exact):>12}{t_exact / t_dense:>8.0f}x"
            f"  {max_rss_mb():>6.0f} MB"
        )
        print(f"{'':<22}value {v_dense.outcome.value}, remoteness {v_dense.remoteness}")

    baseline_rate = min(per_position)
    tables = [(8, 20, 5)] if quick else [(8, 20, 5), (10, 20, 3)]
    for max_piles, max_heap, repeats in tables:
        size = table_size(max_heap, max_piles)
        result = run_child("--table", str(max_piles), str(max_heap), str(repeats))
        estimate = size * baseline_rate
        label = f"table K={max_piles}, M={max_heap}"
        print(
            f"{label:<22}{size:>12,}  {fmt_time(result['seconds']):>12}  {'skipped':>12}"
            f"{'':>9}  {'skipped':>12}{'':>9}  {result['rss_mb']:>6.0f} MB"
        )
        print(
            f"{'':<22}CPU {result['cpu_seconds']:.2f} s; own process, "
            f"{result['rss_before_mb']:.0f} MB before the build. Baselines skipped: at their"
        )
        print(
            f"{'':<22}per-position rate above they would need over {estimate / 60:.0f} min "
            f"(> {estimate / result['seconds']:,.0f}x)"
        )
    print()
    main_batch(2 if quick else 3)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="skip the 10-piles-of-20 table")
    parser.add_argument(
        "--batch", action="store_true", help="only the batch of whole processes (last section)"
    )
    parser.add_argument("--repeat", type=int, default=3, help="runs of each process in --batch")
    parser.add_argument("--table", nargs=3, type=int, help=argparse.SUPPRESS)
    parser.add_argument("--compile", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.table:
        child_table(*args.table)
    elif args.compile:
        child_compile()
    elif args.batch:
        main_batch(args.repeat)
    else:
        main(args.quick)
