"""The server's engine work: a few worker threads, every job under a budget, shared fairly.

Every bot move, hint, analysis and setup check the server starts is a :class:`Job`. A job runs
inside :func:`~nimlab.theory.budget.budget_scope` with its own
:class:`~nimlab.theory.budget.Budget` (seconds from the moment it starts, positions), so every
engine question it asks is bounded by it, and :meth:`EngineWorkers.cancel` stops it at the
engine's next check when its answer is no longer wanted (the game moved on, ended, or was
removed).

Scheduling, so that one game or one client cannot starve the others:

- **single flight per owner** (an owner is a game, or a client for setups): at most one job of
  an owner runs at a time; its other jobs wait;
- **round robin over networks, then clients**: a free worker serves the network
  (:func:`~nimlab.web.guard.network_of`: a /24 of IPv4, a /64 of IPv6) with the fewest jobs
  running, among those the one served longest ago (one never served counts as served when its
  first job came, just before the last one served then: newcomers join the end of the round,
  not its head), and within it the client (the network address that started the game; a job
  without one is its own client) chosen the same way, so a crowd of addresses of one network
  gets one turn in the round like one client, and a client with many heavy games gets one
  turn like everyone else, and no more;
- **the last free worker is kept for light work**: a client (or network) that has a job
  running already, or a client, network or game that used more than ``heavy`` engine seconds
  lately (decaying with a half-life of :data:`HEAVY_HALF_LIFE` seconds), does not take the
  last free worker (with two workers or more), so a new move of a light client never waits
  behind a wall of heavy jobs, only behind the one running on that worker. Newcomers (a
  client, and its network, that never ran a job) are judged as one: while two newcomers' jobs
  run (a crowd arriving), or when their jobs together used more than ``heavy`` lately, no
  newcomer takes the last free worker either, so a crowd of fresh networks, each light until
  its first heavy job ends, does not take it from the clients that played before;
- **bounded per client**: at most ``per_client`` jobs a request asked for (setups, hints,
  analyses) of one client wait at once, and ``per_client * network_allowance`` of one network
  (:class:`EngineBusy` beyond), so a burst of heavy requests cannot queue minutes of work;
- **fair share within a client**: among that client's jobs, the one whose owner used the
  least engine time lately (usage decays with a half-life of :data:`HALF_LIFE` seconds), so its
  new game is served before its games that keep the engine busy;
- **deep work** (a longer search for a proof after a quick answer) never takes the last free
  worker, and interactive work of the same owner cancels it;
- **games of bots only share a few workers**: at most ``bots_only`` of their jobs run at once,
  whoever started them (nobody waits for their moves: they play at ``bot_pace``), so a crowd's
  games of bots only leave the other workers to the games people play, and the interpreter
  to the event loop most of the time;
- the number of waiting jobs is bounded (:class:`EngineBusy` beyond);
- **the event loop first**: the workers run at a lower priority for the operating system
  (:data:`ENGINE_NICE`), so requests are answered while every core searches (and the server
  makes the interpreter hand its lock over often:
  :data:`nimlab.cli.serve.SWITCH_INTERVAL`);
- a job that stored more than ``trim_positions`` positions gives the memory back to the system
  when it ends (:func:`nimlab.web.watchers.give_back_memory`), so a burst of heavy analyses does
  not leave the server's memory at its peak.

A job whose answer nobody waits for any more (the request went away, the page closed, the game
moved on or ended) is cancelled by its caller (:meth:`EngineWorkers.cancel`,
:meth:`EngineWorkers.cancel_job`): waiting, it is dropped; running, its budget stops it at the
engine's next check.
"""

from __future__ import annotations

import concurrent.futures
import math
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from nimlab.theory.budget import Budget, budget_scope
from nimlab.web import metrics
from nimlab.web.guard import network_of

__all__ = [
    "ENGINE_NICE",
    "HALF_LIFE",
    "HEAVY_HALF_LIFE",
    "EngineBusy",
    "EngineWorkers",
    "Job",
    "WorkStats",
    "lower_priority",
]

HALF_LIFE = 10.0
"""Seconds after which half of an owner's past engine time is forgotten by the fair share."""

HEAVY_HALF_LIFE = 60.0
"""Seconds after which half of a client's, network's or game's past engine time is forgotten
when judging whether it is heavy (kept for the last free worker or not): longer than the fair
share's, so a crowd's networks stay heavy between their moves."""

_PRIORITY = {"bot": 0, "setup": 0, "replay": 0, "hint": 1, "analysis": 2}

ENGINE_NICE = 10
"""How much lower than the server's other threads the engine's threads are scheduled by the
operating system (their nice value is raised by this much): on a machine whose cores are all
busy, the event loop that answers every request is given the processor first (about nine
tenths of a core against one engine thread), and the engine keeps every core the loop does not
need. On two cores, beside 30 games of a crowd's perfect bots (three threads searching), an
honest player's moves had p99 54 ms with the engine at the loop's priority, 20 ms with it
(bench_abuse --quick --only perfect-bots, medians of three)."""


def lower_priority() -> None:
    """Raise the calling thread's nice value by :data:`ENGINE_NICE` (Linux schedules each
    thread on its own; elsewhere, or when not allowed, nothing)."""
    import contextlib
    import os

    with contextlib.suppress(AttributeError, OSError):
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, os.getpriority(os.PRIO_PROCESS, tid) + ENGINE_NICE)


NEWCOMERS = "newcomers"
"""The key under which the engine time of newcomers' jobs is counted together (see the module
docstring)."""

_ASKED = frozenset({"setup", "hint", "analysis", "past"})
"""The kinds of job a request asks for (a client can ask again and again): bounded per client.
A bot move is not (a game has one at a time, and a client's games in play are bounded)."""


class EngineBusy(RuntimeError):
    """Too many jobs are waiting for the engine: try again shortly."""


@dataclass(eq=False)
class Job:
    """One piece of engine work: ``fn`` runs on a worker within ``budget``."""

    owner: str
    kind: str
    fn: Callable[[], Any]
    seconds: float
    positions: int | None
    client: str | None = None
    deep: bool = False
    budget: Budget = field(default_factory=Budget)
    future: concurrent.futures.Future[Any] = field(default_factory=concurrent.futures.Future)
    submitted: float = field(default_factory=time.monotonic)
    started: float | None = None
    finished: float | None = None
    newcomer: bool = False
    """Whether it has a client, and its client and network had never run a job when it
    started."""
    bots_only: bool = False
    """A move of a game of bots only (see ``bots_only`` of :class:`EngineWorkers`)."""
    wanted: Callable[[], bool] | None = None
    """Whether its answer is still wanted (``None``: always), asked while it waits: one no
    longer wanted when a worker is free is dropped, as cancelled, instead of run."""

    @cached_property
    def turn_of(self) -> str:
        """Whose turn the job takes in the round robin: its client, else its owner (made once:
        every pick asks it of every waiting job)."""
        return f"client:{self.client}" if self.client is not None else f"owner:{self.owner}"

    @cached_property
    def network(self) -> str:
        """The network of its client (:func:`~nimlab.web.guard.network_of`), else its turn."""
        return f"net:{network_of(self.client)}" if self.client is not None else self.turn_of

    @property
    def order(self) -> tuple[int, int, float]:
        return (int(self.deep), _PRIORITY.get(self.kind, 3), self.submitted)


@dataclass
class WorkStats:
    """What the workers did (for tests, the bench and monitoring)."""

    submitted: int = 0
    finished: int = 0
    cancelled: int = 0
    failed: int = 0
    max_positions: int = 0
    """The most positions one job's budget counted."""
    max_seconds: float = 0.0
    """The longest time one job ran."""
    max_waiting: int = 0
    """The most jobs that waited at once."""
    refused: int = 0
    """Jobs refused because their client or network had as many waiting as it may."""
    trimmed: int = 0
    """Times memory was given back after a heavy job."""


class _Usage:
    """Engine seconds used per owner, decaying exponentially (half-life ``half_life``)."""

    def __init__(self, half_life: float = HALF_LIFE) -> None:
        self.half_life = half_life
        self._values: dict[str, tuple[float, float]] = {}

    def get(self, key: str, now: float) -> float:
        value, at = self._values.get(key, (0.0, now))
        return value * math.pow(0.5, (now - at) / self.half_life)

    def __contains__(self, key: str) -> bool:
        """Whether ``key`` used any engine time that is not forgotten yet."""
        return key in self._values

    def add(self, key: str, seconds: float, now: float) -> None:
        self._values[key] = (self.get(key, now) + seconds, now)
        if len(self._values) > 4096:  # forget what has decayed away (bounded memory)
            self._values = {
                k: (v, t) for k, (v, t) in self._values.items() if self.get(k, now) > 0.01
            }


class EngineWorkers:
    """``workers`` threads running :class:`Job` s fairly (see the module docstring); at most
    ``max_waiting`` jobs wait at once, ``per_client`` of one client (``None``: no bound) and
    ``per_client * network_allowance`` of one network; a client that used more than ``heavy``
    engine seconds lately does not take the last free worker; at most ``bots_only`` jobs of
    games of bots only run at once (``None``: no bound); a job that stored more than
    ``trim_positions`` positions gives memory back when it ends."""

    def __init__(
        self,
        workers: int = 3,
        *,
        max_waiting: int = 10_000,
        per_client: int | None = None,
        network_allowance: float = 4.0,
        heavy: float = 1.0,
        bots_only: int | None = None,
        trim_positions: int = 200_000,
    ) -> None:
        if workers < 1:
            raise ValueError(f"workers must be at least 1, not {workers}")
        if bots_only is not None and bots_only < 1:
            raise ValueError(f"bots_only must be at least 1, not {bots_only}")
        self.workers = workers
        self.bots_only = bots_only
        self.max_waiting = max_waiting
        self.per_client = per_client
        self.per_network = (
            None if per_client is None else max(per_client, int(per_client * network_allowance))
        )
        self.heavy = heavy
        self.trim_positions = trim_positions
        self.stats = WorkStats()
        self._cond = threading.Condition()
        self._waiting: list[Job] = []
        self._running: dict[str, Job] = {}
        self._usage = _Usage()
        self._weight = _Usage(HEAVY_HALF_LIFE)  # per owner, client and network: who is heavy
        self._served: dict[str, float] = {}  # the turn at which each client was last served
        self._turns = 0
        self.started: deque[Job] = deque(maxlen=256)
        """The last jobs started, oldest first (at most 256; for tests and monitoring)."""
        self._stopped = False
        self._threads = [
            threading.Thread(target=self._work, name=f"nimlab-engine-{i}", daemon=True)
            for i in range(workers)
        ]
        for t in self._threads:
            t.start()

    # -- the interface ------------------------------------------------------------------------

    def submit(
        self,
        owner: str,
        kind: str,
        fn: Callable[[], Any],
        *,
        seconds: float,
        positions: int | None,
        client: str | None = None,
        deep: bool = False,
        bots_only: bool = False,
        wanted: Callable[[], bool] | None = None,
    ) -> Job:
        """Queue ``fn`` for ``owner``; its budget allows ``seconds`` from when it starts and
        ``positions`` stored positions; ``bots_only``: a move of a game of bots only (they
        share ``bots_only`` workers); ``wanted``: see :attr:`Job.wanted`. Interactive work
        cancels the owner's deep work. Raises :class:`EngineBusy` when too many jobs wait.
        O(waiting jobs of this owner)."""
        job = Job(
            owner, kind, fn, seconds, positions, client, deep, bots_only=bots_only, wanted=wanted
        )
        job.budget = Budget(positions=positions)
        with self._cond:
            if self._stopped:
                raise EngineBusy("the server is stopping")
            if len(self._waiting) >= self.max_waiting:
                raise EngineBusy(
                    f"the engine has {len(self._waiting):,} jobs waiting: try again shortly"
                )
            if self.per_client is not None and self.per_network is not None and kind in _ASKED:
                asked = [j for j in self._waiting if j.kind in _ASKED]
                mine = sum(1 for j in asked if j.turn_of == job.turn_of)
                network = sum(1 for j in asked if j.network == job.network)
                if mine >= self.per_client or network >= self.per_network:
                    self.stats.refused += 1
                    raise EngineBusy(
                        "the engine has as many jobs of yours waiting as it takes: "
                        "try again shortly"
                    )
            if not deep:
                self._cancel_where(lambda j: j.owner == owner and j.deep)
            for key in (job.network, job.turn_of):  # a newcomer joins the end of the round
                self._served.setdefault(key, self._turns - 0.5)
            self._waiting.append(job)
            self.stats.submitted += 1
            self.stats.max_waiting = max(self.stats.max_waiting, len(self._waiting))
            self._cond.notify()
        return job

    def cancel(self, owner: str, kinds: tuple[str, ...] | None = None) -> int:
        """Cancel the owner's jobs (of these kinds): waiting ones are dropped, running ones are
        stopped through their budget. Returns how many. O(waiting jobs)."""
        with self._cond:
            return self._cancel_where(
                lambda j: j.owner == owner and (kinds is None or j.kind in kinds)
            )

    def cancel_job(self, job: Job) -> bool:
        """Cancel one job nobody waits for any more (dropped if it waits, stopped through its
        budget if it runs); whether it was still to be cancelled. O(waiting jobs)."""
        with self._cond:
            return self._cancel_where(lambda j: j is job) > 0

    def waiting(self) -> int:
        with self._cond:
            return len(self._waiting)

    def running(self) -> int:
        with self._cond:
            return len(self._running)

    def stop(self) -> None:
        """Cancel everything and let the threads end (they end at the engine's next check)."""
        with self._cond:
            self._stopped = True
            self._cancel_where(lambda j: True)
            self._cond.notify_all()

    def join(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds in all for the threads to end (after :meth:`stop`);
        whether they all did."""
        end = time.monotonic() + timeout
        for t in self._threads:
            t.join(max(0.0, end - time.monotonic()))
        return not any(t.is_alive() for t in self._threads)

    # -- inside -------------------------------------------------------------------------------

    def _cancel_where(self, which: Callable[[Job], bool]) -> int:
        count = 0
        keep = []
        for job in self._waiting:
            if which(job):
                job.future.cancel()
                count += 1
            else:
                keep.append(job)
        self._waiting = keep
        for job in self._running.values():
            if which(job) and not job.budget.cancelled:
                job.budget.cancel()
                count += 1
        self.stats.cancelled += count
        return count

    def _pick(self) -> Job | None:
        """The next job to run, or None (called with the lock held); the waiting jobs no longer
        wanted are dropped first. O(waiting jobs)."""
        unwanted = {id(j) for j in self._waiting if j.wanted is not None and not j.wanted()}
        if unwanted:
            self._cancel_where(lambda j: id(j) in unwanted)
        deep_running = sum(1 for j in self._running.values() if j.deep)
        bots_only_full = self.bots_only is not None and self.bots_only <= sum(
            1 for j in self._running.values() if j.bots_only
        )
        free = self.workers - len(self._running)
        running: dict[str, int] = {}
        for j in self._running.values():
            running[j.turn_of] = running.get(j.turn_of, 0) + 1
            if j.network != j.turn_of:
                running[j.network] = running.get(j.network, 0) + 1
            if j.newcomer:
                running[NEWCOMERS] = running.get(NEWCOMERS, 0) + 1
        now = time.monotonic()
        best: Job | None = None
        best_key: tuple[float, ...] | None = None
        last = free <= 1 and self.workers > 1
        newcomers_heavy = (
            running.get(NEWCOMERS, 0) > 1 or self._weight.get(NEWCOMERS, now) > self.heavy
        )
        for job in self._waiting:
            if job.owner in self._running:
                continue
            if job.deep and (free <= 1 or deep_running >= self.workers - 1):
                continue
            if job.bots_only and bots_only_full:
                continue
            who, net = job.turn_of, job.network
            if last and (
                self._weight.get(job.owner, now) > self.heavy
                or (newcomers_heavy and self._newcomer(job))
                or any(
                    running.get(k, 0) > 0 or self._weight.get(k, now) > self.heavy
                    for k in (who, net)
                )
            ):
                continue
            key = (
                float(job.deep),
                running.get(net, 0),
                self._served.get(net, 0),
                running.get(who, 0),
                self._served.get(who, 0),
                self._usage.get(job.owner, now),
                *job.order[1:],
            )
            if best_key is None or key < best_key:
                best, best_key = job, key
        if best is not None:
            best.newcomer = self._newcomer(best)
            self._waiting.remove(best)
            self._turns += 1
            self._served[best.turn_of] = self._turns
            self._served[best.network] = self._turns
            if len(self._served) > 4096:  # forget the clients with nothing waiting
                busy = (
                    {j.turn_of for j in self._waiting}
                    | {j.network for j in self._waiting}
                    | set(running)
                    | {best.turn_of, best.network}
                )
                self._served = {k: v for k, v in self._served.items() if k in busy}
        return best

    def _newcomer(self, job: Job) -> bool:
        """Whether the job has a client and neither it nor its network has run a job (that is
        not forgotten yet)."""
        return (
            job.client is not None
            and job.turn_of not in self._weight
            and job.network not in self._weight
        )

    def _work(self) -> None:
        lower_priority()
        while True:
            with self._cond:
                job = self._pick()
                while job is None:
                    if self._stopped:
                        return
                    self._cond.wait()
                    job = self._pick()
                if not job.future.set_running_or_notify_cancel():
                    continue
                self._running[job.owner] = job
                self.started.append(job)
            self._run(job)
            with self._cond:
                del self._running[job.owner]
                now = time.monotonic()
                assert job.started is not None
                took = now - job.started
                self._usage.add(job.owner, took, now)
                for key in {job.owner, job.turn_of, job.network}:
                    self._weight.add(key, took, now)
                if job.newcomer:
                    self._weight.add(NEWCOMERS, took, now)
                if self._waiting:  # a job of this owner may wait; idle workers sleep on
                    self._cond.notify(len(self._waiting))

    def _run(self, job: Job) -> None:
        budget = job.budget
        job.started = time.monotonic()
        budget.deadline = job.started + job.seconds
        budget.seconds = job.seconds
        try:
            with budget_scope(budget):
                result = job.fn()
        except BaseException as e:
            job.finished = time.monotonic()
            metrics.engine_job(job, e)
            self._account(job, failed=True)
            job.future.set_exception(e)
        else:
            job.finished = time.monotonic()
            metrics.engine_job(job, None)
            self._account(job, failed=False)
            job.future.set_result(result)

    def _account(self, job: Job, *, failed: bool) -> None:
        assert job.started is not None and job.finished is not None
        if job.budget.spent > self.trim_positions:
            from nimlab.web.watchers import give_back_memory  # (live imports this module)

            give_back_memory(collect=False)  # (the trim lets go of the interpreter lock)
            with self._cond:
                self.stats.trimmed += 1
        with self._cond:
            s = self.stats
            s.finished += 1
            s.failed += int(failed)
            s.max_positions = max(s.max_positions, job.budget.spent)
            s.max_seconds = max(s.max_seconds, job.finished - job.started)
