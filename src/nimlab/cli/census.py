"""``nimlab census``: the Grundy sequence of every octal game up to a number of code digits, each
to a size or a time, written as a table (CSV and JSON); on the machine's cores or on a Dask
cluster; a stopped census goes on from the rows already done."""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from nimlab.cli.app import app
from nimlab.cli.common import cannot, console, err_console, fail, progress_bar, seconds_check
from nimlab.core.words import count_text

__all__ = ["census_command"]

FORMAT = "nimlab-census/1"
SHOWN_OPEN = 20


@app.command("census")
def census_command(
    digits: Annotated[
        int,
        typer.Option(
            "--digits",
            "-d",
            min=1,
            max=6,
            metavar="D",
            help="Every octal game 0.d1..dL with L up to D digits.",
        ),
    ] = 2,
    max_n: Annotated[
        int,
        typer.Option("--max", "-n", min=1, max=1 << 30, help="Values per game at most."),
    ] = 1 << 20,
    seconds: Annotated[
        float,
        typer.Option(
            "--seconds",
            "-s",
            callback=seconds_check(),
            help="Seconds of computing per game at most.",
        ),
    ] = 5.0,
    jobs: Annotated[
        int | None,
        typer.Option("--jobs", "-j", min=1, help="Worker processes (default: every core)."),
    ] = None,
    scheduler: Annotated[
        str | None,
        typer.Option(
            "--scheduler",
            metavar="ADDRESS",
            help="Run on a Dask distributed cluster, e.g. tcp://HOST:8786 (needs nimlab[cluster]).",
        ),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            metavar="OUT",
            help="Write OUT.csv and OUT.json (default census-D); OUT.rows.jsonl keeps the rows "
            "done so far, so a stopped census goes on from them.",
            dir_okay=False,
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
) -> None:
    """Grundy sequences of every octal game up to D code digits, as a table (CSV and JSON).

    Each game is computed until its period is proven or its size or time runs out; the table
    has code, period, preperiod, proven, largest value, rare values and how far it went. Games
    with the same proven sequence are counted once (same_as names the first)."""
    from nimlab.core.census import default_jobs, run_census
    from nimlab.theory.census import CensusRow, census_codes

    prefix = out if out is not None else Path(f"census-{digits}")
    settings = {"format": FORMAT, "digits": digits, "max": max_n, "seconds": seconds}
    partial = prefix.with_name(prefix.name + ".rows.jsonl")
    kept = _read_partial(partial, settings)
    rules = census_codes(digits)
    todo = [rule for rule in rules if rule.code not in kept]
    if scheduler is not None:  # at once, before any file is written
        from nimlab.core.census import scheduler_unreachable

        why = scheduler_unreachable(scheduler)
        if why is not None:
            cannot(f"the census could not run on the cluster: {why}")
    existed = partial.exists()
    try:
        _start_partial(partial, settings, kept.values())  # written again: a torn line goes
    except OSError as exc:
        cannot(f"cannot write {partial}: {exc.strerror or exc}")
    if kept and not as_json:
        err_console.print(
            Text(f"Going on from {count_text(len(kept), 'game')} done ({partial}).", "cyan")
        )
    workers = jobs if jobs is not None else default_jobs()
    arrived: list[str] = []
    failed: Exception | None = None
    with (
        open(partial, "a", encoding="utf-8") as log,
        progress_bar("Census", "m of n", "line", "elapsed", disable=as_json) as progress,
    ):
        task = progress.add_task("census", total=len(rules), completed=len(kept), line="")

        def done(row: CensusRow) -> None:
            arrived.append(row.code)
            log.write(json.dumps(row.as_dict()) + "\n")
            log.flush()
            progress.update(task, advance=1, line=f"{row.code}: {_verdict(row)}")

        try:
            run_census(
                todo,
                max_values=max_n,
                seconds=seconds,
                jobs=workers,
                scheduler=scheduler,
                done=done,
            )
        except KeyboardInterrupt:
            err_console.print(
                Text(
                    f"Stopped; the rows done are in {partial}: run the same command again "
                    "to go on.",
                    "yellow",
                )
            )
            raise typer.Exit(130) from None
        except (OSError, TimeoutError, RuntimeError, ValueError) as exc:
            failed = exc
    if failed is not None:
        if not existed and not arrived:
            partial.unlink(missing_ok=True)  # no row done: nothing to go on from
        detail = failed.strerror if isinstance(failed, OSError) and failed.strerror else failed
        cannot(f"the census could not run on {scheduler or 'this machine'}: {detail}")
    rows = _read_partial(partial, settings)
    from nimlab.theory.census import mark_identical

    table = mark_identical(rows[rule.code] for rule in rules)
    summary = _summary(table, settings)
    _write(prefix, table, summary)
    partial.unlink(missing_ok=True)
    if as_json:
        typer.echo(json.dumps(summary))
        return
    _print(table, summary, prefix)


def _start_partial(path: Path, settings: dict[str, Any], rows: Iterable[Any]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(json.dumps(settings) + "\n")
        for row in rows:
            f.write(json.dumps(row.as_dict()) + "\n")
    os.replace(tmp, path)


def _read_partial(path: Path, settings: dict[str, Any]) -> dict[str, Any]:
    """The rows kept in ``path`` by code (empty when there is none); refuses (exit 2) a file of
    a census with other settings. A torn last line (a crash while writing) is ignored."""
    from nimlab.theory.census import CensusRow

    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        cannot(f"cannot read {path}: {exc.strerror or exc}")
    try:
        head = json.loads(lines[0]) if lines else None
    except ValueError:
        head = None
    if head != settings:
        fail(
            f"{path} holds a census with other settings ({lines[0][:120] if lines else 'empty'}):"
            " give the same --digits, --max and --seconds to go on, or another --out"
        )
    rows: dict[str, CensusRow] = {}
    for line in lines[1:]:
        try:
            row = CensusRow.from_dict(json.loads(line))
        except (ValueError, KeyError, TypeError):
            continue
        rows[row.code] = row
    return rows


def _verdict(row: Any) -> str:
    if row.proven:
        return f"period {row.period:,}, preperiod {row.preperiod:,}"
    return f"not proven in {count_text(row.values, 'value')}"


def _summary(rows: list[Any], settings: dict[str, Any]) -> dict[str, Any]:
    proven = [r for r in rows if r.proven]
    distinct = sum(1 for r in proven if r.same_as is None)
    return {
        **settings,
        "games": len(rows),
        "proven": len(proven),
        "distinct_proven": distinct,
        "not_proven": len(rows) - len(proven),
        "seconds": sum(r.seconds for r in rows),
    } | {"seconds_per_game": settings["seconds"]}


def _write(prefix: Path, rows: list[Any], summary: dict[str, Any]) -> None:
    from nimlab.theory.census import CENSUS_FIELDS

    csv_path = prefix.with_name(prefix.name + ".csv")
    json_path = prefix.with_name(prefix.name + ".json")
    dicts = [row.as_dict() for row in rows]
    tmp = csv_path.with_name(csv_path.name + ".tmp")
    with open(tmp, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(CENSUS_FIELDS)
        for data in dicts:
            writer.writerow(["" if data[k] is None else data[k] for k in CENSUS_FIELDS])
    os.replace(tmp, csv_path)
    tmp = json_path.with_name(json_path.name + ".tmp")
    body = {"summary": summary, "rows": [{k: d[k] for k in CENSUS_FIELDS} for d in dicts]}
    tmp.write_text(json.dumps(body, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, json_path)


def _print(rows: list[Any], summary: dict[str, Any], prefix: Path) -> None:
    console.print(
        Text.assemble(
            ("Census of octal games", "bold"),
            f" up to {count_text(summary['digits'], 'digit')}: "
            f"{count_text(summary['games'], 'game')}, "
            f"{summary['proven']:,} proven ({summary['distinct_proven']:,} distinct sequences), "
            f"{summary['not_proven']:,} not proven within {count_text(summary['max'], 'value')} or "
            f"{summary['seconds_per_game']:g} s each.",
        )
    )
    open_rows = [r for r in rows if not r.proven]
    if open_rows:
        table = Table("code", "values", "largest", "rare", "period seen", title="Not proven")
        for r in open_rows[:SHOWN_OPEN]:
            seen = "" if r.period is None else f"{r.period:,} from {r.preperiod:,}"
            rare = "" if r.rare is None else f"{r.rare:,}"
            table.add_row(r.code, f"{r.values:,}", str(r.largest), rare, seen)
        console.print(table)
        if len(open_rows) > SHOWN_OPEN:
            console.print(Text(f"... {len(open_rows) - SHOWN_OPEN:,} more in the table", "dim"))
    console.print(Text(f"Written: {prefix}.csv, {prefix}.json", "dim"))
