"""Copying a whole database to another, empty one: SQLite to PostgreSQL (a club that moves), back
(a copy in one file), or between two of the same kind.

Every row of every table is copied with its ids (game ids stay the same, so ``nimlab replay ID``
and the web's links still lead to the same games), the players' statistics and created times,
the games in play with their moves and the keys of finished games. The source is read in one
read transaction (a consistent view while others use it) and the target written in one
transaction (all or nothing); then the rows of each table are counted on both sides.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from nimlab.storage.backend import DB_ERRORS, Connection
from nimlab.storage.connection import Database, storage_error
from nimlab.storage.errors import DatabaseChoiceError, StorageError
from nimlab.storage.schema import table_names

__all__ = ["TABLES", "CopyResult", "copy_database", "row_counts"]

TABLES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("players", ("id",)),
    ("games", ("id",)),
    ("game_players", ("game_id", "seat")),
    ("delete_requests", ("game_id", "seat")),
    ("finished_keys", ("key",)),
    ("live_games", ("key",)),
    ("live_moves", ("key", "number")),
)
"""The tables copied, each with its primary key, in an order their foreign keys allow."""

NOT_COPIED = (
    "live_changes",
    "rate_buckets",
    "held_counts",
    "server_processes",
    "engine_claims",
)
"""The tables of the servers running now (announcements of changes, rate limits, what their
clients hold, the engine work they share), not of the club: left out of a copy."""

BATCH = 1000
"""Rows read and written at a time (bounds the memory a copy takes)."""

_WHAT = {
    "players": ("player", "players"),
    "games": ("finished game", "finished games"),
    "game_players": ("seat of a finished game", "seats of finished games"),
    "delete_requests": ("delete request", "delete requests"),
    "finished_keys": ("web link of a finished game", "web links of finished games"),
    "live_games": ("game in play", "games in play"),
    "live_moves": ("move of a game in play", "moves of games in play"),
}


@dataclass(frozen=True, slots=True)
class CopyResult:
    """How many rows of each table were copied (equal on both sides: checked)."""

    counts: dict[str, int]

    def summary(self) -> str:
        """E.g. ``3 players, 10 finished games (20 seats), 2 games in play (15 moves)``."""
        c = self.counts
        games = _count(c["games"], "finished game", "finished games")
        if c["games"]:
            games += f" ({_count(c['game_players'], 'seat', 'seats')})"
        in_play = _count(c["live_games"], "game in play", "games in play")
        if c["live_games"]:
            in_play += f" ({_count(c['live_moves'], 'move', 'moves')})"
        return f"{_count(c['players'], 'player', 'players')}, {games}, {in_play}"


def _count(n: int, one: str, many: str) -> str:
    return f"{n:,} {one if n == 1 else many}"


def row_counts(db: Database) -> dict[str, int]:
    """The rows of each table of :data:`TABLES`. O(tables) statements."""
    counts = {}
    for table, _ in TABLES:
        row = db.one(f"SELECT COUNT(*) FROM {table}")
        counts[table] = 0 if row is None else int(row[0])
    return counts


def copy_database(source: Database, target: Database) -> CopyResult:
    """Copy every row of ``source`` into the empty database ``target`` (both at the current
    schema version), keeping every id; then count the rows of each table on both sides.
    Raises :class:`DatabaseChoiceError` when ``target`` holds anything (nothing is written), or
    when it is the source; :class:`StorageError` when a count differs or a database fails (the
    target's transaction is rolled back). O(rows), in batches of :data:`BATCH` rows."""
    if source.path == target.path:
        raise DatabaseChoiceError("the source and the target are the same database")
    _check_tables(source)
    held = {t: n for t, n in row_counts(target).items() if n}
    if held:
        listed = ", ".join(_count(n, *_WHAT[t]) for t, n in held.items())
        raise DatabaseChoiceError(
            f"the target {target.name} is not empty ({listed}): nimlab db copy fills only an "
            "empty database (to add finished games to one, use nimlab export and nimlab import)"
        )
    counts: dict[str, int] = {}
    try:
        source.conn.execute(_READ[source.dialect])
        try:
            with target.write() as out:
                for table, key in TABLES:
                    columns = _columns(source, table)
                    counts[table] = _copy_table(source, out, table, key, columns)
                if target.dialect == "postgresql":  # new rows are numbered after the copied ones
                    for table in ("players", "games"):
                        out.execute(
                            f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
                            f"COALESCE(MAX(id), 1), MAX(id) IS NOT NULL) FROM {table}"
                        )
        finally:
            if source.conn.in_transaction:
                source.conn.execute("ROLLBACK")
    except DB_ERRORS as e:
        raise storage_error(e, "the copy failed and the target was left as it was") from None
    after = row_counts(target)
    wrong = [t for t, _ in TABLES if after[t] != counts[t]]
    if wrong:
        raise StorageError(
            "the copy does not match its source: "
            + ", ".join(f"{_WHAT[t][1]} {counts[t]:,} copied, {after[t]:,} found" for t in wrong)
        )
    return CopyResult(counts)


_READ = {
    "sqlite": "BEGIN",  # deferred: one read snapshot of the WAL from the first read on
    "postgresql": "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
}


def _check_tables(db: Database) -> None:
    """Refuse a source with a table this copy does not know (it would be left behind)."""
    # NOT_COPIED: announcements, limits, counts and engine work of the servers running now,
    # not the club's data
    known = {t for t, _ in TABLES} | {"schema_version", *NOT_COPIED}
    unknown = sorted(table_names(db.conn, dialect=db.dialect) - known)
    if unknown:
        raise StorageError(f"nimlab db copy does not know the tables {', '.join(unknown)}")


def _columns(db: Database, table: str) -> list[str]:
    cur = db.conn.execute(f"SELECT * FROM {table} LIMIT 0")
    description: Sequence[Sequence[object]] = getattr(cur, "description", None) or ()
    cur.fetchall()
    return [str(d[0]) for d in description]


def _copy_table(
    source: Database, out: Connection, table: str, key: tuple[str, ...], columns: list[str]
) -> int:
    """Copy ``table`` in key order, :data:`BATCH` rows at a time; returns the rows copied."""
    names = ", ".join(columns)
    order = ", ".join(key)
    marks = ", ".join("?" * len(columns))
    insert = f"INSERT INTO {table} ({names}) VALUES ({marks})"
    after = f"({order}) > ({', '.join('?' * len(key))})"
    positions = [columns.index(k) for k in key]
    conn = source.conn
    copied = 0
    last: list[object] | None = None
    while True:
        where = "" if last is None else f" WHERE {after}"
        rows = conn.execute(
            f"SELECT {names} FROM {table}{where} ORDER BY {order} LIMIT {BATCH}", last or ()
        ).fetchall()
        if not rows:
            return copied
        out.executemany(insert, [tuple(r) for r in rows])
        copied += len(rows)
        last = [rows[-1][p] for p in positions]
