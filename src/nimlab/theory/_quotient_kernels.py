"""Compiled state exploration for :mod:`nimlab.theory.quotient` (Numba), with a pure-Python twin.

A *candidate* is a finite commutative monoid given only by what the exploration needs: ``m``
elements (``0`` the identity), ``K`` heap types, ``act[k, x]`` the product of ``x`` with the image
of type ``k``, and for each type the list of its option images, each given as a column
``optcol[j, x]`` (the product of ``x`` with option image ``j``; ``optidx[optptr[k]:optptr[k+1]]``
lists the columns of type ``k``). A *state* is ``(q, T)``: the element of a position and the set
of elements of its options; adding a heap of type ``k`` maps it to
``(act[k, q], {act[k, t] : t in T} | {optcol[j, q] : j of type k})``.

:func:`explore` visits the reachable states in order of their smallest position's weight
(Dijkstra over the types' weights) and either *marks* the elements (each takes the misère outcome
its smallest position has according to its options) or *checks* a fixed P-portion; the first
state whose element disagrees with its options is the *conflict*. The work is resumable: all of
it lives in the arrays of an :class:`Exploration`, and each call does at most ``max_pops`` states,
so the caller checks its deadline between calls. :func:`explore_py` is the plain twin (sets and a
heap queue) the kernel is tested against.

Complexity: O(S · K · (|T| + |options|) · log S) time for ``S`` reachable states, and
O(S · (|T| + K)) memory.
"""

from __future__ import annotations

import heapq
from typing import Any

import numpy as np

from nimlab.theory._jit import njit

__all__ = ["DONE", "GROW", "PAUSED", "Exploration", "explore_py", "run"]

DONE = 0
PAUSED = 1
GROW = 2
CONFLICT = 3
TARGET = 4

# scalars: 0 nstates, 1 pool used, 2 heap size, 3 conflict state, 4 conflict origin state,
# 5 stop at the first conflict (0/1), 6 mark (1) or check (0), 7 states popped, 8 states below
# this index are already verified for every type but 9 (a seeded extension; see Exploration.seed),
# 10 elements marked so far, 11 stop marking once this many elements are marked (0: never),
# 12 the last stamp used to collect an option set (see ``stamp`` in _explore)
_NS, _POOL, _HEAP, _CS, _CO, _STOP, _MARK, _POPPED, _OLD, _ONLY, _MARKED, _TARGET, _TOKEN = range(
    13
)


@njit(cache=True, nogil=True)
def _mix(x: Any) -> Any:  # pragma: no cover - compiled
    """A 64-bit mixer (splitmix64's finaliser) of an unsigned 64-bit integer."""
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@njit(cache=True, nogil=True)
def _mixed(m: int) -> Any:  # pragma: no cover - compiled
    """``_mix(x)`` for every element ``x < m`` (the summands of :func:`_hash`)."""
    out = np.empty(m, dtype=np.uint64)
    for x in range(m):
        out[x] = _mix(np.uint64(x))
    return out


@njit(cache=True, nogil=True)
def _hash(q: int, pool: Any, a: int, b: int) -> int:  # pragma: no cover - compiled
    """The hash of state ``(q, set(pool[a:b]))``: independent of the order of the set (a sum of
    mixed elements), so option sets need not be sorted."""
    h = _mix(np.uint64(q) + np.uint64(0x9E3779B97F4A7C15))
    for i in range(a, b):
        h += _mix(np.uint64(pool[i]))
    return int(h >> np.uint64(1))


@njit(cache=True, nogil=True)
def _rehash(hcap: int, qs: Any, tptr: Any, pool: Any, n: int) -> Any:  # pragma: no cover
    table = np.full(hcap, -1, dtype=np.int32)
    mask = hcap - 1
    for s in range(n):
        h = _hash(qs[s], pool, tptr[s], tptr[s + 1]) & mask
        while table[h] != -1:
            h = (h + 1) & mask
        table[h] = s
    return table


@njit(cache=True, nogil=True)
def _push(heap: Any, size: int, key: int) -> int:  # pragma: no cover - compiled
    i = size
    heap[i] = key
    while i > 0:
        p = (i - 1) >> 1
        if heap[p] <= heap[i]:
            break
        heap[p], heap[i] = heap[i], heap[p]
        i = p
    return size + 1


@njit(cache=True, nogil=True)
def _pop(heap: Any, size: int) -> int:  # pragma: no cover - compiled
    top = heap[0]
    size -= 1
    heap[0] = heap[size]
    i = 0
    while True:
        left = 2 * i + 1
        if left >= size:
            break
        c = left
        if left + 1 < size and heap[left + 1] < heap[left]:
            c = left + 1
        if heap[i] <= heap[c]:
            break
        heap[i], heap[c] = heap[c], heap[i]
        i = c
    return int(top)


@njit(cache=True, nogil=True)
def _explore(
    act: Any,
    optcol: Any,
    optptr: Any,
    optidx: Any,
    weights: Any,
    pbits: Any,
    qs: Any,
    tptr: Any,
    pool: Any,
    dist: Any,
    done: Any,
    parent: Any,
    ptype: Any,
    table: Any,
    heap: Any,
    scratch: Any,
    stamp: Any,
    mixed: Any,
    mark_seen: Any,
    watch: Any,
    scalars: Any,
    max_pops: int,
) -> int:  # pragma: no cover - compiled (its twin runs under NUMBA_DISABLE_JIT in the tests)
    k_types = act.shape[0]
    cap = qs.shape[0]
    mask = table.shape[0] - 1
    shift = np.int64(32)
    low = (np.int64(1) << shift) - 1
    pops = 0
    while scalars[_HEAP] > 0:
        if pops >= max_pops:
            return PAUSED
        # room for one more expansion: K new states, K * (|T| + options) pool entries, K pushes
        n = scalars[_NS]
        if (
            n + k_types >= cap
            or scalars[_POOL] + k_types * (scratch.shape[0]) >= pool.shape[0]
            or scalars[_HEAP] + k_types >= heap.shape[0]
            or 2 * (n + k_types) >= table.shape[0]
        ):
            return GROW
        key = _pop(heap, scalars[_HEAP])
        scalars[_HEAP] -= 1
        s = np.int64(key & low)
        w = key >> shift
        if done[s]:
            continue
        done[s] = 1
        pops += 1
        scalars[_POPPED] += 1
        q = qs[s]
        a, b = tptr[s], tptr[s + 1]
        old = s < scalars[_OLD]
        bit = 1 if b > a else 0
        for i in range(a, b):
            if pbits[pool[i]] == 1:
                bit = 0
                break
        if mark_seen[q] == -1:
            mark_seen[q] = s
        if old:
            pass
        elif scalars[_MARK] == 1 and pbits[q] == -1:
            pbits[q] = bit
            if watch[q] == 1:
                scalars[_MARKED] += 1
        elif pbits[q] != bit and scalars[_CS] == -1:
            scalars[_CS] = s
            scalars[_CO] = mark_seen[q]
            if scalars[_STOP] == 1:
                return CONFLICT
        for k in range(k_types):
            if old and k != scalars[_ONLY]:
                continue
            # the new option set, without repeats (in no particular order), in scratch[0:u]:
            # an element is in it iff its stamp is this set's token
            token = scalars[_TOKEN] + 1
            scalars[_TOKEN] = token
            u = 0
            hsum = _mix(np.uint64(act[k, q]) + np.uint64(0x9E3779B97F4A7C15))
            for i in range(a, b):
                v = act[k, pool[i]]
                if stamp[v] != token:
                    stamp[v] = token
                    scratch[u] = v
                    u += 1
                    hsum += mixed[v]
            for j in range(optptr[k], optptr[k + 1]):
                v = optcol[optidx[j], q]
                if stamp[v] != token:
                    stamp[v] = token
                    scratch[u] = v
                    u += 1
                    hsum += mixed[v]
            q2 = act[k, q]
            h = int(hsum >> np.uint64(1)) & mask
            found = -1
            while table[h] != -1:
                t = table[h]
                if qs[t] == q2 and tptr[t + 1] - tptr[t] == u:
                    same = True
                    base = tptr[t]
                    for i in range(u):
                        if stamp[pool[base + i]] != token:
                            same = False
                            break
                    if same:
                        found = t
                        break
                h = (h + 1) & mask
            if found == -1:
                found = scalars[_NS]
                table[h] = found
                qs[found] = q2
                p0 = scalars[_POOL]
                for i in range(u):
                    pool[p0 + i] = scratch[i]
                scalars[_POOL] = p0 + u
                tptr[found + 1] = p0 + u
                dist[found] = np.int64(1) << 60
                done[found] = 0
                scalars[_NS] = found + 1
            w2 = w + weights[k]
            if done[found] == 0 and w2 < dist[found]:
                dist[found] = w2
                parent[found] = s
                ptype[found] = k
                scalars[_HEAP] = _push(heap, scalars[_HEAP], (w2 << shift) | found)
        if scalars[_TARGET] > 0 and scalars[_MARKED] >= scalars[_TARGET]:
            return TARGET
    return DONE


class Exploration:
    """The resumable arrays of one exploration of a candidate (see the module docstring).

    ``pbits[x]`` is ``1``/``0`` for a P/N element (``-1`` not reached); after :func:`run`,
    ``conflict`` is the first disagreeing state (or ``None``) and ``origin`` the state whose
    element first took that bit (marking only). ``target > 0`` (marking only): stop as soon as
    that many elements are marked (the caller knows how many are reachable).
    """

    def __init__(
        self,
        act: Any,
        optcol: Any,
        optptr: Any,
        optidx: Any,
        weights: Any,
        pbits: Any | None,
        *,
        stop: bool,
        target: int = 0,
    ) -> None:
        self.act = np.ascontiguousarray(act, dtype=np.int32)
        self.m = int(self.act.shape[1])
        self.optcol = np.ascontiguousarray(optcol, dtype=np.int32).reshape(-1, self.m)
        self.optptr = np.ascontiguousarray(optptr, dtype=np.int64)
        self.optidx = np.ascontiguousarray(optidx, dtype=np.int64)
        self.weights = np.ascontiguousarray(weights, dtype=np.int64)
        self.marking = pbits is None
        self.pbits = (
            np.full(self.m, -1, dtype=np.int8)
            if pbits is None
            else np.ascontiguousarray(pbits, dtype=np.int8)
        )
        self.mark_seen = np.full(self.m, -1, dtype=np.int64)
        k = int(self.act.shape[0])
        widest = self.m + int(max(np.diff(self.optptr), default=0)) + 1
        self.scratch = np.zeros(widest, dtype=np.int32)
        self.stamp = np.zeros(self.m, dtype=np.int64)
        self.mixed = _mixed(self.m)
        cap = 1024
        self.qs = np.zeros(cap, dtype=np.int32)
        self.tptr = np.zeros(cap + 1, dtype=np.int64)
        self.pool = np.zeros(max(16 * cap, 2 * k * widest), dtype=np.int32)
        self.dist = np.zeros(cap, dtype=np.int64)
        self.done = np.zeros(cap, dtype=np.uint8)
        self.parent = np.full(cap, -1, dtype=np.int64)
        self.ptype = np.full(cap, -1, dtype=np.int64)
        self.table = np.full(4 * cap, -1, dtype=np.int32)
        self.heap = np.zeros(4 * cap, dtype=np.int64)
        self.scalars = np.zeros(13, dtype=np.int64)
        self.scalars[_CS] = -1
        self.scalars[_CO] = -1
        self.scalars[_STOP] = int(stop)
        self.scalars[_MARK] = int(self.marking)
        self.watch = np.ones(self.m, dtype=np.int8)
        self.scalars[_TARGET] = target
        # the start state: the empty position, no options
        self.scalars[_NS] = 1
        self.dist[0] = 0
        self.table = _rehash(self.table.shape[0], self.qs, self.tptr, self.pool, 1)
        self.scalars[_HEAP] = _push(self.heap, 0, 0)

    def watch_only(self, elements: Any) -> None:
        """Stop marking (status ``TARGET``) once every element of ``elements`` is marked; the
        exploration resumes from there with :meth:`watch_all`."""
        self.watch[:] = 0
        self.watch[np.asarray(list(elements), dtype=np.int64)] = 1
        self.scalars[_MARKED] = int((self.pbits[self.watch == 1] >= 0).sum())
        self.scalars[_TARGET] = int(self.watch.sum())

    def watch_all(self, target: int) -> None:
        """Stop marking once ``target`` elements in all are marked (0: never)."""
        self.watch[:] = 1
        self.scalars[_MARKED] = int((self.pbits >= 0).sum())
        self.scalars[_TARGET] = target

    def seed(self, known: Exploration, new_type: int) -> None:
        """Start from the (verified, consistent) states of ``known``, an exploration of the same
        candidate for every type but ``new_type``: only their moves by ``new_type`` and the
        states reached from those are explored and checked. O(known states)."""
        n = known.nstates
        used = int(known.scalars[_POOL])
        k = int(self.act.shape[0])
        cap = 2 * (n + k) + 16
        self.qs = known.qs[:n].copy()
        self.qs.resize(cap, refcheck=False)
        self.tptr = np.zeros(cap + 1, dtype=np.int64)
        self.tptr[: n + 1] = known.tptr[: n + 1]
        self.pool = np.zeros(2 * used + 2 * k * self.scratch.shape[0], dtype=np.int32)
        self.pool[:used] = known.pool[:used]
        self.dist = np.zeros(cap, dtype=np.int64)
        self.done = np.zeros(cap, dtype=np.uint8)
        self.parent = np.full(cap, -1, dtype=np.int64)
        self.ptype = np.full(cap, -1, dtype=np.int64)
        hcap = 1
        while hcap < 4 * cap:
            hcap *= 2
        self.table = _rehash(hcap, self.qs, self.tptr, self.pool, n)
        self.heap = np.zeros(2 * cap + 16, dtype=np.int64)
        self.heap[:n] = np.arange(n, dtype=np.int64)  # weight 0: a valid (sorted) heap
        self.parent[:n] = known.parent[:n]
        self.ptype[:n] = known.ptype[:n]
        self.scalars[_NS] = n
        self.scalars[_POOL] = used
        self.scalars[_HEAP] = n
        self.scalars[_OLD] = n
        self.scalars[_ONLY] = new_type

    @property
    def nstates(self) -> int:
        return int(self.scalars[_NS])

    @property
    def conflict(self) -> int | None:
        c = int(self.scalars[_CS])
        return None if c < 0 else c

    @property
    def origin(self) -> int | None:
        c = int(self.scalars[_CO])
        return None if c < 0 else c

    def nbytes(self) -> int:
        return sum(
            a.nbytes
            for a in (self.qs, self.tptr, self.pool, self.dist, self.done, self.parent)
            + (self.ptype, self.table, self.heap)
        )

    def grow(self) -> None:
        """Double whatever is close to full (states, option pool, queue, hash table)."""
        n = self.nstates
        k = int(self.act.shape[0])
        cap = self.qs.shape[0]
        if n + k >= cap:
            new = 2 * cap
            self.qs = np.resize(self.qs, new)
            self.tptr = np.resize(self.tptr, new + 1)
            self.dist = np.resize(self.dist, new)
            self.done = np.resize(self.done, new)
            self.parent = np.resize(self.parent, new)
            self.ptype = np.resize(self.ptype, new)
        if int(self.scalars[_POOL]) + k * self.scratch.shape[0] >= self.pool.shape[0]:
            self.pool = np.resize(self.pool, 2 * self.pool.shape[0] + k * self.scratch.shape[0])
        if int(self.scalars[_HEAP]) + k >= self.heap.shape[0]:
            self.heap = np.resize(self.heap, 2 * self.heap.shape[0])
        if 2 * (n + k) >= self.table.shape[0]:
            self.table = _rehash(2 * self.table.shape[0], self.qs, self.tptr, self.pool, n)

    def word(self, s: int) -> list[int]:
        """The types of the smallest position found for state ``s`` (with repeats)."""
        out: list[int] = []
        while s > 0:
            out.append(int(self.ptype[s]))
            s = int(self.parent[s])
        return out


def run(ex: Exploration, max_pops: int, budget_check: Any, memory_check: Any) -> int:
    """Explore until done (``DONE``), the watched elements are all marked (``TARGET``) or,
    when stopping at conflicts, the first one (``CONFLICT``); ``budget_check()`` runs between
    chunks of ``max_pops`` states and ``memory_check(nbytes)`` after each growth."""
    while True:
        status = _explore(
            ex.act,
            ex.optcol,
            ex.optptr,
            ex.optidx,
            ex.weights,
            ex.pbits,
            ex.qs,
            ex.tptr,
            ex.pool,
            ex.dist,
            ex.done,
            ex.parent,
            ex.ptype,
            ex.table,
            ex.heap,
            ex.scratch,
            ex.stamp,
            ex.mixed,
            ex.mark_seen,
            ex.watch,
            ex.scalars,
            max_pops,
        )
        if status == GROW:
            ex.grow()
            memory_check(ex.nbytes())
        elif status == PAUSED:
            budget_check()
        else:
            return int(status)


def explore_py(
    act: list[list[int]],
    options: list[list[list[int]]],
    weights: list[int],
    pbits: list[int] | None,
) -> tuple[list[int], int | None, int]:
    """The twin of :func:`run` without stopping: ``options[k][x]`` lists the option images of
    type ``k`` times ``x``. Returns ``(pbits, weight of the first conflict or None, number of
    states)``. Plain sets and a heap queue; O(S · K · |T| · log S)."""
    m = len(act[0]) if act else 1
    marking = pbits is None
    bits = [-1] * m if pbits is None else list(pbits)
    start: tuple[int, frozenset[int]] = (0, frozenset())
    dist = {start: 0}
    done: set[tuple[int, frozenset[int]]] = set()
    queue: list[tuple[int, int, tuple[int, frozenset[int]]]] = [(0, 0, start)]
    counter = 1
    conflict: int | None = None
    while queue:
        w, _, s = heapq.heappop(queue)
        if s in done:
            continue
        done.add(s)
        q, ts = s
        bit = int(bool(ts) and not any(bits[t] == 1 for t in ts))
        if marking and bits[q] == -1:
            bits[q] = bit
        elif bits[q] != bit and conflict is None:
            conflict = w
        for k, column in enumerate(act):
            s2 = (column[q], frozenset([column[t] for t in ts] + options[k][q]))
            w2 = w + weights[k]
            if s2 not in done and w2 < dist.get(s2, 1 << 62):
                dist[s2] = w2
                heapq.heappush(queue, (w2, counter, s2))
                counter += 1
    return bits, conflict, len(done)
