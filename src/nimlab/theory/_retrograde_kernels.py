"""Numba kernels for :mod:`nimlab.theory.retrograde` (private: the public API checks arguments).

Ranks. Positions are sorted vectors ``c[0] <= ... <= c[K-1]`` over ``0 .. M`` (zeros pad the
front), ranked in colex order of the combination ``a[i] = c[i] + i``::

    rank(c) = sum_i C(c[i] + i, i + 1)

A move lowers one heap, so every child is componentwise below its parent after sorting and has a
smaller rank: one pass in increasing rank order solves the whole table. Lowering the first copy
of a value ``x`` (index ``f``) to ``x - 1`` keeps the vector sorted and lowers the rank by
``C(x - 1 + f, f)``; lowering it to any ``y`` moves the heaps between ``y`` and ``x`` up one
place, and the rank is updated one shifted heap at a time.

Scores. Each position is stored as one unsigned integer *score*, ordered so that the mover's best
child is the one with the smallest score:

- P-position with remoteness r: ``r``                  (``0 <= r < half``)
- N-position with remoteness r: ``neg - r``             (``neg = 2 * half``)
- ``empty = neg + 1``: "no child at all" (only in running minima).

A parent whose best child has score ``s`` is N with remoteness ``s + 1`` when ``s < half``, P
with remoteness ``neg - s + 1`` otherwise, and terminal when it has no child.

Running minima. When the tail digit has bit 2, a heap ``x`` may be lowered to every ``v`` in
``lo .. x - L - 1`` (``L`` explicit digits; ``lo`` is 0 when the tail digit also has bit 1, else
1). For a position ``c`` and a value ``x`` of ``c``, let ``Q(c, x)`` be the least score among the
positions with one ``x`` lowered to some ``v`` in ``lo .. x - L``. Then the "take any larger
amount" moves of ``x`` are worth ``Q(c with x lowered to x - 1, x - 1)`` (one look-up instead of
``x - L`` of them), and ``Q(c, x)`` is the least of that and the score of ``c`` with ``x`` lowered
to ``x - L``. ``Q`` of a value is stored at the index ``e`` of its last copy and read at the
index ``f`` of the first copy of ``x`` (which is the last copy of ``x - 1`` after lowering), from
a rank at most ``C(M - 1 + f, f)`` back; so column ``f`` only keeps a ring of the last
``W_f > C(M - 1 + f, f)`` ranks (a power of two): 27 MB for ten piles of 20 instead of 600 MB
for every rank and column.

A position then costs O(K) look-ups for Nim-like rules (:func:`solve_table_any_take`) and
O(K * (K + L)) in general (:func:`solve_table`), instead of one look-up per move.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from nimlab.theory._jit import njit

__all__ = ["solve_table", "solve_table_any_take"]


@njit(cache=True, nogil=True)
def solve_table(
    max_piles: int,
    digits: NDArray[np.int64],
    tail: int,
    misere: bool,
    end_ranks: NDArray[np.int64],
    binom: NDArray[np.int64],
    scores: NDArray[np.unsignedinteger],
    ring: NDArray[np.unsignedinteger],
    ring_off: NDArray[np.int64],
    ring_mask: NDArray[np.int64],
    half: int,
) -> None:
    """Fill ``scores[r]`` for every rank ``r`` of the table (see the module docstring), for any
    non-splitting rule except those :func:`solve_table_any_take` serves (no explicit digit and a
    tail digit with bit 2), whose running minima this function does not record.

    ``digits[k - 1]`` is the digit for taking ``k`` (no digit may have bit 4) and ``tail`` the
    digit for every larger ``k``; ``end_ranks`` holds the sorted ranks of the extra end
    positions; ``binom[n, k] = C(n, k)`` for ``n <= M + K``, ``k <= K + 1``. Column ``f`` of the
    running minima lives in ``ring[ring_off[f] + (rank & ring_mask[f])]`` (``ring_mask[f] + 1``
    a power of two above ``C(M - 1 + f, f)``; the ring is unused unless ``tail & 2``). ``half``
    is ``2**15 - 1`` for ``uint16`` scores and ``2**31 - 1`` for ``uint32``.

    O(N * K * (K + L)) time for ``N = len(scores)`` positions and ``L`` explicit digits; O(K)
    extra memory besides the arguments.
    """
    K = max_piles
    n = scores.shape[0]
    L = digits.shape[0]
    use_low = (tail & 2) != 0
    lo = 0 if tail & 1 else 1
    neg = 2 * half
    empty = neg + 1
    terminal = neg if misere else 0
    n_end = end_ranks.shape[0]
    ei = 0
    c = np.zeros(K, np.int64)
    q_col = np.zeros(K, np.int64)
    q_val = np.zeros(K, np.int64)
    for r in range(n):
        best = empty
        nq = 0
        t = 0
        while t < K:
            x = c[t]
            f = t
            e = t
            while e + 1 < K and c[e + 1] == x:
                e += 1
            t = e + 1
            if x == 0:
                continue
            dx = digits[x - 1] if x <= L else tail
            tail_min = empty  # lowering x to any v in lo .. x-L-1
            if use_low and x - 1 - L >= lo:
                tail_min = ring[ring_off[f] + ((r - binom[x - 1 + f, f]) & ring_mask[f])]
                if tail_min < best:
                    best = tail_min
            # Lower the first copy of x (index f) to y = x-1, x-2, ..., max(x-L, 0): the
            # heaps at indices j .. f-1 (those above y) shift up one place, y lands at j.
            base = r - binom[x + f, f + 1]
            shift = 0
            j = f
            at_l = empty  # the score of c with x lowered to x-L, when x-L >= lo
            y_stop = x - L if x > L else 0
            for y in range(x - 1, y_stop - 1, -1):
                while j > 0 and c[j - 1] > y:
                    j -= 1
                    shift += binom[c[j] + j, j + 2]
                s = scores[base + shift + binom[y + j, j + 1]]
                allowed = (digits[x - y - 1] & 2) if y > 0 else (dx & 1)
                if allowed and s < best:
                    best = s
                if y == x - L and y >= lo:
                    at_l = s
            if y_stop > 0 and not use_low and dx & 1:
                # the whole heap may go (a tail digit with bit 1 but not bit 2)
                while j > 0 and c[j - 1] > 0:
                    j -= 1
                    shift += binom[c[j] + j, j + 2]
                s = scores[base + shift]
                if s < best:
                    best = s
            if use_low:
                q_col[nq] = e
                q_val[nq] = at_l if at_l < tail_min else tail_min
                nq += 1
        is_end = False
        if ei < n_end and end_ranks[ei] == r:
            is_end = True
            ei += 1
        if is_end or best == empty:
            score = terminal
        elif best < half:
            score = neg - best - 1
        else:
            score = neg - best + 1
        scores[r] = score
        for d in range(nq):
            col = q_col[d]
            ring[ring_off[col] + (r & ring_mask[col])] = q_val[d]
        # colex successor: the first i with c[i] < c[i+1] (or the last) goes up, lower ones reset
        if r + 1 < n:
            i = 0
            while i < K - 1 and c[i] == c[i + 1]:
                i += 1
            c[i] += 1
            for u in range(i):
                c[u] = 0


@njit(cache=True, nogil=True)
def solve_table_any_take(
    max_heap: int,
    max_piles: int,
    tail: int,
    misere: bool,
    end_ranks: NDArray[np.int64],
    binom: NDArray[np.int64],
    scores: NDArray[np.unsignedinteger],
    ring: NDArray[np.unsignedinteger],
    ring_off: NDArray[np.int64],
    ring_mask: NDArray[np.int64],
    half: int,
) -> None:
    """:func:`solve_table` for rules with no explicit digit and a tail digit with bit 2: Nim
    (tail 3: take any amount) and tail 2 (take any amount but not a whole heap).

    Then ``Q(c, x)`` (module docstring) is the least score over ``v`` in ``lo .. x`` and the best
    move from ``x`` is ``Q(c with x lowered to x - 1, x - 1)``. Positions come in runs that share
    ``c[1:]`` while ``c[0]`` goes ``0 .. c[1]`` (consecutive ranks): the heaps of ``c[1:]`` are
    grouped into blocks of equal values once per run, ``c[0]``'s own minimum is a running minimum
    along the run, and each position costs one look-up and one store per distinct heap value.

    O(N * K) time, O(K) extra memory; column 0 of the ring is not used.
    """
    K = max_piles
    n = scores.shape[0]
    lo = 0 if tail & 1 else 1
    neg = 2 * half
    empty = neg + 1
    terminal = neg if misere else 0
    n_end = end_ranks.shape[0]
    ei = 0
    next_end = end_ranks[0] if n_end > 0 else -1
    up = np.zeros(K, np.int64)  # c[1:], sorted; up[K - 1] is a sentinel
    read_at = np.zeros(K, np.int64)  # per block of c[1:]: ring base of the first copy's column
    read_back = np.zeros(K, np.int64)  # ... how many ranks back to read
    read_mask = np.zeros(K, np.int64)
    readable = np.zeros(K, np.bool_)
    write_at = np.zeros(K, np.int64)  # ... ring base of the last copy's column
    write_mask = np.zeros(K, np.int64)
    found = np.zeros(K, np.int64)
    r = 0
    while r < n:
        # blocks of equal values in c[1:] (indices 1 .. K-1 of c)
        nb = 0
        t = 1
        while t < K:
            x = up[t - 1]
            f = t
            while t + 1 < K and up[t] == x:
                t += 1
            readable[nb] = x > lo
            if x > lo:
                read_at[nb] = ring_off[f]
                read_back[nb] = binom[x - 1 + f, f]
                read_mask[nb] = ring_mask[f]
            write_at[nb] = ring_off[t]
            write_mask[nb] = ring_mask[t]
            nb += 1
            t += 1
        top = up[0] if K > 1 else max_heap  # c[0] runs 0 .. c[1]
        run_min = empty  # least score of this run's positions with c[0] in lo .. (current - 1)
        for v in range(top + 1):
            best = run_min
            # at the run's last step c[0] == c[1]: the first block joins c[0], whose running
            # minimum already covers it
            first = 1 if v == top and nb > 0 else 0
            if first == 1:
                found[0] = run_min
            for b in range(first, nb):
                a = empty
                if readable[b]:
                    a = ring[read_at[b] + ((r - read_back[b]) & read_mask[b])]
                found[b] = a
                if a < best:
                    best = a
            if r == next_end:
                score = terminal
                ei += 1
                next_end = end_ranks[ei] if ei < n_end else -1
            elif best == empty:
                score = terminal
            elif best < half:
                score = neg - best - 1
            else:
                score = neg - best + 1
            scores[r] = score
            for b in range(nb):
                a = found[b]
                ring[write_at[b] + (r & write_mask[b])] = a if a < score else score
            if v >= lo and score < run_min:
                run_min = score
            r += 1
        # colex successor of c[1:] (values up to max_heap)
        if r < n:
            i = 0
            while i < K - 2 and up[i] == up[i + 1]:
                i += 1
            up[i] += 1
            for u in range(i):
                up[u] = 0
