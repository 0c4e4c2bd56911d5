"""The rate limits per client, counted once for every process serving one database.

:class:`LocalLimits` keeps the token buckets in this process's memory
(:class:`~nimlab.web.guard.RateLimiter`): exact when this process is the only one, as for an
in-memory database. :class:`SharedLimits` keeps them in the database
(:class:`~nimlab.storage.buckets.RateBuckets`), so that a client gets its limit once however many
processes (``nimlab serve --workers N``, or several servers on one database) its requests reach.
Both take a token of the client's bucket and one of its network's (:func:`network_of`), as
:meth:`RateLimiter.take_both <nimlab.web.guard.RateLimiter.take_both>` says.

To keep requests fast, :class:`SharedLimits` takes a client's tokens from the database a few at a
time (at most :data:`BATCH_SHARE` of the bucket, at least one) and spends them here; tokens taken
but not spent stay with their process, so with ``N`` processes a client gets between its limit
less and its limit plus ``N`` such batches (within 10 % for two processes). A bucket found empty
is remembered until the database said its next token comes, so a client over its limit costs no
database work. When the database cannot be used, each process limits on its own, to
``1 / workers`` of each limit, until the database answers again (tried again every
:data:`RETRY_AFTER` seconds).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import math
import time
from dataclasses import dataclass
from typing import Protocol

from nimlab.storage import StorageError
from nimlab.storage.buckets import RateBuckets
from nimlab.web.guard import RateLimiter, network_of

__all__ = ["BATCH_SHARE", "RETRY_AFTER", "ClientLimits", "LocalLimits", "SharedLimits"]

log = logging.getLogger("nimlab.web")

BATCH_SHARE = 0.05
"""The most of a bucket one process takes from the database at once."""

RETRY_AFTER = 5.0
"""Seconds the limits stay per process after the database failed."""


class ClientLimits(Protocol):
    """Token buckets per client and per network of clients."""

    async def take_both(
        self, action: str, client: str, rate: float, burst: int, network_allowance: float
    ) -> float:
        """Take one token of ``client``'s bucket for ``action`` and one of its network's
        (``network_allowance`` times as large and as fast); 0 when both allowed, else the
        seconds until both have one."""
        ...

    def close(self) -> None:
        """Let go of what the limits hold (a database connection)."""
        ...


class LocalLimits:
    """The buckets in this process's memory (:class:`~nimlab.web.guard.RateLimiter`)."""

    def __init__(self) -> None:
        self.limiter = RateLimiter()

    async def take_both(
        self, action: str, client: str, rate: float, burst: int, network_allowance: float
    ) -> float:
        """See :class:`ClientLimits`. O(1)."""
        return self.limiter.take_both(action, client, rate, burst, network_allowance)

    def close(self) -> None:
        pass


@dataclass(slots=True)
class _Held:
    """Tokens of one bucket this process took from the database and has not spent."""

    tokens: int = 0
    empty_until: float = -math.inf
    """Until then (``time.monotonic()``) the database has no token for this bucket."""
    refill: asyncio.Future[tuple[int, float]] | None = None
    waiting: int = 0


class SharedLimits:
    """The buckets in the database at ``db`` (a file or a PostgreSQL URL), on one thread and
    connection of their own (see the module docstring). ``workers``: the processes that share
    the limits when the database cannot be used. Memory: at most ``max_clients`` buckets
    held here (the least recently used are forgotten, with their tokens)."""

    def __init__(self, db: str, *, workers: int = 1, max_clients: int = 10_000) -> None:
        self.db = db
        self.workers = max(1, workers)
        self.max_clients = max_clients
        self._buckets: RateBuckets | None = None
        self._thread = concurrent.futures.ThreadPoolExecutor(1, "nimlab-limits")
        self._held: dict[tuple[str, str], _Held] = {}
        self._fallback = RateLimiter()
        self._down_until = -math.inf

    def close(self) -> None:
        """Stop the thread and close the connection (tokens held are forgotten)."""

        def close() -> None:
            if self._buckets is not None:
                self._buckets.close()
                self._buckets = None

        self._thread.submit(close)
        self._thread.shutdown(wait=True)

    async def take_both(
        self, action: str, client: str, rate: float, burst: int, network_allowance: float
    ) -> float:
        """See :class:`ClientLimits`: both buckets in the database. O(1) with a token held
        here, else one database statement per bucket (on this object's thread)."""
        wait = await self.take(action, client, rate, burst)
        if wait > 0:
            return wait
        network = network_of(client)
        if network == client or network_allowance <= 0:
            return 0.0
        return await self.take(
            action + "@net",
            network,
            rate * network_allowance,
            max(burst, int(burst * network_allowance)),
        )

    async def take(self, action: str, client: str, rate: float, burst: int) -> float:
        """Take one token of the bucket ``(action, client)``: 0 when allowed, else the seconds
        until the next token."""
        if rate <= 0 or math.isinf(rate):
            return 0.0
        key = (action, client)
        held = self._held.get(key)
        if held is None:
            held = self._held[key] = _Held()
            if len(self._held) > self.max_clients:
                self._forget()
        else:  # the most recently used last: the first ones are forgotten first
            del self._held[key]
            self._held[key] = held
        while True:
            if held.tokens > 0:
                held.tokens -= 1
                return 0.0
            now = time.monotonic()
            if now < held.empty_until:
                return held.empty_until - now
            if now < self._down_until:
                return self._fallback.take(
                    action, client, rate / self.workers, max(1, burst // self.workers)
                )
            if held.refill is None:
                held.refill = self._refill(held, action, client, rate, burst)
            held.waiting += 1
            try:
                await asyncio.shield(held.refill)
            except StorageError as e:
                if time.monotonic() >= self._down_until:
                    log.warning(
                        "the rate limits are counted per process for %g s: the database "
                        "cannot be used (%s)",
                        RETRY_AFTER,
                        e,
                    )
                    self._down_until = time.monotonic() + RETRY_AFTER
            finally:
                held.waiting -= 1

    def _refill(
        self, held: _Held, action: str, client: str, rate: float, burst: int
    ) -> asyncio.Future[tuple[int, float]]:
        """Take tokens from the database for ``held``: as many as wait for one (at least one),
        at most :data:`BATCH_SHARE` of the bucket unless more wait."""
        want = max(1, int(burst * BATCH_SHARE), held.waiting + 1)
        future = asyncio.wrap_future(
            self._thread.submit(self._take, action, client, rate, burst, want)
        )

        def done(f: asyncio.Future[tuple[int, float]]) -> None:
            held.refill = None
            if f.cancelled() or f.exception() is not None:
                return
            taken, wait = f.result()
            held.tokens += taken
            if not taken:
                held.empty_until = time.monotonic() + wait

        future.add_done_callback(done)
        return future

    def _take(
        self, action: str, client: str, rate: float, burst: int, want: int
    ) -> tuple[int, float]:
        """On this object's thread: the database's take (the connection opened when first
        needed, and again after it failed)."""
        if self._buckets is None:
            self._buckets = RateBuckets.open(self.db)
        try:
            return self._buckets.take(action, client, rate, burst, want)
        except StorageError:
            self._buckets.close()
            self._buckets = None
            raise

    def _forget(self) -> None:
        """Forget the least recently used buckets held here (none waiting for the database)
        until at most nine tenths of ``max_clients`` are left."""
        keep = self.max_clients * 9 // 10
        for key in list(self._held):
            if len(self._held) <= keep:
                break
            if self._held[key].refill is None:
                del self._held[key]
