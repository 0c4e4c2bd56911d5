"""The terminal for a newcomer: help without placeholders or internal names, one error style,
``--version`` and ``nimlab db``, one position syntax, one-pile moves, lettered piles, move values
at the prompt, kept games (``play --resume``), replay with values and mistakes, and the details
(wrapped hints, long lines, bot labels). In this process, through Typer's runner."""

from __future__ import annotations

import importlib
import io
import os
import re
from pathlib import Path

import pytest
import typer
from rich.console import Console

from nimlab.cli.app import COMMANDS, app
from nimlab.cli.play import MAX_LINE, TerminalGame
from nimlab.cli.records import replay_frames, rules_short, show_frame, step_through
from nimlab.core.game import Game, Player
from nimlab.core.narrate import player_label, rules_text
from nimlab.core.ruleset import Ruleset
from nimlab.storage import Store
from processes import PATIENCE, nimlab

FORBIDDEN = ("seed 0", "seeds", "seed's", "interfaces.md", "rules.md", "<int", "<str", "<bool")


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    e = dict(os.environ)
    e["NIMLAB_DB"] = str(tmp_path / "nimlab.db")
    return e


def one_line(text: str) -> str:
    return " ".join(text.split())


# -- help and errors ------------------------------------------------------------------------------


def _command_paths() -> list[list[str]]:
    for module in {home for home, _ in COMMANDS.values()}:
        importlib.import_module(module)
    group = typer.main.get_command(app)
    paths: list[list[str]] = [[]]
    for name, command in group.commands.items():  # type: ignore[attr-defined]
        paths.append([name])
        for sub in getattr(command, "commands", {}):
            paths.append([name, sub])
    return paths


def test_every_help_reads_without_placeholders_or_internal_names() -> None:
    paths = _command_paths()
    assert ["players", "add"] in paths and ["db"] in paths
    for path in paths:
        r = nimlab(*path, "--help")
        assert r.returncode == 0, path
        lowered = r.stdout.lower()
        for word in FORBIDDEN:
            assert word not in lowered, (path, word)
        assert "╭" not in r.stdout, path
        if not path:
            for name, (_, line) in COMMANDS.items():
                assert f"{name} {line}" in one_line(r.stdout), name


def test_usage_errors_come_in_our_style() -> None:
    for args, words in (
        (["replay", "abc"], "'abc' is not a whole number"),
        (["replay"], "missing argument 'ID'"),
        (["play", "--bogus"], "no such option: --bogus"),
        (["analyze", "3", "--players", "x"], "'x' is not a whole number"),
    ):
        r = nimlab(*args)
        assert r.returncode == 2, args
        assert r.stderr.startswith("error: ") and words in r.stderr, (args, r.stderr)
        assert "╭" not in r.stderr and "Usage:" not in r.stderr and "Traceback" not in r.stderr


def test_version_and_database(env: dict[str, str]) -> None:
    r = nimlab("--version", env=env)
    assert r.returncode == 0
    assert r.stdout.startswith("nimlab ") and f"database: {env['NIMLAB_DB']}" in r.stdout
    r = nimlab("db", env=env)
    assert r.returncode == 0 and f"Database: {env['NIMLAB_DB']}" in r.stdout
    assert "Chosen by $NIMLAB_DB" in r.stdout and "does not exist yet" in r.stdout
    assert not Path(env["NIMLAB_DB"]).exists()
    nimlab("players", "add", "ann", "--given", "Ann", "--family", "A", env=env)
    r = nimlab("db", env=env)
    assert "1 player, 0 finished games, 0 games in play." in r.stdout
    other = env["NIMLAB_DB"] + ".other"
    assert f"Database: {other}" in nimlab("db", "--db", other, env=env).stdout


# -- one way to write a position ------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ["--piles", "3,4,5"],
        ["--piles", "3", "4", "5"],
        ["3", "4", "5"],
        ["3,4,5"],
        ["-p", "3,4", "5"],
    ],
)
def test_every_way_to_write_the_start_position(env: dict[str, str], args: list[str]) -> None:
    r = nimlab("play", *args, "--seed", "1", stdin="quit\n", env=env)
    assert r.returncode == 0, r.stderr
    assert "A (1): X X X\nB (2): X X X X\nC (3): X X X X X\nType" in r.stdout


@pytest.mark.parametrize(
    "args", [["3", "4", "5", "--piles", "1", "2"], ["--piles", "3,4", "--seed", "1", "5"]]
)
def test_a_position_given_twice_is_refused(env: dict[str, str], args: list[str]) -> None:
    r = nimlab("play", *args, stdin="quit\n", env=env)
    assert r.returncode == 2 and r.stderr.startswith("error: the start position is given twice")


def test_one_pile_games_take_the_amount_typed(env: dict[str, str]) -> None:
    r = nimlab(
        "play",
        "--game",
        "subtraction:1-3",
        "10",
        "--player",
        "human:Ann",
        "--player",
        "human:Bob",
        stdin="3\nb1\n2\nquit\n",
        env=env,
    )
    out = r.stdout
    assert re.search(r"Type how many to take \(e\.g\. \d\)", out)
    assert "Ann took 3 from pile A" in out and "Bob took 2 from pile A" in out
    assert "'b1' is not a move: type how many to take" not in out  # b1 is pile B: no such pile
    assert "pile B does not exist: piles are A" in out


def test_first_auto_is_for_two_players(env: dict[str, str]) -> None:
    r = nimlab(
        "play",
        "--first",
        "auto",
        "--player",
        "human:A",
        "--player",
        "human:B",
        "--player",
        "human:C",
        env=env,
    )
    assert r.returncode == 2 and "--first auto is for two players" in r.stderr


def test_misere_with_three_players_says_elimination() -> None:
    ruleset = Ruleset.parse("nim misere")
    assert "loses" in rules_text(ruleset, 2)
    assert "is eliminated" in rules_text(ruleset, 3) and "loses" not in rules_text(ruleset, 3)
    assert rules_text(Ruleset.parse("nim"), 3) == Ruleset.parse("nim").describe()


# -- at the prompt --------------------------------------------------------------------------------


def session(game: Game, typed: list[str], width: int = 80) -> str:
    buf = io.StringIO()
    console = Console(file=buf, width=width, color_system=None, force_terminal=False)
    queue = iter(typed)

    def read(prompt: str) -> str:
        console.print(prompt, end="")
        try:
            text = next(queue)
        except StopIteration:
            raise EOFError from None
        console.print(text)
        return text

    TerminalGame(game, console, read).run()
    return buf.getvalue()


def test_values_lists_every_move_winning_first() -> None:
    game = Game("nim", [1, 2], ["human:Ann", "human:Bob"])
    out = session(game, ["values", "quit"])
    listed = [line.strip() for line in out.splitlines() if line.startswith("  take")]
    assert listed == [
        "take 1 from pile B (b1): wins in 3 moves",
        "take 1 from pile A (a1): loses in 2 moves",
        "take 2 from pile B (b2): loses in 2 moves",
    ]


def test_values_with_three_players_use_the_paranoid_model() -> None:
    game = Game("nim misere", [2, 3], ["human:Ann", "bot:perfect:Hal", "bot:random:Rex"])
    out = session(game, ["values", "quit"])
    assert "against all the others together" in one_line(out) and "take 1 from pile A (a1):" in out


def test_hint_is_word_wrapped_and_has_no_doubled_parentheses() -> None:
    game = Game("nim", [7, 7, 7], ["human:Ann", "bot:perfect:Hal"])
    out = session(game, ["?", "quit"], width=60)
    assert "((" not in out and "))" not in out
    assert "Hint: take 7 from pile A - a proven winning move (wins in 15 moves)" in one_line(out)
    assert "Winning move: take 7 from pile A" in one_line(out)
    assert all(len(line) <= 60 for line in out.splitlines())


def test_a_hint_on_ten_thousand_piles_prints_short_lines() -> None:
    game = Game("nim", [1 + i % 9 for i in range(10_000)], ["human:Ann", "bot:perfect:Hal"])
    out = session(game, ["?", "quit"], width=10_000)
    assert "Hint: take" in out
    assert max(len(line) for line in out.splitlines()) <= MAX_LINE


def test_a_hundred_bit_binary_table_is_cut_not_wrapped() -> None:
    game = Game("nim", [2**100 - 1, 2**99 + 5], ["human:Ann", "bot:perfect:Hal"])
    out = session(game, ["?", "quit"], width=80)
    rows = [line for line in out.splitlines() if line.startswith("  ") and " = " in line]
    assert len(rows) == 3 and all(len(line) <= 80 and line.endswith("…") for line in rows)


def test_end_of_input_and_quit_through_the_command(env: dict[str, str]) -> None:
    r = nimlab("play", "1", "2", stdin="", env=env)
    assert r.returncode == 0
    assert "End of input: the game has no moves, so it is not kept." in r.stdout
    who = ["--player", "human:Ann", "--player", "human:Bob"]
    r = nimlab("play", "1", "2", *who, stdin="a1\n", env=env)
    assert "End of input: the game is kept; go on with nimlab play --resume." in r.stdout


# -- kept games -----------------------------------------------------------------------------------


def test_resume_goes_on_with_a_kept_game_and_stores_it_when_it_ends(env: dict[str, str]) -> None:
    who = ["--player", "human:Ann", "--player", "human:Bob"]
    r = nimlab("play", "1", "2", *who, stdin="b1\nquit\n", env=env)
    assert "the game is kept" in r.stdout
    with Store.open(env["NIMLAB_DB"]) as store:
        assert store.count_games_in_play() == 1 and store.game_count() == 0
    r = nimlab("play", "--resume", stdin="a1\nb1\n", env=env)
    assert r.returncode == 0, r.stderr
    assert "Resumed after 1 move." in r.stdout and "A (1): X\nB (2): X" in r.stdout
    assert "Bob took 1 from pile A" in r.stdout and "Ann wins!" in r.stdout
    assert "Saved as game #1" in r.stdout
    with Store.open(env["NIMLAB_DB"]) as store:
        assert store.count_games_in_play() == 0 and store.game_count() == 1
    r = nimlab("play", "--resume", env=env)
    assert r.returncode == 2 and "no game was left unfinished" in r.stderr


def test_resume_asks_which_game_when_several_are_kept(env: dict[str, str]) -> None:
    who = ["--player", "human:Ann", "--player", "human:Bob"]
    nimlab("play", "1", "2", *who, stdin="a1\nquit\n", env=env)
    nimlab("play", "5", "6", "7", *who, stdin="a1\nquit\n", env=env)
    nimlab("play", "8", "9", stdin="quit\n", env=env)  # no move made: not kept
    r = nimlab("play", "--resume", stdin="x\n", env=env)
    assert r.returncode == 2 and "'x' is not one of the games listed" in r.stderr
    r = nimlab("play", "--resume", stdin="", env=env)  # Ctrl+D at the question leaves it
    assert r.returncode == 0 and "Games left unfinished:" in r.stdout and "  2. Nim" in r.stdout
    assert "  3. " not in r.stdout and "No game chosen" in r.stdout and "Resumed" not in r.stdout
    chosen = (
        "1"
        if "1. Nim, normal play (whoever moves into an end position wins); Ann, "
        "Bob; 1 move; position 4 6 7" in one_line(r.stdout).replace(" 1. ", "\n1. ")
        else "2"
    )
    r = nimlab("play", "--resume", stdin=f"{chosen}\n", env=env)
    assert "A (1): X X X X\nB (2): X X X X X X\nC (3): X X X X X X X" in r.stdout
    r = nimlab("play", "--resume", "3", "4", env=env)
    assert r.returncode == 2 and "give no position" in r.stderr


# -- replay ---------------------------------------------------------------------------------------


def _mistake_game() -> Game:
    game = Game("nim", [1, 2], ["human:Ann", "bot:perfect:Hal"])
    game.push("1 1")  # leaves [0, 2]: Hal wins, a mistake
    game.push("2 2")
    return game


def test_replay_frames_show_values_and_mark_mistakes() -> None:
    frames = replay_frames(_mistake_game())
    assert [f.number for f in frames] == [0, 1, 2]
    assert "Ann can force a win" in frames[0].value.plain
    assert frames[1].value.plain.startswith("✗ a mistake: Ann could have won")
    assert "Hal can force a win" in frames[1].value.plain
    assert not frames[2].value.plain and "Hal wins!" in frames[2].notes[0].plain


def test_replay_draws_the_start_when_a_round_restarts() -> None:
    game = Game("nim misere", [2], ["human:Ann", "human:Bob", "human:Cat"])
    game.push("1 2")  # Ann moves into the end position: eliminated, round 2
    frames = replay_frames(game)
    assert "Ann was eliminated!" in frames[1].notes[0].plain
    assert "Round 2 starts again" in frames[1].notes[1].plain
    assert frames[1].board.heaps == (2,)


def test_stepping_back_and_forth_with_keys() -> None:
    frames = replay_frames(_mistake_game())
    buf = io.StringIO()
    out = Console(file=buf, width=100, color_system=None, force_terminal=False)
    keys = iter(["n", "\x1b[C", "n", "\x1b[D", "p", "p", "x", "G", "q", "n"])
    step_through(frames, out, lambda: next(keys))
    shown = [line.split("   (")[0] for line in buf.getvalue().splitlines() if "   (move" in line]
    assert shown == [
        "Start",
        "1. Ann took 1 from pile A",
        "2. Hal took 2 from pile B",
        "1. Ann took 1 from pile A",
        "Start",
        "2. Hal took 2 from pile B",
    ]
    assert "That is the last move." in buf.getvalue() and "That is the start." in buf.getvalue()


def test_replay_lists_every_move_when_not_on_a_terminal(env: dict[str, str]) -> None:
    nimlab("play", "1", "2", "--player", "human:Ann", stdin="a1\n", env=env)
    r = nimlab("replay", "1", env=env)
    assert r.returncode == 0
    assert "2 moves, 1 mistake (✗)." in r.stdout
    assert "✗ a mistake: Ann could have won and now cannot." in r.stdout
    assert "Value: Hal can force a win (the game ends within 1 move)." in r.stdout
    assert r.stdout.rstrip().endswith("Hal wins!")


def test_show_frame_numbers_moves() -> None:
    frames = replay_frames(_mistake_game())
    buf = io.StringIO()
    show_frame(frames[1], 2, Console(file=buf, width=100, color_system=None))
    assert "1. Ann took 1 from pile A   (move 1 of 2)" in buf.getvalue()


# -- details --------------------------------------------------------------------------------------


def test_history_writes_end_positions_as_typed(env: dict[str, str]) -> None:
    assert rules_short("nim misere end=1.2.3 end=2.2") == "nim misere --end 1,2,3 --end 2,2"
    nimlab("play", "1", "--end", "1,2,3", "--player", "human:Ann", stdin="a1\n", env=env)
    assert "nim --end 1,2,3" in nimlab("history", env=env).stdout


def test_bots_are_not_named_twice() -> None:
    assert player_label(Player.parse("bot:perfect:error=30")) == "Perfect bot (30% errors)"
    assert player_label(Player.parse("bot:perfect")) == "Perfect bot"
    assert player_label(Player.parse("bot:perfect:Hal:error=30")) == "Hal (perfect bot, 30% errors)"
    assert player_label(Player.parse("human:Ann")) == "Ann"


def test_unproven_answers_mark_no_move(env: dict[str, str]) -> None:
    args = ["40", "41", "42", "43", "44", "45", "46", "--misere", "--end", "1,2,3,4"]
    r = nimlab("analyze", *args, "--seconds", "0.1", "--max-moves", "5000")
    assert "Outcome: not proven" in r.stdout
    assert "not proven" in r.stdout.split("Every move")[1] and " wins " not in r.stdout
    import json

    data = json.loads(nimlab("analyze", *args, "--seconds", "0.1", "--json").stdout)
    assert data["outcome"] is None and data["moves"]
    assert not any(m["winning"] for m in data["moves"])  # an unproven position has no winner


def test_replay_on_a_terminal_steps_with_arrow_keys(env: dict[str, str]) -> None:
    """The keys themselves need a terminal: → and n forward, ← back, q quits (status 0)."""
    import sys

    import pexpect

    nimlab("play", "1", "2", "--player", "human:Ann", stdin="a1\n", env=env)
    child = pexpect.spawn(
        sys.executable,
        ["-m", "nimlab", "replay", "1"],
        env=env,
        encoding="utf-8",
        timeout=PATIENCE,
    )
    child.expect("q quit")
    child.send("\x1b[C")
    child.expect(r"move 1 of 2")
    child.send("n")
    child.expect(r"move 2 of 2")
    child.send("\x1b[D")
    child.expect(r"1\. Ann took 1 from pile A")
    child.send("q")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
