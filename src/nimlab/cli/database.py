"""The ``--db`` option and opening the database for commands."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from nimlab.cli.common import err_console
from nimlab.storage import DB_ENV, StorageError, Store, resolve_db_path

__all__ = ["DbOption", "open_store"]

DbOption = Annotated[
    str | None,
    typer.Option(
        "--db",
        help=f"The database file (default: ${DB_ENV}, else nimlab.db in your user data directory).",
        metavar="PATH",
        show_default=False,
    ),
]


def open_store(db: str | None, *, read_only: bool = False) -> Store:
    """Open the database; when that is impossible, say why on stderr and exit with status 1.

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
        raise typer.Exit(1) from None
