"""SplitSolver (the compiled search for every take-and-break game) against the reference
ExactSolver: outcome and remoteness, budgets, memory bounds, and the kernels without the JIT."""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import nimlab.theory.splitsearch as splitsearch
from nimlab.theory.budget import Budget, BudgetExceeded
from nimlab.theory.octal import TakeAndBreak
from nimlab.theory.outcome import Outcome
from nimlab.theory.positions import Canon, canonical
from nimlab.theory.solver import ExactSolver, Value
from nimlab.theory.splitsearch import MAX_TOTAL, SearchRangeError, SplitSolver
from strategies import end_positions, positions

CLASSIC_ENDS: frozenset[Canon] = frozenset({(2, 2, 2), (1, 2, 3), (1, 1, 2, 2)})
KAYLES = TakeAndBreak.octal("0.77")
NAMED = ["0.77", "0.07", "0.137", "0.6", "0.4", "0.15", "0.056", "0.45", "0.54", "0.04", "0.7"]

digits = st.lists(st.integers(0, 7), min_size=1, max_size=4).map(tuple)
LASKER = TakeAndBreak((), tail=3, d0=4)
GRUNDYS_GAME = TakeAndBreak((), d0=4, unequal=True)
rules = st.one_of(
    st.sampled_from(NAMED).map(TakeAndBreak.octal),
    st.builds(TakeAndBreak, digits, st.integers(0, 7)).filter(lambda r: r.digits or r.tail),
    st.just(TakeAndBreak.nim()),
    st.sets(st.integers(1, 5), min_size=1, max_size=3).map(TakeAndBreak.subtraction),
    # splits without taking (a digit 4 before the point), into any or only unequal heaps
    st.sampled_from([LASKER, GRUNDYS_GAME, TakeAndBreak.octal("4.07")]),
    st.builds(
        TakeAndBreak,
        st.lists(st.integers(0, 7), max_size=3).map(tuple),
        st.integers(0, 7),
        st.just(4),
        st.booleans(),
    ),
)
small_positions = positions(max_heap=9, max_piles=4).filter(lambda p: sum(p) <= 16)


@settings(max_examples=300, deadline=None)
@given(
    rules,
    st.booleans(),
    st.one_of(st.just(frozenset()), st.just(CLASSIC_ENDS), end_positions(max_heap=5)),
    st.lists(small_positions, min_size=1, max_size=4),
)
def test_split_solver_equals_exact_solver(
    rule: TakeAndBreak, misere: bool, ends: frozenset[Canon], queries: list[Canon]
) -> None:
    """Outcome and remoteness agree, query after query on one solver (its table persists)."""
    split = SplitSolver(rule, misere=misere, end_positions=ends)
    exact = ExactSolver(rule, misere=misere, end_positions=ends)
    for position in queries:
        assert split.value(position) == exact.value(position), (rule.code, misere, ends, position)
    assert split.values(queries) == [exact.value(p) for p in queries]


@settings(max_examples=60, deadline=None)
@given(rules, st.booleans(), small_positions)
def test_estimate_bounds_the_positions_stored(
    rule: TakeAndBreak, misere: bool, position: Canon
) -> None:
    solver = SplitSolver(rule, misere=misere)
    solver.value(position)
    assert 1 <= len(solver) <= solver.estimate(position)


@settings(max_examples=40, deadline=None)
@given(rules, st.booleans(), end_positions(max_heap=4), small_positions)
def test_small_chunks_and_tables_give_the_same_values(
    rule: TakeAndBreak, misere: bool, ends: frozenset[Canon], position: Canon
) -> None:
    """A search cut into many chunks, with a table that grows from one page and a tiny
    directory, answers exactly as the reference."""
    mp = pytest.MonkeyPatch()
    try:
        mp.setattr(splitsearch, "_STEPS", 7)
        mp.setattr(splitsearch, "_FIRST_PAGES", 1)
        mp.setattr(splitsearch, "_FIRST_DIRECTORY", 2)
        split = SplitSolver(rule, misere=misere, end_positions=ends)
        exact = ExactSolver(rule, misere=misere, end_positions=ends)
        assert split.value(position) == exact.value(position)
    finally:
        mp.undo()


def test_known_values() -> None:
    """Spot checks: Kayles rows, Dawson's Kayles, and positions that are over at once."""
    # take the middle two of four, leaving (1, 1): three moves in all
    assert SplitSolver(KAYLES).value((4,)) == Value(Outcome.N, 3)
    dawson = SplitSolver(TakeAndBreak.octal("0.07"))
    assert dawson.value((1, 1, 1)) == Value(Outcome.P, 0)  # no move at all
    assert SplitSolver(KAYLES, misere=True).value(()) == Value(Outcome.N, 0)
    ends = SplitSolver(KAYLES, misere=True, end_positions=CLASSIC_ENDS)
    assert ends.value((3, 2, 1)) == Value(Outcome.N, 0)  # an extra end position, any order
    exact = ExactSolver(KAYLES, misere=True, end_positions=CLASSIC_ENDS)
    assert ends.value((9, 8, 0, 2)) == exact.value((2, 8, 9))


def test_heaps_without_a_move_are_left_out() -> None:
    """In Dawson's Kayles a heap of 1 has no move; hundreds of them do not count against the
    range, and the value is the reference's."""
    rule = TakeAndBreak.octal("0.07")
    position = canonical([1] * 300 + [6, 7])
    assert SplitSolver(rule, misere=True).value(position) == ExactSolver(rule, misere=True).value(
        position
    )


def test_beyond_the_range() -> None:
    solver = SplitSolver(KAYLES)
    with pytest.raises(SearchRangeError, match=f"at most {MAX_TOTAL}"):
        solver.value((MAX_TOTAL, 1))
    assert solver.estimate((MAX_TOTAL, 1)) == splitsearch.OUT_OF_RANGE
    with pytest.raises(ValueError, match="non-negative"):
        solver.value((3, -1))
    assert solver.value((2, 3)) == ExactSolver(KAYLES).value((2, 3))


# -- budgets ------------------------------------------------------------------------------------


def test_position_budget_then_a_fresh_call() -> None:
    solver = SplitSolver(KAYLES, misere=True, end_positions=CLASSIC_ENDS)
    exact = ExactSolver(KAYLES, misere=True, end_positions=CLASSIC_ENDS)
    budget = Budget(positions=10)
    with pytest.raises(BudgetExceeded) as info:
        solver.value((10, 11), budget)
    assert info.value.reason == "positions"
    assert 0 < len(solver) <= 10 and budget.spent <= 10
    # the positions stored so far are valid, and later questions are answered in full
    assert solver.value((2, 5)) == exact.value((2, 5))
    assert solver.value((10, 11)) == exact.value((10, 11))
    assert solver.value((10, 11), Budget(positions=0)) == exact.value((10, 11))  # stored


def test_deadline_and_cancel_then_a_fresh_call() -> None:
    solver = SplitSolver(KAYLES, misere=True)
    with pytest.raises(BudgetExceeded) as info:
        solver.value((12, 13), Budget(seconds=0))
    assert info.value.reason == "time"
    cancelled = Budget()
    cancelled.cancel()
    with pytest.raises(BudgetExceeded) as info:
        solver.value((12, 13), cancelled)
    assert info.value.reason == "cancelled"
    assert solver.value((12, 13), Budget(seconds=600)) == ExactSolver(KAYLES, misere=True).value(
        (12, 13)
    )


def test_memory_limit() -> None:
    """A query that alone needs more than ``max_bytes`` raises; one that fits alone is answered
    even when earlier queries fill the memory (the table is emptied once)."""
    small = SplitSolver(KAYLES, misere=True, max_bytes=60_000)
    with pytest.raises(BudgetExceeded) as info:
        small.value((14, 15))
    assert info.value.reason == "memory"
    assert small.value((5, 6)) == ExactSolver(KAYLES, misere=True).value((5, 6))

    # subtraction of exactly 10: the positions of (150,) and (151,) lie on disjoint pages
    rule = TakeAndBreak.subtraction({10})
    probe = SplitSolver(rule)
    probe.value((150,))
    alone = len(probe)
    solver = SplitSolver(rule, max_bytes=probe.nbytes + 16 * 2048 - 1)
    solver.value((150,))
    assert solver.value((151,)) == ExactSolver(rule).value((151,))
    assert len(solver) <= alone  # emptied once, so (150,)'s positions are gone

    # a question with a smaller memory budget than the table holds starts from an empty table
    kayles = SplitSolver(KAYLES, misere=True)
    kayles.value((14, 15))
    before = len(kayles)
    assert kayles.value((3, 24), Budget(nbytes=kayles.nbytes - 1)) == ExactSolver(
        KAYLES, misere=True
    ).value((3, 24))
    assert len(kayles) < before
    with pytest.raises(BudgetExceeded):
        kayles.value((14, 15), Budget(nbytes=1000))
    assert kayles.value((3, 3)) == ExactSolver(KAYLES, misere=True).value((3, 3))


# -- the kernels without the JIT ----------------------------------------------------------------

_NO_JIT = textwrap.dedent(
    """
    import nimlab.theory.splitsearch as ss
    from nimlab.theory.octal import TakeAndBreak
    from nimlab.theory.solver import ExactSolver

    ss._STEPS, ss._FIRST_PAGES, ss._FIRST_DIRECTORY = 5, 1, 2
    ends = frozenset({(2, 2, 2), (1, 2, 3), (1, 1, 2, 2)})
    for code, misere, ends, position in [
        ("0.77", True, ends, (3, 4)),
        ("0.07", False, frozenset(), (1, 5, 6)),
        ("0.6", True, frozenset(), (2, 5)),
        ("0.137", False, frozenset({(1, 1)}), (2, 3)),
        ("4.07", True, frozenset(), (3, 4)),
        ("lasker", False, frozenset(), (2, 5)),
        ("grundy", True, frozenset(), (4, 6)),
    ]:
        rule = {
            "lasker": TakeAndBreak((), tail=3, d0=4),
            "grundy": TakeAndBreak((), d0=4, unequal=True),
        }.get(code) or TakeAndBreak.octal(code)
        split = ss.SplitSolver(rule, misere=misere, end_positions=ends)
        exact = ExactSolver(rule, misere=misere, end_positions=ends)
        for p in [position, (1,), ()]:
            assert split.value(p) == exact.value(p), (code, p)
    print("ok")
    """
)


def test_kernels_without_jit() -> None:
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1"}
    src = str(Path(__file__).resolve().parents[1] / "src")
    env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run(
        [sys.executable, "-c", _NO_JIT], env=env, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


# -- the move rule ------------------------------------------------------------------------------


def test_split_needs_two_objects_left() -> None:
    """0.4: take one object and leave two non-empty heaps. Heaps of 1 and 2 have no move."""
    rule = TakeAndBreak.octal("0.4")
    assert [list(rule.takes(n)) for n in (1, 2, 3)] == [[], [], [1]]
    assert list(rule.options(3)) == [(1, (1, 1))]
    assert ExactSolver(rule).value((2, 2)) == Value(Outcome.P, 0)
    assert SplitSolver(rule).value((3, 2)) == Value(Outcome.N, 1)


@settings(max_examples=200, deadline=None)
@given(rules, st.integers(1, 40))
def test_heaps_without_a_move(rule: TakeAndBreak, heap: int) -> None:
    """The quick test for heaps without a move agrees with the move rule."""
    solver = SplitSolver(rule)
    assert solver._is_dead(heap) == (next(rule.takes(heap), None) is None)


def test_a_huge_heap_without_a_move_is_left_out() -> None:
    rule = TakeAndBreak.octal("0.1")  # take a heap of exactly one object
    assert SplitSolver(rule).value((10**12, 1)) == Value(Outcome.N, 1)


def test_layout_constants_match_the_kernels() -> None:
    from nimlab.theory import _split_kernels

    assert splitsearch._PAGE == 1 << _split_kernels.PAGE_BITS
    assert splitsearch._FRAME_FIELDS == _split_kernels.FRAME_FIELDS
    assert splitsearch._MAX_PAGES == 1 << _split_kernels.INDEX_BITS
    # the page number of every key up to MAX_TOTAL objects fits a directory slot
    top_page = splitsearch._rank_tables(()).offs[-1] >> _split_kernels.PAGE_BITS
    assert (top_page + 1) << _split_kernels.INDEX_BITS < 2**63


def test_the_largest_totals() -> None:
    """Keys near the top of the range: remove exactly 40 objects from one heap, or two."""
    rule = TakeAndBreak.subtraction({40})
    split = SplitSolver(rule, misere=True, end_positions=frozenset({(3, 100)}))
    exact = ExactSolver(rule, misere=True, end_positions=frozenset({(3, 100)}))
    for position in [(MAX_TOTAL,), (MAX_TOTAL - 100, 100), (3, 140), (1, 2, MAX_TOTAL - 3)]:
        assert split.value(position) == exact.value(position)


# -- splits without taking: Lasker's Nim from 27 objects ----------------------------------------


@functools.cache
def _lasker_exact(misere: bool) -> ExactSolver:
    """One reference search per play for the positions below (their positions overlap)."""
    return ExactSolver(LASKER, misere=misere)


@pytest.mark.parametrize(
    ("misere", "position", "outcome", "remoteness"),
    [
        (True, (2, 11, 14), Outcome.P, 39),
        (True, (2, 12, 14), Outcome.N, None),
        (True, (6, 10, 11), Outcome.P, None),
        (True, (6, 10, 12), Outcome.N, None),
        (True, (7, 11, 12), Outcome.N, None),
        (True, (8, 11, 12), Outcome.P, None),
        (True, (1, 14, 15), Outcome.N, None),
        (True, (1, 14, 16), Outcome.P, None),
        (True, (1, 15, 17), Outcome.P, None),
        (True, (1, 16, 17), Outcome.N, None),
        (False, (3, 24), Outcome.N, 9),
    ],
)
def test_laskers_nim_positions_once_wrong(
    misere: bool, position: Canon, outcome: Outcome, remoteness: int | None
) -> None:
    """Positions of 27 objects and more that the compiled search once answered wrongly: it
    never tried a split that takes nothing. Each outcome is the opposite of what it said."""
    value = SplitSolver(LASKER, misere=misere).value(position)
    assert value == _lasker_exact(misere).value(position)
    assert value.outcome is outcome
    assert remoteness is None or value.remoteness == remoteness


def test_a_split_without_taking_deepens_the_stack() -> None:
    """Splits without taking keep the total, so the stack grows past total + 1 positions:
    27 heaps of 1 are reached from one heap of 27 through 26 splits and the takes between."""
    exact = ExactSolver(GRUNDYS_GAME, misere=True)
    assert SplitSolver(GRUNDYS_GAME, misere=True).value((27,)) == exact.value((27,))
