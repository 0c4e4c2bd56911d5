"""Every game explains itself like Nim: each heap's value (Grundy value, or in misère play its
element of the misère quotient), their XOR in binary or their product, which heap the winning
move changes and to which value; where only a search decides, why no formula applies."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from nimlab.core.analysis import analyze, value_table
from nimlab.core.games import parse_game
from nimlab.core.position import board_for
from nimlab.core.ruleset import Ruleset
from nimlab.theory.budget import Budget
from nimlab.theory.outcome import Outcome

GAMES = st.sampled_from(["kayles", "dawson", "octal:0.137", "subtraction:1,3,4", "octal:0.77"])
ROW = re.compile(r"^  heap +([\d,]+)  (\S+)")


def _rows(lines: list[str]) -> list[tuple[int, str]]:
    return [(int(m[1].replace(",", "")), m[2]) for m in map(ROW.match, lines) if m]


@settings(max_examples=25, deadline=None)
@given(GAMES, st.lists(st.integers(1, 14), min_size=1, max_size=4), st.booleans())
def test_each_heap_shows_its_value_and_the_winning_move_says_why(
    game: str, heaps: list[int], misere: bool
) -> None:
    ruleset = Ruleset(parse_game(game), misere=misere)
    a = analyze(ruleset, board_for(ruleset.rule, heaps), budget=Budget(seconds=60))
    assert a.outcome is not None
    if a.terminal:  # no move is left (Dawson's Kayles on heaps of 1): nothing to explain
        return
    text = a.explanation
    assert a.outcome.description.startswith(
        "N-position (Next player wins)" if a.outcome is Outcome.N else "P-position (Previous"
    )
    rows = _rows(text)
    assert [h for h, _ in rows] == [h for h in a.board.heaps if h]
    if misere:
        q = ruleset.engine.quotient(a.board.canonical)
        assert q is not None
        assert all(value == q.elements[q.image(h)] for h, value in rows)
        product = q.elements[q.element_of(a.board.heaps)]
        assert any(line.startswith(f"  product  {product}  ") for line in text)
    else:
        g = ruleset.engine.heap_grundy
        assert all(value == f"*{g(h)}" for h, value in rows)
        assert any(line.startswith("  XOR") and f"*{a.grundy} " in line for line in text)
    if a.outcome is Outcome.N:
        (move,) = [line for line in text if line.startswith("Winning move:")]
        assert "It changes the heap of" in move
        assert ("in the P-portion" if misere else "the XOR of all values becomes 0") in move
    else:
        assert any(line.startswith("No winning move:") for line in text)


def test_only_a_search_says_why_no_formula_applies() -> None:
    ruleset = Ruleset.parse("nim end=2.2.2")
    a = analyze(ruleset, board_for(ruleset.rule, [3, 4, 5]))
    assert a.explanation[0].startswith("No formula applies: the extra end positions ([2, 2, 2])")
    assert any("Remoteness counts the moves left" in line for line in a.explanation)


def test_the_value_table_works_the_xor_out_in_binary() -> None:
    assert value_table((7, 5), [2, 4]) == [
        "  heap 7  *2 = 010",
        "  heap 5  *4 = 100",
        "               ---",
        "  XOR     *6 = 110  (a column is 1 when it has an odd number of 1s)",
    ]
