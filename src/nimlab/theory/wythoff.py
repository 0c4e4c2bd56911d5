"""Wythoff's game: two piles; a move takes any positive number from one pile, or the same
positive number from both. The player who takes the last object wins (normal play); in misère
play that player loses.

A position is a pair ``(x, y)`` of pile sizes in display order (either may be the larger).

Theory (Wythoff 1907): the P-positions are ``(0, 0)`` and the Beatty pairs ``(a_k, b_k)`` (in
either order) with ``a_k = ⌊kφ⌋`` and ``b_k = a_k + k`` for ``k >= 1``, ``φ`` the golden ratio:
(1, 2), (3, 5), (4, 7), (6, 10), ... Every positive integer is exactly one ``a_k`` or one
``b_k``. Everything here is exact integer arithmetic: ``⌊kφ⌋ = (k + isqrt(5k²)) // 2`` because
``k√5`` is irrational for ``k >= 1``.

Misère play differs only at the smallest positions: its P-positions are ``(0, 1)``, ``(1, 0)``,
``(2, 2)`` and the pairs ``(a_k, b_k)`` for ``k >= 2`` (the published theorem; the tests check it
against the exact search for every position with piles up to 40).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from math import isqrt

from nimlab.theory.outcome import Outcome

__all__ = [
    "WythoffWorking",
    "beatty_pair",
    "lower_index",
    "upper_index",
    "wythoff_moves",
    "wythoff_outcome",
    "wythoff_winning_moves",
    "wythoff_working",
]

Pair = tuple[int, int]


def _check(position: Pair) -> Pair:
    if len(position) != 2:
        raise ValueError(f"Wythoff's game has exactly two piles, got {len(position)}")
    x, y = position
    if x < 0 or y < 0:
        raise ValueError(f"pile sizes must be at least 0, got {position}")
    return x, y


def wythoff_moves(position: Pair) -> Iterator[Pair]:
    """Every position one move away, in display order: first pile reduced (by 1, 2, ...), then
    the second, then both by the same amount. O(x + y) positions."""
    x, y = _check(position)
    for t in range(1, x + 1):
        yield x - t, y
    for t in range(1, y + 1):
        yield x, y - t
    for t in range(1, min(x, y) + 1):
        yield x - t, y - t


def beatty_pair(k: int) -> Pair:
    """The ``k``-th Wythoff pair ``(⌊kφ⌋, ⌊kφ⌋ + k)``, ``k >= 0`` (``(0, 0)`` for ``k = 0``).
    Exact for every ``k``; O(M(log k)) for the integer square root.

    >>> [beatty_pair(k) for k in range(1, 5)]
    [(1, 2), (3, 5), (4, 7), (6, 10)]
    """
    if k < 0:
        raise ValueError(f"the pair index must be at least 0, got {k}")
    a = (k + isqrt(5 * k * k)) // 2
    return a, a + k


def lower_index(n: int) -> int | None:
    """The ``k >= 1`` with ``⌊kφ⌋ == n``, or ``None`` when ``n`` is not such a number (then it is
    an upper one, ``n = b_j``). ``0`` for ``n = 0``. O(M(log n))."""
    if n <= 0:
        return 0 if n == 0 else None
    k = (isqrt(5 * n * n) - n) // 2  # ⌊n/φ⌋, and a_k == n forces k = ⌊n/φ⌋ + 1 or k itself
    for j in (k, k + 1):
        if j >= 1 and beatty_pair(j)[0] == n:
            return j
    return None


def upper_index(n: int) -> int | None:
    """The ``j >= 1`` with ``⌊jφ⌋ + j == n``, or ``None`` when ``n`` is not such a number.
    O(M(log n))."""
    if n <= 0:
        return None
    j = (3 * n - isqrt(5 * n * n)) // 2  # about n/φ², within one of the answer
    for i in (j - 1, j, j + 1):
        if i >= 1 and beatty_pair(i)[1] == n:
            return i
    return None


@dataclass(frozen=True, slots=True)
class WythoffWorking:
    """Why a Wythoff position has its outcome, as data.

    ``k`` is the difference of the piles, ``pair`` the ``k``-th Beatty pair ``(a_k, b_k)`` (the
    only P-position with that difference in normal play), ``smaller`` the smaller pile;
    ``p_position`` whether the position is that pair (in misère play, the misère P-position
    with that difference: see the module's docstring). ``misere`` says which play.
    """

    k: int
    pair: Pair
    smaller: int
    p_position: bool
    misere: bool


def _p_pair(k: int, misere: bool) -> Pair:
    """The one P-position ``(smaller, larger)`` whose piles differ by ``k``."""
    if misere:
        if k == 0:
            return 2, 2
        if k == 1:
            return 0, 1
    return beatty_pair(k)


def wythoff_working(position: Pair, *, misere: bool = False) -> WythoffWorking:
    """The Beatty pair that decides ``position`` and whether it is a P-position. O(M(log n))."""
    x, y = _check(position)
    small, k = min(x, y), abs(x - y)
    pair = _p_pair(k, misere)
    return WythoffWorking(k, pair, small, pair[0] == small, misere)


def wythoff_outcome(position: Pair, *, misere: bool = False) -> Outcome:
    """P exactly when the position is the Beatty pair of its difference (normal play; misère:
    see the module's docstring). O(M(log n)).

    >>> wythoff_outcome((5, 3)), wythoff_outcome((2, 2))
    (<Outcome.P: 'P'>, <Outcome.N: 'N'>)
    """
    return Outcome.of(not wythoff_working(position, misere=misere).p_position)


def wythoff_winning_moves(position: Pair, *, misere: bool = False) -> list[Pair]:
    """Every winning move, as the position it leaves (display order kept), distinct, in the
    order of :func:`wythoff_moves`; empty for a P-position. O(M(log n)).

    There are at most three: reduce the larger pile to the partner of the smaller, reduce one
    pile to the partner of the other when that partner is smaller, and take the same amount from
    both to reach the P-position of their difference.
    """
    x, y = _check(position)
    if wythoff_working((x, y), misere=misere).p_position:
        return []
    targets: set[Pair] = set()
    # every P-position (a, b), a <= b, in either order, that one move reaches
    for partner in _partners(x, misere):  # keep the first pile, reduce the second
        if partner < y:
            targets.add((x, partner))
    for partner in _partners(y, misere):  # keep the second pile, reduce the first
        if partner < x:
            targets.add((partner, y))
    k = abs(x - y)
    pair = _p_pair(k, misere)
    if pair[0] < min(x, y):
        t = min(x, y) - pair[0]
        targets.add((x - t, y - t))

    # the order of ``wythoff_moves``: the first pile reduced, the second, both; least taken first
    def order(move: Pair) -> tuple[int, int]:
        a, b = move
        return (0, x - a) if b == y else (1, y - b) if a == x else (2, x - a)

    return sorted(targets, key=order)


def _partners(n: int, misere: bool) -> list[int]:
    """Every ``m`` such that ``{n, m}`` is a P-position."""
    if misere and n <= 2:
        return {0: [1], 1: [0], 2: [2]}[n]
    if n == 0:
        return [0]
    partners = []
    k = lower_index(n)
    if k is not None and not (misere and k == 1):
        partners.append(n + k)
    j = upper_index(n)
    if j is not None and not (misere and j == 1):
        partners.append(n - j)
    return partners
