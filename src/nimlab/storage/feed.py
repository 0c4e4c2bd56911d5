"""The change feed: every process serving the same database learns of every committed change to
a game in play (a move, a take-back, its end), in commit order, to update the games it holds and
push them to their open pages.

A change is announced in its own transaction (:func:`~nimlab.storage.inplay.announce`), so an
announcement exists exactly when its change was committed: a change whose transaction failed is
never announced. An announcement carries the game's key and its new version; the reader reads
the game itself from the tables. A reader that may have missed announcements (it fell further
behind than the announcements kept, or lost the database for a while) is told to *resync*:
read again every game it holds.

:class:`ChangeFeed` is what a server uses; :meth:`ChangeFeed.open` picks the database's
implementation. On PostgreSQL it is ``LISTEN`` on a connection of its own (a change's
``NOTIFY`` is sent in its transaction, so PostgreSQL delivers it on commit, in commit order, and
never for a transaction or savepoint rolled back); a feed that loses its connection reconnects
and says ``resync``. On SQLite (several processes on one machine sharing one file) it is a cheap
poll: ``PRAGMA data_version`` tells when another connection committed, and only then are the new
announcements read from ``live_changes``.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nimlab.storage.connection import Database, is_url, shown_db
from nimlab.storage.errors import StorageError
from nimlab.storage.inplay import CHANNEL, GamesInPlay

__all__ = [
    "GATHER",
    "INTERRUPT_SLICE",
    "POLL_INTERVAL",
    "Change",
    "ChangeFeed",
    "Changes",
    "PostgresFeed",
    "SqliteFeed",
]

POLL_INTERVAL = 0.02
"""Seconds between two looks at an SQLite database for changes (a ``PRAGMA``, no disk read)."""

INTERRUPT_SLICE = 0.1
"""The longest a PostgreSQL feed waits for a notification before it looks whether it was
interrupted (:meth:`ChangeFeed.interrupt`): no query, a wake-up of its thread."""

GATHER = 0.02
"""Seconds a PostgreSQL feed lets notifications gather after the first before it hands them
over (one hand-over to the server's event loop for all of them, rather than one for every
move or two; a page on another process sees a move at most this much later)."""

_MOST = 10_000
"""The most notifications one :meth:`PostgresFeed.wait` hands over (the rest: the next one)."""


@dataclass(frozen=True, slots=True)
class Change:
    """Game ``key`` in play changed; ``version`` is its version after the change."""

    key: str
    version: int


@dataclass(frozen=True, slots=True)
class Changes:
    """What :meth:`ChangeFeed.wait` found: the changes in commit order, and whether the reader
    must read again every game it holds (``resync``: some changes may have been missed)."""

    changes: tuple[Change, ...] = ()
    resync: bool = False


class ChangeFeed(ABC):
    """The changes committed to the games in play of one database, by any process. Used from
    one thread at a time (a server gives it a thread of its own); :meth:`interrupt` may be
    called from any thread."""

    _interrupted: threading.Event

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> ChangeFeed:
        """The change feed of the database ``path`` (a file; not ``:memory:``, which no other
        process can share). It starts at the last change committed: only later ones are
        reported. Raises :class:`StorageError`."""
        if str(path) == ":memory:":
            raise StorageError("an in-memory database has no change feed: nobody shares it")
        if isinstance(path, str) and is_url(path):
            return PostgresFeed(path)
        return SqliteFeed(Path(path))

    @abstractmethod
    def wait(self, timeout: float) -> Changes:
        """The changes committed since the last call (or since opening), waiting up to
        ``timeout`` seconds for the first. Raises :class:`StorageError` when the database cannot
        be read (the next call that succeeds then says ``resync``)."""

    def interrupt(self) -> None:
        """End the current :meth:`wait` and every later one soon (within
        :data:`INTERRUPT_SLICE` seconds), with no changes: a server that stops does not wait
        for the wait's timeout. Safe from any thread."""
        self._interrupted.set()

    @abstractmethod
    def close(self) -> None:
        """Stop listening and close the feed's connection. Idempotent."""


class SqliteFeed(ChangeFeed):
    """The change feed of an SQLite file: a connection of its own polls ``PRAGMA data_version``
    every :data:`POLL_INTERVAL` seconds and reads the announcements after the last one seen
    when it moved."""

    def __init__(self, path: Path, *, interval: float = POLL_INTERVAL) -> None:
        self._interrupted = threading.Event()
        self._db = Database.open(path)
        self._in_play = GamesInPlay(self._db)
        self._interval = interval
        self._seen = -1
        self._last = self._in_play.last_change()
        self._lost = False
        self._closed = False

    def _data_version(self) -> int:
        row = self._db.one("PRAGMA data_version")
        return int(row[0]) if row else 0

    def wait(self, timeout: float) -> Changes:
        deadline = time.monotonic() + max(timeout, 0.0)
        try:
            while True:
                version = self._data_version()
                if version != self._seen:
                    self._seen = version
                    found = self._read()
                    if found.changes or found.resync:
                        return found
                if time.monotonic() >= deadline or self._interrupted.is_set():
                    return Changes()
                self._interrupted.wait(self._interval)
        except StorageError:
            self._lost = True
            self._seen = -1
            raise

    def _read(self) -> Changes:
        rows = self._in_play.changes(self._last)
        # numbers follow each other (writers take turns; a rolled-back one takes none back):
        # a gap is announcements pruned before this reader saw them
        resync = self._lost or (bool(rows) and rows[0][0] != self._last + 1)
        self._lost = False
        if rows:
            self._last = rows[-1][0]
            if len(rows) >= 1000:  # more to read: look again at once
                self._seen = -1
        return Changes(tuple(Change(key, version) for _, key, version in rows), resync)

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._db.close()


class PostgresFeed(ChangeFeed):
    """The change feed of a PostgreSQL database: ``LISTEN`` on :data:`CHANNEL` on a connection
    of its own, each notification's payload being a game's key and its new version."""

    def __init__(self, url: str) -> None:
        self._interrupted = threading.Event()
        self._url = url
        self._conn: Any = None
        self._closed = False
        self._connect()

    def _connect(self) -> None:
        from nimlab.storage.postgres import connect

        conn = connect(self._url)  # DatabaseChoiceError (a StorageError) saying why not
        try:
            conn.execute(f"LISTEN {CHANNEL}")
        except Exception as e:
            conn.close()
            raise StorageError(f"cannot listen to {shown_db(self._url)}: {e}") from None
        self._conn = conn

    def wait(self, timeout: float) -> Changes:
        import psycopg

        if self._closed:
            raise StorageError("the change feed is closed")
        if self._conn is None:  # lost: reconnect, and whatever was missed must be read again
            self._connect()
            return Changes(resync=True)
        found: list[Change] = []
        deadline = time.monotonic() + max(timeout, 0.0)
        try:
            # the first notification, waiting for it in slices (to see an interruption); then
            # those that come within GATHER seconds
            while not found:
                left = deadline - time.monotonic()
                if left <= 0 or self._interrupted.is_set():
                    break
                for note in self._conn.notifies(timeout=min(left, INTERRUPT_SLICE), stop_after=1):
                    found.append(_change(note.payload))
            if found and not self._interrupted.is_set():
                # those that came meanwhile, until none is waiting
                time.sleep(GATHER)
                while len(found) < _MOST:
                    more = [_change(n.payload) for n in self._conn.notifies(timeout=0)]
                    if not more:
                        break
                    found += more
        except psycopg.Error as e:
            self._drop()
            raise StorageError(f"the change feed lost {shown_db(self._url)}: {e}") from None
        return Changes(tuple(found))

    def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(Exception):  # already broken
                conn.close()

    def close(self) -> None:
        self._closed = True
        self._drop()


def _change(payload: str) -> Change:
    key, _, version = payload.rpartition(" ")
    return Change(key, int(version))
