"""``nimlab quotient CODE``: the misère quotient of a take-and-break game (Plambeck–Siegel): its
order, P-portion, generators and relations, the element of each heap, and whether it is proven for
every heap size.

The computation is bounded by ``--seconds`` (:data:`SECONDS` by default) and shows its progress
(heap, order, time). ``--save FILE`` keeps the quotient verified so far (every
:data:`CHECKPOINT_SECONDS`, when the time runs out and on Ctrl-C) and ``--resume FILE`` goes on
from it; a resumed quotient is checked and verified again before it is used."""

from __future__ import annotations

import hashlib
import json
import shlex
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.text import Text

from nimlab.cli.app import app
from nimlab.cli.common import (
    cannot,
    check_output,
    console,
    err_console,
    fail,
    first_ctrl_c_stops,
    input_file,
    number_check,
    progress_bar,
    save_atomically,
    seconds_check,
    write_atomically,
)
from nimlab.core.ruleset import parse_game

if TYPE_CHECKING:
    from nimlab.theory.octal import TakeAndBreak
    from nimlab.theory.quotient import MisereQuotient

MAX_HEAP = 1000
SECONDS = 120.0
"""The default bound on the time of one computation (``--seconds``)."""
MEMORY_GIB = 2.0
"""The default bound on the memory of the quotient's tables and states (``--memory``)."""
CHECKPOINT_SECONDS = 60.0
"""With ``--save`` the quotient verified so far is written at least this often."""
SHOWN_IMAGES = 120
SAVED_KIND = "nimlab misère quotient"


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
    seconds: Annotated[
        float,
        typer.Option(
            "--seconds",
            "-s",
            callback=seconds_check(),
            help="Stop after this many seconds of computing and say how far it got.",
        ),
    ] = SECONDS,
    memory: Annotated[
        float,
        typer.Option(
            "--memory",
            metavar="GIB",
            callback=number_check("a memory size in GiB", 0.01, 1024.0, example="2"),
            help="The most memory (GiB) the quotient's tables and the verification may take; "
            "a larger quotient stops with what is verified.",
        ),
    ] = MEMORY_GIB,
    save: Annotated[
        Path | None,
        typer.Option(
            "--save",
            metavar="FILE",
            help=f"Keep the quotient verified so far in FILE (every {CHECKPOINT_SECONDS:.0f} s, "
            "when the time runs out and on Ctrl-C) so that --resume can go on from it.",
            dir_okay=False,
        ),
    ] = None,
    resume: Annotated[
        Path | None,
        typer.Option(
            "--resume",
            metavar="FILE",
            help="Go on from the quotient in FILE (made by --save; checked and verified again; "
            "saved there again unless --save names another file).",
            dir_okay=False,
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
    from nimlab.theory.budget import Budget, BudgetExceeded
    from nimlab.theory.quotient import (
        QuotientError,
        default_heap_bound,
        misere_quotient,
        quotient_progress,
    )

    kind = parse_game(game)
    if kind.quotient_support:
        fail(f"no misère quotient: {kind.quotient_support}")
    if max_heap is None:
        max_heap = default_heap_bound(kind.rule)
    if max_heap > MAX_HEAP:
        fail(f"--max-heap is at most {MAX_HEAP}")
    rule = kind.rule
    nbytes = int(memory * 2**30)
    if save is not None:  # before any work
        check_output(save, f"--save {save}")
    start, order = (
        _load(rule, kind.title, resume, max_heap, nbytes) if resume is not None else (0, 1)
    )
    target = save if save is not None else resume
    if save is not None:
        _write_or_fail(save, _saved(rule, None))
    budget = Budget(seconds=seconds, nbytes=nbytes)
    show = sys.stderr.isatty() and not as_json
    last: dict[str, Any] = {"heap": start, "order": order}
    checkpoint = _Checkpoint(target)

    try:
        with (
            first_ctrl_c_stops(budget.cancel),
            _progress(show, max_heap, last, checkpoint) as report,
        ):

            def on_round(heap: int, order: int, snapshot: Callable[[], MisereQuotient]) -> None:
                last.update(heap=heap, order=order, snapshot=snapshot)
                checkpoint.maybe(snapshot)
                report()

            q = misere_quotient(rule, max_heap, budget=budget, on_round=on_round)
    except BudgetExceeded as exc:
        partial = quotient_progress(rule)
        if partial is not None and partial.heap_bound == 0:
            partial = None  # nothing verified yet
        if exc.reason == "memory":
            why = (
                f"the misère quotient of {kind.title} up to heap {max_heap} needs more than "
                f"{memory:g} GiB (--memory GIB allows more)"
            )
        else:
            why = (
                f"the misère quotient of {kind.title} up to heap {max_heap} took more than "
                f"{seconds:g} seconds (--seconds S computes longer)"
            )
        where = ""
        if partial is not None:
            where = f"; verified up to heap {partial.heap_bound} (order {partial.order})"
            if target is not None:
                checkpoint.write(partial)
                how = f"nimlab quotient {shlex.quote(game)} --max-heap {max_heap} --resume"
                where += f", saved to {target}; go on with: {how} {shlex.quote(str(target))}"
            else:
                where += " (--save FILE keeps it for --resume)"
        if exc.reason == "cancelled":
            err_console.print(Text(f"Interrupted{where}.", style="yellow"), soft_wrap=True)
            raise typer.Exit(130) from None
        if partial is None:  # nothing verified to show: it could not be done
            cannot(why)
        # as grundy --seconds does: the part verified, then why it stopped (exit status 0)
        _show(kind.label, kind.title, partial, as_json, table, stopped=exc.reason)
        (err_console if as_json else console).print(
            Text(f"Stopped: {why}{where}.", style="yellow"), soft_wrap=True
        )
        return
    except QuotientError as e:
        reached = f" (verified up to heap {last['heap']}, order {last['order']})"
        if target is not None and "snapshot" in last:
            checkpoint.write(last["snapshot"]())
        fail(str(e) + (reached if last["heap"] else ""))
    if target is not None:
        checkpoint.write(q)
    _show(kind.label, kind.title, q, as_json, table)


def _show(
    label: str,
    title: str,
    q: MisereQuotient,
    as_json: bool,
    table: bool,
    stopped: str | None = None,
) -> None:
    """The quotient as text or JSON (``stopped``: why the run stopped before its bound,
    ``"time"`` or ``"memory"``; JSON then has ``"stopped"``)."""
    if as_json:
        out = {"game": label} | q.to_json()
        if stopped is not None:
            out["stopped"] = stopped
        if table:
            out["table"] = [list(row) for row in q.table]
        typer.echo(json.dumps(out))
        return
    _print(title, q)
    if table:
        _print_table(q)


class _Checkpoint:
    """Writes the quotient verified so far to a file, at most every ``CHECKPOINT_SECONDS``
    (:meth:`maybe`) or now (:meth:`write`)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.next = time.monotonic() + CHECKPOINT_SECONDS

    def maybe(self, snapshot: Callable[[], MisereQuotient]) -> None:
        if self.path is not None and time.monotonic() >= self.next:
            self.write(snapshot())

    def write(self, q: MisereQuotient) -> None:
        if self.path is not None:
            save_atomically(self.path, _saved(q.rule, q))
            self.next = time.monotonic() + CHECKPOINT_SECONDS

    def seconds_left(self) -> float | None:
        return None if self.path is None else max(0.0, self.next - time.monotonic())


def _saved(rule: TakeAndBreak, q: MisereQuotient | None) -> bytes:
    """A saved quotient of ``rule``: one JSON object with a SHA-256 checksum of its contents."""
    body: dict[str, Any] = {"kind": SAVED_KIND, "version": 1, "code": rule.code}
    if rule.unequal:
        body["unequal"] = True
    if q is not None:
        body |= {
            "heap_bound": q.heap_bound,
            "table": [list(row) for row in q.table],
            "p_elements": list(q.p_elements),
            "heap_images": list(q.heap_images),
        }
    text = json.dumps(body, separators=(",", ":"), sort_keys=True)
    digest = hashlib.sha256(text.encode()).hexdigest()
    return json.dumps({"quotient": body, "sha256": digest}, separators=(",", ":")).encode()


def _write_or_fail(path: Path, data: bytes) -> None:
    if path.exists():
        return  # kept until there is something verified to replace it with
    try:
        write_atomically(path, data)
    except OSError as exc:
        cannot(f"cannot write --save {path}: {exc.strerror or exc}")


def _load(
    rule: TakeAndBreak, title: str, path: Path, max_heap: int, nbytes: int
) -> tuple[int, int]:
    """Check the saved quotient in ``path`` of ``rule`` (``title``: the game as people name it)
    and take it up; its heap bound and order (0 and 1 when the file holds none yet)."""
    from nimlab.theory.budget import Budget, BudgetExceeded
    from nimlab.theory.quotient import QuotientError, resume_quotient, rule_name

    try:
        raw = json.loads(input_file(str(path), "--resume").read_bytes())
        body = raw["quotient"]
        text = json.dumps(body, separators=(",", ":"), sort_keys=True)
        intact = hashlib.sha256(text.encode()).hexdigest() == raw["sha256"]
    except OSError as exc:
        cannot(f"cannot read the saved quotient {str(path)!r}: {exc.strerror or exc}")
    except (ValueError, KeyError, TypeError):
        fail(f"{path}: not a quotient saved by nimlab quotient --save")
    if not isinstance(body, dict) or body.get("kind") != SAVED_KIND:
        fail(f"{path}: not a quotient saved by nimlab quotient --save")
    if not intact:
        fail(f"{path}: the saved quotient is damaged (its checksum does not match)")
    if body.get("code") != rule.code or body.get("unequal", False) is not rule.unequal:
        saved = rule_name(str(body.get("code")), bool(body.get("unequal")))
        fail(f"{path}: the saved quotient is of {saved}, not of {title}")
    if "table" not in body:
        return 0, 1
    bound = body.get("heap_bound")
    if not isinstance(bound, int) or bound > max_heap:
        fail(f"{path}: the saved quotient goes to heap {bound}, beyond --max-heap {max_heap}")
    try:
        table = body["table"]
        bound = resume_quotient(
            rule,
            table,
            body["p_elements"],
            body["heap_images"],
            budget=Budget(seconds=SECONDS, nbytes=nbytes),
        )
    except (QuotientError, TypeError, ValueError) as exc:
        fail(f"{path}: the saved quotient cannot be used: {exc}")
    except BudgetExceeded:
        fail(f"{path}: checking the saved quotient took more than {SECONDS:.0f} s or --memory")
    return bound, len(table)


class _progress:
    """A progress display on the terminal (heap reached of the bound, order, next save): the
    ``report`` callable it yields redraws it."""

    def __init__(self, show: bool, max_heap: int, last: dict[str, Any], cp: _Checkpoint) -> None:
        self.show, self.max_heap, self.last, self.cp = show, max_heap, last, cp
        self.bar: Any = None

    def __enter__(self) -> Callable[[], None]:
        if not self.show:
            return lambda: None
        self.bar = progress_bar("Misère quotient", "line", "elapsed")
        self.bar.__enter__()
        task = self.bar.add_task("quotient", total=self.max_heap, line="", completed=0)

        def report() -> None:
            line = (
                f"heap {self.last['heap']} of at most {self.max_heap} · order {self.last['order']}"
            )
            left = self.cp.seconds_left()
            if left is not None:
                line += f" · next save in {left:.0f} s"
            self.bar.update(task, completed=self.last["heap"], line=line)

        report()
        return report

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)


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
