"""Numba kernel for :mod:`nimlab.theory.paranoid` (private: the public API checks arguments).

Positions are ranked exactly as in :mod:`nimlab.theory._retrograde_kernels`: sorted vectors
``c[0] <= ... <= c[K-1]`` over ``0 .. M`` (zeros pad the front), ``rank(c) = sum_i C(c[i] + i,
i + 1)``. A move of a non-splitting rule lowers one heap, so every child has a smaller rank and one
pass in increasing rank order solves every ``(position, player to move)`` state.

Values. The table holds, for rank ``r`` and the index ``t`` of the player to move, one signed
number ``u = tab[r * n + t]`` for the hero:

- hero wins, the round ends in ``m`` moves:  ``u = H - m``  (``0 < m < H``)
- hero loses, the round ends in ``m`` moves: ``u = m - H``
- ``u = 0``: the position is terminal (no state).

The hero prefers larger ``u`` (a fast win, then a slow win, then a slow loss, then a fast loss),
every other player smaller ``u``, so the paranoid value of a state is the maximum (hero to move)
or minimum (anyone else) over its children of the child's value one move later: ``u - 1`` for
``u > 0`` and ``u + 1`` for ``u < 0``. A move into a terminal position is worth ``term_u[t]``
(``H - 1`` when it makes the hero win, ``1 - H`` otherwise).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from nimlab.theory._jit import njit

__all__ = ["paranoid_pass"]


@njit(cache=True, nogil=True)
def paranoid_pass(
    r0: int,
    r1: int,
    c: NDArray[np.int64],
    ends_at: NDArray[np.int64],
    digits: NDArray[np.int64],
    tail: int,
    end_ranks: NDArray[np.int64],
    binom: NDArray[np.int64],
    n: int,
    hero: int,
    term_u: NDArray[np.int64],
    tab: NDArray[np.signedinteger],
) -> None:
    """Fill ``tab[r * n + t]`` for every rank ``r0 <= r < r1`` and every ``t < n`` (module
    docstring); every rank below ``r0`` must be filled already.

    ``c`` is the sorted vector of rank ``r0`` (length ``K``), advanced in place to rank ``r1``;
    ``ends_at[0]`` is the index of the first entry of the sorted ``end_ranks`` that is not below
    ``r0``, advanced in place. ``digits[k - 1]`` is the octal digit for taking ``k`` (none with
    bit 4) and ``tail`` the digit for every larger ``k``; ``binom[a, b] = C(a, b)`` for
    ``a <= M + K``, ``b <= K + 1``. ``hero`` is the hero's index among the ``n`` players (``-1``:
    the hero is not playing, so it never moves and loses).

    O((r1 - r0) * B * n) time for ``B`` moves per position (``K * M`` for Nim); O(n) extra memory.
    """
    K = c.shape[0]
    L = digits.shape[0]
    n_end = end_ranks.shape[0]
    low = np.iinfo(np.int64).min
    high = np.iinfo(np.int64).max
    best = np.empty(n, np.int64)
    for r in range(r0, r1):
        while ends_at[0] < n_end and end_ranks[ends_at[0]] < r:
            ends_at[0] += 1
        terminal = ends_at[0] < n_end and end_ranks[ends_at[0]] == r
        if not terminal:
            for t in range(n):
                best[t] = low if t == hero else high
            any_child = False
            s = 0
            while s < K:
                x = c[s]
                f = s
                e = s
                while e + 1 < K and c[e + 1] == x:
                    e += 1
                s = e + 1
                if x == 0:
                    continue
                # Lower the first copy of x (index f) to y: the heaps at j .. f-1 above y shift
                # up one place and y lands at j (see _retrograde_kernels).
                base = r - binom[x + f, f + 1]
                shift = 0
                j = f
                for y in range(x - 1, -1, -1):
                    k = x - y
                    if k > L and tail == 0:
                        break
                    d = digits[k - 1] if k <= L else tail
                    allowed = (d & 2) if y > 0 else (d & 1)
                    while j > 0 and c[j - 1] > y:
                        j -= 1
                        shift += binom[c[j] + j, j + 2]
                    if not allowed:
                        continue
                    cr = base + shift + binom[y + j, j + 1]
                    any_child = True
                    child_terminal = tab[cr * n] == 0
                    for t in range(n):
                        if child_terminal:
                            v = term_u[t]
                        else:
                            w = np.int64(tab[cr * n + (t + 1) % n])
                            v = w - 1 if w > 0 else w + 1
                        if t == hero:
                            if v > best[t]:
                                best[t] = v
                        elif v < best[t]:
                            best[t] = v
            if any_child:
                for t in range(n):
                    tab[r * n + t] = best[t]
            else:
                terminal = True
        if terminal:
            for t in range(n):
                tab[r * n + t] = 0
        # colex successor: the first i with c[i] < c[i+1] (or the last) goes up, lower ones reset
        i = 0
        while i < K - 1 and c[i] == c[i + 1]:
            i += 1
        c[i] += 1
        for q in range(i):
            c[q] = 0
