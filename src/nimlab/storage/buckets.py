"""Token buckets shared by every process serving one database: the rate limits per client.

A bucket (``rate_buckets``: one row per action and client) holds up to ``burst`` tokens and
fills with ``rate`` tokens per second; :meth:`RateBuckets.take` refills it for the time passed
and takes up to ``want`` whole tokens in ONE statement (``INSERT ... ON CONFLICT DO UPDATE ...
RETURNING``), atomic on both databases, so two processes never spend one token twice. A caller
that takes tokens a few at a time and spends them itself (the web app does) makes one statement
per few requests.

Time is the database's on PostgreSQL (one clock for every machine serving it) and this machine's
on SQLite (every process of an SQLite file is on one machine). Buckets are not precious: the
connection of :meth:`RateBuckets.open` commits without waiting for the disk (a crash may forget
the last tokens taken, never corrupt anything), and a bucket full again is deleted (at most once a
minute, :data:`PRUNE_EVERY`), so the table holds the clients of the last minutes only.
"""

from __future__ import annotations

import math
import os
import time

from nimlab.storage.backend import DB_ERRORS, PG_NOW, now_params, now_sql
from nimlab.storage.connection import Database, storage_error
from nimlab.storage.errors import ReadOnlyError

__all__ = ["PRUNE_EVERY", "RateBuckets"]

PRUNE_EVERY = 60.0
"""Seconds between two deletions of the buckets that are full again."""


def _take_sql(dialect: str) -> str:
    """The one statement of a take. Parameters: action, client, rate, burst, want (and, on
    SQLite, the time now in seconds since 1970); returns the tokens taken and those left."""
    if dialect == "sqlite":
        least, greatest, now = "MIN", "MAX", "?6"

        def whole(x: str) -> str:  # (x >= 0: truncation is the floor)
            return f"CAST({x} AS INTEGER)"

        rate, burst, want = "?3", "?4", "?5"
    else:
        least, greatest = "LEAST", "GREATEST"
        now = PG_NOW

        def whole(x: str) -> str:
            return f"CAST(FLOOR({x}) AS BIGINT)"

        rate, burst, want = (f"CAST(?{n} AS DOUBLE PRECISION)" for n in (3, 4, 5))
    first = f"{least}({want}, {burst})"
    refill = (
        f"{least}({burst}, rate_buckets.tokens + {greatest}(0.0, {now} - rate_buckets.at) * {rate})"
    )
    taken = f"{least}({whole(want)}, {whole(refill)})"
    return (
        "INSERT INTO rate_buckets (action, client, tokens, at, rate, burst, taken) "
        f"VALUES (?1, ?2, {burst} - {first}, {now}, {rate}, {burst}, {whole(first)}) "
        "ON CONFLICT (action, client) DO UPDATE SET "
        f"taken = {taken}, tokens = {refill} - {taken}, "
        f"at = {greatest}(rate_buckets.at, {now}), rate = {rate}, burst = {burst} "
        "RETURNING taken, tokens"
    )


def _prune_sql(dialect: str) -> str:
    """Delete the buckets full again (parameter on SQLite: the time now)."""
    now = now_sql(dialect)
    return f"DELETE FROM rate_buckets WHERE tokens + ({now} - at) * rate >= burst"


class RateBuckets:
    """The shared token buckets of one database (see the module docstring). Not thread-safe:
    one per thread, as a :class:`~nimlab.storage.connection.Database`."""

    def __init__(self, db: Database) -> None:
        self._db = db
        self._take = _take_sql(db.dialect)
        self._prune = _prune_sql(db.dialect)
        self._pruned = time.monotonic()

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> RateBuckets:
        """Buckets on a connection of their own to the database at ``path`` (a file or a
        PostgreSQL URL), which commits without waiting for the disk (SQLite:
        ``synchronous = NORMAL``; PostgreSQL: ``synchronous_commit = off``). Raises
        :class:`~nimlab.storage.errors.StorageError` when the database cannot be used."""
        db = Database.open(path)
        try:
            if db.dialect == "sqlite":
                db.conn.execute("PRAGMA synchronous = NORMAL")
            else:
                db.conn.execute("SET synchronous_commit = off")
        except DB_ERRORS as e:
            db.close()
            raise storage_error(e, "cannot use the database for the rate limits") from None
        return cls(db)

    @property
    def db(self) -> Database:
        """The connection (for :class:`~nimlab.storage.held.HeldCounts` on the same thread)."""
        return self._db

    def close(self) -> None:
        self._db.close()

    def take(
        self, action: str, client: str, rate: float, burst: int, want: int = 1
    ) -> tuple[int, float]:
        """Take up to ``want`` tokens (at least 1, at most ``burst``) of the bucket of
        ``(action, client)``, which fills with ``rate`` tokens per second (> 0, finite) up to
        ``burst`` and begins full. Returns the tokens taken, and when none: the seconds until
        the next one (else 0). Raises :class:`~nimlab.storage.errors.StorageError` when the
        database cannot be used. One statement (one round trip), plus, once a
        :data:`PRUNE_EVERY`, one deleting the full buckets."""
        if not (rate > 0 and math.isfinite(rate)):
            raise ValueError(f"a bucket fills at a positive rate, not {rate!r}")
        if self._db.read_only:
            raise ReadOnlyError(f"the database {self._db.name} was opened read-only")
        want = max(1, min(int(want), int(burst)))
        params: tuple[object, ...] = (action, client, float(rate), float(burst), float(want))
        params += now_params(self._db.dialect)
        try:
            row = self._db.conn.execute(self._take, params).fetchone()
            if time.monotonic() - self._pruned >= PRUNE_EVERY:
                self.prune()
        except DB_ERRORS as e:
            raise storage_error(e, "the rate limits could not be read") from None
        taken, left = int(row[0]), float(row[1])
        return taken, 0.0 if taken else max(0.0, 1.0 - left) / rate

    def prune(self) -> int:
        """Delete the buckets that are full again (a bucket not there is full); how many.
        O(buckets)."""
        self._pruned = time.monotonic()
        try:
            return self._db.conn.execute(self._prune, now_params(self._db.dialect)).rowcount
        except DB_ERRORS as e:
            raise storage_error(e, "the rate limits could not be written") from None
