"""The open pages of games (WebSockets): who watches which game, what each is sent, and the
bounds on pages per game and per client.

A page is a :class:`Subscriber`; :meth:`Watchers.broadcast` marks every page of a game as behind
(each is then sent the state with the turns it has not seen, rendered once per change for all
pages at the same move), :meth:`Watchers.push` sends a late hint or analysis. Memory is given back
to the system after bursts of closed pages.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import gc
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING

from pydantic import BaseModel

from nimlab.core.words import count_text
from nimlab.web import metrics
from nimlab.web.guard import Holdings, holding_limit
from nimlab.web.livegame import LiveGame, state_text

if TYPE_CHECKING:
    from nimlab.web.live import LiveGames

__all__ = ["Subscriber", "Watchers", "give_back_memory"]


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


class Subscriber:
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


class Watchers:
    """The open pages of every game a process holds (``live``: its registry)."""

    def __init__(self, live: LiveGames) -> None:
        self.live = live
        self.sockets = Holdings.of("sockets", live.settings)
        """The WebSockets open per client and network (with other processes': see
        :class:`~nimlab.web.limits.SharedLimits`)."""
        self._released = 0  # WebSockets closed since memory was last given back
        self._trim: asyncio.TimerHandle | None = None
        self._trim_since = 0.0

    def close(self) -> None:
        """Cancel the pending return of memory (the server stops)."""
        if self._trim is not None:
            self._trim.cancel()

    def broadcast(self, lg: LiveGame) -> None:
        """Tell every open page of this game that it changed (each is sent what it has not
        seen; see :func:`~nimlab.web.livegame.state_text`)."""
        lg.version += 1
        for sub in lg.subscribers:
            sub.changed()

    def push(self, lg: LiveGame, kind: str, result: BaseModel) -> None:
        """Send a late hint or analysis (``kind``) to every open page of this game (written
        once, only when a page is open)."""
        if not lg.subscribers:
            return
        text = learning_message(kind, result)
        for sub in lg.subscribers:
            sub.push(text)

    def admit(self, lg: LiveGame, client: str | None) -> str | None:
        """Count a new WebSocket of ``client`` on game ``lg``: ``None`` when admitted (give it
        back with :meth:`release`), else why not (at most ``max_sockets_per_client`` per client
        and ``max_watchers_per_game`` per game, settings). O(1)."""
        if len(lg.subscribers) >= self.live.settings.max_watchers_per_game:
            metrics.refused("max_watchers_per_game")
            return (
                f"this game has {count_text(len(lg.subscribers), 'open page')}, as many as one "
                "game may have: try again later"
            )
        if client is not None:
            why = self.sockets.take(client)
            if why is not None:
                metrics.refused(holding_limit(why, "max_sockets_per_client", "max_concurrency"))
            if why == "address":
                mine = self.sockets.holds(client)
                return (
                    f"you have {count_text(mine, 'game page')} open, as many as one client may: "
                    "close one"
                )
            if why is not None:
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
        self.sockets.give_back(client)

    def sockets_open(self) -> int:
        """How many WebSockets admitted by :meth:`admit` are open (those with a client)."""
        return self.sockets.total

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

    def subscribe(self, lg: LiveGame) -> Subscriber:
        """A new open page of this game; it is sent the hints and analyses of the position in
        play found so far (one may have been found between the page's request and its
        listening)."""
        count = len(lg.game.history)
        sub = Subscriber(count)
        lg.subscribers.add(sub)
        self.live.bots.looked_at(lg)
        for kind, entry in lg.learning.items():
            if entry.count == count and entry.result is not None:
                sub.push(learning_message(kind, entry.result))
        return sub

    def rewound(self, lg: LiveGame, count: int) -> None:
        """Moves after the first ``count`` were taken back: each open page is sent the turns from
        there on, so none keeps a move that is no longer played."""
        for sub in lg.subscribers:
            sub.sent = min(sub.sent, count)

    def unsubscribe(self, lg: LiveGame, sub: Subscriber) -> None:
        """A page closed: a game of bots only plays on for ``unwatched_pause`` seconds from now
        (the page looked at it until now), and what nobody waits for any more stops."""
        lg.subscribers.discard(sub)
        self.live.bots.looked_at(lg)
        self.live.learning.abandon_all(lg)

    async def next_messages(self, lg: LiveGame, sub: Subscriber) -> list[str]:
        """Wait for what a page has not seen yet: the state with its new turns, then any
        pushed hint or analysis."""
        await sub.event.wait()
        sub.event.clear()
        out: list[str] = []
        if sub.dirty:
            sub.dirty = False
            out.append(state_text(lg, sub.sent))
            sub.sent = len(lg.game.history)
        while sub.extra:
            out.append(sub.extra.popleft())
        return out


def learning_message(kind: str, result: BaseModel) -> str:
    """The message that brings a page a hint or analysis: ``{"type": kind, kind: result}``,
    the result written by pydantic itself (no intermediate dict)."""
    return f'{{"type":"{kind}","{kind}":{result.model_dump_json()}}}'
