"""The hints and analyses shared by the processes serving one database (:class:`WorkClaims`):
one process works each out, the others wait for its answer (see
:mod:`nimlab.storage.claims`). Its database work runs on a thread and connection of its own.
"""

from __future__ import annotations

from nimlab.storage.claims import Claim, ClaimState, EngineClaims
from nimlab.web.own_connection import OwnConnection

__all__ = ["CLAIM_POLL", "WorkClaims"]

CLAIM_POLL = 0.1
"""Seconds between two looks at a claim another process holds (for its answer, or its end)."""


class WorkClaims:
    """The claims of this process (named ``process``, as it publishes that it is alive) on the
    engine work of the database at ``db``; a claim of a process not seen for ``alive`` seconds
    is taken over. Every method raises :class:`~nimlab.storage.StorageError` when the database
    cannot be used (the caller then works the answer out itself)."""

    def __init__(self, db: str, process: str, alive: float) -> None:
        self.db = db
        self.process = process
        self.alive = alive
        self._claims = OwnConnection(lambda: EngineClaims.open(db), "nimlab-claims")

    async def claim(self, key: str, kind: str, count: int) -> Claim:
        """Claim the ``kind`` of game ``key`` after ``count`` moves, or learn who holds it and
        what they found (:meth:`nimlab.storage.claims.EngineClaims.claim`)."""
        process, alive = self.process, self.alive
        return await self._claims.run(lambda c: c.claim(key, kind, count, process, alive))

    async def look(self, key: str, kind: str) -> ClaimState | None:
        """The claim on the ``kind`` of game ``key``, without its answer, taking no lock
        (:meth:`nimlab.storage.claims.EngineClaims.look`)."""
        alive = self.alive
        return await self._claims.run(lambda c: c.look(key, kind, alive))

    async def answer_of(self, key: str, kind: str, count: int) -> Claim | None:
        """The claim on the ``kind`` of game ``key`` after ``count`` moves, with its answer."""
        return await self._claims.run(lambda c: c.answer_of(key, kind, count))

    async def answer(self, key: str, kind: str, count: int, answer: str, *, final: bool) -> bool:
        """Store this process's answer to its claim; ``False`` when it no longer holds it."""
        process = self.process
        return await self._claims.run(
            lambda c: c.answer(key, kind, count, process, answer, final=final)
        )

    def give_up(self, key: str, kind: str, count: int) -> None:
        """Give up this process's claim (nobody here wants the answer any more), in the
        background: another process asking takes it over (on a failure, once this process's
        heartbeat stops)."""
        self._claims.submit(lambda c: c.give_up(key, kind, count, self.process))

    def close(self) -> None:
        """Finish what was handed to the thread, then close the connection."""
        self._claims.close()
