"""The game registry: every entry loads, names itself and round-trips; it feeds the CLI help."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from nimlab.core.errors import RulesetError
from nimlab.core.games import (
    GAMES,
    STRATEGIES,
    GameEntry,
    game_choices,
    load_game,
    parse_game,
    register,
)
from nimlab.core.ruleset import GameKind as RulesetGameKind
from nimlab.core.ruleset import parse_game as ruleset_parse_game
from nimlab.theory.octal import TakeAndBreak


def _example(entry: GameEntry) -> str:
    return f"{entry.name}:{entry.example}" if entry.parameter else entry.name


@pytest.mark.parametrize("entry", list(GAMES.values()), ids=list(GAMES))
def test_every_entry_loads_and_its_text_form_round_trips(entry: GameEntry) -> None:
    kind = parse_game(_example(entry))
    assert kind.entry is entry
    assert parse_game(kind.name) == kind
    assert parse_game(kind.name.upper()) == kind
    assert load_game(entry.name, entry.example if entry.parameter else "") == kind
    assert kind.title and entry.summary
    assert kind.board == ("rows" if kind.rules.splits else "piles")
    if entry.board is not None:
        assert kind.board == entry.board
    assert set(kind.strategies) <= set(entry.strategies) <= set(STRATEGIES)
    # (the quotient's kernel works on monoid tables, not on rules: Grundy's game uses it)
    compiled = {"split-search", "dense-table"}
    if kind.is_heap_game:
        assert ("split-search" in kind.strategies) == kind.rule.splits
        assert ("dense-table" in kind.strategies) == (
            not kind.rule.splits and "dense-table" in entry.strategies
        )
        assert "theory" not in kind.strategies
    else:  # the compiled kernels know only take-and-break rules
        assert not compiled & set(kind.strategies)
        assert "search" in kind.strategies
    assert kind.is_heap_game == (kind.rules.heap_rule is not None)
    assert bool(kind.grundy_support) != (kind.rules.heap_sum and kind.is_heap_game)
    assert entry.hint in game_choices()


def test_a_rule_with_an_entry_of_its_own_goes_by_its_name() -> None:
    assert parse_game("octal:0.77").name == "kayles"
    assert parse_game(".07").name == "dawson"
    assert parse_game("octal:0.137").name == "octal:0.137"
    assert parse_game("octal:0.33").board == "piles"
    assert parse_game("octal:0.4").board == "rows"


@pytest.mark.parametrize(
    ("text", "title"),
    [
        ("nim", "Nim"),
        ("kayles", "Kayles (octal 0.77)"),
        ("dawson", "Dawson's Kayles (octal 0.07)"),
        ("octal:0.137", "octal game 0.137"),
        ("subtraction:3,1,2", "subtraction game S = {1-3}"),
    ],
)
def test_titles(text: str, title: str) -> None:
    assert parse_game(text).title == title


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("chess", "unknown game 'chess': choose nim, kayles"),
        ("octal", "octal needs its CODE"),
        ("subtraction:", "subtraction needs its SET"),
        ("kayles:3", "kayles takes no parameter"),
        ("octal:0.9", "not an octal code"),
    ],
)
def test_bad_games_say_what_is_allowed(text: str, message: str) -> None:
    with pytest.raises(RulesetError, match=message):
        parse_game(text)


def test_a_game_without_its_parameter_says_how_to_write_it_once() -> None:
    with pytest.raises(RulesetError) as e:
        parse_game("subtraction:")
    assert str(e.value) == "subtraction needs its SET: subtraction:SET (e.g. subtraction:1-3)"


def test_old_import_paths_still_work() -> None:
    assert RulesetGameKind is type(parse_game("nim"))
    assert ruleset_parse_game("kayles") == parse_game("kayles")


def test_register_refuses_taken_names_and_unknown_strategies() -> None:
    nim = GAMES["nim"]
    with pytest.raises(ValueError, match="taken"):
        register(nim)
    with pytest.raises(ValueError, match="unknown strategies"):
        register(
            GameEntry(
                name="brand-new",
                title="New",
                summary="",
                parse=lambda _: TakeAndBreak.nim(),
                strategies=("magic",),
            )
        )
    assert "brand-new" not in GAMES


def test_the_cli_help_lists_every_game() -> None:
    from nimlab.cli import app

    result = CliRunner().invoke(app, ["analyze", "--help"], terminal_width=400)
    assert result.exit_code == 0
    text = " ".join(result.output.split())
    for entry in GAMES.values():
        assert entry.name in text
