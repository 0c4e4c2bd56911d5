"""Games in play on the server: the server owns every game; browsers send move requests.

- :class:`LiveGames` keeps the games in memory, checks who may move (seat tokens), asks the core
  to play the move (the core's error, and nothing changed, when it is illegal), lets bots reply,
  saves every move before answering, and pushes the new state to every open page (WebSockets).
- :class:`~nimlab.storage.StoreWriter` owns the database connection for writes on one thread and
  commits the moves of many games together (group commit), so 50 games cost one disk flush, not 50.

A restart reads the games in progress back from the database and replays them with the core
(``Game.from_record``), so every unfinished game resumes where it was.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import hashlib
import hmac
import logging
import secrets
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TypeVar

from nimlab.core.errors import (
    GameOverError,
    InvalidMoveError,
    NimlabError,
    PlayerError,
)
from nimlab.core.game import Game
from nimlab.core.players import Player, player_from
from nimlab.core.position import Move
from nimlab.core.setup import GameSetup
from nimlab.storage import (
    LimitError,
    PlayerRecord,
    RecordError,
    StorageError,
    Store,
    StoreWriter,
    check_username,
)
from nimlab.web.errors import ApiError, Conflict, Forbidden, NotFound, Unavailable
from nimlab.web.schemas import AnalysisOut, GameStateOut, HintOut, MoveIn, PlayerIn, SetupIn
from nimlab.web.views import analysis_out, blank_analysis, game_state, hint_out

__all__ = ["MAX_STONES", "LiveGame", "LiveGames", "build_game"]

log = logging.getLogger("nimlab.web")

T = TypeVar("T")

MAX_STONES = 1000
"""Rows of stones are drawn stone by stone: a game on rows has at most this many stones."""
RESUME_GAMES = 1000
"""Games in play resumed at startup: the most recently touched ones (the others stay stored until
they expire, see :class:`nimlab.storage.InPlayLimits`)."""
KEEP_FINISHED = 500
"""Finished games kept in memory (their pages still show the end); older ones are dropped."""


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


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


# -- games in play ------------------------------------------------------------------------------


class _Subscriber:
    """An open page: it only ever needs the latest state (states carry the whole history)."""

    def __init__(self) -> None:
        self.latest: str | None = None
        self.event = asyncio.Event()

    def push(self, text: str) -> None:
        self.latest = text
        self.event.set()

    async def next(self) -> str:
        await self.event.wait()
        self.event.clear()
        text, self.latest = self.latest, None
        return text or ""


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
    analyses: dict[tuple[str, int], asyncio.Future[Any]] = field(default_factory=dict)
    problem: str | None = None
    """Why the game cannot go on (a bot failed to move); shown to everyone watching."""
    ended: str | None = None
    """Why the game stopped before its end (resigned, abandoned): it is no longer in play."""
    ended_winner: int | None = None
    takebacks: int = 0
    analysis_allowed: bool = True
    """The setup's choice: hints and values during play in a game between people."""

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


class LiveGames:
    """Every game in play, the database behind them, and the bots' thinking threads.

    ``bot_pace``: seconds between moves when only bots are left (so people can watch);
    ``reply_wait``: how long a move request waits for the bots' replies before answering
    (the replies then arrive over WebSockets); ``compute_wait``: how long analysis and hints may
    take before the answer says they are still being worked out.
    """

    def __init__(
        self,
        db: str | None,
        *,
        bot_pace: float = 0.8,
        reply_wait: float = 10.0,
        compute_wait: float = 8.0,
        threads: int = 8,
    ) -> None:
        self.db = db
        self.bot_pace = bot_pace
        self.reply_wait = reply_wait
        self.compute_wait = compute_wait
        self.games: dict[str, LiveGame] = {}
        self._threads = threads
        self._pool: concurrent.futures.ThreadPoolExecutor | None = None
        self._writer: StoreWriter | None = None
        self._reader: Store | None = None
        self._read_lock = threading.Lock()

    # -- lifetime -----------------------------------------------------------------------------

    async def start(self) -> None:
        """Open the database, delete the expired games in progress and resume the others (the
        :data:`RESUME_GAMES` most recently played)."""
        self._pool = concurrent.futures.ThreadPoolExecutor(
            self._threads, thread_name_prefix="nimlab-engine"
        )
        store = Store.open(self.db)
        self._writer = StoreWriter(store)
        if store.path != ":memory:":
            self._reader = Store.open(store.path)
        await self.write(lambda s: s.expire_games_in_play())
        for key, record, meta in await self.read(lambda s: s.live_games(limit=RESUME_GAMES)):
            try:
                game = Game.from_record(record)
            except NimlabError as e:
                log.warning("game %s cannot be resumed: %s", key, e)
                continue
            players = len(game.players)
            usernames = list(meta.get("usernames") or [None] * players)[:players]
            hashes = {int(k): str(v) for k, v in (meta.get("tokens") or {}).items()}
            lg = LiveGame(key, game, usernames, hashes, saved=len(record["moves"]))
            lg.analysis_allowed = bool(meta.get("analysis", True))
            self.games[key] = lg
            if game.is_over:
                await self._finish(lg)
            else:
                self._ensure_driver(lg)

    async def stop(self) -> None:
        """Stop the bots, write what is pending and close the database."""
        drivers = [lg.driver for lg in self.games.values() if lg.driver and not lg.driver.done()]
        for task in drivers:
            task.cancel()
        for task in drivers:
            with contextlib.suppress(BaseException):
                await task
        if self._writer is not None:
            await asyncio.get_running_loop().run_in_executor(None, self._writer.close)
        if self._reader is not None:
            self._reader.close()
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)

    @property
    def writer(self) -> StoreWriter:
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
        """Run a write on the writer thread."""
        return await self._storage(self._submit(fn))

    def _submit(self, fn: Callable[[Store], T]) -> asyncio.Future[T]:
        try:
            return asyncio.wrap_future(self.writer.submit(fn))
        except StorageError as e:  # the writer's queue is full, or it is closed
            raise Unavailable(f"the database cannot be used: {e}") from None

    @staticmethod
    async def _storage(future: asyncio.Future[T]) -> T:
        try:
            return await future
        except (StorageError, sqlite3.Error) as e:
            raise Unavailable(f"the database cannot be used: {e}") from None

    async def compute(self, fn: Callable[[], T], timeout: float | None = None) -> T:
        """Run core work on an engine thread (so other games keep moving)."""
        if self._pool is None:
            raise Unavailable("the server is starting or stopping")
        future = asyncio.get_running_loop().run_in_executor(self._pool, fn)
        if timeout is None:
            return await future
        return await asyncio.wait_for(asyncio.shield(future), timeout)

    # -- games --------------------------------------------------------------------------------

    def get(self, key: str) -> LiveGame:
        """The game with this id; raises :class:`NotFound`."""
        lg = self.games.get(key)
        if lg is None:
            raise NotFound(f"there is no game {key!r} in play (finished games are in the history)")
        return lg

    def state(self, lg: LiveGame) -> GameStateOut:
        out = game_state(
            lg.key,
            lg.game,
            lg.usernames,
            thinking=lg.thinking,
            saved_as=lg.saved_as,
            problem=lg.problem,
        )
        out.takebacks = lg.takebacks
        out.analysis_allowed = lg.analysis_open
        if lg.ended is not None:
            out.ended = lg.ended
            out.status = lg.ended
            out.over = True
            out.to_move = None
            out.thinking = False
            out.winner = lg.ended_winner
        return out

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

    async def check(self, setup: SetupIn) -> Game:
        """The game a setup would start (nothing is kept); raises the core's errors."""
        game, _ = await self._build(setup)
        return game

    async def _build(self, setup: SetupIn) -> tuple[Game, list[str | None]]:
        """Build a setup's game off the event loop, within ``compute_wait``."""
        registered = await self.registered(setup)
        try:
            return await self.compute(
                lambda: build_game(setup, registered), timeout=self.compute_wait
            )
        except TimeoutError:
            raise PlayerError(
                "working out who is in the winning position takes too long here: "
                "let the first player or a random player start"
            ) from None

    async def create(self, setup: SetupIn) -> tuple[LiveGame, dict[int, str]]:
        """Start a game: returns it with a fresh token for each human seat."""
        game, usernames = await self._build(setup)
        key = secrets.token_urlsafe(6)
        while key in self.games:
            key = secrets.token_urlsafe(6)
        tokens = {s: secrets.token_urlsafe(18) for s, p in enumerate(game.players) if not p.is_bot}
        hashes = {s: _hash(t) for s, t in tokens.items()}
        record = game.to_record()
        meta = {
            "tokens": {str(s): h for s, h in hashes.items()},
            "usernames": usernames,
            "analysis": setup.analysis,
        }
        await self.write(lambda s: s.add_live_game(key, record, meta))
        lg = LiveGame(key, game, usernames, hashes, saved=len(record["moves"]))
        lg.analysis_allowed = setup.analysis
        self.games[key] = lg
        self._forget_old()
        await self._changed(lg)
        await self._await_replies(lg)
        return lg, tokens

    async def move(self, key: str, req: MoveIn) -> LiveGame:
        """Play a human's move. Checks, in order: the game exists (404), the seat exists and is
        a human's (422, 403), the token is the seat's (403), the game is not over and it is that
        seat's turn (409), the move is legal (422, the core's message). Nothing changes when a
        check fails. Then the bots reply (waited for up to ``reply_wait`` seconds)."""
        lg = self.get(key)
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
        async with lg.lock:
            if game.is_over or lg.ended is not None:
                raise GameOverError("the game is over: start a new one")
            if req.seat != game.to_move_seat:
                raise Conflict(f"it is {game.to_move.name}'s turn, not {player.name}'s")
            number = len(game.history) + 1
            if req.turn is not None and req.turn != number:
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
                move = Move(req.pile, req.take, req.at)
            game.push(move)
            replies = not game.is_over and game.to_move.is_bot and lg.human_active
            if not replies:
                await self._save(lg)
        if not replies:
            await self._changed(lg)
            return lg
        # The bots reply at once and their moves are saved with this one (one disk flush).
        # Nothing is answered before every move played is saved.
        self._ensure_driver(lg)
        await self._await_replies(lg)
        async with lg.lock:
            unsaved = len(game.history) > lg.saved
            await self._save(lg)  # when the bots are still thinking
        if len(game.history) < number:
            raise Unavailable("the move could not be saved, so it was not played")
        if unsaved:
            self.broadcast(lg)
        return lg

    async def _await_replies(self, lg: LiveGame) -> None:
        driver = lg.driver
        if driver is not None and not driver.done() and lg.human_active:
            await asyncio.wait({driver}, timeout=self.reply_wait)

    async def _save(self, lg: LiveGame) -> None:
        """Store the moves not stored yet; on failure take them back and raise Unavailable (or the
        storage's LimitError, a 422, at the bound on moves per game)."""
        moves = lg.game.to_record()["moves"][lg.saved :]
        if not moves:
            return
        try:
            await asyncio.wrap_future(self.writer.add_moves(lg.key, lg.saved + 1, moves))
        except (StorageError, RecordError, sqlite3.Error) as e:
            for _ in moves:
                lg.game.pop()
            if isinstance(e, LimitError):  # the game has as many moves as a game may have
                raise
            raise Unavailable(f"the move could not be saved, so it was not played: {e}") from None
        lg.saved += len(moves)

    async def _changed(self, lg: LiveGame) -> None:
        if lg.game.is_over:
            await self._finish(lg)
        self._ensure_driver(lg)
        self.broadcast(lg)

    async def _finish(self, lg: LiveGame) -> None:
        """Move a finished game from the games in progress to the stored games (and the
        players' statistics), in one transaction. At most once: the store refuses to finish a
        game that is no longer in progress."""
        if lg.finishing:
            return
        lg.finishing = True
        record = lg.game.to_record()
        usernames = list(lg.usernames)

        def finish(store: Store) -> int:  # one transaction: in play or finished, never lost
            return store.finish_live_game(lg.key, record, usernames, source="web")

        try:
            lg.saved_as = await self.write(finish)
        except (Unavailable, NimlabError) as e:
            log.error("game %s could not be stored: %s", lg.key, e)

    def _ensure_driver(self, lg: LiveGame) -> None:
        game = lg.game
        if game.is_over or lg.ended is not None or not game.to_move.is_bot:
            return
        if lg.driver is not None and not lg.driver.done():
            return
        lg.driver = asyncio.create_task(self._drive(lg), name=f"bots-{lg.key}")

    async def _drive(self, lg: LiveGame) -> None:
        """Let bots move until a human is to move or the game is over."""
        game = lg.game
        try:
            while not game.is_over and lg.ended is None and game.to_move.is_bot:
                if not lg.human_active and self.bot_pace > 0:
                    await asyncio.sleep(self.bot_pace)
                count = len(game.history)
                task = asyncio.ensure_future(self.compute(game.bot_choice))
                done, _ = await asyncio.wait({task}, timeout=0.25)
                if not done:
                    lg.thinking = True
                    self.broadcast(lg)
                choice = await task
                async with lg.lock:
                    if len(game.history) != count or game.is_over or lg.ended is not None:
                        continue
                    game.push(choice.move, claim=choice.claim)
                    await self._save(lg)
                lg.thinking = False
                lg.problem = None
                if game.is_over:
                    await self._finish(lg)
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

    def _forget_old(self) -> None:
        finished = [k for k, lg in self.games.items() if lg.saved_as is not None]
        for key in finished[: max(0, len(finished) - KEEP_FINISHED)]:
            del self.games[key]

    # -- watching -----------------------------------------------------------------------------

    def broadcast(self, lg: LiveGame) -> None:
        """Send the new state to every open page of this game."""
        if not lg.subscribers:
            return
        import json

        text = json.dumps({"type": "state", "state": self.state(lg).model_dump()})
        for sub in lg.subscribers:
            sub.push(text)

    def subscribe(self, lg: LiveGame) -> _Subscriber:
        sub = _Subscriber()
        lg.subscribers.add(sub)
        return sub

    def unsubscribe(self, lg: LiveGame, sub: _Subscriber) -> None:
        lg.subscribers.discard(sub)

    # -- learning -----------------------------------------------------------------------------

    async def _snapshot_compute(
        self, lg: LiveGame, kind: str, fn: Callable[[Game], T]
    ) -> T | None:
        """Compute ``fn(game)`` on an engine thread for the current move (cached per move);
        ``None`` if it takes longer than ``compute_wait`` (it goes on, for the next ask)."""
        game = lg.game
        key = (kind, len(game.history))
        future = lg.analyses.get(key)
        if future is None:

            def run() -> T:
                while True:  # moves are only pushed on the event loop: retry if one was
                    count = len(game.history)
                    result = fn(game)
                    if len(game.history) == count:
                        return result

            future = asyncio.ensure_future(self.compute(run))
            lg.analyses = {k: v for k, v in lg.analyses.items() if k[1] == key[1]}
            lg.analyses[key] = future
        try:
            return await asyncio.wait_for(asyncio.shield(future), self.compute_wait)
        except TimeoutError:
            return None

    async def analysis(self, key: str) -> AnalysisOut:
        lg = self.get(key)
        if not lg.analysis_open:
            raise Forbidden("this game's setup allows no analysis during play: after the game")
        count = len(lg.game.history)
        result = await self._snapshot_compute(lg, "analysis", analysis_out)
        if result is None:
            return blank_analysis(
                count,
                available=False,
                note="Still working this position out (a long exact search): ask again soon.",
            )
        return result

    async def hint(self, key: str) -> HintOut | None:
        lg = self.get(key)
        if lg.game.is_over or lg.ended is not None:
            raise GameOverError("the game is over: there is nothing to hint")
        if not lg.analysis_open:
            raise Forbidden("this game's setup allows no hints during play")
        return await self._snapshot_compute(lg, "hint", hint_out)
