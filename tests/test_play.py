"""``nimlab play``: scripted terminal sessions for every ruleset family (stdin piped, and under a
pseudo-terminal), every kind of bad input, undo, hints, end of input and interrupts.

Sessions are scripted on forced positions so they do not depend on which of several equally good
moves a bot picks. Every test uses its own database (``NIMLAB_DB``)."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pexpect
import pytest
from rich.console import Console

from nimlab.cli.play import TerminalGame
from nimlab.core.errors import InvalidMoveError
from nimlab.core.game import Game
from nimlab.storage import Store
from processes import PATIENCE, nimlab, read_until, restore_sigint, wait_until_reading


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    e = dict(os.environ)
    e["NIMLAB_DB"] = str(tmp_path / "nimlab.db")
    e.pop("COLUMNS", None)
    return e


def play(env: dict[str, str], *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """``nimlab play ARGS`` in this process with ``env``'s database, reading ``stdin``."""
    return nimlab("play", *args, stdin=stdin, env=env)


def lines(*typed: str) -> str:
    return "".join(t + "\n" for t in typed)


def stored_games(env: dict[str, str]) -> int:
    with Store.open(env["NIMLAB_DB"]) as store:
        return store.game_count()


# -- in-process sessions: the loop itself --------------------------------------------------------


def run_session(game: Game, typed: list[str | Callable[[Game], str]]) -> tuple[str, str]:
    """Run a TerminalGame on scripted input (an entry may be a function of the game, for moves
    that depend on a bot's choice); returns (ending, transcript with the typed lines echoed)."""
    buf = io.StringIO()
    console = Console(file=buf, width=200, color_system=None, force_terminal=False)
    queue: Iterator[str | Callable[[Game], str]] = iter(typed)

    def read(prompt: str) -> str:
        console.print(prompt, end="")
        try:
            entry = next(queue)
        except StopIteration:
            raise EOFError from None
        text = entry(game) if callable(entry) else entry
        console.print(text)
        return text

    ending = TerminalGame(game, console, read).run()
    return ending, buf.getvalue()


def first_legal(game: Game) -> str:
    return str(game.legal_moves[0])


def test_every_kind_of_bad_input_gets_a_message_and_the_same_player_again() -> None:
    game = Game("nim", [3, 4, 5], ["human:Ann", "bot:perfect:Hal"], seed=1)
    bad = {
        "": "Nothing typed",
        "foo": "'foo' is not a move: type PILE AMOUNT",
        "1": "'1' is not a move",
        "1 2 3": "'1 2 3' is not a move",
        "9 1": "pile I does not exist: piles are A-C",
        "0 1": "pile 0 does not exist",
        "z1": "pile Z does not exist",
        "1 0": "cannot take 0 from pile A: take 1 to 3 from pile A (it has 3)",
        "1 -2": "cannot take -2 from pile A",
        "1 4": "cannot take 4 from pile A",
        "1.5 1": "is not a move",
        "undo": "you have no move to take back",
    }
    ending, out = run_session(game, [*bad, "quit"])
    assert ending == "quit"
    for message in bad.values():
        assert message in out
    assert out.count("Ann, your move: ") == len(bad) + 1
    assert game.history == []


def test_moves_typed_every_way() -> None:
    for text in ("2 3", "2,3", "b3", "B 3", "2:3", " 2   3 "):
        game = Game("nim", [3, 4, 5], ["human:Ann", "human:Bob"])
        _, out = run_session(game, [text, "quit"])
        assert "Ann took 3 from pile B" in out, text
        assert game.position == (3, 1, 5)


def test_hint_shows_the_best_move_and_the_binary_nim_sum() -> None:
    game = Game("nim", [3, 4, 5], ["human:Ann", "bot:perfect:Hal"], seed=1)
    _, out = run_session(game, ["?", "hint", "quit"])
    assert out.count("Hint: take 2 from pile A") == 2
    assert "3 = 011" in out and "4 = 100" in out and "5 = 101" in out and "2 = 010  nim-sum" in out
    assert "proven winning move" in out


def test_hint_with_three_players_names_the_model() -> None:
    game = Game("nim misere", [2, 3], ["human:Ann", "bot:perfect:Hal", "bot:random:Rex"], seed=1)
    _, out = run_session(game, ["?", "quit"])
    assert "Hint: take" in out and "paranoid model" in out


def test_help_lists_the_commands() -> None:
    _, out = run_session(Game("nim", [3], ["human:Ann", "human:Bob"]), ["help", "quit"])
    assert "undo" in out and "hint" in out and "quit" in out and "Rules: Nim" in out


def test_undo_against_a_bot_takes_back_the_reply_too() -> None:
    game = Game("nim", [3, 4, 5], ["human:Ann", "bot:perfect:Hal"], seed=1)
    _, out = run_session(game, ["3 5", "undo", "quit"])
    assert "Ann took 5 from pile C" in out and "Taken back: Ann took 5 from pile C; Hal took" in out
    assert game.position == (3, 4, 5) and game.to_move.name == "Ann"


def test_undo_is_refused_when_another_human_moved() -> None:
    game = Game("nim", [3, 4, 5], ["human:Ann", "human:Bob"])
    _, out = run_session(game, ["1 1", "1 1", "undo", "quit"])
    assert "Bob has moved" in out
    assert game.position == (1, 4, 5)


def test_elimination_rounds_with_three_players() -> None:
    game = Game("nim misere", [2], ["human:Ann", "human:Bob", "bot:perfect:Hal"], seed=1)
    ending, out = run_session(game, ["1 2", "1 1"])
    assert ending == "over"
    assert "Ann was eliminated!" in out
    assert "Round 2: Bob and Hal play on from the start position." in out
    assert "Hal took 1 from pile A" in out and "Hal was eliminated!" in out
    assert out.rstrip().endswith("Bob wins!")


def test_end_of_input_leaves_cleanly() -> None:
    game = Game("nim", [3, 4, 5], ["human:Ann", "bot:perfect:Hal"], seed=1)
    ending, out = run_session(game, ["1 1"])
    assert ending == "eof" and out.rstrip().endswith("End of input: the game is abandoned.")


def test_nobody_is_eliminated_in_a_two_player_game() -> None:
    game = Game("nim misere", [1, 1], ["human:Ann", "human:Bob"])
    ending, out = run_session(game, ["1 1", "2 1"])
    assert ending == "over" and "Ann wins!" in out and "eliminated" not in out
    assert not any(turn.eliminated for turn in game.history)


def test_long_game_with_adaptive_moves_ends_with_a_winner() -> None:
    game = Game("dawson", [7, 5], ["human:Ann", "bot:classic:Cat"], seed=2)
    ending, out = run_session(game, [first_legal] * 40)
    assert ending == "over" and game.winner is not None
    assert f"{game.winner.name} wins!" in out
    assert "Row 1:" in out and "Row 2:" in out


# -- whole sessions through the command, stdin piped ----------------------------------------------


def test_default_game_is_you_against_a_perfect_bot_on_3_4_5(env: dict[str, str]) -> None:
    r = play(env, stdin="quit\n")
    assert r.returncode == 0, r.stderr
    assert "Players: You, Hal (perfect bot). First to move: You." in r.stdout
    assert "A (1): X X X\nB (2): X X X X\nC (3): X X X X X" in r.stdout
    assert "You, your move: You left the game: the game has no moves, so it is not kept." in (
        r.stdout
    )
    assert stored_games(env) == 0
    with Store.open(env["NIMLAB_DB"]) as store:
        assert store.count_games_in_play() == 0


def test_nim_normal_play_to_the_end(env: dict[str, str]) -> None:
    r = play(
        env,
        "--piles",
        "1",
        "1",
        "--player",
        "human:Ann",
        "--player",
        "bot:perfect:Hal",
        stdin=lines("", "x", "3 1", "1 2", "1 1"),
    )
    assert r.returncode == 0, r.stderr
    out = r.stdout
    for message in (
        "Nothing typed",
        "'x' is not a move",
        "pile C does not exist: piles are A-B",
        "cannot take 2 from pile A: take 1 from pile A (it has 1)",
    ):
        assert message in out
    assert "Ann took 1 from pile A" in out and "Hal took 1 from pile B" in out
    assert out.count("Ann, your move: ") == 5
    assert "Hal wins!" in out and "Saved as game #1" in out
    assert stored_games(env) == 1


def test_nim_misere_end_positions_three_players(env: dict[str, str]) -> None:
    r = play(
        env,
        "--piles",
        "2",
        "2",
        "2",
        "1",
        "--misere",
        "--defaults",
        "--player",
        "human:Ann",
        "--player",
        "human:Bob",
        "--player",
        "bot:perfect:Hal",
        stdin=lines("4 1", "4 1"),
    )
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "extra end positions [1,2,3], [2,2,2], [1,1,2,2]" in " ".join(out.split())
    assert "whoever moves into an end position is eliminated" in " ".join(out.split())
    assert "Ann took 1 from pile D\nAnn was eliminated!\nRound 2: Bob and Hal play on" in out
    assert "Bob took 1 from pile D\nBob was eliminated!\nHal wins!" in out


def test_kayles_rows(env: dict[str, str]) -> None:
    r = play(
        env,
        "--game",
        "kayles",
        "--piles",
        "1",
        "1",
        "--player",
        "human:Ann",
        "--player",
        "bot:perfect:Hal",
        stdin=lines("1 1", "1 2 1", "1 1 2", "2 1 1"),
    )
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "Row 1: <1,*>\nRow 2: <1,*>" in out
    assert "'1 1' is not a move: type ROW POSITION COUNT" in out
    assert "stone position 2 does not exist: row 1 has stones 1-1" in out
    assert "cannot take 2 there" in out or "not all present" in out
    assert "Ann took stone 1 from row 2" in out and "Row 1: <1,*>\nRow 2: <1,x>" in out
    assert "Hal took stone 1 from row 1" in out
    assert "Hal wins!" in out


def test_kayles_one_row_position_count(env: dict[str, str]) -> None:
    r = play(
        env,
        "--game",
        "kayles",
        "--piles",
        "4",
        "--player",
        "human:Ann",
        "--player",
        "human:Bob",
        stdin=lines("2 3", "5 1", "1 2", "3 2", "2 1", "3 2"),
    )
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "<1,*> <2,*> <3,*> <4,*>" in out
    assert "cannot take 3: in this game a move takes 1 or 2 stones" in out
    assert "stone position 5 does not exist" in out
    assert "Ann took stones 1-2" in out and "<1,x> <2,x> <3,*> <4,*>" in out
    assert "Bob took stones 3-4" in out and "Bob wins!" in out


def test_subtraction_game(env: dict[str, str]) -> None:
    r = play(
        env,
        "--game",
        "subtraction:1-3",
        "--piles",
        "5",
        "--misere",
        "--player",
        "human:Ann",
        "--player",
        "bot:perfect:Hal",
        stdin=lines("1 4", "1 0", "1 3", "1 1"),
    )
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "subtraction game S = {1-3}, misère play" in out
    assert "cannot take 4 from pile A: take 1 to 3 from pile A (it has 5)" in out
    assert "Hal took 1 from pile A" in out
    assert "Ann took 1 from pile A\nHal wins!" in out and "eliminated" not in out


def test_big_piles_are_shown_as_numbers(env: dict[str, str]) -> None:
    r = play(env, "--piles", "1000000", "3", stdin="1 999997\nquit\n")
    assert r.returncode == 0, r.stderr
    assert "A (1): 1,000,000 objects" in r.stdout and "You took 999,997 from pile A" in r.stdout


def test_random_piles_are_repeatable(env: dict[str, str]) -> None:
    a = play(env, "--random-piles", "--seed", "7", stdin="quit\n")
    b = play(env, "--random-piles", "--seed", "7", stdin="quit\n")
    assert a.returncode == 0 and a.stdout == b.stdout


def test_end_of_input_through_the_command(env: dict[str, str]) -> None:
    r = play(env, stdin="1 1\n")
    assert r.returncode == 0
    assert r.stdout.rstrip().endswith(
        "End of input: the game is kept; go on with nimlab play --resume."
    )
    assert "Traceback" not in r.stderr
    assert stored_games(env) == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--first", "sideways"], "choose first, random, auto"),
        (["--piles", "x"], "heap size 'x' is not a whole number"),
        (["--player", "martian:Zork"], "write human:NAME or bot:KIND"),
        (["--player", "bot:genius"], "unknown bot"),
        (["--player", "@ghost"], "no player 'ghost' is registered"),
        (["--random-piles", "--piles", "3"], "not both"),
        (["--game", "chess"], "unknown game"),
        (["--pile-count", "5-3", "--random-piles"], "low end first"),
    ],
)
def test_bad_options_exit_2_with_a_message(
    env: dict[str, str], args: list[str], message: str
) -> None:
    r = play(env, *args)
    assert r.returncode == 2
    assert message in r.stderr and "Traceback" not in r.stderr


def test_one_player_gets_the_default_opponent(env: dict[str, str]) -> None:
    r = play(env, "--player", "bot:random:Rex", stdin="quit\n")
    assert "Players: You, Rex (random bot)." in r.stdout
    r = play(env, "--player", "human:Ann", stdin="quit\n")
    assert "Players: Ann, Hal (perfect bot)." in r.stdout


def test_registered_players_update_their_statistics(env: dict[str, str]) -> None:
    with Store.open(env["NIMLAB_DB"]) as store:
        store.add_player("lee", given="Bruce", family="Lee")
        store.add_player("deep", given="Deep", family="Blue", bot="perfect")
    r = play(env, "--piles", "1", "1", "--player", "@lee", "--player", "@deep", stdin="1 1\n")
    assert r.returncode == 0, r.stderr
    assert (
        "Players: Bruce Lee, Deep Blue (perfect bot)." in r.stdout and "Deep Blue wins!" in r.stdout
    )
    with Store.open(env["NIMLAB_DB"]) as store:
        lee, deep = store.get_player("lee"), store.get_player("deep")
        assert (lee.games_played, lee.games_won, deep.games_played, deep.games_won) == (1, 0, 1, 1)
        game = store.games()[0]
        assert [s.username for s in game.seats] == ["lee", "deep"]


def test_bots_only(env: dict[str, str]) -> None:
    r = play(env, "--player", "bot:perfect:A", "--player", "bot:random:B", "--seed", "3")
    assert r.returncode == 0, r.stderr
    assert "A wins!" in r.stdout or "B wins!" in r.stdout


def test_interrupt_with_piped_input_leaves_cleanly(env: dict[str, str]) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "nimlab", "play"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=restore_sigint,
    )
    assert proc.stdout is not None
    assert "your move" in read_until(proc.stdout, "your move")
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=PATIENCE)
    assert proc.returncode == 130
    assert "Interrupted: the game has no moves, so it is not kept." in out
    assert "Traceback" not in err
    assert stored_games(env) == 0


# -- under a pseudo-terminal, as a person plays -------------------------------------------------


def spawn(env: dict[str, str], *args: str) -> pexpect.spawn:
    env = dict(env, TERM="xterm-256color", COLUMNS="100", LINES="40")
    return pexpect.spawn(
        sys.executable,
        ["-m", "nimlab", "play", *args],
        env=env,
        encoding="utf-8",
        timeout=PATIENCE,
        preexec_fn=restore_sigint,
        dimensions=(40, 100),
    )


def test_pty_session_to_the_end(env: dict[str, str]) -> None:
    child = spawn(env, "--piles", "1", "1", "--player", "human:Ann", "--player", "bot:perfect:Hal")
    child.expect("Ann, your move: ")
    child.sendline("b7")
    child.expect("cannot take 7 from pile B")
    child.expect("Ann, your move: ")
    child.sendline("?")
    child.expect("Hint: ")
    child.expect("Ann, your move: ")
    child.sendline("1 1")
    child.expect("Hal took")
    child.expect("Hal wins!")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert stored_games(env) == 1


def test_pty_colour_and_ctrl_c(env: dict[str, str]) -> None:
    child = spawn(env, "--piles", "3", "4", "5")
    child.expect("You, your move: ")
    assert "\x1b[" in (child.before or "")  # Rich draws the board in colour on a terminal
    child.sendline("1 1")
    child.expect("You took 1 from pile A")
    child.expect("You, your move: ")
    wait_until_reading(child.pid, child.child_fd)
    child.sendintr()
    child.expect("Interrupted: the game is kept")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 130
    assert "Traceback" not in (child.before or "")
    assert stored_games(env) == 0


def test_pty_end_of_input(env: dict[str, str]) -> None:
    child = spawn(env)
    child.expect("You, your move: ")
    wait_until_reading(child.pid, child.child_fd)
    child.sendeof()
    child.expect("End of input: the game has no moves, so it is not kept.")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_a_game_killed_in_the_middle_changes_nothing(env: dict[str, str]) -> None:
    with Store.open(env["NIMLAB_DB"]) as store:
        store.add_player("ann", given="Ann", family="A")
        store.add_player("bob", given="Bob", family="B")
    proc = subprocess.Popen(
        [sys.executable, "-m", "nimlab", "play", "--player", "@ann", "--player", "@bob"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=restore_sigint,
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write("1 1\n")
    proc.stdin.flush()
    assert "Bob B, your move" in read_until(proc.stdout, "Bob B, your move")
    proc.kill()
    proc.wait(PATIENCE)
    with Store.open(env["NIMLAB_DB"]) as store:
        assert store.integrity_check() == "ok"
        assert store.game_count() == 0
        assert all(p.games_played == 0 for p in store.players())


@pytest.mark.parametrize(
    "args", [("0",), ("2", "2", "--end", "2,2"), ("2,2,2", "--misere", "--defaults")]
)
def test_a_start_that_is_already_over_is_refused_and_never_stored(
    env: dict[str, str], args: tuple[str, ...]
) -> None:
    with Store.open(env["NIMLAB_DB"]) as store:
        store.add_player("lee", given="Bruce", family="Lee")
    r = play(env, *args, "--player", "@lee", stdin="quit\n")
    assert r.returncode == 2, r.stdout + r.stderr
    assert "already an end position" in r.stderr and "Traceback" not in r.stderr
    with Store.open(env["NIMLAB_DB"]) as store:
        assert store.game_count() == 0 and store.count_games_in_play() == 0
        assert store.get_player("lee").games_played == 0


def test_counts_of_one_say_move_not_moves() -> None:
    from nimlab.core.analysis import analyze
    from nimlab.core.words import count_text

    assert count_text(1) == "1 move" and count_text(2) == "2 moves"
    assert count_text(1, "more move") == "1 more move" and count_text(1000) == "1,000 moves"
    for heaps in ([1, 1], [1]):  # misère: the game ends within / lasts 1 more move
        text = " ".join(analyze("nim misere", heaps).explanation)
        assert "1 more move" in text and "1 more moves" not in text
    _, out = run_session(Game("nim", [1, 2], ["human:Ann", "human:Bob"]), ["values"])
    assert "take 1 from pile A (a1): loses in 2 moves" in out
    _, out = run_session(Game("nim", [1], ["human:Ann", "human:Bob"]), ["values"])
    assert "wins in 1 move\n" in out and "1 moves" not in out


def test_the_rules_say_who_starts_a_new_round_and_the_game_does_so() -> None:
    three = ["human:Ann", "human:Bob", "human:Cy"]
    game = Game("nim misere", [1, 1], three, first=2)  # Cy starts round 1
    _, out = run_session(game, ["1 1", "2 1"])  # Cy, then Ann, who moves into the end position
    assert "the first of them in seat order moving first" in out
    assert "Ann was eliminated!" in out and game.round == 2
    assert game.to_move.name == "Bob"  # the remaining player seated first starts round 2


@pytest.mark.parametrize("rows", [[10], [6, 7]])
def test_every_move_a_hint_or_values_shows_can_be_typed_back_as_shown(rows: list[int]) -> None:
    """Rows of stones: a move as the hint, the explanation and ``values`` write it ("take stones
    5-6", "stones 5-6 of row 1", "stone 2 from row 2") plays that very move."""
    import re

    from nimlab.core.analysis import describe_move
    from nimlab.core.narrate import move_text

    game = Game("kayles", rows, ["human:Ann", "human:Bob"])
    for move in game.legal_moves:
        for shown in (move_text(move, game.board, letters=True), describe_move(move, game.board)):
            assert game.parse_move(shown) == move, shown
            bare = re.sub(r"^(take )?stones? ", "", shown)  # "5-6", "5-6 of row 2"
            if "-" in bare:
                assert game.parse_move(bare) == move, bare
    _, out = run_session(Game("kayles", rows, ["human:Ann", "human:Bob"]), ["?", "values"])
    hinted = re.search(r"Hint: take (.+?) - ", out)
    assert hinted is not None
    game = Game("kayles", rows, ["human:Ann", "human:Bob"])
    _, out = run_session(game, [hinted.group(1), "quit"])
    assert f"Ann took {hinted.group(1)}" in out and len(game.history) == 1


def test_moves_written_in_words_and_their_mistakes() -> None:
    for text in ("take 3 from pile B", "3 from pile 2", "TAKE 3 FROM PILE b"):
        game = Game("nim", [3, 4, 5], ["human:Ann", "human:Bob"])
        game.push(text)
        assert game.position == (3, 1, 5), text
    rows = Game("kayles", [6, 7], ["human:Ann", "human:Bob"])
    for text, message in [
        ("5-6", "say which row"),
        ("6-5 of row 1", "from the lower number up"),
        ("2 5-6 of row 2", "names the row twice"),
        ("1 " + "9" * 5000, "is not a move"),
    ]:
        with pytest.raises(InvalidMoveError, match=message):
            rows.parse_move(text)


def test_random_piles_are_never_an_end_position(env: dict[str, str]) -> None:
    import random

    from nimlab.core.ruleset import Ruleset
    from nimlab.core.simulation import deal_start

    ruleset = Ruleset.parse("nim misere defaults")
    rng = random.Random(1)
    for _ in range(200):  # 3 piles of 1-3 deal [1,2,3] or [2,2,2] now and then: dealt again
        assert not ruleset.is_terminal(deal_start(ruleset, rng, (3, 3), (1, 3)))
    r = play(
        env, "--random-piles", "--pile-count", "3", "--pile-size", "2", "--misere", "--defaults"
    )
    assert r.returncode == 2 and "deals in a row were already end positions" in r.stderr
    r = nimlab("simulate", "--pile-size", "0", "--games", "5", env=env)
    assert r.returncode == 2 and "deals in a row were already end positions" in r.stderr
    assert stored_games(env) == 0
