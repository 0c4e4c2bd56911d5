"""``nimlab history``, ``nimlab replay ID``, ``nimlab export``, ``nimlab import`` and ``nimlab
delete-game ID``: the stored game records."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from nimlab.cli.app import app
from nimlab.cli.board import render_board
from nimlab.cli.common import console, fail
from nimlab.cli.database import DbOption, open_store
from nimlab.core.game import Game
from nimlab.core.narrate import eliminated_text, player_label, turn_text, wins_text
from nimlab.core.ruleset import Ruleset
from nimlab.storage import GameSummary, import_document

__all__ = ["delete_game", "history", "replay"]


def _start_text(start: Any) -> str:
    if isinstance(start, dict):
        rows = start.get("rows", [])
        return " / ".join(str(r) if len(str(r)) <= 20 else f"{len(str(r))} stones" for r in rows)
    heaps = list(start)
    return " ".join(map(str, heaps)) if len(heaps) <= 12 else f"{len(heaps)} piles"


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
            g.ruleset,
            _start_text(g.start),
            _players_text(g),
            "" if g.winner is None else g.winner.name,
            str(g.move_count),
        )
    console.print(table)
    console.print(Text("nimlab replay ID steps through a game.", style="dim"))


@app.command("replay")
def replay(
    game_id: Annotated[
        int, typer.Argument(help="The game's number (see nimlab history).", show_default=False)
    ],
    pause: Annotated[
        bool,
        typer.Option(
            "--pause/--no-pause", help="Wait for Enter after each move (default: on a terminal)."
        ),
    ] = True,
    db: DbOption = None,
) -> None:
    """Step through a stored game move by move."""
    with open_store(db, read_only=True) as store:
        stored = store.game(game_id)
    game = Game.from_record(stored.record)
    summary = stored.summary
    step = pause and sys.stdin.isatty() and console.is_terminal
    console.print(
        Text(f"Game #{summary.id}", style="bold"),
        Text(f"finished {summary.finished_at.replace('T', ' ')}", style="dim"),
    )
    console.print(Ruleset.parse(summary.ruleset).describe(), highlight=False, soft_wrap=True)
    console.print(
        "Players: " + ", ".join(player_label(p) for p in game.players),
        highlight=False,
        soft_wrap=True,
    )
    console.print()
    console.print(render_board(game.start))
    for seat in game.opening_eliminations:
        console.print(Text(eliminated_text(game.players[seat]), style="bold red"))
    for turn in game.history:
        if step:
            try:
                answer = console.input(Text("Enter: next move, q: stop ", style="dim"))
            except EOFError:
                break
            if answer.strip().lower() in ("q", "quit"):
                break
        console.print()
        console.print(
            Text(f"{turn.number}. {turn_text(turn)}", style="bold"), highlight=False, soft_wrap=True
        )
        console.print(render_board(turn.after))
        if turn.eliminated:
            console.print(Text(eliminated_text(turn.player), style="bold red"))
        if turn.new_round and turn.winner is None:
            console.print(f"Round {turn.round + 1} starts again from the start position.")
        if turn.winner is not None:
            console.print(Text(wins_text(turn.winner), style="bold green"))
    else:
        if not game.history and game.winner is not None:
            console.print(Text(wins_text(game.winner), style="bold green"))


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
    with open_store(db, read_only=True) as store:
        document = store.export_games(game_ids or None)
    text = json.dumps(document, indent=1)
    if output == "-":
        typer.echo(text)
        return
    Path(output).write_text(text + "\n", encoding="utf-8")
    count = len(document["games"])
    console.print(
        f"Exported {count} game{'s' if count != 1 else ''} to {output}.",
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
    if source == "-":
        text = sys.stdin.read()
    else:
        path = Path(source)
        if not path.is_file():
            fail(f"file {source!r} does not exist")
        text = path.read_text(encoding="utf-8")
    try:
        document = json.loads(text)
    except json.JSONDecodeError as e:
        fail(f"{source}: not JSON ({e.msg} at line {e.lineno})")
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
            f"Imported {len(ids)} game{'s' if len(ids) != 1 else ''} as {span}.",
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
