"""The rate limits per client, counted once for every process serving one database.

:class:`LocalLimits` keeps the token buckets in this process's memory
(:class:`~nimlab.web.guard.RateLimiter`): exact when this process is the only one, as for an
in-memory database. :class:`SharedLimits` keeps them in the database
(:class:`~nimlab.storage.buckets.RateBuckets`), so that a client gets its limit once however many
processes (``nimlab serve --workers N``, or several servers on one database) its requests reach.
Both take a token of the client's bucket and one of its network's (:func:`network_of`), as
:meth:`RateLimiter.take_both <nimlab.web.guard.RateLimiter.take_both>` says.

What clients hold at once (WebSockets, connections: :class:`~nimlab.web.guard.Holdings`) is
counted by each process; :class:`SharedLimits` publishes its counts in the database every
:data:`SYNC_EVERY` seconds (:class:`~nimlab.storage.held.HeldCounts`) and tells each
:class:`~nimlab.web.guard.Holdings` what the other live processes hold, so a client's bound is
one for all of them (a client that opens many at once on several processes within one
:data:`SYNC_EVERY` may pass it by what it opened meanwhile).

To keep requests fast, :class:`SharedLimits` takes a client's tokens from the database a few at a
time (at most :data:`BATCH_SHARE` of the bucket, at least one) and spends them here; tokens taken
but not spent stay with their process, so with ``N`` processes a client gets between its limit
less and its limit plus ``N`` such batches (within 10 % for two processes). A bucket found empty
is remembered until the database said its next token comes, so a client over its limit costs no
database work. When the database cannot be used (or takes more than :data:`TAKE_WAIT` seconds to
answer), each process limits on its own, to ``1 / workers`` of each limit, until the database
answers again (tried again every :data:`RETRY_AFTER` seconds).
"""

from __future__ import annotations

import asyncio
import logging
import math
import secrets
import time
from dataclasses import dataclass
from typing import Protocol

from nimlab.storage import StorageError
from nimlab.storage.buckets import RateBuckets
from nimlab.storage.held import HeldCounts
from nimlab.web.errors import TooManyRequests
from nimlab.web.guard import Holdings, RateLimiter, network_of
from nimlab.web.metrics import RefusalLimit
from nimlab.web.own_connection import OwnConnection
from nimlab.web.settings import ServerSettings

__all__ = [
    "ALIVE",
    "BATCH_SHARE",
    "RETRY_AFTER",
    "SYNC_EVERY",
    "ClientLimits",
    "LocalLimits",
    "SharedLimits",
    "take_or_refuse",
]

log = logging.getLogger("nimlab.web")

BATCH_SHARE = 0.05
"""The most of a bucket one process takes from the database at once."""

RETRY_AFTER = 5.0
"""Seconds the limits stay per process after the database failed."""

TAKE_WAIT = 2.0
"""Seconds a request waits for the database's tokens before the database counts as failed (a
server that stopped answering: the request is limited per process instead)."""

SYNC_EVERY = 1.0
"""Seconds between two publications of what this process's clients hold."""

ALIVE = 10.0
"""A process that has not published for this many seconds is not counted (it was killed)."""

REPUBLISH_EVERY = 30
"""Every so many publications, all the counts are published, not only those that changed."""


class ClientLimits(Protocol):
    """Token buckets per client and per network of clients."""

    async def take_both(
        self, action: str, client: str, rate: float, burst: int, network_allowance: float
    ) -> float:
        """Take one token of ``client``'s bucket for ``action`` and one of its network's
        (``network_allowance`` times as large and as fast); 0 when both allowed, else the
        seconds until both have one."""
        ...

    def share(self, what: str, holdings: Holdings) -> None:
        """Count ``holdings`` (``what`` names them) with the other processes'."""
        ...

    async def run(self) -> None:
        """Keep the counts shared (a task of the server's, until cancelled)."""
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

    def share(self, what: str, holdings: Holdings) -> None:
        pass  # (this process is the only one)

    async def run(self) -> None:
        pass

    def close(self) -> None:
        pass


@dataclass(slots=True)
class _Held:
    """Tokens of one bucket this process took from the database and has not spent."""

    tokens: int = 0
    empty_until: float = -math.inf
    """Until then (``time.monotonic()``) the database has no token for this bucket."""
    refill: asyncio.Task[None] | None = None
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
        self._buckets = OwnConnection(lambda: RateBuckets.open(db), "nimlab-limits")
        self._held: dict[tuple[str, str], _Held] = {}
        self._fallback = RateLimiter()
        self._down_until = -math.inf
        self._down_said = -math.inf
        self.process = secrets.token_hex(8)
        """This process's name in the database's counts (one per start)."""
        self._shared: dict[str, Holdings] = {}
        self._published: dict[tuple[str, str], int] = {}
        self._syncs = 0

    def close(self) -> None:
        """Stop the thread and close the connection (tokens held are forgotten, the counts this
        process published are deleted)."""

        process = self.process
        leave = (lambda b: HeldCounts(b.db).leave(process)) if self._shared else None
        self._buckets.close(leave)

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
                await asyncio.wait_for(asyncio.shield(held.refill), TAKE_WAIT)
            except (StorageError, TimeoutError) as e:
                self._down(str(e) or f"no answer within {TAKE_WAIT:g} s")
            finally:
                held.waiting -= 1

    def _down(self, why: str) -> None:
        """The database failed: limit per process for :data:`RETRY_AFTER` seconds (said in the
        log at most once a minute)."""
        now = time.monotonic()
        if now >= self._down_until and now - self._down_said >= 60.0:
            self._down_said = now
            log.warning(
                "the rate limits are counted per process (1/%d of each) while the database "
                "cannot be used: %s",
                self.workers,
                why,
            )
        self._down_until = max(self._down_until, now + RETRY_AFTER)

    def _refill(
        self, held: _Held, action: str, client: str, rate: float, burst: int
    ) -> asyncio.Task[None]:
        """Take tokens from the database for ``held``: as many as wait for one (at least one),
        at most :data:`BATCH_SHARE` of the bucket unless more wait. The task counts them in
        ``held`` before it ends (a request that sees it done sees them)."""
        want = max(1, int(burst * BATCH_SHARE), held.waiting + 1)

        async def refill() -> None:
            try:
                taken, wait = await self._buckets.run(
                    lambda b: b.take(action, client, rate, burst, want)
                )
                held.tokens += taken
                if not taken:
                    held.empty_until = time.monotonic() + wait
            finally:
                held.refill = None

        return asyncio.ensure_future(refill())

    def share(self, what: str, holdings: Holdings) -> None:
        """See :class:`ClientLimits`."""
        self._shared[what] = holdings

    async def run(self) -> None:
        """Publish this process's counts and read the others' every :data:`SYNC_EVERY` seconds
        (:meth:`sync`), until cancelled; a failure is logged, and the next one tries again."""
        if not self._shared:
            return
        said = -math.inf
        while True:
            try:
                await self.sync()
            except StorageError as e:
                if time.monotonic() - said >= 60.0:
                    said = time.monotonic()
                    log.warning("the counts of connections could not be shared: %s", e)
            await asyncio.sleep(SYNC_EVERY)

    async def sync(self) -> None:
        """Publish what this process's clients hold (the counts that changed; all of them
        every :data:`REPUBLISH_EVERY`) and tell each shared
        :class:`~nimlab.web.guard.Holdings` what the other live processes hold. Raises
        :class:`~nimlab.storage.StorageError` when the database cannot be used. Two database
        round trips at most, O(addresses holding something)."""
        current = {
            (what, address): count
            for what, held in self._shared.items()
            for address, count in held.by_address.items()
        }
        published = {} if self._syncs % REPUBLISH_EVERY == 0 else self._published
        changed = {k: n for k, n in current.items() if published.get(k) != n}
        changed.update({k: 0 for k in self._published if k not in current})
        others = await self._buckets.run(lambda b: self._exchange(HeldCounts(b.db), changed))
        self._published = current
        self._syncs += 1
        elsewhere: dict[str, dict[str, int]] = {what: {} for what in self._shared}
        for (what, address), count in others.items():
            if what in elsewhere:
                elsewhere[what][address] = count
        for what, held in self._shared.items():
            held.held_elsewhere(elsewhere[what])

    def _exchange(
        self, counts: HeldCounts, changed: dict[tuple[str, str], int]
    ) -> dict[tuple[str, str], int]:
        """On the connection's thread: publish ``changed``, read the other processes' counts."""
        counts.publish(self.process, changed)
        return counts.others(self.process, ALIVE)

    def _forget(self) -> None:
        """Forget the least recently used buckets held here (none waiting for the database)
        until at most nine tenths of ``max_clients`` are left."""
        keep = self.max_clients * 9 // 10
        for key in list(self._held):
            if len(self._held) <= keep:
                break
            if self._held[key].refill is None:
                del self._held[key]


async def take_or_refuse(
    limits: ClientLimits, settings: ServerSettings, action: str, client: str | None
) -> None:
    """Take one of ``client``'s tokens for ``action`` (``create``, ``move``, ``register`` or
    ``read``, at the rates ``settings`` give) and one of its network's; raises
    :class:`~nimlab.web.errors.TooManyRequests` when either has none left (nothing for a
    request without a client)."""
    if client is None:
        return
    s = settings
    setting: RefusalLimit
    if action == "create":
        rate, burst, setting = s.create_rate / 60.0, s.create_burst, "create_rate"
    elif action == "register":
        rate, burst = s.register_per_hour / 3600.0, s.register_per_hour
        setting = "register_per_hour"
    elif action == "read":
        rate, burst, setting = s.read_rate, s.read_burst, "read_rate"
    else:
        rate, burst, setting = s.move_rate, s.move_burst, "move_rate"
    wait = await limits.take_both(action, client, rate, burst, s.network_allowance)
    if wait > 0:
        what = {"create": "new games", "register": "new players", "read": "requests"}.get(
            action, "moves"
        )
        raise TooManyRequests(
            f"too many {what} from {client}: try again in {max(1, round(wait))} s",
            retry_after=wait,
            limit=setting,
        )
