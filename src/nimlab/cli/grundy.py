"""``nimlab grundy GAME``: Grundy values of one heap of each size, with the period, preperiod and
the argument that proves it: the Guy–Smith theorem for games that split heaps, the window
argument for games that never do.

With ``--prove`` the values are computed until the period is proven, ``--max`` values are done
or the time runs out (``--seconds``; without ``--max`` at most :data:`PROVE_SECONDS` by
default); games whose period is unknown (open games) then end with "no period proven".
``--save FILE`` keeps the run's state (every :data:`CHECKPOINT_SECONDS`, when the time runs out
and on Ctrl-C) and ``--resume FILE`` goes on from it. The progress display shows values
computed, rare values, the rate and the next checkpoint.

Wythoff's game, played on a pair of piles, has a table of pairs instead: ``nimlab grundy wythoff
--max N`` prints ``G(x, y)`` for piles ``0 .. N - 1`` as a grid
(:func:`nimlab.core.study.grundy_table`)."""

from __future__ import annotations

import json
import shlex
import sys
import time
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
    progress_bar,
    save_atomically,
    seconds_check,
    write_atomically,
)
from nimlab.core.games import GameKind, game_choices, parse_game
from nimlab.core.study import DEFAULT_TABLE, GRUNDY_SECONDS, MAX_TABLE, has_grundy_table
from nimlab.core.words import count_text, rate_text
from nimlab.theory.octal import TakeAndBreak

if TYPE_CHECKING:
    from nimlab.core.study import GrundyTable
    from nimlab.theory.grundy import ArithmeticPeriod, GrundyRun, GrundySequence, GrundyStatus

DEFAULT_MAX = 1000
PROVE_SECONDS = 600.0
"""``--prove`` without ``--max`` or ``--seconds`` computes for at most this many seconds."""
PROVE_LIMIT = 1 << 30  # 0.1777 needs 443 million values
CHECKPOINT_SECONDS = 60.0
"""With ``--save`` the state is written at least this often (and when the run stops)."""
SHOWN_VALUES = 240
SHOWN_PILES = 30
"""The most piles of each side a table of pairs shows (``--values`` shows them all)."""
GRUNDYS_GAME_NAMES = ("grundy's game", "grundys game")
"""Grundy's game written with a space (the registry knows ``grundys-game`` and its aliases)."""


@app.command("grundy")
def grundy_command(
    game: Annotated[
        str,
        typer.Argument(
            help=f"An octal code (0.77) or a game whose positions are sums of heaps: "
            f"{game_choices()}; or wythoff (a table of pairs of piles)."
        ),
    ],
    max_n: Annotated[
        int | None,
        typer.Option(
            "--max",
            "-n",
            min=1,
            help="Heap sizes 0..N-1 (with --prove: the most to compute, by default "
            f"{PROVE_LIMIT:,}, bounded by time); wythoff: piles 0..N-1 on each side (by default "
            f"{DEFAULT_TABLE}, at most {MAX_TABLE:,}).",
        ),
    ] = None,
    prove: Annotated[
        bool,
        typer.Option(
            "--prove",
            help="Compute until the period is proven (or --max values are done, or the time "
            f"runs out: --seconds, by default {PROVE_SECONDS:.0f} s without --max).",
        ),
    ] = False,
    seconds: Annotated[
        float | None,
        typer.Option(
            "--seconds",
            "-s",
            callback=seconds_check(),
            help="Stop after this many seconds of computing (and say how far it got).",
        ),
    ] = None,
    save: Annotated[
        Path | None,
        typer.Option(
            "--save",
            metavar="FILE",
            help=f"Keep the run's state in FILE (every {CHECKPOINT_SECONDS:.0f} s, at the end and "
            "on Ctrl-C) so that --resume can go on from it.",
            dir_okay=False,
        ),
    ] = None,
    resume: Annotated[
        Path | None,
        typer.Option(
            "--resume",
            metavar="FILE",
            help="Go on from the state in FILE (made by --save; saved there again unless --save "
            "names another file). --max raises the limit.",
            dir_okay=False,
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    values: Annotated[
        bool, typer.Option("--values", help="Include every value (JSON) or print them all.")
    ] = False,
) -> None:
    """Grundy values of a take-and-break game, with its period proven by the Guy–Smith theorem
    (games that split heaps) or the window argument (games that never do)."""
    text = game.strip().lower()
    kind = parse_game("grundys-game" if text in GRUNDYS_GAME_NAMES else text)
    if has_grundy_table(kind):
        used = {"--prove": prove, "--save": save is not None, "--resume": resume is not None}
        for flag in (flag for flag, on in used.items() if on):
            fail(
                f"{kind.title} has a table of pairs, not a sequence with a period: {flag} "
                "does not apply (--max N, --seconds S, --values and --json do)"
            )
        _table_command(kind, max_n, seconds, as_json, values)
        return
    if kind.grundy_support:
        fail(f"no Grundy values: {kind.grundy_support}")
    rule, title = kind.rule, kind.title
    name = kind.label
    unequal = rule.unequal
    if prove and unequal:
        fail(f"no periodicity theorem is known for {title}: --prove cannot apply")
    if prove and rule.tail and not rule.is_nim:
        fail(
            f"{title} has infinitely many digits: --prove applies to finite octal codes like "
            "0.77 (drop --prove to compute the values)"
        )
    if max_n is not None and max_n > PROVE_LIMIT:
        fail(f"--max is at most {PROVE_LIMIT:,}")
    if save is not None:
        check_output(save, f"--save {save}")
    if resume is not None:
        run = _load(rule, resume, max_n, unequal)
        prove = run.prove
    else:
        unbounded = prove or seconds is not None
        limit = max_n if max_n is not None else (PROVE_LIMIT if unbounded else DEFAULT_MAX)
        run = _new_run(rule, limit, prove, unequal)
    if seconds is None and max_n is None and (prove or run.limit >= PROVE_LIMIT):
        seconds = PROVE_SECONDS  # (a resumed run bounded by time before is bounded again)
    target = save if save is not None else resume
    show = sys.stderr.isatty() and not as_json
    sequence = _compute_run(run, seconds, target, show_progress=show)
    if target is not None and sequence.stopped is not None and target.exists():
        how = f"nimlab grundy {shlex.quote(name)} --resume {shlex.quote(str(target))}"
        err_console.print(
            Text(
                f"Saved {count_text(len(sequence), 'value')} to {target}; go on with: {how}",
                style="cyan",
            ),
            soft_wrap=True,
        )
    if as_json:
        long_run = run if seconds is not None or target is not None else None
        out = _to_json(name, run.limit, sequence, values, prove=prove, run=long_run)
        typer.echo(json.dumps(out))
    else:
        _print(title, sequence, values, prove=prove, seconds=seconds)
    if sequence.stopped == "stop":
        raise typer.Exit(130)


def _table_command(
    kind: GameKind, max_n: int | None, seconds: float | None, as_json: bool, all_values: bool
) -> None:
    """``nimlab grundy wythoff``: the table of pairs of piles ``0 .. N - 1``, as a grid or JSON
    (``{"game", "max", "values"}``: ``values[x][y]`` is ``G(x, y)``). Refused beyond
    :data:`~nimlab.core.study.MAX_TABLE` piles (exit 2); a table that runs out of time ends with
    exit status 1."""
    from nimlab.core.study import grundy_table
    from nimlab.theory.budget import BudgetExceeded

    n = DEFAULT_TABLE if max_n is None else max_n
    if n > MAX_TABLE:
        fail(
            f"--max is at most {MAX_TABLE:,} for {kind.title} (piles 0..{MAX_TABLE - 1:,} on "
            f"each side: {MAX_TABLE * MAX_TABLE:,} values)"
        )
    limit = GRUNDY_SECONDS if seconds is None else seconds
    try:
        table = grundy_table(kind.name, n, seconds=limit)
    except BudgetExceeded:
        err_console.print(
            Text.assemble(
                ("error: ", "bold red"),
                f"the table of piles 0..{n - 1:,} was not done within {limit:,.1f} s "
                "(--seconds S gives it more time)",
            ),
            highlight=False,
            soft_wrap=True,
        )
        raise typer.Exit(1) from None
    if as_json:
        typer.echo(json.dumps({"game": kind.label, "max": n, "values": table.values}))
    else:
        _print_table(table, all_values)


def _print_table(t: GrundyTable, all_values: bool) -> None:
    """The table as a grid, rows ``x`` and columns ``y``, the P-positions (value 0) marked, and
    what the values mean."""
    n = len(t)
    shown = n if all_values else min(n, SHOWN_PILES)
    console.print(
        Text.assemble(
            ("Grundy values of ", "bold"),
            (t.title, "bold"),
            f"  (piles 0..{n - 1:,}; row x, column y: G(x, y))",
        )
    )
    cells = [row[:shown] for row in t.values[:shown]]
    width = max(len(str(shown - 1)), *(len(str(v)) for row in cells for v in row)) + 1
    head = Text("x\\y".rjust(5), style="bold")
    for y in range(shown):
        head.append(str(y).rjust(width), style="bold")
    console.print(head, soft_wrap=True)
    for x, row in enumerate(cells):
        line = Text(str(x).rjust(5), style="bold")
        for v in row:
            line.append(str(v).rjust(width), style="bold green" if v == 0 else "")
        console.print(line, soft_wrap=True)
    if shown < n:
        console.print(
            Text(
                f"... piles 0..{shown - 1} shown of 0..{n - 1:,} (--values prints them all, "
                "--json gives them)",
                style="dim",
            )
        )
    pairs = ", ".join(f"({x}, {y})" for x, y in t.p_positions()[:6])
    console.print(
        Text(
            "0 marks the P-positions: Wythoff's pairs (⌊kφ⌋, ⌊kφ²⌋) and their mirror images "
            f"({pairs}, ...). G(0, y) = y, and G(x, y) = G(y, x)."
        )
    )
    console.print(
        Text(
            "Normal play: a sum of games is a P-position exactly when the nim-sum of their "
            "values is 0. In misère play the values do not decide.",
            style="dim",
        )
    )


def _new_run(rule: TakeAndBreak, limit: int, prove: bool, unequal: bool = False) -> GrundyRun:
    from nimlab.theory.grundy import GrundyRun  # compiled kernels load only when needed

    return GrundyRun(rule, limit, prove=prove, unequal=unequal)


def _load(rule: TakeAndBreak, path: Path, limit: int | None, unequal: bool) -> GrundyRun:
    from nimlab.theory.grundy import GrundyRun, GrundyStateError

    try:
        data = input_file(str(path), "--resume").read_bytes()
    except OSError as exc:
        cannot(f"cannot read the saved run {str(path)!r}: {exc.strerror or exc}")
    try:
        return GrundyRun.from_bytes(data, rule, limit=limit, want_unequal=unequal)
    except GrundyStateError as exc:
        fail(f"{path}: {exc}")


def _compute(rule: Any, limit: int, prove: bool, *, show_progress: bool) -> GrundySequence:
    """The sequence of ``rule`` to ``limit`` values (with ``prove``: until proven)."""
    return _compute_run(_new_run(rule, limit, prove), None, None, show_progress=show_progress)


def _compute_run(
    run: GrundyRun, seconds: float | None, save: Path | None, *, show_progress: bool
) -> GrundySequence:
    """Run on (bounded by ``seconds``), saving to ``save`` every checkpoint, at the end and
    when Ctrl-C stops it (the first Ctrl-C asks the run to stop at its next chunk; a second
    one interrupts at once)."""
    interrupted = False

    def stop() -> None:
        nonlocal interrupted
        interrupted = True

    with first_ctrl_c_stops(stop):  # Ctrl-C stops the run at its next chunk (and saves)
        return _run_and_save(run, seconds, save, lambda: interrupted, show_progress)


def _run_and_save(
    run: GrundyRun,
    seconds: float | None,
    save: Path | None,
    stop: Any,
    show_progress: bool,
) -> GrundySequence:
    from nimlab.theory.grundy import warm_up

    if save is not None:  # a file that cannot be written: say so now, before the work
        try:
            write_atomically(save, run.to_bytes())
        except OSError as exc:
            cannot(f"cannot write --save {save}: {exc.strerror or exc}")
    if seconds is not None:
        warm_up()  # loading the compiled kernels does not count against the time

    began = time.perf_counter()
    start_count = run.computed
    next_save = began + CHECKPOINT_SECONDS

    def checkpoint() -> float | None:
        nonlocal next_save
        if save is None:
            return None
        now = time.perf_counter()
        if now >= next_save:
            save_atomically(save, run.to_bytes())
            next_save = now + CHECKPOINT_SECONDS
        return next_save - now

    if not show_progress:

        def quiet(status: GrundyStatus) -> None:
            checkpoint()

        sequence = run.run(seconds=seconds, stop=stop, status=quiet)
    else:
        sequence = _with_progress(run, seconds, began, start_count, checkpoint, stop)
    if save is not None:
        save_atomically(save, run.to_bytes())
    return sequence


def _with_progress(
    run: GrundyRun,
    seconds: float | None,
    began: float,
    start_count: int,
    checkpoint: Any,
    stop: Any,
) -> GrundySequence:
    by_time = seconds is not None and run.limit >= PROVE_LIMIT
    total = seconds if by_time and seconds is not None else run.limit
    with progress_bar("Grundy values", "line", "elapsed") as progress:
        line = status_line(run.computed, run.limit, run.rare, 0.0)
        task = progress.add_task("grundy", total=total, line=line)

        def report(status: GrundyStatus) -> None:
            elapsed = time.perf_counter() - began
            rate_count = status.computed - start_count
            line = status_line(status.computed, status.limit, status.rare, elapsed, rate_count)
            left = checkpoint()
            if left is not None:
                line += f" · next save in {left:.0f} s"
            done = min(elapsed, total) if by_time else status.computed
            progress.update(task, completed=done, line=line)

        return run.run(seconds=seconds, stop=stop, status=report)


def status_line(
    computed: int, limit: int, rare: int | None, seconds: float, new: int | None = None
) -> str:
    """``"123,456 of at most 2,097,152 values · 53 rare · 1.2M values/s"``: what the progress
    display says (the limit is fixed, so the bar never jumps back). The rate counts ``new``
    values (those computed in this session; all of them by default)."""
    parts = [f"{computed:,} of at most {count_text(limit, 'value')}"]
    if rare is not None:
        parts.append(f"{rare:,} rare")
    done = computed if new is None else new
    if seconds > 0 and done:
        parts.append(rate_text(done / seconds, "value"))
    return " · ".join(parts)


def _to_json(
    name: str,
    limit: int,
    s: GrundySequence,
    values: bool,
    *,
    prove: bool,
    run: GrundyRun | None = None,
) -> dict[str, Any]:
    out: dict[str, Any] = {"game": name, "max": len(s.values)}
    if s.stopped is not None:
        out["stopped"] = s.stopped  # "time" or "stop" (Ctrl-C): fewer values than asked
    if run is not None:  # a long run: its seconds of computing, over every resume
        out["seconds"] = round(run.seconds, 3)
    if values:
        out["values"] = s.values.tolist()
    # a period only with its proof: a repetition no theorem proves is named as a guess (as
    # nimlab.grundy's guessed_period), never "period"
    if s.proven:
        out.update(period=s.period, preperiod=s.preperiod, proven=True, proof=s.proof)
    else:
        out.update(period=None, preperiod=None, proven=False, proof=None)
        if s.period is not None:
            out.update(guessed_period=s.period, guessed_preperiod=s.preperiod)
    arithmetic = _arithmetic(s)
    if arithmetic is not None:
        out["arithmetic"] = {
            "period": arithmetic.period,
            "saltus": arithmetic.saltus,
            "preperiod": arithmetic.preperiod,
            "proven": arithmetic.proven,
            "proof": arithmetic.proof,
        }
    if prove:
        out["searched"] = len(s)  # how far --prove looked (its limit when nothing was proven)
    rare = getattr(s, "rare_count", None)
    if rare is not None:
        out["rare_values"] = rare
    return out


def _arithmetic(s: GrundySequence) -> ArithmeticPeriod | None:
    """The arithmetic period of a sequence without an ordinary one (games with infinitely many
    digits only: finite codes are not looked at)."""
    if s.period is not None or not s.rule.tail:
        return None
    from nimlab.theory.grundy import arithmetic_period

    return arithmetic_period(s.rule, s.values)


def _row_width(period: int | None) -> int:
    """Values per printed line: the period (or a divisor of it) when it fits, so columns line up."""
    if period is not None and period >= 4:
        for width in (period, period // 2, period // 3):
            if width <= 24 and width * (period // width) == period:
                return width
    return 12


def _print(
    title: str, s: GrundySequence, all_values: bool, *, prove: bool, seconds: float | None = None
) -> None:
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
    if s.stopped == "time":
        console.print(
            Text(
                f"Stopped after {seconds or 0:,.0f} s at {count_text(n, 'value')}"
                " (--seconds S computes longer).",
                style="yellow",
            )
        )
    elif s.stopped == "stop":
        console.print(Text(f"Interrupted at {count_text(n, 'value')}.", style="yellow"))
    if prove and not s.proven:
        console.print(
            Text(
                f"No period proven up to {count_text(n, 'value')} (--max N looks further).",
                style="yellow",
            )
        )
    arithmetic = _arithmetic(s)
    if arithmetic is not None:
        a = arithmetic
        console.print(
            Text.assemble(
                ("Arithmetic period ", "bold"),
                f"{a.period:,}",
                ("  saltus ", "bold"),
                f"{a.saltus:,}",
                ("  preperiod ", "bold"),
                f"{a.preperiod:,}",
                f"  (G(n + {a.period:,}) = G(n) + {a.saltus:,} from heap {a.preperiod:,} on)",
            )
        )
        if a.proof is not None:
            console.print(Text(f"Proven for every heap: {a.proof}.", style="green"))
        else:
            console.print(
                Text(
                    f"Observed up to heap {a.checked - 1:,}, not proven (no theorem is known "
                    "to nimlab for this game).",
                    style="yellow",
                )
            )
    elif s.period is None:
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
        console.print(
            Text(
                f"Rare values: {rare:,} (heaps whose value falls in the rare half of the "
                "sparse space of Berlekamp, Conway and Guy; the fewer they are, the faster "
                "the values come)",
                style="dim",
            )
        )
