"""One database connection and its transactions, shared by the registry, the archive and the
games in play: an SQLite file (the default), or a PostgreSQL database given as a URL
(``postgresql://USER:PASSWORD@HOST:PORT/DATABASE`` or ``postgres://...``, any libpq URL; see
:mod:`nimlab.storage.postgres`). Both run the same SQL, the same transactions and savepoints and
the same migrations; what only one of them has (SQLite's online backup and page check) says what
to use on the other.

On SQLite, writes run in ``BEGIN IMMEDIATE`` transactions with a busy timeout and the journal is
in WAL mode, so several processes (shells, games, the web app) can share one file. Every error
of either driver is turned into a :class:`StorageError` (:class:`ReadOnlyError` when the database
cannot be written), so no caller ever sees a driver's exception.

A database can be opened read-only (``read_only=True``): nothing is created (no folder, no file:
a missing file is a :class:`NoDatabaseError`), the file is opened with SQLite's ``mode=ro``, and
on a read-only file system (where SQLite cannot create the WAL index) it is opened ``immutable``.
A PostgreSQL database opened read-only runs every transaction read-only, and its tables are not
created (a database without them is a :class:`NoDatabaseError`).

A PostgreSQL database that cannot be reached, refuses the password or does not exist when it is
opened is a :class:`DatabaseChoiceError` (bad usage: one line saying what is wrong); a connection
lost later makes that operation a :class:`StorageError`, and the next one reconnects.
"""

from __future__ import annotations

import os
import re
import sqlite3
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from types import TracebackType
from typing import Any

import platformdirs

from nimlab.core.clock import now_stamp
from nimlab.storage.backend import DB_ERRORS, BackendError, Connection
from nimlab.storage.errors import (
    DatabaseChoiceError,
    NoDatabaseError,
    OldSchemaError,
    ReadOnlyError,
    StorageError,
    UnsupportedDatabaseError,
)
from nimlab.storage.schema import SCHEMA_VERSION, current_version, migrate

__all__ = [
    "BUSY_TIMEOUT_S",
    "DB_ENV",
    "DB_URL_SCHEMES",
    "Database",
    "default_db_path",
    "is_url",
    "now_stamp",
    "resolve_db_path",
    "shown_db",
    "storage_error",
    "upgrade_database",
]

DB_ENV = "NIMLAB_DB"
"""The environment variable that names the database file."""

BUSY_TIMEOUT_S = 30.0


def _to_wal(conn: sqlite3.Connection) -> None:
    """Put the database in WAL mode. The switch takes the whole file and SQLite does not wait
    for it (no busy handler): while another connection writes to a database not in WAL mode yet
    (a new file another server is making) it says "database is locked" at once, so it is tried
    again every 20 ms for up to :data:`BUSY_TIMEOUT_S` seconds."""
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as e:
            if "locked" not in str(e) or time.monotonic() >= deadline:
                raise
            time.sleep(0.02)


QUICK_CHECK_BYTES = 256 * 1024 * 1024
"""Files up to this size get SQLite's ``quick_check`` when checked (it reads every page: about a
second for 256 MiB)."""

Row = tuple[Any, ...]


def default_db_path() -> Path:
    """Where the database lives by default: ``nimlab.db`` in the user's data directory."""
    return Path(platformdirs.user_data_dir("nimlab", appauthor=False)) / "nimlab.db"


DB_URL_SCHEMES: frozenset[str] = frozenset({"postgresql", "postgres"})
"""The URL schemes a database may be written with (``scheme://...``), passed through as URLs by
:func:`resolve_db_path` and opened as PostgreSQL databases by :meth:`Database.open`."""

_URL = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://")


def is_url(where: Path | str) -> bool:
    """Whether a resolved database (see :func:`resolve_db_path`) is a URL, not a file."""
    return isinstance(where, str) and _URL.match(where) is not None


def shown_db(where: Path | str) -> str:
    """A database as it may be shown to people: a file's path, or a URL without its
    password."""
    if is_url(str(where)):
        return re.sub(
            r"(?i)([?&]password=)[^&#]*",
            r"\1***",
            re.sub(r"(://[^/@?#]*?:)[^/@?#]*@", r"\1***@", str(where)),
        )
    return str(where)


def resolve_db_path(path: str | os.PathLike[str] | None = None) -> Path | str:
    """The database to use: ``path`` if given, else ``$NIMLAB_DB``, else :func:`default_db_path`.
    ``":memory:"`` and URLs of :data:`DB_URL_SCHEMES` are passed through; any other URL
    (``scheme://...``) raises :class:`UnsupportedDatabaseError` rather than becoming a folder."""
    chosen = os.fspath(path) if path is not None else os.environ.get(DB_ENV) or None
    if chosen == ":memory:":
        return chosen
    url = _URL.match(chosen) if chosen else None
    if url is not None:
        scheme = url.group(1).lower()
        if scheme not in DB_URL_SCHEMES:
            raise UnsupportedDatabaseError(scheme)
        return str(chosen)
    return Path(chosen).expanduser() if chosen else default_db_path()


def storage_error(error: Exception, what: str) -> StorageError:
    """The typed error for an error of either driver (:data:`~nimlab.storage.backend.DB_ERRORS`):
    :class:`DatabaseChoiceError` when the file is not a database at all, :class:`ReadOnlyError`
    when the database cannot be written, else :class:`StorageError`; the message starts with
    ``what``."""
    if isinstance(error, BackendError):
        if error.read_only:
            return ReadOnlyError(f"{what}: the database is read-only ({error})")
        return StorageError(f"{what}: {error}")
    code = getattr(error, "sqlite_errorcode", None)
    if (isinstance(code, int) and code & 0xFF == sqlite3.SQLITE_NOTADB) or (
        "file is not a database" in str(error)
    ):  # the file named is something else: a wrong request, not a failure of the database
        return DatabaseChoiceError(
            f"{what}: the file is not a database (give nimlab's SQLite database file, or the "
            "name of a new one)"
        )
    if (isinstance(code, int) and code & 0xFF == sqlite3.SQLITE_READONLY) or "readonly" in str(
        error
    ):
        return ReadOnlyError(f"{what}: the database is read-only ({error})")
    return StorageError(f"{what}: {error}")


class Database:
    """An open database (SQLite or PostgreSQL) at the current schema version. Not thread-safe:
    one per thread (or serialised by the caller, as :class:`~nimlab.storage.writer.StoreWriter`
    does)."""

    def __init__(
        self,
        conn: Connection,
        path: Path | str,
        *,
        read_only: bool,
        dialect: str = "sqlite",
    ) -> None:
        self.conn = conn
        self.path = path
        """The database file, ``":memory:"``, or the PostgreSQL URL (with its password: show
        :attr:`name` instead)."""
        self.read_only = read_only
        self.dialect = dialect
        """``"sqlite"`` or ``"postgresql"``."""
        self._bare = False
        """Inside :meth:`unguarded`: :meth:`write` blocks take no savepoint."""
        self._grouped = -1
        """Savepoints open inside the open :meth:`group` transaction, the innermost one named
        ``w<depth>`` (-1: no group open). Names repeat from one savepoint to the next, so the
        few statements stay in sqlite3's statement cache."""

    # -- opening ------------------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str] | None = None,
        *,
        read_only: bool = False,
        upgrade: bool = False,
    ) -> Database:
        """Open ``path`` (else ``$NIMLAB_DB``, else the default file). Read-write: create the
        folder and file as needed (a new database gets the whole schema). Read-only: see the
        module docstring. A database made by an older nimlab is an :class:`OldSchemaError`,
        left as it was, unless ``upgrade`` (read-write only: see :func:`upgrade_database`).
        Raises :class:`StorageError` (:class:`NoDatabaseError`, :class:`ReadOnlyError`,
        :class:`OldSchemaError`)."""
        where = resolve_db_path(path)
        default = path is None and not os.environ.get(DB_ENV)
        if isinstance(where, str) and is_url(where):
            return cls._open_postgres(where, read_only=read_only, upgrade=upgrade, default=default)
        if read_only and where != ":memory:":
            assert isinstance(where, Path)
            return cls._open_read_only(where, default=default)
        try:
            if isinstance(where, Path):
                if where.is_dir():
                    raise DatabaseChoiceError(
                        f"database {str(where)!r} is a directory, not a file: give the "
                        "database file, e.g. --db games.db"
                    )
                where.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(
                where, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
            )
        except FileExistsError as e:  # mkdir: a file where a folder of the path should be
            raise StorageError(
                f"cannot create database {str(where)!r}: {str(e.filename)!r} is a file, not a "
                "folder"
            ) from None
        except OSError as e:
            raise StorageError(f"cannot open database {str(where)!r}: {e.strerror or e}") from None
        except sqlite3.Error as e:
            raise StorageError(f"cannot open database {str(where)!r}: {e}") from None
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
            version = current_version(conn)  # before anything is written
            if 0 < version < SCHEMA_VERSION and not upgrade:
                raise OldSchemaError(str(where), version, SCHEMA_VERSION, default=default)
            if where != ":memory:":
                _to_wal(conn)
            conn.execute("PRAGMA synchronous = FULL")
            conn.execute("PRAGMA foreign_keys = ON")
            migrate(conn)
        except sqlite3.Error as e:
            conn.close()
            if isinstance(where, Path) and _unwritable(where):
                raise ReadOnlyError(
                    f"the database {str(where)!r} is read-only (a read-only file, folder or file "
                    f"system): it can be read, not changed ({e})"
                ) from None
            raise storage_error(e, f"cannot use database {str(where)!r}") from None
        except BaseException:
            conn.close()
            raise
        return cls(conn, where, read_only=False)

    @classmethod
    def _open_read_only(cls, where: Path, *, default: bool = False) -> Database:
        if where.is_dir():
            raise DatabaseChoiceError(
                f"database {str(where)!r} is a directory, not a file: give the database file, "
                "e.g. --db games.db"
            )
        if not where.is_file():
            raise NoDatabaseError(str(where))
        conn = _connect_read_only(where)
        version = _file_version(conn, where)
        if version == SCHEMA_VERSION:
            return cls(conn, where, read_only=True)
        conn.close()
        if version > SCHEMA_VERSION:
            raise StorageError(
                f"the database has schema version {version}, newer than this nimlab understands "
                f"({SCHEMA_VERSION}): upgrade nimlab"
            )
        if version == 0 and where.stat().st_size == 0:
            raise NoDatabaseError(str(where))
        if version == 0:
            raise StorageError(f"{str(where)!r} is not a nimlab database (it has no nimlab tables)")
        raise OldSchemaError(str(where), version, SCHEMA_VERSION, default=default)

    @classmethod
    def _open_postgres(
        cls, url: str, *, read_only: bool, upgrade: bool = False, default: bool = False
    ) -> Database:
        from nimlab.storage.postgres import PostgresConnection

        conn = PostgresConnection(url, read_only=read_only)
        shown = shown_db(url)
        try:
            version = current_version(conn, dialect="postgresql")
            if 0 < version < SCHEMA_VERSION and not upgrade:
                raise OldSchemaError(shown, version, SCHEMA_VERSION, default=default)
            if not read_only:
                migrate(conn, dialect="postgresql")
                return cls(conn, url, read_only=False, dialect="postgresql")
        except DB_ERRORS as e:
            conn.close()
            raise storage_error(e, f"cannot use the database {shown}") from None
        except BaseException:
            conn.close()
            raise
        conn.close()
        if version == 0:
            raise NoDatabaseError(
                shown,
                f"the PostgreSQL database {shown} has no nimlab tables yet (commands that change "
                "the database make them, e.g. nimlab players add; nimlab db copy fills it)",
            )
        if version > SCHEMA_VERSION:
            raise StorageError(
                f"the database has schema version {version}, newer than this nimlab understands "
                f"({SCHEMA_VERSION}): upgrade nimlab"
            )
        return cls(
            PostgresConnection(url, read_only=True), url, read_only=True, dialect="postgresql"
        )

    @property
    def name(self) -> str:
        """The database as it may be shown (a URL without its password)."""
        return shown_db(self.path)

    @property
    def url(self) -> str | None:
        """The PostgreSQL URL (``None`` for SQLite): to open more connections to the same
        database, e.g. with :func:`nimlab.storage.postgres.connect` for ``LISTEN``."""
        return str(self.path) if self.dialect == "postgresql" else None

    def close(self) -> None:
        self.conn.close()

    # -- statements ---------------------------------------------------------------------------

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        """Every row of a query (outside a write transaction); errors become StorageError."""
        try:
            return [tuple(r) for r in self.conn.execute(sql, params).fetchall()]
        except DB_ERRORS as e:
            raise storage_error(e, "cannot read the database") from None

    def one(self, sql: str, params: Sequence[Any] = ()) -> Row | None:
        """The first row of a query, or ``None``."""
        rows = self.rows(sql, params)
        return rows[0] if rows else None

    def write(self) -> _Write:
        """One write transaction: all or nothing, serialised with other processes. Exceptions
        from the block roll it back and propagate; ``sqlite3`` errors become StorageError.
        Inside :meth:`group` it is a savepoint of the group's transaction: rolled back alone on
        failure, durable only when the group commits. Use as ``with db.write() as conn:``.
        O(1) besides the block (two statements, both kept prepared)."""
        return _Write(self)

    @contextmanager
    def unguarded(self, *, whole_group: bool = False) -> Iterator[None]:
        """Inside a :meth:`write` block of a :meth:`group` (with ``whole_group``: directly in
        the group): the :meth:`write` blocks of this block take no savepoint of their own (no
        statements, no copies of the pages they change), so one that fails is NOT undone alone.
        The caller undoes its enclosing savepoint (or the group: :meth:`restart_group`) when one
        fails after changing rows (``conn.total_changes`` tells; a failed statement changes
        nothing). Only for code that never goes on after an exception of a write block. Raises
        StorageError outside a write block of a group. Not re-entrant."""
        if self._grouped < (0 if whole_group else 1):
            raise StorageError("unguarded writes run inside a write block of a group")
        self._bare = True
        try:
            yield
        finally:
            self._bare = False

    @contextmanager
    def group(self) -> Iterator[None]:
        """One transaction around several :meth:`write` blocks (group commit: one disk flush for
        all of them). Each block is a savepoint: a failing one is undone alone and its exception
        propagates to its caller as usual; the others are kept. Nothing is durable before the
        group's block ends without an exception; if the final commit fails, StorageError is
        raised and every block is undone. Not re-entrant. (:meth:`begin_group` and
        :meth:`end_group` are its two halves, for a caller that runs them on another thread than
        the blocks.)"""
        self.begin_group()
        try:
            yield
        except BaseException as e:
            self.end_group(commit=False)
            if isinstance(e, DB_ERRORS):
                raise storage_error(e, "the database could not be written") from None
            raise
        self.end_group(commit=True)

    def begin_group(self) -> None:
        """Begin a :meth:`group` transaction (may wait for another process's write, up to the
        busy timeout). Raises ReadOnlyError or StorageError (nothing begun)."""
        if self.read_only:
            raise ReadOnlyError(f"the database {self.name} was opened read-only")
        try:
            self.conn.execute("BEGIN IMMEDIATE")
        except DB_ERRORS as e:
            raise storage_error(e, "the database is busy or unwritable") from None
        self._grouped = 0

    def end_group(self, *, commit: bool) -> None:
        """End the group begun by :meth:`begin_group`: COMMIT (one disk flush) or roll everything
        back. A COMMIT that fails rolls everything back and raises StorageError."""
        conn = self.conn
        try:
            if commit:
                conn.execute("COMMIT")
        except DB_ERRORS as e:
            raise storage_error(e, "the database could not be written") from None
        finally:
            if conn.in_transaction:
                with suppress(*DB_ERRORS):
                    conn.execute("ROLLBACK")
            self._grouped = -1

    def restart_group(self) -> None:
        """Undo everything the open :meth:`group` did and begin it again (PostgreSQL's BEGIN
        takes no lock, so this never waits; not for SQLite, whose BEGIN IMMEDIATE may). Raises
        StorageError when the database cannot begin (the group is then not open)."""
        conn = self.conn
        try:
            conn.execute("ROLLBACK")
            conn.execute("BEGIN")
        except DB_ERRORS as e:
            self._grouped = -1
            raise storage_error(e, "the database could not be written") from None
        self._grouped = 0

    def require_writable(self) -> None:
        """Raise :class:`ReadOnlyError` (or :class:`StorageError`) unless a write would succeed
        now: a write that changes nothing, rolled back. O(1)."""
        if self.read_only:
            raise ReadOnlyError(f"the database {self.name} was opened read-only")
        conn = self.conn
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.execute("UPDATE schema_version SET version = version")
            finally:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
        except DB_ERRORS as e:
            raise storage_error(e, f"cannot write the database {self.name}") from None

    def integrity_check(self) -> str:
        """SQLite's own consistency check: ``"ok"`` for a sound file. Raises
        :class:`StorageError` on PostgreSQL (which checks its pages itself; ``pg_amcheck``
        checks them on demand)."""
        if self.dialect != "sqlite":
            raise StorageError(_ONLY_SQLITE.format(what="checking the file", instead="pg_amcheck"))
        row = self.one("PRAGMA integrity_check")
        return "" if row is None else str(row[0])

    def backup(self, target: str | os.PathLike[str]) -> Path:
        """Copy the database to the file ``target`` while others go on using it (SQLite's
        online backup, in one read transaction: in WAL mode writers are not held up, and the
        copy is the database as it was at one moment). The copy is written beside ``target``
        and renamed over it when whole, then checked (``quick_check``). Returns its path; raises
        :class:`StorageError` when it cannot be made (on PostgreSQL, saying what to use).
        O(database size)."""
        if not isinstance(self.conn, sqlite3.Connection):
            raise StorageError(
                _ONLY_SQLITE.format(
                    what="a backup",
                    instead=f"pg_dump (e.g. pg_dump -Fc -f nimlab.dump '{self.name}'), or nimlab "
                    f"db copy --from '{self.name}' --to FILE for a copy in an SQLite file",
                )
            )
        where = Path(target).expanduser().resolve()
        if str(self.path) != ":memory:" and where == Path(self.path).resolve():
            raise StorageError(f"the backup {str(where)!r} would overwrite the database itself")
        if where.is_dir():
            raise StorageError(f"{str(where)!r} is a directory: name the backup file")
        partial = where.with_name(f".{where.name}.partial")
        try:
            partial.unlink(missing_ok=True)
            dest = sqlite3.connect(partial)
            try:
                self.conn.backup(dest)
                dest.execute("PRAGMA journal_mode = DELETE")  # one self-contained file
                check = dest.execute("PRAGMA quick_check").fetchone()
            finally:
                dest.close()
            if check is None or check[0] != "ok":
                raise StorageError(f"the backup failed its check: {check}")
            os.replace(partial, where)
        except sqlite3.Error as e:
            partial.unlink(missing_ok=True)
            raise storage_error(e, f"cannot back up the database to {str(where)!r}") from None
        except OSError as e:
            partial.unlink(missing_ok=True)
            raise StorageError(
                f"cannot back up the database to {str(where)!r}: {e.strerror or e}"
            ) from None
        except StorageError:
            partial.unlink(missing_ok=True)
            raise
        return where

    def problems(self, *, quick_check_bytes: int = QUICK_CHECK_BYTES) -> list[str]:
        """What is wrong with the database: missing tables or indexes, and SQLite's
        ``quick_check`` (every page read: done for files up to ``quick_check_bytes``; PostgreSQL
        checks its own pages). Empty when nothing is found."""
        from nimlab.storage.schema import schema_problems

        if self.dialect != "sqlite":
            try:
                return schema_problems(self.conn, dialect=self.dialect)
            except DB_ERRORS as e:
                return [f"it cannot be read: {e}"]
        try:
            found = schema_problems(self.conn)
            size = Path(self.path).stat().st_size if str(self.path) != ":memory:" else 0
            if size <= quick_check_bytes:
                rows = self.rows("PRAGMA quick_check(20)")
                found += [str(r[0]) for r in rows if str(r[0]) != "ok"]
        except (sqlite3.Error, OSError) as e:
            found = [f"it cannot be read: {e}"]
        return found


_ONLY_SQLITE = "{what} is made here only for an SQLite database; on PostgreSQL use {instead}"


class _Write:
    """The context manager of :meth:`Database.write` (a class, not a generator: it runs once per
    job of the database writer, so its own cost counts)."""

    __slots__ = ("_db", "_end", "_undo")

    def __init__(self, db: Database) -> None:
        self._db = db
        self._undo: tuple[str, ...] = ()
        self._end = ""

    def __enter__(self) -> Connection:
        db = self._db
        if db.read_only:
            raise ReadOnlyError(f"the database {db.name} was opened read-only")
        if db._bare:  # unguarded (_end stays ""): no savepoint, the caller undoes
            self._end = ""
            return db.conn
        if db._grouped >= 0:
            depth = db._grouped + 1
            begin = f"SAVEPOINT w{depth}"
            self._undo = (f"ROLLBACK TO w{depth}", f"RELEASE w{depth}")
            self._end = f"RELEASE w{depth}"
        else:
            depth = -1
            begin, self._undo, self._end = "BEGIN IMMEDIATE", ("ROLLBACK",), "COMMIT"
        conn = db.conn
        try:
            conn.execute(begin)
        except DB_ERRORS as e:
            raise storage_error(e, "the database is busy or unwritable") from None
        if depth > 0:
            db._grouped = depth
        return conn

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if not self._end:  # unguarded: the caller undoes
            if isinstance(exc, DB_ERRORS):
                raise storage_error(exc, "the database could not be written") from None
            return
        db = self._db
        if db._grouped > 0:
            db._grouped -= 1
        conn = db.conn
        if exc is None:
            try:
                conn.execute(self._end)
                return
            except DB_ERRORS as e:
                exc = e
        if conn.in_transaction:
            with suppress(*DB_ERRORS):
                for statement in self._undo:
                    conn.execute(statement)
        if isinstance(exc, DB_ERRORS):
            raise storage_error(exc, "the database could not be written") from None
        # else the block's exception propagates


def upgrade_database(
    path: str | os.PathLike[str] | None, backup: str | os.PathLike[str] | bool = True
) -> tuple[int, int, Path | None]:
    """Bring the database at ``path`` (else ``$NIMLAB_DB``, else the default file) up to this
    nimlab's schema, after copying it to the SQLite file ``backup`` (``True``: ``FILE.schema-N
    .backup`` beside it, N its version, numbered on when taken; ``False``: no copy, e.g. a
    PostgreSQL database backed up with pg_dump first). The migrations run in one transaction: a
    failure leaves the database as it was. Returns (version before, version after, the backup
    or None); a database already up to date is left untouched (no backup either). Raises
    :class:`StorageError` (:class:`NoDatabaseError` when there is nothing to upgrade).
    O(database size)."""
    where = resolve_db_path(path)
    if isinstance(where, str) and is_url(where):
        from nimlab.storage.postgres import PostgresConnection

        conn: Connection = PostgresConnection(where, read_only=True)
        try:
            version = current_version(conn, dialect="postgresql")
        except DB_ERRORS as e:
            raise storage_error(e, f"cannot use the database {shown_db(where)}") from None
        finally:
            conn.close()
        if version == 0:
            raise NoDatabaseError(shown_db(where), f"{shown_db(where)} has no nimlab tables")
    else:
        assert isinstance(where, Path)
        if not where.is_file():
            raise NoDatabaseError(str(where))
        raw = _connect_read_only(where)
        try:
            version = _file_version(raw, where)
        finally:
            raw.close()
        if version == 0:
            raise StorageError(f"{str(where)!r} is not a nimlab database (it has no nimlab tables)")
    if version > SCHEMA_VERSION:
        raise StorageError(
            f"the database has schema version {version}, newer than this nimlab understands "
            f"({SCHEMA_VERSION}): upgrade nimlab"
        )
    if version == SCHEMA_VERSION:
        return version, version, None
    copy = None
    if backup is not False:
        if not isinstance(where, Path):
            raise StorageError(
                _ONLY_SQLITE.format(
                    what="a backup",
                    instead=f"pg_dump (e.g. pg_dump -Fc -f nimlab.dump '{shown_db(where)}')",
                )
            )
        if backup is True:
            backup = _free_name(where.with_name(f"{where.name}.schema-{version}.backup"))
        reader = Database(_connect_read_only(where), where, read_only=True)
        try:
            copy = reader.backup(backup)
        finally:
            reader.close()
    Database.open(where, upgrade=True).close()
    return version, SCHEMA_VERSION, copy


def _free_name(path: Path) -> Path:
    """``path``, or ``path.1``, ``path.2``, ...: the first that does not exist."""
    candidate, n = path, 0
    while candidate.exists():
        n += 1
        candidate = path.with_name(f"{path.name}.{n}")
    return candidate


def _unwritable(where: Path) -> bool:
    """Whether the file or its folder cannot be written (SQLite needs both in WAL mode)."""
    return where.exists() and not (os.access(where, os.W_OK) and os.access(where.parent, os.W_OK))


def _connect_read_only(where: Path) -> sqlite3.Connection:
    """A ``mode=ro`` connection; ``immutable`` when the WAL index cannot be made (read-only
    file system), which is safe there because nobody can write that file either."""
    uri = where.resolve().as_uri()
    last: sqlite3.Error | None = None
    for query in ("?mode=ro", "?mode=ro&immutable=1"):
        try:
            conn = sqlite3.connect(
                uri + query,
                uri=True,
                timeout=BUSY_TIMEOUT_S,
                isolation_level=None,
                check_same_thread=False,
            )
        except sqlite3.Error as e:
            last = e
            continue
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
            conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
            return conn
        except sqlite3.Error as e:
            conn.close()
            last = e
            if "not a database" in str(e) or "malformed" in str(e):
                break
    assert last is not None
    raise storage_error(last, f"cannot read database {str(where)!r}")


def _file_version(conn: sqlite3.Connection, where: Path) -> int:
    """The schema version of the SQLite file ``where`` opened read-only as ``conn`` (closed
    when it cannot be read: :class:`StorageError` then)."""
    try:
        return current_version(conn)
    except sqlite3.Error as e:
        conn.close()
        raise storage_error(e, f"cannot read database {str(where)!r}") from None
