"""Two classic games that split heaps: Grundy's game and Lasker's Nim.

Positions are canonical (:data:`~nimlab.theory.positions.Canon`: the sorted tuple of non-zero
heaps), since both games are sums of independent heaps.

- **Grundy's game**: a move splits one heap into two non-empty heaps of *different* sizes
  (heaps of 1 and 2 are dead). It is not an octal game (the digit rule cannot forbid equal
  parts): its split rule is :data:`nimlab.theory.grundy.GRUNDYS_GAME` used with
  ``unequal=True``, its Grundy values :func:`nimlab.theory.grundy.grundys_game_sequence` (and the
  pure-Python twin :func:`~nimlab.theory.grundy.naive_grundys_game`). No formula is known:
  outcomes come from the Grundy values (Sprague-Grundy: P exactly when their XOR is 0) in normal
  play; misère play: exact search only.
- **Lasker's Nim**: a move takes any positive number from one heap, or splits one heap into two
  non-empty heaps without taking anything. It is the take-and-break game ``4.333...``
  (:data:`LASKERS_NIM`), so every solver of :mod:`nimlab.theory` already plays it. Its Grundy
  values have a formula (:func:`lasker_grundy`: ``G(4m+1) = 4m+1``, ``G(4m+2) = 4m+2``,
  ``G(4m+3) = 4m+4``, ``G(4m+4) = 4m+3``), checked against the plain mex by the tests. Misère
  play: Lasker's Nim is *tame* (:func:`lasker_misere_outcome`), so misère outcomes and winning
  moves come from the same Grundy values, at any size.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Final

from nimlab.theory.nim import nim_sum
from nimlab.theory.octal import TakeAndBreak
from nimlab.theory.outcome import Outcome
from nimlab.theory.positions import Canon, canonical

__all__ = [
    "LASKERS_NIM",
    "GrundySumWorking",
    "grundys_game_moves",
    "grundys_game_winning_moves",
    "grundys_game_working",
    "lasker_grundy",
    "lasker_misere_outcome",
    "lasker_options_of_value",
    "lasker_outcome",
    "lasker_working",
]

LASKERS_NIM: Final = TakeAndBreak((), tail=3, d0=4)
"""Lasker's Nim as a take-and-break game: ``4.333...`` (take any number, or split without
taking)."""


def grundys_game_moves(position: Sequence[int]) -> Iterator[Canon]:
    """Every canonical position one move away: one heap ``h`` split into ``a < h - a``, both
    non-empty. Equal heaps are expanded once. O(sum of heaps / 2) positions."""
    heaps = canonical(position)
    for i, h in enumerate(heaps):
        if i and heaps[i - 1] == h:
            continue
        rest = heaps[:i] + heaps[i + 1 :]
        for a in range(1, (h + 1) // 2):
            yield canonical((*rest, a, h - a))


@dataclass(frozen=True, slots=True)
class GrundySumWorking:
    """Why a sum of heaps has its outcome in normal play, as data: each heap's Grundy value (in
    the order of the heaps given) and their XOR; P exactly when it is 0."""

    heaps: tuple[int, ...]
    values: tuple[int, ...]
    nim_sum: int

    @property
    def p_position(self) -> bool:
        return self.nim_sum == 0


def lasker_grundy(n: int) -> int:
    """The Grundy value of a heap of ``n`` in Lasker's Nim: ``n`` when ``n % 4`` is 1 or 2,
    ``n + 1`` when it is 3, ``n - 1`` when it is 0. O(1).

    >>> [lasker_grundy(n) for n in range(9)]
    [0, 1, 2, 4, 3, 5, 6, 8, 7]
    """
    if n < 0:
        raise ValueError(f"heap sizes must be at least 0, got {n}")
    if n % 4 == 3:
        return n + 1
    if n % 4 == 0 and n:
        return n - 1
    return n


def lasker_working(position: Sequence[int]) -> GrundySumWorking:
    """The Grundy values of the heaps by :func:`lasker_grundy` and their XOR. O(n)."""
    heaps = tuple(position)
    values = tuple(lasker_grundy(h) for h in heaps)
    return GrundySumWorking(heaps, values, nim_sum(values))


def lasker_outcome(position: Sequence[int]) -> Outcome:
    """Normal play: P exactly when the XOR of the heaps' Lasker values is 0. O(n)."""
    return Outcome.of(not lasker_working(position).p_position)


def lasker_misere_outcome(position: Sequence[int]) -> Outcome:
    """Misère play: Lasker's Nim is *tame*. A position is a P-position exactly when all its
    heaps hold at most 1 object and their number is odd, or some heap holds 2 or more and the
    XOR of the heaps' Lasker values is 0 (Bouton's misère rule with Grundy values). O(n).

    Proof, by induction on positions. Heaps of 0 and 1 are Nim's; every heap of 2 or more has
    a value of 2 or more and can be taken to 0 or to 1 object. From a position with a heap of
    2 or more and XOR ``s != 0``: Nim's move to an option of value ``g XOR s < g`` of one
    heap wins when another heap of 2 or more stays, else the move of that heap to 0 or 1
    leaving an odd number of 1s does. With ``s = 0`` there are two heaps of 2 or more, one
    stays after any move, and no option of a heap has the heap's own value, so every option
    has ``s != 0``. (The same proof shows the misère quotient of all heaps is infinite:
    :func:`nimlab.theory.quotient.infinite_reason`.)

    >>> lasker_misere_outcome((2, 11, 14)), lasker_misere_outcome((1, 1)), lasker_misere_outcome(())
    (<Outcome.P: 'P'>, <Outcome.N: 'N'>, <Outcome.N: 'N'>)
    """
    heaps = tuple(position)
    if all(h <= 1 for h in heaps):
        return Outcome.of(sum(heaps) % 2 == 0)
    return lasker_outcome(heaps)


def lasker_options_of_value(heap: int, value: int) -> list[tuple[int, tuple[int, ...]]]:
    """Every option of one heap of ``heap`` whose Grundy value is ``value``, as ``(take,
    parts)`` in the order of :meth:`TakeAndBreak.options` (splits first, then takes).

    The Lasker values are a bijection of the heap sizes onto themselves, and their own inverse,
    so exactly one heap size ``lasker_grundy(value)`` has the value: a take leaves it when it
    is smaller than ``heap``. Splits ``a + b = heap`` are tested at once with NumPy. O(heap)
    time and memory (about 25 bytes per object: 25 MB for a heap of a million).
    """
    import numpy as np  # (imported only here: the rest of the module needs no NumPy)

    moves: list[tuple[int, tuple[int, ...]]] = []
    if heap >= 2:
        a = np.arange(1, heap // 2 + 1, dtype=np.int64)
        b = heap - a
        ga = a + (a % 4 == 3) - ((a % 4 == 0) & (a > 0))
        gb = b + (b % 4 == 3) - ((b % 4 == 0) & (b > 0))
        for x in a[(ga ^ gb) == value].tolist():
            moves.append((0, (int(x), heap - int(x))))
    left = lasker_grundy(value)
    if left < heap:
        moves.append((heap - left, (left,) if left else ()))
    return moves


def grundys_game_working(
    position: Sequence[int], values: Sequence[int] | None = None
) -> GrundySumWorking:
    """The Grundy values of the heaps in Grundy's game and their XOR.

    ``values[h]`` is the Grundy value of a heap of ``h`` (from
    :func:`~nimlab.theory.grundy.grundys_game_sequence` for large heaps); without it they are
    computed by the plain mex, O(H²) for the largest heap H.
    """
    heaps = tuple(position)
    if any(h < 0 for h in heaps):
        raise ValueError(f"heap sizes must be at least 0, got {heaps}")
    from nimlab.theory.grundy import naive_grundys_game  # (it loads the compiled kernels)

    table = values if values is not None else naive_grundys_game(max(heaps, default=0) + 1)
    own = tuple(int(table[h]) for h in heaps)
    return GrundySumWorking(heaps, own, nim_sum(own))


def grundys_game_winning_moves(
    position: Sequence[int], values: Sequence[int] | None = None
) -> list[Canon]:
    """Every winning move of normal play as the canonical position it leaves, distinct, in the
    order of :func:`grundys_game_moves`: a split of heap ``h`` into ``a`` and ``h - a`` wins
    exactly when ``G(a) ^ G(h - a) == G(h) ^ s`` for the XOR ``s`` of all heaps' values. Empty
    for a P-position. ``values`` as in :func:`grundys_game_working`; O(sum of heaps) after it.
    """
    working = grundys_game_working(position, values)
    if working.p_position:
        return []
    from nimlab.theory.grundy import naive_grundys_game

    table = values if values is not None else naive_grundys_game(max(working.heaps) + 1)
    s = working.nim_sum
    heaps = canonical(position)
    wins: list[Canon] = []
    for i, h in enumerate(heaps):
        if i and heaps[i - 1] == h:
            continue
        want = int(table[h]) ^ s
        rest = heaps[:i] + heaps[i + 1 :]
        for a in range(1, (h + 1) // 2):
            if int(table[a]) ^ int(table[h - a]) == want:
                wins.append(canonical((*rest, a, h - a)))
    return wins
