"""``nimlab quotient CODE``: the misère quotient of a take-and-break game (Plambeck–Siegel): its
order, P-portion, generators and relations, the element of each heap, and whether it is proven for
every heap size."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated

import typer
from rich.text import Text

from nimlab.cli.app import app
from nimlab.cli.common import console, fail
from nimlab.core.ruleset import parse_game

if TYPE_CHECKING:
    from nimlab.theory.quotient import MisereQuotient

MAX_HEAP = 1000
SECONDS = 120.0
SHOWN_IMAGES = 120


@app.command("quotient")
def quotient_command(
    game: Annotated[
        str,
        typer.Argument(
            help="An octal code (0.77) or a game whose positions are sums of heaps "
            "(kayles, dawson, octal:CODE, subtraction:SET, lasker, grundys-game)."
        ),
    ],
    max_heap: Annotated[
        int | None,
        typer.Option(
            "--max-heap",
            "-n",
            min=0,
            help="Heaps up to N (the computation stops earlier once the quotient is proven). "
            "Default: 200, or 24 for games no period can prove (lasker, grundys-game).",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    table: Annotated[
        bool,
        typer.Option(
            "--table",
            help="Also print the multiplication table (row x column; P-portion products in bold); "
            'with --json, add it as "table" (indices of elements).',
        ),
    ] = False,
) -> None:
    """The misère quotient of a take-and-break game, verified heap by heap."""
    from nimlab.theory.budget import Budget
    from nimlab.theory.quotient import QuotientError, default_heap_bound, misere_quotient

    kind = parse_game(game)
    if kind.quotient_support:
        fail(f"no misère quotient: {kind.quotient_support}")
    if max_heap is None:
        max_heap = default_heap_bound(kind.rule)
    if max_heap > MAX_HEAP:
        fail(f"--max-heap is at most {MAX_HEAP}")
    try:
        # a computation that cannot go on shows what it verified, and says where it stopped
        q = misere_quotient(kind.rule, max_heap, budget=Budget(seconds=SECONDS), partial=True)
    except QuotientError as e:
        fail(str(e))
    if as_json:
        out = q.to_json()
        if table:
            out["table"] = [list(row) for row in q.table]
        typer.echo(json.dumps(out))
        return
    _print(kind.title, q)
    if table:
        _print_table(q)


def _print(title: str, q: MisereQuotient) -> None:
    console.print(Text.assemble(("Misère quotient of ", "bold"), (title, "bold")))
    console.print(Text(f"Order {q.order}, P-portion {q.p_count}  (heaps up to {q.heap_bound})"))
    pairs = zip(q.generators, q.generator_heaps, strict=True)
    gens = ", ".join(f"{g} = heap {h}" for g, h in pairs)
    console.print(Text.assemble(("Generators: ", "bold"), gens or "none"))
    console.print(Text.assemble(("Relations: ", "bold"), ", ".join(q.relations) or "none"))
    console.print(
        Text.assemble(("P-portion: ", "bold"), ", ".join(q.elements[x] for x in q.p_elements))
    )
    console.print(Text.assemble(("Elements: ", "bold"), ", ".join(q.elements)))
    console.print(Text("Heap images:", style="bold"))
    shown = q.heap_images[:SHOWN_IMAGES]
    column = max(len(q.elements[x]) for x in shown) + 1
    width = max(1, 72 // column)
    if q.period is not None and q.period <= width:
        width = q.period * (width // q.period)
    for start in range(0, len(shown), width):
        row = "".join(f"{q.elements[x]:>{column}}" for x in shown[start : start + width])
        console.print(Text(f"{start:>6}: {row}"))
    if len(shown) < len(q.heap_images):
        console.print(Text(f"... up to heap {q.heap_bound}", style="dim"))
    if q.proven:
        console.print(Text(f"Proven for every heap size: {q.reason}.", style="green"))
    else:
        console.print(Text(f"Not proven beyond heap {q.heap_bound}: {q.reason}.", style="yellow"))


def _print_table(q: MisereQuotient) -> None:
    """The multiplication table: the product of the row's and the column's elements."""
    from rich.table import Table

    grid = Table(title="Products (row x column); bold: in the P-portion", title_justify="left")
    grid.add_column("x", style="bold")
    for name in q.elements:
        grid.add_column(name, justify="center")
    for x, row in enumerate(q.table):
        grid.add_row(
            q.elements[x],
            *(Text(q.elements[y], style="bold green" if q.is_p(y) else "") for y in row),
        )
    console.print(grid)
