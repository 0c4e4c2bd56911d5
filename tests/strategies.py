"""Hypothesis strategies shared by the tests: rules, positions, end positions."""

from __future__ import annotations

from hypothesis import strategies as st

from nimlab.theory.octal import TakeAndBreak
from nimlab.theory.positions import Canon, canonical


@st.composite
def octal_rules(draw: st.DrawFn, *, splitting: bool = True) -> TakeAndBreak:
    """Random small octal games (1-4 digits), optionally without splitting moves."""
    digit = st.integers(0, 7 if splitting else 3)
    digits = draw(st.lists(digit, min_size=1, max_size=4).filter(any))
    return TakeAndBreak(tuple(digits))


@st.composite
def subtraction_rules(draw: st.DrawFn) -> TakeAndBreak:
    return TakeAndBreak.subtraction(draw(st.sets(st.integers(1, 5), min_size=1, max_size=3)))


def rules(*, splitting: bool = True) -> st.SearchStrategy[TakeAndBreak]:
    return st.one_of(
        st.just(TakeAndBreak.nim()), subtraction_rules(), octal_rules(splitting=splitting)
    )


def positions(
    max_heap: int = 7, max_piles: int = 4, min_piles: int = 0
) -> st.SearchStrategy[Canon]:
    return st.lists(st.integers(0, max_heap), min_size=min_piles, max_size=max_piles).map(canonical)


def end_positions(max_heap: int = 4) -> st.SearchStrategy[frozenset[Canon]]:
    return st.frozensets(positions(max_heap, 4, 1).filter(bool), max_size=3)
