"""Games in play on the server: the server owns every game; browsers send move requests.

- :class:`LiveGames` keeps the games in memory, checks who may move (seat tokens), asks the core
  to play the move (the core's error, and nothing changed, when it is illegal), lets bots reply,
  saves every move before answering, and pushes what changed to every open page (WebSockets):
  the new moves and board, and hints and analyses proven after their request was answered.
- Engine work (bots, hints, analyses, setup checks) runs on :class:`~nimlab.web.work.EngineWorkers`
  within budgets, fairly shared between games and clients, and is cancelled when its game moves
  on, ends or goes away.
- :class:`~nimlab.storage.LoopWriter` runs the writes on the event loop's thread (no second thread
  competing for the interpreter) and commits the moves of many games together (group commit), so
  50 games cost one disk flush, not 50; only the disk flush waits on a thread of its own.

A restart reads the games in progress back from the database and replays them with the core
(``Game.from_record``), so every unfinished game resumes where it was.

Several processes may serve one database (``nimlab serve --workers N``, or several machines):
the database holds the truth. A process keeps copies of the games it serves, each with the
version it reflects (``LiveGame.stored``); every change is written only against that version (the
storage's fence, :class:`~nimlab.storage.StaleGameError` otherwise), and a change refused so is
judged again against the game read afresh (:meth:`LiveGames.sync`). The change feed
(:class:`~nimlab.storage.ChangeFeed`) tells every process of every committed change, which then
reads the game and tells its open pages; a request for a game's state checks its version first
(one indexed read), so it sees every acknowledged move whichever process played it. A bot's move
is played by the process that played the move before it; another one takes over a game whose bot
nobody played for ``takeover_grace`` seconds.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import ctypes
import ctypes.util
import gc
import hashlib
import hmac
import json
import logging
import math
import secrets
import sqlite3
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from nimlab.core.bots import Choice
from nimlab.core.errors import (
    GameOverError,
    InvalidMoveError,
    NimlabError,
    PlayerError,
)
from nimlab.core.game import Game
from nimlab.core.narrate import wins_text
from nimlab.core.players import Player, player_from
from nimlab.core.position import Move
from nimlab.core.record import GameRecord, RecordedMove
from nimlab.core.setup import GameSetup
from nimlab.storage import (
    ChangeFeed,
    Changes,
    Ending,
    LimitError,
    LoopWriter,
    PlayerRecord,
    RecordError,
    StaleGameError,
    StorageError,
    Store,
    TooManyGamesInPlayError,
    check_username,
    ending_of,
)
from nimlab.theory.budget import BudgetExceeded
from nimlab.web import metrics
from nimlab.web.errors import (
    ApiError,
    Conflict,
    Forbidden,
    NotFound,
    TooManyRequests,
    Unavailable,
)
from nimlab.web.guard import Holdings, RateLimiter
from nimlab.web.schemas import (
    MAX_STONES,
    TURN_PAGE,
    AnalysisOut,
    GameStateOut,
    HintOut,
    MoveIn,
    MoveOut,
    PlayerIn,
    SetupIn,
)
from nimlab.web.settings import ServerSettings
from nimlab.web.views import (
    analysis_after,
    analysis_out,
    blank_analysis,
    hint_out,
    legal_moves_out,
    moves_for_json,
    state_data,
    state_json,
    status_text,
)
from nimlab.web.work import EngineBusy, EngineWorkers

__all__ = ["MAX_STONES", "LiveGame", "LiveGames", "Superseded", "build_game", "ended_text"]

log = logging.getLogger("nimlab.web")

T = TypeVar("T")

KEEP_FINISHED = 500
"""Finished games kept in memory (their pages still show the end); older ones are dropped."""

READ_AGAIN = 0.5
"""Seconds before a game whose reading failed (the database down) is read again."""

LIST_SPARE = 8
"""A page of the public games reads this many more, to fill the places of games whose end is
being stored (the database lists them until it is)."""


def _malloc_trim() -> Callable[[int], int] | None:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim: Callable[[int], int] = libc.malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None
    return trim


_TRIM = _malloc_trim()


def give_back_memory(*, collect: bool = True) -> None:
    """Collect the garbage cycles (connections leave some; ``collect=False``: not, e.g. on an
    engine thread, where it would hold the interpreter lock) and hand the free memory back to
    the system (glibc keeps it otherwise), so memory returns when connections close. A few ms."""
    if collect:
        gc.collect()
    if _TRIM is not None:
        _TRIM(0)


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


# -- building a game from a setup ---------------------------------------------------------------


def _player(spec: PlayerIn, registered: dict[str, PlayerRecord]) -> tuple[Player, str | None]:
    if spec.username is not None:
        record = registered[spec.username]
        return record.as_player(), record.username
    return player_from(spec.kind, spec.name, depth=spec.depth, error=spec.error), None


def build_game(
    setup: SetupIn, registered: dict[str, PlayerRecord]
) -> tuple[Game, list[str | None]]:
    """The game a setup describes and the registered username at each seat. Every check is the
    core's (:class:`~nimlab.core.setup.GameSetup`, typed errors with its messages), with the web
    app's limit of :data:`MAX_STONES` stones on rows. ``registered`` maps each username in the
    setup to its registry record."""
    seats = [_player(p, registered) for p in setup.players]
    game = GameSetup.from_options(
        game=setup.game,
        misere=setup.misere,
        end_positions=setup.end_positions,
        piles=setup.piles,
        players=[p for p, _ in seats],
        first=setup.first,
        seed=setup.seed,
        max_stones=MAX_STONES,
    ).build()
    return game, [u for _, u in seats]


def ended_text(players: list[Player], ending: Ending) -> str:
    """How a game stopped, in words: "Bob resigned. Ann wins!", "Cy resigned: Ann and Bob win.",
    "Abandoned by Ann: nobody wins." O(players)."""
    name = players[ending.seat].name
    if ending.how == "abandoned":
        return f"Abandoned by {name}: nobody wins."
    winners = [players[s] for s in ending.winners]
    if len(winners) == 1:
        return f"{name} resigned. {wins_text(winners[0])}"
    names = ", ".join(p.name for p in winners[:-1]) + f" and {winners[-1].name}"
    return f"{name} resigned: {names} win."


# -- games in play ------------------------------------------------------------------------------


def _database_down(public: str, error: BaseException) -> Unavailable:
    """The 503 answer to a database error: ``public`` alone for the client, the error itself
    (which may name the database's user, host, port and name) in the log, where the request's
    id ties it to the answer; counted in ``nimlab_db_errors_total``."""
    metrics.database_error()
    log.warning("%s: %s", public, error)
    return Unavailable(public)


class Superseded(RuntimeError):
    """The answer is no longer wanted: the game moved on, ended or went away."""


class Stale(Conflict):
    """This process's copy of a game was older than the database's: the change was not written
    (read the game again and judge the change afresh; a 409 if it reaches a client)."""


class _Subscriber:
    """An open page. It is sent what changed since its last message: the state with the new
    turns only (``dirty``), then any pushed hint or analysis (at most a few kept)."""

    def __init__(self, sent: int) -> None:
        self.sent = sent
        self.dirty = False
        self.extra: deque[str] = deque(maxlen=4)
        self.event = asyncio.Event()

    def changed(self) -> None:
        self.dirty = True
        self.event.set()

    def push(self, text: str) -> None:
        self.extra.append(text)
        self.event.set()


@dataclass(eq=False)
class _Learning:
    """A hint or an analysis for move ``count``: the quick answer, then maybe a deeper one."""

    count: int
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    result: Any = None
    error: BaseException | None = None
    late: bool = False
    task: asyncio.Task[None] | None = None
    waiting: int = 0
    """Requests waiting for it now (with the game's open pages: who still wants it)."""


@dataclass(eq=False)
class LiveGame:
    """A game in play and what the server knows around it."""

    key: str
    game: Game
    usernames: list[str | None]
    token_hashes: dict[int, str]
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    subscribers: set[_Subscriber] = field(default_factory=set)
    saved: int = 0
    saved_as: int | None = None
    finishing: bool = False
    thinking: bool = False
    driver: asyncio.Task[None] | None = None
    learning: dict[str, _Learning] = field(default_factory=dict)
    problem: str | None = None
    """Why the game cannot go on (a bot failed to move); shown to everyone watching."""
    client: str | None = None
    """Who started it (a network address), for the engine's fair share."""
    version: int = 0
    rendered: dict[tuple[int, int], str] = field(default_factory=dict)
    ended: str | None = None
    """Why the game stopped before its end (resigned, abandoned): it is no longer in play."""
    ended_winner: int | None = None
    takebacks: int = 0
    analysis_allowed: bool = True
    """The setup's choice: hints and values during play in a game between people."""
    public: bool = False
    """The setup's choice: listed among the games in play for anyone to watch."""
    owner_hash: str | None = None
    """A game of bots only: the hash of the token that stops it (given to its creator)."""
    seen: float = field(default_factory=time.monotonic)
    """When someone last asked for the game (a request for its state, an open page)."""
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    """Set when someone looks at a paused game of bots only."""
    paused: bool = False
    writing: set[asyncio.Future[Any]] = field(default_factory=set)
    """Writes of this game handed to the writer and not done yet (a change fenced by the version
    waits for them: each one moves the version on when it commits)."""
    stored: int = 0
    """The game's version in the database that this copy reflects (see the module docstring)."""
    refreshing: bool = False
    """A read of the game from the database is under way (changes announced meanwhile wait)."""
    refresh_again: bool = False

    @property
    def bots_only(self) -> bool:
        """Whether every seat is a bot's (such a game plays only while someone watches it)."""
        return all(p.is_bot for p in self.game.players)

    @property
    def analysis_open(self) -> bool:
        """Whether hints and move values may be asked now: always after the game and in games
        with at most one human; during a game between people only if the setup allows it."""
        humans = sum(1 for p in self.game.players if not p.is_bot)
        return self.analysis_allowed or humans < 2 or self.game.is_over or self.ended is not None

    def check_token(self, seat: int, token: str) -> bool:
        expected = self.token_hashes.get(seat)
        return expected is not None and hmac.compare_digest(expected, _hash(token))

    @property
    def human_active(self) -> bool:
        """Whether a human still plays (bots then answer at once; else they play paced)."""
        return any(not self.game.players[s].is_bot for s in self.game.active)


def _same_move(done: Move, req: MoveIn) -> bool:
    """Whether a retried request names the move that was played (text: any move of its seat)."""
    if req.text is not None:
        return True
    also = tuple(tuple(p) for p in req.also or ())
    return (done.pile, done.take, done.at, done.also) == (req.pile, req.take, req.at, also)


class LiveGames:
    """Every game in play, the database behind them, and the engine's workers (see
    :class:`~nimlab.web.settings.ServerSettings` for the bounds)."""

    def __init__(self, db: str | None, settings: ServerSettings | None = None) -> None:
        self.db = db
        self.settings = settings or ServerSettings()
        self.games: dict[str, LiveGame] = {}
        self._finished: deque[str] = deque()  # keys of finished games kept, oldest first
        self.workers: EngineWorkers | None = None
        self._writer: LoopWriter | None = None
        self._reader: Store | None = None
        self._read_lock = threading.Lock()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._limiter = RateLimiter()
        self._sockets = Holdings.of("sockets", self.settings)  # per client and network
        self._released = 0  # WebSockets closed since memory was last given back
        self._trim: asyncio.TimerHandle | None = None
        self._trim_since = 0.0
        self._feed: ChangeFeed | None = None
        self._feed_thread: concurrent.futures.ThreadPoolExecutor | None = None

    @property
    def bot_pace(self) -> float:
        return self.settings.bot_pace

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
        )
        store = Store.open(self.db, limits=self.settings.in_play_limits())
        self._writer = LoopWriter(store, observe=metrics.db_commit)
        if store.path != ":memory:":
            self._reader = Store.open(store.path)
            # listening before reading: no change committed after the games are read is missed
            self._feed = ChangeFeed.open(store.path)
            metrics.change_feed(up=True)
            self._feed_thread = concurrent.futures.ThreadPoolExecutor(1, "nimlab-feed")
        await self.expire()
        cap = store.in_play.limits.max_games
        held = await self.read(lambda s: s.count_games_in_play())
        entries = await self.read(lambda s: s.live_games_with_versions(limit=cap))
        resumed = 0  # of the games read, the ones that go on (others ended or do not replay)
        for (key, record, meta), version in entries:
            lg = self._resumed(key, record, meta, version)
            if lg is None:
                continue
            self.games[key] = lg
            resumed += not lg.game.is_over
            if lg.game.is_over:
                with contextlib.suppress(Stale):  # finished by another process meanwhile
                    await self._finish(lg)
            else:
                self._ensure_driver(lg, grace=self._grace)
        if held > cap:
            log.warning(
                "%d games are in play but the bound is %d: the %d played least recently stay "
                "stored (not resumed) until they expire",
                held,
                cap,
                held - cap,
            )
        # the count was read before the games: other processes may have started some in
        # between ("resumed 10 of 7 games in play"); those read are in play too
        log.info("resumed %d of %d games in play", resumed, max(held, len(entries)))
        self._spawn(self._expire_loop(), "expiry")
        if self._feed is not None:
            self._spawn(self._follow(self._feed), "change feed")

    @property
    def _grace(self) -> float:
        """How long a game's bot waits for another process to play it (see ``takeover_grace``):
        longer than a game of bots only waits between its moves."""
        return self.settings.takeover_grace + self.settings.bot_pace

    def _resumed(
        self, key: str, record: dict[str, Any], meta: dict[str, Any], version: int
    ) -> LiveGame | None:
        """A game in play as read from the database (``None``, logged, when it does not
        replay)."""
        try:
            game = Game.from_record(record)
        except NimlabError as e:
            log.warning("game %s cannot be resumed: %s", key, e)
            return None
        players = len(game.players)
        usernames = list(meta.get("usernames") or [None] * players)[:players]
        hashes = {int(k): str(v) for k, v in (meta.get("tokens") or {}).items()}
        lg = LiveGame(key, game, usernames, hashes, saved=len(record["moves"]), stored=version)
        self._restore(lg, meta)
        return lg

    # -- games changed by other processes -----------------------------------------------------

    async def _follow(self, feed: ChangeFeed) -> None:
        """Read the change feed for as long as the server runs: every game held here that
        another process changed is read again and its pages told (all of them after the feed
        was lost for a while). The feed is closed by :meth:`stop`, once its thread is done."""
        loop = asyncio.get_running_loop()
        failing = False
        while True:
            try:
                found: Changes = await loop.run_in_executor(self._feed_thread, feed.wait, 0.5)
            except (StorageError, sqlite3.Error) as e:
                if not failing:
                    log.warning("the change feed lost the database (%s): retrying", e)
                    metrics.change_feed(up=False)
                failing = True
                await asyncio.sleep(0.5)
                continue
            if failing:
                log.info("the change feed is back: reading every game held again")
                metrics.change_feed(up=True)
                failing = False
            if found.resync:
                for lg in list(self.games.values()):
                    self._refresh_soon(lg, None)
            for change in found.changes:
                held = self.games.get(change.key)
                if held is not None:
                    self._refresh_soon(held, change.version)

    def _refresh_soon(self, lg: LiveGame, version: int | None) -> None:
        """Read game ``lg`` again when it is older than ``version`` (``None``: in any case), in
        a task of its own; changes announced while it reads make it read once more. A copy that
        no page watches and no bot plays here is dropped instead."""
        if lg.saved_as is not None or (version is not None and version <= lg.stored):
            return
        if version is not None and lg.writing:
            # a write of this process is on its way: the announcement may be its own commit,
            # heard before the copy followed it (its callback); judged once the writes are done
            pending = next(iter(lg.writing))
            pending.add_done_callback(lambda _: self._refresh_soon(lg, version))
            return
        idle = lg.driver is None or lg.driver.done()
        if not lg.subscribers and idle and not lg.lock.locked() and not lg.refreshing:
            # nobody watches it here: forget the copy rather than read it (the next request
            # reads the game afresh), so a change costs a read only where pages show it
            if self.games.get(lg.key) is lg:
                del self.games[lg.key]
            self.cancel_work(lg)
            return
        if lg.refreshing:
            lg.refresh_again = True
            return
        lg.refreshing = True
        self._spawn(self._refresh(lg), f"refresh-{lg.key}")

    async def _refresh(self, lg: LiveGame) -> None:
        failing = False
        try:
            while True:
                lg.refresh_again = False
                try:
                    async with lg.lock:
                        changed = await self.sync(lg)
                except Unavailable as e:
                    # the database could not be read (down, or it ended the connection, which
                    # the next read opens again): read again after a while, as long as the
                    # game is held here; nothing else would announce the change again
                    if not failing:
                        log.warning("game %s could not be read (%s): retrying", lg.key, e.message)
                    failing = True
                    await asyncio.sleep(READ_AGAIN)
                    if self.games.get(lg.key) is not lg:
                        return
                    continue
                except ApiError as e:
                    log.warning("game %s could not be read again: %s", lg.key, e.message)
                    return
                if changed:
                    self._after_sync(lg)
                if not lg.refresh_again:
                    return
        finally:
            lg.refreshing = False

    def _after_sync(self, lg: LiveGame) -> None:
        """Tell the pages of a game read afresh, and let its bot play (after the grace)."""
        self.broadcast(lg)
        self._ensure_driver(lg, grace=self._grace)

    async def sync(self, lg: LiveGame) -> bool:
        """Bring this process's copy of a game up to the database's (call with ``lg.lock``
        held): its moves (those no longer stored are taken back, the pages told), its end
        (finished, resigned or abandoned by another process), or its removal (expired or
        deleted). Returns whether anything changed. Raises :class:`Unavailable` when the
        database cannot be read."""
        if lg.saved_as is not None:
            return False
        key = lg.key
        found = await self.read(lambda s: s.live_game_with_version(key))
        if found is None:
            return await self._sync_gone(lg)
        (_, record, _meta), version = found
        if version == lg.stored:
            return False
        self._replace_moves(lg, GameRecord.from_json(record).moves)
        lg.stored = version
        return True

    def _replace_moves(self, lg: LiveGame, moves: tuple[RecordedMove, ...]) -> None:
        """Make the copy's moves the stored ones: take back those after the first move they
        differ at, then play the stored ones from there. O(moves)."""
        game = lg.game
        mine = game.recorded_moves()
        same = 0
        for a, b in zip(mine, moves, strict=False):
            if (a.seat, a.move, a.at) != (b.seat, b.move, b.at):
                break
            same += 1
        if same == len(mine) == len(moves):
            lg.saved = len(mine)
            return
        for _ in range(len(mine) - same):
            game.pop()
        try:
            game.play_recorded(moves[same:])
        except NimlabError as e:  # never expected: the stored moves were checked when played
            log.error("game %s: a stored move does not replay: %s", lg.key, e)
        lg.saved = len(game.history)
        if same < len(mine):
            self.rewound(lg, same)
        self._moved(lg)
        lg.problem = None
        lg.thinking = False

    async def _sync_gone(self, lg: LiveGame) -> bool:
        """The game is no longer in play in the database: finished (its stored record is
        read), else removed."""
        key = lg.key
        found = await self.read(lambda s: s.finished_game(key))
        if found is None:
            self.cancel_work(lg)
            lg.ended = "This game is no longer in play."
            self.games.pop(key, None)
            return True
        game_id, _meta = found
        stored = await self.read(lambda s: s.game(game_id))
        self.cancel_work(lg, keep_driver=True)
        self._replace_moves(lg, GameRecord.from_json(stored.record).moves)
        lg.saved_as = game_id
        lg.finishing = True
        ending = ending_of(stored.record, len(lg.game.players))
        if ending is not None:
            self._stopped(lg, ending)
        self._finished.append(key)
        self._forget_old()
        return True

    async def _changed_elsewhere(self, lg: LiveGame) -> bool:
        """:meth:`sync_if_stale`, except that a database that cannot be read leaves the copy as
        it is (``False``): with the database away nothing can be played anywhere, and what the
        copy says (or the error it led to) is the best answer there is."""
        try:
            return await self.sync_if_stale(lg)
        except Unavailable as e:
            log.debug("game %s not checked against the database: %s", lg.key, e.message)
            return False

    async def sync_if_stale(self, lg: LiveGame) -> bool:
        """:meth:`sync` when the database holds another version of the game (one indexed read
        when it does not); takes ``lg.lock``. Returns whether the copy changed since the call
        (by this sync, or by another one meanwhile)."""
        if lg.saved_as is not None:
            return False
        key, before = lg.key, lg.stored
        version = await self.read(lambda s: s.live_version(key))
        if version == before:
            return False
        async with lg.lock:
            changed = await self.sync(lg)
        if changed:
            self._after_sync(lg)
        # (read again meanwhile by the change feed: changed all the same)
        return changed or lg.stored != before or lg.saved_as is not None

    def _spawn(self, coro: Any, name: str) -> None:
        task = asyncio.create_task(coro, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    @staticmethod
    def _restore(lg: LiveGame, meta: dict[str, Any]) -> None:
        """The setup's choices and the creating client kept in a game's stored data."""
        lg.analysis_allowed = bool(meta.get("analysis", True))
        lg.public = bool(meta.get("public", False))
        owner = meta.get("owner")
        lg.owner_hash = str(owner) if owner is not None else None
        lg.seen = -math.inf  # a game of bots only waits for someone to look at it
        client = meta.get("client")
        lg.client = str(client) if client is not None else None

    async def expire(self) -> list[str]:
        """Delete the games in play not touched for the storage's expiry time (see
        :class:`nimlab.storage.InPlayLimits`), in the database and here (their work is
        stopped, their pages told); logged. Returns their keys."""
        keys = await self.write(lambda s: s.expire_games_in_play())
        for key in keys:
            lg = self.games.pop(key, None)
            if lg is not None:
                self.cancel_work(lg)
                lg.ended = "Expired: nobody played for too long."
                self.broadcast(lg)
        if keys:
            log.warning("%d games in play expired (untouched too long): deleted", len(keys))
        return keys

    async def _expire_loop(self) -> None:
        while True:
            await asyncio.sleep(self.settings.expiry_interval)
            try:
                await self.expire()
            except ApiError as e:  # the database is busy: try again at the next sweep
                log.warning("expiry of games in play failed: %s", e.message)

    async def stop(self) -> None:
        """Stop the bots and the engine work, write what is pending and close the database."""
        if self._trim is not None:
            self._trim.cancel()
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
        if self._reader is not None:
            self._reader.close()
        if self._feed_thread is not None:
            if self._feed is not None:  # its wait ends now, not at its timeout
                self._feed.interrupt()
            self._feed_thread.shutdown(wait=True)
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
            return await self._storage(self._submit(fn))

        def run() -> T:
            with self._read_lock:
                return fn(reader)

        return await self._storage(asyncio.get_running_loop().run_in_executor(None, run))

    async def write(self, fn: Callable[[Store], T]) -> T:
        """Run a write in the writer's next group (answered once it is committed)."""
        return await self._storage(self._submit(fn))

    def _submit(self, fn: Callable[[Store], T]) -> asyncio.Future[T]:
        return self._queued(lambda: self.writer.submit(fn))

    @staticmethod
    def _queued(job: Callable[[], asyncio.Future[T]]) -> asyncio.Future[T]:
        """A job handed to the writer; Unavailable when its queue is full or it is closed."""
        try:
            return job()
        except StorageError as e:
            raise _database_down("the database cannot be used now", e) from None

    @staticmethod
    async def _storage(future: asyncio.Future[T]) -> T:
        try:
            return await future
        except StaleGameError:
            raise
        except (StorageError, sqlite3.Error) as e:
            raise _database_down("the database cannot be used now", e) from None

    async def compute(
        self,
        owner: str,
        kind: str,
        fn: Callable[[], T],
        *,
        client: str | None = None,
        deep: bool = False,
    ) -> T:
        """Run engine work for ``owner`` (a game's key, or a client) on the engine's workers,
        within the settings' budget (``deep``: the longer one). Raises :class:`Superseded` when
        it was cancelled, :class:`Unavailable` when the engine is stopping or overloaded."""
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
        Raises :class:`NotFound`. O(1) in memory; else a read and a replay on the workers."""
        lg = self.games.get(key)
        if lg is not None:
            if fresh and self._feed is not None:
                await self._changed_elsewhere(lg)
            return lg
        if len(key) > 64:
            raise NotFound(f"there is no game {key!r} in play (finished games are in the history)")
        if self._feed is not None:
            playing = await self.read(lambda s: s.live_game_with_version(key))
            if playing is not None:
                (_, record, meta), version = playing
                lg = self.games.get(key)  # read by another request meanwhile
                if lg is not None:
                    return lg
                lg = self._resumed(key, record, meta, version)
                if lg is None:
                    raise NotFound(f"game {key!r} cannot be resumed")
                self.games[key] = lg
                self._ensure_driver(lg, grace=self._grace)
                return lg
        found = await self.read(lambda s: s.finished_game(key))
        if found is None:
            raise NotFound(f"there is no game {key!r} in play (finished games are in the history)")
        game_id, meta = found
        stored = await self.read(lambda s: s.game(game_id))
        game = await self.compute(
            f"stored:{game_id}", "replay", lambda: Game.from_record(stored.record)
        )
        players = len(game.players)
        usernames = [seat.username for seat in stored.summary.seats][:players]
        usernames += [None] * (players - len(usernames))
        hashes = {int(k): str(v) for k, v in (meta.get("tokens") or {}).items()}
        lg = self.games.get(key)  # restored by another request meanwhile
        if lg is not None:
            return lg
        lg = LiveGame(key, game, usernames, hashes, saved=len(game.history))
        lg.saved_as = game_id
        self._finished.append(key)
        lg.finishing = True
        ending = ending_of(stored.record, players)
        if ending is not None:
            self._stopped(lg, ending)
        self.games[key] = lg
        self._forget_old()
        return lg

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
                        changed = await self.sync(lg)
                    if changed:
                        self._after_sync(lg)
            except NotFound:  # it left the games in play meanwhile
                continue
            if lg.public and not lg.game.is_over and lg.ended is None and lg.saved_as is None:
                games.append(lg)
        return games

    async def halt(self, lg: LiveGame) -> None:
        """Stop every piece of engine work of a game (:meth:`cancel_work`) and wait until its
        bots have stopped: before a resign, abandon, take-back or delete changes the game."""
        driver = lg.driver
        # a finishing game's driver is let finish: the game is being stored
        self.cancel_work(lg, keep_driver=lg.finishing)
        if driver is not None and not driver.done():
            await asyncio.wait({driver})
        if lg.writing:  # a cancelled driver's move may still be on its way to the database
            await asyncio.wait(set(lg.writing))
        lg.thinking = False

    async def end(self, lg: LiveGame, how: str, seat: int) -> None:
        """Stop a game in play before its end: ``how`` is ``resigned`` (the other players still
        in the game win) or ``abandoned`` (nobody wins). The game is stored with its ending and
        leaves the games in play in ONE transaction (on failure nothing changed and
        :class:`Unavailable` is raised). Call with ``lg.lock`` held, after :meth:`halt`."""
        game = lg.game
        winners = tuple(s for s in game.active if s != seat) if how == "resigned" else ()
        ending = Ending(how, seat, winners)
        record = game.to_record()
        record["ended"] = ending.to_json()
        usernames = list(lg.usernames)
        lg.finishing = True
        expect, private = lg.stored, not lg.public
        try:
            lg.saved_as = await self._storage(
                self._queued(
                    lambda: self.writer.finish_game(
                        lg.key, record, usernames, source="web", expect=expect, private=private
                    )
                )
            )
            self._finished.append(lg.key)
        except StaleGameError as e:
            lg.finishing = False
            raise Stale(f"{e}: look at the game again") from None
        except BaseException:
            lg.finishing = False
            raise
        lg.saved = len(game.history)
        self._stopped(lg, ending)
        self.broadcast(lg)

    @staticmethod
    def _stopped(lg: LiveGame, ending: Ending) -> None:
        lg.ended = ended_text(list(lg.game.players), ending)
        lg.ended_winner = ending.winners[0] if len(ending.winners) == 1 else None
        lg.thinking = False

    def state(self, lg: LiveGame, since: int | None = None) -> GameStateOut:
        """The game's state with at most :data:`TURN_PAGE` turns: those after move ``since``,
        else the last ones; with the game's lifecycle (stopped, take-backs, analysis allowed)."""
        return GameStateOut.model_validate(self._state_data(lg, since, legal_moves_out(lg.game)))

    def state_json(self, lg: LiveGame, since: int | None = None) -> bytes:
        """:meth:`state`'s ``model_dump_json()``, written without building the model
        (:func:`~nimlab.web.views.state_json`): the answer to a move."""
        game = lg.game
        return state_json(self._state_data(lg, since, moves_for_json(game)), game)

    @staticmethod
    def _state_data(lg: LiveGame, since: int | None, legal: list[MoveOut] | None) -> dict[str, Any]:
        data = state_data(
            lg.key,
            lg.game,
            lg.usernames,
            thinking=lg.thinking,
            saved_as=lg.saved_as,
            problem=lg.problem,
            since=since,
            limit=TURN_PAGE,
            legal=legal,
        )
        data["takebacks"] = lg.takebacks
        data["analysis_allowed"] = lg.analysis_open
        if lg.ended is not None:
            data["ended"] = lg.ended
            data["status"] = lg.ended
            data["over"] = True
            data["to_move"] = None
            data["thinking"] = False
            data["winner"] = lg.ended_winner
        return data

    def status(self, lg: LiveGame) -> str:
        """The game's one-line status. O(1)."""
        return status_text(lg.game, thinking=lg.thinking, problem=lg.problem)

    def state_text(self, lg: LiveGame, since: int) -> str:
        """The live message for a page that has seen ``since`` moves (rendered once per change
        for all pages at the same move)."""
        key = (lg.version, since)
        text = lg.rendered.get(key)
        if text is None:
            if len(lg.rendered) > 16 or any(v != lg.version for v, _ in lg.rendered):
                lg.rendered = {}
            state = self.state(lg, since=since).model_dump()
            text = json.dumps({"type": "state", "state": state})
            lg.rendered[key] = text
        return text

    async def registered(self, setup: SetupIn) -> dict[str, PlayerRecord]:
        """The registry records of the usernames in a setup; raises for unknown ones."""
        wanted = {
            p.username: check_username(p.username) for p in setup.players if p.username is not None
        }
        if not wanted:
            return {}

        def lookup(store: Store) -> dict[str, PlayerRecord]:
            return {given: store.get_player(name) for given, name in wanted.items()}

        return await self.read(lookup)

    async def check(self, setup: SetupIn, client: str | None = None) -> Game:
        """The game a setup would start (nothing is kept); raises the core's errors."""
        game, _ = await self._build(setup, client)
        return game

    async def _build(self, setup: SetupIn, client: str | None) -> tuple[Game, list[str | None]]:
        """Build a setup's game (on the engine's workers when who starts needs a search)."""
        if isinstance(setup.first, int) and setup.first >= len(setup.players):
            raise PlayerError(
                f"seat {setup.first} cannot start: seats are 0 to {len(setup.players) - 1}"
            )
        registered = await self.registered(setup)
        if setup.first != "auto":  # who starts needs no search: building the game is O(piles)
            return build_game(setup, registered)
        owner = f"client:{client}"
        wait = self.settings.compute_wait + self.settings.move_seconds
        try:
            return await asyncio.wait_for(
                self.compute(owner, "setup", lambda: build_game(setup, registered), client=client),
                wait,
            )
        except (BudgetExceeded, TimeoutError):
            raise PlayerError(
                "working out who is in the winning position takes too long here: "
                "let the first player or a random player start"
            ) from None

    def _may_start(self, client: str | None) -> None:
        """Raise :class:`TooManyRequests` when ``client``'s network holds its share of the
        games in play, or the reserve of the bound on games in play is reached and it holds
        more than a little (see :class:`~nimlab.web.guard.Holdings`; the bounds per address
        and in all are the database's). O(games held)."""
        if client is None:
            return
        held = Holdings.of("games", self.settings)
        for lg in self.games.values():
            if lg.client is not None and lg.saved_as is None and lg.ended is None:
                held.add(lg.client, 1)
        why = held.refusal(client)  # (over its own bound: the database says so)
        if why in ("network", "reserve"):
            raise TooManyRequests(
                "your network has as many games in play as it may have now: finish one first"
                if why == "network"
                else "this server keeps its last games in play for new players: finish one "
                "of yours first",
                retry_after=60.0,
                limit="network_share" if why == "network" else "reserve_share",
            )

    async def create(
        self, setup: SetupIn, client: str | None = None
    ) -> tuple[LiveGame, dict[int, str], str | None]:
        """Start a game for ``client`` (at most so many in play per client: 429 beyond);
        returns it with a fresh token for each human seat, and for a game of bots only the
        token that stops it (its owner's, see :meth:`may_stop`)."""
        self._may_start(client)
        game, usernames = await self._build(setup, client)
        key = secrets.token_urlsafe(6)
        while key in self.games:
            key = secrets.token_urlsafe(6)
        tokens = {s: secrets.token_urlsafe(18) for s, p in enumerate(game.players) if not p.is_bot}
        hashes = {s: _hash(t) for s, t in tokens.items()}
        owner = secrets.token_urlsafe(18) if not tokens else None
        owner_hash = None if owner is None else _hash(owner)
        record = game.to_record()
        meta = {
            "tokens": {str(s): h for s, h in hashes.items()},
            "usernames": usernames,
            "analysis": setup.analysis,
            "client": client,
            "public": setup.public,
            "owner": owner_hash,
        }
        try:
            public = setup.public
            await self._storage(
                self._queued(
                    lambda: self.writer.add_game(key, record, meta, client=client, public=public)
                )
            )
        except TooManyGamesInPlayError as e:
            raise TooManyRequests(str(e)) from None
        lg = LiveGame(key, game, usernames, hashes, saved=len(record["moves"]), client=client)
        lg.analysis_allowed = setup.analysis
        lg.public = setup.public
        lg.owner_hash = owner_hash
        self.games[key] = lg
        self._forget_old()
        await self._changed(lg)
        await self._await_replies(lg)
        return lg, tokens, owner

    async def move(self, key: str, req: MoveIn) -> tuple[LiveGame, int]:
        """Play a human's move; returns the game and the number of the move before it (the
        answer sends the turns after it). Checks, in order: the game exists (404), the seat
        exists and is a human's (422, 403), the token is the seat's (403); a request for a move
        already played by that seat with the same move is a retry: answered again, nothing
        played; else the game is not over and it is that seat's turn, and ``turn`` is the next
        move's number (409), the move is legal (422, the core's message). Nothing changes when a
        check fails. Then the bots reply (waited for up to ``reply_wait`` seconds).

        The checks are made against this process's copy of the game; when one fails, or the
        database refuses the move because another process changed the game first, the game is
        read again and the move judged afresh against its current turn (see the module
        docstring)."""
        lg = await self.lookup(key, fresh=False)
        game = lg.game
        players = game.players
        if not 0 <= req.seat < len(players):
            raise PlayerError(f"seat {req.seat} does not exist: seats are 0 to {len(players) - 1}")
        player = players[req.seat]
        if player.is_bot:
            raise Forbidden(f"seat {req.seat} is {player.name}, a bot: bots move by themselves")
        if not lg.check_token(req.seat, req.token):
            raise Forbidden(
                f"wrong token for seat {req.seat} ({player.name}): only the link given to "
                f"{player.name} can move for them"
            )
        synced = self._feed is None  # nobody else changes the game: its copy is the truth
        for _ in range(8):
            try:
                async with lg.lock:
                    number, replies, retry = await self._play(lg, req)
                break
            except Stale:
                await self.sync_if_stale(lg)
                synced = True
            except Unavailable:  # the database cannot be used: said as it is
                raise
            except (ApiError, NimlabError):
                if synced or not await self._changed_elsewhere(lg):
                    raise
                synced = True
        else:
            raise Unavailable("the game changes too fast here to play this move: try again")
        if retry:
            return lg, number - 1
        if not replies:
            await self._changed(lg)
            return lg, number - 1
        # The bots reply at once and their moves are saved with this one (one disk flush).
        # Nothing is answered before every move played is saved.
        self._ensure_driver(lg)
        await self._await_replies(lg)
        try:
            async with lg.lock:
                unsaved = len(game.history) > lg.saved
                await self._save(lg)  # when the bots are still thinking
        except Stale:
            await self.sync_if_stale(lg)
            unsaved = False
        history = game.history
        if len(history) < number:
            raise Unavailable("the move could not be saved, so it was not played")
        done = history[number - 1]
        if done.seat != req.seat or not _same_move(done.move, req):
            raise Conflict(
                f"another move was played as move {number} first; the next move is move "
                f"{len(history) + 1}: reload the game"
            )
        if unsaved:
            self.broadcast(lg)
        return lg, number - 1

    async def _play(self, lg: LiveGame, req: MoveIn) -> tuple[int, bool, bool]:
        """The checks of :meth:`move` against this copy of the game, then the move played (and
        saved, unless bots reply that need thinking): the move's number, whether bots reply,
        whether it was a retry of a move played already. Call with ``lg.lock`` held."""
        game = lg.game
        player = game.players[req.seat]
        number = len(game.history) + 1
        if req.turn < number:
            done = game.history[req.turn - 1]
            if done.seat == req.seat and _same_move(done.move, req):
                return req.turn, False, True  # a retry: the same answer, nothing played twice
            raise Conflict(
                f"move {req.turn} was already played; the next move is move {number}: "
                "reload the game"
            )
        if game.is_over or lg.ended is not None or lg.saved_as is not None:
            raise GameOverError("the game is over: start a new one")
        if req.seat != game.to_move_seat:
            raise Conflict(f"it is {game.to_move.name}'s turn, not {player.name}'s")
        if req.turn != number:
            raise Conflict(
                f"this request is for move {req.turn}, but the next move is move {number}: "
                "reload the game"
            )
        if req.text is not None:
            move = game.parse_move(req.text)
        elif req.pile is None or req.take is None:
            raise InvalidMoveError(
                "give the move as pile and take (and at, in rows of stones), or as text"
            )
        else:
            also = tuple((pile, take) for pile, take in req.also or ())
            move = Move(req.pile, req.take, req.at, also)
        game.push(move)
        self._moved(lg)
        self._instant_replies(lg)
        replies = not game.is_over and game.to_move.is_bot and lg.human_active
        if game.is_over:
            await self._finish(lg)  # its unsaved moves and the finish: one transaction
        elif not replies:
            await self._save(lg)
        return number, replies, False

    def _instant_replies(self, lg: LiveGame) -> None:
        """Let the bots that answer from memory (see ``Game.bot_choice_is_instant``) reply at
        once, within the request that played the human's move (no task, no worker). A bot
        that needs to think, or fails, is left to the game's driver. Only while a human
        plays: a game of bots only is paced by the driver."""
        game = lg.game
        while (
            not game.is_over
            and lg.ended is None
            and game.to_move.is_bot
            and lg.human_active
            and game.bot_choice_is_instant()
        ):
            try:
                choice = game.bot_choice()
            except Exception:  # reported by the driver, which asks again
                return
            game.push(choice.move, claim=choice.claim)
            self._moved(lg)

    async def _await_replies(self, lg: LiveGame) -> None:
        driver = lg.driver
        if driver is not None and not driver.done() and lg.human_active:
            await asyncio.wait({driver}, timeout=self.settings.reply_wait)

    async def _save(self, lg: LiveGame) -> None:
        """Store the moves not stored yet; on failure take them back and raise Unavailable (or the
        storage's LimitError, a 422, at the bound on moves per game)."""
        moves = [m.to_json() for m in lg.game.recorded_moves(lg.saved)]
        if not moves:
            return
        written = self.writer.add_moves(lg.key, lg.saved + 1, moves, expect=lg.stored)

        def advance(done: asyncio.Future[None]) -> None:
            if not done.cancelled() and done.exception() is None:
                lg.saved += len(moves)
                lg.stored += 1

        # the copy follows the database even when the caller is cancelled meanwhile (a write
        # once handed over may commit: the next one is fenced by the version it made)
        written.add_done_callback(advance)
        lg.writing.add(written)
        written.add_done_callback(lg.writing.discard)
        try:
            await asyncio.shield(written)
        except (StorageError, RecordError, sqlite3.Error) as e:
            for _ in moves:
                lg.game.pop()
            self._moved(lg)
            if isinstance(e, StaleGameError):  # another process changed the game first
                raise Stale(str(e)) from None
            if isinstance(e, LimitError):  # the game has as many moves as a game may have
                raise
            raise _database_down("the move could not be saved, so it was not played", e) from None

    async def _changed(self, lg: LiveGame) -> None:
        if lg.game.is_over:
            await self._finish(lg)
        self._ensure_driver(lg)
        self.broadcast(lg)

    async def _finish(self, lg: LiveGame) -> None:
        """Move a finished game from the games in progress to the stored games (and the
        players' statistics), with the moves not stored yet, in one transaction. At most once:
        the store refuses to finish a game that is no longer in progress. When moves not stored
        yet cannot be, they are taken back and Unavailable (or the storage's LimitError) is
        raised, as :meth:`_save` does; any other failure is logged (the game stays in play)."""
        if lg.finishing:
            return
        lg.finishing = True
        self.cancel_work(lg, keep_driver=True)
        game = lg.game
        moves = [m.to_json() for m in game.recorded_moves(lg.saved)]
        record = game.to_record()
        usernames = list(lg.usernames)
        try:
            # one transaction: in play or finished, never lost
            finished = self.writer.finish_game(
                lg.key,
                record,
                usernames,
                source="web",
                first=lg.saved + 1,
                moves=moves,
                expect=lg.stored,
                private=not lg.public,
            )

            def stored(done: asyncio.Future[int]) -> None:  # see _save
                if not done.cancelled() and done.exception() is None:
                    lg.saved_as = done.result()
                    lg.saved += len(moves)
                    lg.stored += 2 if moves else 1

            finished.add_done_callback(stored)
            lg.writing.add(finished)
            finished.add_done_callback(lg.writing.discard)
            await asyncio.shield(finished)
        except (StorageError, NimlabError, sqlite3.Error) as e:
            lg.finishing = False
            if isinstance(e, StaleGameError):  # another process changed the game first
                for _ in moves:
                    game.pop()
                self._moved(lg)
                raise Stale(str(e)) from None
            if not moves:
                log.error("game %s could not be stored: %s", lg.key, e)
                return
            for _ in moves:
                game.pop()
            if isinstance(e, LimitError):  # the game has as many moves as a game may have
                raise
            raise _database_down("the move could not be saved, so it was not played", e) from None
        self._finished.append(lg.key)

    def _moved(self, lg: LiveGame) -> None:
        """A move was played (or taken back): hints and analyses of other moves are no longer
        wanted."""
        count = len(lg.game.history)
        stale = [k for k, entry in lg.learning.items() if entry.count != count]
        for kind in stale:
            entry = lg.learning.pop(kind)
            if entry.task is not None:
                entry.task.cancel()
        if stale and self.workers is not None:
            self.workers.cancel(lg.key, tuple(stale))

    def cancel_work(self, lg: LiveGame, *, keep_driver: bool = False) -> None:
        """Stop every piece of engine work of a game (it ended or goes away): its bots'
        thinking (unless ``keep_driver``), hints and analyses. For the game's lifecycle (resign,
        abandon, delete, undo: call it before changing or dropping the game)."""
        for entry in lg.learning.values():
            if entry.task is not None:
                entry.task.cancel()
        lg.learning.clear()
        if self.workers is not None:
            self.workers.cancel(lg.key, ("hint", "analysis", "past") if keep_driver else None)
        if not keep_driver and lg.driver is not None and not lg.driver.done():
            lg.driver.cancel()
        lg.thinking = False

    def _ensure_driver(self, lg: LiveGame, *, grace: float = 0.0) -> None:
        """Let the game's bots play when one is to move (after ``grace`` seconds in which no
        other process changed the game: see :meth:`_drive`)."""
        game = lg.game
        if game.is_over or lg.ended is not None or not game.to_move.is_bot:
            return
        if lg.saved_as is not None or lg.finishing:
            return
        if lg.driver is not None and not lg.driver.done():
            return
        if self._feed is None:
            grace = 0.0  # no other process
        lg.driver = asyncio.create_task(self._drive(lg, grace), name=f"bots-{lg.key}")

    async def _take_over(self, lg: LiveGame, grace: float) -> bool:
        """Wait until nobody changed the game for ``grace`` seconds (the process that played
        last plays its bots; this one takes over when that one has stopped). Whether a bot is
        still to move then."""
        seen = lg.stored
        while True:
            await asyncio.sleep(grace)
            await self.sync_if_stale(lg)
            game = lg.game
            if game.is_over or lg.ended is not None or lg.saved_as is not None:
                return False
            if not game.to_move.is_bot:
                return False
            if lg.stored == seen:
                return True
            seen = lg.stored

    async def _drive(self, lg: LiveGame, grace: float = 0.0) -> None:
        """Let bots move until a human is to move or the game is over. Each bot move is one job
        on the engine's workers within the move budget: beyond it, the bot plays its guess and
        says so in its claim. With ``grace``: only once nobody changed the game for that long
        (see :meth:`_take_over`). Each move is written against the version it was worked out
        from: when another process played first, the game is read again and the bots go on
        from there."""
        game = lg.game
        try:
            if grace > 0 and not await self._take_over(lg, grace):
                return
            while not game.is_over and lg.ended is None and game.to_move.is_bot:
                if not lg.human_active and self.bot_pace > 0:
                    await asyncio.sleep(self.bot_pace)
                if lg.bots_only:
                    await self._until_watched(lg)
                count = len(game.history)
                if game.bot_choice_is_instant():  # lookups only: no worker needed
                    choice = game.bot_choice()
                else:
                    try:
                        choice = await self._think(lg)
                    except Superseded:
                        if lg.key not in self.games or lg.finishing:
                            return
                        continue
                async with lg.lock:
                    if len(game.history) != count or game.is_over or lg.ended is not None:
                        continue
                    if lg.saved_as is not None:
                        return
                    game.push(choice.move, claim=choice.claim)
                    self._moved(lg)
                    try:
                        if game.is_over:
                            await self._finish(lg)  # the move and the finish: one transaction
                        else:
                            await self._save(lg)
                    except Stale:  # another process played first: go on from the game as stored
                        if await self.sync(lg):
                            self.broadcast(lg)
                        continue
                lg.thinking = False
                lg.problem = None
                self.broadcast(lg)
        except asyncio.CancelledError:
            raise
        except Exception as e:
            log.exception("game %s: a bot could not move", lg.key)
            name = game.to_move.name if not game.is_over else "a bot"
            detail = str(e) if isinstance(e, NimlabError | ApiError) else type(e).__name__
            lg.problem = f"{name} could not move ({detail})"
            lg.thinking = False
            self.broadcast(lg)
        finally:
            lg.thinking = False

    def _watched(self, lg: LiveGame) -> bool:
        return bool(lg.subscribers) or time.monotonic() - lg.seen < self.settings.unwatched_pause

    async def _until_watched(self, lg: LiveGame) -> None:
        """Wait while nobody watches a game of bots only: no open page, and no request for its
        state for ``unwatched_pause`` seconds (see :meth:`looked_at`)."""
        while not self._watched(lg):
            if not lg.paused:
                lg.paused = True
                log.info("game %s (bots only) paused: nobody watches it", lg.key)
            lg.wake.clear()
            await lg.wake.wait()
        lg.paused = False

    def looked_at(self, lg: LiveGame) -> None:
        """Someone asked for the game: a paused game of bots only plays on."""
        lg.seen = time.monotonic()
        if lg.paused:
            lg.wake.set()

    def may_stop(self, lg: LiveGame, token: str | None, *, admin: bool) -> bool:
        """Whether a request may stop this game in play: the admin may stop any; the owner's
        token (given when it was created) stops a game of bots only."""
        if admin:
            return True
        return (
            token is not None
            and lg.owner_hash is not None
            and hmac.compare_digest(lg.owner_hash, _hash(token))
        )

    async def _think(self, lg: LiveGame) -> Choice:
        """The bot to move's choice, worked out on the engine's workers (the game's pages are
        told it is thinking when that takes more than a moment)."""
        task = asyncio.ensure_future(
            self.compute(lg.key, "bot", lg.game.bot_choice, client=lg.client)
        )
        try:
            done, _ = await asyncio.wait({task}, timeout=0.25)
        except asyncio.CancelledError:
            task.cancel()  # asyncio.wait leaves it running: stop the bot's search too
            raise
        if not done:
            lg.thinking = True
            self.broadcast(lg)
        return await task

    def _forget_old(self) -> None:
        """Keep at most :data:`KEEP_FINISHED` finished games in memory (their links answer
        without a database read). O(1) amortised."""
        while len(self._finished) > KEEP_FINISHED:
            key = self._finished.popleft()
            lg = self.games.get(key)
            if lg is not None and lg.saved_as is not None:
                del self.games[key]

    # -- watching -----------------------------------------------------------------------------

    def broadcast(self, lg: LiveGame) -> None:
        """Tell every open page of this game that it changed (each is sent what it has not
        seen; see :meth:`state_text`)."""
        lg.version += 1
        for sub in lg.subscribers:
            sub.changed()

    def push(self, lg: LiveGame, message: dict[str, Any]) -> None:
        """Send a message (a late hint or analysis) to every open page of this game."""
        if not lg.subscribers:
            return
        text = json.dumps(message)
        for sub in lg.subscribers:
            sub.push(text)

    def admit(self, lg: LiveGame, client: str | None) -> str | None:
        """Count a new WebSocket of ``client`` on game ``lg``: ``None`` when admitted (give it
        back with :meth:`release`), else why not (at most ``max_sockets_per_client`` per client
        and ``max_watchers_per_game`` per game, settings). O(1)."""
        if len(lg.subscribers) >= self.settings.max_watchers_per_game:
            return (
                f"this game has {len(lg.subscribers):,} open pages, as many as one game may "
                "have: try again later"
            )
        if client is not None:
            why = self._sockets.take(client)
            if why == "address":
                mine = self._sockets.by_address.get(client, 0)
                return f"you have {mine:,} game pages open, as many as one client may: close one"
            if why is not None:
                metrics.refused("network_share" if why == "network" else "reserve_share")
                return (
                    "too many game pages are open from your network, or on this server: "
                    "try again later"
                )
        return None

    def release(self, client: str | None) -> None:
        """A WebSocket admitted by :meth:`admit` closed."""
        self._released += 1
        if self._released >= 64:
            self._give_back_soon()
        if client is None:
            return
        self._sockets.give_back(client)

    def sockets_open(self) -> int:
        """How many WebSockets admitted by :meth:`admit` are open (those with a client)."""
        return self._sockets.total

    def _give_back_soon(self) -> None:
        """Give memory back once a burst of closes is over: 1 s after the last close, at most
        5 s after the first."""
        loop = asyncio.get_running_loop()
        if self._trim is None:
            self._trim_since = loop.time()
        elif loop.time() - self._trim_since < 5.0:
            self._trim.cancel()
        else:
            return
        self._trim = loop.call_later(1.0, self._give_back)

    def _give_back(self) -> None:
        self._released = 0
        self._trim = None
        give_back_memory()

    def subscribe(self, lg: LiveGame) -> _Subscriber:
        """A new open page of this game; it is sent the hints and analyses of the position in
        play found so far (one may have been found between the page's request and its
        listening)."""
        count = len(lg.game.history)
        sub = _Subscriber(count)
        lg.subscribers.add(sub)
        self.looked_at(lg)
        for kind, entry in lg.learning.items():
            if entry.count == count and entry.result is not None:
                sub.push(json.dumps({"type": kind, kind: entry.result.model_dump()}))
        return sub

    def rewound(self, lg: LiveGame, count: int) -> None:
        """Moves after the first ``count`` were taken back: each open page is sent the turns from
        there on, so none keeps a move that is no longer played."""
        for sub in lg.subscribers:
            sub.sent = min(sub.sent, count)

    def unsubscribe(self, lg: LiveGame, sub: _Subscriber) -> None:
        lg.subscribers.discard(sub)
        for kind, entry in list(lg.learning.items()):
            self._abandon(lg, kind, entry)

    def _abandon(self, lg: LiveGame, kind: str, entry: _Learning) -> None:
        """Stop working out a hint or analysis nobody waits for any more (no request waits for
        it and no page of the game is open to be sent it): its engine job is cancelled and
        forgotten, so the next request starts afresh."""
        if entry.waiting or lg.subscribers or entry.task is None or entry.task.done():
            return
        if entry.ready.is_set() and entry.result is not None and not entry.result.pending:
            return  # done: only the answer is kept
        entry.task.cancel()
        if entry.ready.is_set():  # the deeper search stops: the quick answer stays
            if entry.result is not None:
                entry.result = entry.result.model_copy(update={"pending": False})
        elif lg.learning.get(kind) is entry:
            del lg.learning[kind]

    async def next_messages(self, lg: LiveGame, sub: _Subscriber) -> list[str]:
        """Wait for what a page has not seen yet: the state with its new turns, then any
        pushed hint or analysis."""
        await sub.event.wait()
        sub.event.clear()
        out: list[str] = []
        if sub.dirty:
            sub.dirty = False
            out.append(self.state_text(lg, sub.sent))
            sub.sent = len(lg.game.history)
        while sub.extra:
            out.append(sub.extra.popleft())
        return out

    # -- learning -----------------------------------------------------------------------------

    async def _learn(self, lg: LiveGame, kind: str) -> Any:
        """The hint or analysis for the current move: the answer found within the move budget
        (cached per move), or ``None`` when the engine could not start on it within
        ``compute_wait`` (it is then pushed to the game's pages when found). When that answer
        is not proven, a deeper search goes on and its answer is pushed too."""
        count = len(lg.game.history)
        entry = lg.learning.get(kind)
        if entry is None or entry.count != count:
            entry = _Learning(count)
            lg.learning[kind] = entry
            entry.task = asyncio.create_task(self._learn_run(lg, kind, entry))
            self._tasks.add(entry.task)
            entry.task.add_done_callback(self._tasks.discard)
        if not entry.ready.is_set():
            entry.waiting += 1
            try:
                await asyncio.wait_for(entry.ready.wait(), self.settings.compute_wait)
            except TimeoutError:
                entry.late = True
                return None
            finally:
                entry.waiting -= 1
                self._abandon(lg, kind, entry)
        if entry.error is not None:
            raise entry.error
        return entry.result

    async def _learn_run(self, lg: LiveGame, kind: str, entry: _Learning) -> None:
        game = lg.game
        count = entry.count

        def run() -> AnalysisOut | HintOut:
            if len(game.history) != count:
                raise Superseded("the game moved on")
            result: AnalysisOut | HintOut = (
                analysis_out(game) if kind == "analysis" else hint_out(game)
            )
            if len(game.history) != count:
                raise Superseded("the game moved on")
            return result

        try:
            quick = await self.compute(lg.key, kind, run, client=lg.client)
        except Superseded:
            return
        except (NimlabError, ApiError) as e:
            entry.error = e
            entry.ready.set()
            return
        except BudgetExceeded:
            if kind != "analysis":
                entry.error = Unavailable("the engine ran out of its budget before it could guess")
                entry.ready.set()
                return
            quick = blank_analysis(count, available=False, note="Not proven: beyond the budget.")
        deeper = (
            not quick.proven
            and self.settings.deep_seconds > self.settings.move_seconds
            and not game.is_over
        )
        quick = quick.model_copy(update={"pending": deeper})
        entry.result = quick
        entry.ready.set()
        if entry.late:
            self.push(lg, {"type": kind, kind: quick.model_dump()})
        if not deeper:
            return
        try:
            deep = await self.compute(lg.key, kind, run, client=lg.client, deep=True)
        except (Superseded, NimlabError, ApiError, BudgetExceeded):
            deep = quick
        if len(game.history) != count or lg.learning.get(kind) is not entry:
            return
        deep = deep.model_copy(update={"pending": False})
        entry.result = deep
        self.push(lg, {"type": kind, kind: deep.model_dump()})

    async def analysis(self, key: str) -> AnalysisOut:
        lg = await self.lookup(key)
        if not lg.analysis_open:
            raise Forbidden("this game's setup allows no analysis during play: after the game")
        count = len(lg.game.history)
        result: AnalysisOut | None = await self._learn(lg, "analysis")
        if result is None:
            return blank_analysis(
                count,
                available=False,
                pending=True,
                note="The engine is busy with other games: the analysis will appear here by "
                "itself as soon as it is worked out.",
            )
        return result

    async def analysis_at(self, key: str, at: int) -> AnalysisOut:
        """The analysis of the position after move ``at`` (0: the start) of a game in play, with
        the whole value history: a page looking back at a past position shows it everywhere.
        The position in play (``at`` at or past the move count) is :meth:`analysis`."""
        lg = await self.lookup(key)
        if not lg.analysis_open:
            raise Forbidden("this game's setup allows no analysis during play: after the game")
        if at >= len(lg.game.history):
            return await self.analysis(key)
        record = lg.game.to_record()  # a copy, taken on the event loop's thread
        try:
            return await self.compute(
                lg.key,
                "past",
                lambda: analysis_after(Game.from_record(record), at),
                client=lg.client,
            )
        except BudgetExceeded:
            return blank_analysis(
                at, available=False, note="Not worked out: beyond the engine's budget."
            )

    async def hint(self, key: str) -> HintOut | None:
        """The hint for the player to move, or ``None`` when the engine could not start on it
        within ``compute_wait`` (it is then pushed to the game's pages)."""
        lg = await self.lookup(key)
        if lg.game.is_over or lg.ended is not None:
            raise GameOverError("the game is over: there is nothing to hint")
        if not lg.analysis_open:
            raise Forbidden("this game's setup allows no hints during play")
        result: HintOut | None = await self._learn(lg, "hint")
        return result

    # -- limits -------------------------------------------------------------------------------

    def limit(self, action: str, client: str | None) -> None:
        """Take one of the client's tokens for ``action`` (``create``, ``move`` or ``register``);
        raises :class:`TooManyRequests` when it has none left."""
        if client is None:
            return
        s = self.settings
        if action == "create":
            rate, burst = s.create_rate / 60.0, s.create_burst
        elif action == "register":
            rate, burst = s.register_per_hour / 3600.0, s.register_per_hour
        elif action == "read":
            rate, burst = s.read_rate, s.read_burst
        else:
            rate, burst = s.move_rate, s.move_burst
        wait = self._limiter.take_both(action, client, rate, burst, s.network_allowance)
        if wait > 0:
            what = {"create": "new games", "register": "new players", "read": "requests"}.get(
                action, "moves"
            )
            raise TooManyRequests(
                f"too many {what} from {client}: try again in {max(1, round(wait))} s",
                retry_after=wait,
                limit=f"{action}_rate",
            )
