"""One vocabulary (docs/games.md, "Words"): the words people see in a game come from one
glossary (piles for Nim-like games, rows of stones and runs for games that split heaps, coins
on steps for Staircase Nim, "heap" in theory texts only), every game's help is generated from
its rules with an example the game accepts, and counts are pluralised right."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from rich.console import Console

from nimlab.cli.grundy import status_line
from nimlab.cli.play import TerminalGame
from nimlab.core.errors import NimlabError
from nimlab.core.game import Game
from nimlab.core.games import GAMES
from nimlab.core.rules import how_to_move
from nimlab.core.ruleset import Ruleset
from nimlab.core.words import BOARD_WORDS, THEORY_WORDS, board_words, count_text, rate_text
from processes import nimlab

# one game of every kind in the registry, on a small start position of its own
SAMPLES = {
    name: (entry.text_form.replace(entry.parameter, entry.example), entry.start)
    for name, entry in GAMES.items()
}

NEVER_IN_A_GAME = re.compile(r"\b(" + "|".join(THEORY_WORDS) + r"|matches)\b", re.IGNORECASE)


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z]+", text.lower()))


def _kind(ruleset: Ruleset) -> str:
    if ruleset.game.name == "staircase":
        return "steps"
    return "rows" if ruleset.rules.splits else "piles"


@pytest.mark.parametrize("name", list(SAMPLES))
def test_each_games_help_speaks_its_own_words_and_its_example_is_accepted(name: str) -> None:
    rules_text, start = SAMPLES[name]
    ruleset = Ruleset.parse(rules_text)
    game = Game(ruleset, ruleset.rules.start(start), ["human:A", "human:B"])
    for letters in (False, True):
        how = how_to_move(ruleset.rules, game.board, letters=letters)
        text = f"{how.rule}. {how.syntax}"
        assert not NEVER_IN_A_GAME.search(text), text
        words = _words(text)
        kind = _kind(ruleset)
        assert words & set(BOARD_WORDS[kind]), text  # its own words...
        assert not words & set(board_words(kind)), text  # ...and no other kind's
        examples = re.findall(r"\(e\.g\. ([^)]*)\)", how.syntax)
        assert examples, how.syntax
        for example in examples:
            for typed in example.split(" or "):
                game.parse_move(typed)  # read back as a move...
                Game(ruleset, game.board, ["human:A", "human:B"]).push(typed)  # ...and legal


def test_grundys_game_help_explains_splitting_and_refuses_nothing_it_suggests() -> None:
    game = Game("grundys-game", [7], ["human:A", "human:B"])
    how = how_to_move(game.ruleset.rules, game.board)
    assert "splits a run into two runs of different lengths" in how.rule
    assert "POSITION 0" in how.syntax
    with pytest.raises(NimlabError, match=r"type POSITION 0"):
        game.push("3 2")
    lasker = how_to_move(Ruleset.parse("lasker").rules, Ruleset.parse("lasker").rules.start([7, 3]))
    assert "splits a run into two runs, taking no stone" in lasker.rule
    assert "ROW POSITION 0" in lasker.syntax and "ROW POSITION COUNT" in lasker.syntax


def test_text_that_is_not_a_move_gets_the_games_own_syntax() -> None:
    game = Game("grundys-game", [7], ["human:A", "human:B"])
    with pytest.raises(NimlabError, match=r"'xyz' is not a move: type POSITION 0 to split"):
        game.parse_move("xyz")


def test_fibonacci_says_the_real_limit_and_why() -> None:
    game = Game("fibonacci", [10], ["human:A", "human:B"])
    with pytest.raises(NimlabError, match=r"at most 9: the first move may not take the whole"):
        game.push("10")
    game.push("2")
    with pytest.raises(NimlabError, match=r"cannot take 5 \(at most 4: twice the last take of 2\)"):
        game.push("5")
    game.push("1")  # the pile has 7, the limit 2
    game.push("2")  # the pile has 5, the limit 4
    game.push("4")  # the pile has 1, the limit 8
    with pytest.raises(NimlabError, match=r"at most 1: the pile has 1"):
        game.push("2")


def _session(game: Game, lines: list[str]) -> str:
    buf = io.StringIO()
    console = Console(file=buf, width=100, force_terminal=False, color_system=None)
    queue = iter(lines)

    def read(prompt: str) -> str:
        console.print(prompt, end="")
        try:
            return next(queue)
        except StopIteration:
            raise EOFError from None

    TerminalGame(game, console, read).run()
    return buf.getvalue()


@pytest.mark.parametrize("name", list(SAMPLES))
def test_the_terminals_prompts_and_help_use_the_glossary(name: str) -> None:
    rules_text, start = SAMPLES[name]
    ruleset = Ruleset.parse(rules_text)
    game = Game(ruleset, ruleset.rules.start(start), ["human:A", "human:B"])
    out = _session(game, ["help", "xyz"])
    prompts = [line for line in out.splitlines() if not line.startswith("Rules:")]
    text = "\n".join(prompts)
    assert not NEVER_IN_A_GAME.search(text), text
    assert not _words(text) & set(board_words(_kind(ruleset))), text
    assert "Typing a move:" in out and "Moves: a move" in out


def test_command_line_help_of_the_games_says_piles_not_heaps() -> None:
    for command in ("play", "shell", "simulate"):
        r = nimlab(command, "--help")
        assert r.returncode == 0
        assert not re.search(r"\bheaps?\b|HEAP", r.stdout, re.IGNORECASE), (command, r.stdout)


def test_counts_are_pluralised() -> None:
    assert count_text(1, "game") == "1 game" and count_text(2, "game") == "2 games"
    assert count_text(0, "pile") == "0 piles" and count_text(1_000, "value") == "1,000 values"
    assert count_text(2, "match") == "2 matches"
    assert rate_text(1.2, "game") == "1 game/s" and rate_text(3, "game") == "3 games/s"
    assert rate_text(2.5e6, "value") == "2.5M values/s"
    assert status_line(1, 1, None, 0.0) == "1 of at most 1 value"


SINGULAR_WRONG = re.compile(r"(?<![\d,.])1 (games|piles|values|moves|stones|players|seconds)\b")


def test_commands_that_print_one_of_something_say_it_in_the_singular(tmp_path: Path) -> None:
    db = str(tmp_path / "w.db")
    outputs = [
        nimlab("simulate", "--games", "1", "--seed", "1"),
        nimlab("play", "1", "--player", "human:A", "--player", "human:B", "--db", db, stdin="1\n"),
        nimlab("history", "--db", db),
        nimlab("grundy", "kayles", "--max", "1"),
        nimlab("analyze", "1"),
    ]
    for r in outputs:
        assert r.returncode == 0, (r.args, r.stderr)
        assert not SINGULAR_WRONG.search(r.stdout + r.stderr), (r.args, r.stdout)


def test_history_shows_a_row_of_stones_by_its_length(tmp_path: Path) -> None:
    db = str(tmp_path / "h.db")
    shell_input = "addplayer a,A,Ann\naddplayer b,B,Bob\nstartadvancedgame 5,a,b\n" + "".join(
        f"{i} 1\n" for i in range(1, 6)
    )
    assert nimlab("shell", "--db", db, stdin=shell_input).returncode == 0
    r = nimlab("history", "--db", db)
    assert "*****" not in r.stdout and re.search(r"kayles\s+│ 5\s+│", r.stdout), r.stdout


@pytest.mark.parametrize(
    ("game", "rule"),
    [
        ("nim", "a move takes any number from one pile"),
        ("subtraction:1,3,4", "a move takes 1, 3 or 4 from one pile"),
        ("kayles", "a move takes 1 or 2 adjacent stones from anywhere in a run"),
        ("dawson", "a move takes 2 adjacent stones from anywhere in a run"),
        (
            "lasker",
            "a move takes any number of adjacent stones from an end of a run, or as a whole "
            "run; or splits a run into two runs, taking no stone",
        ),
        ("grundys-game", "a move splits a run into two runs of different lengths, taking no stone"),
        (
            "octal:4.07",
            "a move takes 2 adjacent stones from anywhere in a run; or splits a run into two "
            "runs, taking no stone",
        ),
        ("wythoff", "a move takes any number from one pile, or the same number from both piles"),
        ("moore:2", "a move takes any number from each of 1 or 2 piles"),
    ],
)
def test_what_a_move_may_do_is_said_from_the_rules(game: str, rule: str) -> None:
    ruleset = Ruleset.parse(game)
    assert how_to_move(ruleset.rules, ruleset.rules.start([5, 4])).rule == rule
