"""The ``--db`` option, opening the database for commands, and ``nimlab db`` (which database
is in use, its backup, and copying it to another database)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from nimlab.cli.app import FullHelpGroup, app
from nimlab.cli.common import check_output, console, err_console, fail
from nimlab.core.words import count_text
from nimlab.storage import (
    DB_ENV,
    DatabaseChoiceError,
    NoDatabaseError,
    StorageError,
    Store,
    resolve_db_path,
)
from nimlab.storage.connection import is_url, shown_db

__all__ = [
    "DbOption",
    "backup_command",
    "copy_command",
    "db_app",
    "db_command",
    "migrate_command",
    "open_store",
]

DbOption = Annotated[
    str | None,
    typer.Option(
        "--db",
        help=f"The database: an SQLite file, or a PostgreSQL URL "
        f"(postgresql://USER:PASSWORD@HOST/DATABASE) (default: ${DB_ENV}, else nimlab.db in "
        "your user data directory).",
        metavar="PATH",
        show_default=False,
    ),
]


def open_store(db: str | None, *, read_only: bool = False) -> Store:
    """Open the database; when that is impossible, say why on stderr and exit with status 1, or
    2 when the database is named wrongly (a URL nimlab does not open, a missing file to read).

    ``read_only`` (commands that only read): nothing is created. A ``--db`` file that does not
    exist is an error ("no database at PATH": a mistyped path); when the configured file
    (``$NIMLAB_DB`` or the default) does not exist yet, an empty in-memory database stands in
    for it (nothing is stored yet)."""
    try:
        if read_only and db is None:
            path = resolve_db_path(None)
            if isinstance(path, Path) and not path.exists():
                return Store.open(":memory:")
        return Store.open(db, read_only=read_only)
    except StorageError as e:
        err_console.print(
            Text.assemble(("error: ", "bold red"), str(e)), highlight=False, soft_wrap=True
        )
        raise typer.Exit(2 if isinstance(e, DatabaseChoiceError) else 1) from None


db_app = typer.Typer(cls=FullHelpGroup, invoke_without_command=True)
app.add_typer(db_app, name="db")


@db_app.callback()
def db_command(ctx: typer.Context, db: DbOption = None) -> None:
    """Which database is in use, and what it holds.

    The database is --db PATH if given, else $NIMLAB_DB, else nimlab.db in your user data
    directory; a PostgreSQL database is given as a URL, e.g. --db
    postgresql://USER:PASSWORD@HOST/DATABASE. It keeps the players, the finished games and the
    games in play. `nimlab db backup PATH` copies an SQLite file, also while a server uses it;
    `nimlab db copy --from SRC --to DST` copies everything into another, empty database (e.g.
    from SQLite to PostgreSQL); `nimlab db migrate` upgrades a database made by an older
    nimlab (after backing it up), which every other command refuses to use."""
    if ctx.invoked_subcommand is not None:
        ctx.obj = db  # `nimlab db --db PATH backup OUT` names the database of the subcommand
        return
    path = resolve_db_path(db)
    console.print(f"Database: {shown_db(path)}", highlight=False, soft_wrap=True)
    if db is not None:
        source = "the --db option"
    elif os.environ.get(DB_ENV):
        source = f"${DB_ENV}"
    else:
        source = "the default (set $NIMLAB_DB or pass --db PATH to use another file)"
    console.print(f"Chosen by {source}.", highlight=False, soft_wrap=True)
    if isinstance(path, Path) and not path.exists():
        console.print("It does not exist yet: it is made when a game or player is first saved.")
        return
    if is_url(path):
        try:
            Store.open(path, read_only=True).close()
        except NoDatabaseError:
            console.print("It has no nimlab tables yet: they are made when a game or player is "
                          "first saved.")  # fmt: skip
            return
    with open_store(db, read_only=True) as store:
        players = len(store.players())
        games = store.game_count()
        in_play = store.count_games_in_play()
    console.print(
        f"{count_text(players, 'player')}, {count_text(games, 'finished game')}, "
        f"{count_text(in_play, 'game')} in play.",
        highlight=False,
        soft_wrap=True,
    )


def _chosen(ctx: typer.Context, db: str | None) -> str | None:
    """The database a subcommand of ``nimlab db`` works on: its own ``--db``, else the group's
    (``nimlab db --db PATH backup OUT``); both, naming different databases, is bad usage."""
    group = ctx.obj if isinstance(ctx.obj, str) else None
    if db is not None and group is not None and db != group:
        raise DatabaseChoiceError(
            f"--db is given twice, naming two databases ({group} and {db}): give it once"
        )
    return db if db is not None else group


@db_app.command("backup")
def backup_command(
    ctx: typer.Context,
    target: Annotated[
        Path,
        typer.Argument(help="The file to write (replaced when it exists).", show_default=False),
    ],
    db: DbOption = None,
) -> None:
    """Copy the database to PATH, also while `nimlab serve` or a game uses it.

    SQLite's online backup: the copy is the database as it was at one moment, written beside
    PATH and renamed over it when whole and checked; the server goes on answering meanwhile.
    (A PostgreSQL database is backed up with pg_dump, or copied into an SQLite file with
    `nimlab db copy`.)"""
    db = _chosen(ctx, db)
    path = resolve_db_path(db)
    if is_url(path):
        shown = shown_db(path)
        raise DatabaseChoiceError(
            f"nimlab db backup copies SQLite files; back up the PostgreSQL database {shown} with "
            f"pg_dump (e.g. pg_dump -Fc -f nimlab.dump '{shown}'), or copy it into an SQLite "
            f"file with nimlab db copy --from '{shown}' --to {target}"
        )
    if isinstance(path, Path) and not path.exists():
        raise NoDatabaseError(str(path))  # nothing to back up: named wrongly (exit status 2)
    if isinstance(path, Path) and target.expanduser().resolve() == path.resolve():
        fail(f"the backup {str(target)!r} would overwrite the database itself: name another file")
    check_output(target, f"the backup {str(target)!r}")  # before any work
    with open_store(db, read_only=True) as store:
        written = store.backup(target)
    with Store.open(written, read_only=True) as copy:  # what the file holds, not the database
        players, games = len(copy.players()), copy.game_count()  # (played on meanwhile)
    console.print(
        f"Backed up {path} to {written} ({count_text(players, 'player')}, "
        f"{count_text(games, 'finished game')}).",
        highlight=False,
        soft_wrap=True,
    )


@db_app.command("copy")
def copy_command(
    ctx: typer.Context,
    source: Annotated[
        str,
        typer.Option(
            "--from",
            help="The database to copy: an SQLite file or a PostgreSQL URL.",
            metavar="PATH",
            show_default=False,
        ),
    ],
    target: Annotated[
        str,
        typer.Option(
            "--to",
            help="The empty database to fill: an SQLite file (made if missing) or a PostgreSQL "
            "URL.",
            metavar="PATH",
            show_default=False,
        ),
    ],
) -> None:
    """Copy everything into another, empty database, e.g. from SQLite to PostgreSQL.

    Players with their statistics, finished games with their ids, games in play with their
    moves: every row, in one transaction, then counted on both sides. The target must be
    empty (to add finished games to a database that has some, use `nimlab export` and `nimlab
    import`). Stop the server using the source first, or games played meanwhile stay behind."""
    from nimlab.storage.dbcopy import copy_database

    if isinstance(ctx.obj, str):
        raise DatabaseChoiceError(
            "nimlab db copy names its databases with --from and --to, not --db"
        )

    with open_store(source, read_only=True) as src, open_store(target) as dst:
        result = copy_database(src.db, dst.db)
        names = src.db.name, dst.db.name
    console.print(
        f"Copied {result.summary()} from {names[0]} to {names[1]}; the counts match.",
        highlight=False,
        soft_wrap=True,
    )


@db_app.command("migrate")
def migrate_command(
    ctx: typer.Context,
    db: DbOption = None,
    backup: Annotated[
        Path | None,
        typer.Option(
            "--backup",
            help="Where to copy the database before upgrading it (default: PATH.schema-N.backup "
            "beside it, N its version now).",
            metavar="FILE",
            show_default=False,
        ),
    ] = None,
    no_backup: Annotated[
        bool,
        typer.Option(
            "--no-backup",
            help="Upgrade without a copy (for PostgreSQL, back it up with pg_dump first).",
        ),
    ] = False,
) -> None:
    """Upgrade a database made by an older nimlab to this version's schema.

    Stop the servers using it first. An SQLite file is copied first (SQLite's online backup,
    checked), then upgraded in one transaction: a failure leaves it as it was. Every other
    command refuses a database of an older schema, and never changes it."""
    import logging

    from nimlab.storage import upgrade_database

    db = _chosen(ctx, db)
    path = resolve_db_path(db)
    shown = shown_db(path)
    if is_url(path) and not no_backup:
        raise DatabaseChoiceError(
            f"back up the PostgreSQL database first (pg_dump -Fc -f nimlab.dump '{shown}'), "
            "then upgrade it with nimlab db migrate --no-backup"
        )
    if no_backup and backup is not None:
        raise DatabaseChoiceError("--backup and --no-backup contradict each other: give one")
    copy_to: Path | bool = False if no_backup else (backup or True)
    before, after, written = upgrade_database(path, copy_to)
    if before == after:
        console.print(
            f"{shown} is up to date (schema version {after}): nothing to do.",
            highlight=False,
            soft_wrap=True,
        )
        return
    saved = f"; its copy as it was is {written}" if written else " (no copy made)"
    message = f"Upgraded {shown} from schema version {before} to {after}{saved}."
    logging.getLogger("nimlab.storage").info(message)
    console.print(message, highlight=False, soft_wrap=True)
