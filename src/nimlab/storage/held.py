"""What each process serving one database holds now, per client: published by each, summed for
the others (the bounds per client and per network on connections and WebSockets).

Each process has a name of its own (any text, e.g. a random one per start) and publishes, every
second or so, how many of each kind (``what``: ``sockets``, ``connections``...) each client holds
(``held_counts``: only the counts that changed), with the time it was last seen
(``server_processes``). :meth:`HeldCounts.others` sums what the processes seen within
``alive`` seconds hold, leaving out the asking one; a process that stops deletes its rows
(:meth:`HeldCounts.leave`), and the rows of one not seen for :data:`FORGET_AFTER` seconds (it was
killed) are deleted by the next process that publishes.

Time is the database's on PostgreSQL and this machine's on SQLite, as for
:mod:`~nimlab.storage.buckets`; like the buckets, the counts are not precious (the connection
of :meth:`RateBuckets.open <nimlab.storage.buckets.RateBuckets.open>` serves them).
"""

from __future__ import annotations

from collections.abc import Mapping

from nimlab.storage.backend import DB_ERRORS, Connection, now_params, now_sql
from nimlab.storage.connection import Database, storage_error
from nimlab.storage.errors import ReadOnlyError

__all__ = ["FORGET_AFTER", "HeldCounts", "seen_within"]

FORGET_AFTER = 60.0
"""Seconds after which the counts of a process not seen are deleted."""


class HeldCounts:
    """The counts held by the processes serving one database (see the module docstring). Not
    thread-safe: one per thread."""

    def __init__(self, db: Database) -> None:
        self._db = db
        self._now = now_sql(db.dialect)

    def publish(self, process: str, changed: Mapping[tuple[str, str], int]) -> None:
        """Say that ``process`` is alive and holds, of each ``(what, client)`` of ``changed``,
        that many (0: none; counts not named stay as last published); delete the counts of the
        processes not seen for :data:`FORGET_AFTER` seconds. One transaction: O(changed)
        statements, plus one per dead process's counts."""
        if self._db.read_only:
            raise ReadOnlyError(f"the database {self._db.name} was opened read-only")
        now, stamp = self._now, now_params(self._db.dialect)
        try:
            with self._db.write() as conn:
                conn.execute(
                    f"INSERT INTO server_processes (process, seen) VALUES (?, {now}) "
                    f"ON CONFLICT (process) DO UPDATE SET seen = {now}",
                    (process, *stamp, *stamp),
                )
                dead = [
                    str(r[0])
                    for r in conn.execute(
                        f"SELECT process FROM server_processes WHERE seen < {now} - ?",
                        (*stamp, FORGET_AFTER),
                    ).fetchall()
                ]
                for gone in dead:
                    self._forget(conn, gone)
                for (what, client), count in changed.items():
                    if count > 0:
                        conn.execute(
                            "INSERT INTO held_counts (process, what, client, count) "
                            "VALUES (?, ?, ?, ?) ON CONFLICT (process, what, client) "
                            "DO UPDATE SET count = excluded.count",
                            (process, what, client, int(count)),
                        )
                    else:
                        conn.execute(
                            "DELETE FROM held_counts WHERE process = ? AND what = ? AND client = ?",
                            (process, what, client),
                        )
        except DB_ERRORS as e:
            raise storage_error(e, "the counts of connections could not be written") from None

    @staticmethod
    def _forget(conn: Connection, process: str) -> None:
        conn.execute("DELETE FROM held_counts WHERE process = ?", (process,))
        conn.execute("DELETE FROM server_processes WHERE process = ?", (process,))

    def others(self, process: str, alive: float) -> dict[tuple[str, str], int]:
        """What the processes other than ``process`` seen within ``alive`` seconds hold:
        ``(what, client)`` to a count above 0. One query, O(counts held)."""
        try:
            rows = self._db.conn.execute(
                "SELECT h.what, h.client, SUM(h.count) FROM held_counts h JOIN server_processes p "
                f"ON p.process = h.process WHERE h.process <> ? AND {seen_within(self._now)} "
                "GROUP BY h.what, h.client",
                (process, *now_params(self._db.dialect), alive),
            ).fetchall()
        except DB_ERRORS as e:
            raise storage_error(e, "the counts of connections could not be read") from None
        return {(str(w), str(c)): int(n) for w, c, n in rows if int(n) > 0}

    def leave(self, process: str) -> None:
        """``process`` stops: its counts are deleted."""
        try:
            with self._db.write() as conn:
                self._forget(conn, process)
        except DB_ERRORS as e:
            raise storage_error(e, "the counts of connections could not be written") from None


def seen_within(now: str) -> str:
    """The SQL condition that the process row ``p`` of ``server_processes`` was seen within
    the seconds of its one parameter (``now``: :func:`~nimlab.storage.backend.now_sql`, whose
    parameters come first): the test of a process alive, for counts held and claims."""
    return f"p.seen >= {now} - ?"
