"""``nimlab grundy GAME``: Grundy values of one heap of each size, with the period, preperiod and
the Guy–Smith proof (interfaces.md)."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.text import Text

from nimlab.cli.app import app
from nimlab.cli.common import console, err_console, fail
from nimlab.core.games import game_choices, parse_game

if TYPE_CHECKING:
    from nimlab.theory.grundy import GrundySequence

DEFAULT_MAX = 1000
PROVE_LIMIT = 1 << 30  # 0.1777 needs 443 million values
SHOWN_VALUES = 240


@app.command("grundy")
def grundy_command(
    game: Annotated[
        str,
        typer.Argument(
            help=f"An octal code (0.77) or a game: {game_choices()}."
        ),
    ],
    max_n: Annotated[
        int | None,
        typer.Option(
            "--max", "-n", min=1, help="Heap sizes 0..N-1 (with --prove: the most to compute)."
        ),
    ] = None,
    prove: Annotated[
        bool, typer.Option("--prove", help="Compute as far as needed to prove the period.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    values: Annotated[
        bool, typer.Option("--values", help="Include every value (JSON) or print them all.")
    ] = False,
) -> None:
    """Grundy values of a take-and-break game, with its period proven by the Guy–Smith test."""
    kind = parse_game(game)
    if kind.rule.tail and not kind.rule.is_nim:
        fail(f"{game!r} has infinitely many digits: give a finite octal code like 0.77")
    limit = max_n if max_n is not None else (PROVE_LIMIT if prove else DEFAULT_MAX)
    if limit > PROVE_LIMIT:
        fail(f"--max is at most {PROVE_LIMIT:,}")
    sequence = _compute(kind.rule, limit, prove, show_progress=sys.stderr.isatty() and not as_json)
    name = kind.rule.code if kind.entry.notation == "octal" else kind.name
    if as_json:
        typer.echo(json.dumps(_to_json(name, limit, sequence, values)))
        return
    _print(kind.title, sequence, values)


def _compute(rule: Any, limit: int, prove: bool, *, show_progress: bool) -> GrundySequence:
    from nimlab.theory.grundy import grundy_sequence  # compiled kernels load only when needed

    if not show_progress:
        return grundy_sequence(rule, limit, prove=prove)
    with Progress(
        TextColumn("[bold]Grundy values"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err_console,
        transient=True,
    ) as progress:
        task = progress.add_task("grundy", total=None)

        def report(done: int, total: int) -> None:
            progress.update(task, completed=done, total=total)

        return grundy_sequence(rule, limit, prove=prove, progress=report)


def _to_json(name: str, limit: int, s: GrundySequence, values: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"game": name, "max": len(s.values)}
    if values:
        out["values"] = [int(v) for v in s.values]
    out.update(period=s.period, preperiod=s.preperiod, proven=s.proven)
    rare = getattr(s, "rare_count", None)
    if rare is not None:
        out["rare_values"] = rare
    return out


def _row_width(period: int | None) -> int:
    """Values per printed line: the period (or a divisor of it) when it fits, so columns line up."""
    if period is not None and period >= 4:
        for width in (period, period // 2, period // 3):
            if width <= 24 and width * (period // width) == period:
                return width
    return 12


def _print(title: str, s: GrundySequence, all_values: bool) -> None:
    n = len(s.values)
    console.print(
        Text.assemble(("Grundy values of ", "bold"), (title, "bold"), f"  (heaps 0..{n - 1:,})")
    )
    shown = s.values if all_values else s.values[:SHOWN_VALUES]
    row = _row_width(s.period)
    for start in range(0, len(shown), row):
        chunk = " ".join(f"{int(v):>2}" for v in shown[start : start + row])
        console.print(Text(f"{start:>8}: {chunk}"))
    if len(shown) < n:
        console.print(Text(f"... {n - len(shown):,} more (--values prints them all)", style="dim"))
    if s.period is None:
        console.print(Text("No period found within the computed values.", style="yellow"))
    else:
        console.print(
            Text.assemble(
                ("Period ", "bold"), f"{s.period:,}", ("  preperiod ", "bold"), f"{s.preperiod:,}"
            )
        )
        if s.proven:
            console.print(
                Text(
                    "Proven periodic forever (the Guy–Smith condition holds within the values).",
                    style="green",
                )
            )
        else:
            console.print(
                Text(
                    "Not proven: compute further (--prove) to check the Guy–Smith condition.",
                    style="yellow",
                )
            )
    rare = getattr(s, "rare_count", None)
    if rare is not None:
        console.print(Text(f"Rare values: {rare:,}", style="dim"))
