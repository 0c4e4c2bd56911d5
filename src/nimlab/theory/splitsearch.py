"""A compiled exact search for every take-and-break game, including those that split heaps.

:class:`SplitSolver` gives exactly :class:`nimlab.theory.solver.ExactSolver`'s values (outcome and
remoteness; terminal = empty, extra end position, or no legal move; normal play terminal = P,
misère terminal = N, remoteness 0) for any octal game — Kayles (0.77), Dawson's Kayles (0.07),
0.137, 0.6, Nim and subtraction games alike — in normal or misère play, with or without extra end
positions, 30 to 70 times faster than ExactSolver and about a million positions per second
(see ``bench/bench_splitsearch.py``).

How. A depth-first search in Numba (:mod:`nimlab.theory._split_kernels`) with an explicit stack
and a table of solved positions that persists across queries. A position is keyed by its exact
index among all partitions (by total, then lexicographically, largest heap first), so a key is
one integer, positions that differ only in small heaps get nearby keys, and the table is a set of
pages of 1024 two-byte values (found through a small hash directory) that a search fills densely:
about 5 bytes per stored position for Kayles. Heaps that have no move (a heap of 1 in Dawson's
Kayles) are left out of every position when there are no extra end positions: they never change
and never decide the outcome or the remoteness. A move's child is keyed without being built, in
O(K) (usually less for splits), and pushed only when it is not stored yet.

Range. Positions with at most :data:`MAX_TOTAL` objects (after leaving out heaps without a move);
larger ones raise :class:`SearchRangeError`. Exact search is only realistic far below that bound
for splitting games anyway (:meth:`SplitSolver.estimate`).

Budgets. The kernel runs in chunks of bounded work; between chunks the wrapper checks the
:class:`~nimlab.theory.budget.Budget` (deadline, cancel flag, positions, bytes). A search that
runs out raises :class:`~nimlab.theory.budget.BudgetExceeded`; the table keeps only solved
positions, so everything stored stays valid and a later query starts normally. Memory is bounded
by ``max_bytes``: when the table would outgrow it while holding positions of earlier queries, it
is emptied once and the query goes on; when the query alone needs more, it raises.

Not thread-safe: use one solver per thread (or a lock).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from math import comb, prod
from types import ModuleType

import numpy as np
from numpy.typing import NDArray

from nimlab.theory.budget import Budget, BudgetExceeded
from nimlab.theory.octal import TakeAndBreak
from nimlab.theory.outcome import Outcome
from nimlab.theory.positions import Canon, canonical
from nimlab.theory.solver import Value

__all__ = ["MAX_TOTAL", "SearchRangeError", "SplitSolver"]

MAX_TOTAL = 263
"""The most objects a searched position may hold: the keys of all positions up to this total
(the number of partitions of ``0 .. MAX_TOTAL``, below 2^53) fit a table slot."""

OUT_OF_RANGE = 2**63
"""What :meth:`SplitSolver.estimate` returns for a position beyond :data:`MAX_TOTAL`."""

_STEPS = 1 << 18
"""Moves generated per kernel call between two budget checks (a few milliseconds)."""
_PAGE = 1 << 10  # keys per page (1 << the kernels' PAGE_BITS)
_FRAME_FIELDS = 9  # the kernels' FRAME_FIELDS
_FIRST_PAGES = 16
_MAX_PAGES = 1 << 20  # the kernels' 2**INDEX_BITS
_FIRST_DIRECTORY = 64
_DIRECTORY_LOAD = 0.5


class SearchRangeError(ValueError):
    """A position is beyond what :class:`SplitSolver` can search (too many objects)."""


@lru_cache(maxsize=16)
def _rank_tables(dead: tuple[int, ...]) -> _RankTables:
    """The tables of :func:`_key` for partitions into parts that are not in ``dead``.

    ``table[n][m]``: partitions of ``n`` into allowed parts of at most ``m``, and ``offs[t]``:
    partitions of all totals below ``t`` (for ``n, m <= MAX_TOTAL``, ``t <= MAX_TOTAL + 1``).
    O(MAX_TOTAL^2) once per set of dead sizes."""
    size = MAX_TOTAL + 1
    banned = set(dead)
    table = [[1] * size]
    for n in range(1, size):
        row = [0] * size
        for m in range(1, size):
            row[m] = row[m - 1] + (table[n - m][m] if m <= n and m not in banned else 0)
        table.append(row)
    offs = [0]
    for n in range(size):
        offs.append(offs[-1] + table[n][n])
    assert offs[-1] < 2**53 - 1
    ptab = np.array(table, dtype=np.int64)
    off = np.array(offs, dtype=np.int64)
    ptab.flags.writeable = False
    off.flags.writeable = False
    return _RankTables(table, offs, ptab, off)


@dataclass(frozen=True)
class _RankTables:
    table: list[list[int]]
    offs: list[int]
    ptab: NDArray[np.int64]
    off: NDArray[np.int64]

    def key(self, position: Sequence[int]) -> int:
        """The exact key of a canonical position (ascending heaps, all allowed parts) of total
        at most MAX_TOTAL. O(len(position))."""
        rem = sum(position)
        key = self.offs[rem]
        for lam in reversed(position):
            key += self.table[rem][lam - 1]
            rem -= lam
        return key


def _kernels() -> ModuleType:
    from nimlab.theory import kernels

    kernels.ensure("split")
    from nimlab.theory import _split_kernels

    return _split_kernels


class SplitSolver:
    """Outcome and remoteness of positions under one take-and-break ``rule`` (splitting or not),
    normal or ``misere`` play, with optional extra ``end_positions``; the table of solved
    positions persists across queries, bounded by ``max_bytes``.

    Complexity: O(R * B * K) time for R positions reachable from the query (not yet stored), B
    moves per position and K heaps per position; about 2 to 20 bytes per stored position
    (2 bytes divided by the share of the table pages in use; see the module docstring of
    :mod:`nimlab.theory._split_kernels`). Extra end positions are put in canonical form (any
    order, zeros ignored); a query may be given in any order too.
    """

    def __init__(
        self,
        rule: TakeAndBreak,
        *,
        misere: bool = False,
        end_positions: frozenset[Canon] = frozenset(),
        max_bytes: int = 512 * 2**20,
    ) -> None:
        if max_bytes < 1:
            raise ValueError(f"max_bytes must be positive, got {max_bytes!r}")
        self.rule = rule
        self.misere = misere
        self.end_positions = frozenset(canonical(p) for p in end_positions)
        self.max_bytes = max_bytes
        extra = [p for p in self.end_positions if p]
        # heaps without a move never change; without extra end positions they never matter
        self._strip = not extra
        dead = [h for h in range(1, MAX_TOTAL + 1) if self._is_dead(h)]
        self._dead = np.zeros(MAX_TOTAL + 1, dtype=np.bool_)
        self._dead[dead] = True
        self._dead[0] = True
        self._ranks = _rank_tables(tuple(dead) if self._strip else ())
        self._strip_any = self._strip and bool(dead)  # the kernel checks parts only then
        self._dig = np.array([rule.digit(k) for k in range(MAX_TOTAL + 1)], dtype=np.int64)
        self._max_take = MAX_TOTAL if rule.max_take is None else min(rule.max_take, MAX_TOTAL)
        self._ends = np.array(
            sorted(self._ranks.key(p) for p in extra if sum(p) <= MAX_TOTAL), dtype=np.int64
        )
        self._terminal = 1 if misere else 0
        self._k0 = 0 if rule.d0 & 4 else 1  # splits without taking are moves of take 0
        self._unequal = 1 if rule.unequal else 0
        self._state = np.zeros(6, dtype=np.int64)
        self._reset_table()
        self._rows = np.zeros((1, 1), dtype=np.int64)
        self._frames = np.zeros((1, _FRAME_FIELDS), dtype=np.int64)
        self._scratch = np.zeros((3, 2), dtype=np.int64)

    # -- sizes --------------------------------------------------------------------------------

    def __len__(self) -> int:
        """The number of positions stored."""
        return int(self._state[1])

    @property
    def nbytes(self) -> int:
        """The memory this solver holds: its table and its stack (not the rank tables shared by
        the solvers, about 0.6 MB per set of heap sizes without a move)."""
        return int(
            self._pages.nbytes
            + self._directory.nbytes
            + self._rows.nbytes
            + self._frames.nbytes
            + self._scratch.nbytes
            + self._dead.nbytes
            + self._dig.nbytes
        )

    def estimate(self, position: Sequence[int]) -> int:
        """An upper bound on the positions a search from ``position`` stores, or
        :data:`OUT_OF_RANGE` when the position is beyond :data:`MAX_TOTAL` objects.

        The least of: the partitions of totals up to the position's into parts no larger than
        its largest heap; the product over its heaps ``h`` of the positions one heap can reach
        (all partitions of totals up to ``h``, or ``h + 1`` when no move splits); and, when no
        move splits, ``C(M + K, K)`` for K heaps of at most M. Heaps without a move are left out
        first (without extra end positions). It ignores what is already stored. O(total + K).
        """
        heaps = self._reduce(position)
        total = sum(heaps)
        if total > MAX_TOTAL:
            return OUT_OF_RANGE
        if not heaps:
            return 1
        table, offs = self._ranks.table, self._ranks.offs
        top = heaps[-1]
        bound = sum(table[n][top] for n in range(total + 1))
        if self.rule.splits:
            bound = min(bound, prod(offs[h + 1] for h in heaps))
        else:
            bound = min(bound, prod(h + 1 for h in heaps), comb(top + len(heaps), len(heaps)))
        return bound

    # -- queries ------------------------------------------------------------------------------

    def value(self, position: Sequence[int], budget: Budget | None = None) -> Value:
        """The outcome and remoteness of ``position`` (any order, zeros ignored), equal to
        ``ExactSolver(...).value(canonical(position))``.

        Raises :class:`BudgetExceeded` when ``budget`` runs out (what was solved stays stored)
        or when the table would need more than ``max_bytes`` for this query alone, and
        :class:`SearchRangeError` beyond :data:`MAX_TOTAL` objects. O(K) when already stored.
        """
        heaps = self._reduce(position)
        total = sum(heaps)
        if total > MAX_TOTAL:
            raise SearchRangeError(
                f"position {canonical(position)!r} has {total} objects in heaps with a move; "
                f"the compiled search handles at most {MAX_TOTAL}"
            )
        key = self._ranks.key(heaps)
        kernels = _kernels()
        code = self._lookup(kernels, key)
        if code < 0:
            self._search(kernels, heaps, total, key, budget)
            code = self._lookup(kernels, key)
            assert code >= 0
        return Value(Outcome.of(bool(code & 1)), code >> 1)

    def values(
        self, positions: Iterable[Sequence[int]], budget: Budget | None = None
    ) -> list[Value]:
        """:meth:`value` of each position, in order (one ``budget`` for all of them)."""
        return [self.value(p, budget) for p in positions]

    def outcome(self, position: Sequence[int], budget: Budget | None = None) -> Outcome:
        """The outcome class of ``position``; see :meth:`value`."""
        return self.value(position, budget).outcome

    # -- internals ----------------------------------------------------------------------------

    def _is_dead(self, heap: int) -> bool:
        """Whether a heap of ``heap`` has no move. O(number of digits + 2)."""
        rule = self.rule
        if rule.d0 & 4 and heap >= 2 + rule.unequal:
            return False  # a split without taking
        if heap > len(rule.digits) + 2:
            # some explicit take leaves one or two heaps, or the tail digit allows a move
            return not (rule.tail or any(d & 6 for d in rule.digits))
        return next(rule.takes(heap), None) is None

    def _reduce(self, position: Sequence[int]) -> Canon:
        if any(not isinstance(h, int | np.integer) or h < 0 for h in position):
            raise ValueError(f"heap sizes must be non-negative integers, got {tuple(position)!r}")
        canon = canonical(int(h) for h in position)
        if self._strip:
            canon = tuple(
                h for h in canon if not (self._dead[h] if h <= MAX_TOTAL else self._is_dead(h))
            )
        return canon

    def _lookup(self, kernels: ModuleType, key: int) -> int:
        return int(kernels.lookup(self._pages, self._directory, int(self._state[5]), key))

    def _reset_table(self) -> None:
        """Forget every stored position (the stack stays)."""
        self._pages = np.zeros((_FIRST_PAGES, _PAGE), dtype=np.uint16)
        self._set_directory(np.zeros(_FIRST_DIRECTORY, dtype=np.int64))
        self._state[1:4] = 0

    def _set_directory(self, directory: NDArray[np.int64]) -> None:
        slots = directory.shape[0]
        self._directory = directory
        self._state[4] = int(slots * _DIRECTORY_LOAD)
        self._state[5] = 64 - (slots.bit_length() - 1)

    def _ensure_stack(self, total: int) -> None:
        # (splits without taking keep the total: the kernel's bound is then 2 * total + 1)
        depth, width = (total if self._k0 else 2 * total) + 1, max(total, 1)
        if self._rows.shape[0] < depth or self._rows.shape[1] < width:
            depth = max(depth, self._rows.shape[0])
            width = max(width, self._rows.shape[1])
            self._rows = np.zeros((depth, width), dtype=np.int64)
            self._frames = np.zeros((depth, _FRAME_FIELDS), dtype=np.int64)
            self._scratch = np.zeros((3, width + 1), dtype=np.int64)

    def _search(
        self, kernels: ModuleType, heaps: Canon, total: int, key: int, budget: Budget | None
    ) -> None:
        self._ensure_stack(total)
        limit = self._memory_limit(budget)
        may_clear = len(self) > 0  # earlier queries' positions may be dropped once
        if self.nbytes > limit and may_clear:
            may_clear = False
            self._reset_table()
        if self.nbytes > limit:
            raise BudgetExceeded(limit, "memory")
        row = np.array(heaps or (0,), dtype=np.int64)
        kernels.push_root(
            row, len(heaps), total, key, self._ends, self._state, self._rows, self._frames, self._k0
        )
        ranks = self._ranks
        while True:
            if budget is not None:
                budget.check()
            stored = len(self)
            store_limit = 2**62
            if budget is not None and budget.positions is not None:
                store_limit = stored + max(0, budget.positions - budget.spent)
            status = kernels.search(
                self._pages,
                self._directory,
                self._state,
                self._rows,
                self._frames,
                self._scratch,
                self._dig,
                self._max_take,
                self._dead,
                self._strip_any,
                self._ends,
                self._terminal,
                ranks.ptab,
                ranks.off,
                _STEPS,
                store_limit,
                self._k0,
                self._unequal,
            )
            if budget is not None and len(self) > stored:
                budget.charge(len(self) - stored)
            if status == kernels.DONE:
                return
            if status == kernels.CHUNK:
                continue
            if status == kernels.LIMIT:
                assert budget is not None and budget.positions is not None
                raise BudgetExceeded(budget.positions, "positions")
            if not self._grow(status == kernels.GROW_PAGES, budget):
                if not may_clear:
                    raise BudgetExceeded(self._memory_limit(budget), "memory")
                may_clear = False
                self._reset_table()

    def _memory_limit(self, budget: Budget | None) -> int:
        if budget is not None and budget.nbytes is not None:
            return min(self.max_bytes, budget.nbytes)
        return self.max_bytes

    def _grow(self, pages: bool, budget: Budget | None) -> bool:
        """Give the table more pages (``pages``) or a larger directory, within the memory limit
        (old and new arrays both count while copying); return whether it fit."""
        room = self._memory_limit(budget) - self.nbytes
        if pages:
            old = self._pages
            have = old.shape[0]
            rows = min(2 * have, room // (2 * _PAGE), _MAX_PAGES)
            if rows <= have:
                return False
            new = np.zeros((rows, _PAGE), dtype=np.uint16)
            new[:have] = old
            self._pages = new
            return True
        slots = 2 * self._directory.shape[0]
        if 8 * slots > room:
            return False
        directory = np.zeros(slots, dtype=np.int64)
        _kernels().rehash_directory(self._directory, directory, 64 - (slots.bit_length() - 1))
        self._set_directory(directory)
        return True
