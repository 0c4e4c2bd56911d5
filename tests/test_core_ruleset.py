from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nimlab import Ruleset, RulesetError, parse_game
from nimlab.core.ruleset import parse_end_position
from nimlab.theory.octal import TakeAndBreak


@pytest.mark.parametrize(
    ("text", "name", "code"),
    [
        ("nim", "nim", "0.333..."),
        ("Kayles", "kayles", "0.77"),
        ("octal:0.77", "kayles", "0.77"),
        ("0.07", "dawson", "0.07"),
        ("dawson", "dawson", "0.07"),
        ("octal:0.137", "octal:0.137", "0.137"),
        ("octal:.1370", "octal:0.137", "0.137"),
        ("subtraction:1-3", "subtraction:1-3", "0.333"),
        ("subtraction:1,3,4", "subtraction:1,3-4", "0.3033"),
        ("subtraction:3,1,2,5", "subtraction:1-3,5", "0.33303"),
    ],
)
def test_parse_game(text: str, name: str, code: str) -> None:
    game = parse_game(text)
    assert game.name == name
    assert game.rule.code == code
    assert parse_game(game.name) == game


@pytest.mark.parametrize(
    "text",
    [
        "chess",
        "octal:",
        "octal:0.8",
        "octal:1.23",
        "octal:0.000",
        "subtraction:",
        "subtraction:0",
        "subtraction:3-1",
        "subtraction:a",
        "0.",
        "",
    ],
)
def test_bad_games_say_what_is_allowed(text: str) -> None:
    with pytest.raises(RulesetError) as e:
        parse_game(text)
    assert str(e.value)


def test_text_form_round_trips_and_normalises() -> None:
    r = Ruleset.parse("nim misere end=2.2.2 end=1,2,3 end=[1,1,2,2] end=0.2.0.2.2")
    assert str(r) == "nim misere end=1.2.3 end=2.2.2 end=1.1.2.2"
    assert Ruleset.parse(str(r)) == r
    assert Ruleset.parse("nim misere defaults") == r
    assert Ruleset.parse("kayles normal") == Ruleset(parse_game("kayles"))


@given(
    st.sampled_from(["nim", "kayles", "dawson", "octal:0.137", "subtraction:1-3"]),
    st.booleans(),
    st.frozensets(st.lists(st.integers(0, 5), min_size=1, max_size=4).map(tuple), max_size=4),
)
def test_round_trip_property(game: str, misere: bool, ends: frozenset[tuple[int, ...]]) -> None:
    r = Ruleset(parse_game(game), misere, ends)
    assert Ruleset.parse(str(r)) == r
    assert () not in r.end_positions  # the empty position is implicit


@pytest.mark.parametrize("text", ["nim sideways", "", "nim end=", "nim end=-1.2", "nim end=abc"])
def test_bad_rulesets(text: str) -> None:
    with pytest.raises(RulesetError):
        Ruleset.parse(text)


def test_end_position_text_is_heap_sizes_and_separators_only() -> None:
    assert parse_end_position("[3, 1, 2]") == (1, 2, 3)
    assert parse_end_position("2 2 2") == parse_end_position("2.2.2") == (2, 2, 2)
    assert parse_end_position("0,0") == ()
    for bad in ("rule: 2 2 2!", "2,a", "none", "٣,١", "１,２"):
        with pytest.raises(RulesetError, match="heap sizes"):
            parse_end_position(bad)
    with pytest.raises(RulesetError, match="empty position"):
        Ruleset().with_end_positions("0,0")


def test_octal_options() -> None:
    kayles = TakeAndBreak.octal("0.77")
    assert sorted(kayles.options(4)) == [(1, (1, 2)), (1, (3,)), (2, (1, 1)), (2, (2,))]
    dawson = TakeAndBreak.octal("0.07")
    assert list(dawson.options(1)) == []
    assert list(dawson.options(2)) == [(2, ())]
    only_whole = TakeAndBreak.octal("0.1")  # remove a heap of exactly 1
    assert list(only_whole.options(1)) == [(1, ())]
    assert list(only_whole.options(2)) == []
    assert TakeAndBreak.octal("0.4").can_leave(1, 1, 1) and not TakeAndBreak.octal("0.4").can_leave(
        1, 0, 2
    )
