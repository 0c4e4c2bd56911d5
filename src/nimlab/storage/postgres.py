"""PostgreSQL through psycopg 3, behind the storage's :class:`~nimlab.storage.backend.Connection`.

Imported only when a database is given as a URL (``postgresql://...`` or ``postgres://...``, any
libpq URL), so SQLite users never load psycopg.

:class:`PostgresConnection` runs the storage's SQL (written once, see
:mod:`nimlab.storage.backend`) on a psycopg connection in autocommit mode, turning ``?`` and ``?N``
placeholders into psycopg's ``%s`` (:func:`translate`, remembered per statement). A connection
that breaks (the server restarted, the network failed) makes that statement fail with a
:class:`~nimlab.storage.backend.BackendError` whose ``lost`` is set; the open transaction, if
any, is gone, and every statement but ``ROLLBACK`` fails until the caller rolls it back. The next
statement after that reconnects by itself; a ``BEGIN`` or a read outside a transaction that finds
the connection broken reconnects and runs once more at once (nothing of it can have happened).

:func:`connect` and :func:`connect_async` open plain psycopg connections to the same database
(autocommit, the same time limit and error messages), e.g. for ``LISTEN``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Sequence
from typing import Any

import psycopg
from psycopg import errors as pg_errors
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg.pq import TransactionStatus

from nimlab.storage.backend import BackendError, Cursor, IntegrityViolation
from nimlab.storage.connection import shown_db
from nimlab.storage.errors import DatabaseChoiceError

__all__ = [
    "CONNECT_TIMEOUT_S",
    "KEEPALIVES",
    "LOCK_TIMEOUT_MS",
    "PostgresConnection",
    "connect",
    "connect_async",
    "conninfo",
    "translate",
]

CONNECT_TIMEOUT_S = 10
"""How long opening a connection may take when the URL does not say (``connect_timeout``)."""

LOCK_TIMEOUT_MS = 30_000
"""How long a statement waits for a row another transaction holds before it fails (SQLite's
busy timeout, the same 30 s), unless the URL's ``options`` set ``lock_timeout``."""

KEEPALIVES = {"keepalives_idle": 30, "keepalives_interval": 10, "keepalives_count": 3}
"""TCP keepalives (unless the URL sets them): a server that vanishes from the network is found
within about a minute, not the system's two hours."""

_IDLE = TransactionStatus.IDLE
_UNKNOWN = TransactionStatus.UNKNOWN


def conninfo(url: str) -> str:
    """The libpq connection string for ``url``, with :data:`CONNECT_TIMEOUT_S`,
    :data:`KEEPALIVES` and :data:`LOCK_TIMEOUT_MS` unless it sets its own. Raises
    :class:`DatabaseChoiceError` for a URL libpq cannot read."""
    try:
        params = conninfo_to_dict(url)
    except psycopg.Error as e:
        raise DatabaseChoiceError(
            f"{shown_db(url)} is not a PostgreSQL URL nimlab can use: {_first_line(e)} "
            "(the form is postgresql://USER:PASSWORD@HOST:PORT/DATABASE)"
        ) from None
    params.setdefault("connect_timeout", CONNECT_TIMEOUT_S)
    params.setdefault("application_name", "nimlab")
    for name, value in KEEPALIVES.items():
        params.setdefault(name, value)
    options = str(params.get("options") or "")
    if "lock_timeout" not in options:
        params["options"] = f"{options} -c lock_timeout={LOCK_TIMEOUT_MS}".strip()
    return make_conninfo("", **params)


def connect(url: str, *, read_only: bool = False) -> psycopg.Connection[tuple[Any, ...]]:
    """A new psycopg connection to ``url`` in autocommit mode (``read_only``: every transaction
    read-only). Raises :class:`DatabaseChoiceError` saying in one line why it cannot be opened
    (a bad URL, the server unreachable, a wrong password, no such database)."""
    info = conninfo(url)
    try:
        conn = psycopg.connect(info, autocommit=True)
    except psycopg.Error as e:
        raise DatabaseChoiceError(_connect_error(url, e)) from None
    if read_only:
        try:
            conn.execute("SET default_transaction_read_only = on")
        except psycopg.Error as e:
            conn.close()
            raise DatabaseChoiceError(_connect_error(url, e)) from None
    return conn


async def connect_async(url: str) -> psycopg.AsyncConnection[tuple[Any, ...]]:
    """:func:`connect` for asyncio: a new autocommit ``psycopg.AsyncConnection`` (e.g. to
    ``LISTEN``). Raises :class:`DatabaseChoiceError`."""
    info = conninfo(url)
    try:
        return await psycopg.AsyncConnection.connect(info, autocommit=True)
    except psycopg.Error as e:
        raise DatabaseChoiceError(_connect_error(url, e)) from None


def _first_line(error: BaseException) -> str:
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return lines[0] if lines else type(error).__name__


def _connect_error(url: str, error: psycopg.Error) -> str:
    """One line saying why ``url`` cannot be opened, and what to check."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    text = "; ".join(line for line in lines if not line.startswith("Is the server running"))
    text = re.sub(r"^connection failed: ", "", text)
    text = re.sub(r"\b(FATAL|ERROR):\s+", "", text)
    low = text.lower()
    where = shown_db(url)
    if "password authentication failed" in low or "no password supplied" in low:
        hint = "check the user and password in the URL, or ~/.pgpass"
    elif "does not exist" in low and "database" in low:
        hint = "create it first with createdb or CREATE DATABASE, see docs/deploy.md"
    elif "role" in low and "does not exist" in low:
        hint = "create the role first with createuser or CREATE ROLE, see docs/deploy.md"
    elif "invalid" in low or "missing" in low or "unexpected" in low:
        hint = "the form is postgresql://USER:PASSWORD@HOST:PORT/DATABASE"
    else:
        hint = "is the server running, and does the URL name its host and port?"
    text = re.sub(r'(connection to server (at|on socket) "[^"]*"[^:]*) failed:', r"\1:", text)
    return f"cannot open the PostgreSQL database {where}: {text}; {hint}"


@functools.lru_cache(maxsize=1024)
def translate(sql: str) -> tuple[str, tuple[int, ...] | None, bool]:
    """The storage's statement for psycopg: ``(text, order, changes)``. ``?`` and ``?N`` become
    ``%s`` (a literal ``%`` is doubled); ``order`` lists which parameter each ``%s`` takes when
    that is not simply one after the other (``?N`` numbers may repeat and come in any order,
    like SQLite's); ``changes`` tells an INSERT, UPDATE or DELETE. ``BEGIN IMMEDIATE`` (SQLite's
    write lock) is plain ``BEGIN``: PostgreSQL locks the rows a statement writes."""
    if sql == "BEGIN IMMEDIATE":
        return "BEGIN", None, False
    order: list[int] = []
    largest = 0

    def mark(match: re.Match[str]) -> str:
        nonlocal largest
        number = int(match.group(1)) if match.group(1) else largest + 1
        largest = max(largest, number)
        order.append(number - 1)
        return "%s"

    text = re.sub(r"\?(\d*)", mark, sql.replace("%", "%%"))
    plain = order == list(range(len(order)))
    verb = sql.lstrip().split(None, 1)[0].upper() if sql.strip() else ""
    return text, None if plain else tuple(order), verb in ("INSERT", "UPDATE", "DELETE")


class Rows:
    """A statement's result, read whole when it ran (so that the connection's one cursor can run
    the next statement while this result is still being read)."""

    __slots__ = ("_next", "_rows", "description", "rowcount")

    def __init__(self, rows: list[Any], rowcount: int, description: Any = None) -> None:
        self._rows = rows
        self._next = 0
        self.rowcount = rowcount
        self.description = description

    def fetchone(self) -> Any:
        if self._next >= len(self._rows):
            return None
        self._next += 1
        return self._rows[self._next - 1]

    def fetchall(self) -> list[Any]:
        rest = self._rows[self._next :]
        self._next = len(self._rows)
        return rest

    def __iter__(self) -> Iterator[Any]:
        return iter(self.fetchall())


class PostgresConnection:
    """The storage's connection to a PostgreSQL database (see the module docstring). Safe to
    use from one thread at a time (psycopg serialises its own use)."""

    dialect = "postgresql"

    def __init__(self, url: str, *, read_only: bool = False) -> None:
        self.url = url
        self.read_only = read_only
        self.total_changes = 0
        self._lost = False
        """The connection broke inside a transaction: only ROLLBACK is accepted until then."""
        self._raw = connect(url, read_only=read_only)
        self._cursor = self._raw.cursor()
        """The one cursor every statement runs on (a new cursor per statement costs about 15
        µs of the interpreter's time, a third of a short statement's)."""

    @property
    def raw(self) -> psycopg.Connection[tuple[Any, ...]]:
        """The psycopg connection in use now (a new one after a reconnection)."""
        return self._raw

    @property
    def in_transaction(self) -> bool:
        if self._lost:
            return True
        raw = self._raw
        return not raw.closed and raw.info.transaction_status not in (_IDLE, _UNKNOWN)

    def close(self) -> None:
        self._raw.close()

    def execute(self, sql: str, parameters: Sequence[Any] = (), /) -> Cursor:
        text, order, changes = translate(sql)
        params = parameters if order is None else [parameters[i] for i in order]
        cur = self._usable(text)
        if cur is None:
            return Rows([], 0)
        fresh = self._raw.info.transaction_status == _IDLE
        try:
            cur.execute(text, params)
        except psycopg.Error as e:
            error = self._error(e, in_transaction=not fresh)
            if not (error.lost and fresh and not changes):
                raise error from None
            cur = self._reconnect()  # a BEGIN or a read: nothing of it happened, so run it again
            try:
                cur.execute(text, params)
            except psycopg.Error as again:
                raise self._error(again, in_transaction=False) from None
        count = cur.rowcount
        if changes and count > 0:
            self.total_changes += count
        description = cur.description
        return Rows(cur.fetchall() if description is not None else [], count, description)

    def executemany(self, sql: str, parameters: Any, /) -> Cursor:
        text, order, changes = translate(sql)
        rows = [list(p) if order is None else [p[i] for i in order] for p in parameters]
        cur = self._usable(text)
        if cur is None:
            return Rows([], 0)
        in_transaction = self._raw.info.transaction_status != _IDLE
        try:
            cur.executemany(text, rows)
        except psycopg.Error as e:
            raise self._error(e, in_transaction=in_transaction) from None
        if changes:
            self.total_changes += max(cur.rowcount, len(rows))
        return Rows([], cur.rowcount)

    def _usable(self, text: str) -> psycopg.Cursor[tuple[Any, ...]] | None:
        """The cursor to run ``text`` on: ``None`` for the ROLLBACK that ends a lost
        transaction; one of a new connection when the last one broke. Raises BackendError for
        any other statement of a lost transaction, or when the server cannot be reached."""
        if self._lost:
            if text == "ROLLBACK":
                self._lost = False
                return None
            raise BackendError(
                "the connection to the database was lost during a transaction, which was "
                "rolled back",
                lost=True,
            )
        raw = self._raw
        if raw.closed or raw.broken:
            if text == "ROLLBACK" or text.startswith(("RELEASE", "ROLLBACK TO")):
                return None
            return self._reconnect()
        return self._cursor

    def _reconnect(self) -> psycopg.Cursor[tuple[Any, ...]]:
        self._raw.close()
        try:
            self._raw = connect(self.url, read_only=self.read_only)
        except DatabaseChoiceError as e:
            raise BackendError(str(e), lost=True) from None
        self._cursor = self._raw.cursor()
        return self._cursor

    def _error(self, error: psycopg.Error, *, in_transaction: bool) -> BackendError:
        """The storage's form of a psycopg error of a statement run ``in_transaction`` or not.
        A failed statement counts as a change (the transaction it was in can only be rolled
        back now)."""
        self.total_changes += 1
        message = _first_line(error)
        raw = self._raw
        if raw.closed or raw.broken:
            if in_transaction:  # that transaction is gone with its connection
                self._lost = True
            return BackendError(
                f"the connection to the database server was lost ({message})", lost=True
            )
        if isinstance(error, pg_errors.IntegrityError):
            return IntegrityViolation(message)
        if isinstance(error, pg_errors.ReadOnlySqlTransaction):
            return BackendError(message, read_only=True)
        return BackendError(message)
