"""The bots of the games in play (:class:`BotDriver`): each game whose bot is to move has one
task (its driver) that works the bot's move out on the engine's workers within the move budget
and hands it to :meth:`nimlab.web.owner.GameOwner.bot_turn`, which plays and stores it. A game of
bots only plays at ``bot_pace``, only while someone watches it (a move whose turn on the engine
comes when nobody watches any more is not searched), and on the engine's ``bots_only_threads``
threads that all games of bots only share. With several processes, the process that played the
move before a bot's plays the bot; another takes over a game whose bot nobody played for
``takeover_grace`` seconds (:meth:`BotDriver.ensure` with a grace).
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING

from nimlab.core.bots import Choice
from nimlab.core.errors import NimlabError
from nimlab.web.errors import ApiError
from nimlab.web.livegame import LiveGame, Superseded

if TYPE_CHECKING:
    from nimlab.web.live import LiveGames

__all__ = ["BotDriver"]

log = logging.getLogger("nimlab.web")


class BotDriver:
    """The bots' moves in the games a process holds (``live``: its registry)."""

    def __init__(self, live: LiveGames) -> None:
        self.live = live

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

    def cancel_work(self, lg: LiveGame, *, keep_driver: bool = False) -> None:
        """Stop every piece of engine work of a game (it ended or goes away): its bots'
        thinking (unless ``keep_driver``), hints and analyses. For the game's lifecycle (resign,
        abandon, delete, undo: call it before changing or dropping the game)."""
        self.live.learning.cancel(lg)
        if self.live.workers is not None:
            self.live.workers.cancel(lg.key, ("hint", "analysis", "past") if keep_driver else None)
        if not keep_driver and lg.driver is not None and not lg.driver.done():
            lg.driver.cancel()
        lg.thinking = False

    @property
    def grace(self) -> float:
        """How long a game's bot waits for another process to play it (see ``takeover_grace``):
        longer than a game of bots only waits between its moves."""
        return self.live.settings.takeover_grace + self.live.settings.bot_pace

    def ensure(self, lg: LiveGame, *, grace: float = 0.0) -> None:
        """Let the game's bots play when one is to move (after ``grace`` seconds in which no
        other process changed the game: see :meth:`_drive`)."""
        game = lg.game
        if game.is_over or lg.ended is not None or not game.to_move.is_bot:
            return
        if lg.saved_as is not None or lg.finishing:
            return
        if lg.driver is not None and not lg.driver.done():
            return
        if not self.live.has_feed:
            grace = 0.0  # no other process
        lg.driver = asyncio.create_task(self._drive(lg, grace), name=f"bots-{lg.key}")

    async def _take_over(self, lg: LiveGame, grace: float) -> bool:
        """Wait until nobody changed the game for ``grace`` seconds (the process that played
        last plays its bots; this one takes over when that one has stopped). Whether a bot is
        still to move then."""
        seen = lg.stored
        while True:
            await asyncio.sleep(grace)
            await self.live.follower.sync_if_stale(lg)
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
                if not lg.human_active and self.live.settings.bot_pace > 0:
                    await asyncio.sleep(self.live.settings.bot_pace)
                if lg.bots_only:
                    await self._until_watched(lg)
                count = len(game.history)
                if game.bot_choice_is_instant():  # lookups only: no worker needed
                    choice = game.bot_choice()
                else:
                    try:
                        choice = await self._think(lg)
                    except Superseded:  # (also a move of a game nobody watches any more)
                        lg.thinking = False
                        if lg.key not in self.live.games or lg.finishing:
                            return
                        continue
                played = await self.live.owner.bot_turn(lg, count, choice)
                if played is None:
                    return
        except asyncio.CancelledError:
            raise
        except Exception as e:
            log.exception("game %s: a bot could not move", lg.key)
            name = game.to_move.name if not game.is_over else "a bot"
            detail = str(e) if isinstance(e, NimlabError | ApiError) else type(e).__name__
            self.live.owner.bot_failed(lg, f"{name} could not move ({detail})")
        finally:
            lg.thinking = False  # what the pages show: no bot of this game thinks any more

    def _watched(self, lg: LiveGame) -> bool:
        return (
            bool(lg.subscribers) or time.monotonic() - lg.seen < self.live.settings.unwatched_pause
        )

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

    async def _think(self, lg: LiveGame) -> Choice:
        """The bot to move's choice, worked out on the engine's workers (the game's pages are
        told it is thinking when that takes more than a moment). A game of bots only that
        nobody watches any more when its turn on the engine comes is not searched: the engine
        drops the job as no longer wanted and :class:`Superseded` is raised (a crowd's games
        queued many moves on the engine's shared thread while their pages were open, searched
        long after they closed)."""
        bots_only = lg.bots_only
        task = asyncio.ensure_future(
            self.live.compute(
                lg.key,
                "bot",
                lg.game.bot_choice,
                client=lg.client,
                bots_only=bots_only,
                wanted=(lambda: self._watched(lg)) if bots_only else None,
            )
        )
        try:
            done, _ = await asyncio.wait({task}, timeout=0.25)
        except asyncio.CancelledError:
            task.cancel()  # asyncio.wait leaves it running: stop the bot's search too
            raise
        if not done:
            lg.thinking = True
            self.live.watchers.broadcast(lg)
        return await task

    async def await_replies(self, lg: LiveGame) -> None:
        """Wait (up to ``reply_wait`` seconds) for the bots to reply to a human's move."""
        driver = lg.driver
        if driver is not None and not driver.done() and lg.human_active:
            await asyncio.wait({driver}, timeout=self.live.settings.reply_wait)
