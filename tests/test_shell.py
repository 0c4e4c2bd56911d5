"""``nimlab shell``: seed 003's Nim Game System, command for command and message for message.

The transcript test runs a session (``data/shell_session.in``) through the real command and
compares every byte of the output with ``data/shell_session.out``, which covers every command and
every message of seed 003: "Welcome to Nim", the ``$`` prompt, "'x' is not a valid command.",
"Incorrect number of arguments supplied to command.", "The player already exists.", "The player
does not exist.", "One of the players does not exist.", the confirmations, ``displayplayer`` and
``rankings`` lines, both games with their displays, prompts, "Invalid move..." messages, "Game
Over" and "<name> wins!". AI moves in it are forced (one winning move), so it is exact.
"""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest

from nimlab.shell import NimShell
from nimlab.storage import Store
from processes import PATIENCE, nimlab, read_until, restore_sigint, wait_until_reading

DATA = Path(__file__).parent / "data"


def shell(db: Path | str, stdin: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``nimlab shell --db DB ARGS`` in this process, reading ``stdin``."""
    return nimlab("shell", "--db", str(db), *args, stdin=stdin)


def run(store: Store, text: str, seed: int = 1) -> str:
    out = io.StringIO()
    assert NimShell(store, io.StringIO(text), out, seed=seed).run() == 0
    return out.getvalue()


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store.open(tmp_path / "shell.db")


def test_transcript_of_every_command_and_message(database: str) -> None:
    r = shell(database, (DATA / "shell_session.in").read_text())
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    assert r.stdout == (DATA / "shell_session.out").read_text()


def test_commands_ignore_case_but_arguments_do_not(store: Store) -> None:
    out = run(store, "ADDPLAYER Lee,Lee,Bruce\nAddPlayer lee,Li,Bruce\nDisplayPlayer\n")
    assert "$Lee,Bruce,Lee,0 games,0 wins\nlee,Bruce,Li,0 games,0 wins\n" in out


def test_spaces_around_arguments_and_surplus_arguments(store: Store) -> None:
    out = run(store, "addplayer  lee , Lee , Bruce , extra\n   displayplayer lee, junk\n")
    assert "lee,Bruce,Lee,0 games,0 wins" in out


def test_blank_lines_do_not_prompt_again(store: Store) -> None:
    out = run(store, "\n\n   \nexit\n")
    assert out == "Welcome to Nim\n\n$\n"


def test_end_of_input_leaves_like_exit(store: Store) -> None:
    assert run(store, "addplayer a,B,C") == "Welcome to Nim\n\n$\n$\n"
    assert store.get_player("a").full_name == "C B"


def test_end_of_input_in_a_game_abandons_it(store: Store) -> None:
    out = run(store, "addplayer a,A,A\naddplayer b,B,B\nstartgame 5,2,a,b\n1\n")
    assert out.endswith(
        "4 stones left: * * * *\nB's turn - remove how many?\n\n"
        "End of input: the game is abandoned (it is not saved).\n\n$\n"
    )
    assert store.game_count() == 0
    assert store.get_player("a").games_played == 0


class _CtrlD(io.StringIO):
    """Input typed at a terminal: a line ``^D`` is Ctrl+D (an empty read), and the lines after it
    are still read (as at a terminal, unlike a pipe)."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.lines = text.splitlines(keepends=True)

    def readline(self, size: int | None = -1) -> str:
        line = self.lines.pop(0) if self.lines else ""
        return "" if line == "^D\n" else line


def test_ctrl_d_in_a_game_leaves_the_game_not_the_shell(store: Store) -> None:
    typed = "addplayer a,A,A\naddplayer b,B,B\nstartgame 5,2,a,b\n1\n^D\ndisplayplayer a\nexit\n"
    out = io.StringIO()
    assert NimShell(store, _CtrlD(typed), out, seed=1).run() == 0
    text = out.getvalue()
    assert "End of input: the game is abandoned (it is not saved).\n\n$a,A,A,0 games,0 wins\n" in (
        text
    )
    assert text.endswith("$\n") and store.game_count() == 0


def test_rankings_show_the_top_ten(store: Store) -> None:
    for i in range(12):
        store.add_player(f"p{i:02d}", given=f"G{i}", family="F")
    out = run(store, "rankings\n")
    lines = [line for line in out.splitlines() if "games |" in line]
    assert len(lines) == 10
    assert lines[0] == "$0%   | 00 games | G0 F" and lines[-1] == "0%   | 00 games | G9 F"


def test_no_hundred_player_cap(store: Store) -> None:
    text = "".join(f"addplayer p{i},F,G\n" for i in range(150)) + "displayplayer p149\n"
    out = run(store, text)
    assert "p149,G,F,0 games,0 wins" in out
    assert len(store.players()) == 150


def test_bad_names_get_an_argument_message(store: Store) -> None:
    out = run(store, f"addplayer {'x' * 41},A,B\naddplayer ok,A:B,C\n")
    assert out.count("Invalid argument: ") == 2
    assert store.players() == []


@pytest.mark.parametrize(
    "command",
    [
        "startgame 5,x,a,b",
        "startgame 5,-1,a,b",
        "startgame 2147483648000,3,a,b",
        "startgame 1.5,3,a,b",
        "startadvancedgame x,a,b",
        "startadvancedgame -3,a,b",
    ],
)
def test_bad_numbers_get_an_argument_message_not_a_crash(store: Store, command: str) -> None:
    out = run(store, f"addplayer a,A,A\naddplayer b,B,B\n{command}\n")
    assert "Invalid argument: " in out
    assert store.game_count() == 0


def test_huge_and_odd_moves_are_invalid_moves(store: Store) -> None:
    out = run(
        store,
        "addplayer a,A,A\naddplayer b,B,B\nstartgame 3,2,a,b\n"
        "99999999999999999999999\n-1\n+1\n1\n1\n",
    )
    assert out.count("Invalid move. You must remove between 1 and 2 stones.") == 2
    assert "Game Over\nB B wins!" in out  # +1 is a number: A 1, B 1, A takes the last stone


def test_ai_against_ai_and_statistics(database: str) -> None:
    store = Store.open(database)
    out = run(
        store,
        "addaiplayer x,Bot,One\naddaiplayer y,Bot,Two\nstartgame 10,3,x,y\n"
        "startadvancedgame 9,y,x\ndisplayplayer\n",
    )
    assert out.count("Game Over") == 2
    x, y = store.get_player("x"), store.get_player("y")
    assert x.games_played == y.games_played == 2 and x.games_won + y.games_won == 2
    # with perfect play the first player wins 10 stones, bound 3 (9 % 4 != 0) and Kayles 9
    assert x.games_won == 1 and y.games_won == 1
    assert [g.source for g in store.games()] == ["shell", "shell"]
    store.close()


def test_a_player_cannot_play_against_themselves(store: Store) -> None:
    out = run(
        store, "addplayer a,A,Ann\nstartgame 2,2,a,a\nstartadvancedgame 3,a,a\ndisplayplayer a\n"
    )
    assert out.count("Invalid argument: a player cannot play against themselves.") == 2
    assert "Initial stone count" not in out and "a,Ann,A,0 games,0 wins" in out
    assert store.game_count() == 0


def test_usernames_may_hold_spaces_but_not_start_with_at(store: Store) -> None:
    out = run(store, "addplayer ann lee,Lee,Ann\naddplayer @at,A,B\ndisplayplayer ann lee\n")
    assert "ann lee,Ann,Lee,0 games,0 wins" in out
    assert "Invalid argument: username '@at': @ marks a registered player" in out
    assert store.find_player("@at") is None


def test_statistics_survive_a_restart(database: str) -> None:
    db = database
    first = shell(db, "addplayer a,A,Ann\naddplayer b,B,Bob\nstartgame 3,3,a,b\n2\n1\n")  # no exit
    assert first.returncode == 0 and "Ann A wins!" in first.stdout
    second = shell(db, "displayplayer\nrankings\nexit\n")
    assert "a,Ann,A,1 games,1 wins\nb,Bob,B,1 games,0 wins" in second.stdout
    assert "100% | 01 games | Ann A\n0%   | 01 games | Bob B" in second.stdout


def test_a_shell_killed_in_a_game_changes_nothing(tmp_path: Path) -> None:
    db = tmp_path / "k.db"
    assert (
        shell(db, "addplayer a,A,Ann\naddplayer b,B,Bob\nstartgame 3,3,a,b\n2\n1\n").returncode == 0
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "nimlab", "shell", "--db", str(db)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write("startgame 10,3,a,b\n2\n")
    proc.stdin.flush()
    assert "Bob's turn" in read_until(proc.stdout, "Bob's turn")
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(PATIENCE)
    with Store.open(db) as store:
        assert store.integrity_check() == "ok"
        assert store.game_count() == 1
        a, b = store.get_player("a"), store.get_player("b")
        assert (a.games_played, a.games_won, b.games_played, b.games_won) == (1, 1, 1, 0)


def test_shell_under_a_terminal_with_ctrl_c(tmp_path: Path) -> None:
    child = pexpect.spawn(
        sys.executable,
        ["-m", "nimlab", "shell", "--db", str(tmp_path / "p.db")],
        encoding="utf-8",
        timeout=PATIENCE,
        preexec_fn=restore_sigint,
        env=dict(os.environ, TERM="xterm"),
    )
    child.expect_exact("Welcome to Nim\r\n\r\n$")
    child.sendline("addplayer lee,Lee,Bruce")
    child.expect_exact("\r\n\r\n$")
    child.sendline("displayplayer")
    child.expect_exact("lee,Bruce,Lee,0 games,0 wins")
    child.expect_exact("$")
    child.sendline("nonsense")
    child.expect_exact("'nonsense' is not a valid command.")
    child.expect_exact("$")
    wait_until_reading(child.pid, child.child_fd)
    child.sendintr()
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 130
    assert "Traceback" not in (child.before or "")
    with Store.open(tmp_path / "p.db") as store:
        assert store.get_player("lee").full_name == "Bruce Lee"


def test_a_game_the_core_refuses_is_reported_and_not_started(store: Store) -> None:
    from nimlab.core.ruleset import Ruleset

    store.add_player("lee", given="Bruce", family="Lee")
    store.add_player("deep", given="Deep", family="Blue", bot="perfect")
    out = io.StringIO()
    shell = NimShell(store, io.StringIO(""), out, seed=1)
    players = [store.get_player("lee"), store.get_player("deep")]
    assert shell._new_game(Ruleset.parse("nim misere"), [0], players) is None
    assert "Invalid argument: the start position 0 is already an end position" in out.getvalue()
    assert store.game_count() == 0


def test_help_lists_the_commands_and_in_a_game_says_how_to_move(store: Store) -> None:
    out = run(
        store,
        "help\naddplayer a,A,Ann\naddplayer b,B,Bob\nstartadvancedgame 4,a,b\nhelp\n9 1\nx\n",
    )
    assert "'help' is not a valid command." not in out
    assert "  startadvancedgame stones,username1,username2\n" in out
    assert "Type POSITION COUNT to take COUNT adjacent stones from stone POSITION on" in out
    assert "a move takes 1 or 2 adjacent stones from anywhere in a run" in out
    # a refused move says why and how to type one; the example is a move the game takes now
    assert "Invalid move: stone position 9 does not exist: row 1 has stones 1-4. Type" in out
    assert "Invalid move. Type POSITION COUNT" in out
    example = out.split("(e.g. ")[1].split(")")[0]  # a move the game takes now
    played = run(store, f"startadvancedgame 4,a,b\n{example}\n")
    assert "Invalid move" not in played and "Bob's turn" in played
