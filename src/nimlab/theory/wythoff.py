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

Grundy values (normal play): ``G(x, y)`` is the mex of the values of the options; no formula is
known, so :func:`wythoff_grundy_table` computes them. Some are theorems: ``G(x, y) = G(y, x)``,
``G(0, n) = n`` (the options of ``(0, n)`` are ``(0, 0) .. (0, n - 1)``), and ``G(x, y) = 0``
exactly at the P-positions above (the Sprague–Grundy theorem); :func:`wythoff_grundy_known`
gives those without a table. Each value appears at most once in a row, a column or a diagonal
(two cells of one line are options of each other).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from math import isqrt
from typing import TYPE_CHECKING

from nimlab.theory.budget import Budget, BudgetExceeded
from nimlab.theory.outcome import Outcome

if TYPE_CHECKING:
    import numpy as np  # loaded by the table only: playing the game needs no NumPy

__all__ = [
    "KEPT_BYTES",
    "TABLE_BYTES",
    "WythoffWorking",
    "beatty_pair",
    "lower_index",
    "table_cells",
    "upper_index",
    "wythoff_grundy",
    "wythoff_grundy_known",
    "wythoff_grundy_table",
    "wythoff_grundy_values",
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


# -- Grundy values (normal play) ------------------------------------------------------------------


def wythoff_grundy_known(position: Pair) -> int | None:
    """``G(x, y)`` where a theorem gives it without a table: ``n`` for ``(0, n)`` and ``(n, 0)``,
    ``0`` for the P-positions (Wythoff's pairs); ``None`` elsewhere. O(M(log n)).

    >>> wythoff_grundy_known((0, 7)), wythoff_grundy_known((5, 3)), wythoff_grundy_known((1, 1))
    (7, 0, None)
    """
    x, y = _check(position)
    if x == 0 or y == 0:
        return x + y
    return 0 if wythoff_working((x, y)).p_position else None


TABLE_BYTES = 1 << 30
"""The most memory a table may take, whatever its budget (1 GiB: about 16,000 by 16,000)."""
KEPT_BYTES = 16 << 20
"""The largest table :func:`wythoff_grundy_values` keeps for the next call (16 MiB)."""
_KEPT: list[_Table] = []
_KEPT_LOCK = threading.Lock()


def table_cells(rows: int, cols: int) -> int:
    """How many cells :func:`wythoff_grundy_table` computes for a ``rows`` by ``cols`` table:
    those with ``x <= y`` (the others follow by symmetry). O(1)."""
    r, c = min(rows, cols), max(rows, cols)
    return r * c - r * (r - 1) // 2


def _table_bytes(rows: int, cols: int) -> int:
    """At most the memory of a table: its values (4 bytes each) and the bit sets of its lines
    (values are below ``2 min + max``: a cell has fewer options)."""
    r, c = min(rows, cols), max(rows, cols)
    return 4 * rows * cols + (2 * r + 1) * ((2 * r + c) // 8 + 64)


def wythoff_grundy_table(
    rows: int, cols: int | None = None, *, budget: Budget | None = None
) -> np.ndarray:
    """The Grundy values (normal play) ``G(x, y)`` for ``0 <= x < rows`` and ``0 <= y < cols``
    (``cols`` defaults to ``rows``: the square table of piles up to ``rows - 1``), as a NumPy
    array of shape ``(rows, cols)`` (``int32``), symmetric where it is square.

    Only the cells with ``x <= y`` are computed (:func:`table_cells`), column by column; each
    cell's value is the mex of the values already in its row, its column and its diagonal. Every
    row, column and diagonal keeps its values as a bit set above the least value it lacks (all
    smaller values are in it), and the mex of the three sets starts at the largest of those least
    values, so each cell is a few operations on bit sets of at most ``2 min + max`` bits (about
    1.5 N bits at most for the N by N table, measured): time O(cells · (1 + (rows + cols) / 64))
    word operations, in practice the Python loop's (about 1.7 µs per cell: 3.5 s for 2000 by
    2000); memory 4 bytes per cell of the table plus ``2 min(rows, cols) + 1`` bit sets.

    ``budget`` (default: none) is charged one position per computed cell, checked before any
    work (a table beyond its position or memory limit, or over :data:`TABLE_BYTES` whatever the
    budget, is refused at once, whatever its size) and on the way (its time):
    :class:`~nimlab.theory.budget.BudgetExceeded` then, and nothing is returned.

    >>> wythoff_grundy_table(4).tolist()
    [[0, 1, 2, 3], [1, 2, 0, 4], [2, 0, 1, 5], [3, 4, 5, 6]]
    """
    import numpy as np

    cols = rows if cols is None else cols
    if rows < 0 or cols < 0:
        raise ValueError(f"a table has 0 or more rows and columns, not {rows} by {cols}")
    budget = budget if budget is not None else Budget()
    r, c = min(rows, cols), max(rows, cols)
    if r == 0:
        return np.zeros((rows, cols), dtype=np.int32)
    columns = _columns(r, c, budget)  # (checked against the budget first)
    out = np.zeros((r, c), dtype=np.int32 if 2 * r + c < 1 << 31 else np.int64)
    for j, column in enumerate(columns):
        out[: len(column), j] = column
    square = out[:, :r]
    lower = np.tril_indices(r, -1)
    square[lower] = square.T[lower]
    return out if rows <= cols else np.ascontiguousarray(out.T)


@dataclass(frozen=True)
class _Table:
    """A table of ``G`` read by :func:`wythoff_grundy_values`: ``value(a, b)`` for ``a <= b``,
    ``a < rows``, ``b < cols``."""

    rows: int
    cols: int
    value: Callable[[int, int], int]


SMALL_CELLS = 4096
"""Tables of at most this many cells (:func:`table_cells`) are read by
:func:`wythoff_grundy_values` from the columns as lists, without NumPy (whose import takes
longer than such a table)."""


def _columns(r: int, c: int, budget: Budget) -> Iterator[list[int]]:
    """The columns ``j < c`` of the ``r`` by ``c`` table (``0 < r <= c``), each the values of
    its cells ``(i, j)`` with ``i <= min(j, r - 1)``, after checking the table against
    ``budget`` and :data:`TABLE_BYTES` (see :func:`wythoff_grundy_table`, whose method this
    is); each column is charged to ``budget`` once it is used."""
    cells = table_cells(r, c)
    if not budget.allows(cells):
        raise BudgetExceeded(budget.positions, "positions")
    nbytes = _table_bytes(r, c)
    if nbytes > TABLE_BYTES:
        raise BudgetExceeded(TABLE_BYTES, "memory")
    budget.check_bytes(nbytes)
    budget.check()
    return _column_values(r, c, budget)


def _column_values(r: int, c: int, budget: Budget) -> Iterator[list[int]]:
    # each line's set: base (every value below it is in the set) and bits (bit k: base + k)
    row_base, row_bits = [0] * r, [0] * r
    diag_base, diag_bits = [0] * r, [0] * r  # diagonal d = y - x at d % r
    for j in range(c):
        col_base = col_bits = 0
        top = min(j + 1, r)
        column = [0] * top
        slot = j % r
        diag_base[slot] = diag_bits[slot] = 0  # diagonal j starts here (j - r has ended)
        for i in range(top):
            if i == j:  # row i starts at its diagonal cell: its cells left of it are column i's
                row_base[i], row_bits[i] = col_base, col_bits
            d = (j - i) % r
            rb, db = row_base[i], diag_base[d]
            base = max(rb, col_base, db)
            u = (row_bits[i] >> (base - rb)) | (col_bits >> (base - col_base))
            u |= diag_bits[d] >> (base - db)
            g = base + (~u & (u + 1)).bit_length() - 1
            column[i] = g
            row_base[i], row_bits[i] = _add(rb, row_bits[i], g)
            col_base, col_bits = _add(col_base, col_bits, g)
            diag_base[d], diag_bits[d] = _add(db, diag_bits[d], g)
        yield column
        budget.charge(top)


def _add(base: int, bits: int, g: int) -> tuple[int, int]:
    """The set ``(base, bits)`` with the value ``g`` added (``g`` not in it yet)."""
    bits |= 1 << (g - base)
    if bits & 1:
        run = (~bits & (bits + 1)).bit_length() - 1  # the values now present from base on
        base, bits = base + run, bits >> run
    return base, bits


def wythoff_grundy(position: Pair, *, budget: Budget | None = None) -> int:
    """``G(x, y)`` of one position (normal play): from :func:`wythoff_grundy_known` when a
    theorem gives it, else read from the table of piles up to ``(min, max)`` of the position
    (:func:`wythoff_grundy_table`, O(x · y) time and 4 bytes per cell). Raises
    :class:`~nimlab.theory.budget.BudgetExceeded` beyond ``budget`` (default: none) or the
    table's memory limit.

    >>> wythoff_grundy((3, 3)), wythoff_grundy((3, 5))
    (6, 0)
    """
    return wythoff_grundy_values([position], budget=budget)[0]


def wythoff_grundy_values(positions: Iterable[Pair], *, budget: Budget | None = None) -> list[int]:
    """``G`` of each position, in order: the theorems' values (:func:`wythoff_grundy_known`)
    and, for the others, one table that covers them all (rows up to the largest smaller pile,
    columns up to the largest larger pile: :func:`wythoff_grundy_table`, whose cost and budget
    apply). A position and the results of its moves share its table, and the last table of at
    most :data:`KEPT_BYTES` is kept for the next call (a game's positions shrink, so one table
    serves its later analyses at once). Raises
    :class:`~nimlab.theory.budget.BudgetExceeded` when that table is beyond ``budget``."""
    pairs = [_check(p) for p in positions]
    known = [wythoff_grundy_known(p) for p in pairs]
    rest = [(min(p), max(p)) for p, k in zip(pairs, known, strict=True) if k is None]
    if not rest:
        return [k for k in known if k is not None]
    rows, cols = max(a for a, _ in rest) + 1, max(b for _, b in rest) + 1
    with _KEPT_LOCK:
        kept = _KEPT[0] if _KEPT else None
    if kept is not None and kept.rows >= rows and kept.cols >= cols:
        table = kept
    else:
        if table_cells(rows, cols) <= SMALL_CELLS:
            columns = list(_columns(rows, cols, budget if budget is not None else Budget()))
            table = _Table(rows, cols, lambda a, b: columns[b][a])
            keep = True
        else:
            array = wythoff_grundy_table(rows, cols, budget=budget)
            table = _Table(rows, cols, lambda a, b: int(array[a, b]))
            keep = array.nbytes <= KEPT_BYTES
        if keep:
            with _KEPT_LOCK:
                _KEPT[:] = [table]
    return [
        table.value(min(p), max(p)) if k is None else k for p, k in zip(pairs, known, strict=True)
    ]
