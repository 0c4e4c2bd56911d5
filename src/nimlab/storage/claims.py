"""Engine work claimed by one of the processes serving one database: the hints and analyses of
games in play.

A hint or an analysis of a game's position is worked out once for the club, by the process that
claimed it (``engine_claims``: one row per game and kind, naming the position by its move count
and the claimant by its process name, as in :mod:`~nimlab.storage.held`). Another process asked
for it waits for the claimant's answer, stored in the row as JSON, instead of working it out
again. A claim belongs to its process while that process is alive (seen in
``server_processes`` within ``alive`` seconds) and has not given it up; a claim of another
position of the game (a move was played or taken back), or of a process that died or gave it
up, is taken over by the next one to ask. An answer found stays with its position (``final``:
no deeper answer follows), so a process taking over a deeper search keeps the quicker answer.
The rows of a game leave with it (``ON DELETE CASCADE`` from ``live_games``).

Time is the database's on PostgreSQL and this machine's on SQLite, as for
:mod:`~nimlab.storage.held`. Not thread-safe: one :class:`EngineClaims` per thread.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from nimlab.storage.backend import DB_ERRORS, now_params, now_sql
from nimlab.storage.connection import Database, storage_error
from nimlab.storage.errors import ReadOnlyError
from nimlab.storage.held import seen_within

__all__ = ["Claim", "ClaimState", "EngineClaims"]


@dataclass(frozen=True, slots=True)
class Claim:
    """Who works out a hint or analysis of a position, and what they found so far."""

    process: str
    """The claimant's process name."""
    answer: str | None
    """The answer found so far (JSON), or ``None`` while none is."""
    final: bool
    """Whether ``answer`` is the last one (no deeper search follows)."""


@dataclass(frozen=True, slots=True)
class ClaimState:
    """A claim as a process waiting for its answer looks at it: without the answer itself."""

    process: str
    """The claimant's process name."""
    count: int
    """The position claimed: its move count."""
    answered: int | None
    """The length of the answer found so far, or ``None`` while none is."""
    final: bool
    """Whether that answer is the last one."""
    alive: bool
    """Whether the claimant was seen within the ``alive`` seconds asked about."""


class EngineClaims:
    """The claims on engine work of one database (see the module docstring)."""

    def __init__(self, db: Database) -> None:
        self._db = db
        now = now_sql(db.dialect)
        self._alive = (
            "SELECT 1 FROM server_processes p WHERE p.process = engine_claims.process "
            f"AND {seen_within(now)}"
        )
        self._claim = (
            "INSERT INTO engine_claims (game_key, kind, move_count, process, answer, final) "
            "VALUES (?, ?, ?, ?, NULL, 0) ON CONFLICT (game_key, kind) DO UPDATE SET "
            "answer = CASE WHEN engine_claims.move_count = excluded.move_count "
            "THEN engine_claims.answer ELSE NULL END, "
            "move_count = excluded.move_count, process = excluded.process, final = 0 "
            "WHERE engine_claims.move_count <> excluded.move_count OR ("
            "engine_claims.final = 0 AND engine_claims.process <> excluded.process "
            f"AND NOT EXISTS ({self._alive}))"
        )

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> EngineClaims:
        """Claims on a connection of their own to the database at ``path`` (a file or a
        PostgreSQL URL). Raises :class:`~nimlab.storage.errors.StorageError` when the database
        cannot be used."""
        return cls(Database.open(path))

    def close(self) -> None:
        self._db.close()

    def claim(self, key: str, kind: str, count: int, process: str, alive: float) -> Claim:
        """Claim the ``kind`` (hint, analysis) of game ``key`` after ``count`` moves for
        ``process``, unless a live process (seen within ``alive`` seconds) holds that claim and
        has not given it up; returns the claim as it now is (``process`` is the asker's when it
        holds it; the answer found so far is kept when the position is the same). Raises
        :class:`~nimlab.storage.errors.StorageError` when the database cannot be used (or the
        game is not in play). One transaction, two statements."""
        if self._db.read_only:
            raise ReadOnlyError(f"the database {self._db.name} was opened read-only")
        try:
            with self._db.write() as conn:
                conn.execute(
                    self._claim, (key, kind, count, process, *now_params(self._db.dialect), alive)
                )
                row = conn.execute(
                    "SELECT process, answer, final FROM engine_claims "
                    "WHERE game_key = ? AND kind = ?",
                    (key, kind),
                ).fetchone()
        except DB_ERRORS as e:
            raise storage_error(e, "the engine's work could not be claimed") from None
        return Claim(str(row[0]), None if row[1] is None else str(row[1]), bool(row[2]))

    def look(self, key: str, kind: str, alive: float) -> ClaimState | None:
        """The claim on the ``kind`` of game ``key`` without its answer (``alive``: as in
        :meth:`claim`), or ``None`` when there is none: what a process waiting for another's
        answer reads between two looks, taking no lock (it claims only when the claim is for
        another position, given up, or its claimant died). One query."""
        try:
            row = self._db.conn.execute(
                f"SELECT process, move_count, length(answer), final, EXISTS ({self._alive}) "
                "FROM engine_claims WHERE game_key = ? AND kind = ?",
                (*now_params(self._db.dialect), alive, key, kind),
            ).fetchone()
        except DB_ERRORS as e:
            raise storage_error(e, "the engine's work could not be looked at") from None
        if row is None:
            return None
        answered = None if row[2] is None else int(row[2])
        return ClaimState(str(row[0]), int(row[1]), answered, bool(row[3]), bool(row[4]))

    def answer_of(self, key: str, kind: str, count: int) -> Claim | None:
        """The claim on the ``kind`` of game ``key`` after ``count`` moves with its answer, or
        ``None`` when there is none for that position. One query."""
        try:
            row = self._db.conn.execute(
                "SELECT process, answer, final FROM engine_claims "
                "WHERE game_key = ? AND kind = ? AND move_count = ?",
                (key, kind, count),
            ).fetchone()
        except DB_ERRORS as e:
            raise storage_error(e, "the engine's answer could not be read") from None
        if row is None:
            return None
        return Claim(str(row[0]), None if row[1] is None else str(row[1]), bool(row[2]))

    def answer(
        self, key: str, kind: str, count: int, process: str, answer: str, *, final: bool
    ) -> bool:
        """Store ``answer`` (JSON) of the claim ``process`` holds on the ``kind`` of game
        ``key`` after ``count`` moves (``final``: no deeper one follows); ``False`` when it no
        longer holds that claim (nothing stored). One statement."""
        try:
            with self._db.write() as conn:
                done = conn.execute(
                    "UPDATE engine_claims SET answer = ?, final = ? WHERE game_key = ? "
                    "AND kind = ? AND move_count = ? AND process = ?",
                    (answer, int(final), key, kind, count, process),
                )
                return bool(done.rowcount)
        except DB_ERRORS as e:
            raise storage_error(e, "the engine's answer could not be stored") from None

    def give_up(self, key: str, kind: str, count: int, process: str) -> None:
        """``process`` stops working out its claim (nobody wants the answer here): a claim
        with no answer is deleted (the next asker claims it), one with an answer keeps it as
        the last one. One transaction, two statements."""
        where = "game_key = ? AND kind = ? AND move_count = ? AND process = ?"
        params = (key, kind, count, process)
        try:
            with self._db.write() as conn:
                conn.execute(f"DELETE FROM engine_claims WHERE {where} AND answer IS NULL", params)
                conn.execute(f"UPDATE engine_claims SET final = 1 WHERE {where}", params)
        except DB_ERRORS as e:
            raise storage_error(e, "the engine's work could not be given up") from None
