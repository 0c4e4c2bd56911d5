"""Benchmark misère quotients against exact search, in the same run.

    python bench/bench_quotient.py

Prints (1) the whole-process time of ``nimlab quotient 0.77`` (target < 10 s) against the
whole-process time of ``nimlab --help`` (the start-up cost), and (2) the in-process time to solve
misère Kayles positions of up to 200 objects through the quotient (target < 0.5 s, outcome and
winning moves) against the exact solver on one small position, and (3) Dawson's Kayles (0.07) to
heap 30 (Siegel's Q_30, order 360; target < 6 s with a warm compiled cache), with the vectorised
reduction and marking against their plain twins on heap 25 in the same run. With ``--long``,
also (4) 0.07 to heap 33 (order 638, the bound of the published partial quotient; about a minute
here), with small positions checked against exact search. Machines are noisy
(and often shared): compare the ratios, not the absolute times.
"""

from __future__ import annotations

import random
import subprocess
import sys
import time

from nimlab.theory import quotient as quotient_module
from nimlab.theory.budget import Budget, BudgetExceeded
from nimlab.theory.octal import TakeAndBreak
from nimlab.theory.quotient import misere_quotient, quotient_winning_moves
from nimlab.theory.solver import ExactSolver

KAYLES = TakeAndBreak.octal("0.77")


def process_seconds(*args: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "nimlab", *args], check=True, capture_output=True)
    return time.perf_counter() - start


def random_position(rng: random.Random, total: int) -> tuple[int, ...]:
    heaps: list[int] = []
    left = total
    while left > 0:
        h = rng.randint(1, min(left, 60))
        heaps.append(h)
        left -= h
    return tuple(sorted(heaps))


def plain_twins_seconds(rule: TakeAndBreak, heap: int) -> float:
    """The time to build the quotient to ``heap`` with the plain twins of the vectorised steps
    (partition refinement and smallest-position marking), the same result more slowly."""
    fast = quotient_module._minimise, quotient_module._mark_smallest

    def mark_plain(
        cand: quotient_module._Candidate,
        types: list[quotient_module._HeapType],
        budget: Budget | None = None,
    ) -> dict[int, bool]:
        return quotient_module._mark_smallest_py(cand.mul, types)

    def minimise_plain(
        cand: quotient_module._Candidate,
        pbits: dict[int, bool],
        letters: list[int],
        budget: Budget | None = None,
    ) -> tuple[list[list[int]], frozenset[int], dict[int, int]]:
        return quotient_module._minimise_py(cand, pbits, letters)

    quotient_module._minimise = minimise_plain
    quotient_module._mark_smallest = mark_plain
    try:
        start = time.perf_counter()
        misere_quotient(rule, heap)
        return time.perf_counter() - start
    finally:
        quotient_module._minimise, quotient_module._mark_smallest = fast


def dawson_to_33() -> None:
    """Dawson's Kayles to heap 33: order 638 (docs/quotients.md), checked on small positions."""
    dawson = TakeAndBreak.octal("0.07")
    start = time.perf_counter()
    try:
        q = misere_quotient(dawson, 33, budget=Budget(seconds=900, nbytes=2 << 30))
    except BudgetExceeded as exc:
        print(f"0.07 to heap 33          not within 900 s / 2 GiB ({exc.reason})")
        return
    seconds = time.perf_counter() - start
    assert q.order == 638, q.order
    solver = ExactSolver(dawson, misere=True)
    small = [(a, b) for a in range(34) for b in range(a, 34) if a + b <= 36]
    assert all(q.outcome(p) == solver.value(p).outcome for p in small)
    print(f"0.07 to heap 33          {seconds:7.3f} s  (order {q.order}, p_count {q.p_count})")


def main() -> None:
    help_s = process_seconds("--help")
    cli_s = process_seconds("quotient", "0.77")
    print(f"nimlab --help            {help_s:7.3f} s (start-up baseline)")
    print(f"nimlab quotient 0.77     {cli_s:7.3f} s  ratio {cli_s / help_s:6.1f}x  target < 10 s")

    start = time.perf_counter()
    q = misere_quotient(KAYLES, 200)
    build_s = time.perf_counter() - start
    print(f"Kayles quotient build    {build_s:7.3f} s  (order {q.order}, proven {q.proven})")

    dawson = TakeAndBreak.octal("0.07")
    start = time.perf_counter()
    d24 = misere_quotient(dawson, 24)
    d24_s = time.perf_counter() - start
    print(f"0.07 to heap 24          {d24_s:7.3f} s  (order {d24.order})")
    start = time.perf_counter()
    try:
        d30 = misere_quotient(dawson, 30, budget=Budget(seconds=60))
        d30_s = time.perf_counter() - start
        print(f"0.07 to heap 30          {d30_s:7.3f} s  (order {d30.order}) target < 6 s")
        # Siegel's Q_30(0.07) (the suite stops at heap 27, order 176, to stay fast)
        assert d30.order == 360, d30.order
        solver = ExactSolver(dawson, misere=True)
        small = [(a, b, c) for a in range(31) for b in range(max(a, 1), 31) for c in range(b, 31)]
        assert all(d30.outcome(p) == solver.value(p).outcome for p in small if sum(p) <= 34)
    except BudgetExceeded:
        print("0.07 to heap 30          not within 60 s (Siegel: order 360)")
    plain_s = plain_twins_seconds(dawson, 25)
    start = time.perf_counter()
    misere_quotient(dawson, 25)
    d25_s = time.perf_counter() - start
    print(f"0.07 to heap 25, twins   {plain_s:7.3f} s (baseline: plain reduction and marking)")
    print(f"0.07 to heap 25          {d25_s:7.3f} s  ratio {d25_s / plain_s:6.2f}x of the baseline")

    rng = random.Random(1)
    positions = [random_position(rng, rng.randint(100, 200)) for _ in range(1000)]
    start = time.perf_counter()
    wins = 0
    for p in positions:
        if q.outcome(p).next_player_wins:
            wins += len(quotient_winning_moves(q, p, 1))
    solve_s = time.perf_counter() - start

    sample = (3, 5, 7, 9)  # 24 objects
    start = time.perf_counter()
    ExactSolver(KAYLES, misere=True).value(sample)
    exact_s = time.perf_counter() - start
    print(f"exact search {sample}  {exact_s:7.3f} s (baseline)")
    print(
        f"1000 positions <= 200    {solve_s:7.3f} s  ratio {solve_s / exact_s:6.2f}x of one exact "
        f"24-object search; target < 0.5 s ({wins} winning moves found)"
    )


if __name__ == "__main__":
    main()
    if "--long" in sys.argv[1:]:
        dawson_to_33()
