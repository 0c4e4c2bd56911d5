"""Numba kernels for :mod:`nimlab.theory.retrograde` (private; the public API checks arguments).

Positions are sorted vectors ``c[0] <= ... <= c[K-1]`` over ``0 .. M`` (zeros pad the front),
ranked in colex order of the combination ``a[i] = c[i] + i``::

    rank(c) = sum_i C(c[i] + i, i + 1)

A move lowers one heap, so every child is componentwise below its parent after sorting and has a
smaller rank: one pass in increasing rank order solves the whole table.

Scores. Each position is stored as one unsigned integer *score*, ordered so that the mover's best
child is the one with the smallest score:

- P-position with remoteness r: ``r``                  (``0 <= r < half``)
- N-position with remoteness r: ``neg - r``             (``neg = 2 * half``)
- ``empty = neg + 1``: "no child at all" (only in aggregates).

A parent whose best child has score ``s`` is N with remoteness ``s + 1`` when ``s < half`` and P
with remoteness ``neg - s + 1`` otherwise (and terminal when ``s == empty``).

Running minima. When the tail digit has bit 2, a heap ``x`` may be lowered to every ``v`` in
``lo .. x - L - 1`` (``L`` explicit digits; ``lo`` is 0 when the tail digit also has bit 1, else
1). For each position ``c`` and each distinct heap value ``x`` of ``c`` (stored at the index of its
last copy, zeros included) ``low[r, i]`` holds the least score among the positions with that heap
lowered to some ``v`` in ``lo .. x`` (``v = x`` is ``c`` itself). It is the least of ``c``'s score
and ``low`` of the position with ``x`` lowered to ``x - 1``, so a whole run of "take any amount"
moves costs one look-up and each position costs O(K + L) instead of O(sum of heaps).
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numpy.typing import NDArray

__all__ = ["solve_table"]


@njit(cache=True)  # type: ignore[misc]
def solve_table(
    max_heap: int,
    max_piles: int,
    digits: NDArray[np.int64],
    tail: int,
    misere: bool,
    end_ranks: NDArray[np.int64],
    binom: NDArray[np.int64],
    scores: NDArray[np.unsignedinteger],  # type: ignore[type-arg]
    low: NDArray[np.unsignedinteger],  # type: ignore[type-arg]
    half: int,
) -> None:
    """Fill ``scores[r]`` for every rank ``r`` of the table (see the module docstring).

    ``digits[k - 1]`` is the digit for taking ``k`` (no digit may have bit 4), ``tail`` the digit
    for every larger ``k``; ``end_ranks`` the sorted ranks of the extra end positions; ``binom``
    a table with ``binom[n, k] = C(n, k)`` for ``n <= M + K``, ``k <= K + 1``; ``low`` an array
    of shape ``(len(scores), K)`` when ``tail & 2``, else any 2-D array (unused); ``half`` is
    ``2**15 - 1`` for ``uint16`` scores, ``2**31 - 1`` for ``uint32``.

    O(N * (K + L)) time for N = C(M + K, K) positions and L explicit digits.
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
    last = np.zeros(K, np.int64)  # index of the last copy of each distinct value
    run = np.zeros(K, np.int64)  # least score below that value (see the module docstring)
    for r in range(n):
        best = empty
        nd = 0
        t = 0
        while t < K:
            x = c[t]
            f = t
            e = t
            while e + 1 < K and c[e + 1] == x:
                e += 1
            t = e + 1
            a = empty
            if use_low:
                if x - 1 >= lo:
                    a = low[r - binom[x - 1 + f, f], f]
                last[nd] = e
                run[nd] = a
                nd += 1
            if x == 0:
                continue
            dx = digits[x - 1] if x <= L else tail
            if L == 0:
                if a < best:
                    best = a
                if not use_low and dx & 1:
                    # only a heap of exactly x = k can go: rank of c with c[f] -> 0
                    rc = r - binom[x + f, f + 1]
                    for u in range(f):
                        if c[u] > 0:
                            rc += binom[c[u] + u, u + 2]
                    s = scores[rc]
                    if s < best:
                        best = s
                continue
            # Lower the heap at index f (first copy of x) to y = x-1, x-2, ...: the heaps at
            # indices j .. f-1 (those > y) shift up one place and y lands at index j.
            base = r - binom[x + f, f + 1]
            shift = 0
            j = f
            ylo = x - L
            if ylo < 1:
                ylo = 1
            for y in range(x - 1, ylo - 1, -1):
                while j > 0 and c[j - 1] > y:
                    j -= 1
                    shift += binom[c[j] + j, j + 2]
                if digits[x - y - 1] & 2:
                    s = scores[base + shift + binom[y + j, j + 1]]
                    if s < best:
                        best = s
            y = x - L - 1
            if use_low and y >= lo:
                # every v in lo .. x-L-1 at once
                while j > 0 and c[j - 1] > y:
                    j -= 1
                    shift += binom[c[j] + j, j + 2]
                s = low[base + shift + binom[y + j, j + 1], j]
                if s < best:
                    best = s
            elif dx & 1:
                while j > 0 and c[j - 1] > 0:
                    j -= 1
                    shift += binom[c[j] + j, j + 2]
                s = scores[base + shift]
                if s < best:
                    best = s
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
        for d in range(nd):
            low[r, last[d]] = min(score, run[d])
        # colex successor: the first i with c[i] < c[i+1] (or the last) goes up, lower ones reset
        if r + 1 < n:
            i = 0
            while i < K - 1 and c[i] == c[i + 1]:
                i += 1
            c[i] += 1
            for u in range(i):
                c[u] = 0
