"""What the storage asks of a database connection, whichever database it is.

The registry, the archive and the games in play write their SQL once, in the dialect SQLite and
PostgreSQL share (``?`` or ``?N`` placeholders, ``INSERT ... ON CONFLICT``, ``RETURNING``), and
run it on a :class:`Connection`: an ``sqlite3.Connection`` itself, or
:class:`~nimlab.storage.postgres.PostgresConnection`, which turns the placeholders into
psycopg's. Errors of either driver are caught as :data:`DB_ERRORS` (:data:`INTEGRITY_ERRORS` for a
broken constraint); :class:`~nimlab.storage.connection.Database` turns them into
:class:`~nimlab.storage.errors.StorageError` before any caller sees them.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator, Sequence
from typing import Any, Protocol

__all__ = [
    "DB_ERRORS",
    "INTEGRITY_ERRORS",
    "PG_NOW",
    "BackendError",
    "Connection",
    "Cursor",
    "IntegrityViolation",
]


class Cursor(Protocol):
    """The result of one statement."""

    def fetchone(self) -> Any: ...
    def fetchall(self) -> list[Any]: ...
    def __iter__(self) -> Iterator[Any]: ...
    @property
    def rowcount(self) -> int: ...


class Connection(Protocol):
    """One connection in autocommit mode: the caller runs BEGIN, SAVEPOINT, COMMIT itself.
    ``total_changes`` grows with every row a statement changed (and, on PostgreSQL, with every
    statement that failed inside a transaction, which must then be undone);
    ``in_transaction`` tells whether a transaction is open."""

    def execute(self, sql: str, parameters: Sequence[Any] = ..., /) -> Cursor: ...
    def executemany(self, sql: str, parameters: Any, /) -> Cursor: ...
    def close(self) -> None: ...
    @property
    def total_changes(self) -> int: ...
    @property
    def in_transaction(self) -> bool: ...


class BackendError(Exception):
    """An error of the PostgreSQL driver, in a form the storage knows without importing it:
    ``lost`` when the connection to the server is gone (the next statement reconnects),
    ``read_only`` when the database refuses writes."""

    def __init__(self, message: str, *, lost: bool = False, read_only: bool = False) -> None:
        super().__init__(message)
        self.lost = lost
        self.read_only = read_only


class IntegrityViolation(BackendError):
    """A constraint of the schema refused a statement (a duplicate key, a failed check)."""


DB_ERRORS: tuple[type[Exception], ...] = (sqlite3.Error, BackendError)
"""The errors a statement of either database raises."""

INTEGRITY_ERRORS: tuple[type[Exception], ...] = (sqlite3.IntegrityError, IntegrityViolation)
"""The errors of a broken constraint, on either database."""


PG_NOW = "CAST(EXTRACT(EPOCH FROM statement_timestamp()) AS DOUBLE PRECISION)"
"""PostgreSQL's time now in seconds since 1970: the clock every machine serving one database
shares (the tables the servers keep together: rate buckets, held counts, engine claims)."""


def now_sql(dialect: str) -> str:
    """The SQL of the servers' shared time now, in seconds since 1970: the database's on
    PostgreSQL (:data:`PG_NOW`), a ``?`` parameter on SQLite, whose value :func:`now_params`
    gives (every process of an SQLite file is on one machine, with one clock)."""
    return "?" if dialect == "sqlite" else PG_NOW


def now_params(dialect: str) -> tuple[float, ...]:
    """The parameters :func:`now_sql` needs: this machine's time on SQLite, none on
    PostgreSQL."""
    return (time.time(),) if dialect == "sqlite" else ()
