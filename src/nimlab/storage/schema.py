"""The database schema and its migrations.

The schema version is kept in the one-row table ``schema_version``. Each migration takes the
database from version ``n - 1`` to ``n`` and runs in the same transaction as the version update,
so a database is always at exactly one version. Migrations are only ever appended.

The same migrations make the schema on SQLite and on PostgreSQL: scripts are written for SQLite
and :func:`postgres_ddl` gives their PostgreSQL form (``INTEGER`` is ``BIGINT``, an ``INTEGER
PRIMARY KEY`` an identity column); a migration written as a function gets the dialect's
connection, whose statements both databases understand.
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from nimlab.storage.backend import Connection
from nimlab.storage.errors import StorageError

__all__ = [
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "Migration",
    "current_version",
    "migrate",
    "postgres_ddl",
    "record_hash",
    "schema_problems",
    "table_names",
]

Migration = str | Callable[[Connection], None]
"""A migration: an SQL script, or a function that runs inside the migration's transaction."""

_V1 = """
CREATE TABLE players (
    id           INTEGER PRIMARY KEY,
    username     TEXT NOT NULL UNIQUE,
    given_name   TEXT NOT NULL,
    family_name  TEXT NOT NULL,
    bot          TEXT,                       -- NULL for a human, else the bot spec (e.g. perfect)
    games_played INTEGER NOT NULL DEFAULT 0 CHECK (games_played >= 0),
    games_won    INTEGER NOT NULL DEFAULT 0 CHECK (games_won >= 0 AND games_won <= games_played),
    created_at   TEXT NOT NULL
);

CREATE TABLE games (
    id          INTEGER PRIMARY KEY,
    ruleset     TEXT NOT NULL,               -- Ruleset text form, e.g. "nim misere end=2.2.2"
    start       TEXT NOT NULL,               -- JSON: heap sizes, or {"rows": [...]}
    winner_seat INTEGER,
    move_count  INTEGER NOT NULL,
    started_at  TEXT NOT NULL,
    finished_at TEXT NOT NULL,
    source      TEXT NOT NULL,               -- play, shell, import, ...
    record      TEXT NOT NULL                -- JSON: Game.to_record()
);

CREATE TABLE game_players (
    game_id   INTEGER NOT NULL REFERENCES games(id) ON DELETE CASCADE,
    seat      INTEGER NOT NULL,
    name      TEXT NOT NULL,                 -- the name shown in the game
    username  TEXT,                          -- the registered username at the time, if any
    player_id INTEGER REFERENCES players(id) ON DELETE SET NULL,
    won       INTEGER NOT NULL CHECK (won IN (0, 1)),
    PRIMARY KEY (game_id, seat)
);

CREATE INDEX game_players_player ON game_players(player_id);
CREATE INDEX games_finished ON games(finished_at);
"""

_V2 = """
CREATE TABLE live_games (
    key        TEXT PRIMARY KEY,             -- the web app's game id
    record     TEXT NOT NULL,                -- JSON: Game.to_record() when the game began
    meta       TEXT NOT NULL,                -- JSON: the web app's data (seat token hashes, ...)
    created_at TEXT NOT NULL
);

CREATE TABLE live_moves (
    key    TEXT NOT NULL REFERENCES live_games(key) ON DELETE CASCADE,
    number INTEGER NOT NULL,                 -- 1, 2, ... in the order played
    seat   INTEGER NOT NULL,
    move   TEXT NOT NULL,                    -- Move text, e.g. "2 3"
    claim  TEXT,
    at     TEXT NOT NULL,
    PRIMARY KEY (key, number)
);
"""
"""Version 2: games in progress in the web app, saved move by move so a restart resumes them."""


def record_hash(record: Mapping[str, Any]) -> str:
    """The content hash of a game record: SHA-256 of its canonical JSON (keys sorted, no
    spaces). Two records hash alike exactly when they are the same game, move for move and time
    for time; importing a game whose hash is stored already adds nothing. O(size of the record).
    """
    text = _CANONICAL.encode(record)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)
"""The encoder of :func:`record_hash`: ``json.dumps(record, sort_keys=True, separators=(",",
":"), ensure_ascii=False)`` without making a new encoder each time (the same text)."""


_V3_SQL = """
ALTER TABLE games ADD COLUMN content_hash TEXT;   -- record_hash(record): imports add a game once
CREATE INDEX games_content_hash ON games(content_hash);
ALTER TABLE live_games ADD COLUMN client TEXT;    -- who started it (the web app's client key)
ALTER TABLE live_games ADD COLUMN touched_at TEXT; -- the last move or the start: for expiry
UPDATE live_games SET touched_at = created_at;
CREATE INDEX live_games_client ON live_games(client);
CREATE INDEX live_games_touched ON live_games(touched_at);
"""


def _v3(conn: Connection) -> None:
    """Version 3: content hashes of finished games (idempotent imports), and the client and the
    last activity of games in play (bounds and expiry). Existing games get their hash; games
    stored twice before stay (nothing is deleted by a migration)."""
    for statement in _statements(_V3_SQL):
        conn.execute(_ddl(conn, statement))
    rows = conn.execute("SELECT id, record FROM games").fetchall()
    for game_id, text in rows:
        try:
            digest: str | None = record_hash(json.loads(text))
        except ValueError:
            digest = None
        conn.execute("UPDATE games SET content_hash = ? WHERE id = ?", (digest, game_id))


_V4 = """
ALTER TABLE games ADD COLUMN ending TEXT;  -- NULL: played to its end; 'resigned' or 'abandoned'
CREATE TABLE finished_keys (
    key     TEXT PRIMARY KEY,                -- the web app's game id while it was in play
    game_id INTEGER NOT NULL REFERENCES games(id) ON DELETE CASCADE,
    meta    TEXT NOT NULL                    -- JSON: the game's data in play (seat token hashes)
);
CREATE INDEX finished_keys_game ON finished_keys(game_id);
"""
"""Version 4: games stopped before their end (resigned, abandoned) are stored with how they
ended, and each finished game of the web app remembers its key, so the key's link leads to the
stored game after a restart."""

_V5_SQL = """
CREATE TABLE delete_requests (
    game_id INTEGER NOT NULL REFERENCES games(id) ON DELETE CASCADE,
    seat    INTEGER NOT NULL,                -- a human seat that asked to delete the stored game
    PRIMARY KEY (game_id, seat)
);
"""


def _v5(conn: Connection) -> None:
    """Version 5: a stored shared game is deleted only when every human seat asked
    (``delete_requests``; a seat that asked no longer sees it in its player's history). A
    version 4 database made before ``finished_keys`` kept its games' data gets that column
    (empty data), so the old links of its finished games lead to their replays."""
    if isinstance(conn, sqlite3.Connection):  # (PostgreSQL databases begin with version 5)
        columns = {str(r[1]) for r in conn.execute("PRAGMA table_info(finished_keys)")}
        if "meta" not in columns:
            conn.execute("ALTER TABLE finished_keys ADD COLUMN meta TEXT NOT NULL DEFAULT '{}'")
    for statement in _statements(_V5_SQL):
        conn.execute(_ddl(conn, statement))


_V6_SQL = """
ALTER TABLE live_games ADD COLUMN version INTEGER NOT NULL DEFAULT 0; -- changes so far: the fence
CREATE TABLE live_changes (
    seq     INTEGER PRIMARY KEY,               -- commit order on SQLite (AUTOINCREMENT there)
    key     TEXT NOT NULL,                     -- the game in play that changed
    version INTEGER NOT NULL                   -- its version after the change
);
"""


def _v6(conn: Connection) -> None:
    """Version 6: several processes share the games in play. Each game's ``version`` counts its
    changes (moves appended, take-backs); a change is written only against the version it was
    made from (``UPDATE ... WHERE version = ?``), so two processes never both play a turn. On
    SQLite every change is announced in ``live_changes`` in its own transaction (the change feed
    other processes read; numbers never reused: AUTOINCREMENT); PostgreSQL announces with
    ``NOTIFY`` instead and keeps the table empty."""
    for statement in _statements(_V6_SQL):
        if isinstance(conn, sqlite3.Connection):
            statement = statement.replace("PRIMARY KEY", "PRIMARY KEY AUTOINCREMENT")
        conn.execute(_ddl(conn, statement))


_V7_SQL = """
ALTER TABLE live_games ADD COLUMN listed_at INTEGER; -- public: when it began (µs); NULL: private
CREATE INDEX live_games_listed ON live_games(listed_at);
"""


def _v7(conn: Connection) -> None:
    """Version 7: a game in play made public (listed for anyone to watch) says so in a column of
    its own, ``listed_at`` (when it began, in microseconds since 1970: the list's order, newest
    first), so every process serving the database lists the same games. The games in play made
    public before (in the web app's data, ``meta``) are listed from when they began."""
    for statement in _statements(_V7_SQL):
        conn.execute(_ddl(conn, statement))
    rows = conn.execute("SELECT key, meta, created_at FROM live_games").fetchall()
    for key, meta, created in rows:
        try:
            public = json.loads(meta).get("public") is True
            began = int(datetime.fromisoformat(str(created)).timestamp() * 1_000_000)
        except (ValueError, AttributeError):
            public, began = False, 0
        if public:
            conn.execute("UPDATE live_games SET listed_at = ? WHERE key = ?", (began, key))


_V8_SQL = """
ALTER TABLE games ADD COLUMN private INTEGER NOT NULL DEFAULT 0; -- 1: kept by its key (web app)
"""


def _v8(conn: Connection) -> None:
    """Version 8: a finished game of the web app that was private in play stays private
    (``private``: not listed, read only with the key it had in play). The finished games whose
    data in play (``finished_keys.meta``) says they were not public become private; the others,
    and every game not from the web app, stay listed."""
    for statement in _statements(_V8_SQL):
        conn.execute(_ddl(conn, statement))
    rows = conn.execute("SELECT game_id, meta FROM finished_keys").fetchall()
    for game_id, meta in rows:
        try:
            private = json.loads(meta).get("public") is False
        except (ValueError, AttributeError):
            private = False
        if private:
            conn.execute("UPDATE games SET private = 1 WHERE id = ?", (game_id,))


_V9 = """
CREATE TABLE rate_buckets (
    action TEXT NOT NULL,                    -- what the tokens are for: create, move, read, ...
    client TEXT NOT NULL,                    -- the client's key (an address, or a network)
    tokens DOUBLE PRECISION NOT NULL,        -- tokens left at the time at
    at     DOUBLE PRECISION NOT NULL,        -- seconds since 1970
    rate   DOUBLE PRECISION NOT NULL,        -- tokens per second
    burst  DOUBLE PRECISION NOT NULL,        -- the most it holds
    taken  INTEGER NOT NULL,                 -- tokens the last take took
    PRIMARY KEY (action, client)
);
ALTER TABLE live_games ADD COLUMN network TEXT;  -- the network of its client (/24, /64)
CREATE INDEX live_games_network ON live_games(network);
CREATE TABLE server_processes (
    process TEXT PRIMARY KEY,                -- a server process's name for this start
    seen    DOUBLE PRECISION NOT NULL        -- when it last published its counts (s since 1970)
);
CREATE TABLE held_counts (
    process TEXT NOT NULL,                   -- who holds them
    what    TEXT NOT NULL,                   -- sockets, connections, ...
    client  TEXT NOT NULL,                   -- the client's address
    count   INTEGER NOT NULL,                -- how many it holds on that process
    PRIMARY KEY (process, what, client)
);
"""
"""Version 9: what every process serving the database counts together: the token buckets of the
rate limits per client (:mod:`~nimlab.storage.buckets`), the games in play of each network of
clients, and what each process's clients hold (:mod:`~nimlab.storage.held`). Games in play from
before have no network (they count for their client alone)."""


_V10_SQL = """
CREATE TABLE engine_claims (
    game_key   TEXT NOT NULL REFERENCES live_games(key) ON DELETE CASCADE,
    kind       TEXT NOT NULL,                -- hint, analysis
    move_count INTEGER NOT NULL,             -- the position: after this many moves
    process    TEXT NOT NULL,                -- the server process working it out
    answer     TEXT,                         -- JSON: its answer so far (NULL: none yet)
    final      INTEGER NOT NULL DEFAULT 0,   -- 1: no deeper answer follows
    PRIMARY KEY (game_key, kind)
);
DROP INDEX live_games_touched;
"""


def _v10(conn: Connection) -> None:
    """Version 10: the hints and analyses of games in play are worked out by one of the
    processes serving the database at a time, which the others wait for
    (:mod:`~nimlab.storage.claims`). A move no longer writes an index entry: ``touched_at``,
    which every move changes, loses its index (the expiry sweep, every few minutes, reads the
    games in play whole instead), and on PostgreSQL the pages of ``live_games`` keep room for a
    row's next version, so that a move's update of its game stays in its page and touches no
    index (a heap-only tuple)."""
    for statement in _statements(_V10_SQL):
        conn.execute(_ddl(conn, statement))
    if not isinstance(conn, sqlite3.Connection):
        conn.execute("ALTER TABLE live_games SET (fillfactor = 70)")


MIGRATIONS: tuple[Migration, ...] = (_V1, _V2, _v3, _V4, _v5, _v6, _v7, _v8, _V9, _v10)
"""``MIGRATIONS[n - 1]`` takes the database from version ``n - 1`` to ``n``."""

SCHEMA_VERSION = len(MIGRATIONS)


def postgres_ddl(statement: str) -> str:
    """The PostgreSQL form of a statement of a migration script: ``INTEGER`` columns are
    ``BIGINT`` (SQLite's integers have 64 bits), and an ``INTEGER PRIMARY KEY`` (SQLite's row
    id, numbered by the database) is a ``BIGINT`` identity column."""
    statement = re.sub(
        r"\bINTEGER PRIMARY KEY\b",
        "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY",
        statement,
    )
    return re.sub(r"\bINTEGER\b", "BIGINT", statement)


def _ddl(conn: Connection, statement: str) -> str:
    return statement if isinstance(conn, sqlite3.Connection) else postgres_ddl(statement)


_MIGRATION_LOCK = 0x6E696D6C6162
"""The PostgreSQL advisory lock held by a migration (``nimlab`` in ASCII)."""


def current_version(conn: Connection, *, dialect: str = "sqlite") -> int:
    """The schema version of the database (0 for a new, empty one)."""
    if dialect == "sqlite":
        row = conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'"
        ).fetchone()
    else:  # in the first schema of the search path, as every other statement
        row = conn.execute("SELECT to_regclass('schema_version')").fetchone()
        row = None if row is None or row[0] is None else row
    if row is None:
        return 0
    version = conn.execute("SELECT version FROM schema_version").fetchone()
    return 0 if version is None else int(version[0])


def migrate(conn: Connection, *, dialect: str = "sqlite") -> int:
    """Bring the database up to :data:`SCHEMA_VERSION`: the migrations still to be run, in one
    transaction (a new database is made with one commit; a failure leaves it as it was).

    ``conn`` must be in autocommit mode (``isolation_level=None`` for SQLite). Safe when several
    processes open a new database at once: each migration takes the write lock (SQLite) or an
    advisory lock (PostgreSQL) and re-reads the version. Raises :class:`StorageError` for a
    database made by a newer nimlab. Returns the version.
    """
    while True:
        if current_version(conn, dialect=dialect) >= SCHEMA_VERSION:
            break
        if dialect == "sqlite":
            _migrate_pending(conn, dialect)
            continue
        # A lock of the session, taken before the transaction begins: the transaction then
        # sees the tables another process made while this one waited (a lock taken inside it
        # would not refresh what it knows of the tables).
        conn.execute("SELECT pg_advisory_lock(?)", (_MIGRATION_LOCK,))
        try:
            _migrate_pending(conn, dialect)
        finally:
            if not conn.in_transaction:
                conn.execute("SELECT pg_advisory_unlock(?)", (_MIGRATION_LOCK,))
    version = current_version(conn, dialect=dialect)
    if version > SCHEMA_VERSION:
        raise StorageError(
            f"the database has schema version {version}, newer than this nimlab understands "
            f"({SCHEMA_VERSION}): upgrade nimlab"
        )
    return version


def _migrate_pending(conn: Connection, dialect: str) -> None:
    """Run the migrations still to be run (read again once the lock is held), in one
    transaction."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        start = version = current_version(conn, dialect=dialect)
        if version == 0:
            conn.execute(_ddl(conn, "CREATE TABLE schema_version (version INTEGER NOT NULL)"))
            conn.execute("INSERT INTO schema_version (version) VALUES (0)")
        while version < SCHEMA_VERSION:
            step = MIGRATIONS[version]
            if isinstance(step, str):
                for statement in _statements(step):
                    conn.execute(_ddl(conn, statement))
            else:
                step(conn)
            version += 1
        if version != start:
            conn.execute("UPDATE schema_version SET version = ?", (version,))
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def _objects(conn: Connection, dialect: str = "sqlite") -> set[tuple[str, str]]:
    if dialect == "sqlite":
        rows = conn.execute(
            "SELECT type, name FROM sqlite_master WHERE type IN ('table', 'index') "
            "AND name NOT LIKE 'sqlite_%'"
        ).fetchall()
    else:  # the tables and indexes of the schema the tables are in (the search path's first)
        rows = conn.execute(
            "SELECT CASE c.relkind WHEN 'r' THEN 'table' ELSE 'index' END, c.relname "
            "FROM pg_class c WHERE c.relkind IN ('r', 'i') AND c.relnamespace = "
            "(SELECT relnamespace FROM pg_class WHERE oid = to_regclass('schema_version'))"
        ).fetchall()
    return {(str(kind), str(name)) for kind, name in rows}


def table_names(conn: Connection, *, dialect: str = "sqlite") -> set[str]:
    """The names of the database's tables (nimlab's schema, and any other). O(schema)."""
    return {name for kind, name in _objects(conn, dialect) if kind == "table"}


_EXPECTED: set[tuple[str, str]] | None = None


def schema_problems(conn: Connection, *, dialect: str = "sqlite") -> list[str]:
    """What is missing from the schema of a database at :data:`SCHEMA_VERSION` (tables and
    indexes, compared with a new SQLite database's: both databases have the same names):
    empty for a sound schema. O(schema)."""
    global _EXPECTED
    if _EXPECTED is None:
        fresh = sqlite3.connect(":memory:", isolation_level=None)
        try:
            migrate(fresh)
            _EXPECTED = _objects(fresh)
        finally:
            fresh.close()
    missing = sorted(_EXPECTED - _objects(conn, dialect))
    return [f"the {kind} {name} is missing" for kind, name in missing]


def _statements(script: str) -> list[str]:
    """Split a migration script into statements (``executescript`` would commit on its own)."""
    lines = [line.split("--", 1)[0] for line in script.splitlines()]
    return [s.strip() for s in "\n".join(lines).split(";") if s.strip()]
