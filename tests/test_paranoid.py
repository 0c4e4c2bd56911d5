"""ParanoidSolver (dense Numba tables and the bounded search) against the reference search."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from nimlab.theory._paranoid_reference import ReferenceParanoidSolver
from nimlab.theory.budget import Budget, BudgetExceeded
from nimlab.theory.octal import TakeAndBreak
from nimlab.theory.outcome import Outcome
from nimlab.theory.paranoid import STATE_BYTES, ParanoidSolver, ParanoidValue
from nimlab.theory.positions import Canon, children, is_terminal
from nimlab.theory.solver import ExactSolver
from strategies import end_positions, positions, rules

NIM = TakeAndBreak.nim()
CLASSIC: frozenset[Canon] = frozenset({(2, 2, 2), (1, 2, 3), (1, 1, 2, 2)})


def consistent(rule: TakeAndBreak) -> bool:
    """Whether ``is_terminal`` agrees with the moves on heaps up to 5 (the reference search
    fails on a non-terminal position without moves, e.g. heap 2 under digit 4)."""
    return all(
        (next(rule.takes(h), None) is None) == (next(rule.options(h), None) is None)
        for h in range(1, 6)
    )


def assert_same(
    solver: ParanoidSolver, ref: ReferenceParanoidSolver, start: Canon, players: int
) -> None:
    """Every round result and every move value from the start, for every hero and mover."""
    seats = tuple(range(players))
    kids = sorted(set(children(solver.rule, start)))
    for hero in range(players):
        assert solver.round_winner_value(seats, hero) == ref.round_winner_value(seats, hero)
        for mover in range(players):
            for kid in kids:
                got = solver.move_value(kid, seats, mover, hero)
                want = ref.move_value(kid, seats, mover, hero)
                assert got == want, (start, players, hero, mover, kid)
    # a smaller player set (after an elimination), with seat numbers that are not 0..n-1
    if players > 2:
        rest = seats[1:]
        for hero in rest:
            assert solver.round_winner_value(rest, hero) == ref.round_winner_value(rest, hero)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rule=rules(splitting=False),
    start=positions(max_heap=5, max_piles=3, min_piles=1),
    players=st.integers(2, 4),
    misere=st.booleans(),
    ends=end_positions(max_heap=4),
)
def test_dense_tables_match_the_reference(
    rule: TakeAndBreak, start: Canon, players: int, misere: bool, ends: frozenset[Canon]
) -> None:
    assume(consistent(rule))
    solver = ParanoidSolver(rule, start, misere=misere, end_positions=ends)
    ref = ReferenceParanoidSolver(rule, start, misere=misere, end_positions=ends)
    assert_same(solver, ref, start, players)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rule=rules(splitting=True),
    start=positions(max_heap=5, max_piles=3, min_piles=1),
    players=st.integers(2, 4),
    misere=st.booleans(),
    ends=end_positions(max_heap=4),
)
def test_bounded_search_matches_the_reference(
    rule: TakeAndBreak, start: Canon, players: int, misere: bool, ends: frozenset[Canon]
) -> None:
    assume(consistent(rule))
    solver = ParanoidSolver(rule, start, misere=misere, end_positions=ends, dense=False)
    ref = ReferenceParanoidSolver(rule, start, misere=misere, end_positions=ends)
    assert_same(solver, ref, start, players)


def test_classic_four_players_dense_equals_search_and_reference() -> None:
    start = (2, 3, 4, 5)
    ref = ReferenceParanoidSolver(NIM, start, misere=True, end_positions=CLASSIC)
    for dense in (True, False):
        solver = ParanoidSolver(NIM, start, misere=True, end_positions=CLASSIC, dense=dense)
        assert_same(solver, ref, start, 4)
    assert ParanoidSolver(NIM, start, misere=True, end_positions=CLASSIC)._dense_ok


@pytest.mark.parametrize("misere", [False, True])
def test_two_players_is_the_two_player_solver(misere: bool) -> None:
    exact = ExactSolver(NIM, misere=misere, end_positions=CLASSIC)
    for start in [(3, 4, 5), (1, 2, 4), (2, 3, 6), (1, 1, 5)]:
        solver = ParanoidSolver(NIM, start, misere=misere, end_positions=CLASSIC)
        v = solver.value(start, (0, 1), 0, 0)
        e = exact.value(start)
        assert v == ParanoidValue(e.outcome is Outcome.N, e.remoteness)


def test_value_of_a_terminal_position_is_an_error() -> None:
    solver = ParanoidSolver(NIM, (2, 2, 2), misere=True, end_positions=CLASSIC)
    with pytest.raises(ValueError, match="terminal"):
        solver.value((2, 2, 2), (0, 1, 2), 0, 0)


def test_dense_kernel_without_jit() -> None:
    """The kernel's Python twin: the same module run with NUMBA_DISABLE_JIT=1."""
    code = (
        "from nimlab.theory.paranoid import ParanoidSolver\n"
        "from nimlab.theory._paranoid_reference import ReferenceParanoidSolver\n"
        "from nimlab.theory.octal import TakeAndBreak\n"
        "from nimlab.theory.positions import children\n"
        "ends = frozenset({(1, 2)})\n"
        "for rule in (TakeAndBreak.nim(), TakeAndBreak.octal('0.13')):\n"
        "    s = ParanoidSolver(rule, (1, 2, 3), misere=True, end_positions=ends)\n"
        "    assert s._dense_ok\n"
        "    r = ReferenceParanoidSolver(rule, (1, 2, 3), misere=True, end_positions=ends)\n"
        "    for hero in range(3):\n"
        "        for kid in set(children(rule, (1, 2, 3))):\n"
        "            for mover in range(3):\n"
        "                a = s.move_value(kid, (0, 1, 2), mover, hero)\n"
        "                assert a == r.move_value(kid, (0, 1, 2), mover, hero)\n"
        "    assert s._dense\n"
        "import numba\n"
        "assert numba.config.DISABLE_JIT\n"
        "print('ok')\n"
    )
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1"}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


# -- budgets ----------------------------------------------------------------------------------


@pytest.mark.parametrize("dense", [True, False])
def test_tiny_budget_raises_and_a_fresh_budget_still_works(dense: bool) -> None:
    start = (3, 4, 5)
    solver = ParanoidSolver(NIM, start, misere=True, end_positions=CLASSIC, dense=dense)
    with pytest.raises(BudgetExceeded) as info:
        solver.round_winner_value((0, 1, 2), 0, budget=Budget(positions=5))
    assert info.value.reason == "positions"
    ref = ReferenceParanoidSolver(NIM, start, misere=True, end_positions=CLASSIC)
    assert_same(solver, ref, start, 3)


def test_cancelled_budget_stops_the_search() -> None:
    budget = Budget()
    budget.cancel()
    solver = ParanoidSolver(NIM, (10**100,) * 3)
    with pytest.raises(BudgetExceeded) as info:
        solver.round_winner_value((0, 1, 2), 0, budget=budget)
    assert info.value.reason == "cancelled"


def test_cancel_from_another_thread_stops_a_huge_search() -> None:
    budget = Budget()
    solver = ParanoidSolver(NIM, (50,) * 100, budget=10**9)
    timer = threading.Timer(0.2, budget.cancel)
    timer.start()
    try:
        with pytest.raises(BudgetExceeded) as info:
            solver.round_winner_value((0, 1, 2), 1, budget=budget)
    finally:
        timer.cancel()
    assert info.value.reason == "cancelled"


def test_past_deadline_stops_the_search() -> None:
    solver = ParanoidSolver(NIM, (10**100,) * 3)
    with pytest.raises(BudgetExceeded) as info:
        solver.round_winner_value((0, 1, 2), 0, budget=Budget(seconds=0.0))
    assert info.value.reason == "time"


@pytest.mark.parametrize("misere", [False, True])
def test_memory_stays_bounded_on_huge_positions(misere: bool) -> None:
    cap = 3000
    solver = ParanoidSolver(NIM, (50,) * 100, misere=misere, budget=cap)
    assert not solver._dense_ok
    for _ in range(3):  # repeated questions never grow the caches past the bound
        with pytest.raises(BudgetExceeded):
            solver.round_winner_value((0, 1, 2), 0)
        assert solver.stored <= cap
        assert solver.nbytes <= cap * STATE_BYTES
    big = ParanoidSolver(NIM, (10**100,) * 3, misere=misere, budget=cap)
    with pytest.raises(BudgetExceeded):
        big.move_value((10**100 - 1, 10**100, 10**100), (0, 1, 2), 0, 0)
    assert big.stored <= cap
    assert big.nbytes <= cap * STATE_BYTES


def test_memory_limit_of_the_budget() -> None:
    solver = ParanoidSolver(NIM, (50,) * 100)
    with pytest.raises(BudgetExceeded) as info:
        solver.round_winner_value((0, 1, 2), 0, budget=Budget(nbytes=100 * STATE_BYTES))
    assert info.value.reason == "memory"
    assert solver.nbytes <= 101 * STATE_BYTES


def test_dense_tables_are_bounded_by_bytes() -> None:
    start = (3, 4, 5, 6)
    solver = ParanoidSolver(NIM, start, misere=True, end_positions=CLASSIC)
    one = (solver._limit_rank + 1) * 4 * 2
    small = ParanoidSolver(NIM, start, misere=True, end_positions=CLASSIC, max_table_bytes=one)
    ref = ReferenceParanoidSolver(NIM, start, misere=True, end_positions=CLASSIC)
    assert_same(small, ref, start, 4)
    assert small.nbytes <= one + small._py_stored * STATE_BYTES
    assert len(small._dense) == 1


def test_terminal_start_rounds() -> None:
    for misere in (False, True):
        solver = ParanoidSolver(NIM, (1, 2, 3), misere=misere, end_positions=CLASSIC)
        ref = ReferenceParanoidSolver(NIM, (1, 2, 3), misere=misere, end_positions=CLASSIC)
        assert is_terminal(NIM, (1, 2, 3), CLASSIC)
        for hero in range(4):
            got = solver.round_winner_value((0, 1, 2, 3), hero)
            assert got == ref.round_winner_value((0, 1, 2, 3), hero)
