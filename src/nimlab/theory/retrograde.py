"""A dense retrograde solver for games that never split a heap.

For Nim, subtraction games and octal games whose digits lack bit 4, every move replaces one heap
by a smaller one. Every canonical position with at most ``K`` heaps, each at most ``M``, is then a
sorted vector ``c[0] <= ... <= c[K-1]`` over ``0 .. M`` (zeros pad the front), ranked by the
combinatorial number system (colex rank ``sum_i C(c[i] + i, i + 1)``); there are
``C(M + K, K)`` of them. A child is componentwise below its parent after sorting, so its rank is
smaller, and one pass in increasing rank order fills the whole table — no recursion, no hashing.

The values are exactly :class:`nimlab.theory.solver.ExactSolver`'s (same outcome and remoteness
conventions: terminal = empty, extra end position, or no legal move; normal play terminal = P,
misère terminal = N, remoteness 0). The table is built once (lazily, on the first query, or by
:meth:`DenseSolver.build`) and then answers any covered position in O(K).

Speed: O(N * K) for Nim-like rules and O(N * K * (K + L)) in general, for ``N = C(M + K, K)``
positions and ``L`` explicit octal digits, because a run of "take any larger amount" moves (a
tail digit with bit 2, as in Nim) is folded into one running minimum per heap instead of being
enumerated move by move (see :mod:`nimlab.theory._retrograde_kernels`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from math import comb

import numpy as np
from numpy.typing import NDArray

from nimlab.theory import kernels
from nimlab.theory._retrograde_kernels import solve_table, solve_table_any_take
from nimlab.theory.octal import TakeAndBreak
from nimlab.theory.outcome import Outcome
from nimlab.theory.positions import Canon, canonical
from nimlab.theory.solver import Value

__all__ = ["MAX_TABLE_BYTES", "DenseSolver", "supports", "table_size"]

MAX_TABLE_BYTES = 3 * 2**30
"""The most memory a table may need while it is built (scores plus rings of running minima)."""

_HALF16 = 2**15 - 1
_HALF32 = 2**31 - 1


def supports(rule: TakeAndBreak) -> bool:
    """Whether :class:`DenseSolver` can solve ``rule``: true when no move splits a heap.

    O(number of digits)."""
    return not rule.splits


def table_size(max_heap: int, max_piles: int) -> int:
    """The number of canonical positions with at most ``max_piles`` heaps, each at most
    ``max_heap`` (the empty position included): ``C(max_heap + max_piles, max_piles)``. O(K)."""
    if max_heap < 0 or max_piles < 0:
        raise ValueError("max_heap and max_piles must be non-negative")
    return comb(max_heap + max_piles, max_piles)


def _ring_layout(max_heap: int, max_piles: int) -> tuple[list[int], list[int], int]:
    """Offsets and masks of the per-column rings of running minima, and their total size.

    Column ``f`` is read at most ``C(M - 1 + f, f)`` ranks back, so its ring holds the next power
    of two above that many entries.
    """
    offsets: list[int] = []
    masks: list[int] = []
    total = 0
    for f in range(max_piles):
        reach = comb(max_heap - 1 + f, f) if max_heap >= 1 else 0
        width = 1 << reach.bit_length()
        offsets.append(total)
        masks.append(width - 1)
        total += width
    return offsets, masks, total


def _build_bytes(max_heap: int, max_piles: int, rule: TakeAndBreak, score_bytes: int) -> int:
    ring = _ring_layout(max_heap, max_piles)[2] if rule.tail & 2 else 0
    return (table_size(max_heap, max_piles) + ring) * score_bytes


class DenseSolver:
    """The persistent table of outcome and remoteness for every canonical position with at most
    ``max_piles`` heaps, each at most ``max_heap``, under a non-splitting ``rule``.

    Raises :class:`ValueError` when the rule splits heaps, when a bound is out of range, or when
    building the table would need more than :data:`MAX_TABLE_BYTES` (3 GiB). Memory: 2 bytes per
    position (4 when a remoteness could exceed 32766, i.e. ``K * M >= 32767``, or when ``wide``
    asks for them: the same answers in 32-bit scores), plus, when the
    tail digit allows taking any larger amount (Nim), rings of running minima of about
    ``2 * C(M + K - 1, K - 1)`` entries at most. Ten piles of 20 under Nim: 60 MB of table plus
    27 MB of rings while building. Build time: see :meth:`build`.

    Extra end positions with more than ``max_piles`` heaps or a heap above ``max_heap`` are
    ignored: no covered position can reach them.
    """

    def __init__(
        self,
        rule: TakeAndBreak,
        *,
        misere: bool = False,
        end_positions: frozenset[Canon] = frozenset(),
        max_heap: int,
        max_piles: int,
        wide: bool = False,
    ) -> None:
        if not supports(rule):
            raise ValueError(
                f"DenseSolver cannot solve {rule.code}: some move splits a heap in two; "
                "use ExactSolver (or a Grundy method) for splitting games"
            )
        if not isinstance(max_heap, int) or max_heap < 0:
            raise ValueError(f"max_heap must be a non-negative int, got {max_heap!r}")
        if not isinstance(max_piles, int) or max_piles < 1:
            raise ValueError(f"max_piles must be a positive int, got {max_piles!r}")
        self.rule = rule
        self.misere = misere
        self.max_heap = max_heap
        self.max_piles = max_piles
        self.end_positions = frozenset(canonical(p) for p in end_positions)
        self.size = table_size(max_heap, max_piles)
        # Remoteness never exceeds the number of objects, at most K * M.
        longest = max_heap * max_piles
        if longest < _HALF16 and not wide:
            self._dtype: type[np.unsignedinteger] = np.uint16
            self._half = _HALF16
        elif longest < _HALF32:
            self._dtype = np.uint32
            self._half = _HALF32
        else:
            raise ValueError(f"{max_piles} piles of {max_heap} is beyond DenseSolver's range")
        score_bytes = np.dtype(self._dtype).itemsize
        self.build_bytes = _build_bytes(max_heap, max_piles, rule, score_bytes)
        if self.build_bytes > MAX_TABLE_BYTES:
            raise ValueError(
                f"a table of {max_piles} piles of up to {max_heap} has {self.size:,} positions "
                f"and would need {self.build_bytes / 2**30:.1f} GiB to build (limit "
                f"{MAX_TABLE_BYTES / 2**30:.0f} GiB); use fewer or smaller piles, or ExactSolver"
            )
        self._binom = [
            [comb(n, k) for k in range(max_piles + 2)] for n in range(max_heap + max_piles + 1)
        ]
        self._scores: NDArray[np.unsignedinteger] | None = None

    @classmethod
    def covering(
        cls,
        rule: TakeAndBreak,
        position: Sequence[int],
        *,
        misere: bool = False,
        end_positions: frozenset[Canon] = frozenset(),
    ) -> DenseSolver:
        """The smallest table that covers ``position`` and so every position reachable from it
        (as many piles as it has non-empty heaps, heaps up to its largest). O(K) until built."""
        canon = canonical(position)
        return cls(
            rule,
            misere=misere,
            end_positions=end_positions,
            max_heap=max(canon, default=0),
            max_piles=max(len(canon), 1),
        )

    # -- the table ----------------------------------------------------------------------------

    @property
    def built(self) -> bool:
        """Whether the table has been computed."""
        return self._scores is not None

    @property
    def nbytes(self) -> int:
        """The memory the finished table holds (0 before it is built)."""
        return 0 if self._scores is None else int(self._scores.nbytes)

    def build(self) -> None:
        """Compute the table now (idempotent).

        O(N * K) time for Nim-like rules (no explicit digit, tail digit with bit 2) and
        O(N * K * (K + L)) otherwise, for ``N = C(M + K, K)`` positions and ``L`` explicit
        digits; memory as in the class docstring."""
        if self._scores is not None:
            return
        rule = self.rule
        any_take = not rule.digits and rule.tail & 2
        wide = self._dtype is np.uint32
        kernels.ensure(
            "retrograde-wide" if wide else "retrograde-any" if any_take else "retrograde"
        )
        K, M = self.max_piles, self.max_heap
        binom = np.array(self._binom, dtype=np.int64)
        ends = sorted(
            self._rank_unchecked(p)
            for p in self.end_positions
            if len(p) <= K and max(p, default=0) <= M
        )
        scores = np.empty(self.size, dtype=self._dtype)
        offsets, masks, ring_size = _ring_layout(M, K) if rule.tail & 2 else ([0] * K, [0] * K, 1)
        ring = np.empty(ring_size, dtype=self._dtype)
        end_ranks = np.array(ends, dtype=np.int64)
        ring_off = np.array(offsets, dtype=np.int64)
        ring_mask = np.array(masks, dtype=np.int64)
        if any_take:
            solve_table_any_take(
                M,
                K,
                rule.tail,
                self.misere,
                end_ranks,
                binom,
                scores,
                ring,
                ring_off,
                ring_mask,
                self._half,
            )
        else:
            digits = np.array(rule.digits, dtype=np.int64)
            solve_table(
                K,
                digits,
                rule.tail,
                self.misere,
                end_ranks,
                binom,
                scores,
                ring,
                ring_off,
                ring_mask,
                self._half,
            )
        scores.flags.writeable = False
        self._scores = scores

    # -- queries ------------------------------------------------------------------------------

    def covers(self, position: Sequence[int]) -> bool:
        """Whether the table holds ``position`` (any order, zeros ignored): at most ``max_piles``
        non-empty heaps, each at most ``max_heap``. O(K)."""
        heaps = [h for h in position if h]
        return len(heaps) <= self.max_piles and (
            not heaps or (min(heaps) >= 0 and max(heaps) <= self.max_heap)
        )

    def rank(self, position: Sequence[int]) -> int:
        """The index of ``position`` (any order, zeros ignored) in the table. O(K log K).

        Raises :class:`ValueError` when the table does not cover it."""
        heaps = sorted(h for h in position if h)
        if heaps and heaps[0] < 0:
            raise ValueError(f"heap sizes cannot be negative: {tuple(position)!r}")
        if len(heaps) > self.max_piles or (heaps and heaps[-1] > self.max_heap):
            raise ValueError(
                f"position {tuple(heaps)!r} is outside this table "
                f"(at most {self.max_piles} piles of at most {self.max_heap})"
            )
        return self._rank_unchecked(tuple(heaps))

    def _rank_unchecked(self, canon: Canon) -> int:
        binom = self._binom
        offset = self.max_piles - len(canon)
        return sum(binom[h + i][i + 1] for i, h in enumerate(canon, offset))

    def _decode(self, score: int) -> Value:
        if score < self._half:
            return Value(Outcome.P, score)
        return Value(Outcome.N, 2 * self._half - score)

    def value(self, position: Sequence[int]) -> Value:
        """The outcome and remoteness of ``position`` (any order, zeros ignored); equal to
        ``ExactSolver(...).value(canonical(position))``. O(K log K) once the table is built (the
        first query builds it). Raises :class:`ValueError` for a position outside the table."""
        r = self.rank(position)
        self.build()
        assert self._scores is not None
        return self._decode(int(self._scores[r]))

    def outcome(self, position: Sequence[int]) -> Outcome:
        """The outcome class of ``position``; see :meth:`value`."""
        return self.value(position).outcome

    def values(self, positions: Iterable[Sequence[int]]) -> list[Value]:
        """:meth:`value` of each position, in order. O(K log K) per position after the build."""
        ranks = [self.rank(p) for p in positions]
        self.build()
        assert self._scores is not None
        found = self._scores[np.array(ranks, dtype=np.int64)].tolist()
        return [self._decode(s) for s in found]
