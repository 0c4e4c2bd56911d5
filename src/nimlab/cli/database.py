"""The ``--db`` option and opening the database for commands."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.text import Text

from nimlab.cli.common import err_console
from nimlab.storage import DB_ENV, StorageError, Store

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


def open_store(db: str | None) -> Store:
    """Open the database; when that is impossible, say why on stderr and exit with status 1."""
    try:
        return Store.open(db)
    except StorageError as e:
        err_console.print(
            Text.assemble(("error: ", "bold red"), str(e)), highlight=False, soft_wrap=True
        )
        raise typer.Exit(1) from None
