"""Games in play on the server: the server owns every game; browsers send move requests.

:class:`LiveGames` is the registry of the games one process holds (``games``), with the
database behind them (a :class:`~nimlab.storage.LoopWriter` that group-commits the writes of many
games, and a reader), the engine's workers (:class:`~nimlab.web.work.EngineWorkers`: bots, hints,
analyses and setup checks within budgets, fairly shared between games and clients) and its parts:

- :class:`~nimlab.web.owner.GameOwner` (``owner``): the one owner of a game's changes: moves,
  bots' turns, take-backs, ends, expiry, seat tokens, and the stored version of each copy;
- :class:`~nimlab.web.moves.MoveRequests` (``moves``): a human's move request judged (the
  owner plays it);
- :class:`~nimlab.web.starts.GameStarts` (``starts``): a setup checked, a game started;
- :class:`~nimlab.web.bots_driver.BotDriver` (``bots``): the bots' moves;
- :class:`~nimlab.web.watchers.Watchers` (``watchers``): the open pages (WebSockets);
- :class:`~nimlab.web.learning.Learnings` (``learning``): hints and analyses;
- :class:`~nimlab.web.feed_follower.FeedFollower` (``follower``): the changes other processes
  make, told by the change feed.

A restart reads the games in progress back from the database and replays them with the core
(``Game.from_record``), so every unfinished game resumes where it was.

Several processes may serve one database (``nimlab serve --workers N``, or several machines):
the database holds the truth. A process keeps copies of the games it serves, each with the
version it reflects (``LiveGame.stored``); every change is written only against that version (the
storage's fence, :class:`~nimlab.storage.StaleGameError` otherwise), and a change refused so is
judged again against the game read afresh (:meth:`FeedFollower.sync`). See docs/architecture.md.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import threading
from collections import deque
from collections.abc import Callable
from typing import Any, TypeVar

from nimlab.storage import (
    ChangeFeed,
    LoopWriter,
    StaleGameError,
    StorageError,
    Store,
)
from nimlab.web import metrics
from nimlab.web.bots_driver import BotDriver
from nimlab.web.claims import WorkClaims
from nimlab.web.errors import ApiError, NotFound, Unavailable
from nimlab.web.feed_follower import FeedFollower
from nimlab.web.guard import Holdings
from nimlab.web.learning import Learnings
from nimlab.web.limits import ALIVE, ClientLimits, LocalLimits, SharedLimits, take_or_refuse
from nimlab.web.livegame import (
    LiveGame,
    Stale,
    Superseded,
    build_game,
    database_down,
    ended_text,
    engine_waits,
    state_json_of,
    status_of,
)
from nimlab.web.moves import MoveRequests
from nimlab.web.owner import GameOwner
from nimlab.web.schemas_in import MAX_STONES
from nimlab.web.settings import ServerSettings
from nimlab.web.starts import GameStarts
from nimlab.web.watchers import Watchers, give_back_memory
from nimlab.web.work import EngineBusy, EngineWorkers

__all__ = [
    "MAX_STONES",
    "LiveGame",
    "LiveGames",
    "Stale",
    "Superseded",
    "build_game",
    "ended_text",
    "engine_waits",
    "give_back_memory",
]

log = logging.getLogger("nimlab.web")

T = TypeVar("T")

KEEP_FINISHED = 500
"""Finished games kept in memory (their pages still show the end); older ones are dropped."""

LIST_SPARE = 8
"""A page of the public games reads this many more, to fill the places of games whose end is
being stored (the database lists them until it is)."""


class LiveGames:
    """The registry of the games a process holds (``games``: key to :class:`LiveGame`), the
    database behind them and the engine's workers (see
    :class:`~nimlab.web.settings.ServerSettings` for the bounds). Its parts: ``owner``
    (:class:`~nimlab.web.owner.GameOwner`: every change of a game), ``moves``
    (:class:`~nimlab.web.moves.MoveRequests`: a human's move request judged), ``starts``
    (:class:`~nimlab.web.starts.GameStarts`: new games), ``bots``
    (:class:`~nimlab.web.bots_driver.BotDriver`), ``watchers``
    (:class:`~nimlab.web.watchers.Watchers`: the open pages), ``learning``
    (:class:`~nimlab.web.learning.Learnings`: hints and analyses) and ``follower``
    (:class:`~nimlab.web.feed_follower.FeedFollower`: what other processes change)."""

    def __init__(self, db: str | None, settings: ServerSettings | None = None) -> None:
        self.settings = settings or ServerSettings()
        self.db = db if db is not None else self.settings.db
        self.games: dict[str, LiveGame] = {}
        self._finished: deque[str] = deque()  # keys of finished games kept, oldest first
        self.workers: EngineWorkers | None = None
        self._writer: LoopWriter | None = None
        self._reader: Store | None = None
        self._read_lock = threading.Lock()
        self._tasks: set[asyncio.Task[Any]] = set()
        self.limits: ClientLimits = LocalLimits()
        """The rate limits per client: in the database when other processes may serve it."""
        self.claims: WorkClaims | None = None
        """The hints and analyses shared with the other processes serving the database."""
        self.held: dict[str, Holdings] = {}
        """What clients hold at once, by kind, counted with the other processes' (the server
        and the app add theirs before :meth:`start`)."""
        self._feed: ChangeFeed | None = None
        self.feed_thread: concurrent.futures.ThreadPoolExecutor | None = None
        self.owner = GameOwner(self)
        self.moves = MoveRequests(self)
        self.starts = GameStarts(self)
        self.bots = BotDriver(self)
        self.watchers = Watchers(self)
        self.learning = Learnings(self)
        self.follower = FeedFollower(self)

    @property
    def has_feed(self) -> bool:
        """Whether other processes may change the games (a database file or server, with its
        change feed); ``False`` for an in-memory database, whose copies are the truth."""
        return self._feed is not None

    # -- lifetime -----------------------------------------------------------------------------

    async def start(self) -> None:
        """Open the database, delete the expired games in progress and resume every other one
        the bound on games in play allows (the most recently played first; see
        :class:`nimlab.storage.InPlayLimits`), then sweep expired games every
        ``expiry_interval`` seconds (a setting) while serving."""
        s = self.settings
        self.workers = EngineWorkers(
            s.engine_threads,
            per_client=s.engine_jobs_per_client,
            network_allowance=s.network_allowance,
            bots_only=s.bots_only_threads,
        )
        store = Store.open(self.db, limits=self.settings.in_play_limits())
        self._writer = LoopWriter(store, observe=metrics.db_commit)
        if store.path != ":memory:":
            self.limits = SharedLimits(str(store.path), workers=s.workers)
            self.claims = WorkClaims(str(store.path), self.limits.process, ALIVE)
            self.held["sockets"] = self.watchers.sockets
            for what, holdings in self.held.items():
                self.limits.share(what, holdings)
            self.spawn(self.limits.run(), "shared counts")
            self._reader = Store.open(store.path)
            # listening before reading: no change committed after the games are read is missed
            self._feed = ChangeFeed.open(store.path)
            metrics.change_feed(up=True)
            self.feed_thread = concurrent.futures.ThreadPoolExecutor(1, "nimlab-feed")
        await self.owner.expire()
        await self.starts.resume(store.in_play.limits.max_games)
        self.spawn(self._expire_loop(), "expiry")
        if self._feed is not None:
            self.spawn(self.follower.follow(self._feed), "change feed")

    def spawn(self, coro: Any, name: str) -> asyncio.Task[Any]:
        """Run ``coro`` in a task of the server's (cancelled when it stops)."""
        task = asyncio.create_task(coro, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _expire_loop(self) -> None:
        while True:
            await asyncio.sleep(self.settings.expiry_interval)
            try:
                await self.owner.expire()
            except ApiError as e:  # the database is busy: try again at the next sweep
                log.warning("expiry of games in play failed: %s", e.message)

    async def stop(self) -> None:
        """Stop the bots and the engine work, write what is pending and close the database."""
        self.watchers.close()
        if self.workers is not None:
            self.workers.stop()
        tasks = [lg.driver for lg in self.games.values() if lg.driver and not lg.driver.done()]
        tasks += [t for t in self._tasks if not t.done()]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(BaseException):
                await task
        loop = asyncio.get_running_loop()
        if self.workers is not None:  # cancelled work ends at the engine's next budget check
            await loop.run_in_executor(None, self.workers.join, 10.0)
        if self._writer is not None:
            await self._writer.close()
        self.limits.close()
        if self.claims is not None:
            self.claims.close()
        if self._reader is not None:
            self._reader.close()
        if self.feed_thread is not None:
            if self._feed is not None:  # its wait ends now, not at its timeout
                self._feed.interrupt()
            self.feed_thread.shutdown(wait=True)
        if self._feed is not None:
            self._feed.close()

    @property
    def writer(self) -> LoopWriter:
        if self._writer is None:
            raise Unavailable("the server is starting or stopping")
        return self._writer

    async def read(self, fn: Callable[[Store], T]) -> T:
        """Run a read on a database connection of its own (on the writer for ``:memory:``)."""
        reader = self._reader
        if reader is None:
            return await self.storage(self._submit(fn))

        def run() -> T:
            with self._read_lock:
                return fn(reader)

        return await self.storage(asyncio.get_running_loop().run_in_executor(None, run))

    async def write(self, fn: Callable[[Store], T]) -> T:
        """Run a write in the writer's next group (answered once it is committed)."""
        return await self.storage(self._submit(fn))

    def _submit(self, fn: Callable[[Store], T]) -> asyncio.Future[T]:
        return self.queued(lambda: self.writer.submit(fn))

    @staticmethod
    def queued(job: Callable[[], asyncio.Future[T]]) -> asyncio.Future[T]:
        """A job handed to the writer; Unavailable when its queue is full or it is closed."""
        try:
            return job()
        except StorageError as e:
            raise database_down("the database cannot be used now", e) from None

    @staticmethod
    async def storage(future: asyncio.Future[T]) -> T:
        try:
            return await future
        except StaleGameError:
            raise
        except StorageError as e:
            raise database_down("the database cannot be used now", e) from None

    async def compute(
        self,
        owner: str,
        kind: str,
        fn: Callable[[], T],
        *,
        client: str | None = None,
        deep: bool = False,
        bots_only: bool = False,
        wanted: Callable[[], bool] | None = None,
    ) -> T:
        """Run engine work for ``owner`` (a game's key, or a client) on the engine's workers,
        within the settings' budget (``deep``: the longer one; ``bots_only``: a move of a game
        of bots only, which share ``bots_only_threads`` of them; ``wanted``: whether it is
        still wanted when its turn comes, see :attr:`~nimlab.web.work.Job.wanted`). Raises
        :class:`Superseded` when it was cancelled, :class:`Unavailable` when the engine is
        stopping or overloaded."""
        workers = self.workers
        if workers is None:
            raise Unavailable("the server is starting or stopping")
        s = self.settings
        try:
            job = workers.submit(
                owner,
                kind,
                fn,
                seconds=s.deep_seconds if deep else s.move_seconds,
                positions=s.job_positions,
                client=client,
                deep=deep,
                bots_only=bots_only,
                wanted=wanted,
            )
        except EngineBusy as e:
            raise Unavailable(str(e)) from None
        try:
            return await asyncio.wrap_future(job.future)
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                workers.cancel_job(job)  # the caller went away: stop the work
                raise
            raise Superseded(f"{kind} for {owner} was cancelled") from None

    # -- games --------------------------------------------------------------------------------

    async def lookup(self, key: str, *, fresh: bool = True) -> LiveGame:
        """The game with this id, in play or finished; a game in play that this process does
        not hold yet (started on another one) is read from the database; a game that finished
        (or was resigned or abandoned) before the last restart, or was dropped from memory
        since, is read back from the store as a finished game with its seats' tokens, so its old
        link still leads to it. With ``fresh``, a game in play held here is first checked
        against the database (one indexed read) and read again when another process changed it.
        The game returned is the one held here when this returns (a copy dropped meanwhile is
        not: see :meth:`~nimlab.web.feed_follower.FeedFollower.refresh_soon`).
        Raises :class:`NotFound`. O(1) in memory; else a read and a replay on the workers."""
        lg = self.games.get(key)
        if lg is not None:
            if fresh and self._feed is not None:
                await self.follower.changed_elsewhere(lg)
                if self.games.get(key) is not lg:
                    # dropped meanwhile (changed elsewhere, and nothing here held it): a page
                    # that watched the copy dropped would never be told of a change again
                    return await self.lookup(key)
            return lg
        if len(key) > 64:
            raise NotFound(f"there is no game {key!r} in play (finished games are in the history)")
        if self._feed is not None:
            lg = await self.starts.from_elsewhere(key)
            if lg is not None:
                return lg
        return await self.starts.restored(key)

    async def public_games(self, limit: int, offset: int = 0) -> list[LiveGame]:
        """The games in play their players made public, newest first: ``limit`` of them after
        the first ``offset``. The list is the database's, so every process serving it lists the
        same games; each game is this process's copy, read afresh when another process changed
        it, or read when this process holds none. A game whose end is being stored is left out,
        and the next listed one takes its place (up to :data:`LIST_SPARE` of them per page).
        One read, plus one per game changed elsewhere (and its replay)."""
        listed = await self.read(
            lambda s: s.public_games_in_play(limit=limit + LIST_SPARE, offset=offset)
        )
        games: list[LiveGame] = []
        for key, version in listed:
            if len(games) == limit:
                break
            lg = self.games.get(key)
            try:
                if lg is None:
                    lg = await self.lookup(key, fresh=False)
                elif version > lg.stored and lg.saved_as is None:
                    async with lg.lock:
                        changed = await self.follower.sync(lg)
                    if changed:
                        self.follower.after_sync(lg)
            except NotFound:  # it left the games in play meanwhile
                continue
            if lg.public and not lg.game.is_over and lg.ended is None and lg.saved_as is None:
                games.append(lg)
        return games

    def state_json(self, lg: LiveGame, since: int | None = None) -> bytes:
        """See :func:`~nimlab.web.livegame.state_json_of`."""
        return state_json_of(lg, since)

    def status(self, lg: LiveGame) -> str:
        """The game's one-line status. O(1)."""
        return status_of(lg)

    def remember(self, lg: LiveGame) -> None:
        """Hold game ``lg`` (a new one; older finished games may be forgotten)."""
        self.games[lg.key] = lg
        self._forget_old()

    def finished(self, key: str) -> None:
        """Game ``key`` is stored as finished: its copy is kept (its link answers without a
        read) among the last :data:`KEEP_FINISHED` finished games."""
        self._finished.append(key)
        self._forget_old()

    def _forget_old(self) -> None:
        """Keep at most :data:`KEEP_FINISHED` finished games in memory (their links answer
        without a database read). O(1) amortised."""
        while len(self._finished) > KEEP_FINISHED:
            key = self._finished.popleft()
            lg = self.games.get(key)
            if lg is not None and lg.saved_as is not None:
                del self.games[key]

    # -- limits -------------------------------------------------------------------------------

    async def limit(self, action: str, client: str | None) -> None:
        """Take one of the client's tokens for ``action``, counted with every process serving
        the database (:func:`~nimlab.web.limits.take_or_refuse`)."""
        await take_or_refuse(self.limits, self.settings, action, client)
