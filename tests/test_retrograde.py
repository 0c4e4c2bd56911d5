"""DenseSolver (retrograde tables for non-splitting games) against the reference ExactSolver."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nimlab.theory.octal import TakeAndBreak
from nimlab.theory.outcome import Outcome
from nimlab.theory.positions import Canon, canonical, children
from nimlab.theory.retrograde import DenseSolver, supports, table_size
from nimlab.theory.solver import ExactSolver, Value

SEED_ENDS: frozenset[Canon] = frozenset({(2, 2, 2), (1, 2, 3), (1, 1, 2, 2)})


def table_positions(max_heap: int, max_piles: int) -> list[Canon]:
    """Every canonical position of the table, in the colex order of the solver."""
    vectors = itertools.combinations_with_replacement(range(max_heap + 1), max_piles)
    return [canonical(c) for c in sorted(vectors, key=lambda c: c[::-1])]


def assert_table_matches(
    rule: TakeAndBreak,
    misere: bool,
    ends: frozenset[Canon],
    max_heap: int,
    max_piles: int,
) -> None:
    dense, wide = (
        DenseSolver(
            rule, misere=misere, end_positions=ends, max_heap=max_heap, max_piles=max_piles, wide=w
        )
        for w in (False, True)
    )
    exact = ExactSolver(rule, misere=misere, end_positions=ends)
    for position in table_positions(max_heap, max_piles):
        assert dense.value(position) == exact.value(position), (rule.code, misere, ends, position)
        # the 32-bit scores that long remoteness needs give the same answers
        assert wide.value(position) == dense.value(position), (rule.code, misere, ends, position)


# -- rules --------------------------------------------------------------------------------------

octal_digit = st.integers(min_value=0, max_value=3)  # no bit 4: never splits a heap

rules = st.one_of(
    st.just(TakeAndBreak.nim()),
    st.frozensets(st.integers(min_value=1, max_value=6), min_size=1, max_size=4).map(
        TakeAndBreak.subtraction
    ),
    st.builds(
        TakeAndBreak,
        st.lists(octal_digit, max_size=5).map(tuple),
        octal_digit,
    ),
)


@st.composite
def tables(draw: st.DrawFn) -> tuple[TakeAndBreak, bool, frozenset[Canon], int, int]:
    rule = draw(rules)
    misere = draw(st.booleans())
    max_piles = draw(st.integers(min_value=1, max_value=4))
    max_heap = draw(st.integers(min_value=0, max_value=7))
    # end positions mostly inside the table, sometimes beyond it (those must be ignored)
    end = st.lists(st.integers(min_value=1, max_value=max_heap + 2), min_size=1, max_size=5)
    ends = frozenset(map(canonical, draw(st.lists(end, max_size=4))))
    return rule, misere, ends, max_heap, max_piles


@settings(max_examples=300, deadline=None)
@given(tables())
def test_dense_equals_exact_on_whole_table(
    table: tuple[TakeAndBreak, bool, frozenset[Canon], int, int],
) -> None:
    assert_table_matches(*table)


@settings(max_examples=100, deadline=None)
@given(
    rules,
    st.booleans(),
    st.lists(st.integers(min_value=0, max_value=12), min_size=1, max_size=5),
    st.lists(st.lists(st.integers(min_value=1, max_value=6), min_size=1, max_size=4), max_size=3),
)
def test_covering_table_answers_the_position_and_its_children(
    rule: TakeAndBreak, misere: bool, heaps: list[int], end_lists: list[list[int]]
) -> None:
    ends = frozenset(map(canonical, end_lists))
    dense = DenseSolver.covering(rule, heaps, misere=misere, end_positions=ends)
    exact = ExactSolver(rule, misere=misere, end_positions=ends)
    position = canonical(heaps)
    assert dense.covers(heaps)
    assert dense.value(heaps) == exact.value(position)
    for child in children(rule, position):
        assert dense.value(child) == exact.value(child)


@pytest.mark.parametrize(
    "rule",
    [
        TakeAndBreak.nim(),  # tail 3, no digits: the one-look-up-per-heap path
        TakeAndBreak((), 2),  # take any amount but never a whole heap
        TakeAndBreak((), 1),  # only a whole heap may go
        TakeAndBreak((), 0),  # no move at all: every position is terminal
        TakeAndBreak.subtraction({1, 3, 4}),
        TakeAndBreak.octal("0.123"),
        TakeAndBreak((1, 2, 0, 3), 3),  # explicit digits then "take any larger amount"
        TakeAndBreak((3, 0), 2),
        TakeAndBreak((0, 1), 1),
    ],
    ids=lambda rule: rule.code,
)
@pytest.mark.parametrize("misere", [False, True], ids=["normal", "misere"])
def test_dense_equals_exact_on_larger_tables(rule: TakeAndBreak, misere: bool) -> None:
    assert_table_matches(rule, misere, SEED_ENDS, max_heap=9, max_piles=4)
    assert_table_matches(rule, misere, frozenset({(3,), (1, 5)}), max_heap=5, max_piles=6)


def _one_heap_of_subtraction_12(n: int, misere: bool) -> Value:
    """Outcome and remoteness of one heap of ``n`` under subtraction {1, 2}: P-positions are
    the multiples of 3 (misère: 1 more); the loser takes 1 and the winner 2, so every 3 objects
    last 2 moves."""
    p = 1 if misere else 0
    if misere and n == 0:
        return Value(Outcome.N, 0)
    k, r = divmod(n - p, 3)
    if r == 0:
        return Value(Outcome.P, 2 * k + p)
    return Value(Outcome.N, 2 * k + p + 1)


def test_large_remoteness_uses_wide_scores() -> None:
    # one heap of up to 60000 under subtraction {1, 2}: remoteness up to 40000 > 2**15; the
    # exact solver checks the closed form on every heap up to 600 (the whole heap of 60000
    # costs it seconds), the table against it on every 7th heap and around 2**15 and 2**16
    rule = TakeAndBreak.subtraction({1, 2})
    for misere in (False, True):
        exact = ExactSolver(rule, misere=misere)
        for n in range(601):
            assert exact.value(canonical([n])) == _one_heap_of_subtraction_12(n, misere)
        dense = DenseSolver(rule, misere=misere, max_heap=60_000, max_piles=1)
        heaps = sorted({*range(0, 60_001, 7), *range(49_140, 49_160), *range(59_990, 60_001)})
        values = dense.values([(n,) for n in heaps])
        assert values == [_one_heap_of_subtraction_12(n, misere) for n in heaps]
        assert dense.value((60_000,)).remoteness == 40_000


# -- seed 000 -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def seed000() -> DenseSolver:
    return DenseSolver(
        TakeAndBreak.nim(), misere=True, end_positions=SEED_ENDS, max_heap=10, max_piles=4
    )


@pytest.mark.parametrize("position", [(1, 2, 4), (1, 3, 5), (4, 5, 6), (2, 8, 10)])
def test_seed000_p_positions(seed000: DenseSolver, position: Canon) -> None:
    assert seed000.outcome(position) is Outcome.P


def test_seed000_n_position(seed000: DenseSolver) -> None:
    assert seed000.outcome((1, 4, 5)) is Outcome.N


def test_seed000_only_winning_move_from_345(seed000: DenseSolver) -> None:
    winning = [
        child
        for child in children(TakeAndBreak.nim(), (3, 4, 5))
        if seed000.outcome(child) is Outcome.P
    ]
    assert winning == [(1, 3, 5)]  # take 3 from the 4


def test_seed000_normal_play() -> None:
    normal = DenseSolver(
        TakeAndBreak.nim(), misere=False, end_positions=SEED_ENDS, max_heap=5, max_piles=3
    )
    assert normal.outcome((1, 4, 5)) is Outcome.P


def test_end_positions_are_terminal(seed000: DenseSolver) -> None:
    for end in SEED_ENDS:
        assert seed000.value(end) == Value(Outcome.N, 0)  # misère: moving there loses
    assert seed000.value(()) == Value(Outcome.N, 0)


# -- the table as an object ---------------------------------------------------------------------


def test_ranks_are_the_colex_order() -> None:
    dense = DenseSolver(TakeAndBreak.nim(), max_heap=6, max_piles=4)
    ranks = [dense.rank(p) for p in table_positions(6, 4)]
    assert ranks == sorted(ranks)
    assert ranks == list(range(table_size(6, 4)))


def test_queries_ignore_order_and_zeros_and_build_lazily() -> None:
    dense = DenseSolver(TakeAndBreak.nim(), misere=True, max_heap=7, max_piles=3)
    assert not dense.built and dense.nbytes == 0
    assert dense.value([0, 7, 2, 0, 5]) == dense.value((2, 5, 7))
    assert dense.built and dense.nbytes == 2 * table_size(7, 3)
    positions: list[Canon] = [(1,), (2, 2), (1, 2, 3), ()]
    assert dense.values(positions) == [dense.value(p) for p in positions]
    assert dense.values([]) == []


def test_table_size() -> None:
    assert table_size(20, 8) == 3_108_105
    assert table_size(20, 10) == 30_045_015
    assert table_size(0, 5) == 1


# -- bad input ----------------------------------------------------------------------------------


@pytest.mark.parametrize("code", ["0.77", "0.07", "0.137", "0.4"])
def test_splitting_rules_are_refused(code: str) -> None:
    rule = TakeAndBreak.octal(code)
    assert not supports(rule)
    with pytest.raises(ValueError, match="splits a heap"):
        DenseSolver(rule, max_heap=5, max_piles=3)


def test_non_splitting_rules_are_supported() -> None:
    assert supports(TakeAndBreak.nim())
    assert supports(TakeAndBreak.octal("0.333"))
    assert supports(TakeAndBreak.subtraction({1, 2, 3}))


@pytest.mark.parametrize("position", [(1, 2, 3, 4), (9,), (1, 1, 1, 11)])
def test_position_outside_the_table_is_refused(position: Canon) -> None:
    dense = DenseSolver(TakeAndBreak.nim(), max_heap=8, max_piles=3)
    assert not dense.covers(position)
    with pytest.raises(ValueError, match="outside this table"):
        dense.value(position)
    with pytest.raises(ValueError, match="outside this table"):
        dense.values([(1,), position])


def test_negative_heap_is_refused() -> None:
    dense = DenseSolver(TakeAndBreak.nim(), max_heap=8, max_piles=3)
    with pytest.raises(ValueError, match="negative"):
        dense.value((-1, 2))


def test_bad_bounds_and_huge_tables_are_refused() -> None:
    nim = TakeAndBreak.nim()
    with pytest.raises(ValueError, match="max_piles"):
        DenseSolver(nim, max_heap=5, max_piles=0)
    with pytest.raises(ValueError, match="max_heap"):
        DenseSolver(nim, max_heap=-1, max_piles=2)
    with pytest.raises(ValueError, match="GiB"):
        DenseSolver(nim, max_heap=40, max_piles=20)
