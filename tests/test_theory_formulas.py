"""Every formula is checked against the exact solver."""

from __future__ import annotations

from unittest import mock

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from nimlab.theory import nim as nim_module
from nimlab.theory.budget import Budget
from nimlab.theory.engine import Evaluator
from nimlab.theory.nim import (
    misere_nim_outcome,
    misere_nim_winning_moves,
    nim_outcome,
    nim_sum,
    nim_winning_moves,
)
from nimlab.theory.octal import TakeAndBreak
from nimlab.theory.outcome import Outcome
from nimlab.theory.positions import canonical
from nimlab.theory.solver import ExactSolver
from strategies import end_positions, positions, rules

NIM = TakeAndBreak.nim()
NORMAL = ExactSolver(NIM)
MISERE = ExactSolver(NIM, misere=True)

heaps_lists = st.lists(st.integers(0, 9), max_size=5)


@given(heaps_lists)
def test_nim_outcome_is_bouton(heaps: list[int]) -> None:
    assert nim_outcome(heaps) == NORMAL.value(canonical(heaps)).outcome


@given(heaps_lists)
def test_misere_nim_outcome_formula(heaps: list[int]) -> None:
    assert misere_nim_outcome(heaps) == MISERE.value(canonical(heaps)).outcome


def _winning_by_search(solver: ExactSolver, heaps: list[int]) -> set[tuple[int, int]]:
    moves = set()
    for i, h in enumerate(heaps):
        for after in range(h):
            child = canonical(heaps[:i] + [after] + heaps[i + 1 :])
            if solver.value(child).outcome is Outcome.P:
                moves.add((i, after))
    return moves


@given(heaps_lists)
def test_nim_winning_moves_are_exactly_the_searched_ones(heaps: list[int]) -> None:
    assert set(nim_winning_moves(heaps)) == _winning_by_search(NORMAL, heaps)


@given(heaps_lists)
def test_misere_winning_moves_are_exactly_the_searched_ones(heaps: list[int]) -> None:
    assert set(misere_nim_winning_moves(heaps)) == _winning_by_search(MISERE, heaps)


@given(st.integers(0, 2**32), st.integers(0, 40), st.integers(0, 3))
def test_numpy_path_agrees_with_python(seed: int, bits: int, big: int) -> None:
    """Long positions take the NumPy path; the same heaps with the NumPy threshold out of reach
    take plain Python, and every answer is the same."""
    rng = np.random.default_rng(seed)
    array = rng.integers(0, 2, size=5000, dtype=np.int64)  # mostly 0/1 heaps (misère endgame)
    array[rng.integers(0, 5000, size=big)] = rng.integers(0, 2**bits + 1, size=big)
    heaps = [int(h) for h in array]

    def answers(h: list[int] | np.ndarray) -> tuple[object, ...]:
        return (
            nim_sum(h),
            nim_winning_moves(h),
            nim_winning_moves(h, limit=2),
            misere_nim_winning_moves(h),
            misere_nim_winning_moves(h, limit=2),
            misere_nim_outcome(h),
        )

    assert nim_module.as_heap_array(heaps) is not None  # long lists take the NumPy path too
    fast = answers(array), answers(heaps)
    with mock.patch.object(nim_module, "_NUMPY_FROM", len(heaps) + 1):
        assert nim_module.as_heap_array(heaps) is None
        plain = answers(heaps)
    assert fast == (plain, plain)


def test_huge_heaps_are_python_ints() -> None:
    heaps = [10**100, 10**100 + 1, 3] * 2000
    assert nim_sum(heaps) == 0
    assert nim_outcome([10**100]) is Outcome.N
    assert nim_winning_moves([10**30, 5]) == [(0, 5)]


def test_ten_million_heaps_by_numpy() -> None:
    heaps = np.arange(10_000_000, dtype=np.int64)
    assert nim_sum(heaps) == 0  # 0 ^ 1 ^ ... ^ (4k - 1) = 0
    assert nim_outcome(heaps) is Outcome.P


@given(rules(), positions(6, 4), end_positions(), st.booleans())
def test_evaluator_agrees_with_exact_solver(rule, position, ends, misere) -> None:
    evaluator = Evaluator(rule, misere=misere, end_positions=ends)
    expected = ExactSolver(rule, misere=misere, end_positions=ends).value(position)
    got = evaluator.evaluate(position, budget=Budget())
    assert got.outcome == expected.outcome
    assert got.remoteness == expected.remoteness
    assert evaluator.outcome(position) == expected.outcome


@given(rules(), positions(8, 4))
def test_grundy_sum_decides_normal_play(rule, position) -> None:
    evaluator = Evaluator(rule)
    g = evaluator.grundy(position)
    assert g is not None
    assert (g == 0) == (ExactSolver(rule).value(position).outcome is Outcome.P)
