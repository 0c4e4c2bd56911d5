"""Fibonacci Nim: one heap; the first move takes at least one object but not the whole heap, and
every later move takes at least one and at most twice as many as the move before. The player who
takes the last object wins (normal play); in misère play that player loses.

A position is ``(heap, limit)``: the objects left and the most the next move may take. The start
with ``n`` objects is ``(n, n - 1)`` (:func:`fibonacci_start`); taking ``t`` leaves
``(heap - t, 2t)``. A limit above the heap means the same as the heap, so positions are kept with
``limit <= heap`` (:func:`fibonacci_position`), which makes equal positions equal tuples.

Theory (Whinihan 1963): write ``heap`` as its Zeckendorf representation, the sum of
non-consecutive Fibonacci numbers (1, 2, 3, 5, 8, ...). A position with objects left is an
N-position exactly when its smallest Zeckendorf term ``q`` is at most ``limit``, and taking ``q``
then wins. So the start is a P-position exactly when ``n`` is a Fibonacci number. Misère play:
exact search only.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from nimlab.theory.outcome import Outcome

__all__ = [
    "FibonacciWorking",
    "fibonacci_moves",
    "fibonacci_outcome",
    "fibonacci_position",
    "fibonacci_start",
    "fibonacci_winning_move",
    "fibonacci_winning_moves",
    "fibonacci_working",
    "zeckendorf",
]

State = tuple[int, int]


def fibonacci_position(heap: int, limit: int) -> State:
    """The position ``(heap, min(limit, heap))``; raises ``ValueError`` for negative numbers."""
    if heap < 0 or limit < 0:
        raise ValueError(f"the heap and the limit must be at least 0, got {heap} and {limit}")
    return heap, min(limit, heap)


def fibonacci_start(heap: int) -> State:
    """The start with ``heap`` objects: the first move may take all but one. O(1)."""
    return fibonacci_position(heap, max(heap - 1, 0))


def fibonacci_moves(position: State) -> Iterator[State]:
    """Every position one move away, taking 1, 2, .., ``limit``. O(limit) positions."""
    heap, limit = fibonacci_position(*position)
    for t in range(1, limit + 1):
        yield fibonacci_position(heap - t, 2 * t)


def zeckendorf(n: int) -> tuple[int, ...]:
    """The Zeckendorf representation of ``n >= 0``: non-consecutive Fibonacci numbers (from
    1, 2, 3, 5, ...), largest first, summing to ``n``; ``()`` for 0. O(log n) terms, by the
    greedy rule.

    >>> zeckendorf(100)
    (89, 8, 3)
    """
    if n < 0:
        raise ValueError(f"only numbers >= 0 have a Zeckendorf representation, got {n}")
    fibs = [1, 2]
    while fibs[-1] <= n:
        fibs.append(fibs[-1] + fibs[-2])
    terms = []
    for f in reversed(fibs):
        if f <= n:
            terms.append(f)
            n -= f
    return tuple(terms)


@dataclass(frozen=True, slots=True)
class FibonacciWorking:
    """Why a Fibonacci Nim position has its outcome, as data: the heap's Zeckendorf terms
    (largest first), the smallest of them (``None`` for an empty heap) and the limit; an
    N-position exactly when that smallest term is at most the limit."""

    heap: int
    limit: int
    terms: tuple[int, ...]
    smallest: int | None

    @property
    def p_position(self) -> bool:
        return self.smallest is None or self.smallest > self.limit


def fibonacci_working(position: State) -> FibonacciWorking:
    """The Zeckendorf terms of the heap and the smallest one against the limit. O(log heap)."""
    heap, limit = fibonacci_position(*position)
    terms = zeckendorf(heap)
    return FibonacciWorking(heap, limit, terms, terms[-1] if terms else None)


def fibonacci_outcome(position: State) -> Outcome:
    """Normal play: N exactly when the heap's smallest Zeckendorf term is at most the limit.
    O(log heap).

    >>> [n for n in range(1, 30) if fibonacci_outcome(fibonacci_start(n)) == "P"]
    [1, 2, 3, 5, 8, 13, 21]
    """
    return Outcome.of(not fibonacci_working(position).p_position)


def fibonacci_winning_move(position: State) -> int | None:
    """The classic winning move of normal play: how many to take (the heap's smallest
    Zeckendorf term), or ``None`` for a P-position. O(log heap)."""
    working = fibonacci_working(position)
    return None if working.p_position else working.smallest


def fibonacci_winning_moves(position: State) -> list[int]:
    """Every winning move of normal play, as how many to take (ascending): ``t`` wins exactly
    when it empties the heap or leaves a heap whose smallest Zeckendorf term exceeds ``2t``.
    Empty for a P-position. O(limit log heap)."""
    heap, limit = fibonacci_position(*position)
    if fibonacci_working((heap, limit)).p_position:
        return []
    return [
        t
        for t in range(1, limit + 1)
        if fibonacci_working(fibonacci_position(heap - t, 2 * t)).p_position
    ]
