"""Budgets for exact work: a deadline, a number of stored positions, a number of bytes, and a
cancel flag, checked together.

Every search that a request, a command or a bot can start takes a :class:`Budget`. A search calls
:meth:`Budget.charge` as it stores positions (cheap: a counter, and a clock read every
``CHECK_EVERY`` charges) and stops with :class:`BudgetExceeded` when the deadline has passed, a
limit is reached, or :meth:`Budget.cancel` was called from another thread (its answer is no
longer wanted). What was solved before stays valid; nothing is guessed.

A budget counts work, never preparing: time spent in :func:`not_counted` (importing and compiling
the Numba kernels, see :mod:`nimlab.theory.kernels`), in any thread, moves every deadline back by
as much, so the same question gets the same answer on the first run after an install as later.

A budget belongs to one question: a later question gets a fresh budget, so one question that ran
out never makes the next one "not proven".

A server bounds a whole piece of work (a bot move, a hint, an analysis: many questions) with
:func:`budget_scope`: within it, :func:`nimlab.theory.engine.interactive_budget` gives budgets
:meth:`derived <Budget.derive>` from the scope's (never more time or positions than are left of
it, and cancelled with it).

>>> b = Budget(positions=10)
>>> b.charge(5); b.spent
5
>>> try:
...     b.charge(6)
... except BudgetExceeded as e:
...     print(e.reason)
positions
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TypeVar

__all__ = [
    "CHECK_EVERY",
    "Budget",
    "BudgetExceeded",
    "Shortfall",
    "budget_scope",
    "current_scope",
    "metered",
    "not_counted",
    "uncounted_seconds",
]

CHECK_EVERY = 4096
"""Charges between two reads of the clock and the cancel flag."""


_UNCOUNTED: list[float] = [0.0, 0.0, 0.0]
"""[seconds in ended :func:`not_counted` periods, blocks open now, when the open period began]:
overlapping blocks (several threads preparing at once) count once."""
_UNCOUNTED_LOCK = threading.Lock()


def uncounted_seconds() -> float:
    """Seconds spent so far (this process, all threads) inside :func:`not_counted` blocks,
    including the one open now. O(1)."""
    closed, open_blocks, since = _UNCOUNTED
    return closed + (time.monotonic() - since if open_blocks else 0.0)


@contextmanager
def not_counted() -> Iterator[None]:
    """A block whose time no budget counts (preparing kernels: importing, compiling, loading
    them from the cache): every budget's deadline moves back by the block's duration."""
    with _UNCOUNTED_LOCK:
        if not _UNCOUNTED[1]:
            _UNCOUNTED[2] = time.monotonic()
        _UNCOUNTED[1] += 1
    try:
        yield
    finally:
        with _UNCOUNTED_LOCK:
            _UNCOUNTED[1] -= 1
            if not _UNCOUNTED[1]:
                _UNCOUNTED[0] += time.monotonic() - _UNCOUNTED[2]


class BudgetExceeded(RuntimeError):
    """A search ran out of its budget (time, positions or memory) or was cancelled; nothing was
    proven about the question asked.

    ``reason`` is ``"time"``, ``"positions"``, ``"memory"`` or ``"cancelled"``.
    """

    def __init__(self, budget: int | float | None = None, reason: str = "positions") -> None:
        text = {
            "time": "the exact search ran out of time",
            "memory": "the exact search needed more memory than its budget",
            "cancelled": "the exact search was cancelled",
        }.get(reason, "the exact search needed more positions than its budget")
        if reason == "positions" and budget is not None:
            text = f"the exact search needed more than {int(budget):,} positions"
        super().__init__(text)
        self.budget = budget
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Shortfall:
    """Why a question was not proven: which ``step`` ran out (``"the misère quotient"``,
    ``"the retrograde table"``, ``"the exact search"``, ...) and of what (``reason``, as in
    :class:`BudgetExceeded`).

    >>> str(Shortfall("the exact search", "time"))
    'the exact search ran out of time'
    """

    step: str
    reason: str

    @property
    def more_time_helps(self) -> bool:
        """Whether a larger time budget may prove it (the step ran out of time)."""
        return self.reason == "time"

    def __str__(self) -> str:
        what = {
            "time": "ran out of time",
            "memory": "needs more memory than its budget",
            "cancelled": "was cancelled",
        }.get(self.reason, "needs more positions than its budget")
        return f"{self.step} {what}"


class _Flag:
    """A cancel flag shared by a budget and the budgets derived from it. Setting and reading an
    attribute is atomic in CPython, so no lock is needed (a budget is made for every question:
    it must cost next to nothing)."""

    __slots__ = ("raised",)

    def __init__(self) -> None:
        self.raised = False


@dataclass
class Budget:
    """Limits for one question. ``seconds`` is measured from creation; ``positions`` counts what
    the search stores; ``nbytes`` bounds the memory the search may hold. ``None`` means no limit
    of that kind.
    """

    seconds: float | None = None
    positions: int | None = None
    nbytes: int | None = None
    spent: int = 0
    deadline: float | None = field(default=None, init=False)
    _cancel: _Flag = field(default_factory=lambda: _Flag(), init=False, repr=False)
    _next_check: int = field(default=CHECK_EVERY, init=False, repr=False)
    _parent: Budget | None = field(default=None, init=False, repr=False)
    _uncounted0: float = field(default=0.0, init=False, repr=False)
    failed: dict[object, object] = field(default_factory=dict, init=False, repr=False)
    """What a step of this question found out of reach (so the question does not try it again);
    shared with the budgets derived from this one, and forgotten with the question."""

    def __post_init__(self) -> None:
        self._uncounted0 = uncounted_seconds()
        if self.seconds is not None:
            self.deadline = time.monotonic() + self.seconds

    def _now(self) -> float:
        """The clock of this budget: monotonic time less what was spent not counted since."""
        return time.monotonic() - (uncounted_seconds() - self._uncounted0)

    @classmethod
    def unlimited(cls) -> Budget:
        return cls()

    def cancel(self) -> None:
        """Ask every search working under this budget to stop (thread safe)."""
        self._cancel.raised = True

    @property
    def cancelled(self) -> bool:
        return self._cancel.raised

    def remaining_seconds(self) -> float | None:
        """Seconds left before the deadline (never negative), or ``None`` without one."""
        if self.deadline is None:
            return None
        return max(0.0, self.deadline - self._now())

    def derive(
        self,
        seconds: float | None = None,
        positions: int | None = None,
        nbytes: int | None = None,
    ) -> Budget:
        """A budget for one question within this one: each limit is the smaller of the one
        given and what is left of this budget's; the positions it stores are charged to this
        budget too, and cancelling this budget cancels it. O(1).

        >>> outer = Budget(positions=10)
        >>> inner = outer.derive(positions=100)
        >>> inner.positions, outer.cancel(), inner.cancelled
        (10, None, True)
        """
        left = self.remaining_seconds()
        if left is not None:
            seconds = left if seconds is None else min(seconds, left)
        if self.positions is not None:
            room = max(0, self.positions - self.spent)
            positions = room if positions is None else min(positions, room)
        if self.nbytes is not None:
            nbytes = self.nbytes if nbytes is None else min(nbytes, self.nbytes)
        child = Budget(seconds=seconds, positions=positions, nbytes=nbytes)
        child._cancel = self._cancel
        child._parent = self
        child.failed = self.failed
        if self.cancelled or (left is not None and left <= 0):
            child._next_check = 1  # spent already: the first charge says so
        return child

    def portion(self, fraction: float) -> Budget:
        """A budget for one part of this question's work: ``fraction`` of the time and of the
        positions left (no limit where this budget has none), charged to this budget too, and
        cancelled with it (see :meth:`derive`). O(1).

        >>> outer = Budget(positions=100)
        >>> outer.charge(20); outer.portion(0.5).positions
        40
        """
        left = self.remaining_seconds()
        return self.derive(
            seconds=None if left is None else left * fraction,
            positions=(
                None
                if self.positions is None
                else int(max(0, self.positions - self.spent) * fraction)
            ),
        )

    def share(self, fraction: float) -> Budget:
        """A budget for one step of this question (a misère quotient, a table): ``fraction`` of
        the time left (no deadline when this budget has none), the same memory limit, and no
        position limit of its own (what the step stores is not charged here); cancelled with
        this budget. O(1).

        >>> Budget(seconds=10).share(0.5).seconds <= 5
        True
        """
        left = self.remaining_seconds()
        child = Budget(seconds=None if left is None else left * fraction, nbytes=self.nbytes)
        child._cancel = self._cancel
        child.failed = self.failed
        if self.cancelled or (left is not None and left <= 0):
            child._next_check = 1
        return child

    def check(self) -> None:
        """Raise :class:`BudgetExceeded` if cancelled or past the deadline. O(1)."""
        if self._cancel.raised:
            raise BudgetExceeded(None, "cancelled")
        if self.deadline is not None and self._now() > self.deadline:
            raise BudgetExceeded(self.seconds, "time")

    def check_bytes(self, nbytes: int) -> None:
        """Raise :class:`BudgetExceeded` when ``nbytes`` is over the memory limit."""
        if self.nbytes is not None and nbytes > self.nbytes:
            raise BudgetExceeded(self.nbytes, "memory")

    def charge(self, count: int = 1) -> None:
        """Count ``count`` more stored positions; raise :class:`BudgetExceeded` past a limit.
        Amortised O(1)."""
        self.spent += count
        if self._parent is not None:
            self._parent.charge(count)
        if self.positions is not None and self.spent > self.positions:
            raise BudgetExceeded(self.positions, "positions")
        if self.spent >= self._next_check:
            self._next_check = self.spent + CHECK_EVERY
            self.check()

    def allows(self, positions: int) -> bool:
        """Whether ``positions`` more stored positions fit the position limit."""
        return self.positions is None or self.spent + positions <= self.positions


T = TypeVar("T")

METER_STEP = 256
"""Items :func:`metered` charges at once (before handing them out: none past a position limit)."""


def metered(items: Iterable[T], budget: Budget | None, step: int = METER_STEP) -> Iterator[T]:
    """``items``, one unit of work charged to ``budget`` for each, before it is handed out (in
    blocks of ``step``, the clock and the cancel flag read once a block): the iteration stops
    with :class:`BudgetExceeded` once the budget is spent, so work over a huge range (every
    option of a heap of 10^9) stays within it. No budget: ``items`` unchanged. Amortised O(1)
    per item.

    >>> list(metered(range(3), Budget(positions=10), step=2))
    [0, 1, 2]
    >>> try:
    ...     list(metered(range(10**9), Budget(positions=10), step=2))
    ... except BudgetExceeded as e:
    ...     print(e.reason)
    positions
    """
    if budget is None:
        yield from items
        return
    left = 0
    for item in items:
        if not left:
            budget.charge(step)
            budget.check()  # an item may be far more work than storing a position
            left = step
        left -= 1
        yield item


_SCOPE: ContextVar[Budget | None] = ContextVar("nimlab_budget_scope", default=None)


def current_scope() -> Budget | None:
    """The budget of the work this thread is doing (see :func:`budget_scope`), if any."""
    return _SCOPE.get()


@contextmanager
def budget_scope(budget: Budget) -> Iterator[Budget]:
    """Bound every interactive question asked in this block (this thread or task) by
    ``budget``: :func:`nimlab.theory.engine.interactive_budget` then derives its budgets from
    it, so the whole block stays within its time and positions and stops when it is cancelled.

    >>> from nimlab.theory.engine import interactive_budget
    >>> with budget_scope(Budget(seconds=0.5, positions=1000)) as scope:
    ...     interactive_budget().positions
    1000
    """
    token = _SCOPE.set(budget)
    try:
        yield budget
    finally:
        _SCOPE.reset(token)
