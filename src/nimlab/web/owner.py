"""The one owner of a game's changes (:class:`GameOwner`): the only code that plays a human's
move or a bot's, takes moves back, ends a game (finished, resigned, abandoned, stopped),
expires games, checks a seat's token, and (through its :class:`Ledger`) writes the stored
version and takes in what other processes stored. Routes
(:mod:`nimlab.web.api`, :mod:`nimlab.web.lifecycle`), the bot driver
(:mod:`nimlab.web.bots_driver`) and the feed follower (:mod:`nimlab.web.feed_follower`) ask it.

Every change is written against the version of the game the copy reflects (``LiveGame.stored``);
the storage refuses it when another process changed the game first
(:class:`~nimlab.storage.StaleGameError`, here :class:`~nimlab.web.livegame.Stale`), and the
change is judged again on the game read afresh. Nothing is answered before it is stored: when a
write fails, the copy is put back as it was. See docs/architecture.md.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from nimlab.core.errors import GameOverError, NimlabError, PlayerError
from nimlab.core.position import Move
from nimlab.core.record import GameRecord, RecordedMove
from nimlab.storage import Ending, LimitError, RecordError, StaleGameError, StorageError, ending_of
from nimlab.web.errors import Conflict, Forbidden
from nimlab.web.livegame import (
    CHANGED_ELSEWHERE,
    LiveGame,
    Stale,
    database_down,
    ended_text,
    token_hash,
)

if TYPE_CHECKING:
    from nimlab.core.bots import Choice
    from nimlab.web.live import LiveGames

__all__ = ["GameOwner", "Ledger"]

log = logging.getLogger("nimlab.web")


class GameOwner:
    """Every change of the games a process holds (``live``: its registry)."""

    def __init__(self, live: LiveGames) -> None:
        self.live = live
        self.ledger = Ledger(live)

    # -- who may act ----------------------------------------------------------------------------

    @staticmethod
    def check_seat(lg: LiveGame, seat: int, token: str, *, acting: str = "act") -> str:
        """The name of the human seat ``seat`` when ``token`` is its token; raises otherwise
        (:class:`PlayerError` for a seat that does not exist, :class:`Forbidden` for a bot's seat
        or a wrong token). ``acting``: ``move`` or ``act``, for the message. O(1)."""
        players = lg.game.players
        if not 0 <= seat < len(players):
            raise PlayerError(f"seat {seat} does not exist: seats are 0 to {len(players) - 1}")
        player = players[seat]
        if player.is_bot:
            does = "bots move by themselves" if acting == "move" else "bots cannot do that"
            raise Forbidden(f"seat {seat} is {player.name}, a bot: {does}")
        expected = lg.token_hashes.get(seat)
        if expected is None or not hmac.compare_digest(expected, token_hash(token)):
            raise Forbidden(
                f"wrong token for seat {seat} ({player.name}): only the link given to "
                f"{player.name} can {acting} for them"
            )
        return player.name

    async def expire(self) -> list[str]:
        """Delete the games in play not touched for the storage's expiry time (see
        :class:`nimlab.storage.InPlayLimits`), in the database and here (their work is
        stopped, their pages told); logged. Returns their keys."""
        keys = await self.live.write(lambda s: s.expire_games_in_play())
        for key in keys:
            lg = self.live.games.pop(key, None)
            if lg is not None:
                self.live.bots.cancel_work(lg)
                lg.ended = "Expired: nobody played for too long."
                self.live.watchers.broadcast(lg)
        if keys:
            log.warning("%d games in play expired (untouched too long): deleted", len(keys))
        return keys

    async def end(
        self,
        lg: LiveGame,
        how: str,
        seat: Callable[[], int],
        *,
        allowed: Callable[[], None] = lambda: None,
        text: str | None = None,
    ) -> None:
        """End a game in play (``how``: ``resigned``, the other players still in the game win,
        or ``abandoned``, nobody wins; by the seat ``seat()`` names) after its engine work
        stopped (:meth:`~nimlab.web.bots_driver.BotDriver.halt`); ``allowed`` raises when the
        change may not be made, ``text`` replaces the ending's sentence. The game is stored
        with its ending and leaves the games in play in ONE transaction (on failure nothing
        changed: :class:`Unavailable`). When another process changed the game first, it is
        judged once more on the game read afresh (:class:`Stale` when it changed again)."""
        self.in_play(lg)
        for attempt in range(2):
            allowed()
            await self.live.bots.halt(lg)
            try:
                async with lg.lock:
                    self.in_play(lg)
                    await self._end(lg, how, seat(), text)
                return
            except Stale:  # another process changed the game first: judge again on the new state
                if attempt or not await self.live.follower.sync_if_stale(lg):
                    raise
                self.in_play(lg)

    async def _end(self, lg: LiveGame, how: str, seat: int, text: str | None) -> None:
        """:meth:`end` once, with ``lg.lock`` held."""
        game = lg.game
        winners = tuple(s for s in game.active if s != seat) if how == "resigned" else ()
        ending = Ending(how, seat, winners)
        record = game.to_record()
        record["ended"] = ending.to_json()
        usernames = list(lg.usernames)
        lg.finishing = True
        expect, private = lg.stored, not lg.public
        try:
            lg.saved_as = await self.live.storage(
                self.live.queued(
                    lambda: self.live.writer.finish_game(
                        lg.key, record, usernames, source="web", expect=expect, private=private
                    )
                )
            )
            self.live.finished(lg.key)
        except StaleGameError:
            lg.finishing = False
            raise Stale(CHANGED_ELSEWHERE) from None
        except BaseException:
            lg.finishing = False
            raise
        lg.saved = len(game.history)
        self.ledger.stopped(lg, ending)
        if text is not None:
            lg.ended = text
        self.live.watchers.broadcast(lg)

    async def apply(self, lg: LiveGame, move: Move) -> bool:
        """Play a human's ``move`` (judged by :class:`~nimlab.web.moves.MoveRequests`), the
        bots' replies that answer from memory, and store them (unless bots reply that need
        thinking: :meth:`save` then stores them with the replies); whether bots reply. Raises
        the core's error for an illegal move (nothing changed), or the storage's (the moves
        taken back). Call with ``lg.lock`` held."""
        game = lg.game
        game.push(move)
        self.live.learning.moved(lg)
        self._instant_replies(lg)
        replies = not game.is_over and game.to_move.is_bot and lg.human_active
        if game.is_over:
            await self.ledger.finish(lg)  # its unsaved moves and the finish: one transaction
        elif not replies:
            await self.ledger.save(lg)
        return replies

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
            self.live.learning.moved(lg)

    async def changed(self, lg: LiveGame) -> None:
        if lg.game.is_over:
            await self.ledger.finish(lg)
        self.live.bots.ensure(lg)
        self.live.watchers.broadcast(lg)

    def may_stop(self, lg: LiveGame, token: str | None, *, admin: bool) -> bool:
        """Whether a request may stop this game in play: the admin may stop any; the owner's
        token (given when it was created) stops a game of bots only."""
        if admin:
            return True
        return (
            token is not None
            and lg.owner_hash is not None
            and hmac.compare_digest(lg.owner_hash, token_hash(token))
        )

    # -- take-backs and bots' turns ----------------------------------------------------------

    async def undo(self, lg: LiveGame, seat: int, token: str) -> None:
        """In a game against bots, seat ``seat`` (``token`` proves it) takes back its last move
        and the bots' replies (:class:`Conflict` in a game with other humans, or without a move
        of that seat); stored first, fenced by the copy's version. Its engine work stops first.
        When another process changed the game first, it is judged once more on the game read
        afresh (:class:`Stale` when it changed again), as :meth:`end` does."""
        name = self.check_seat(lg, seat, token)
        humans = [s for s, p in enumerate(lg.game.players) if not p.is_bot]
        if humans != [seat]:
            raise Conflict(
                "take-backs are only for games against bots: ask the others for a new game"
            )
        for attempt in range(2):
            self.in_play(lg)
            await self.live.bots.halt(lg)
            try:
                async with lg.lock:
                    self.in_play(lg)
                    await self._undo(lg, seat, name)
                break
            except Stale:  # another process changed the game first: judge again on the new state
                if attempt or not await self.live.follower.sync_if_stale(lg):
                    raise
        self.live.watchers.broadcast(lg)

    async def _undo(self, lg: LiveGame, seat: int, name: str) -> None:
        """:meth:`undo` once, with ``lg.lock`` held."""
        game = lg.game
        mine = [i for i, turn in enumerate(game.history) if turn.seat == seat]
        if not mine:
            raise Conflict(f"{name} has no move to take back")
        keep = mine[-1]
        key, expect = lg.key, lg.stored
        # the store first: if it fails, nothing changed
        try:
            await self.live.write(lambda s: s.take_back_live_moves(key, keep, expect=expect))
        except StaleGameError:
            raise Stale(CHANGED_ELSEWHERE) from None
        while len(game.history) > keep:
            game.pop()
        lg.saved = keep
        lg.stored += 1
        self.live.watchers.rewound(lg, keep)
        lg.problem = None
        lg.takebacks += 1
        self.live.bots.cancel_work(lg)  # what was asked about the later positions is not wanted

    @staticmethod
    def in_play(lg: LiveGame) -> None:
        """Raise :class:`GameOverError` unless the game is still in play."""
        if lg.game.is_over or lg.ended is not None or lg.finishing:
            raise GameOverError("the game is over already")

    async def bot_turn(self, lg: LiveGame, count: int, choice: Choice) -> bool | None:
        """Play the bot's ``choice`` worked out after move ``count`` and store it: ``True`` when
        played, ``False`` when the game moved on meanwhile (here, or in another process: the
        game is then read again), ``None`` when the game is stored as finished (the bots stop).
        """
        game = lg.game
        async with lg.lock:
            if len(game.history) != count or game.is_over or lg.ended is not None:
                return False
            if lg.saved_as is not None:
                return None
            game.push(choice.move, claim=choice.claim)
            lg.thinking = False  # (a state read while the move is stored must not say so)
            self.live.learning.moved(lg)
            try:
                if game.is_over:
                    await self.ledger.finish(lg)  # the move and the finish: one transaction
                else:
                    await self.ledger.save(lg)
            except Stale:  # another process played first: go on from the game as stored
                if await self.live.follower.sync(lg):
                    self.live.watchers.broadcast(lg)
                return False
        lg.problem = None
        self.live.watchers.broadcast(lg)
        return True

    def bot_failed(self, lg: LiveGame, problem: str) -> None:
        """A bot could not move: the game cannot go on, and everyone watching is told why."""
        lg.problem = problem
        lg.thinking = False
        self.live.watchers.broadcast(lg)


class Ledger:
    """The stored side of the games a process holds, for their owner: the only code that
    writes a game's moves and its finish against the stored version the copy reflects, and
    that makes the copy what another process stored (the feed follower asks it)."""

    def __init__(self, live: LiveGames) -> None:
        self.live = live

    @staticmethod
    def stopped(lg: LiveGame, ending: Ending) -> None:
        lg.ended = ended_text(list(lg.game.players), ending)
        lg.ended_winner = ending.winners[0] if len(ending.winners) == 1 else None
        lg.thinking = False

    async def save(self, lg: LiveGame) -> None:
        """Store the moves not stored yet; on failure take them back and raise Unavailable (or the
        storage's LimitError, a 422, at the bound on moves per game)."""
        moves = [m.to_json() for m in lg.game.recorded_moves(lg.saved)]
        if not moves:
            return
        written = self.live.writer.add_moves(lg.key, lg.saved + 1, moves, expect=lg.stored)

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
        except (StorageError, RecordError) as e:
            self._unplayed(lg, len(moves))
            if isinstance(e, StaleGameError):  # another process changed the game first
                raise Stale(str(e)) from None
            if isinstance(e, LimitError):  # the game has as many moves as a game may have
                raise
            raise database_down("the move could not be saved, so it was not played", e) from None

    def _unplayed(self, lg: LiveGame, count: int) -> None:
        """Take back the last ``count`` moves, which could not be stored, and tell the open
        pages: one may have been sent them meanwhile (a page is sent the game as it is, and a
        human's move waits for the bots' replies to be stored with them)."""
        for _ in range(count):
            lg.game.pop()
        self.live.learning.moved(lg)
        self.live.watchers.rewound(lg, len(lg.game.history))
        self.live.watchers.broadcast(lg)

    async def finish(self, lg: LiveGame) -> None:
        """Move a finished game from the games in progress to the stored games (and the
        players' statistics), with the moves not stored yet, in one transaction. At most once:
        the store refuses to finish a game that is no longer in progress. When moves not stored
        yet cannot be, they are taken back and Unavailable (or the storage's LimitError) is
        raised, as :meth:`save` does; any other failure is logged (the game stays in play)."""
        if lg.finishing:
            return
        lg.finishing = True
        self.live.bots.cancel_work(lg, keep_driver=True)
        game = lg.game
        moves = [m.to_json() for m in game.recorded_moves(lg.saved)]
        record = game.to_record()
        usernames = list(lg.usernames)
        try:
            # one transaction: in play or finished, never lost
            finished = self.live.writer.finish_game(
                lg.key,
                record,
                usernames,
                source="web",
                first=lg.saved + 1,
                moves=moves,
                expect=lg.stored,
                private=not lg.public,
            )

            def stored(done: asyncio.Future[int]) -> None:  # see save
                if not done.cancelled() and done.exception() is None:
                    lg.saved_as = done.result()
                    lg.saved += len(moves)
                    lg.stored += 2 if moves else 1

            finished.add_done_callback(stored)
            lg.writing.add(finished)
            finished.add_done_callback(lg.writing.discard)
            await asyncio.shield(finished)
        except (StorageError, NimlabError) as e:
            lg.finishing = False
            if isinstance(e, StaleGameError):  # another process changed the game first
                self._unplayed(lg, len(moves))
                raise Stale(str(e)) from None
            if not moves:
                log.error("game %s could not be stored: %s", lg.key, e)
                return
            self._unplayed(lg, len(moves))
            if isinstance(e, LimitError):  # the game has as many moves as a game may have
                raise
            raise database_down("the move could not be saved, so it was not played", e) from None
        self.live.finished(lg.key)

    def replace_moves(self, lg: LiveGame, moves: tuple[RecordedMove, ...]) -> None:
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
            self.live.watchers.rewound(lg, same)
        self.live.learning.moved(lg)
        lg.problem = None
        lg.thinking = False

    # -- changes another process made, adopted ------------------------------------------------

    def adopt(
        self, lg: LiveGame, moves: tuple[RecordedMove, ...], version: int, takebacks: int
    ) -> None:
        """The copy becomes the database's game at ``version`` with ``moves`` and ``takebacks``
        take-backs so far (read by the feed follower; call with ``lg.lock`` held)."""
        self.replace_moves(lg, moves)
        lg.stored = version
        lg.takebacks = takebacks

    def adopt_finished(
        self, lg: LiveGame, record: dict[str, Any], game_id: int, takebacks: int
    ) -> None:
        """The copy becomes the stored game ``game_id`` (``record``, after ``takebacks``
        take-backs): another process finished, resigned or abandoned it."""
        self.live.bots.cancel_work(lg, keep_driver=True)
        self.replace_moves(lg, GameRecord.from_json(record).moves)
        lg.takebacks = takebacks
        lg.saved_as = game_id
        lg.finishing = True
        ending = ending_of(record, len(lg.game.players))
        if ending is not None:
            self.stopped(lg, ending)
        self.live.finished(lg.key)

    def drop(self, lg: LiveGame) -> None:
        """The game was deleted: its work stops and it leaves the registry."""
        self.live.bots.cancel_work(lg)
        if self.live.games.get(lg.key) is lg:
            del self.live.games[lg.key]

    def gone(self, lg: LiveGame, why: str) -> None:
        """The game left the games in play elsewhere (expired or deleted): its work stops, it
        leaves the registry, and its pages are told ``why`` (the caller broadcasts)."""
        self.live.bots.cancel_work(lg)
        lg.ended = why
        if self.live.games.get(lg.key) is lg:
            del self.live.games[lg.key]
