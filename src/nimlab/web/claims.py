"""The hints and analyses shared by the processes serving one database (:class:`WorkClaims`):
one process works each out, the others wait for its answer (see
:mod:`nimlab.storage.claims`). Its database work runs on a thread and connection of its own.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Callable
from typing import TypeVar

from nimlab.storage import StorageError
from nimlab.storage.claims import Claim, EngineClaims

__all__ = ["CLAIM_POLL", "WorkClaims"]

T = TypeVar("T")

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
        self._claims: EngineClaims | None = None
        self._thread = concurrent.futures.ThreadPoolExecutor(1, "nimlab-claims")

    async def _run(self, fn: Callable[[EngineClaims], T]) -> T:
        def run() -> T:
            if self._claims is None:
                self._claims = EngineClaims.open(self.db)
            try:
                return fn(self._claims)
            except StorageError:
                self._claims.close()  # (opened again for the next one)
                self._claims = None
                raise

        return await asyncio.wrap_future(self._thread.submit(run))

    async def claim(self, key: str, kind: str, count: int) -> Claim:
        """Claim the ``kind`` of game ``key`` after ``count`` moves, or learn who holds it and
        what they found (:meth:`nimlab.storage.claims.EngineClaims.claim`)."""
        return await self._run(lambda c: c.claim(key, kind, count, self.process, self.alive))

    async def answer(self, key: str, kind: str, count: int, answer: str, *, final: bool) -> bool:
        """Store this process's answer to its claim; ``False`` when it no longer holds it."""
        return await self._run(
            lambda c: c.answer(key, kind, count, self.process, answer, final=final)
        )

    def give_up(self, key: str, kind: str, count: int) -> None:
        """Give up this process's claim (nobody here wants the answer any more), in the
        background: another process asking takes it over."""
        self._thread.submit(self._give_up, key, kind, count)

    def _give_up(self, key: str, kind: str, count: int) -> None:
        try:
            if self._claims is None:
                self._claims = EngineClaims.open(self.db)
            self._claims.give_up(key, kind, count, self.process)
        except StorageError:  # (the claim ends with its process's heartbeat)
            if self._claims is not None:
                self._claims.close()
                self._claims = None

    def close(self) -> None:
        """Finish what was handed to the thread, then close the connection."""

        def close() -> None:
            if self._claims is not None:
                self._claims.close()
                self._claims = None

        self._thread.submit(close)
        self._thread.shutdown(wait=True)
