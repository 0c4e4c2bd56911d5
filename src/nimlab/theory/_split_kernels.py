"""Numba kernels for :mod:`nimlab.theory.splitsearch` (private: the public API checks arguments).

Keys. A canonical position is a partition ``l[0] >= l[1] >= ...`` of its total ``t`` (its heaps,
largest first) into *live* parts (heap sizes that have a move, or every size when the solver keeps
heaps without a move). Its key is its index among all such partitions, ordered by total and then
lexicographically, largest heap first::

    key = offs[t] + sum_j ptab[t_j, l[j] - 1]      (t_j = t - l[0] - ... - l[j-1])

where ``offs[t]`` counts the partitions of the totals below ``t`` and ``ptab[n, m]`` the
partitions of ``n`` into live parts of at most ``m`` (those of ``t_j`` whose largest part is
below ``l[j]`` come first). Two positions never share a key, keys are below 2^53 for totals up to
``MAX_TOTAL``, and positions that differ only in small heaps get nearby keys.

Table. Keys are split into a page number (``key >> PAGE_BITS``) and an offset in the page. A page
is one row of ``pages`` (``uint16``: 0 = not solved, else ``code + 1`` with ``code = 2 *
remoteness + (1 if N else 0)``, ExactSolver's encoding). A small open-addressing directory
(``int64``, length a power of two, linear probing, Fibonacci hashing) maps page numbers to rows:
slot 0 is empty, else ``(page + 1) << INDEX_BITS | row``. Because a search visits positions with
nearby keys together, most look-ups hit a page already in cache, and a stored position costs
about ``2 / occupancy`` bytes. Only solved positions are stored, so the table is valid whenever a
search stops.

Search. A depth-first search with an explicit stack: frame ``d`` holds a position (``rows[d]``,
ascending) and where its move generator stands (heap index, take, split), and the best and worst
remoteness seen among its children so far. Every move lowers ``2 * total - heaps`` by at least
one (a take removes an object and adds at most one heap; a split without taking, as in Lasker's
Nim or Grundy's game, adds one heap), so the positions on the stack strictly descend: a position
is never met again while it is expanded, the stack is at most ``total + 1`` deep (``2 * total +
1`` when splits without taking exist), and a child that is not in the table is simply pushed.
A finished frame stores its value and is folded into its parent. The search stops (resumable:
its state stays in the arrays) after about ``step_limit`` moves (it finishes the moves of the
heap at hand, at most O(total^2) more), when the directory or the pages are full, or before it
would store more than ``store_limit`` positions.

The child's key is computed without building it: for the heap being moved (ascending index ``i``)
the heaps above it contribute a sum that depends only on the child's total and is computed once per
take, and only the heaps below it are merged with the parts left by the move.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from nimlab.theory._jit import njit

__all__ = [
    "CHUNK",
    "DONE",
    "FRAME_FIELDS",
    "GROW_DIRECTORY",
    "GROW_PAGES",
    "INDEX_BITS",
    "LIMIT",
    "PAGE_BITS",
    "lookup",
    "push_root",
    "rehash_directory",
    "search",
]

PAGE_BITS = 10
"""Keys per page: ``2**PAGE_BITS`` (2 KiB of ``uint16``)."""
INDEX_BITS = 20
"""Bits of a directory slot that hold the page's row: at most ``2**INDEX_BITS`` pages (2 GiB);
page numbers (below 2^43 for keys below 2^53) fill the other bits."""

DONE = 0
"""The stack is empty: every position pushed is solved and stored."""
CHUNK = 1
"""``step_limit`` moves were generated; call again to continue."""
GROW_PAGES = 2
"""Every row of ``pages`` is in use; give it more rows and call again."""
GROW_DIRECTORY = 3
"""The directory is at its load limit; rehash it into a larger one and call again."""
LIMIT = 4
"""Storing one more position would pass ``store_limit``."""

FRAME_FIELDS = 9
"""Columns of ``frames``."""
# frame fields
_LEN, _I, _K, _A, _BEST, _WORST, _FLAG, _KEY, _TOTAL = 0, 1, 2, 3, 4, 5, 6, 7, 8

_GOLDEN = 0x9E3779B97F4A7C15
_NONE = 1 << 30  # "no P-child seen yet" in a frame's best remoteness
_PAGE_MASK = (1 << PAGE_BITS) - 1
_INDEX_MASK = (1 << INDEX_BITS) - 1


@njit(cache=True, nogil=True)
def _home(tagged: int, shift: int) -> int:
    h = np.uint64(tagged) * np.uint64(_GOLDEN)
    return int(np.int64(h >> np.uint64(shift)))


@njit(cache=True, nogil=True)
def _page_row(directory: NDArray[np.int64], shift: int, page: int) -> int:
    """The row of ``page`` in the pages, or -1 when it has none. O(1) expected."""
    mask = directory.shape[0] - 1
    tagged = page + 1
    s = _home(tagged, shift)
    while True:
        e = directory[s]
        if e == 0:
            return -1
        if (e >> INDEX_BITS) == tagged:
            return int(e & _INDEX_MASK)
        s = (s + 1) & mask


@njit(cache=True, nogil=True)
def _add_page(directory: NDArray[np.int64], shift: int, page: int, row: int) -> None:
    mask = directory.shape[0] - 1
    tagged = page + 1
    s = _home(tagged, shift)
    while directory[s] != 0:
        s = (s + 1) & mask
    directory[s] = (tagged << INDEX_BITS) | row


@njit(cache=True, nogil=True)
def rehash_directory(old: NDArray[np.int64], new: NDArray[np.int64], new_shift: int) -> None:
    """Insert every entry of directory ``old`` into the empty directory ``new``."""
    for s in range(old.shape[0]):
        e = old[s]
        if e != 0:
            _add_page(new, new_shift, (e >> INDEX_BITS) - 1, e & _INDEX_MASK)


@njit(cache=True, nogil=True)
def lookup(pages: NDArray[np.uint16], directory: NDArray[np.int64], shift: int, key: int) -> int:
    """The code stored for ``key``, or -1 when it is not stored. O(1) expected."""
    r = _page_row(directory, shift, key >> PAGE_BITS)
    if r < 0:
        return -1
    return int(np.int64(pages[r, key & _PAGE_MASK])) - 1


@njit(cache=True, nogil=True)
def _is_end(ends: NDArray[np.int64], key: int) -> bool:
    if ends.shape[0] == 0:
        return False
    i = np.searchsorted(ends, key)
    return bool(i < ends.shape[0] and ends[i] == key)


@njit(cache=True, nogil=True)
def _init_frame(
    frames: NDArray[np.int64], d: int, n: int, key: int, total: int, end: bool, k0: int
) -> None:
    frames[d, _LEN] = n
    frames[d, _I] = n if end else 0  # an extra end position has no move to try
    frames[d, _K] = k0
    frames[d, _A] = 0
    frames[d, _BEST] = _NONE
    frames[d, _WORST] = 0
    frames[d, _FLAG] = 2 if end else 0  # 1 once some move was found
    frames[d, _KEY] = key
    frames[d, _TOTAL] = total


@njit(cache=True, nogil=True)
def push_root(
    row: NDArray[np.int64],
    n: int,
    total: int,
    key: int,
    ends: NDArray[np.int64],
    state: NDArray[np.int64],
    rows: NDArray[np.int64],
    frames: NDArray[np.int64],
    k0: int,
) -> None:
    """Start a search at ``row[:n]`` (ascending, total ``total``, key ``key``) on an empty
    stack (whatever was on it is dropped); ``k0`` is the least take of a move (0 when a move
    may split a heap without taking, else 1)."""
    for j in range(n):
        rows[0, j] = row[j]
    # np.int64(0), not 0: a literal argument would make Numba compile a second copy of a kernel
    _init_frame(frames, np.int64(0), n, key, total, _is_end(ends, key), k0)  # type: ignore[arg-type]
    state[0] = 1


@njit(cache=True, nogil=True)
def _child_key(
    row: NDArray[np.int64],
    n: int,
    skip: int,
    p1: int,
    p2: int,
    nparts: int,
    total: int,
    ptab: NDArray[np.int64],
    offs: NDArray[np.int64],
) -> int:
    """The key of ``row[:n]`` without heap ``skip`` and with the parts ``p1 >= p2`` (the
    first ``nparts`` of them) added; ``total`` is that position's total. O(n)."""
    key = offs[total]
    rem = total
    j = n - 1
    q = 0
    while rem > 0:
        if j == skip:
            j -= 1
            continue
        x = row[j] if j >= 0 else 0
        if q < nparts:
            y = p1 if q == 0 else p2
            if y >= x:
                lam = y
                q += 1
            else:
                lam = x
                j -= 1
        else:
            lam = x
            j -= 1
        key += ptab[rem, lam - 1]
        rem -= lam
    return int(key)


@njit(cache=True, nogil=True)
def search(
    pages: NDArray[np.uint16],
    directory: NDArray[np.int64],
    state: NDArray[np.int64],
    rows: NDArray[np.int64],
    frames: NDArray[np.int64],
    scratch: NDArray[np.int64],
    dig: NDArray[np.int64],
    max_take: int,
    dead: NDArray[np.bool_],
    strip: bool,
    ends: NDArray[np.int64],
    terminal: int,
    ptab: NDArray[np.int64],
    offs: NDArray[np.int64],
    step_limit: int,
    store_limit: int,
    k0: int,
    unequal: int,
) -> int:
    """Run the depth-first search (module docstring) from the stack in ``rows``/``frames``.

    ``state`` is ``[depth, stored, pages used, directory entries, directory load limit,
    directory shift]`` (the shift is 64 - log2 of the directory's length). ``dig[k]`` is the
    octal digit for taking ``k`` (for every ``k <= max_take`` that can occur); ``dead[h]`` says a
    heap of ``h`` has no move, and with ``strip`` such heaps are left out of every position (only
    sound without extra end positions; ``ptab``/``offs`` must then count partitions into live
    parts only); ``ends`` holds the sorted keys of the extra end positions; ``terminal`` is the
    code of a terminal position (0 in normal play, 1 in misère play). ``k0`` is the least take
    of a move: 0 when ``dig[0]`` lets a move split a heap without taking anything (Lasker's
    Nim, Grundy's game, ``4.07``), else 1; with ``unequal`` (1) no split leaves two equal heaps.
    ``rows`` needs ``depth`` rows of ``total`` columns and ``frames`` ``depth`` rows of
    :data:`FRAME_FIELDS`, where ``depth`` is ``total + 1`` (``2 * total + 1`` when ``k0`` is 0),
    and ``scratch`` 3 rows of ``total + 1``.

    Returns :data:`DONE`, :data:`CHUNK`, :data:`GROW_PAGES`, :data:`GROW_DIRECTORY` or
    :data:`LIMIT`. O(R * B * K) for R positions stored, B moves per position and K heaps per
    position; O(1) memory besides the arguments.
    """
    depth = state[0]
    count = state[1]
    used = state[2]
    dir_count = state[3]
    dir_limit = state[4]
    shift = state[5]
    if depth == 0:
        return DONE
    n_pages = pages.shape[0]
    pre = scratch[0]  # pre[j]: sum of the j largest heaps below heap i
    fsum = scratch[1]  # fsum[j]: what those j heaps owe to a split child's key
    gsum = scratch[2]  # gsum[j]: what the heaps below them owe, after both parts
    last_page = -1
    last_row = -1
    steps = 0
    status = DONE
    # the top frame, in locals
    d = depth - 1
    row = rows[d]
    n = frames[d, _LEN]
    i = frames[d, _I]
    k = frames[d, _K]
    a = frames[d, _A]
    best = frames[d, _BEST]
    worst = frames[d, _WORST]
    flag = frames[d, _FLAG]
    total = frames[d, _TOTAL]
    while True:
        if i >= n:
            # every move has been tried: store the value, pop, fold into the parent
            key = frames[d, _KEY]
            page = key >> PAGE_BITS
            r = _page_row(directory, shift, page)
            if r < 0:
                if used >= n_pages:
                    status = GROW_PAGES
                    break
                if dir_count >= dir_limit:
                    status = GROW_DIRECTORY
                    break
            if count >= store_limit:
                status = LIMIT
                break
            if r < 0:
                r = used
                used += 1
                _add_page(directory, shift, page, r)
                dir_count += 1
            if flag != 1:
                code = terminal
            elif best < _NONE:
                code = 2 * (best + 1) + 1
            else:
                code = 2 * (worst + 1)
            pages[r, key & _PAGE_MASK] = code + 1
            count += 1
            depth -= 1
            if depth == 0:
                break
            d = depth - 1
            row = rows[d]
            n = frames[d, _LEN]
            i = frames[d, _I]
            k = frames[d, _K]
            a = frames[d, _A]
            best = frames[d, _BEST]
            worst = frames[d, _WORST]
            flag = frames[d, _FLAG]
            total = frames[d, _TOTAL]
            rr = code >> 1
            isn = code & 1
            worst = max(worst, rr * isn)
            best = min(best, rr + isn * _NONE)
            continue
        if steps >= step_limit:
            status = CHUNK
            break
        # the moves of heap i (the first of its copies), from take k and split a on
        h = row[i]
        top = h if h < max_take else max_take
        upper = 0
        for j in range(i + 1, n):
            upper += row[j]
        pre[0] = 0
        for j in range(i):
            pre[j + 1] = pre[j] + row[i - 1 - j]
        below = pre[i]
        gsum[i] = 0
        for j in range(i - 1, -1, -1):
            gsum[j] = gsum[j + 1] + ptab[below - pre[j], row[i - 1 - j] - 1]
        push = False
        p1 = 0
        p2 = 0
        nparts = 0
        ctotal = 0
        key = 0
        while k <= top:
            dk = dig[k]
            rest = h - k
            ctotal = total - k
            if dk == 0 or (rest < 2 and a > 0) or (rest == 0 and (dk & 1) == 0):
                k += 1
                a = 0
                continue
            # what the heaps above i owe to the key of a child of total ctotal
            base = offs[ctotal]
            rem = ctotal
            for j in range(n - 1, i, -1):
                lam = row[j]
                base += ptab[rem, lam - 1]
                rem -= lam
            if a == 0:
                a = 1
                if (rest == 0 and dk & 1) or (rest > 0 and dk & 2):
                    flag = 1
                    steps += 1
                    p1 = rest
                    nparts = 1 if rest > 0 else 0
                    if nparts == 1 and strip and dead[p1]:
                        ctotal -= p1
                        nparts = 0
                    zero = np.int64(0)  # not 0: see push_root
                    key = _child_key(row, n, i, p1, zero, nparts, ctotal, ptab, offs)  # type: ignore[arg-type]
                    page = key >> PAGE_BITS
                    if page != last_page:
                        r = _page_row(directory, shift, page)
                        if r >= 0:
                            last_page = page
                            last_row = r
                    else:
                        r = last_row
                    code = -1 if r < 0 else int(np.int64(pages[r, key & _PAGE_MASK])) - 1
                    if code < 0:
                        push = True
                        break
                    rr = code >> 1
                    isn = code & 1
                    worst = max(worst, rr * isn)
                    best = min(best, rr + isn * _NONE)
            amax = (rest - unequal) >> 1
            if (dk & 4) != 0 and a <= amax:
                flag = 1
                r0 = below + rest
                fsum[0] = 0
                for j in range(i):
                    fsum[j + 1] = fsum[j] + ptab[r0 - pre[j], row[i - 1 - j] - 1]
                xs = 0  # heaps below i above p1 (p1 only falls as a rises)
                ys = i  # heaps below i above p2 (p2 only rises)
                while a <= amax:
                    p1 = rest - a
                    p2 = a
                    a += 1
                    steps += 1
                    ctotal = total - k
                    if strip and (dead[p1] or dead[p2]):
                        nparts = 2
                        if dead[p2]:
                            ctotal -= p2
                            nparts = 1
                        if dead[p1]:
                            ctotal -= p1
                            p1 = p2
                            nparts -= 1
                        key = _child_key(row, n, i, p1, p2, nparts, ctotal, ptab, offs)
                    else:
                        nparts = 2
                        while xs < i and row[i - 1 - xs] > p1:
                            xs += 1
                        while ys > 0 and row[i - ys] <= p2:
                            ys -= 1
                        key = base + fsum[xs] + ptab[r0 - pre[xs], p1 - 1] + gsum[ys]
                        rest1 = r0 - p1
                        for j in range(xs, ys):
                            key += ptab[rest1 - pre[j], row[i - 1 - j] - 1]
                        key += ptab[rest1 - pre[ys], p2 - 1]
                    page = key >> PAGE_BITS
                    if page != last_page:
                        r = _page_row(directory, shift, page)
                        if r >= 0:
                            last_page = page
                            last_row = r
                    else:
                        r = last_row
                    code = -1 if r < 0 else int(np.int64(pages[r, key & _PAGE_MASK])) - 1
                    if code < 0:
                        push = True
                        break
                    rr = code >> 1
                    isn = code & 1
                    worst = max(worst, rr * isn)
                    best = min(best, rr + isn * _NONE)
                if push:
                    break
            k += 1
            a = 0
        if not push:
            # heap i is done: on to the next distinct heap
            i += 1
            while i < n and row[i] == h:
                i += 1
            k = k0
            a = 0
            continue
        # the child is not solved yet: save this frame (k, a point to the next move), push it
        frames[d, _I] = i
        frames[d, _K] = k
        frames[d, _A] = a
        frames[d, _BEST] = best
        frames[d, _WORST] = worst
        frames[d, _FLAG] = flag
        m = 0
        q = nparts  # parts left to place, smallest first: p2 (when two), then p1
        for j in range(n):
            if j == i:
                continue
            x = row[j]
            while q > 0:
                y = p2 if q == 2 else p1
                if y <= x:
                    rows[depth, m] = y
                    m += 1
                    q -= 1
                else:
                    break
            rows[depth, m] = x
            m += 1
        while q > 0:
            rows[depth, m] = p2 if q == 2 else p1
            m += 1
            q -= 1
        end = _is_end(ends, key)
        _init_frame(frames, depth, m, key, ctotal, end, k0)
        depth += 1
        d = depth - 1
        row = rows[d]
        n = m
        i = m if end else 0
        k = k0
        a = 0
        best = _NONE
        worst = 0
        flag = 2 if end else 0
        total = ctotal
    if depth > 0:
        frames[d, _I] = i
        frames[d, _K] = k
        frames[d, _A] = a
        frames[d, _BEST] = best
        frames[d, _WORST] = worst
        frames[d, _FLAG] = flag
    state[0] = depth
    state[1] = count
    state[2] = used
    state[3] = dir_count
    return status
