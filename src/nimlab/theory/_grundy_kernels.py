"""Numba kernels behind :mod:`nimlab.theory.grundy` (private; the public module is typed).

Conventions shared by every kernel:

- ``g`` holds the Grundy values G(0), G(1), ...; ``g[0] = 0`` is set by the caller and kernels
  start at ``n >= 1``.
- ``seen`` is an int64 *stamp* array: value ``v`` is an option of heap ``n`` exactly when
  ``seen[v] == n``, so it never needs clearing (the caller fills it with -1 once). Its length
  ``size`` is a power of two and every stored value is ``< size // 2``, so XORs of values stay
  ``< size // 2`` and every mex search stays inside the array. A kernel that stores a value
  ``>= size // 2`` returns at once with ``GROW`` so the caller can enlarge the arrays.
- Kernels return ``(next_n, ..., status)``; ``status`` is ``DONE``, ``GROW`` or ``RARE_FULL``.
"""

from __future__ import annotations

import numpy as np

from nimlab.theory._jit import lowest_bit, njit

DONE = 0
GROW = 1
RARE_FULL = 2
WIDE = 3
"""(:func:`sparse_extend_narrow`) heap ``next_n`` needs a value of at least ``width``."""
WRONG = 4
"""(:func:`sparse_extend_narrow`, checking) heap ``next_n - 1`` was guessed wrong."""
COMPUTE, GUESS, CHECK = 0, 1, 2
"""What :func:`sparse_extend_narrow` does with each heap."""
WORD_MARK0 = 64
""":func:`sparse_extend_narrow` looks for the pending values among this many pairs from each end
at first (then twice as many each time up to ``block``): 0.106's checks 10% faster than 32."""
LANES = 16
""":func:`sparse_extend_narrow` pairs the rare heaps of at least this size (less the smallest
splitting removal) for this many heaps at once."""
FEW = 4
"""The sparse kernel compares blocks of pairs with at most this many pending values at once."""
MARK0 = 32
MARK = 128
"""... and before, marks pairs from each end, MARK0 at first, then twice as many each time up
to this many."""
FIRST = 64
"""When at most ``FEW`` values are pending from the start, the first blocks of pairs compared
with them are this long, then twice as long from each end in turn up to ``block``."""


@njit(cache=True, nogil=True)
def plain_extend(  # type: ignore[no-untyped-def]
    g, start, stop, digits, tail, d0, seen, cum, cum_upto, unequal
):
    """Fill ``g[start:stop]`` by the plain method: mark every option, take the mex.

    ``digits[k - 1]`` is d_k for the finite part; ``tail`` (0 for finite codes) is the digit of
    every k > len(digits); ``d0`` (0 or 4) is the digit before the point: with bit 4 every split
    of the whole heap into two non-empty heaps is an option too. Bit 4 of any digit needs at
    least two objects left (the split loops are empty otherwise). Options of the tail that
    depend only on the *rest* r = n - k are accumulated once in ``cum`` (a flag per value) for
    all rests ``r <= cum_upto``; heap n needs the rests 1 .. n - len(digits) - 1, so the whole
    computation stays quadratic.

    With ``unequal`` (1) no split may leave two equal heaps (Grundy's game is ``4.0`` so).

    Cost per heap: O(sum over splitting digits k (k = 0 included) of (n - k) / 2) -- O(n * t)
    for a finite code with t digits. Returns ``(next_n, cum_upto, status)``.
    """
    ndig = digits.shape[0]
    half = seen.shape[0] // 2
    for n in range(start, stop):
        if d0 & 4:
            for a in range(1, (n - unequal) // 2 + 1):
                seen[g[a] ^ g[n - a]] = n
        top = min(ndig, n)
        for k in range(1, top + 1):
            d = digits[k - 1]
            if d == 0:
                continue
            if k == n:
                if d & 1:
                    seen[0] = n
                continue
            rest = n - k
            if d & 2:
                seen[g[rest]] = n
            if d & 4:
                for a in range(1, (rest - unequal) // 2 + 1):
                    seen[g[a] ^ g[rest - a]] = n
        use_cum = tail != 0 and n > ndig
        if use_cum:
            if tail & 1:
                seen[0] = n
            while cum_upto < n - ndig - 1:
                cum_upto += 1
                r = cum_upto
                if tail & 2:
                    cum[g[r]] = 1
                if tail & 4:
                    for a in range(1, (r - unequal) // 2 + 1):
                        cum[g[a] ^ g[r - a]] = 1
        v = 0
        if use_cum:
            while seen[v] == n or cum[v] != 0:
                v += 1
        else:
            while seen[v] == n:
                v += 1
        g[n] = v
        if v >= half:
            return n + 1, cum_upto, GROW
    return stop, cum_upto, DONE


@njit(cache=True, nogil=True)
def parity_table(mask, size):  # type: ignore[no-untyped-def]
    """``table[v] = popcount(v & mask) & 1`` for ``0 <= v < size``."""
    table = np.zeros(size, np.uint8)
    for v in range(size):
        x = v & mask
        bit = 0
        while x:
            bit ^= 1
            x &= x - 1
        table[v] = bit
    return table


@njit(cache=True, nogil=True)
def collect_rare(g, n, partab, positional, k0, rare_pos, rare_val):  # type: ignore[no-untyped-def]
    """How many heaps 1 <= i < n are *rare*: ``partab[G(i)] == positional & ((i - k0) & 1)``;
    the first ``len(rare_pos)`` of them (ascending) and their values are written out."""
    count = 0
    room = rare_pos.shape[0]
    for i in range(1, n):
        if partab[g[i]] == (positional & ((i - k0) & 1)):
            if count < room:
                rare_pos[count] = i
                rare_val[count] = g[i]
            count += 1
    return count


@njit(cache=True, nogil=True)
def sparse_extend(  # type: ignore[no-untyped-def]
    g,
    start,
    stop,
    whole_k,
    leave_k,
    split_k,
    partab,
    positional,
    k0,
    rare_pos,
    rare_val,
    nrare,
    seen,
    unequal,
    block,
    far,
    far_base,
    far_lo,
    far_lag,
    far_hi,
    far_middle,
):
    """Fill ``g[start:stop]`` of a finite octal game by the rare/common ("sparse space") method.

    A heap i is *rare* when ``partab[G(i)] == phi(i)``, ``phi(i) = positional & (i - k0) & 1``
    (``partab`` is the parity of ``popcount(v & mask)``); the others are *common*. Every
    splitting digit k has the parity of ``k0`` when ``positional`` is 1. For a split of heap n
    into (a, b), ``parity(G(a) ^ G(b)) ^ phi(n)`` equals 1 only when exactly one of a, b is rare.
    So the options of heap n whose value v has ``partab[v] != phi(n)`` ("common at n") are all
    found by pairing each rare heap with its partner: O(R) per splitting digit, R = number of
    rare heaps (the rare heaps below ``n - kmax`` in one pass for every splitting removal, with
    no bound tests; the few larger ones removal by removal). The first common-at-n value c that
    is not an option bounds the mex; the rare-at-n values below c that are still unmarked are
    then looked for among all pairs, and the scan stops as soon as all of them are found (pairs
    from both ends of the heap inwards, ``MARK0`` from each end at first, then twice as many
    each time up to ``MARK``, marked without counting, then the list of values still pending is
    shortened to those still unmarked; a move-to-front list of small heaps that had found the
    last value, tried first, cost more than it saved: 0.36 and 0.56 12-15% more CPU). Once at
    most ``FEW`` values are pending -- the last ones take most of the pairs: for 0.6 the median
    pending value is found within about 150 pairs, the last one after about 2,000 -- the rest
    of the pairs is compared ``block`` at a time with all of them at once, without branches, so
    that the compiler turns it into vector instructions (several times fewer cycles per pair).
    Only when G(n) itself is rare does the scan run to the end (O(n)), which is rare by
    definition.

    ``rare_pos[:nrare]`` / ``rare_val[:nrare]`` are the rare heaps below ``start`` and their
    values; the kernel appends to them. With ``unequal`` (1) no split may leave two equal heaps
    (the pairs are otherwise the same: an equal split has both parts rare or both common).
    ``far[n - far_base, v]`` is 1 when :func:`sparse_far` found v as an option of heap n by
    pairing the rare heaps of indices ``far_lo .. far_hi - 1`` at least ``n - far_base +
    far_lag``: the kernel pairs only the others (without rows in ``far`` all of them; with rows,
    ``start .. stop`` must lie in them), and found the options of the ``far_middle`` splits
    nearest the middle of each splitting removal: the search starts that far below the
    middle.
    Returns ``(next_n, nrare, status)``; with ``RARE_FULL`` heap ``next_n`` is not
    computed yet (enlarge the rare arrays and call again).
    """
    half = seen.shape[0] // 2
    cap = rare_pos.shape[0]
    nsplit = split_k.shape[0]
    kmin = split_k[0]
    nwhole = whole_k.shape[0]
    nleave = leave_k.shape[0]
    kmax = split_k[nsplit - 1]
    pend = np.zeros(FEW, np.int64)
    plist = np.empty(half, np.int64)
    below = 0
    at = far_lo
    for n in range(start, stop):
        if nrare == cap:
            return n, nrare, RARE_FULL
        for i in range(nwhole):
            if whole_k[i] == n:
                seen[0] = n
        for i in range(nleave):
            k = leave_k[i]
            if k < n:
                seen[g[n - k]] = n
        phi = positional & ((n - k0) & 1)
        # every split with at least one rare part (some found by sparse_far beforehand)
        flo = far_lo  # this kernel pairs the rare heaps of index < flo and >= far_hi
        if far.shape[0] > 0:
            fr = n - far_base  # (no row view: a view per heap costs atomic reference counts)
            for v in range(half):
                if far[fr, v]:
                    seen[v] = n
            while at < far_hi and rare_pos[at] < fr + far_lag:
                at += 1
            flo = max(far_lo, at)
        # rare heaps below n - kmax pair with every splitting removal: one pass over them, no
        # bound tests (all but the few largest rare heaps); the rest removal by removal
        while below < nrare and rare_pos[below] < n - kmax:
            below += 1
        tail_lo = 0
        tail_hi = far_hi
        if unequal == 0:
            tail_lo = min(flo, below)
            tail_hi = max(far_hi, below)
            un = np.uint64(n)
            for part in range(2):
                i0 = 0 if part == 0 else far_hi
                i1 = tail_lo if part == 0 else tail_hi
                if nsplit == 1:
                    u0 = un - np.uint64(kmin)
                    for i in range(np.uint64(i0), np.uint64(i1)):
                        ub = u0 - np.uint64(rare_pos[i])
                        seen[np.uint64(rare_val[i]) ^ np.uint64(g[ub])] = n
                elif nsplit == 2:
                    u0 = un - np.uint64(kmin)
                    u1 = un - np.uint64(split_k[1])
                    for i in range(np.uint64(i0), np.uint64(i1)):
                        w = np.uint64(rare_val[i])
                        ur = np.uint64(rare_pos[i])
                        seen[w ^ np.uint64(g[u0 - ur])] = n
                        seen[w ^ np.uint64(g[u1 - ur])] = n
                else:
                    for i in range(np.uint64(i0), np.uint64(i1)):
                        w = np.uint64(rare_val[i])
                        ub = un - np.uint64(rare_pos[i])
                        for j in range(nsplit):
                            seen[w ^ np.uint64(g[ub - np.uint64(split_k[j])])] = n
        for j in range(nsplit):
            tot = n - split_k[j]
            if tot < 2:
                break
            for i in range(tail_lo, flo):
                r = rare_pos[i]
                if r >= tot:
                    break
                if unequal and 2 * r == tot:
                    continue
                seen[rare_val[i] ^ g[np.uint64(tot - r)]] = n
            for i in range(tail_hi, nrare):
                r = rare_pos[i]
                if r >= tot:
                    break
                if unequal and 2 * r == tot:
                    continue
                seen[rare_val[i] ^ g[np.uint64(tot - r)]] = n
        # the first unmarked common-at-n value bounds the mex
        v = 0
        pending = 0
        while True:
            if seen[v] != n:
                if partab[v] != phi:
                    break
                plist[pending] = v
                pending += 1
            v += 1
        c = v
        value = c
        nlist = pending
        if pending > 0:
            remaining = pending
            # the pairs (a, tot - a) from both ends of 1 .. (n - kmin) / 2 inwards; every XOR
            # met is a genuine option, so it may be marked freely
            # (marked without counting until at most FEW values are pending)
            lo = 1
            hi = (n - kmin) // 2 - far_middle
            mark = MARK0
            while lo <= hi and remaining > FEW:
                # mark ``mark`` pairs from each end (no counting: it vectorises), then count;
                # twice as many next time, up to MARK (few values pending are often found among
                # the first pairs, many take thousands)
                lo_end = min(lo + mark - 1, hi)
                hi_start = max(hi - mark + 1, lo_end + 1)
                mark = min(MARK, 2 * mark)
                for j in range(nsplit):
                    tot = n - split_k[j]
                    half_tot = (tot - unequal) // 2
                    ut = np.uint64(tot)
                    for ua in range(np.uint64(lo), np.uint64(min(lo_end, half_tot) + 1)):
                        seen[g[ua] ^ g[ut - ua]] = n
                    for ua in range(np.uint64(hi_start), np.uint64(min(hi, half_tot) + 1)):
                        seen[g[ua] ^ g[ut - ua]] = n
                lo = lo_end + 1
                hi = hi_start - 1
                # the values still pending (a shrinking list: no scan of all values below c)
                left = 0
                for i in range(nlist):
                    pv = plist[i]
                    plist[left] = pv
                    left += seen[pv] != n
                nlist = left
                remaining = left
            if remaining > 0 and lo <= hi:
                # at most FEW values pending (every unmarked value below c): the pairs lo .. hi
                # left are compared with all of them at once, ``block`` pairs at a time from
                # either end in turn (unsigned indices and no early exit: the compiler makes
                # vector instructions of it)
                np_ = 0
                for i in range(nlist):
                    pv = plist[i]
                    if seen[pv] != n:
                        pend[np_] = pv
                        np_ += 1
                from_lo = True
                # (short blocks first when few values were pending from the start: they are
                # often found among the first pairs)
                size = min(block, FIRST) if lo == 1 else block
                while lo <= hi and remaining > 0:
                    for i in range(np_, FEW):
                        pend[i] = pend[0]
                    p0 = np.uint16(pend[0])
                    p1 = np.uint16(pend[1])
                    p2 = np.uint16(pend[2])
                    p3 = np.uint16(pend[3])
                    if from_lo:
                        bottom = lo
                        upper = min(hi, lo + size - 1)
                        lo = upper + 1
                    else:
                        upper = hi
                        bottom = max(lo, hi - size + 1)
                        hi = bottom - 1
                        size = min(block, 2 * size)
                    from_lo = not from_lo
                    for j in range(nsplit):
                        tot = n - split_k[j]
                        top = min(upper, (tot - unequal) // 2)
                        if top < bottom:
                            break
                        # (the least XOR distance to each pending value, in 16 bits: the
                        # compiler compares 32 pairs per instruction)
                        m0 = m1 = m2 = m3 = np.uint16(0xFFFF)
                        ut = np.uint64(tot)
                        for ua in range(np.uint64(bottom), np.uint64(top + 1)):
                            y = g[ua] ^ g[ut - ua]
                            m0 = min(m0, np.uint16(y ^ p0))
                            m1 = min(m1, np.uint16(y ^ p1))
                            m2 = min(m2, np.uint16(y ^ p2))
                            m3 = min(m3, np.uint16(y ^ p3))
                        hit = int(m0 == 0) | int(m1 == 0) << 1
                        hit |= int(m2 == 0) << 2 | int(m3 == 0) << 3
                        if hit == 0:
                            continue
                        for i in range(FEW):
                            pv = pend[i]
                            if (hit >> i) & 1 and seen[pv] != n:
                                seen[pv] = n
                                remaining -= 1
                        if remaining == 0:
                            break
                        np_ = 0
                        for i in range(FEW):
                            if seen[pend[i]] != n:
                                pend[np_] = pend[i]
                                np_ += 1
                        for i in range(np_, FEW):
                            pend[i] = pend[0]
                        p0 = np.uint16(pend[0])
                        p1 = np.uint16(pend[1])
                        p2 = np.uint16(pend[2])
                        p3 = np.uint16(pend[3])
            if remaining > 0:
                v = 0
                while seen[v] == n:
                    v += 1
                value = v
        g[n] = value
        if partab[value] == phi:
            rare_pos[nrare] = n
            rare_val[nrare] = value
            nrare += 1
        if value >= half:
            return n + 1, nrare, GROW
    return stop, nrare, DONE


@njit(cache=True, nogil=True)
def sparse_extend_narrow(  # type: ignore[no-untyped-def]
    g,
    start,
    stop,
    whole_k,
    leave_k,
    split_k,
    partab,
    positional,
    k0,
    rare_pos,
    rare_val,
    nrare,
    unequal,
    block,
    width,
    hist,
    mode,
    guesses,
):
    """:func:`sparse_extend` while every value is below ``width`` (a power of two, at most 64):
    the options of a heap are the bits of one 64-bit word instead of stamps in memory.

    The same rare/common method, in words: the rare heaps paired with their partners OR their
    values' bits together; the mex bound ``c`` is the lowest common-at-n bit left free; the
    rare-at-n values below ``c`` still free are a word of pending bits, cleared by the pairs
    (a, tot - a) from both ends inwards (``WORD_MARK0`` from each end at first, then twice as
    many up to ``block``, each block ORed without branches, so that the compiler makes vector
    instructions of it) until none is left; G(n) is ``c`` then, else the lowest bit never
    cleared (a rare value, after all pairs). The rare heaps of at least ``LANES - kmin`` below
    ``start - kmax`` are paired for ``LANES`` heaps at once (their partners are known before the
    block starts), the others heap by heap.

    Every heap computed also adds 1 to ``hist[n & 1, G(n)]`` (the histograms the mask is chosen
    from). Requires every value so far ``< width``.

    ``mode`` splits the work between two threads (``guesses``: a row per heap from ``start``):
    with ``GUESS`` G(n) is taken to be ``c`` and the pending bits are written to
    ``guesses[n - start]`` instead of being looked for (no histogram, no rare heap), while
    the other thread runs ``CHECK`` on the heaps guessed before: it only looks for each heap's
    pending bits (which reads values below the heap, checked before it), counts the heap, and
    at the first bit no split reaches sets the heap's value (the lowest such bit: a rare
    value), appends it to the rare heaps and returns ``WRONG``. A wrong guess is a rare heap,
    rare by definition. Returns ``(next_n, nrare, status)``:
    ``WIDE`` when heap ``next_n`` (not computed) needs a value ``>= width``, ``RARE_FULL`` as
    :func:`sparse_extend`. O(R + pairs searched) per heap, R = number of rare heaps.
    """
    one = np.uint64(1)
    common = np.zeros(2, np.uint64)  # the common-at-n values below width, for phi = 0 and 1
    for v in range(width):
        for phi in range(2):
            if partab[v] != phi:
                common[phi] |= one << np.uint64(v)
    cap = rare_pos.shape[0]
    nsplit = split_k.shape[0]
    kmin = split_k[0]
    kmax = split_k[nsplit - 1]
    nwhole = whole_k.shape[0]
    nleave = leave_k.shape[0]
    acc = np.zeros(LANES, np.uint64)
    # the rare heaps [0, near) are paired heap by heap, [near, far) for the whole block at once,
    # [far, nrare) heap by heap again (those not below every heap less every removal); both
    # bounds only grow (rare heaps are appended in order)
    near = 0
    far = 0
    s = start
    while s < stop:
        e = min(stop, s + LANES)
        for t in range(LANES):
            acc[t] = 0
        while near < nrare and kmin + rare_pos[near] < LANES:
            near += 1
        far = max(far, near)
        if unequal == 0 and mode != CHECK:
            while far < nrare and rare_pos[far] < s - kmax:
                far += 1
            for i in range(near, far):
                w = np.uint64(rare_val[i])
                for j in range(nsplit):
                    base = np.uint64(s - split_k[j] - rare_pos[i])
                    for t in range(LANES):
                        acc[t] |= one << (w ^ np.uint64(g[base + np.uint64(t)]))
        for n in range(s, e):
            if nrare == cap:
                return n, nrare, RARE_FULL
            phi = positional & ((n - k0) & 1)
            if mode == CHECK:
                pending = guesses[n - start]
                value = int(g[n])
            else:
                m = acc[n - s]
                for i in range(nwhole):
                    if whole_k[i] == n:
                        m |= one
                for i in range(nleave):
                    k = leave_k[i]
                    if k < n:
                        m |= one << np.uint64(g[n - k])
                for j in range(nsplit):
                    tot = n - split_k[j]
                    if tot < 2:
                        break
                    for part in range(2):
                        i = 0 if part == 0 else far
                        i1 = near if part == 0 else nrare
                        while i < i1:
                            r = rare_pos[i]
                            if r >= tot:
                                break
                            if unequal == 0 or 2 * r != tot:
                                w = np.uint64(rare_val[i])
                                m |= one << (w ^ np.uint64(g[tot - r]))
                            i += 1
                free = ~m & common[phi]
                if free == 0:
                    return n, nrare, WIDE
                value = lowest_bit(free)
                pending = ~m & ~common[phi] & ((one << np.uint64(value)) - one)
            if mode == GUESS:
                guesses[n - start] = pending
                g[n] = value
                continue
            if pending:
                lo = 1
                hi = (n - kmin) // 2
                size = min(block, WORD_MARK0)
                from_lo = True
                while lo <= hi:
                    if from_lo:
                        bottom = lo
                        upper = min(hi, lo + size - 1)
                        lo = upper + 1
                    else:
                        upper = hi
                        bottom = max(lo, hi - size + 1)
                        hi = bottom - 1
                        size = min(block, 2 * size)
                    from_lo = not from_lo
                    x = np.uint64(0)
                    for j in range(nsplit):
                        tot = n - split_k[j]
                        top = min(upper, (tot - unequal) // 2)
                        ut = np.uint64(tot)
                        for ua in range(np.uint64(bottom), np.uint64(top + 1)):
                            x |= one << np.uint64(g[ua] ^ g[ut - ua])
                    pending &= ~x
                    if pending == 0:
                        break
                if pending:
                    value = lowest_bit(pending)
            g[n] = value
            hist[n & 1, value] += 1
            if partab[value] == phi:
                rare_pos[nrare] = n
                rare_val[nrare] = value
                nrare += 1
                if mode == CHECK:
                    return n + 1, nrare, WRONG
        s = e
    return stop, nrare, DONE


@njit(cache=True, nogil=True)
def sparse_far(  # type: ignore[no-untyped-def]
    g, start, stop, split_k, rare_pos, rare_val, lo, lag, hi, unequal, middle, far
):
    """The options of heaps ``start .. stop - 1`` that pair a rare heap with its partner, those
    of index ``lo .. hi - 1`` and at least ``(n - start) + lag`` for heap n, and those of the
    ``middle`` splits (a, tot - a) with the largest ``a <= (tot - unequal) / 2`` for each
    splitting removal: ``far[n - start, v] = 1`` for each (rows cleared first), for
    :func:`sparse_extend`. Reads only ``g[i]`` for those heaps, so it may run on another
    thread while :func:`sparse_extend` computes the values before ``start``, provided they are
    computed already: with ``lag = start - known + 1`` every partner lies below ``known``,
    later heaps of the block taking only larger rare heaps. Four heaps share one pass over the
    rare heaps (their partners lie side by side); the rare heaps below ``n - kmax`` need no
    bound test there. O((stop - start) (hi - lo + middle) + rows)."""
    nsplit = split_k.shape[0]
    kmax = split_k[nsplit - 1]
    width = far.shape[1]
    first = np.zeros(4, np.int64)
    at = lo  # the first rare heap of heap n (they only grow with n)
    below = lo
    n = start
    while n < stop:
        if unequal == 0 and n + 3 < stop and n - kmax >= 2:
            # four heaps at once: one pass over the rare heaps, four partners side by side
            base = n - start
            for d in range(4):
                for v in range(width):  # (no row views: each costs atomic reference counts)
                    far[base + d, v] = 0
                while at < hi and rare_pos[at] < base + d + lag:
                    at += 1
                first[d] = at
            # the rare heaps below n - kmax pair with every removal for all four heaps: one
            # pass, unsigned indices, no bound tests
            below = max(below, at)
            while below < hi and rare_pos[below] < n - kmax:
                below += 1
            ub = np.uint64(base)
            un = np.uint64(n)
            for j in range(nsplit):
                uk = un - np.uint64(split_k[j])
                for i in range(np.uint64(at), np.uint64(below)):
                    w = np.uint64(rare_val[i])
                    b = uk - np.uint64(rare_pos[i])
                    far[ub, w ^ np.uint64(g[b])] = 1
                    far[ub + np.uint64(1), w ^ np.uint64(g[b + np.uint64(1)])] = 1
                    far[ub + np.uint64(2), w ^ np.uint64(g[b + np.uint64(2)])] = 1
                    far[ub + np.uint64(3), w ^ np.uint64(g[b + np.uint64(3)])] = 1
            for j in range(nsplit):
                tot = n - split_k[j]
                # the few rare heaps of only the first of the four (their lag is smaller)
                for d in range(3):
                    for i in range(first[d], at):
                        r = rare_pos[i]
                        if r < tot + d:
                            far[base + d, rare_val[i] ^ g[tot + d - r]] = 1
                i = below
                while i < hi:
                    r = rare_pos[i]
                    if r >= tot:
                        break
                    b = np.uint64(tot - r)
                    w = rare_val[i]
                    far[base, w ^ g[b]] = 1
                    far[base + 1, w ^ g[b + np.uint64(1)]] = 1
                    far[base + 2, w ^ g[b + np.uint64(2)]] = 1
                    far[base + 3, w ^ g[b + np.uint64(3)]] = 1
                    i += 1
                while i < hi:  # rare heaps below only some of the four
                    r = rare_pos[i]
                    if r >= tot + 3:
                        break
                    for d in range(1, 4):
                        if r < tot + d:
                            far[base + d, rare_val[i] ^ g[tot + d - r]] = 1
                    i += 1
                for d in range(4):
                    top = (tot + d) // 2
                    for a in range(max(1, top - middle + 1), top + 1):
                        far[base + d, g[a] ^ g[tot + d - a]] = 1
            n += 4
            continue
        row = n - start
        for v in range(width):
            far[row, v] = 0
        while at < hi and rare_pos[at] < row + lag:
            at += 1
        for j in range(nsplit):
            tot = n - split_k[j]
            if tot < 2:
                break
            for i in range(at, hi):
                r = rare_pos[i]
                if r >= tot:
                    break
                if unequal and 2 * r == tot:
                    continue
                far[row, rare_val[i] ^ g[np.uint64(tot - r)]] = 1
            top = (tot - unequal) // 2
            for a in range(max(1, top - middle + 1), top + 1):
                far[row, g[a] ^ g[tot - a]] = 1
        n += 1


@njit(cache=True, nogil=True)
def period_scan(g, count, t, splitting, provable, pmax, xcap):  # type: ignore[no-untyped-def]
    """Look for periods p = 1 .. pmax of ``g[:count]``.

    For each p, z(p) is the number of trailing heaps that agree with the heap p before them
    (G(i) = G(i - p) for count - z <= i < count), so the least preperiod for p is
    n0 = count - p - z. Returns ``(proven_p, proven_z, found_p, found_z, best_p, best_z)``
    (-1 when none):

    - proven: the least p whose periodicity condition holds (only when ``provable``):
      Guy–Smith, count >= 2 max(n0, 1) + 2 p + t (so z >= (count + t) / 2), for games that
      split heaps; otherwise the t values after max(n0, 1) repeat: count - p >= max(n0, 1) + t.
    - found: the least p with z >= p + t (two whole periods and t more values repeat).
    - best: among the p examined (not pruned), the least with the longest z: a candidate for
      how far to compute next.

    The Guy–Smith condition is used with ``max(n0, 1)`` for ``n0``: with n0 = 0 a split into
    (p, p) has no counterpart in the heap p smaller (0.4 has G = 0, 0, 0, 1: period 1 would
    "hold" from n0 = 0 on the first three values), so the theorem needs n0 >= 1.

    Pruning for splitting games, both exact for the least proven period p0 (only p0 is needed:
    every proven p is a multiple of it and the scan goes upwards):

    - p0 > z(p') for every p' < p0: otherwise the last z(p') + p' values would have the periods
      p' and p0 and length >= p0 + p', so gcd(p', p0) < p0 would be a period of the whole
      p0-periodic tail (Fine and Wilf), and proven before p0. So p <= max z seen is skipped
      (p <= max z - t until ``found`` is known, so that ``found`` stays the least).
    - with the found period p1 and its tail z1, an *exception* x (G(x) != G(x + p1)) below the
      p1-periodic tail rules p out when x + p falls in that tail and x >= count - zreq - p: a
      proven p would copy the exception into the tail. The exceptions (at most ``xcap``,
      nearest first) are collected once and looked up by binary search.

    Cost: O(count + sum of z(p) over the p not pruned); memory O(min(count, xcap)).
    """
    last = count - 1
    found_p = -1
    found_z = -1
    zreq = (count + t + 1) // 2
    zmax_seen = -1
    best_p = -1
    # (allocated once: an array assigned inside the loop would cost two atomic reference
    # count updates per period examined; untouched pages cost nothing)
    xroom = min(xcap, count) if provable and splitting else 0
    exc = np.empty(xroom, np.int64)
    nexc = 0
    cover_lo = count
    prune = provable and splitting
    p = 1
    while p <= pmax:
        if prune:
            bound = zmax_seen if found_p >= 0 else zmax_seen - t
            if p <= bound:
                p = bound + 1
                continue
            if nexc > 0:
                hi = count - found_p - p
                lo = max(count - zreq - p, count - found_z - found_p - p, cover_lo)
                if lo < hi:
                    # exc is descending: the first index with exc[i] < hi
                    a = 0
                    b = nexc
                    while a < b:
                        mid = (a + b) // 2
                        if exc[mid] < hi:
                            b = mid
                        else:
                            a = mid + 1
                    if a < nexc and exc[a] >= lo:
                        p += 1
                        continue
        zmax = count - p
        z = 0
        while z < zmax and g[last - z] == g[last - z - p]:
            z += 1
        n0 = count - p - z
        if provable:
            n1 = max(n0, 1)
            ok = count >= 2 * n1 + 2 * p + t if splitting else count - p >= n1 + t
            if ok:
                return p, z, found_p, found_z, p, z
        if found_p < 0 and z >= p + t:
            found_p = p
            found_z = z
            if not provable:
                return -1, -1, found_p, found_z, found_p, found_z
            if prune:
                bottom = max(0, count - zreq - pmax)
                x = count - z - p - 1
                cover_lo = bottom
                while x >= bottom:
                    if g[x] != g[x + p]:
                        exc[nexc] = x
                        nexc += 1
                        if nexc == xroom:
                            cover_lo = x
                            break
                    x -= 1
        if z > zmax_seen:
            zmax_seen = z
            best_p = p
        p += 1
    return -1, -1, found_p, found_z, best_p, zmax_seen
