"""Canonical positions: the sorted tuple of non-zero heaps, and the moves between them."""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Iterable, Iterator
from functools import lru_cache

from nimlab.theory.octal import TakeAndBreak

__all__ = ["Canon", "canonical", "children", "is_terminal"]

Canon = tuple[int, ...]
"""A canonical position: the sorted tuple of its non-zero heaps."""


def canonical(heaps: Iterable[int]) -> Canon:
    """The canonical form of a position: its non-zero heaps, sorted. O(n log n)."""
    return tuple(sorted(h for h in heaps if h))


def children(rule: TakeAndBreak, position: Canon) -> Iterator[Canon]:
    """Every canonical position one move away from ``position`` (a canonical position); each
    distinct (heap, parts) once, so a child may repeat when two moves lead to it.

    Equal heaps are expanded once. O(sum over distinct heaps of their options, times the number
    of heaps for the insertion).
    """
    previous = -1
    parts_of = _parts_table(rule)
    for i, heap in enumerate(position):
        if heap == previous:
            continue
        previous = heap
        rest = position[:i] + position[i + 1 :]
        options: Iterable[tuple[int, ...]] | None = parts_of.get(heap)
        if options is None:
            if heap <= _CACHED_HEAP:
                options = parts_of[heap] = _heap_parts(rule, heap)
            else:  # lazily: a caller may want only the first child of a huge heap
                options = (parts for _take, parts in rule.options(heap))
        for parts in options:
            if not parts:
                yield rest
            elif len(parts) == 1:
                j = bisect_left(rest, parts[0])
                yield rest[:j] + parts + rest[j:]
            else:
                child = list(rest)
                insort(child, parts[0])
                insort(child, parts[1])
                yield tuple(child)


_CACHED_HEAP = 4096
"""Heaps up to this size have their parts remembered per rule."""


def _heap_parts(rule: TakeAndBreak, heap: int) -> tuple[tuple[int, ...], ...]:
    """The distinct parts a heap can leave."""
    return tuple(dict.fromkeys(parts for _take, parts in rule.options(heap)))


@lru_cache(maxsize=16)
def _parts_table(rule: TakeAndBreak) -> dict[int, tuple[tuple[int, ...], ...]]:
    """Per rule, the parts of the heaps seen so far (the same heaps recur in a search); at most
    16 rules are kept, each with heaps up to :data:`_CACHED_HEAP`."""
    return {}


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
