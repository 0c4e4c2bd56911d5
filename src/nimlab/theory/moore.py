"""Moore's Nim_k: heaps of objects; a move takes any positive number of objects from each of at
least 1 and at most ``k`` heaps (``k = 1`` is Nim). The player who takes the last object wins
(normal play); in misère play that player loses.

A position is the tuple of heap sizes in display order.

Theory (Moore 1910): write the heaps in binary; a position is a P-position exactly when every
column of binary digits sums to a multiple of ``k + 1``. Misère play: when some heap holds more
than one object the P-positions are the same; when none does, a position is a P-position exactly
when the number of heaps of 1 is ``1 mod (k + 1)``. The normal rule is Moore's theorem; the
misère rule is the analogue of misère Nim's, checked here against the exact search (up to four
heaps of up to six objects, ``k`` up to 3) but not proven in this code.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import combinations, product

from nimlab.theory.outcome import Outcome

__all__ = [
    "MooreWorking",
    "moore_is_move",
    "moore_moves",
    "moore_outcome",
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
    of non-empty heaps in index order), every combination of new sizes below the old ones.
    O(product of the chosen heaps' sizes) per choice: exponential in ``k``, for small positions
    (the exact search) only."""
    position = _check(heaps, k)
    live = [i for i, h in enumerate(position) if h]
    for size in range(1, min(k, len(live)) + 1):
        for chosen in combinations(live, size):
            for sizes in product(*(range(position[i]) for i in chosen)):
                child = list(position)
                for i, after in zip(chosen, sizes, strict=True):
                    child[i] = after
                yield tuple(child)


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
    Misère play: the same move unless it leaves no heap above 1; then every heap above 1 (at
    most ``k`` of them) goes to 0 or 1, and some heaps of 1 to 0, so that the number of heaps
    of 1 becomes ``1 mod (k + 1)``.
    """
    position = _check(heaps, k)
    working = moore_working(position, k, misere=misere)
    if working.p_position or not any(position):
        return None
    if misere and not working.big:  # take ``ones - 1 mod (k + 1)`` heaps of 1 (1 to k of them)
        take = (working.ones - 1) % (k + 1)
        ones = [i for i, h in enumerate(position) if h == 1][:take]
        return tuple(0 if i in ones else h for i, h in enumerate(position))
    after = _normal_move(position, k, working.columns)
    if misere and not any(h > 1 for h in after):
        return _misere_to_ones(position, k)
    return after


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
    raise AssertionError("unreachable: the normal move changed every big heap")  # pragma: no cover
