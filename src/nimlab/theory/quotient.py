"""Misère quotients of take-and-break games (Plambeck 2005; Plambeck–Siegel 2008).

Let ``A_n`` be the set of all sums of heaps of at most ``n`` objects under a take-and-break rule.
Two positions ``u`` and ``v`` are *indistinguishable* when ``u + w`` and ``v + w`` have the same
misère outcome for every ``w`` in ``A_n``; the classes form a finite or infinite commutative monoid,
the *misère quotient* ``Q = A_n / ≡``, and the classes of P-positions form its *P-portion*. Once
``Q`` is known, the outcome of any sum of heaps is one multiplication per heap and a table look-up.

How the quotient is computed here (heap by heap, never by searching positions):

1. **Verification.** A finite commutative monoid ``M``, a subset ``P`` and an image ``Φ(h)`` for
   each heap predict "``x`` is a P-position iff ``Φ(x) ∈ P``". The prediction is right for every
   position of ``A_n`` iff it is *locally consistent* everywhere: ``Φ(x) ∈ P`` exactly when ``x``
   has a move and no option ``y`` has ``Φ(y) ∈ P`` (misère: a position without moves is an
   N-position); induction on positions gives the rest. Local consistency only depends on the
   *state* ``(Φ(x), T(x))`` with ``T(x) = {Φ(y) : y an option of x}``, and adding a heap ``h``
   maps states to states: ``Φ(x + h) = Φ(x)Φ(h)`` and ``T(x + h) = T(x)·Φ(h) ∪ Φ(x)·T(h)``, where
   ``T(h)`` holds the images of the options of the single heap ``h``. So the (finite) set of
   states reachable from ``(1, ∅)`` is checked exhaustively: a sound and complete test.
2. **Extension by one heap.** First try each element of the current quotient as the image of the
   new heap (a *conservative* extension, which leaves the quotient unchanged). Otherwise build a
   larger candidate: the current quotient times a cyclic monoid ``⟨x | x^(i+2) = x^i⟩`` for the
   new heap, mark its P-portion element by element in order of size (each element takes the
   outcome of its smallest position, computed from the marks of that position's options, all
   smaller), reduce it, and verify the reduced candidate. When a larger position disagrees
   with the smallest one of its element, the two positions are truly different; the
   candidate is refined so that they map to different elements (a longer cycle for a free
   heap, or one more heap made free) and tried again. Only finite quotients are built: when the
   cycles a heap needs keep growing (the quotient looks infinite), the round is refused.
3. **Reduction.** A verified candidate is reduced by partition refinement (two elements are
   merged when no product with the heap images tells them apart): the result is exactly the
   misère quotient of ``A_n``, and it is verified once more in its reduced form. (The marking
   and the refinement run on whole product columns computed with NumPy; their plain twins,
   :func:`_mark_smallest_py` and :func:`_minimise_py`, are the reference they are tested
   against.)

**Periodicity** (the misère analogue of the Guy–Smith test, proven in :func:`_periodicity`): for a
finite code whose moves remove at most ``t`` objects, if the images satisfy ``Φ(h + p) = Φ(h)`` for
all ``n0 <= h <= N - p`` with ``n0 >= 1`` and ``N >= 2*n0 + 2*p + t - 1``, then the quotient of
heaps up to ``N`` is the quotient of *all* heaps, and the images stay periodic forever.

Complexity: verifying a candidate is O(S · K · |T|) time and O(S) memory, where ``S`` is the
number of reachable states, ``K`` the number of distinct heap types and ``|T|`` the size of an
option set; the whole computation repeats this for each heap up to the bound. Nothing here ever
searches game positions, so heaps of hundreds of objects are cheap when the quotient is small.
"""

from __future__ import annotations

import functools
import math
import threading
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from nimlab.theory.budget import CHECK_EVERY, Budget, BudgetExceeded, metered
from nimlab.theory.octal import TakeAndBreak
from nimlab.theory.outcome import Outcome
from nimlab.theory.positions import Canon

__all__ = [
    "DEFAULT_HEAP_BOUND",
    "UNPROVEN_HEAP_BOUND",
    "MisereQuotient",
    "QuotientError",
    "cached_quotient",
    "default_heap_bound",
    "infinite_reason",
    "iter_quotient_winning_moves",
    "misere_quotient",
    "periodicity_applies",
    "quotient_building",
    "quotient_for",
    "quotient_progress",
    "quotient_winning_moves",
    "resume_quotient",
    "rule_name",
    "verified_heaps",
]

MAX_HEAP_LIMIT = 4096
"""The largest heap bound :func:`misere_quotient` accepts."""

DEFAULT_HEAP_BOUND = 200
"""The heap bound asked for by default when a period may prove the quotient (the computation
stops earlier once it does)."""

UNPROVEN_HEAP_BOUND = 24
"""The heap bound asked for by default when no period can prove the quotient (moves that take
without bound, splits into unequal heaps): a partial quotient, quick to compute."""

_CACHE_SIZE = 16
_MAX_RECALIBRATIONS = 400
_MAX_INDEX = 16
_MAX_ORDER = 4096
"""The most elements a reduced (trial) quotient may have when the budget sets no memory limit:
its table has ``_MAX_ORDER²`` entries, about 1.7 GB at ``_TABLE_ENTRY_BYTES`` each."""
_TABLE_ENTRY_BYTES = 100
"""Bytes per entry of a quotient's multiplication table, every copy a round holds together
(measured: 36 for the reduced table as lists, 8 for its renumbered copy, 8 for the result's
tuples; the table of the round before and array temporaries make up the rest)."""
_ARRAY_ENTRIES = 1 << 20  # products computed in one vectorised call (bounds temporary memory)
_COLUMN_ENTRIES = 1 << 23  # the most column entries marking keeps as lists (else products)

Word = Counter[int]  # heap size -> how many such heaps


class QuotientError(ValueError):
    """A quotient was asked about something it does not cover, or for a rule it cannot handle."""


def rule_name(code: str, unequal: bool = False) -> str:
    """A rule in messages: its octal code, and whether splits must leave unequal heaps (what
    ``code`` alone does not say: Grundy's game is ``4.0`` with unequal splits)."""
    return f"{code} (splits into unequal heaps)" if unequal else code


def _name(rule: TakeAndBreak) -> str:
    return rule_name(rule.code, rule.unequal)


# -- the result ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class MisereQuotient:
    """The misère quotient of all sums of heaps ``<= heap_bound`` under ``rule``.

    Elements are numbered ``0 .. order-1`` with ``0`` the identity (the empty position).
    ``table[x][y]`` is the product, ``p_elements`` the P-portion, ``heap_images[h]`` the element
    of one heap of ``h`` (``h = 0 .. heap_bound``). ``elements[x]`` is a word in the generators
    (``"1"``, ``"a"``, ``"a^2b"``); ``generator_heaps[i]`` is the heap that ``generators[i]`` is the
    image of. ``relations`` present the monoid: every word not listed in ``elements`` reduces by
    them. ``proven`` is True only when the periodicity test holds: then the images repeat with
    ``period`` from ``preperiod`` on and the quotient is valid for every heap size; otherwise it
    is valid (and verified) for heaps up to ``heap_bound`` only. ``reason`` says which.
    """

    rule: TakeAndBreak
    heap_bound: int
    order: int
    p_count: int
    elements: tuple[str, ...]
    generators: tuple[str, ...]
    generator_heaps: tuple[int, ...]
    relations: tuple[str, ...]
    heap_images: tuple[int, ...]
    p_elements: tuple[int, ...]
    table: tuple[tuple[int, ...], ...] = field(repr=False)
    proven: bool
    period: int | None
    preperiod: int | None
    reason: str

    def __post_init__(self) -> None:
        pset = frozenset(self.p_elements)
        object.__setattr__(self, "_pset", pset)

    # -- questions ----------------------------------------------------------------------------

    def covers(self, heap: int) -> bool:
        """Whether heaps of ``heap`` objects are covered (within the bound, or proven)."""
        return 0 <= heap <= self.heap_bound or (heap >= 0 and self.period is not None)

    def image(self, heap: int) -> int:
        """The element of one heap of ``heap`` objects. O(1).

        Raises :class:`QuotientError` beyond ``heap_bound`` unless the images are proven periodic.
        """
        if heap < 0:
            raise QuotientError(f"heap sizes are never negative, got {heap}")
        if heap <= self.heap_bound:
            return self.heap_images[heap]
        if self.period is None or self.preperiod is None:
            raise QuotientError(
                f"the quotient of {_name(self.rule)} is known for heaps up to "
                f"{self.heap_bound} only, not {heap}"
            )
        n0, p = self.preperiod, self.period
        return self.heap_images[n0 + (heap - n0) % p]

    def product(self, x: int, y: int) -> int:
        """The product of two elements. O(1)."""
        return self.table[x][y]

    def is_p(self, x: int) -> bool:
        """Whether element ``x`` lies in the P-portion. O(1)."""
        pset: frozenset[int] = self.__dict__["_pset"]
        return x in pset

    def element_of(self, position: Iterable[int]) -> int:
        """The element of a sum of heaps. O(number of heaps)."""
        x = 0
        table = self.table
        for heap in position:
            x = table[x][self.image(heap)]
        return x

    def outcome(self, position: Canon) -> Outcome:
        """The misère outcome of a sum of heaps (each within the bound, or proven periodic).

        O(number of heaps); raises :class:`QuotientError` for a heap the quotient does not cover.
        """
        return Outcome.P if self.is_p(self.element_of(position)) else Outcome.N

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready description (everything but the multiplication table). ``code`` is the
        rule's octal code; ``unequal`` says that its splits must leave unequal heaps (Grundy's
        game is ``4.0`` with ``unequal``)."""
        return {
            "code": self.rule.code,
            "unequal": self.rule.unequal,
            "order": self.order,
            "p_count": self.p_count,
            "heap_bound": self.heap_bound,
            "elements": list(self.elements),
            "p_elements": [self.elements[x] for x in self.p_elements],
            "generators": [
                {"name": g, "heap": h}
                for g, h in zip(self.generators, self.generator_heaps, strict=True)
            ],
            "relations": list(self.relations),
            "heap_images": [self.elements[x] for x in self.heap_images],
            "proven": self.proven,
            "period": self.period,
            "preperiod": self.preperiod,
            "reason": self.reason,
        }


def quotient_winning_moves(
    q: MisereQuotient,
    position: Canon,
    limit: int | None = None,
    budget: Budget | None = None,
) -> list[tuple[int, int, tuple[int, ...]]]:
    """Moves ``(heap, take, parts)`` from ``position`` to a P-position (misère), found in ``q``.

    ``heap`` is the size of the heap moved in, ``take`` the objects removed and ``parts`` the
    heaps left in its place. At most ``limit`` moves (all when ``None``), in the order of
    :func:`iter_quotient_winning_moves`; each option tried is one unit of work charged to
    ``budget`` (:class:`BudgetExceeded` when it runs out first). O(number of heaps + the
    options tried); raises :class:`QuotientError` when a heap (or a part) is beyond what ``q``
    covers.
    """
    moves: list[tuple[int, int, tuple[int, ...]]] = []
    if limit is not None and limit <= 0:
        return moves
    for move in iter_quotient_winning_moves(q, position, budget):
        moves.append(move)
        if limit is not None and len(moves) >= limit:
            break
    return moves


def iter_quotient_winning_moves(
    q: MisereQuotient, position: Canon, budget: Budget | None = None
) -> Iterator[tuple[int, int, tuple[int, ...]]]:
    """The moves of :func:`quotient_winning_moves`, lazily: heap by heap (equal heaps tried
    once, in the position's order), each heap's options in
    :meth:`~nimlab.theory.octal.TakeAndBreak.options_listed` order. Every option tried is
    charged to ``budget`` before it is tried (see :func:`~nimlab.theory.budget.metered`), so a
    heap of 10^9 objects costs what the budget allows, no more. O(number of heaps) before the
    first option; O(1) per option."""
    heaps = list(position)
    n = len(heaps)
    images = [q.image(h) for h in heaps]
    table = q.table
    prefix = [0] * (n + 1)
    for i in range(n):
        prefix[i + 1] = table[prefix[i]][images[i]]
    suffix = [0] * (n + 1)
    for i in range(n - 1, -1, -1):
        suffix[i] = table[images[i]][suffix[i + 1]]
    seen: set[int] = set()
    for i, heap in enumerate(heaps):
        if heap in seen:
            continue
        seen.add(heap)
        rest = table[prefix[i]][suffix[i + 1]]
        for take, parts in metered(q.rule.options_listed(heap), budget):
            x = rest
            for part in parts:
                x = table[x][q.image(part)]
            if q.is_p(x):
                yield heap, take, parts


# -- candidate monoids --------------------------------------------------------------------------


class _Candidate:
    """A finite commutative monoid ``B × C(i_1) × ... × C(i_k)``: a base monoid given by its table
    and cyclic monoids ``C(i) = ⟨x | x^(i+2) = x^i⟩``. Elements are ints (mixed radix, base
    element first); ``0`` is the identity."""

    def __init__(self, base: list[list[int]], indices: list[int]) -> None:
        self.base = base
        self.bsize = len(base)
        self.indices = indices
        self.radices = [i + 2 for i in indices]
        self._memo: dict[int, int] = {}
        self._base_array: Any = None  # the base table as a NumPy array, built on first use
        self._stride = 1
        for r in self.radices:
            self._stride *= r
        self._stride *= self.bsize
        self.size = self._stride

    def decode(self, x: int) -> tuple[int, list[int]]:
        b, x = x % self.bsize, x // self.bsize
        exps = []
        for r in self.radices:
            exps.append(x % r)
            x //= r
        return b, exps

    def encode(self, b: int, exps: list[int]) -> int:
        x = 0
        for e, r in zip(reversed(exps), reversed(self.radices), strict=True):
            x = x * r + e
        return x * self.bsize + b

    def generator(self, component: int) -> int:
        exps = [0] * len(self.radices)
        exps[component] = 1
        return self.encode(0, exps)

    def products(self, xs: Any, ys: Any) -> Any:
        """The elementwise products ``xs[i] * ys[i]`` of two integer arrays (broadcast against
        each other), as a NumPy ``int64`` array of the broadcast shape (vectorised; O(number of
        products · number of cycles))."""
        import numpy as np

        xs = np.asarray(xs, dtype=np.int64)
        ys = np.asarray(ys, dtype=np.int64)
        base = self._base_array
        if base is None:
            base = self._base_array = np.asarray(self.base, dtype=np.int64)
        out = base[xs % self.bsize, ys % self.bsize]
        rx = xs // self.bsize
        ry = ys // self.bsize
        scale = self.bsize
        for r, i in zip(self.radices, self.indices, strict=True):
            s = rx % r + ry % r
            rx = rx // r
            ry = ry // r
            s = np.where(s >= i, i + (s - i) % 2, s)
            out = out + s * scale
            scale *= r
        return out

    def action_array(self, g: int) -> Any:
        """``x * g`` for every element ``x``, as a NumPy ``int64`` array (O(size))."""
        return self.actions([g])[0]

    def actions(self, gs: list[int]) -> Any:
        """``x * g`` for every ``g`` in ``gs`` (rows) and element ``x`` (columns), as a NumPy
        ``int64`` array of shape ``(len(gs), size)``. O(len(gs) · size)."""
        import numpy as np

        xs = np.arange(self._stride, dtype=np.int64)
        return self.products(xs[None, :], np.asarray(gs, dtype=np.int64).reshape(-1, 1))

    def action_rows(self, gs: list[int]) -> Iterator[Any]:
        """The rows of :meth:`actions` one by one, computed a few at a time (at most about
        ``_ARRAY_ENTRIES`` products per vectorised call). O(len(gs) · size)."""
        step = max(1, _ARRAY_ENTRIES // self._stride)
        for i in range(0, len(gs), step):
            yield from self.actions(gs[i : i + step])

    def action(self, g: int) -> list[int]:
        """``[x * g for every element x]`` (vectorised; O(size))."""
        result: list[int] = self.action_array(g).tolist()
        return result

    def mul(self, x: int, y: int) -> int:
        key = x * self._stride + y
        z = self._memo.get(key)
        if z is None:
            if not self.radices:
                z = self.base[x][y]
            else:
                bx, ex = self.decode(x)
                by, ey = self.decode(y)
                exps = []
                for a, b, i in zip(ex, ey, self.indices, strict=True):
                    s = a + b
                    if s >= i:
                        s = i + (s - i) % 2
                    exps.append(s)
                z = self.encode(self.base[bx][by], exps)
            self._memo[key] = z
            self._memo[y * self._stride + x] = z
        return z


@dataclass
class _HeapType:
    """What a heap does in the state machine: its image and the images of its options."""

    weight: int  # the smallest heap of this type
    image: int
    options: frozenset[int]
    rank: int = 0
    """The type's weight in the order positions are explored in (``0``: ``weight``; see
    :func:`_rank`)."""

    def __post_init__(self) -> None:
        if not self.rank:
            self.rank = self.weight


def _rank(heap: int, zero_splits: bool) -> int:
    """The weight of one heap in the order positions are explored in: every move must lower
    the weight of a position (the sum of its heaps' weights), so that a position's options are
    explored before it. A move that removes objects lowers the heap's size; a split that
    removes nothing (a digit before the point) keeps the size but adds a heap. With such
    splits a heap weighs ``2·heap - 1``: removing ``k`` objects and leaving ``j`` heaps
    changes the weight by ``1 - 2k - j`` for ``j >= 1`` (``1 - j < 0`` when ``k = 0``, as a
    split leaves two heaps) and by ``-(2·heap - 1)`` for ``j = 0``; without them it weighs
    ``heap``."""
    return 2 * heap - 1 if zero_splits else heap


State = tuple[int, frozenset[int]]


@dataclass
class _Conflict:
    first: Word | None  # the smallest position of the element (None: the second one itself)
    second: Word  # a position of the same element whose options say otherwise
    truth: bool  # whether ``second`` is truly a P-position


@dataclass
class _Exploration:
    pbits: dict[int, bool]
    states: int  # how many states are reachable (or were explored before the conflict)
    conflict: _Conflict | None
    explored: Any = None  # the kernel's arrays


_CHUNK = 50_000  # states explored between two budget checks


class _Explorer:
    """Explores the reachable states of a candidate for a list of heap types (the compiled
    kernel of :mod:`nimlab.theory._quotient_kernels`; ``action(g)`` gives ``[x * g for every
    element x]`` of a candidate with ``size`` elements)."""

    def __init__(self, types: list[_HeapType], budget: Budget, action: Any, size: int) -> None:
        import numpy as np

        self.types = types
        self.budget = budget
        self.size = size
        columns: dict[int, int] = {}
        cols: list[Any] = []

        def column(g: int) -> int:
            if g not in columns:
                columns[g] = len(cols)
                cols.append(np.asarray(action(g), dtype=np.int32))
            return columns[g]

        act_index = [column(t.image) for t in types]
        optptr = [0]
        optidx: list[int] = []
        for t in types:
            optidx += [column(o) for o in sorted(t.options)]
            optptr.append(len(optidx))
        table = np.stack(cols) if cols else np.zeros((0, size), dtype=np.int32)
        self._act = table[act_index] if types else np.zeros((0, size), dtype=np.int32)
        self._optcol = table
        self._optptr = np.asarray(optptr, dtype=np.int64)
        self._optidx = np.asarray(optidx, dtype=np.int64)
        self._weights = np.asarray([t.rank for t in types], dtype=np.int64)

    def reachable(self) -> int:
        """How many elements are images of positions (the submonoid the types generate).
        O(size · K)."""
        import numpy as np

        seen = np.zeros(self.size, dtype=bool)
        seen[0] = True
        frontier = np.asarray([0], dtype=np.int64)
        while frontier.size:
            nxt = np.unique(self._act[:, frontier].ravel())
            nxt = nxt[~seen[nxt]]
            seen[nxt] = True
            frontier = nxt.astype(np.int64)
        return int(seen.sum())

    def start(self, pbits: Any, stop: bool, seed: Any = None, target: int = 0) -> Any:
        """A fresh exploration (not run yet); see :meth:`resume`."""
        from nimlab.theory import kernels

        kernels.ensure("quotient")
        from nimlab.theory import _quotient_kernels as kern

        ex = kern.Exploration(
            self._act,
            self._optcol,
            self._optptr,
            self._optidx,
            self._weights,
            pbits,
            stop=stop,
            target=target,
        )
        if seed is not None:
            ex.seed(seed, len(self.types) - 1)
        return ex

    def resume(self, ex: Any) -> Any:
        """Run ``ex`` until it is done, hits its target or (when stopping) its first conflict,
        charging the budget as it goes."""
        from nimlab.theory import kernels

        kernels.ensure("quotient")
        from nimlab.theory import _quotient_kernels as kern

        before = int(ex.scalars[7])

        def memory(nbytes: int) -> None:
            self.budget.check_bytes(nbytes)

        def check() -> None:
            self.budget.charge(_CHUNK)

        kern.run(ex, _CHUNK, check, memory)
        self.budget.charge((int(ex.scalars[7]) - before) % _CHUNK)
        return ex

    def _run(self, pbits: Any, stop: bool, seed: Any = None, target: int = 0) -> Any:
        return self.resume(self.start(pbits, stop, seed, target))

    def mark(
        self, fixed: frozenset[int] | None = None, seed: Any = None, *, early: bool = False
    ) -> _Exploration:
        """Explore every reachable state in order of its smallest position's size.

        Without ``fixed``, each element takes the outcome its smallest position has according
        to its options (all smaller, so already marked); with ``fixed``, the P-portion is given
        (and the exploration stops at the first disagreement). Every other state is checked
        against it; the first disagreement is returned as the conflict (its second position's
        true outcome is the opposite of its element's bit, since every smaller position is
        predicted correctly), and marking goes on. ``early`` (marking only): stop once every
        reachable element is marked (the bits are the same; states and conflict are partial).
        """
        import numpy as np

        pbits = None
        if fixed is not None:
            pbits = np.zeros(self.size, dtype=np.int8)
            pbits[list(fixed)] = 1
        target = self.reachable() if early and fixed is None else 0
        ex = self._run(pbits, stop=fixed is not None, seed=seed, target=target)
        bits = {int(x): bool(b) for x, b in enumerate(ex.pbits.tolist()) if b >= 0}
        conflict = None
        if ex.conflict is not None:
            s = ex.conflict
            q = int(ex.qs[s])
            origin = ex.origin
            first = self._word(ex, origin) if origin is not None and origin != s else None
            conflict = _Conflict(first, self._word(ex, s), not bits[q])
        return _Exploration(bits, ex.nstates, conflict, ex)

    def _word(self, ex: Any, s: int) -> Word:
        word: Word = Counter()
        for k in ex.word(s):
            word[self.types[k].weight] += 1
        return word

    def check(self, pset: frozenset[int], seed: Any = None) -> Any | None:
        """With a fixed P-portion: the exploration when every reachable state is consistent,
        else ``None``. ``seed``: the exploration of the same table for every type but the
        last one (already consistent): only what the last type adds is explored."""
        result = self.mark(pset, seed)
        return result.explored if result.conflict is None else None


# -- the quotient of one round --------------------------------------------------------------------


@dataclass
class _Quotient:
    """A verified quotient of the heaps ``1..n``: multiplication table, P-portion, images."""

    table: list[list[int]]
    pset: frozenset[int]
    images: list[int]  # heap 0..n
    states: Any  # the verification's exploration (kernel arrays), None for the trivial one
    types: list[_HeapType]
    type_of: dict[tuple[int, frozenset[int]], int]


def _column_of(table: list[list[int]]) -> Any:
    def column(g: int) -> list[int]:
        return [row[g] for row in table]

    return column


def _parts_of(rule: TakeAndBreak, heap: int) -> set[tuple[int, ...]]:
    return {parts for _take, parts in rule.options(heap)}


def _option_images(mul: Any, images: list[int], parts: set[tuple[int, ...]]) -> frozenset[int]:
    out = set()
    for ps in parts:
        x = 0
        for part in ps:
            x = mul(x, images[part])
        out.add(x)
    return frozenset(out)


def _types_for(
    mul: Any, images: list[int], parts: list[set[tuple[int, ...]]], zero_splits: bool = False
) -> tuple[list[_HeapType], dict[tuple[int, frozenset[int]], int]]:
    types: list[_HeapType] = []
    index: dict[tuple[int, frozenset[int]], int] = {}
    for heap in range(1, len(images)):
        if not parts[heap]:
            continue
        key = (images[heap], _option_images(mul, images, parts[heap]))
        if key not in index:
            index[key] = len(types)
            types.append(_HeapType(heap, key[0], key[1], _rank(heap, zero_splits)))
    return types, index


def _trivial(budget: Budget) -> _Quotient:
    """The quotient of the empty position alone: ``{1}``, with 1 an N-position."""
    table = [[0]]
    return _Quotient(table, frozenset(), [0], None, [], {})


def _conservative(
    cur: _Quotient, heap: int, opts: frozenset[int], budget: Budget, zero_splits: bool = False
) -> _Quotient | None:
    """The current quotient with heap ``heap`` mapped to an existing element, if one works."""
    table = cur.table
    if not opts:
        return _Quotient(table, cur.pset, [*cur.images, 0], cur.states, cur.types, cur.type_of)
    bit = not (opts & cur.pset)
    same = [key for key in cur.type_of if key[1] == opts]
    if same:
        return _Quotient(
            table, cur.pset, [*cur.images, same[0][0]], cur.states, cur.types, cur.type_of
        )
    order = list(dict.fromkeys([*reversed(cur.images), *range(len(table))]))
    for x in order:
        if (x in cur.pset) != bit:
            continue
        t = _HeapType(heap, x, opts, _rank(heap, zero_splits))
        types = [*cur.types, t]
        explorer = _Explorer(types, budget, _column_of(table), len(table))
        known = explorer.check(cur.pset, cur.states)
        if known is not None:
            type_of = dict(cur.type_of)
            type_of[(x, opts)] = len(cur.types)
            return _Quotient(table, cur.pset, [*cur.images, x], known, types, type_of)
    return None


def _group_rows(columns: list[Any]) -> Any:
    """Number the distinct rows of the integer matrix with the given ``columns`` (equal length,
    non-negative): ``out[i] == out[j]`` iff rows ``i`` and ``j`` are equal, numbers ``0..r-1``.

    Rows are hashed to one 64-bit integer (a fixed random linear form, wrapping) and grouped by
    a one-dimensional ``np.unique``; the grouping is then checked column by column against the
    first row of each group, and a (never yet seen) collision falls back to ``np.unique`` on the
    rows. O(n · c + n log n) for ``n`` rows of ``c`` columns.
    """
    import numpy as np

    coeffs = np.random.default_rng(20261123).integers(
        1, 1 << 62, size=len(columns), dtype=np.uint64
    ) * np.uint64(2) + np.uint64(1)
    h = np.zeros(len(columns[0]), dtype=np.uint64)
    for c, col in zip(coeffs, columns, strict=True):
        h += col.astype(np.uint64) * c
    _, first, inverse = np.unique(h, return_index=True, return_inverse=True)
    inverse = np.asarray(inverse, dtype=np.int64).reshape(-1)
    if all(np.array_equal(col, col[first][inverse]) for col in columns):
        return inverse
    rows = np.stack(columns, axis=1)  # pragma: no cover - a hash collision
    _, inverse = np.unique(rows, axis=0, return_inverse=True)  # pragma: no cover
    return np.asarray(inverse, dtype=np.int64).reshape(-1)  # pragma: no cover


def _minimise(
    cand: _Candidate, pbits: dict[int, bool], letters: list[int], budget: Budget | None = None
) -> tuple[list[list[int]], frozenset[int], dict[int, int]]:
    """Merge elements no product with the letters tells apart (Moore's partition refinement).
    Returns the reduced table, P-portion and the map from candidate elements to reduced ones.

    ``pbits`` marks the elements to reduce (a submonoid: closed under the letters, containing
    the identity ``0``). Reduced elements are numbered by their smallest candidate element (so
    the identity is ``0``). Vectorised on arrays: each round groups the rows ``(block of x,
    block of x·g for each letter g)`` with ``np.unique``; O(R · |M| · L · log |M|) time for
    ``R`` rounds, ``|M|`` marked elements and ``L`` letters, plus O(m²) products for the reduced
    table of ``m`` elements. Same result as its twin :func:`_minimise_py`. ``budget`` is
    checked between rounds and between chunks of the reduced table; a reduced table of more than
    ``_MAX_ORDER`` elements raises :class:`QuotientError`.
    """
    import numpy as np

    budget = budget or Budget()
    elems = np.asarray(sorted(pbits), dtype=np.int64)
    n = len(elems)
    if n == 0 or elems[0] != 0:
        raise AssertionError("the marked elements must contain the identity")
    where = np.full(cand.size, -1, dtype=np.int64)
    where[elems] = np.arange(n, dtype=np.int64)
    budget.check_bytes(8 * (n * (len(letters) + 4) + 2 * cand.size))
    succ = []
    for column in cand.action_rows(letters):
        s = where[column[elems]]
        if (s < 0).any():  # pragma: no cover - a bug: the marked elements are not closed
            raise AssertionError("a product of marked elements is not marked")
        succ.append(s)
    block = np.asarray([int(pbits[int(x)]) for x in elems], dtype=np.int64)
    nblocks = len(np.unique(block))
    while True:
        budget.check()
        block = _group_rows([block, *(block[s] for s in succ)])
        count = int(block.max()) + 1
        if count == nblocks:
            break
        nblocks = count
    # renumber by first appearance in sorted order (the identity, elems[0] = 0, comes first)
    first = np.full(nblocks, n, dtype=np.int64)
    np.minimum.at(first, block, np.arange(n, dtype=np.int64))
    by_first = np.argsort(first, kind="stable")
    order = np.empty(nblocks, dtype=np.int64)
    order[by_first] = np.arange(nblocks, dtype=np.int64)
    reduced = order[block]  # elems[i] -> its reduced element
    rep = elems[first[by_first]]  # the smallest candidate element of each reduced element
    m = nblocks
    if m > _max_order(budget):
        if budget.nbytes is not None:
            raise BudgetExceeded(budget.nbytes, "memory")
        raise QuotientError(
            f"a trial quotient has {m} elements, more than the {_MAX_ORDER} a quotient may have "
            "here: try a smaller heap bound"
        )
    budget.check_bytes(8 * m * m)
    table: list[list[int]] = []
    step = max(1, _ARRAY_ENTRIES // m)
    for i in range(0, m, step):
        budget.check()
        prods = cand.products(rep[i : i + step, None], rep[None, :])
        table += reduced[where[prods]].tolist()
    pmask = np.asarray([pbits[int(x)] for x in elems], dtype=bool)
    pset = frozenset(int(x) for x in np.unique(reduced[pmask]))
    return table, pset, dict(zip(elems.tolist(), reduced.tolist(), strict=True))


def _max_order(budget: Budget) -> int:
    """The most elements a quotient's table may have under ``budget``: what its memory limit
    holds at ``_TABLE_ENTRY_BYTES`` per entry, or ``_MAX_ORDER`` without a memory limit. O(1)."""
    if budget.nbytes is None:
        return _MAX_ORDER
    return math.isqrt(budget.nbytes // _TABLE_ENTRY_BYTES)


def _minimise_py(
    cand: _Candidate, pbits: dict[int, bool], letters: list[int]
) -> tuple[list[list[int]], frozenset[int], dict[int, int]]:
    """The plain twin of :func:`_minimise` (dictionaries and :meth:`_Candidate.mul`; tested
    against it). O(R · |M| · L) time for ``R`` refinement rounds, ``|M|`` marked elements and
    ``L`` letters, plus O(m²) products for the reduced table of ``m`` elements."""
    elems = sorted(pbits)
    block = {x: int(pbits[x]) for x in elems}
    nblocks = len(set(block.values()))
    while True:
        sig: dict[tuple[int, ...], int] = {}
        new: dict[int, int] = {}
        for x in elems:
            key = (block[x], *(block[cand.mul(x, g)] for g in letters))
            new[x] = sig.setdefault(key, len(sig))
        block = new
        if len(sig) == nblocks:
            break
        nblocks = len(sig)
    # renumber: identity first, then in order of first appearance
    order: dict[int, int] = {block[0]: 0}
    for x in elems:
        order.setdefault(block[x], len(order))
    rep: dict[int, int] = {}
    for x in elems:
        rep.setdefault(order[block[x]], x)
    m = len(order)
    table = [[order[block[cand.mul(rep[i], rep[j])]] for j in range(m)] for i in range(m)]
    pset = frozenset(order[block[x]] for x in elems if pbits[x])
    return table, pset, {x: order[block[x]] for x in elems}


@dataclass
class _Trial:
    table: list[list[int]]
    pset: frozenset[int]
    images: list[int]

    def predicts(self, word: Word | None, truth: bool) -> bool:
        if word is None:
            return True
        x = 0
        for h, e in word.items():
            for _ in range(e):
                x = self.table[x][self.images[h]]
        return (x in self.pset) == truth


def _word_element(mul: Any, images: list[int], word: Word) -> int:
    x = 0
    for h, e in word.items():
        for _ in range(e):
            x = mul(x, images[h])
    return x


def _mark_smallest(
    cand: _Candidate, types: list[_HeapType], budget: Budget | None = None
) -> dict[int, bool]:
    """Mark each reachable element with the misère outcome of its smallest position (by total
    size; found by a Dijkstra search over the elements), computed from the marks of that
    position's options (all smaller, so already marked). Products come from precomputed action
    columns of ``cand`` (one per heap image and option image). O(C · size) for the ``C``
    columns plus O(|M| · K · (log |M| + L · |T|)) look-ups for words of at most ``L`` heaps and
    option sets of at most ``|T|`` elements. Same result as its twin :func:`_mark_smallest_py`
    (which it falls back on when the columns would hold more than ``_COLUMN_ENTRIES`` entries).
    ``budget`` is checked every ``CHECK_EVERY`` elements.
    """
    import heapq

    budget = budget or Budget()
    needed = sorted({t.image for t in types}.union(*(t.options for t in types)))
    if len(needed) * cand.size > _COLUMN_ENTRIES:
        return _mark_smallest_py(cand.mul, types)
    columns = {g: row.tolist() for g, row in zip(needed, cand.action_rows(needed), strict=True)}
    act = [columns[t.image] for t in types]
    optcols = [[columns[o] for o in t.options] for t in types]
    weights = [t.rank for t in types]
    kinds = range(len(types))
    dist: dict[int, int] = {0: 0}
    queue: list[tuple[int, tuple[int, ...], int]] = [(0, (), 0)]
    bits: dict[int, bool] = {}
    while queue:
        w, letters, x = heapq.heappop(queue)
        if x in bits:
            continue
        if len(bits) % CHECK_EVERY == 0:
            budget.check()
        has_option = p_option = False
        for i, k in enumerate(letters):
            if (i and letters[i - 1] == k) or not optcols[k]:
                continue
            has_option = True
            rest = 0
            for j, k2 in enumerate(letters):
                if j != i:
                    rest = act[k2][rest]
            if any(bits[col[rest]] for col in optcols[k]):
                p_option = True
                break
        bits[x] = has_option and not p_option
        for k in kinds:
            y = act[k][x]
            w2 = w + weights[k]
            if y not in bits and w2 < dist.get(y, 1 << 62):
                dist[y] = w2
                heapq.heappush(queue, (w2, tuple(sorted((*letters, k))), y))
    return bits


def _mark_smallest_py(mul: Any, types: list[_HeapType]) -> dict[int, bool]:
    """The plain twin of :func:`_mark_smallest` (a product function ``mul`` instead of
    columns; tested against it). O(|M| · K · (log |M| + L · |T|)) products."""
    import heapq

    dist: dict[int, int] = {0: 0}
    word: dict[int, tuple[int, ...]] = {0: ()}
    queue: list[tuple[int, tuple[int, ...], int]] = [(0, (), 0)]
    bits: dict[int, bool] = {}
    while queue:
        w, letters, x = heapq.heappop(queue)
        if x in bits:
            continue
        options: set[int] = set()
        for i, k in enumerate(letters):
            if i and letters[i - 1] == k:
                continue
            rest = 0
            for j, k2 in enumerate(letters):
                if j != i:
                    rest = mul(rest, types[k2].image)
            options.update(mul(rest, o) for o in types[k].options)
        bits[x] = bool(options) and not any(bits[o] for o in options)
        for k, t in enumerate(types):
            y = mul(x, t.image)
            w2 = w + t.rank
            if y not in bits and w2 < dist.get(y, 1 << 62):
                dist[y] = w2
                nxt = tuple(sorted((*letters, k)))
                word[y] = nxt
                heapq.heappush(queue, (w2, nxt, y))
    return bits


class _Pending:
    """A candidate ``base × C(i_h) for the free heaps``, marked by :func:`_mark_smallest`:
    :meth:`predicts` tests a word, :meth:`finish` reduces it to a :class:`_Trial`."""

    def __init__(
        self,
        base: list[list[int]],
        base_images: list[int],
        free: dict[int, int],
        parts: list[set[tuple[int, ...]]],
        budget: Budget,
        zero_splits: bool = False,
    ) -> None:
        budget.check()
        order = sorted(free)
        cand = _Candidate(base, [free[h] for h in order])
        images = [0] * len(base_images)
        for h in range(1, len(base_images)):
            if not parts[h]:
                continue
            if h in free:
                images[h] = cand.generator(order.index(h))
            else:
                images[h] = cand.encode(base_images[h], [0] * len(order))
        types, _ = _types_for(cand.mul, images, parts, zero_splits)
        budget.check_bytes(64 * cand.size * (len(types) + 1))
        self.cand = cand
        self.images = images
        self.types = types
        self.budget = budget
        self.pbits = _mark_smallest(cand, types, budget)
        budget.charge(len(self.pbits))

    def predicts(self, word: Word | None, truth: bool) -> bool:
        """Whether the candidate's marking gives ``word`` the outcome ``truth`` (P when True)."""
        if word is None:
            return True
        x = _word_element(self.cand.mul, self.images, word)
        return self.pbits[x] == truth

    def finish(self) -> _Trial:
        letters = sorted({t.image for t in self.types})
        table, pset, to_reduced = _minimise(self.cand, self.pbits, letters, self.budget)
        return _Trial(table, pset, [to_reduced[x] for x in self.images])


def _trial(
    base: list[list[int]],
    base_images: list[int],
    free: dict[int, int],
    parts: list[set[tuple[int, ...]]],
    budget: Budget,
    zero_splits: bool = False,
) -> _Trial:
    """Mark and reduce the candidate ``base × C(i_h) for the free heaps``."""
    return _Pending(base, base_images, free, parts, budget, zero_splits).finish()


def _power_index(table: list[list[int]], y: int) -> int:
    """The least ``i`` with ``y^i = y^(i+2)`` (capped)."""
    powers = [0]
    for _ in range(_MAX_INDEX + 2):
        powers.append(table[powers[-1]][y])
    for i in range(_MAX_INDEX):
        if powers[i] == powers[i + 2]:
            return i
    return _MAX_INDEX


def _expand(
    cur: _Quotient,
    rule: TakeAndBreak,
    heap: int,
    parts: list[set[tuple[int, ...]]],
    budget: Budget,
) -> _Quotient:
    """The quotient after heap ``heap`` when it is not a conservative extension.

    A trial quotient is marked and reduced, then verified; at its smallest failing position the
    trial is recalibrated: some heaps of the failure become free generators on top of the trial
    (fewest heaps first), and the first recalibration that predicts the failure correctly is the
    next trial. Only a verified trial is ever returned.

    A quotient may be infinite: for 0.354 from heap 5 on, ``1 + 4^(2j) + 5^a`` is first a
    P-position at ``a = 4j + 2`` (checked by exact search for ``1 <= j <= 6``), so the elements
    ``1·4^(2j)`` are all different and heap 5 has no finite cycle. The recalibrations then ask
    for ever longer cycles; once one needs more than ``_MAX_INDEX`` and nothing else explains the
    failure, :class:`QuotientError` says so (rather than "no recalibration explains ...").
    """
    zero_splits = bool(rule.d0)
    trial = _trial(cur.table, [*cur.images, 0], {heap: 2}, parts, budget, zero_splits)
    for _ in range(_MAX_RECALIBRATIONS):
        mul = _table_mul(trial.table)
        types, type_of = _types_for(mul, trial.images, parts, zero_splits)
        size = len(trial.table)
        check = _Explorer(types, budget, _column_of(trial.table), size).mark(trial.pset)
        conflict = check.conflict
        if conflict is None:
            # every reachable state was explored and found consistent: the trial is verified
            # (the same exploration :func:`_verified` would repeat)
            return _Quotient(trial.table, trial.pset, trial.images, check.explored, types, type_of)
        first, second = conflict.first, conflict.second
        heaps = [h for h in sorted(second, reverse=True) if parts[h]]
        if first is not None:
            differ = [
                h
                for h in sorted(set(first) | set(second), reverse=True)
                if parts[h] and first[h] != second[h]
            ]
            heaps = differ + [h for h in heaps if h not in differ]
        choices: list[tuple[int, ...]] = [(h,) for h in heaps]
        choices += [c for c in _pairs(heaps)]
        capped: set[int] = set()  # heaps that needed a longer cycle than _MAX_INDEX allows
        for choice in choices:
            free = {}
            for h in choice:
                e = max(second[h], first[h] if first is not None else 0)
                index = max(2, e - 1, _power_index(trial.table, trial.images[h]))
                if index > _MAX_INDEX:
                    capped.add(h)
                free[h] = min(_MAX_INDEX, index)
            base_images = [0 if h in free else x for h, x in enumerate(trial.images)]
            pending = _Pending(trial.table, base_images, free, parts, budget, zero_splits)
            if pending.predicts(second, conflict.truth) and pending.predicts(
                first, not conflict.truth
            ):
                trial = pending.finish()
                break
        else:
            if capped:
                raise QuotientError(_infinite_message(rule, heap, sorted(capped)))
            raise QuotientError(
                f"could not build the misère quotient of {_name(rule)} at heap {heap}: "
                "no recalibration explains the smallest failing position"
            )
    raise QuotientError(
        f"could not build the misère quotient of {_name(rule)} at heap {heap} within "
        f"{_MAX_RECALIBRATIONS} recalibrations"
    )


def _infinite_message(rule: TakeAndBreak, heap: int, capped: list[int]) -> str:
    """Why a quotient whose powers outgrow ``_MAX_INDEX`` is refused (see :func:`_expand`)."""
    which = " or ".join(str(h) for h in capped)
    return (
        f"could not build the misère quotient of {_name(rule)} at heap {heap}: sums of more "
        f"than {_MAX_INDEX} equal heaps of {which} are still told apart, so the quotient looks "
        "infinite (only finite quotients are built here; exact search still answers every "
        "position)"
    )


def _pairs(heaps: list[int]) -> Iterator[tuple[int, int]]:
    for i, a in enumerate(heaps):
        for b in heaps[i + 1 :]:
            yield a, b


def _table_mul(table: list[list[int]]) -> Any:
    def mul(x: int, y: int) -> int:
        return table[x][y]

    return mul


def periodicity_applies(rule: TakeAndBreak) -> bool:
    """Whether the periodicity test of :func:`_periodicity` can prove ``rule``'s quotient for
    every heap size: a finite code (moves take at most a bounded number of objects) whose splits
    may leave equal heaps. O(1)."""
    return not rule.tail and not rule.unequal


def default_heap_bound(rule: TakeAndBreak) -> int:
    """The heap bound to ask for when none is given: :data:`DEFAULT_HEAP_BOUND` where a period
    may prove the quotient, else :data:`UNPROVEN_HEAP_BOUND`. O(1)."""
    return DEFAULT_HEAP_BOUND if periodicity_applies(rule) else UNPROVEN_HEAP_BOUND


def infinite_reason(rule: TakeAndBreak) -> str:
    """Why the quotient of *all* heaps of ``rule`` is infinite, where that is proven (``""``
    elsewhere: finite or not known).

    Nim and Lasker's Nim (``4.333...``) are *tame*: a position is a misère P-position exactly
    when all its heaps are of at most 1 object and their number is odd, or some heap has 2 or
    more and the XOR of the heaps' Grundy values is 0 (Bouton's misère rule with Grundy values).
    For Lasker's Nim, by induction on positions: heaps of 0 and 1 are Nim's, every heap of 2 or
    more has a Grundy value of 2 or more and can be taken to 0 or to 1 object; from a position
    with a heap of 2 or more and XOR ``s != 0``, Nim's move to an option of value
    ``g XOR s < g`` of one heap is winning when another heap of 2 or more stays, else the move
    of that heap to 0 or 1 leaving an odd number of 1s is; with ``s = 0`` there are two heaps of
    2 or more, one stays after any move, and no option of a heap has the heap's own value, so
    every option has ``s != 0``. Then heaps ``m`` and ``n`` with different Grundy values of 2
    or more are told apart by adding ``m``: ``m + m`` is a P-position, ``n + m`` is not. Grundy
    values grow without bound, so the quotient has infinitely many elements. O(1).
    """
    if rule == TakeAndBreak.nim():
        return (
            "the quotient of all heaps is infinite: in misère Nim two heaps of different sizes, "
            "both of 2 or more, are told apart by adding one of them (Bouton's misère rule)"
        )
    if rule == TakeAndBreak((), tail=3, d0=4):
        return (
            "the quotient of all heaps is infinite: Lasker's Nim is tame (a position is a "
            "P-position when all heaps are 0 or 1 and their number is odd, or some heap is 2 "
            "or more and the XOR of the Grundy values is 0; proof in docs/quotients.md), so heaps "
            "with different Grundy values of 2 or more are told apart, and Grundy values grow "
            "without bound"
        )
    return ""


def _periodicity(rule: TakeAndBreak, images: list[int]) -> tuple[int, int] | None:
    """``(preperiod n0, period p)`` when the images prove the quotient valid for all heaps.

    Theorem. Let the code be finite with moves taking at most ``t`` objects, ``Φ`` verified on
    heaps ``0..N`` (quotient ``Q``), ``n0 >= 1``, ``Φ(h + p) = Φ(h)`` for ``n0 <= h <= N - p`` and
    ``N >= 2*n0 + 2*p + t - 1``. Then setting ``Φ(H) = Φ(H - p)`` for every ``H > N`` keeps ``Q``
    verified (and unchanged) for all heaps.

    Proof, by induction on ``H > N``. A move from heap ``H`` removes ``k <= t < H`` objects
    (``k = 0``: a split by the digit before the point) and leaves parts ``a <= b`` (``a`` may be
    0) with ``b >= (H - t)/2 >= n0 + p``; the same move from ``H - p`` leaves ``a`` and
    ``b - p >= n0 >= 1``, legal for the same digit (not when splits must leave unequal heaps:
    ``a`` may equal ``b - p``, so the test is not applied to them), with
    ``Φ(a)Φ(b - p) = Φ(a)Φ(b)``. Conversely a move from ``H - p`` leaves a larger part
    ``b' >= (H - p - t)/2 >= n0``, and ``b' + p`` is legal from ``H`` with the same image. So
    heap ``H`` has the same image and the same option images as heap ``H - p``: the same *type*.
    The reachable states, hence the verification and the reduced quotient, depend only on the set
    of types, which heap ``H`` does not change. ∎
    """
    if rule.tail or rule.unequal:
        return None
    t = len(rule.digits)
    n = len(images) - 1
    for p in range(1, n + 1):
        n0 = n - p + 1
        while n0 - 1 >= 1 and images[n0 - 1 + p] == images[n0 - 1]:
            n0 -= 1
        n0 = max(n0, 1)
        if n >= 2 * n0 + 2 * p + t - 1:
            return n0, p
    return None


# -- presentation -----------------------------------------------------------------------------


def _letter(i: int) -> str:
    return chr(ord("a") + i) if i < 26 else f"g{i + 1}"


def _word_text(exps: tuple[int, ...]) -> str:
    text = "".join(_letter(i) + (f"^{e}" if e > 1 else "") for i, e in enumerate(exps) if e)
    return text or "1"


def _present(
    table: list[list[int]], images: list[int]
) -> tuple[list[int], list[str], list[str], list[int]]:
    """Generators (heaps whose image is not generated by smaller heaps), a normal-form word for
    each element (graded lexicographic order: fewest letters, then earlier letters first) and
    the relations ``word = normal form`` for the minimal words that are not normal forms."""
    gens: list[int] = []
    reach = {0}
    for heap in range(1, len(images)):
        x = images[heap]
        if x in reach:
            continue
        gens.append(heap)
        frontier = list(reach)
        while frontier:
            y = frontier.pop()
            for g in [images[h] for h in gens]:
                z = table[y][g]
                if z not in reach:
                    reach.add(z)
                    frontier.append(z)
    k = len(gens)
    gimg = [images[h] for h in gens]
    normal: dict[tuple[int, ...], int] = {(0,) * k: 0}
    word_of: dict[int, tuple[int, ...]] = {0: (0,) * k}
    relations: list[str] = []
    layer = [(0,) * k]
    while layer:
        candidates: set[tuple[int, ...]] = set()
        for w in layer:
            for i in range(k):
                candidates.add(tuple(e + (j == i) for j, e in enumerate(w)))
        nxt = []
        for w in sorted(candidates, reverse=True):  # graded lex: a^2 before ab before b^2
            divisors = [tuple(e - (j == i) for j, e in enumerate(w)) for i in range(k) if w[i]]
            if not all(d in normal for d in divisors):
                continue
            d = divisors[0]
            i = next(j for j in range(k) if w[j] != d[j])
            x = table[normal[d]][gimg[i]]
            if x in word_of:
                relations.append(f"{_word_text(w)} = {_word_text(word_of[x])}")
            else:
                word_of[x] = w
                normal[w] = x
                nxt.append(w)
        layer = nxt
    names = [_word_text(word_of[x]) for x in range(len(table))]
    return gens, names, relations, [x for x in range(len(table))]


def _renumber(
    table: list[list[int]], pset: frozenset[int], images: list[int]
) -> tuple[list[list[int]], frozenset[int], list[int], list[str], list[int], list[str]]:
    """Number elements by their normal forms (identity first, then by word length)."""
    gens, names, relations, _ = _present(table, images)
    order = sorted(range(len(table)), key=lambda x: (x != 0, len(names[x]), names[x]))
    new = {old: i for i, old in enumerate(order)}
    t2 = [[new[table[order[i]][order[j]]] for j in range(len(table))] for i in range(len(table))]
    return (
        t2,
        frozenset(new[x] for x in pset),
        [new[x] for x in images],
        [names[x] for x in order],
        gens,
        relations,
    )


# -- the entry points -------------------------------------------------------------------------


_cache_lock = threading.Lock()
_building: dict[TakeAndBreak, tuple[int, int, int]] = {}
"""Per game whose quotient is being computed: the last heap verified, the bound asked and the
order then (see :func:`quotient_building`)."""


def quotient_building(rule: TakeAndBreak) -> tuple[int, int, int] | None:
    """While a :func:`misere_quotient` of ``rule`` runs (in any thread): the last heap it has
    verified, the heap bound it was asked for and the quotient's order then; else ``None``.
    For progress displays. O(1)."""
    return _building.get(rule)


_progress: OrderedDict[TakeAndBreak, _Quotient] = OrderedDict()
"""Per game, the quotient an attempt had verified when its budget ran out (at most
``_CACHE_SIZE`` games): the next attempt goes on from it instead of starting again."""


def _rounds(
    rule: TakeAndBreak, max_heap: int, budget: Budget, start: _Quotient | None = None
) -> Iterator[tuple[int, _Quotient]]:
    """The verified quotients of heaps ``1..heap`` for each heap up to ``max_heap``, from
    ``start`` (a quotient computed before) on."""
    cur = start if start is not None else _trivial(budget)
    parts: list[set[tuple[int, ...]]] = [set()]
    done = len(cur.images) - 1
    for heap in range(1, done + 1):
        parts.append(_parts_of(rule, heap))
    for heap in range(done + 1, max_heap + 1):
        budget.check()
        parts.append(_parts_of(rule, heap))
        opts = _option_images(_table_mul(cur.table), cur.images, parts[heap])
        nxt = _conservative(cur, heap, opts, budget, bool(rule.d0))
        cur = nxt if nxt is not None else _expand(cur, rule, heap, parts, budget)
        yield heap, cur


RoundReport = Callable[[int, int, Callable[[], "MisereQuotient"]], None]
"""Called after each heap with the heap, the order of the quotient verified up to it, and a
function that builds that quotient (O(q²); not proven beyond the heap)."""


def misere_quotient(
    rule: TakeAndBreak,
    max_heap: int,
    *,
    budget: Budget | None = None,
    partial: bool = False,
    on_round: RoundReport | None = None,
) -> MisereQuotient:
    """The misère quotient of all sums of heaps of at most ``max_heap`` objects under ``rule``.

    Heaps are added one by one, and every move leaves heaps smaller than the heap moved in
    (also a split that removes nothing: a digit before the point, Lasker's Nim, Grundy's game),
    so each heap's options are known before it is added.
    With ``partial``, a computation that cannot go on (its budget ran out, or the next heap's
    quotient is too large or looks infinite) answers with the quotient verified up to the last
    heap it finished (not proven, ``heap_bound`` below ``max_heap``, ``reason`` saying where and
    why it stopped) instead of raising.

    The computation stops early when the periodicity test proves the quotient for every heap
    size (``proven``, with ``heap_bound`` the heap it was checked to). Every answer is verified
    exhaustively (see the module docstring), so it agrees with exact search on every position.
    Raises :class:`~nimlab.theory.budget.BudgetExceeded` when ``budget`` runs out, and
    :class:`QuotientError` for a bound out of range, a quotient too large to build (without a
    memory limit in ``budget``, a trial quotient of more than ``_MAX_ORDER`` = 4096 elements;
    with one, ``BudgetExceeded`` when its table would not fit: see :func:`_max_order`) or one
    that looks infinite (a heap whose powers need a cycle longer than ``_MAX_INDEX`` = 16, as
    for 0.354 from heap 5: see :func:`_expand`). Quotients of heaps up to a bound are finitely
    generated, not always finite. An attempt that ran out of its budget is taken up where it
    stopped (see :func:`quotient_progress` and :func:`resume_quotient`). ``on_round`` (a
    progress display, a checkpoint) is called after each heap; see :data:`RoundReport`.

    Complexity: for each heap, O(|Q|) trial verifications of O(S · K · |T|) each in the worst
    case (usually one), where ``S`` is the number of reachable states; see the module docstring.
    """
    if not isinstance(max_heap, int) or max_heap < 0 or max_heap > MAX_HEAP_LIMIT:
        raise QuotientError(f"the heap bound must be 0 to {MAX_HEAP_LIMIT}, got {max_heap!r}")
    budget = budget or Budget()
    with _cache_lock:
        start = _progress.get(rule)
    if start is not None and len(start.images) - 1 > max_heap:
        start = None
    cur = start if start is not None else _trivial(budget)
    found: tuple[int, int] | None = None
    try:
        for heap, cur in _rounds(rule, max_heap, budget, start):
            _building[rule] = (heap, max_heap, len(cur.table))
            found = _periodicity(rule, cur.images)
            if found is not None:
                break
            if on_round is not None:
                on_round(heap, len(cur.table), functools.partial(_result, rule, cur, None))
    except BudgetExceeded:
        if len(cur.images) > 1:
            with _cache_lock:  # a later attempt, with a budget of its own, goes on from here
                _progress[rule] = cur
                _progress.move_to_end(rule)
                while len(_progress) > _CACHE_SIZE:
                    _progress.popitem(last=False)
        if not partial:
            raise
        return _result(rule, cur, None, "the time or memory allowed ran out")
    except QuotientError as e:
        if not partial:
            raise
        return _result(rule, cur, None, str(e))
    finally:
        _building.pop(rule, None)
    with _cache_lock:
        _progress.pop(rule, None)
    return _result(rule, cur, found)


def quotient_progress(rule: TakeAndBreak) -> MisereQuotient | None:
    """The quotient of the heaps up to where the last attempt that ran out of its budget got
    (verified like every other; not proven for larger heaps), or ``None``. O(q²) for a quotient
    of q elements."""
    with _cache_lock:
        cur = _progress.get(rule)
    return None if cur is None else _result(rule, cur, None)


def verified_heaps(rule: TakeAndBreak) -> int:
    """The heap up to which the last attempt that ran out of its budget had verified the
    quotient (0 when none is kept). O(1)."""
    with _cache_lock:
        cur = _progress.get(rule)
    return 0 if cur is None else len(cur.images) - 1


def resume_quotient(
    rule: TakeAndBreak,
    table: list[list[int]],
    p_elements: Iterable[int],
    heap_images: list[int],
    *,
    budget: Budget | None = None,
) -> int:
    """Take up a quotient of ``rule`` verified before (the ``table``, ``p_elements`` and
    ``heap_images`` of a :class:`MisereQuotient`, e.g. from :func:`quotient_progress`, kept in a
    file): the next :func:`misere_quotient` of ``rule`` with a bound at least its heap bound goes
    on from it. Nothing is trusted: the table must be a commutative monoid with identity 0
    generated by the heap images (associativity by Light's test on those generators) and the
    quotient is verified again exhaustively, as every round is. Returns its heap bound.

    Raises :class:`QuotientError` saying what is wrong, and
    :class:`~nimlab.theory.budget.BudgetExceeded` when ``budget`` runs out. Complexity:
    O(q² · k) for q elements and k distinct heap images, plus one verification (O(S · K · |T|)).
    """
    import numpy as np

    budget = budget or Budget()
    m = len(table)
    if m == 0 or m > _max_order(budget) or any(len(row) != m for row in table):
        raise QuotientError(f"the table must be square with 1 to {_max_order(budget)} rows")
    t = np.asarray(table, dtype=np.int64)
    images = [int(x) for x in heap_images]
    pset = frozenset(int(x) for x in p_elements)
    n = len(images) - 1
    if t.min() < 0 or t.max() >= m or not all(0 <= x < m for x in [*images, *pset]):
        raise QuotientError(f"elements are numbered 0 to {m - 1}")
    if n < 1 or n > MAX_HEAP_LIMIT or images[0] != 0:
        raise QuotientError("the heap images start with heap 0 (the identity, 0)")
    budget.check()
    if (t[0] != np.arange(m)).any() or (t != t.T).any():
        raise QuotientError("the table is not commutative with identity 0")
    gens = sorted(set(images[1:]))
    for g in gens:  # Light's test: (x g) y == x (g y) for all x, y and every generator g
        budget.check()
        if (t[t[:, g]] != t[:, t[g]]).any():
            raise QuotientError("the table is not associative")
    seen = np.zeros(m, dtype=bool)
    seen[0] = True
    frontier = np.asarray([0])
    while frontier.size:
        nxt = np.unique(t[np.ix_(frontier, np.asarray(gens, dtype=np.int64))].ravel())
        nxt = nxt[~seen[nxt]]
        seen[nxt] = True
        frontier = nxt
    if not seen.all():
        raise QuotientError("the heap images do not generate every element")
    parts: list[set[tuple[int, ...]]] = [set()] + [_parts_of(rule, h) for h in range(1, n + 1)]
    rows = t.tolist()
    types, type_of = _types_for(_table_mul(rows), images, parts, bool(rule.d0))
    explored = _Explorer(types, budget, _column_of(rows), m).check(pset)
    if explored is None:
        raise QuotientError(
            f"the quotient does not predict the misère outcomes of {rule.code}: it is not one "
            "computed for this game"
        )
    with _cache_lock:
        _progress[rule] = _Quotient(rows, pset, images, explored, types, type_of)
        _progress.move_to_end(rule)
        while len(_progress) > _CACHE_SIZE:
            _progress.popitem(last=False)
    return n


def _result(
    rule: TakeAndBreak, cur: _Quotient, found: tuple[int, int] | None, stopped: str = ""
) -> MisereQuotient:
    """The quotient ``cur`` as a result: proven by the period ``found``, or verified up to its
    bound only (``stopped``: why the computation went no further)."""
    table, pset, images, names, gens, relations = _renumber(cur.table, cur.pset, cur.images)
    bound = len(images) - 1
    if found is not None:
        n0, p = found
        reason = (
            f"heap images repeat with period {p} from heap {n0} on, checked up to heap {bound} "
            f">= 2·{n0} + 2·{p} + {len(rule.digits)} - 1 (periodicity test), so the quotient "
            "holds for every heap size"
        )
    else:
        reason = f"verified for heaps up to {bound} only"
        if stopped:
            reason += f"; stopped at heap {bound + 1}: {stopped}"
        infinite = infinite_reason(rule)
        if infinite:
            reason += f"; {infinite}"
        elif rule.tail:
            reason += "; moves take without bound, so no period can prove it for larger heaps"
        elif rule.unequal:
            reason += (
                "; the periodicity test does not cover splits into unequal heaps, so nothing "
                "proves it for larger heaps"
            )
        else:
            reason += "; no proven period within them"
    return MisereQuotient(
        rule=rule,
        heap_bound=bound,
        order=len(table),
        p_count=len(pset),
        elements=tuple(names),
        generators=tuple(_letter(i) for i in range(len(gens))),
        generator_heaps=tuple(gens),
        relations=tuple(relations),
        heap_images=tuple(images),
        p_elements=tuple(sorted(pset)),
        table=tuple(tuple(row) for row in table),
        proven=found is not None,
        period=found[1] if found else None,
        preperiod=found[0] if found else None,
        reason=reason,
    )


_cache: OrderedDict[TakeAndBreak, MisereQuotient] = OrderedDict()


def cached_quotient(rule: TakeAndBreak, max_heap: int) -> MisereQuotient | None:
    """The quotient of ``rule`` :func:`quotient_for` keeps, when it covers heaps up to
    ``max_heap`` (else ``None``; nothing is computed). O(1)."""
    with _cache_lock:
        q = _cache.get(rule)
    return q if q is not None and q.covers(max_heap) else None


def quotient_for(
    rule: TakeAndBreak, max_heap: int, *, budget: Budget | None = None
) -> MisereQuotient:
    """A quotient of ``rule`` covering heaps up to ``max_heap``, from a cache of at most
    ``_CACHE_SIZE`` rules (least recently used dropped; thread safe). A cached quotient that
    covers the heap is returned at once; otherwise the bound grows (at least doubling, where a
    period may prove the quotient; else to ``max_heap`` only) and the quotient is recomputed.
    Same errors as :func:`misere_quotient`."""
    with _cache_lock:
        q = _cache.get(rule)
        if q is not None:
            _cache.move_to_end(rule)
            if q.covers(max_heap):
                return q
    grow = q is not None and periodicity_applies(rule)
    bound = max(max_heap, 2 * q.heap_bound if q is not None and grow else max_heap)
    bound = min(max(bound, max_heap), MAX_HEAP_LIMIT)
    q = misere_quotient(rule, bound, budget=budget)
    with _cache_lock:
        _cache[rule] = q
        _cache.move_to_end(rule)
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return q


__all__ += ["BudgetExceeded"]
