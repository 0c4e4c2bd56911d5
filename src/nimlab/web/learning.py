"""Hints and analyses of games in play (:class:`Learning`): worked out on the engine's workers
within the move budget, cached per move, and when not proven within it, searched deeper and
pushed to the game's pages when found (as is an answer the engine could not start on within
``compute_wait``). A move played cancels what was asked about the position before it (see
:meth:`nimlab.web.owner.GameOwner.moved`). When processes share the database, each hint and
analysis is worked out by the one that claimed it, and the others wait for its answers
(:mod:`nimlab.web.claims`): a claim given up (nobody waits for it there) or of a process that
died is taken over by the next one asking.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from nimlab.core.errors import GameOverError, NimlabError
from nimlab.core.game import Game
from nimlab.storage import StorageError
from nimlab.storage.claims import Claim
from nimlab.theory.budget import BudgetExceeded
from nimlab.web.analysis_views import analysis_after, analysis_out, blank_analysis, hint_out
from nimlab.web.claims import CLAIM_POLL, WorkClaims
from nimlab.web.errors import ApiError, Forbidden, Unavailable
from nimlab.web.livegame import LiveGame, Superseded, engine_waits
from nimlab.web.schemas_out import AnalysisOut, HintOut

if TYPE_CHECKING:
    from nimlab.web.live import LiveGames

__all__ = ["Learning", "Learnings"]


@dataclass(eq=False)
class Learning:
    """A hint or an analysis for move ``count``: the quick answer, then maybe a deeper one."""

    count: int
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    result: Any = None
    error: BaseException | None = None
    late: bool = False
    task: asyncio.Task[None] | None = None
    waiting: int = 0
    """Requests waiting for it now (with the game's open pages: who still wants it)."""


class Learnings:
    """The hints and analyses asked of the games a process holds (``live``: its registry)."""

    def __init__(self, live: LiveGames) -> None:
        self.live = live

    def moved(self, lg: LiveGame) -> None:
        """A move was played (or taken back): hints and analyses of other moves are no longer
        wanted."""
        count = len(lg.game.history)
        stale = [k for k, entry in lg.learning.items() if entry.count != count]
        for kind in stale:
            entry = lg.learning.pop(kind)
            if entry.task is not None:
                entry.task.cancel()
        if stale and self.live.workers is not None:
            self.live.workers.cancel(lg.key, tuple(stale))

    @staticmethod
    def cancel(lg: LiveGame) -> None:
        """Stop the hints and analyses asked of a game (it ended or goes away)."""
        for entry in lg.learning.values():
            if entry.task is not None:
                entry.task.cancel()
        lg.learning.clear()

    def abandon_all(self, lg: LiveGame) -> None:
        """:meth:`abandon` every hint and analysis asked of ``lg`` (a page of it closed)."""
        for kind, entry in list(lg.learning.items()):
            self.abandon(lg, kind, entry)

    @staticmethod
    def abandon(lg: LiveGame, kind: str, entry: Learning) -> None:
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

    async def _learn(self, lg: LiveGame, kind: str) -> Any:
        """The hint or analysis for the current move: the answer found within the move budget
        (cached per move), or ``None`` when the engine could not start on it within
        ``compute_wait`` (it is then pushed to the game's pages when found). When that answer
        is not proven, a deeper search goes on and its answer is pushed too."""
        count = len(lg.game.history)
        entry = lg.learning.get(kind)
        if entry is None or entry.count != count:
            entry = Learning(count)
            lg.learning[kind] = entry
            entry.task = self.live.spawn(self._learn_run(lg, kind, entry), f"{kind}-{lg.key}")
        if not entry.ready.is_set():
            entry.waiting += 1
            try:
                await asyncio.wait_for(entry.ready.wait(), self.live.settings.compute_wait)
            except TimeoutError:
                entry.late = True
                return None
            finally:
                entry.waiting -= 1
                self.abandon(lg, kind, entry)
        if entry.error is not None:
            raise entry.error
        return entry.result

    async def _learn_run(self, lg: LiveGame, kind: str, entry: Learning) -> None:
        """Work out ``entry``, or wait for the process that claimed it (when processes share
        the database: see :mod:`nimlab.web.claims`)."""
        claims = self.live.claims
        if claims is None:
            await self._work_out(lg, kind, entry, None)
            return
        claim = await self._claimed(lg, kind, entry, claims)
        if claim is None:
            return  # answered by the process that holds the claim
        done = False

        async def store(result: AnalysisOut | HintOut | Unavailable, final: bool) -> None:
            nonlocal done
            answer = (
                json.dumps({"unavailable": result.message})
                if isinstance(result, Unavailable)
                else result.model_dump_json()
            )
            with contextlib.suppress(StorageError):  # (the others then work it out themselves)
                done = await claims.answer(lg.key, kind, entry.count, answer, final=final) and final

        quick = None if claim.answer is None else _parsed(kind, claim.answer)
        if isinstance(quick, Unavailable):  # (a last answer: never taken over)
            quick = None
        try:
            await self._work_out(lg, kind, entry, quick, store)
        finally:
            if not done:
                claims.give_up(lg.key, kind, entry.count)

    async def _claimed(
        self, lg: LiveGame, kind: str, entry: Learning, claims: WorkClaims
    ) -> Claim | None:
        """Claim ``entry``'s work for this process, or, while another live process holds the
        claim, take its answers into ``entry`` (and the game's pages) as they come: ``None``
        once its last answer came, the claim once this process holds it (the other gave it up
        or died)."""
        try:
            claim: Claim | None = await claims.claim(lg.key, kind, entry.count)
            taken: tuple[str, int | None, bool] | None = None  # the answer taken, as looked at
            seen: str | None = None
            while True:
                if claim is None:  # gone meanwhile: claim it, or learn who did
                    claim = await claims.claim(lg.key, kind, entry.count)
                if claim.process == claims.process:
                    return claim
                if claim.answer is not None and (claim.answer != seen or claim.final):
                    seen = claim.answer
                    result = _parsed(kind, claim.answer)
                    if claim.final and not isinstance(result, Unavailable):  # no deeper follows
                        result = result.model_copy(update={"pending": False})
                    self._answered(lg, kind, entry, result)
                if claim.final:
                    return None
                # look (no lock) until the answer changes, or the claim is for the taking
                while True:
                    await asyncio.sleep(CLAIM_POLL)
                    state = await claims.look(lg.key, kind)
                    if (
                        state is None
                        or state.count != entry.count
                        or not (state.final or state.alive)
                    ):
                        claim = None  # given up, another position, or its claimant died
                        break
                    mark = (state.process, state.answered, state.final)
                    if state.answered is not None and mark != taken:
                        taken = mark
                        claim = await claims.answer_of(lg.key, kind, entry.count)
                        break
        except StorageError:  # the database cannot be used: worked out here, unshared
            return Claim(claims.process, None, final=False)

    def _answered(
        self, lg: LiveGame, kind: str, entry: Learning, result: AnalysisOut | HintOut | Unavailable
    ) -> None:
        """``result`` is ``entry``'s answer now: the waiting requests get it, and the game's
        pages when it came after they stopped waiting or is a deeper one."""
        if isinstance(result, Unavailable):
            entry.error = result
            entry.ready.set()
            return
        first = not entry.ready.is_set()
        entry.result = result
        entry.ready.set()
        if entry.late or not first:
            self.live.watchers.push(lg, kind, result)

    async def _work_out(
        self,
        lg: LiveGame,
        kind: str,
        entry: Learning,
        quick: AnalysisOut | HintOut | None,
        store: Callable[[AnalysisOut | HintOut | Unavailable, bool], Awaitable[None]] | None = None,
    ) -> None:
        """Work out ``entry`` on the engine: its quick answer (unless ``quick`` is given: found
        by a process that stopped before its deeper search), then, when that is not proven,
        a deeper one; each is handed to ``store`` (with whether it is the last)."""
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

        if quick is None:
            try:
                quick = await self.live.compute(lg.key, kind, run, client=lg.client)
            except Superseded:
                return
            except (NimlabError, ApiError) as e:
                entry.error = e
                entry.ready.set()
                return
            except BudgetExceeded:
                if kind != "analysis":
                    entry.error = Unavailable(
                        "the engine ran out of its budget before it could guess"
                    )
                    entry.ready.set()
                    if store is not None:
                        await store(entry.error, True)
                    return
                quick = blank_analysis(
                    count, available=False, note="Not proven: beyond the budget."
                )
        deeper = (
            not quick.proven
            and self.live.settings.deep_seconds > self.live.settings.move_seconds
            and not game.is_over
        )
        quick = quick.model_copy(update={"pending": deeper})
        self._answered(lg, kind, entry, quick)
        if store is not None:
            await store(quick, not deeper)
        if not deeper:
            return
        try:
            deep = await self.live.compute(lg.key, kind, run, client=lg.client, deep=True)
        except (Superseded, NimlabError, ApiError, BudgetExceeded):
            deep = quick
        if len(game.history) != count or lg.learning.get(kind) is not entry:
            return
        deep = deep.model_copy(update={"pending": False})
        self._answered(lg, kind, entry, deep)
        if store is not None:
            await store(deep, True)

    async def analysis(self, key: str) -> AnalysisOut:
        lg = await self.live.lookup(key)
        if not lg.analysis_open:
            raise Forbidden("this game's setup allows no analysis during play: after the game")
        count = len(lg.game.history)
        result: AnalysisOut | None = await self._learn(lg, "analysis")
        if result is None:
            return blank_analysis(
                count,
                available=False,
                pending=True,
                note=f"{engine_waits()}: the analysis will appear here by itself as soon as it "
                "is worked out.",
            )
        return result

    async def analysis_at(self, key: str, at: int) -> AnalysisOut:
        """The analysis of the position after move ``at`` (0: the start) of a game in play, with
        the whole value history: a page looking back at a past position shows it everywhere.
        The position in play (``at`` at or past the move count) is :meth:`analysis`."""
        lg = await self.live.lookup(key)
        if not lg.analysis_open:
            raise Forbidden("this game's setup allows no analysis during play: after the game")
        if at >= len(lg.game.history):
            return await self.analysis(key)
        record = lg.game.to_record()  # a copy, taken on the event loop's thread
        try:
            return await self.live.compute(
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
        lg = await self.live.lookup(key)
        if lg.game.is_over or lg.ended is not None:
            raise GameOverError("the game is over: there is nothing to hint")
        if not lg.analysis_open:
            raise Forbidden("this game's setup allows no hints during play")
        result: HintOut | None = await self._learn(lg, "hint")
        return result


def _parsed(kind: str, answer: str) -> AnalysisOut | HintOut | Unavailable:
    """An answer stored by the process that worked it out (see :meth:`Learnings._learn_run`)."""
    if answer.startswith('{"unavailable"'):  # (as _learn_run's store writes it)
        return Unavailable(str(json.loads(answer)["unavailable"]))
    return (AnalysisOut if kind == "analysis" else HintOut).model_validate_json(answer)
