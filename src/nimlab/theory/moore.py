"""Moore's Nim_k: heaps of objects; a move takes any positive number of objects from each of at
least 1 and at most ``k`` heaps (``k = 1`` is Nim). The player who takes the last object wins
(normal play); in misère play that player loses.

A position is the tuple of heap sizes in display order.

Theory (E. H. Moore, "A generalization of the game called Nim", Annals of Mathematics 11 (1910),
93-94): write the heaps in binary; a position is a P-position of normal play exactly when every
column of binary digits sums to a multiple of ``k + 1``. Misère play (proved below, so that the
code does not rest on a citation): when some heap holds 2 or more the P-positions are the same;
when every heap holds 0 or 1, a position is a P-position exactly when the number of heaps of 1
is ``1 mod (k + 1)``.

Proof of the misère rule (by induction on the number of objects, as Bouton's for misère Nim),
taking the normal rule as known. Call *big* a heap of 2 or more, and let ``Q`` be the claimed
P-positions: (A) some big heap and every column a multiple of ``k + 1``; (B) no big heap and
``1 mod (k + 1)`` heaps of 1. The empty position, where the player to move has won, is not in
``Q``. It suffices that no move leads from ``Q`` into ``Q`` and that from every non-empty
position outside ``Q`` some move leads into ``Q``. The key fact: in a position with ``b >= 1``
big heaps, the highest binary column above the ones' column in which some heap has a 1 counts
only big heaps, between 1 and ``b`` of them; so a position of type (A) has at least ``k + 1``
big heaps, and one with 1 to ``k`` big heaps is never a P-position of normal play.

* From (B) a move empties 1 to ``k`` heaps of 1: their number is then not ``1 mod (k + 1)``.
* From (A) a move changes at most ``k`` heaps, so a big heap is left (there were ``k + 1``):
  the result is not (B), and not (A) by the normal rule (no move joins two of its
  P-positions).
* Outside ``Q`` with no big heap: ``j`` heaps of 1, ``j mod (k + 1)`` not 1, ``j >= 1``;
  emptying ``(j - 1) mod (k + 1)`` of them (1 to ``k``, at most ``j - 1``) gives (B).
* Outside ``Q`` with ``b > k`` big heaps: some column is not a multiple, and the normal rule's
  move (below) makes every column one; it changes at most ``k`` heaps, so a big heap is left:
  (A).
* Outside ``Q`` with ``1 <= b <= k`` big heaps and ``j`` heaps of 1: lower ``t`` of the big
  heaps to 1 and the others to 0, and empty ``r`` heaps of 1, ``0 <= t <= b``,
  ``0 <= r <= min(j, k - b)`` (at most ``k`` heaps change). The heaps of 1 then number
  ``j - r + t``, which takes every value from ``j - min(j, k - b)`` to ``j + b``: ``k + 1``
  consecutive values when ``j >= k - b``, else every value from 0 to ``j + b >= 1``. Either way
  one is ``1 mod (k + 1)``: (B).

Every function here is checked against the exact search (tests/test_relatives_theory.py).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import combinations

from nimlab.theory.outcome import Outcome

__all__ = [
    "MooreWorking",
    "moore_is_move",
    "moore_moves",
    "moore_outcome",
    "moore_takes",
    "moore_winning_move",
    "moore_working",
]

Heaps = tuple[int, ...]


def _check(heaps: Sequence[int], k: int) -> Heaps:
    if k < 1:
        raise ValueError(f"Moore's Nim_k needs k >= 1 (heaps one move may change), got {k}")
    position = tuple(heaps)
    if any(h < 0 for h in position):
        raise ValueError(f"heap sizes must be at least 0, got {position}")
    return position


def moore_moves(heaps: Sequence[int], k: int) -> Iterator[Heaps]:
    """Every position one move away, in display order: for 1, 2, .., ``k`` heaps (each choice
    of non-empty heaps in index order), every combination of new sizes below the old ones
    (ascending). O(product of the chosen heaps' sizes) per choice: exponential in ``k``, for
    small positions (the exact search) only; lazy, O(n) memory whatever the sizes."""
    position = _check(heaps, k)
    for chosen, takes in _choices(position, k, largest_first=True):
        child = list(position)
        for i, take in zip(chosen, takes, strict=True):
            child[i] -= take
        yield tuple(child)


def moore_takes(heaps: Sequence[int], k: int) -> Iterator[tuple[Heaps, Heaps]]:
    """Every move as ``(heaps chosen, amounts taken)``: for 1, 2, .., ``k`` heaps, each choice
    of non-empty heaps in index order, the amounts in lexicographic order from ``(1, .., 1)``
    (the last heap's amount changing fastest, as :func:`itertools.product` lists them). Lazy:
    O(k) per move and O(n) memory whatever the sizes (``product`` would first list every
    amount: gigabytes for a heap of 10**8, and a heap above 2**63 cannot be listed at all)."""
    return _choices(_check(heaps, k), k, largest_first=False)


def _choices(position: Heaps, k: int, *, largest_first: bool) -> Iterator[tuple[Heaps, Heaps]]:
    live = [i for i, h in enumerate(position) if h]
    for size in range(1, min(k, len(live)) + 1):
        for chosen in combinations(live, size):
            for takes in _amounts(tuple(position[i] for i in chosen), largest_first):
                yield chosen, takes


def _amounts(tops: Heaps, largest_first: bool) -> Iterator[Heaps]:
    """Every tuple ``t`` with ``1 <= t[i] <= tops[i]`` in lexicographic order (from the
    largest when ``largest_first``), lazily."""
    if not tops:
        yield ()
        return
    firsts = range(tops[0], 0, -1) if largest_first else range(1, tops[0] + 1)
    for first in firsts:
        for rest in _amounts(tops[1:], largest_first):
            yield (first, *rest)


def moore_is_move(heaps: Sequence[int], after: Sequence[int], k: int) -> bool:
    """Whether going from ``heaps`` to ``after`` (same length, display order) is one legal move:
    1 to ``k`` heaps smaller, none larger. O(n), where :func:`moore_moves` would list
    exponentially many moves."""
    position, later = _check(heaps, k), tuple(after)
    if len(later) != len(position) or any(h < 0 for h in later):
        return False
    changed = [(a, b) for a, b in zip(position, later, strict=True) if a != b]
    return 1 <= len(changed) <= k and all(b < a for a, b in changed)


@dataclass(frozen=True, slots=True)
class MooreWorking:
    """Why a position of Moore's Nim_k has its outcome, as data.

    ``columns[j]`` is how many heaps have binary digit ``j`` set (``j = 0`` the ones' column),
    ``residues[j]`` that count mod ``k + 1``; ``ones`` the number of heaps of exactly 1 and
    ``big`` whether some heap holds more than one (misère play asks). ``p_position``: every
    residue 0 (normal play, or misère play with a big heap), or ``ones % (k + 1) == 1`` (misère
    play without one).
    """

    k: int
    columns: tuple[int, ...]
    residues: tuple[int, ...]
    ones: int
    big: bool
    misere: bool

    @property
    def p_position(self) -> bool:
        if self.misere and not self.big:
            return self.ones % (self.k + 1) == 1
        return not any(self.residues)


def moore_working(heaps: Sequence[int], k: int, *, misere: bool = False) -> MooreWorking:
    """The binary columns of ``heaps`` and their sums mod ``k + 1``. O(n log max)."""
    position = _check(heaps, k)
    width = max(position, default=0).bit_length()
    columns = tuple(sum((h >> j) & 1 for h in position) for j in range(width))
    return MooreWorking(
        k,
        columns,
        tuple(c % (k + 1) for c in columns),
        sum(1 for h in position if h == 1),
        any(h > 1 for h in position),
        misere,
    )


def moore_outcome(heaps: Sequence[int], k: int, *, misere: bool = False) -> Outcome:
    """P exactly when every binary column sums to 0 mod ``k + 1`` (misère: see the module's
    docstring). O(n log max).

    >>> moore_outcome((1, 2, 3), 2), moore_outcome((1, 2, 3), 1), moore_outcome((5, 5, 5), 2)
    (<Outcome.N: 'N'>, <Outcome.P: 'P'>, <Outcome.P: 'P'>)
    """
    return Outcome.of(not moore_working(heaps, k, misere=misere).p_position)


def moore_winning_move(heaps: Sequence[int], k: int, *, misere: bool = False) -> Heaps | None:
    """A winning move, as the position it leaves (display order kept), or ``None`` for a
    P-position and for the empty position (an N-position of misère play: the game is over and
    the player to move has won). O(n log² max + k²).

    Moore's construction, from the highest binary column down: a heap is *free* once the move
    has lowered one of its higher digits (its lower digits may then be anything). In a column
    whose count of 1s among the heaps not yet chosen is ``s`` with ``r = s mod (k + 1) > 0``,
    either ``k + 1 - r`` free heaps get a 1 there (when there are so many), or ``r`` more heaps
    with a 1 there are chosen and get a 0 (they fit: then fewer than ``k + 1 - r`` are chosen).
    Misère play (the module's proof): with more than ``k`` heaps above 1, the same move (it
    leaves one of them above 1); with 1 to ``k``, every heap above 1 goes to 0 or 1 and some
    heaps of 1 to 0, so that the number of heaps of 1 becomes ``1 mod (k + 1)``; with none,
    ``(ones - 1) mod (k + 1)`` heaps of 1 go to 0.
    """
    position = _check(heaps, k)
    working = moore_working(position, k, misere=misere)
    if working.p_position or not any(position):
        return None
    if misere and not working.big:  # take ``ones - 1 mod (k + 1)`` heaps of 1 (1 to k of them)
        take = (working.ones - 1) % (k + 1)
        ones = set([i for i, h in enumerate(position) if h == 1][:take])
        return tuple(0 if i in ones else h for i, h in enumerate(position))
    if misere and sum(1 for h in position if h > 1) <= k:
        return _misere_to_ones(position, k)
    return _normal_move(position, k, working.columns)


def _normal_move(position: Heaps, k: int, columns: tuple[int, ...]) -> Heaps:
    after = list(position)
    chosen: list[int] = []  # free heaps, in the order chosen
    for j in range(len(columns) - 1, -1, -1):
        bit = 1 << j
        fixed_ones = [i for i, h in enumerate(position) if h & bit and i not in chosen]
        r = len(fixed_ones) % (k + 1)
        for i in chosen:  # free heaps: 0 in this column unless needed below
            after[i] &= ~bit
        if not r:
            continue
        if len(chosen) >= k + 1 - r:
            for i in chosen[: k + 1 - r]:
                after[i] |= bit
        else:
            for i in fixed_ones[:r]:
                chosen.append(i)
                after[i] = position[i] & ~(2 * bit - 1)  # higher digits kept, this one 0
    return tuple(after)


def _misere_to_ones(position: Heaps, k: int) -> Heaps:
    """Every heap above 1 to 0 or 1 and some heaps of 1 to 0, at most ``k`` heaps changed, so
    that the heaps of 1 number ``1 mod (k + 1)``."""
    big = [i for i, h in enumerate(position) if h > 1]
    ones = [i for i, h in enumerate(position) if h == 1]
    for kept in range(len(big) + 1):  # big heaps left at 1
        for removed in range(min(len(ones), k - len(big)) + 1):
            if (len(ones) - removed + kept) % (k + 1) == 1:
                after = list(position)
                for n, i in enumerate(big):
                    after[i] = 1 if n < kept else 0
                for i in ones[:removed]:
                    after[i] = 0
                return tuple(after)
    raise AssertionError("unreachable: 1 to k heaps above 1 (see the proof)")  # pragma: no cover
