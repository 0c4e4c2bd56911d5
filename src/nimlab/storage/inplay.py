"""Games in play: unfinished games saved move by move (the web app's), so a restart resumes them.

Bounds (each read from the environment when the store is opened, see :class:`InPlayLimits`):

- at most ``max_games`` unfinished games in the database (``$NIMLAB_MAX_GAMES_IN_PLAY``, default
  5,000) and ``max_per_client`` per client key (``$NIMLAB_MAX_GAMES_PER_CLIENT``, default 50) when
  the caller passes one; when it names the client's network too (its /24 or /64: any key the
  caller chooses), at most ``max_per_network`` per network, and once ``reserved_from`` games are
  in play, a new one only for a network holding less than ``little`` (the last games are kept
  for newcomers): beyond, :class:`TooManyGamesInPlayError` and nothing is written. Every
  process serving the database counts the same games;
- at most ``max_moves`` moves per game (``$NIMLAB_MAX_MOVES_PER_GAME``, default 10,000): beyond,
  :class:`TooManyMovesError`;
- a game not touched (no move, no start) for ``expire_after`` (``$NIMLAB_GAME_EXPIRY_DAYS``,
  default 7 days) is *deleted* by :meth:`GamesInPlay.expire`: it was never finished, so it has no
  result for the history or the statistics, and an abandoned game is not worth keeping; a game
  no person has moved in yet (only bots, or nobody) goes sooner, once untouched for
  ``idle_after`` (``$NIMLAB_IDLE_GAME_EXPIRY_HOURS``; none by default here, the server's
  setting ``idle_game_expiry_hours`` gives 3 hours), so that games started and left cannot hold
  the places of games in play for days.

Finishing a game (:meth:`GamesInPlay.finish`) stores the finished record and removes the game in
play in ONE transaction: the game is always whole, in play or finished, never lost. A game
resigned or abandoned is finished the same way (its record says how it ended, see
:class:`~nimlab.storage.archive.Ending`). The key a game had in play is remembered with the id
it was stored under (:meth:`GamesInPlay.finished_game`), so the interface can lead the game's
old link to the stored game, also after a restart; deleting the stored game forgets it.

On PostgreSQL the table of games in play churns (a row per start, deleted at the end, a new
version of it per move) and every start counts its rows, which reads every row a game left behind
until the table is vacuumed; PostgreSQL's autovacuum visits a database at most once a minute, so
the server's writer vacuums it itself once :data:`TIDY_AFTER` games have left
(:meth:`GamesInPlay.tidy`).

Several processes may share the games in play. Each game has a ``version`` (its changes so far:
moves appended, take-backs, its end); a change made from what a process read passes the version
it read (``expect``), and is written only if the game is still at that version, in the same
transaction (``UPDATE ... WHERE key = ? AND version = ?``): otherwise :class:`StaleGameError` and
nothing is written, so two processes never both play one turn. Every change is announced in the
same transaction (``live_changes``: the game's key and its new version, read by
:class:`~nimlab.storage.feed.ChangeFeed`), so an announcement exists exactly when its change was
committed.
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, NoReturn

from nimlab.storage.archive import dumps, insert_game
from nimlab.storage.backend import DB_ERRORS, Connection
from nimlab.storage.connection import Database, now_stamp
from nimlab.storage.errors import (
    RecordError,
    StaleGameError,
    StorageError,
    TooManyGamesInPlayError,
    TooManyMovesError,
)
from nimlab.storage.registry import clamp_limit, now

__all__ = [
    "CHANGES_KEPT",
    "CHANNEL",
    "TIDY_AFTER",
    "GamesInPlay",
    "InPlayLimits",
    "LiveEntry",
    "announce",
]

LiveEntry = tuple[str, dict[str, Any], dict[str, Any]]
"""A game in play as ``(key, record with its stored moves, meta)``."""


def _env_int(name: str, default: int) -> int:
    text = os.environ.get(name)
    if text is None or not text.strip():
        return default
    try:
        value = int(text.strip())
    except ValueError:
        value = 0
    if value < 1:
        raise StorageError(f"${name} must be a whole number of at least 1, not {text!r}")
    return value


@dataclass(frozen=True, slots=True)
class InPlayLimits:
    """The bounds on games in play (see the module docstring)."""

    max_games: int = 5000
    max_per_client: int = 50
    max_moves: int = 10_000
    expire_after: timedelta = timedelta(days=7)
    idle_after: timedelta | None = None
    """How long a game no person has moved in yet is kept untouched (``None``: as any other)."""
    max_per_network: int | None = None
    """Games in play per network of clients (``None``: no bound)."""
    reserved_from: int | None = None
    """From this many games in play on, only a network holding less than ``little`` starts one
    (``None``: no reserve)."""
    little: int = 1

    @classmethod
    def from_env(cls) -> InPlayLimits:
        """The defaults, overridden by ``$NIMLAB_MAX_GAMES_IN_PLAY``,
        ``$NIMLAB_MAX_GAMES_PER_CLIENT``, ``$NIMLAB_MAX_MOVES_PER_GAME``,
        ``$NIMLAB_GAME_EXPIRY_DAYS`` and ``$NIMLAB_IDLE_GAME_EXPIRY_HOURS``; raises
        :class:`StorageError` for a value that is not a whole number of at least 1."""
        d = cls()
        idle = _env_int("NIMLAB_IDLE_GAME_EXPIRY_HOURS", 0) or None
        return cls(
            max_games=_env_int("NIMLAB_MAX_GAMES_IN_PLAY", d.max_games),
            max_per_client=_env_int("NIMLAB_MAX_GAMES_PER_CLIENT", d.max_per_client),
            max_moves=_env_int("NIMLAB_MAX_MOVES_PER_GAME", d.max_moves),
            expire_after=timedelta(days=_env_int("NIMLAB_GAME_EXPIRY_DAYS", d.expire_after.days)),
            idle_after=None if idle is None else timedelta(hours=idle),
        )


_INSERT_MOVE = (
    "INSERT INTO live_moves (key, number, seat, move, claim, at) VALUES (?, ?, ?, ?, ?, ?)"
)

_STORED_MOVES = (
    "SELECT (SELECT COALESCE(MAX(number), 0) FROM live_moves WHERE key = ?1), touched_at "
    "FROM live_games WHERE key = ?1"
)
"""One row (how many moves game ?1 has stored, when it was last touched) when the game is in
play, none otherwise."""


_COUNTS = (
    "SELECT (SELECT COUNT(*) FROM live_games), (SELECT COUNT(*) FROM live_games WHERE client = ?), "
    "(SELECT COUNT(*) FROM live_games WHERE network = ?)"
)
"""The games in play, those of one client and those of one network."""


CHANGES_KEPT = 4096
"""Announcements of changes kept in ``live_changes`` (older ones are deleted as new ones come: a
reader that fell further behind resyncs every game it holds)."""

_ANNOUNCE = "INSERT INTO live_changes (key, version) VALUES (?, ?) RETURNING seq"

_BUMP = "UPDATE live_games SET version = version + 1, touched_at = ? WHERE key = ? AND version = ?"

_BUMP_NOTIFY = _BUMP + " RETURNING pg_notify(?, key || ' ' || version::text)"
"""The fence and the announcement in one statement (PostgreSQL: one round trip fewer)."""


_LEAVE = {
    (True, False): "DELETE FROM live_games WHERE key = ?1 RETURNING meta, version",
    (True, True): "DELETE FROM live_games WHERE key = ?1 AND version = ?2 RETURNING meta, version",
    (False, False): "DELETE FROM live_games WHERE key = ?1 RETURNING meta, version, "
    "pg_notify(?2, key || ' ' || (version + 1)::text)",
    (False, True): "DELETE FROM live_games WHERE key = ?1 AND version = ?3 RETURNING meta, "
    "version, pg_notify(?2, key || ' ' || (version + 1)::text)",
}
"""A game leaving the games in play (finished), by (SQLite?, fenced by its version?): its meta
and its version; on PostgreSQL announced in the same statement."""


TIDY_AFTER = 500
"""Games that leave play through one :class:`GamesInPlay` (finished, abandoned, expired) before
it vacuums the table of games in play again on PostgreSQL (:meth:`GamesInPlay.tidy`)."""

TIDY_INTERVAL_S = 1.0
"""The least time between two such vacuums of one :class:`GamesInPlay`."""

_TIDY = "VACUUM (SKIP_LOCKED, TRUNCATE false) live_games"
"""Vacuum the games in play (PostgreSQL 12 or later): the rows of the games that left become
free room again and the visibility map is set, so a count of the games in play reads their index
and their live rows only. ``SKIP_LOCKED``: not when another process is vacuuming it;
``TRUNCATE false``: without the exclusive lock that giving back the empty pages at the end of the
table takes (waiting for it while the writers kept the table busy, one vacuum lasted 454 ms; the
writer's next group would wait as long)."""


CHANNEL = "nimlab_games"
"""The PostgreSQL channel changes are announced on (``NOTIFY``; payload: key, space, version)."""


def announce(conn: Connection, key: str, version: int, dialect: str = "sqlite") -> None:
    """Announce in the open transaction that game ``key`` changed to ``version``, to readers of
    the change feed once, and only if, the transaction commits: on PostgreSQL with ``NOTIFY``
    on :data:`CHANNEL` (delivered on commit, dropped with a rolled-back savepoint), on SQLite in
    ``live_changes`` (pruning the oldest beyond :data:`CHANGES_KEPT` every 1,024th). O(1)
    amortised."""
    if dialect != "sqlite":
        conn.execute("SELECT pg_notify(?, ?)", (CHANNEL, f"{key} {version}"))
        return
    seq = int(conn.execute(_ANNOUNCE, (key, version)).fetchone()[0])
    if seq % 1024 == 0:
        conn.execute("DELETE FROM live_changes WHERE seq <= ?", (seq - CHANGES_KEPT,))


def _fenced_insert(n: int) -> str:
    """PostgreSQL: the fence (with its announcement) and the insert of ``n`` moves in ONE
    statement: the moves are inserted only when the game was at the expected version (the
    statement's row count tells: ``n`` or 0). Parameters: the time stamp, the key, the expected
    version, the channel, then number, seat, move, claim and time of each move."""
    return _FENCED_INSERTS.get(n) or _FENCED_INSERTS.setdefault(
        n,
        "WITH fence AS (" + _BUMP_NOTIFY.replace("RETURNING", "RETURNING key,", 1) + ") "
        "INSERT INTO live_moves (key, number, seat, move, claim, at) "
        "SELECT fence.key, m.number, m.seat, m.move, m.claim, m.at FROM fence, (VALUES "
        + ", ".join(["(?::bigint, ?::bigint, ?::text, ?::text, ?::text)"] * n)
        + ") AS m (number, seat, move, claim, at)",
    )


_FENCED_INSERTS: dict[int, str] = {}


def _fence(conn: Connection, key: str, expect: int, stamp: str, dialect: str) -> None:
    """Move game ``key`` from version ``expect`` to the next and announce it; raises
    :class:`StaleGameError` (nothing changed) when it is at another version, :class:`RecordError`
    when it is not in play."""
    if dialect != "sqlite":
        if conn.execute(_BUMP_NOTIFY, (stamp, key, expect, CHANNEL)).rowcount == 1:
            return
    elif conn.execute(_BUMP, (stamp, key, expect)).rowcount == 1:
        announce(conn, key, expect + 1, dialect)
        return
    _refused(conn, key, expect)


def _refused(conn: Connection, key: str, expect: int) -> NoReturn:
    """Raise why a change fenced by version ``expect`` found nothing to change: game ``key`` is
    at another version, or no longer in play (finished, ended or removed since that version was
    read, by another process): :class:`StaleGameError` either way (a :class:`RecordError`), so
    that the caller reads the game again and judges the change against what it became: a retry
    of a move that finished the game elsewhere is then answered as a retry."""
    row = conn.execute("SELECT version FROM live_games WHERE key = ?", (key,)).fetchone()
    if row is None:
        raise StaleGameError(
            f"no game in progress has the key {key!r} (not at version {expect} any more: "
            "finished, ended or removed meanwhile): read it again"
        )
    raise StaleGameError(
        f"game {key!r} changed meanwhile (version {int(row[0])}, not {expect}): read it again"
    )


def _bump(conn: Connection, key: str, stamp: str, dialect: str) -> int | None:
    """Move game ``key`` to its next version, whatever it was, and announce it; its new version
    (``None``: not in play)."""
    row = conn.execute(
        "UPDATE live_games SET version = version + 1, touched_at = ? WHERE key = ? "
        "RETURNING version",
        (stamp, key),
    ).fetchone()
    if row is None:
        return None
    announce(conn, key, int(row[0]), dialect)
    return int(row[0])


def _gone(conn: Connection, key: str, expect: int | None, dialect: str) -> None:
    """Announce that game ``key`` is leaving the games in play (finished, removed, expired), at
    version ``expect`` if given (else :class:`StaleGameError`); raises :class:`RecordError`
    when it is not in play. Call before deleting it."""
    row = conn.execute("SELECT version FROM live_games WHERE key = ?", (key,)).fetchone()
    if row is None:
        raise RecordError(f"no game in progress has the key {key!r}")
    version = int(row[0])
    if expect is not None and version != expect:
        raise StaleGameError(
            f"game {key!r} changed meanwhile (version {version}, not {expect}): read it again"
        )
    announce(conn, key, version + 1, dialect)


def _move_rows(
    key: str, first: int, moves: Sequence[Mapping[str, Any]]
) -> list[tuple[str, int, int, str, str | None, str]]:
    """The rows of ``live_moves`` for ``moves`` numbered from ``first``; raises
    :class:`RecordError` for the first one that is not a recorded move. O(moves)."""
    rows = []
    for number, move in enumerate(moves, first):
        try:
            seat, text, at = int(move["seat"]), str(move["move"]), str(move["at"])
        except (KeyError, TypeError, ValueError):
            raise RecordError(f"move {number} of game {key!r} is not a recorded move") from None
        claim = move.get("claim")
        rows.append((key, number, seat, text, None if claim is None else str(claim), at))
    return rows


def _insert_moves(
    conn: Connection, key: str, first: int, moves: Sequence[Mapping[str, Any]]
) -> None:
    rows = _move_rows(key, first, moves)
    if len(rows) == 1:
        conn.execute(_INSERT_MOVE, rows[0])
    elif rows:
        conn.executemany(_INSERT_MOVE, rows)


TAKEBACKS = "takebacks"
"""The key of a game's data (``meta``) that counts its take-backs (see
:meth:`GamesInPlay.take_back`)."""


def takebacks_of(meta: Mapping[str, Any]) -> int:
    """How many take-backs a game's data (``meta``, in play or finished) counts (0 when none
    was stored: a game of an older version counted them in one process's memory only). O(1)."""
    count = meta.get(TAKEBACKS, 0)
    return count if isinstance(count, int) and not isinstance(count, bool) and count > 0 else 0


class GamesInPlay:
    """The unfinished games of one database, with their bounds."""

    def __init__(self, db: Database, limits: InPlayLimits | None = None) -> None:
        self._db = db
        self.limits = limits if limits is not None else InPlayLimits.from_env()
        self.tidy_after = TIDY_AFTER
        """Games that leave play here before :meth:`tidy` vacuums again."""
        self.tidy_interval = TIDY_INTERVAL_S
        """The least seconds between two vacuums of :meth:`tidy`."""
        self._left = 0
        """Games that left play here since the last vacuum (approximately: a change rolled
        back later is counted too)."""
        self._tidied_at = -math.inf

    def count(self, client: str | None = None) -> int:
        """How many games are in play: all, or those started by ``client``. O(log n)."""
        if client is None:
            row = self._db.one("SELECT COUNT(*) FROM live_games")
        else:
            row = self._db.one("SELECT COUNT(*) FROM live_games WHERE client = ?", (client,))
        return 0 if row is None else int(row[0])

    def add(
        self,
        key: str,
        record: Mapping[str, Any],
        meta: Mapping[str, Any],
        *,
        client: str | None = None,
        public: bool = False,
        network: str | None = None,
    ) -> None:
        """Keep a game that has just begun (``Game.to_record()``; its moves, if any, are stored
        too) under ``key``, with the interface's own JSON data ``meta``, started by ``client``
        (any key the interface chooses, e.g. a network address; ``None``: no per-client bound)
        of ``network`` (any key for a group of clients; ``None``: no per-network bound nor
        reserve); ``public``: listed for anyone to watch (:meth:`public`). Three counts (one
        statement), one insert.
        Raises :class:`RecordError` if ``key`` is taken, :class:`TooManyGamesInPlayError` or
        :class:`TooManyMovesError` beyond the bounds; nothing is written then."""
        moves = list(record.get("moves", []))
        limits = self.limits
        if len(moves) > limits.max_moves:
            raise TooManyMovesError(
                f"a game has at most {limits.max_moves:,} moves: this one has {len(moves):,}"
            )
        begun = dumps({**record, "moves": []})
        meta_text = dumps(meta, "the game's data")
        stamp = now()
        listed = time.time_ns() // 1000 if public else None  # the public list's order
        with self._db.write() as conn:
            if client is None and network is None:
                total = int(conn.execute("SELECT COUNT(*) FROM live_games").fetchone()[0])
                mine = ours = 0
            else:  # the counts in one statement (one round trip on PostgreSQL)
                total, mine, ours = map(int, conn.execute(_COUNTS, (client, network)).fetchone())
            self._check_room(total, mine if client is not None else None, ours, network)
            added = conn.execute(
                "INSERT INTO live_games (key, record, meta, created_at, client, touched_at, "
                "listed_at, network) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (key) DO NOTHING",
                (key, begun, meta_text, stamp, client, stamp, listed, network),
            ).rowcount
            if added == 0:
                raise RecordError(f"a game in progress already has the key {key!r}")
            _insert_moves(conn, key, 1, moves)

    def _check_room(self, total: int, mine: int | None, ours: int, network: str | None) -> None:
        """Raise :class:`TooManyGamesInPlayError` (its ``limit`` naming the bound) when a game
        may not begin with ``total`` games in play, ``mine`` of its client's (``None``: no
        client) and ``ours`` of its ``network``'s (see the module docstring)."""
        limits = self.limits
        if total >= limits.max_games:
            raise TooManyGamesInPlayError(
                f"{total:,} games are in play, as many as this server keeps: "
                "finish or abandon one, or try again later",
                limit="max_games_in_play",
            )
        if mine is not None and mine >= limits.max_per_client:
            raise TooManyGamesInPlayError(
                f"you have {mine:,} games in play, as many as one player may have: "
                "finish one first",
                limit="max_games_per_client",
            )
        if network is None:
            return
        if limits.max_per_network is not None and ours >= limits.max_per_network:
            raise TooManyGamesInPlayError(
                "your network has as many games in play as it may have now: finish one first",
                limit="network_share",
            )
        reserved = limits.reserved_from is not None and total >= limits.reserved_from
        if reserved and ours >= limits.little:
            raise TooManyGamesInPlayError(
                "this server keeps its last games in play for new players: finish one "
                "of yours first",
                limit="reserve_share",
            )

    def add_moves(
        self,
        batch: Sequence[tuple[str, int, Sequence[Mapping[str, Any]]]],
        *,
        expect: Mapping[str, int] | None = None,
    ) -> None:
        """Append moves to games in play, all in one transaction (group commit): each item is
        ``(key, number of the first move, moves)``, moves as in ``Game.to_record()["moves"]``.
        The first move's number must follow the stored ones (1 + the number stored), so a
        retried append cannot land twice. ``expect`` maps a key to the version its moves were
        made from (see the module docstring): its version goes one up. Raises
        :class:`RecordError` for an unknown key or a wrong number, :class:`StaleGameError` for a
        version that is no longer the game's, :class:`TooManyMovesError` beyond ``max_moves``;
        nothing is written then. O(moves) plus O(log n) per game."""
        stamp = now_stamp()
        limit = self.limits.max_moves
        fences = expect or {}
        pg = self._db.dialect != "sqlite"
        with self._db.write() as conn:
            execute = conn.execute
            for key, first, moves in batch:
                version = fences.get(key)
                if version is not None and moves and first + len(moves) - 1 <= limit and pg:
                    # the fence, its announcement and the moves: one statement (round trip)
                    rows = _move_rows(key, first, moves)
                    params: list[Any] = [stamp, key, version, CHANNEL]
                    for row in rows:
                        params += row[1:]
                    if execute(_fenced_insert(len(rows)), params).rowcount != len(rows):
                        _refused(conn, key, version)  # nothing was written
                    continue
                if version is not None:
                    # at the version its moves were made from, the game has first - 1 moves
                    _fence(conn, key, version, stamp, self._db.dialect)
                    stored = first - 1
                else:
                    row = execute(_STORED_MOVES, (key,)).fetchone()
                    if row is None:
                        raise RecordError(f"no game in progress has the key {key!r}")
                    stored = int(row[0])
                if first != stored + 1:
                    if first <= stored:
                        raise RecordError(f"game {key!r} already has move {first}")
                    raise RecordError(
                        f"game {key!r} has {stored} moves stored: the next is move {stored + 1}, "
                        f"not {first}"
                    )
                if stored + len(moves) > limit:
                    raise TooManyMovesError(
                        f"a game has at most {limit:,} moves: game {key!r} has reached the limit"
                    )
                _insert_moves(conn, key, first, moves)
                if version is None:
                    _bump(conn, key, stamp, self._db.dialect)

    def public(self, *, limit: int, offset: int = 0) -> list[tuple[str, int]]:
        """The public games in play (see :meth:`add`) as ``(key, version)``, newest first (by
        the microsecond they began, on the clock of the process that started them), ``limit``
        of them after the first ``offset``. O(log n + offset + limit)."""
        rows = self._db.rows(
            "SELECT key, version FROM live_games WHERE listed_at IS NOT NULL "
            "ORDER BY listed_at DESC, key DESC LIMIT ? OFFSET ?",
            (clamp_limit(limit), max(0, offset)),
        )
        return [(str(k), int(v)) for k, v in rows]

    def changes(self, after: int, *, limit: int = 1000) -> list[tuple[int, str, int]]:
        """The announcements of changes after number ``after`` on SQLite, oldest first (at most
        ``limit``): ``(number, key, version)``. Numbers follow each other: a gap before the
        first is announcements pruned before the reader saw them. O(log n + rows)."""
        rows = self._db.rows(
            "SELECT seq, key, version FROM live_changes WHERE seq > ? ORDER BY seq LIMIT ?",
            (after, limit),
        )
        return [(int(a), str(k), int(v)) for a, k, v in rows]

    def last_change(self) -> int:
        """The number of the last announcement (0: none yet). O(1)."""
        row = self._db.one("SELECT COALESCE(MAX(seq), 0) FROM live_changes")
        return int(row[0]) if row else 0

    def _entry(self, key: str, record_text: str, meta_text: str) -> LiveEntry:
        record = json.loads(record_text)
        record["moves"] = [
            {"seat": int(seat), "move": move, "at": at} | ({"claim": claim} if claim else {})
            for seat, move, claim, at in self._db.rows(
                "SELECT seat, move, claim, at FROM live_moves WHERE key = ? ORDER BY number",
                (key,),
            )
        ]
        return str(key), record, json.loads(meta_text)

    def games(self, *, limit: int | None = None) -> list[LiveEntry]:
        """Games in play as ``(key, record, meta)``, oldest first; each record has all its
        stored moves, ready for ``Game.from_record``. With ``limit``: only the ``limit`` most
        recently touched games (a bounded startup; the others stay stored and can be read one by
        one with :meth:`game`). Games started in the same second come in the order they were
        stored on SQLite, by key on PostgreSQL. O(games returned x their moves)."""
        return [entry for entry, _ in self.games_with_versions(limit=limit)]

    def games_with_versions(self, *, limit: int | None = None) -> list[tuple[LiveEntry, int]]:
        """:meth:`games`, each with its version (see the module docstring): the version is read
        before the moves, so the moves are never older than the version says (a change in
        between makes the version look stale, which a fenced change then finds out)."""
        tie = "rowid" if self._db.dialect == "sqlite" else "key"
        if limit is None:
            rows = self._db.rows(
                f"SELECT key, record, meta, version FROM live_games ORDER BY created_at, {tie}"
            )
        else:
            rows = self._db.rows(
                f"SELECT key, record, meta, version FROM (SELECT {tie} AS r, * FROM live_games "
                f"ORDER BY touched_at DESC, {tie} DESC LIMIT ?) AS recent ORDER BY created_at, r",
                (clamp_limit(limit),),
            )
        return [(self._entry(k, r, m), int(v)) for k, r, m, v in rows]

    def game(self, key: str) -> LiveEntry | None:
        """One game in play with its moves, or ``None``. O(its moves)."""
        found = self.game_with_version(key)
        return None if found is None else found[0]

    def game_with_version(self, key: str) -> tuple[LiveEntry, int] | None:
        """:meth:`game` with its version (read before its moves, as in
        :meth:`games_with_versions`), or ``None``. O(its moves)."""
        row = self._db.one(
            "SELECT key, record, meta, version FROM live_games WHERE key = ?", (key,)
        )
        return None if row is None else (self._entry(row[0], row[1], row[2]), int(row[3]))

    def version(self, key: str) -> int | None:
        """The version of game ``key`` in play (``None``: not in play): one indexed read."""
        row = self._db.one("SELECT version FROM live_games WHERE key = ?", (key,))
        return None if row is None else int(row[0])

    def remove(self, key: str) -> bool:
        """Forget a game in play (abandoned) with its moves; ``False`` if there was none."""
        with self._db.write() as conn:
            try:
                _gone(conn, key, None, self._db.dialect)
            except RecordError:
                return False
            conn.execute("DELETE FROM live_moves WHERE key = ?", (key,))
            gone = conn.execute("DELETE FROM live_games WHERE key = ?", (key,)).rowcount
        self._left += gone
        return bool(gone)

    def finish(
        self,
        key: str,
        record: Mapping[str, Any],
        usernames: Sequence[str | None] = (),
        *,
        source: str = "web",
        expect: int | None = None,
        private: bool = False,
    ) -> int:
        """Store the finished game ``record`` (see :meth:`Archive.save_game`; a username no
        longer registered is stored as a plain name; ``private``: not listed, and read only by
        who has its key, see :meth:`Archive.games` and :attr:`GameSummary.private`) and remove
        the game in play ``key`` with its moves, in ONE transaction: either both happen or
        neither (the game stays in play).
        Raises :class:`RecordError` (nothing written) when no game in play has that key, so a
        game is finished at most once, and :class:`StaleGameError` when ``expect`` is given and
        is no longer the game's version. Returns the finished game's id."""
        dialect = self._db.dialect
        with self._db.write() as conn:
            # the game in play leaves first (its moves with it: ON DELETE CASCADE), fenced by
            # its version and announced in the same statement on PostgreSQL
            params: list[Any] = [key] if dialect == "sqlite" else [key, CHANNEL]
            if expect is not None:
                params.append(expect)
            row = conn.execute(_LEAVE[dialect == "sqlite", expect is not None], params).fetchone()
            if row is None:
                if expect is None:
                    raise RecordError(f"no game in progress has the key {key!r}")
                _refused(conn, key, expect)
            if dialect == "sqlite":
                announce(conn, key, int(row[1]) + 1, dialect)
            game_id = insert_game(
                conn, record, usernames, source=source, unknown_players="drop", private=private
            )
            conn.execute(
                "INSERT INTO finished_keys (key, game_id, meta) VALUES (?, ?, ?) ON CONFLICT "
                "(key) DO UPDATE SET game_id = excluded.game_id, meta = excluded.meta",
                (key, game_id, row[0]),
            )
        self._left += 1
        return game_id

    def finished_game(self, key: str) -> tuple[int, dict[str, Any]] | None:
        """The id of the stored game that the game in play ``key`` became when it finished (or
        was resigned or abandoned), with the data it had in play (``meta``: the interface's
        seat token hashes, ...); ``None`` when it never finished here or was deleted since.
        O(log n)."""
        row = self._db.one("SELECT game_id, meta FROM finished_keys WHERE key = ?", (key,))
        return None if row is None else (int(row[0]), json.loads(row[1]))

    def take_back(self, key: str, keep: int, *, expect: int | None = None) -> int:
        """Forget the stored moves of game ``key`` after its first ``keep`` (a take-back) and
        count it in the game's data (``meta["takebacks"]``, kept when the game finishes: every
        process reading the game sees the same count), in one transaction; returns how many
        moves were deleted. Raises :class:`RecordError` for an unknown key or a negative
        ``keep``, :class:`StaleGameError` when ``expect`` is given and is no longer the game's
        version. O(moves deleted)."""
        if keep < 0:
            raise RecordError(f"a game keeps 0 or more moves, not {keep}")
        with self._db.write() as conn:
            if expect is None:
                if _bump(conn, key, now(), self._db.dialect) is None:
                    raise RecordError(f"no game in progress has the key {key!r}")
            else:
                _fence(conn, key, expect, now(), self._db.dialect)
            # the row is the fenced change's (locked on PostgreSQL): nobody else writes it now
            (meta_text,) = conn.execute(
                "SELECT meta FROM live_games WHERE key = ?", (key,)
            ).fetchone()
            meta = json.loads(meta_text)
            meta[TAKEBACKS] = takebacks_of(meta) + 1
            conn.execute(
                "UPDATE live_games SET meta = ? WHERE key = ?",
                (dumps(meta, "the game's data"), key),
            )
            gone = conn.execute(
                "DELETE FROM live_moves WHERE key = ? AND number > ?", (key, keep)
            ).rowcount
        return int(gone)

    def expire(
        self, older_than: timedelta | None = None, *, at: datetime | None = None
    ) -> list[str]:
        """Delete the games in play not touched (started or moved in) for ``older_than``
        (default: the limits' ``expire_after``) before ``at`` (default: now), and, without
        ``older_than``, those no person has moved in (no move stored by a seat that is not a
        bot) not touched for the limits' ``idle_after``; returns their keys. O(games in play +
        games untouched for ``idle_after`` x their moves + expired games + their moves): the
        time of the last move has no index, which every move would write."""
        age = self.limits.expire_after if older_than is None else older_than
        idle = self.limits.idle_after if older_than is None else None
        when = (at or datetime.now(UTC)).astimezone(UTC)
        cutoff = (when - age).isoformat(timespec="seconds")
        with self._db.write() as conn:
            keys = [
                str(r[0])
                for r in conn.execute(
                    "SELECT key FROM live_games WHERE touched_at < ? ORDER BY touched_at", (cutoff,)
                )
            ]
            if idle is not None and idle < age:
                quiet = conn.execute(
                    "SELECT key, record FROM live_games WHERE touched_at < ? AND touched_at >= ? "
                    "ORDER BY touched_at",
                    ((when - idle).isoformat(timespec="seconds"), cutoff),
                ).fetchall()
                keys += [str(key) for key, record in quiet if not _moved(conn, key, record)]
            for key in keys:
                _gone(conn, key, None, self._db.dialect)
                conn.execute("DELETE FROM live_moves WHERE key = ?", (key,))
                conn.execute("DELETE FROM live_games WHERE key = ?", (key,))
        self._left += len(keys)
        return keys

    @property
    def tidy_due(self) -> bool:
        """Whether :meth:`tidy` would vacuum now (never on SQLite). O(1)."""
        return (
            self._db.dialect != "sqlite"
            and self._left >= self.tidy_after
            and time.monotonic() - self._tidied_at >= self.tidy_interval
        )

    def tidy(self) -> bool:
        """On PostgreSQL, once :attr:`tidy_after` games have left play here (finished,
        abandoned or expired) and at most once every :attr:`tidy_interval` seconds: vacuum
        the table of games in play; returns whether it did. Every start counts the games in
        play (:meth:`add`), and PostgreSQL's count reads every row a game left behind until the
        table is vacuumed: its autovacuum visits a database at most once a minute (and a new
        database's table, never vacuumed, is counted by reading all of it), while a busy server
        starts and ends hundreds of games a second. Call it outside any transaction (the
        writer does, between its groups). Never raises: a vacuum that could not run is tried
        again once :attr:`tidy_after` more games have left. O(pages of the table and its
        indexes)."""
        if not self.tidy_due or self._db.conn.in_transaction:
            return False
        self._left, self._tidied_at = 0, time.monotonic()
        try:
            self._db.conn.execute(_TIDY)
        except DB_ERRORS:  # (the next statement reconnects if the connection was lost)
            return False
        return True


def _moved(conn: Connection, key: str, record: str) -> bool:
    """Whether a person (a seat whose player is not a bot) has a move stored in game ``key``
    whose record as it began is ``record``; a seat whose player cannot be read counts as a
    person. O(log n + the game's moves)."""
    from nimlab.core.errors import NimlabError
    from nimlab.core.players import Player

    try:
        players = json.loads(record).get("players", [])
    except (ValueError, AttributeError):
        return True
    people = []
    for seat, spec in enumerate(players):
        try:
            if not Player.parse(str(spec)).is_bot:
                people.append(seat)
        except NimlabError:
            people.append(seat)
    if not people:
        return False
    marks = ", ".join("?" * len(people))
    return (
        conn.execute(
            f"SELECT 1 FROM live_moves WHERE key = ? AND seat IN ({marks}) LIMIT 1",
            (key, *people),
        ).fetchone()
        is not None
    )
