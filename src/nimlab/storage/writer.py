"""The writers of a store: every write of a server goes through one, in group transactions.

:class:`StoreWriter` runs jobs (functions of the :class:`~nimlab.storage.store.Store`) on its own
thread, in the order submitted, and commits the jobs waiting at the same time in one transaction
(group commit: 50 games cost one disk flush, not 50), a job that fails undone alone. Each job's
result or exception goes to the caller's :class:`concurrent.futures.Future`
(``asyncio.wrap_future`` awaits it), a result only once its group is committed. The queue is
bounded: when ``max_pending`` jobs wait, :meth:`StoreWriter.submit` raises
:class:`WriterBusyError` at once (or after ``block`` seconds) rather than letting work pile up.

A function (:meth:`StoreWriter.submit`) runs in a savepoint of its own. The writer's own jobs
(:meth:`StoreWriter.add_game`, :meth:`StoreWriter.add_moves`, :meth:`StoreWriter.finish_game`)
only change the database, so they may run twice: consecutive ones share one savepoint (SQLite
copies each page a savepoint changes, once per savepoint: a quarter of a finished game's cost)
and, when one fails after changing rows, that savepoint is undone and its jobs run again, each
in a savepoint of its own. A job that fails before changing anything (the usual errors: no such
game, a move already stored) is simply reported. Either way, each job's outcome is the one it
has alone.

:class:`LoopWriter` does the same for an asyncio server, with the loop's futures: the jobs run on
the event loop's own thread, and only BEGIN and COMMIT (the waits) on a thread of their own; on
PostgreSQL, where every statement is a wait (a round trip to the server), the whole group runs on
that thread.

On PostgreSQL a group made only of the writer's own jobs takes no savepoint at all (each costs two
round trips there): the group's transaction is theirs, and when one fails after changing rows the
group is undone, begun again and its jobs run the usual way. Between two groups, once enough
games have left play, the writer vacuums the table of games in play
(:meth:`~nimlab.storage.inplay.GamesInPlay.tidy`), which every game's start counts.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from nimlab.storage.errors import StorageError, WriterBusyError
from nimlab.storage.store import Store

__all__ = ["GROUP_SIZE", "MAX_PENDING", "LoopWriter", "StoreWriter"]

T = TypeVar("T")

MAX_PENDING = 10_000
"""Jobs that may wait for the writer by default."""

GROUP_SIZE = 256
"""Jobs committed together at most (bounds the wait of the first one)."""

MoveBatch = tuple[str, int, Sequence[Mapping[str, Any]]]


class _Outcome(Protocol):
    """Where a job's result goes: a ``concurrent.futures.Future`` (:class:`StoreWriter`) or an
    ``asyncio.Future`` (:class:`LoopWriter`)."""

    def done(self) -> bool: ...
    def set_result(self, result: Any, /) -> None: ...
    def set_exception(self, exception: BaseException, /) -> None: ...


@dataclass(slots=True)
class _Job:
    fn: Callable[[Store], Any]
    future: _Outcome
    replayable: bool = False
    """Only changes the database (nothing else), so it may run twice (see the module
    docstring)."""


class _Undo(Exception):
    """A job that shares a savepoint failed after changing rows: undo the savepoint."""


class _JobQueue:
    """A bounded first-in first-out queue of jobs for one consumer, which takes every waiting
    job at once (one lock round per group, not one per job)."""

    def __init__(self, maxsize: int) -> None:
        self.maxsize = maxsize
        self._items: deque[_Job | None] = deque()
        lock = threading.Lock()
        self._not_empty = threading.Condition(lock)
        self._not_full = threading.Condition(lock)

    def __len__(self) -> int:
        return len(self._items)

    def put(self, item: _Job | None, timeout: float | None) -> bool:
        """Append ``item``, waiting up to ``timeout`` seconds for room (0: not at all, ``None``:
        as long as it takes); ``False`` when there was no room."""
        with self._not_full:
            if len(self._items) >= self.maxsize and (
                timeout == 0
                or not self._not_full.wait_for(lambda: len(self._items) < self.maxsize, timeout)
            ):
                return False
            self._items.append(item)
            self._not_empty.notify()
            return True

    def take_all(self, *, wait: bool = True) -> list[_Job | None]:
        """Every waiting item, oldest first; waits for one unless ``wait`` is false."""
        with self._not_empty:
            if wait:
                while not self._items:
                    self._not_empty.wait()
            items = list(self._items)
            self._items.clear()
            self._not_full.notify_all()
        return items


class StoreWriter:
    """A thread owning ``store`` for writing. Jobs run in the order submitted; the jobs waiting
    together are committed in one transaction, each in its own savepoint (a failing job is
    undone alone). :meth:`close` finishes the submitted jobs and closes the
    store."""

    def __init__(self, store: Store, *, max_pending: int = MAX_PENDING) -> None:
        self.store = store
        self._jobs = _JobQueue(max_pending)
        self._closed = False
        self._close_lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="nimlab-db-writer", daemon=True)
        self._thread.start()

    @property
    def pending(self) -> int:
        """Jobs waiting (approximately: other threads may be adding some)."""
        return len(self._jobs)

    def submit(
        self, fn: Callable[[Store], T], *, block: float = 0.0
    ) -> concurrent.futures.Future[T]:
        """Run ``fn(store)`` on the writer thread; the future gets its result or exception.
        Raises :class:`WriterBusyError` when the queue stays full for ``block`` seconds (0: do
        not wait), :class:`StorageError` after :meth:`close`."""
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        self._put(_Job(fn, future), block)
        return future

    def add_game(
        self,
        key: str,
        record: Mapping[str, Any],
        meta: Mapping[str, Any],
        *,
        client: str | None = None,
        public: bool = False,
        network: str | None = None,
        block: float = 0.0,
    ) -> concurrent.futures.Future[None]:
        """Keep a game that has just begun (``Store.add_live_game``, with its checks and
        bounds), group-committed with the other writes waiting at the same time. ``record`` and
        ``meta`` must not change until the future is done. O(size of the record)."""
        future: concurrent.futures.Future[None] = concurrent.futures.Future()
        job = _game_job(key, record, meta, client, public, network)
        self._put(_Job(job, future, True), block)
        return future

    def add_moves(
        self,
        key: str,
        first: int,
        moves: Sequence[Mapping[str, Any]],
        *,
        block: float = 0.0,
        expect: int | None = None,
    ) -> concurrent.futures.Future[None]:
        """Append moves to a game in play (``Store.add_live_moves``), group-committed with the
        other games' moves waiting at the same time; with ``expect``: only if the game is still
        at that version (else ``StaleGameError``). O(moves)."""
        future: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._put(_Job(_moves_job(key, first, moves, expect), future, True), block)
        return future

    def finish_game(
        self,
        key: str,
        record: Mapping[str, Any],
        usernames: Sequence[str | None] = (),
        *,
        source: str = "web",
        first: int = 1,
        moves: Sequence[Mapping[str, Any]] = (),
        block: float = 0.0,
        expect: int | None = None,
        private: bool = False,
    ) -> concurrent.futures.Future[int]:
        """Finish a game in play (``Store.finish_live_game``: the finished record stored and the
        game in play removed, in one transaction); the future gets the stored game's id. With
        ``moves``: its last moves not stored yet (the first of them numbered ``first``) are
        appended first (``Store.add_live_moves``, with its checks and bounds), in the same
        transaction. The same as ``submit`` of a function doing both, cheaper: it shares a
        savepoint with the moves and games finished next to it (see the module docstring).
        With ``expect``: only if the game is still at that version (else ``StaleGameError``).
        ``private``: kept out of lists and from readers without its key (see
        :meth:`GamesInPlay.finish`). ``record`` must not change until the future is done.
        O(size of the record)."""
        future: concurrent.futures.Future[int] = concurrent.futures.Future()
        job = _finish_job(key, record, usernames, source, first, moves, expect, private)
        self._put(_Job(job, future, True), block)
        return future

    def flush(self, timeout: float | None = None) -> None:
        """Wait until every job submitted before this call is done (waits for room in the
        queue). Raises ``TimeoutError`` after ``timeout`` seconds."""
        future: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._put(_Job(lambda _store: None, future, True), timeout if timeout is not None else 1e9)
        future.result(timeout)

    def close(self, timeout: float | None = 10.0) -> None:
        """Finish the jobs submitted so far, stop the thread and close the store. Idempotent."""
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
        self._jobs.put(None, None)
        self._thread.join(timeout)
        if not self._thread.is_alive():
            self.store.close()

    def _put(self, job: _Job, block: float) -> None:
        with self._close_lock:  # nothing enters after close's end-of-jobs mark
            if self._closed:
                raise StorageError("the database writer is closed")
            if not self._jobs.put(job, max(block, 0.0)):
                raise WriterBusyError(
                    f"the database has {self._jobs.maxsize:,} writes waiting: try again in a moment"
                )

    def _run(self) -> None:
        while True:
            batch = self._jobs.take_all()
            stop = None in batch
            self._process([j for j in batch if j is not None])
            if stop:
                self._drain()
                return

    def _drain(self) -> None:
        """Refuse jobs that raced with close (their futures get StorageError)."""
        for job in self._jobs.take_all(wait=False):
            if job is not None and _claim(job):
                job.future.set_exception(StorageError("the database writer is closed"))

    def _process(self, jobs: list[_Job]) -> None:
        """Run ``jobs`` in one group transaction (one disk flush for all, at most
        :data:`GROUP_SIZE` at a time). A job that fails is undone alone and gets its exception
        at once; the others get their results only once the group is committed (nothing is
        answered before it is durable), or the commit's error if it fails."""
        jobs = [j for j in jobs if _claim(j)]
        for start in range(0, len(jobs), GROUP_SIZE):
            self._group(jobs[start : start + GROUP_SIZE])

    def _group(self, jobs: list[_Job]) -> None:
        done: list[tuple[_Job, Any]] = []
        try:
            with self.store.db.group():
                _run_jobs(self.store, jobs, done)
        except Exception as e:  # the group could not begin or commit: nothing of it was kept
            for job in jobs:
                if not job.future.done():
                    job.future.set_exception(e)
            return
        for job, result in done:
            job.future.set_result(result)
        self.store.in_play.tidy()  # (between groups, when due: see GamesInPlay.tidy)


def _game_job(
    key: str,
    record: Mapping[str, Any],
    meta: Mapping[str, Any],
    client: str | None,
    public: bool,
    network: str | None = None,
) -> Callable[[Store], None]:
    return lambda store: store.add_live_game(
        key, record, meta, client=client, public=public, network=network
    )


def _moves_job(
    key: str, first: int, moves: Sequence[Mapping[str, Any]], expect: int | None = None
) -> Callable[[Store], None]:
    batch: tuple[MoveBatch] = ((key, first, list(moves)),)
    fence = None if expect is None else {key: expect}
    return lambda store: store.add_live_moves(batch, expect=fence)


def _finish_job(
    key: str,
    record: Mapping[str, Any],
    usernames: Sequence[str | None],
    source: str,
    first: int,
    moves: Sequence[Mapping[str, Any]],
    expect: int | None = None,
    private: bool = False,
) -> Callable[[Store], int]:
    names = list(usernames)
    batch: tuple[MoveBatch, ...] = ((key, first, list(moves)),) if moves else ()

    def finish(store: Store) -> int:
        version = expect
        if batch:
            store.add_live_moves(batch, expect=None if version is None else {key: version})
            version = None if version is None else version + 1
        return store.finish_live_game(
            key, record, names, source=source, expect=version, private=private
        )

    return finish


class _Later:
    """A job's outcome kept for the event loop (an :class:`_Outcome` any thread may set)."""

    __slots__ = ("error", "ran", "result")

    def __init__(self) -> None:
        self.ran = False
        self.result: Any = None
        self.error: BaseException | None = None

    def done(self) -> bool:
        return self.ran

    def set_result(self, result: Any, /) -> None:
        self.ran, self.result = True, result

    def set_exception(self, exception: BaseException, /) -> None:
        self.ran, self.error = True, exception


def _whole_group(store: Store, jobs: list[_Job]) -> list[_Later]:
    """Run ``jobs`` as one group (BEGIN, the jobs as :func:`_run_jobs` runs them, COMMIT) on
    the calling thread; their outcomes in order: a job that failed alone has its own error,
    the others their results, or the commit's error when it failed. Raises when the group
    could not begin (nothing of it was run)."""
    outcomes = [_Later() for _ in jobs]
    proxies = [_Job(j.fn, later, j.replayable) for j, later in zip(jobs, outcomes, strict=True)]
    db = store.db
    db.begin_group()
    done: list[tuple[_Job, Any]] = []
    try:
        _run_jobs(store, proxies, done)
    except BaseException:  # never expected: each job's errors are its own
        db.end_group(commit=False)
        raise
    try:
        db.end_group(commit=True)
    except Exception as e:  # nothing of the group was kept
        for later in outcomes:
            if not later.ran:
                later.set_exception(e)
        return outcomes
    for job, result in done:
        job.future.set_result(result)
    return outcomes


def _error_of(wait: asyncio.Future[Any]) -> BaseException | None:
    """The exception of a finished BEGIN or COMMIT, if any."""
    if wait.cancelled():
        return StorageError("the database writer was stopped")
    return wait.exception()


def _claim(job: _Job) -> bool:
    """Whether ``job`` is still wanted (its future not cancelled); from then on it cannot be."""
    future = job.future
    if isinstance(future, concurrent.futures.Future):
        return future.set_running_or_notify_cancel()
    return not future.done()


def _run_jobs(store: Store, jobs: list[_Job], done: list[tuple[_Job, Any]]) -> None:
    """Run ``jobs`` in order inside an open group transaction of ``store``: each ends as it
    would alone (see the module docstring). A failing job gets its exception at once; the
    others are appended to ``done`` with their results, to be given once the group commits."""
    if store.db.dialect != "sqlite" and len(jobs) > 0 and all(j.replayable for j in jobs):
        if _bare(store, jobs, done):
            return
        jobs = [j for j in jobs if not j.future.done()]  # begun again: the rest as usual
    start, end = 0, len(jobs)
    while start < end:
        if not jobs[start].replayable:
            _guarded(store, jobs[start], done)
            start += 1
            continue
        stop = start + 1
        while stop < end and jobs[stop].replayable:
            stop += 1
        _shared(store, jobs[start:stop], done)
        start = stop


def _bare(store: Store, jobs: list[_Job], done: list[tuple[_Job, Any]]) -> bool:
    """Run a group of replayable jobs with no savepoint at all (PostgreSQL: each savepoint
    and its release are two round trips to the server): the group's transaction is their
    savepoint. ``False`` when one failed after changing rows: the group was then undone and
    begun again (:meth:`Database.restart_group`), and the jobs not answered yet are to be run
    the usual way."""
    db = store.db
    conn = db.conn
    kept: list[tuple[_Job, Any]] = []
    with db.unguarded(whole_group=True):
        for job in jobs:
            changes = conn.total_changes
            try:
                result = job.fn(store)
            except BaseException as e:
                if conn.total_changes != changes:
                    db.restart_group()
                    return False
                job.future.set_exception(e)  # it changed nothing: nothing to undo
            else:
                kept.append((job, result))
    done.extend(kept)
    return True


def _guarded(store: Store, job: _Job, done: list[tuple[_Job, Any]]) -> None:
    """Run ``job`` in a savepoint of its own: all or nothing."""
    try:
        with store.db.write():
            result = job.fn(store)
    except BaseException as e:  # reported to the caller, never kills the writer
        job.future.set_exception(e)
    else:
        done.append((job, result))


def _shared(store: Store, run: list[_Job], done: list[tuple[_Job, Any]]) -> None:
    """Run replayable jobs in one savepoint; when one fails after changing rows (or the
    savepoint itself fails), undo it and run its jobs again, each in its own savepoint, then
    go on with the rest of ``run`` the same way."""
    db = store.db
    while run:
        kept: list[tuple[_Job, Any]] = []
        failed = len(run) - 1  # all of them again if the savepoint itself fails
        try:
            with db.write() as conn, db.unguarded():
                for number, job in enumerate(run):
                    changes = conn.total_changes
                    try:
                        result = job.fn(store)
                    except BaseException as e:
                        if conn.total_changes != changes:
                            failed = number
                            raise _Undo from None
                        job.future.set_exception(e)  # it changed nothing: nothing to undo
                    else:
                        kept.append((job, result))
        except Exception:  # undone (an _Undo, or the savepoint could not be released)
            for job in run[: failed + 1]:
                if not job.future.done():
                    _guarded(store, job, done)
            run = run[failed + 1 :]
            continue
        done.extend(kept)
        return


class LoopWriter:
    """The writer of an asyncio server: the same jobs, groups and guarantees as
    :class:`StoreWriter`, but on SQLite the jobs run on the event loop's own thread, so that no
    other thread competes with it for the interpreter (each SQLite statement of a writer thread
    hands the interpreter lock back and forth, which under load costs the loop more than the
    statements). Only the waits run on a thread of their own: BEGIN (another process may be
    writing) and COMMIT (the disk flush); the loop serves requests meanwhile, and the jobs
    submitted meanwhile make the next group. On PostgreSQL every statement is such a wait (a
    round trip to the server): the whole group runs on that thread (1.1-1.2 times the moves per
    second of one process in ``bench/bench_web.py``'s flat-out load, at the same CPU per
    move). Futures are the loop's; use it from the loop's thread only. Create it inside a
    running loop; :meth:`close` finishes the submitted jobs."""

    def __init__(
        self,
        store: Store,
        *,
        max_pending: int = MAX_PENDING,
        observe: Callable[[int, float], None] | None = None,
    ) -> None:
        self.store = store
        self.max_pending = max_pending
        self.observe = observe
        """Called after each group commit with its number of jobs and its seconds (metrics)."""
        self._loop = asyncio.get_running_loop()
        self._waits = concurrent.futures.ThreadPoolExecutor(1, "nimlab-db-commit")
        self._pending: deque[_Job] = deque()
        self._busy = False
        self._closed = False
        self._stopped = False
        self._idle = asyncio.Event()
        self._idle.set()

    @property
    def pending(self) -> int:
        """Jobs waiting for the next group."""
        return len(self._pending)

    def submit(self, fn: Callable[[Store], T]) -> asyncio.Future[T]:
        """Run ``fn(store)`` in the next group; the future gets its result once the group is
        committed, or its exception. Raises :class:`WriterBusyError` when ``max_pending`` jobs
        wait, :class:`StorageError` after :meth:`close`."""
        future: asyncio.Future[T] = self._loop.create_future()
        self._put(_Job(fn, future))
        return future

    def add_game(
        self,
        key: str,
        record: Mapping[str, Any],
        meta: Mapping[str, Any],
        *,
        client: str | None = None,
        public: bool = False,
        network: str | None = None,
    ) -> asyncio.Future[None]:
        """See :meth:`StoreWriter.add_game`."""
        future: asyncio.Future[None] = self._loop.create_future()
        job = _game_job(key, record, meta, client, public, network)
        self._put(_Job(job, future, True))
        return future

    def add_moves(
        self,
        key: str,
        first: int,
        moves: Sequence[Mapping[str, Any]],
        *,
        expect: int | None = None,
    ) -> asyncio.Future[None]:
        """See :meth:`StoreWriter.add_moves`."""
        future: asyncio.Future[None] = self._loop.create_future()
        self._put(_Job(_moves_job(key, first, moves, expect), future, True))
        return future

    def finish_game(
        self,
        key: str,
        record: Mapping[str, Any],
        usernames: Sequence[str | None] = (),
        *,
        source: str = "web",
        first: int = 1,
        moves: Sequence[Mapping[str, Any]] = (),
        expect: int | None = None,
        private: bool = False,
    ) -> asyncio.Future[int]:
        """See :meth:`StoreWriter.finish_game`."""
        future: asyncio.Future[int] = self._loop.create_future()
        job = _finish_job(key, record, usernames, source, first, moves, expect, private)
        self._put(_Job(job, future, True))
        return future

    async def close(self) -> None:
        """Finish the jobs submitted so far, then close the store. Idempotent."""
        self._closed = True
        await self._idle.wait()
        if not self._stopped:
            self._stopped = True
            self._waits.shutdown(wait=True)
            self.store.close()

    def _put(self, job: _Job) -> None:
        if self._closed:
            raise StorageError("the database writer is closed")
        if len(self._pending) >= self.max_pending:
            raise WriterBusyError(
                f"the database has {self.max_pending:,} writes waiting: try again in a moment"
            )
        self._pending.append(job)
        if not self._busy:
            self._busy = True
            self._idle.clear()
            self._loop.call_soon(self._next)  # the jobs submitted in this turn of the loop join

    def _next(self) -> None:
        """Begin the next group (on the waits' thread), or fall idle."""
        jobs: list[_Job] = []
        while self._pending and len(jobs) < GROUP_SIZE:
            job = self._pending.popleft()
            if not job.future.done():  # not cancelled
                jobs.append(job)
        if not jobs:
            if self._pending:
                self._loop.call_soon(self._next)
                return
            self._busy = False
            self._idle.set()
            return
        started = time.perf_counter()
        if self.store.db.dialect != "sqlite":
            # every statement is a round trip to the server: the whole group runs on the
            # waits' thread, so the loop serves requests while the server answers
            ran = self._loop.run_in_executor(self._waits, _whole_group, self.store, jobs)
            ran.add_done_callback(lambda f: self._answer(f, jobs, started))
            return
        begun = self._loop.run_in_executor(self._waits, self.store.db.begin_group)
        begun.add_done_callback(lambda f: self._run(f, jobs, started))

    def _answer(self, ran: asyncio.Future[list[_Later]], jobs: list[_Job], started: float) -> None:
        """Give the outcomes of a group run by :func:`_whole_group` to the jobs' futures."""
        error = _error_of(ran)
        if error is not None:  # nothing of the group was kept
            self._fail(jobs, error)
            return
        if self.observe is not None:
            self.observe(len(jobs), time.perf_counter() - started)
        for job, later in zip(jobs, ran.result(), strict=True):
            if job.future.done():  # cancelled meanwhile
                continue
            if later.error is not None:
                job.future.set_exception(later.error)
            elif later.ran:
                job.future.set_result(later.result)
        if self.store.in_play.tidy_due:  # between groups, once these are answered
            self._waits.submit(self.store.in_play.tidy)
        self._next()

    def _run(self, begun: asyncio.Future[None], jobs: list[_Job], started: float) -> None:
        error = _error_of(begun)
        if error is not None:  # nothing begun
            self._fail(jobs, error)
            return
        jobs = [job for job in jobs if not job.future.done()]  # cancelled meanwhile
        done: list[tuple[_Job, Any]] = []
        try:
            _run_jobs(self.store, jobs, done)
        except BaseException as e:  # never expected: each job's errors are its own
            self.store.db.end_group(commit=False)
            self._fail(jobs, e)
            return
        committed = self._loop.run_in_executor(
            self._waits, lambda: self.store.db.end_group(commit=True)
        )
        committed.add_done_callback(lambda f: self._committed(f, jobs, done, started))

    def _committed(
        self,
        committed: asyncio.Future[None],
        jobs: list[_Job],
        done: list[tuple[_Job, Any]],
        started: float,
    ) -> None:
        error = _error_of(committed)
        if error is not None:  # nothing of the group was kept
            self._fail(jobs, error)
            return
        if self.observe is not None:
            self.observe(len(jobs), time.perf_counter() - started)
        for job, result in done:
            if not job.future.done():
                job.future.set_result(result)
        self._next()

    def _fail(self, jobs: list[_Job], error: BaseException) -> None:
        for job in jobs:
            if not job.future.done():
                job.future.set_exception(error)
        self._next()
