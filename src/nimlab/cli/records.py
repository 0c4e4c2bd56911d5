"""``nimlab history``, ``nimlab replay ID``, ``nimlab export``, ``nimlab import`` and ``nimlab
delete-game ID``: the stored game records."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from nimlab.cli.app import app
from nimlab.cli.board import render_board
from nimlab.cli.common import (
    cannot,
    check_output,
    console,
    fail,
    read_input_text,
    write_atomically,
)
from nimlab.cli.database import DbOption, open_store
from nimlab.core.game import Game
from nimlab.core.narrate import eliminated_text, player_label, rules_text, turn_text, wins_text
from nimlab.core.position import Board
from nimlab.core.review import ValueStep, value_history
from nimlab.core.words import count_text
from nimlab.storage import GameSummary, import_document

__all__ = [
    "Frame",
    "delete_game",
    "history",
    "replay",
    "replay_frames",
    "rules_short",
    "step_through",
    "value_text",
]


def rules_short(ruleset: str) -> str:
    """A stored ruleset as people type it: ``nim misere --end 1,2,3`` for ``nim misere
    end=1.2.3``."""
    return re.sub(r"\bend=([\d.]+)", lambda m: "--end " + m.group(1).replace(".", ","), ruleset)


def _start_text(start: Any) -> str:
    """A stored start position as ``nimlab play`` takes it: pile sizes (``3 4 5``), or the
    lengths of rows of stones (``5 3``; a row stored as ``"*****"`` is 5 stones), a row with
    gaps as it is drawn (``**x**``, or its count of stones when long)."""
    rows = start.get("rows", []) if isinstance(start, dict) else list(start)
    words = []
    for row in rows:
        if isinstance(row, str) and set(row) <= {"*"}:
            words.append(str(len(row)))
        elif isinstance(row, str):
            stones = row.count("*")
            words.append(row if len(row) <= 20 else count_text(stones, "stone"))
        else:
            words.append(str(row))
    if len(words) > 12:
        return f"{' '.join(words[:12])} ... ({count_text(len(words), 'pile')})"
    return " ".join(words)


def _players_text(summary: GameSummary) -> str:
    return ", ".join(s.name + (f" (@{s.username})" if s.username else "") for s in summary.seats)


@app.command("history")
def history(
    player: Annotated[
        str | None,
        typer.Option(
            "--player", help="Only games of this registered USERNAME.", metavar="USERNAME"
        ),
    ] = None,
    limit: Annotated[
        int, typer.Option("--limit", "-n", min=1, help="How many games (newest first).")
    ] = 20,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    db: DbOption = None,
) -> None:
    """The stored games, newest first."""
    with open_store(db, read_only=True) as store:
        if player is not None:
            store.get_player(player)
        games = store.games(username=player, limit=limit)
    if as_json:
        typer.echo(
            json.dumps(
                [
                    {
                        "id": g.id,
                        "ruleset": g.ruleset,
                        "start": g.start,
                        "seats": [s.to_json() for s in g.seats],
                        "winner": None if g.winner is None else g.winner.name,
                        "moves": g.move_count,
                        "started_at": g.started_at,
                        "finished_at": g.finished_at,
                        "source": g.source,
                    }
                    for g in games
                ]
            )
        )
        return
    if not games:
        console.print("No games are stored yet (play one: nimlab play).")
        return
    table = Table(show_edge=False, pad_edge=False)
    for name, justify in (
        ("#", "right"),
        ("finished", "left"),
        ("rules", "left"),
        ("start", "left"),
        ("players", "left"),
        ("winner", "left"),
        ("moves", "right"),
    ):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    for g in games:
        table.add_row(
            str(g.id),
            g.finished_at.replace("T", " ")[:16],
            rules_short(g.ruleset),
            _start_text(g.start),
            _players_text(g),
            "" if g.winner is None else g.winner.name,
            str(g.move_count),
        )
    console.print(table)
    console.print(Text("nimlab replay ID steps through a game.", style="dim"))


@dataclass(frozen=True)
class Frame:
    """One step of a replay: the position after move ``number`` (0: the start), what happened
    and who was winning then."""

    number: int
    heading: Text
    board: Board
    notes: tuple[Text, ...]
    value: Text


def value_text(step: ValueStep, game: Game) -> Text:
    """Who was winning after a step, in words, with a mistake marked: ``"Hal can force a win
    (the game ends within 5 moves)"``, ``"✗ a mistake: Ann had a win and gave it away"``."""
    players = game.players
    out = Text()
    if step.mistake:
        mover = players[game.history[step.number - 1].seat].name
        out.append(f"✗ a mistake: {mover} could have won and now cannot.\n", style="bold red")
    if step.to_move is None:
        out.rstrip()
        return out
    if step.paranoid:
        name = players[step.to_move].name
        if step.mover_wins is None:
            out.append("Value: not proven (the search ran out of time).", style="yellow")
        elif step.mover_wins:
            out.append(
                f"Value: {name}, to move, can win against all the others together.",
                style="green",
            )
        else:
            out.append(
                f"Value: {name}, to move, cannot win if all the others play against them.",
                style="dim",
            )
        return out
    if step.winner is None:
        out.append("Value: not proven (beyond the exact search's budget).", style="yellow")
        return out
    within = (
        "" if step.remoteness is None else f" (the game ends within {count_text(step.remoteness)})"
    )
    out.append(f"Value: {players[step.winner].name} can force a win{within}.", style="cyan")
    return out


def replay_frames(game: Game) -> list[Frame]:
    """Every step of a finished game, from the start to the last move, with its value
    (:func:`~nimlab.core.review.value_history`). Cost: one value per move."""
    values = value_history(game)
    start_notes = tuple(
        Text(eliminated_text(game.players[seat]), style="bold red")
        for seat in game.opening_eliminations
    )
    frames = [
        Frame(0, Text("Start", style="bold"), game.start, start_notes, value_text(values[0], game))
    ]
    for turn, step in zip(game.history, values[1:], strict=True):
        notes: list[Text] = []
        board: Board = turn.after
        if turn.eliminated:
            notes.append(Text(eliminated_text(turn.player), style="bold red"))
        if turn.new_round and turn.winner is None:
            notes.append(Text(f"Round {turn.round + 1} starts again from the start position:"))
            board = game.start
        if turn.winner is not None:
            notes.append(Text(wins_text(turn.winner), style="bold green"))
        heading = Text(f"{turn.number}. {turn_text(turn, letters=True)}", style="bold")
        frames.append(Frame(turn.number, heading, board, tuple(notes), value_text(step, game)))
    if not game.history and game.winner is not None:
        frames[0] = replace(
            frames[0], notes=(*start_notes, Text(wins_text(game.winner), style="bold green"))
        )
    return frames


def show_frame(frame: Frame, total: int, out: Console) -> None:
    """Print one step: what happened, the board, the value."""
    out.print()
    out.print(
        Text.assemble(frame.heading, (f"   (move {frame.number} of {total})", "dim")),
        highlight=False,
    )
    out.print(render_board(frame.board))
    for note in frame.notes:
        out.print(note, highlight=False)
    if frame.value:
        out.print(frame.value, highlight=False)


KEYS_HELP = "n or → next, p or ← back, Home/g first, End/G last, q quit"
NEXT_KEYS = {"n", " ", "\r", "\n", "\x1b[C", "l", "j"}
BACK_KEYS = {"p", "b", "\x1b[D", "h", "k"}
FIRST_KEYS = {"g", "\x1b[H", "\x1b[1~"}
LAST_KEYS = {"G", "\x1b[F", "\x1b[4~"}
QUIT_KEYS = {"q", "Q", "\x1b", "\x03", "\x04"}


def step_through(frames: list[Frame], out: Console, key: Callable[[], str]) -> None:
    """Show the frames one at a time, moving back and forth with the keys ``key()`` returns
    (see :data:`KEYS_HELP`); ends on ``q``, Ctrl+C, Ctrl+D or the end of input (``""``)."""
    total = len(frames) - 1
    at = 0
    show_frame(frames[0], total, out)
    while True:
        out.print(Text(KEYS_HELP, style="dim"), highlight=False)
        pressed = key()
        if pressed == "" or pressed in QUIT_KEYS:
            return
        if pressed in NEXT_KEYS:
            target = min(at + 1, total)
        elif pressed in BACK_KEYS:
            target = max(at - 1, 0)
        elif pressed in FIRST_KEYS:
            target = 0
        elif pressed in LAST_KEYS:
            target = total
        else:
            continue
        if target == at:
            out.print(
                Text("That is the last move." if at == total else "That is the start.", "dim")
            )
            continue
        at = target
        show_frame(frames[at], total, out)


@app.command("replay")
def replay(
    game_id: Annotated[
        int, typer.Argument(help="The game's number (see nimlab history).", show_default=False)
    ],
    pause: Annotated[
        bool,
        typer.Option(
            "--pause/--no-pause",
            help="Step back and forth with the keys (default on a terminal); --no-pause lists "
            "every move at once.",
        ),
    ] = True,
    db: DbOption = None,
) -> None:
    """Step through a stored game move by move.

    Each step shows the board and who could force a win then; a move that threw a win away is
    marked as a mistake. On a terminal, n or → goes forward, p or ← back, q quits; otherwise
    (or with --no-pause) every move is listed."""
    with open_store(db, read_only=True) as store:
        stored = store.game(game_id)
    game = Game.from_record(stored.record)
    summary = stored.summary
    console.print(
        Text(f"Game #{summary.id}", style="bold"),
        Text(f"finished {summary.finished_at.replace('T', ' ')}", style="dim"),
    )
    console.print(rules_text(game.ruleset, len(game.players)), highlight=False)
    console.print("Players: " + ", ".join(player_label(p) for p in game.players), highlight=False)
    frames = replay_frames(game)
    mistakes = sum(1 for f in frames if f.value.plain.startswith("✗"))
    console.print(
        f"{len(frames) - 1} move{'s' if len(frames) != 2 else ''}, "
        f"{count_text(mistakes, 'mistake')} (✗).",
        highlight=False,
    )
    if pause and sys.stdin.isatty() and console.is_terminal:
        step_through(frames, console, _read_key)
        return
    for frame in frames:
        show_frame(frame, len(frames) - 1, console)


def _read_key() -> str:
    """One key press (an arrow key as its escape sequence); ``""`` at the end of input."""
    try:
        return typer.getchar()
    except (EOFError, KeyboardInterrupt):
        return ""


@app.command("export")
def export(
    game_ids: Annotated[
        list[int] | None,
        typer.Argument(help="Game numbers (default: every game).", show_default=False),
    ] = None,
    output: Annotated[
        str,
        typer.Option(
            "--output", "-o", help="Write to FILE (default: standard output).", metavar="FILE"
        ),
    ] = "-",
    db: DbOption = None,
) -> None:
    """Write stored games as JSON ({"format": "nimlab-games/1", "games": [...]})."""
    target = Path(output)
    if output != "-":  # checked before any work (a folder: exit 2; cannot write there: 1)
        check_output(target, f"--output {output!r}")
    with open_store(db, read_only=True) as store:
        document = store.export_games(game_ids or None)
    text = json.dumps(document, indent=1)
    if output == "-":
        typer.echo(text)
        return
    try:
        write_atomically(target, (text + "\n").encode("utf-8"))
    except OSError as e:
        cannot(f"cannot write --output {output!r}: {e.strerror or e}")
    count = len(document["games"])
    console.print(
        f"Exported {count_text(count, 'game')} to {output}.",
        highlight=False,
        soft_wrap=True,
    )


@app.command("import")
def import_(
    source: Annotated[
        str,
        typer.Argument(
            help="A JSON file made by nimlab export (- for standard input).", show_default=False
        ),
    ],
    db: DbOption = None,
) -> None:
    """Add the games of an export file to the history.

    Every game is replayed and checked first, and either all are imported or none. Statistics are
    not changed."""
    text = read_input_text(source)
    try:
        document = json.loads(text)
    except json.JSONDecodeError as e:
        shown = "standard input" if source == "-" else source
        fail(f"{shown}: not JSON ({e.msg} at line {e.lineno}): give a file made by nimlab export")
    with open_store(db) as store:
        result = import_document(store, document)
    ids, existing = result.added, result.existing
    if result.players_added:
        names = ", ".join(result.players_added)
        console.print(f"Registered {names}.", highlight=False, soft_wrap=True)
    if not ids and not existing:
        console.print("The file has no games.")
        return
    if ids:
        span = f"#{ids[0]}" if len(ids) == 1 else f"#{ids[0]}-#{ids[-1]}"
        console.print(
            f"Imported {count_text(len(ids), 'game')} as {span}.",
            highlight=False,
            soft_wrap=True,
        )
    if existing:
        console.print(
            f"{len(existing)} game{'s were' if len(existing) != 1 else ' was'} stored already "
            "(not added again).",
            highlight=False,
            soft_wrap=True,
        )


@app.command("delete-game")
def delete_game(
    game_ids: Annotated[
        list[int],
        typer.Argument(help="The games' numbers (see nimlab history).", show_default=False),
    ],
    db: DbOption = None,
) -> None:
    """Delete stored games from the history. Statistics are not changed."""
    with open_store(db) as store:
        for game_id in game_ids:  # every number is checked before any game is deleted
            store.game(game_id)
        for game_id in game_ids:
            store.delete_game(game_id)
            console.print(f"Deleted game #{game_id}.", highlight=False, soft_wrap=True)
