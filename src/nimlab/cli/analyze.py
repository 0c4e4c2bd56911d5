"""``nimlab analyze``: outcome, nim-sum in binary, Grundy value, every move's value and remoteness,
and why; ``--json`` and ``--batch`` for scripts (interfaces.md)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any, TextIO

import typer
from rich.table import Table
from rich.text import Text

from nimlab.cli.app import app
from nimlab.cli.common import (
    DefaultsOption,
    EndOption,
    GameOption,
    MisereOption,
    board_from_args,
    console,
    fail,
    ruleset_from_options,
)
from nimlab.core.analysis import DEFAULT_MAX_MOVES, Analysis, analyze, describe_move
from nimlab.core.errors import NimlabError
from nimlab.core.position import board_for
from nimlab.core.ruleset import Ruleset

SHOWN_MOVES = 40


@app.command("analyze", context_settings={"ignore_unknown_options": True})
def analyze_command(
    heaps: Annotated[
        list[str] | None, typer.Argument(help="Heap sizes, e.g. 3 4 5.", show_default=False)
    ] = None,
    game: GameOption = "nim",
    misere: MisereOption = False,
    end: EndOption = None,
    defaults: DefaultsOption = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print one JSON object (interfaces.md).")
    ] = False,
    batch: Annotated[
        str | None,
        typer.Option(
            "--batch",
            help="Analyse each line of FILE (a JSON list of heaps; - for stdin): JSON lines out.",
            metavar="FILE",
        ),
    ] = None,
    max_moves: Annotated[
        int,
        typer.Option(
            "--max-moves",
            min=1,
            help="List every move when there are at most this many, else only winning ones.",
        ),
    ] = DEFAULT_MAX_MOVES,
    all_moves: Annotated[
        bool, typer.Option("--all", help="Show every move in the table, not only the first 40.")
    ] = False,
) -> None:
    """Analyse a position: who wins, why, and the value of every legal move."""
    ruleset = ruleset_from_options(game, misere, end, defaults)
    if batch is not None:
        if heaps:
            fail("give either heap sizes or --batch, not both")
        _run_batch(ruleset, batch, max_moves)
        return
    unknown = [h for h in heaps or [] if h.startswith("-") and not h[1:].isdigit()]
    if unknown:
        fail(f"no such option: {unknown[0]} (see nimlab analyze --help)")
    board = board_from_args(ruleset, heaps or [])
    analysis = analyze(ruleset, board, max_moves=max_moves)
    if as_json:
        typer.echo(json.dumps(analysis.to_json()))
    else:
        _print_analysis(analysis, all_moves)


def _run_batch(ruleset: Ruleset, source: str, max_moves: int) -> None:
    stream: TextIO
    if source == "-":
        stream = sys.stdin
    else:
        path = Path(source)
        if not path.is_file():
            fail(f"batch file {source!r} does not exist")
        stream = path.open(encoding="utf-8")
    with stream:
        for line in stream:
            if not line.strip():
                continue
            typer.echo(json.dumps(_batch_line(ruleset, line, max_moves)))


def _batch_line(ruleset: Ruleset, line: str, max_moves: int) -> dict[str, Any]:
    try:
        heaps = json.loads(line)
    except json.JSONDecodeError as e:
        return {"error": f"not JSON ({e.msg}): write a list of heap sizes like [3, 4, 5]"}
    if not isinstance(heaps, list) or not heaps:
        return {"error": "each line must be a non-empty JSON list of heap sizes like [3, 4, 5]"}
    if any(isinstance(h, str) for h in heaps):
        return {"error": "heap sizes must be JSON numbers, not strings"}
    try:
        return analyze(ruleset, board_for(ruleset.rule, heaps), max_moves=max_moves).to_json()
    except NimlabError as e:
        return {"error": str(e)}


def _print_analysis(a: Analysis, all_moves: bool) -> None:
    heaps = a.board.heaps
    shown = " ".join(map(str, heaps)) if len(heaps) <= 30 else f"{len(heaps):,} heaps"
    console.print(
        Text.assemble(("Position ", "bold"), shown, ("  ·  ", "dim"), a.ruleset.describe())
    )
    if a.outcome is None:
        console.print(
            Text("Outcome: not proven (the exact search ran out of budget)", style="bold yellow")
        )
    else:
        style = "bold green" if a.outcome.next_player_wins else "bold red"
        line = Text.assemble(("Outcome: ", "bold"), (a.outcome.description, style))
        if a.remoteness is not None:
            line.append(f"  (remoteness {a.remoteness})", style="dim")
        console.print(line)
    if a.grundy is not None:
        console.print(Text.assemble(("Grundy value: ", "bold"), str(a.grundy)))
    console.print()
    for sentence in a.explanation:
        console.print(Text(sentence))
    if not a.moves:
        return
    console.print()
    table = Table(title="Every move (value for the mover)", title_justify="left")
    table.add_column("move")
    table.add_column("result")
    table.add_column("value", justify="center")
    table.add_column("remoteness", justify="right")
    ordered = sorted(a.moves, key=lambda m: (not m.winning,))
    limit = None if all_moves else SHOWN_MOVES
    for m in ordered[:limit]:
        result = " ".join(map(str, m.result)) if len(m.result) <= 20 else f"{len(m.result):,} heaps"
        value = "?" if m.outcome is None else ("wins" if m.winning else "loses")
        table.add_row(
            describe_move(m.move, a.board),
            result or "(empty)",
            Text(value, style="green" if m.winning else "red"),
            "?" if m.remoteness is None else str(m.remoteness),
        )
    console.print(table)
    hidden = len(ordered) - len(ordered[:limit])
    if hidden:
        console.print(
            Text(f"... and {hidden} more moves (--all shows them, --json lists them)", style="dim")
        )
    if not a.moves_complete:
        console.print(
            Text(
                f"{a.move_count:,} legal moves in all; only the winning ones are listed.",
                style="dim",
            )
        )
