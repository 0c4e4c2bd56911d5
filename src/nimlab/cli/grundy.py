"""``nimlab grundy GAME``: Grundy values of one heap of each size, with the period, preperiod and
the argument that proves it: the Guy–Smith theorem for games that split heaps, the window
argument for games that never do.

With ``--prove`` the values are computed until the period is proven or ``--max`` values (by
default 2**21, under twenty seconds even for a slow open game such as 0.6) are done; games whose
period is unknown (open games) then end with "no period proven up to N values". The progress
display shows values computed, rare values found and the rate, against the fixed limit."""

from __future__ import annotations

import json
import sys
import time
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.text import Text

from nimlab.cli.app import app
from nimlab.cli.common import console, err_console, fail
from nimlab.core.games import game_choices, parse_game

if TYPE_CHECKING:
    from nimlab.theory.grundy import GrundySequence, GrundyStatus

DEFAULT_MAX = 1000
PROVE_DEFAULT = 1 << 21
"""``--prove`` without ``--max`` stops after this many values (0.6, an open game, needs 10-20
CPU seconds for them)."""
PROVE_LIMIT = 1 << 30  # 0.1777 needs 443 million values
SHOWN_VALUES = 240


@app.command("grundy")
def grundy_command(
    game: Annotated[
        str,
        typer.Argument(help=f"An octal code (0.77) or a game: {game_choices()}."),
    ],
    max_n: Annotated[
        int | None,
        typer.Option(
            "--max",
            "-n",
            min=1,
            help="Heap sizes 0..N-1 (with --prove: the most to compute, by default "
            f"{PROVE_DEFAULT:,}).",
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
    """Grundy values of a take-and-break game, with its period proven by the Guy–Smith theorem
    (games that split heaps) or the window argument (games that never do)."""
    kind = parse_game(game)
    if kind.rule.tail and not kind.rule.is_nim:
        fail(f"{game!r} has infinitely many digits: give a finite octal code like 0.77")
    limit = max_n if max_n is not None else (PROVE_DEFAULT if prove else DEFAULT_MAX)
    if limit > PROVE_LIMIT:
        fail(f"--max is at most {PROVE_LIMIT:,}")
    sequence = _compute(kind.rule, limit, prove, show_progress=sys.stderr.isatty() and not as_json)
    name = kind.rule.code if kind.entry.notation == "octal" else kind.name
    if as_json:
        typer.echo(json.dumps(_to_json(name, limit, sequence, values, prove=prove)))
        return
    _print(kind.title, sequence, values, prove=prove)


def _compute(rule: Any, limit: int, prove: bool, *, show_progress: bool) -> GrundySequence:
    from nimlab.theory.grundy import grundy_sequence  # compiled kernels load only when needed

    if not show_progress:
        return grundy_sequence(rule, limit, prove=prove)
    with Progress(
        TextColumn("[bold]Grundy values"),
        BarColumn(),
        TextColumn("{task.fields[line]}"),
        TimeElapsedColumn(),
        console=err_console,
        transient=True,
    ) as progress:
        task = progress.add_task("grundy", total=limit, line=status_line(0, limit, None, 0.0))
        began = time.perf_counter()

        def report(status: GrundyStatus) -> None:
            elapsed = time.perf_counter() - began
            line = status_line(status.computed, status.limit, status.rare, elapsed)
            progress.update(task, completed=status.computed, line=line)

        return grundy_sequence(rule, limit, prove=prove, status=report)


def status_line(computed: int, limit: int, rare: int | None, seconds: float) -> str:
    """``"123,456 of at most 2,097,152 values · 53 rare · 1.2M values/s"``: what the progress
    display says (the limit is fixed, so the bar never jumps back)."""
    parts = [f"{computed:,} of at most {limit:,} values"]
    if rare is not None:
        parts.append(f"{rare:,} rare")
    if seconds > 0 and computed:
        rate = computed / seconds
        parts.append(
            f"{rate / 1e6:.1f}M values/s" if rate >= 1e6 else f"{rate / 1e3:.0f}k values/s"
        )
    return " · ".join(parts)


def _to_json(
    name: str, limit: int, s: GrundySequence, values: bool, *, prove: bool
) -> dict[str, Any]:
    out: dict[str, Any] = {"game": name, "max": len(s.values)}
    if values:
        out["values"] = [int(v) for v in s.values]
    out.update(period=s.period, preperiod=s.preperiod, proven=s.proven, proof=s.proof)
    if prove:
        out["searched"] = len(s)  # how far --prove looked (its limit when nothing was proven)
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


def _print(title: str, s: GrundySequence, all_values: bool, *, prove: bool) -> None:
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
    if prove and not s.proven:
        console.print(
            Text(f"No period proven up to {n:,} values (--max N looks further).", style="yellow")
        )
    if s.period is None:
        if not prove:
            console.print(Text("No period found within the computed values.", style="yellow"))
    else:
        console.print(
            Text.assemble(
                ("Period ", "bold"), f"{s.period:,}", ("  preperiod ", "bold"), f"{s.preperiod:,}"
            )
        )
        if s.proof == "guy-smith":
            console.print(
                Text(
                    "Proven periodic forever by the Guy–Smith theorem"
                    " (its condition holds within the values).",
                    style="green",
                )
            )
        elif s.proof == "window":
            t = s.rule.max_take or 0
            console.print(
                Text(
                    "Proven periodic forever by the window argument: the game never splits a"
                    f" heap, so each value follows from the {t} before it, and {t} consecutive"
                    " values repeat.",
                    style="green",
                )
            )
        else:
            test = "Guy–Smith" if s.rule.splits else "window"
            console.print(
                Text(
                    f"Not proven: the repetition is seen but the {test} condition is not met"
                    + ("." if prove else "; compute further (--prove) to check it."),
                    style="yellow",
                )
            )
    rare = getattr(s, "rare_count", None)
    if rare is not None:
        console.print(Text(f"Rare values: {rare:,}", style="dim"))
