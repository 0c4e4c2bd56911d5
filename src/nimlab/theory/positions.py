"""Canonical positions: the sorted tuple of non-zero heaps, and the moves between them."""

from __future__ import annotations

from bisect import insort
from collections.abc import Iterable, Iterator

from nimlab.theory.octal import TakeAndBreak

__all__ = ["Canon", "canonical", "children", "is_terminal"]

Canon = tuple[int, ...]
"""A canonical position: the sorted tuple of its non-zero heaps."""


def canonical(heaps: Iterable[int]) -> Canon:
    """The canonical form of a position: its non-zero heaps, sorted. O(n log n)."""
    return tuple(sorted(h for h in heaps if h))


def children(rule: TakeAndBreak, position: Canon) -> Iterator[Canon]:
    """Every distinct canonical position one move away from ``position`` (a canonical position).

    Equal heaps are expanded once. O(sum over distinct heaps of their options, times the number
    of heaps for the re-sort).
    """
    previous = -1
    for i, heap in enumerate(position):
        if heap == previous:
            continue
        previous = heap
        rest = list(position[:i] + position[i + 1 :])
        for _take, parts in rule.options(heap):
            child = rest.copy()
            for part in parts:
                insort(child, part)
            yield tuple(child)


def is_terminal(
    rule: TakeAndBreak, position: Canon, end_positions: frozenset[Canon] = frozenset()
) -> bool:
    """Whether the game is over at ``position``: it is empty, an extra end position, or no move
    is possible (e.g. a heap of 1 in Dawson's Kayles)."""
    if not position or position in end_positions:
        return True
    if rule.digit(1) & 3 == 3:  # one object can always be taken: every heap has a move
        return False
    return all(next(rule.takes(h), None) is None for h in set(position))
