"""What other processes change (:class:`FeedFollower`): the change feed
(:class:`~nimlab.storage.ChangeFeed`) tells every process of every committed change of a game;
a game held here that another process changed is read again (:meth:`FeedFollower.sync`) and its
pages told, or, when nothing here watches or plays it, the copy is dropped (the next request reads
it afresh). A request for a game's state checks its version first
(:meth:`FeedFollower.sync_if_stale`: one indexed read). The copy itself is changed only by
:class:`~nimlab.web.owner.GameOwner` (:meth:`~nimlab.web.owner.GameOwner.adopt`).
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from nimlab.core.record import GameRecord
from nimlab.storage import ChangeFeed, Changes, StorageError, takebacks_of
from nimlab.web import metrics
from nimlab.web.errors import ApiError, Unavailable
from nimlab.web.livegame import LiveGame

if TYPE_CHECKING:
    from nimlab.web.live import LiveGames

__all__ = ["READ_AGAIN", "FeedFollower"]

log = logging.getLogger("nimlab.web")

READ_AGAIN = 0.5
"""Seconds before a game whose reading failed (the database down) is read again."""


class FeedFollower:
    """The copies of games another process changed, brought up to the database's (``live``: the
    registry)."""

    def __init__(self, live: LiveGames) -> None:
        self.live = live

    async def follow(self, feed: ChangeFeed) -> None:
        """Read the change feed for as long as the server runs: every game held here that
        another process changed is read again and its pages told (all of them after the feed
        was lost for a while). The feed is closed by
        :meth:`~nimlab.web.live.LiveGames.stop`, once its thread is done."""
        loop = asyncio.get_running_loop()
        failing = False
        while True:
            try:
                found: Changes = await loop.run_in_executor(self.live.feed_thread, feed.wait, 0.5)
            except StorageError as e:
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
                for lg in list(self.live.games.values()):
                    self.refresh_soon(lg, None)
            for change in found.changes:
                held = self.live.games.get(change.key)
                if held is not None:
                    self.refresh_soon(held, change.version)

    def refresh_soon(self, lg: LiveGame, version: int | None) -> None:
        """Read game ``lg`` again when it is older than ``version`` (``None``: in any case), in
        a task of its own; changes announced while it reads make it read once more. A copy that
        no page watches and no bot plays here is dropped instead."""
        if lg.saved_as is not None or (version is not None and version <= lg.stored):
            return
        if version is not None and lg.writing:
            # a write of this process is on its way: the announcement may be its own commit,
            # heard before the copy followed it (its callback); judged once the writes are done
            pending = next(iter(lg.writing))
            pending.add_done_callback(lambda _: self.refresh_soon(lg, version))
            return
        idle = lg.driver is None or lg.driver.done()
        if not lg.subscribers and idle and not lg.lock.locked() and not lg.refreshing:
            # nobody watches it here: forget the copy rather than read it (the next request
            # reads the game afresh), so a change costs a read only where pages show it
            if self.live.games.get(lg.key) is lg:
                del self.live.games[lg.key]
            self.live.bots.cancel_work(lg)
            return
        if lg.refreshing:
            lg.refresh_again = True
            return
        lg.refreshing = True
        self.live.spawn(self._refresh(lg), f"refresh-{lg.key}")

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
                    if self.live.games.get(lg.key) is not lg:
                        return
                    continue
                except ApiError as e:
                    log.warning("game %s could not be read again: %s", lg.key, e.message)
                    return
                if changed:
                    self.after_sync(lg)
                if not lg.refresh_again:
                    return
        finally:
            lg.refreshing = False

    def after_sync(self, lg: LiveGame) -> None:
        """Tell the pages of a game read afresh, and let its bot play (after the grace)."""
        self.live.watchers.broadcast(lg)
        self.live.bots.ensure(lg, grace=self.live.bots.grace)

    async def sync(self, lg: LiveGame) -> bool:
        """Bring this process's copy of a game up to the database's (call with ``lg.lock``
        held): its moves (those no longer stored are taken back, the pages told), its end
        (finished, resigned or abandoned by another process), or its removal (expired or
        deleted). Returns whether anything changed. Raises :class:`Unavailable` when the
        database cannot be read."""
        if lg.saved_as is not None:
            return False
        key = lg.key
        found = await self.live.read(lambda s: s.live_game_with_version(key))
        if found is None:
            return await self._sync_gone(lg)
        (_, record, meta), version = found
        if version == lg.stored:
            return False
        moves = GameRecord.from_json(record).moves
        self.live.owner.ledger.adopt(lg, moves, version, takebacks_of(meta))
        return True

    async def _sync_gone(self, lg: LiveGame) -> bool:
        """The game is no longer in play in the database: finished (its stored record is
        read), else removed."""
        key = lg.key
        found = await self.live.read(lambda s: s.finished_game(key))
        if found is None:
            self.live.owner.ledger.gone(lg, "This game is no longer in play.")
            return True
        game_id, meta = found
        stored = await self.live.read(lambda s: s.game(game_id))
        self.live.owner.ledger.adopt_finished(lg, stored.record, game_id, takebacks_of(meta))
        return True

    async def changed_elsewhere(self, lg: LiveGame) -> bool:
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
        version = await self.live.read(lambda s: s.live_version(key))
        if version == before:
            return False
        async with lg.lock:
            changed = await self.sync(lg)
        if changed:
            self.after_sync(lg)
        # (read again meanwhile by the change feed: changed all the same)
        return changed or lg.stored != before or lg.saved_as is not None
