"""Kayles' misère quotient of the heaps up to N, counted by a method that shares nothing with
nimlab: plain memoised misère search on positions of Kayles (octal 0.77: take one or two from a
heap, leaving zero, one or two heaps) and a count of the classes it tells apart. See
docs/quotients.md for why nimlab's quotient of all heaps has 40 elements.

The count is a *lower* bound on the order of the quotient of A_N (all sums of heaps <= N):
positions with different outcome rows really are distinguishable. nimlab's quotient gives the
*upper* bound: its map to a monoid predicts every outcome (checked below against the same plain
search), so positions with the same element are indistinguishable. Equal bounds pin the order.
For every bound at once, :func:`certified_orders` checks nimlab's proven quotient as a certificate
(local consistency of every reachable state, then partition refinement), again without nimlab.
"""

from __future__ import annotations

import heapq
import random
import sys

import pytest

from nimlab.theory.octal import TakeAndBreak
from nimlab.theory.quotient import MisereQuotient, misere_quotient

BITS = 8  # a position is an int: the count of heaps of size h in bits [BITS*(h-1), BITS*h)


def kayles_parts(heap: int) -> list[tuple[int, ...]]:
    """The heaps a move in one Kayles heap leaves: take 1 or 2, split the rest in two or not."""
    out = set()
    for take in (1, 2):
        rest = heap - take
        for left in range(rest // 2 + 1) if rest >= 0 else ():
            out.add(tuple(p for p in (left, rest - left) if p > 0))
    return sorted(out)


class PlainKayles:
    """Misère outcomes of sums of Kayles heaps of at most ``max_heap``, by memoised search."""

    def __init__(self, max_heap: int) -> None:
        self.max_heap = max_heap
        self.unit = [0] + [1 << (BITS * (h - 1)) for h in range(1, max_heap + 1)]
        self.moves = [[0]] + [
            [sum(self.unit[p] for p in parts) - self.unit[h] for parts in kayles_parts(h)]
            for h in range(1, max_heap + 1)
        ]
        self.memo: dict[int, bool] = {0: False}  # misère: no move, the player to move wins

    def position(self, heaps: tuple[int, ...] | list[int]) -> int:
        return sum(self.unit[h] for h in heaps)

    def is_p(self, x: int) -> bool:
        """Whether ``x`` is a misère P-position: it has a move and every option is an N-position."""
        known = self.memo.get(x)
        if known is not None:
            return known
        p, rest, heap, mask = True, x, 1, (1 << BITS) - 1
        while rest and p:
            if rest & mask:
                p = not any(self.is_p(x + d) for d in self.moves[heap])
            rest >>= BITS
            heap += 1
        self.memo[x] = p
        return p

    def small(self, total: int) -> list[int]:
        """Every position of at most ``total`` objects."""
        out: list[int] = []

        def grow(x: int, largest: int, left: int) -> None:
            out.append(x)
            for h in range(min(largest, left), 0, -1):
                grow(x + self.unit[h], h, left - h)

        grow(0, self.max_heap, total)
        return out

    def told_apart(self) -> int:
        """How many classes of A_N the search tells apart: positions are explored smallest first
        (adding one heap to a representative), each is compared with the representatives by its
        outcomes in sums with the distinguishers (small positions and the representatives found
        so far), and the distinguishers grow until the representatives stop changing."""
        distinguishers = self.small(4)
        while True:
            reps: list[int] = []
            rows: set[tuple[bool, ...]] = set()
            done: set[int] = set()
            queue = [(0, 0)]
            while queue:
                size, x = heapq.heappop(queue)
                if x in done:
                    continue
                done.add(x)
                r = tuple(self.is_p(x + z) for z in distinguishers)
                if r in rows:
                    continue
                rows.add(r)
                reps.append(x)
                for h in range(1, self.max_heap + 1):
                    heapq.heappush(queue, (size + h, x + self.unit[h]))
            new = [x for x in reps if x not in set(distinguishers)]
            if not new:
                return len(reps)
            distinguishers += new


KAYLES = TakeAndBreak.octal("0.77")


def test_the_plain_search_knows_kayles() -> None:
    g = PlainKayles(6)
    assert kayles_parts(4) == [(1, 1), (1, 2), (2,), (3,)]
    assert not g.is_p(0) and g.is_p(g.position([1])) and not g.is_p(g.position([1, 1]))
    assert g.is_p(g.position([2, 2])) and g.is_p(g.position([1, 1, 1]))


@pytest.fixture(autouse=True)
def deep_recursion() -> object:
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 20_000))
    yield None
    sys.setrecursionlimit(old)


@pytest.mark.parametrize("bound", range(1, 12))
def test_orders_per_heap_bound_equal_an_independent_count(bound: int) -> None:
    """nimlab's order of the quotient of heaps <= N equals the number of classes plain search
    tells apart (2, 6, 6, 6, 12, 12, 12, 12, 18, 18, 18 for N = 1..11; the same count gives 24
    for N = 12..24, up to a minute each, too slow for the suite)."""
    q = misere_quotient(KAYLES, bound)
    g = PlainKayles(bound)
    assert q.order == g.told_apart()
    # the upper bound's premise: the quotient predicts the exact outcome of every small position
    for x in g.small(min(3 * bound, 18)):
        heaps = [h for h in range(1, bound + 1) for _ in range((x >> (BITS * (h - 1))) & 255)]
        assert q.is_p(q.element_of(heaps)) == g.is_p(x), heaps


def test_the_proven_quotient_predicts_plain_search_on_larger_heaps() -> None:
    """The 40-element quotient of all heaps against plain search on sums with heaps to 40."""
    q = misere_quotient(KAYLES, 200)
    assert q.proven and (q.order, q.p_count, q.period, q.preperiod) == (40, 9, 12, 71)
    g = PlainKayles(40)
    rng = random.Random(77)
    for _ in range(300):
        heaps = [rng.randint(1, 40) for _ in range(rng.randint(1, 3))]
        if sum(heaps) <= 42:
            assert q.is_p(q.element_of(heaps)) == g.is_p(g.position(heaps)), heaps


# -- a certificate, checked without nimlab's algorithm -------------------------------------------


def certified_orders(
    table: tuple[tuple[int, ...], ...], p_elements: set[int], images: list[int], bounds: list[int]
) -> dict[int, int]:
    """The order of the misère quotient of A_N for each N in ``bounds``, from a claimed model
    (a multiplication table, a P-portion, an element ``images[h]`` for each Kayles heap h), or an
    AssertionError when the model is wrong anywhere. Nothing of nimlab is used.

    1. The table is a commutative monoid with identity 0, so a position's element is the product
       of its heaps' images, in any order.
    2. The model predicts every misère outcome of A_N: "x is a P-position iff its element is in
       the P-portion" holds for every position iff, for every reachable pair (element of x,
       set of elements of the options of x), the element is in the P-portion exactly when the
       set is non-empty and meets no P-element (induction on positions: misère, a position
       without moves is an N-position). All such pairs are reached from the empty position by
       adding heaps, and adding a heap only depends on the heap's image and its options' images.
    3. Then positions with equal elements are indistinguishable, and two elements are told apart
       by some position iff partition refinement (by the P-portion, then by products with the
       heap images) separates them; the classes of the elements reached are the quotient.
    """
    n = len(table)
    assert all(table[0][x] == x for x in range(n))
    assert all(table[x][y] == table[y][x] for x in range(n) for y in range(n))
    assert all(
        table[table[x][y]][z] == table[x][table[y][z]]
        for x in range(n)
        for y in range(n)
        for z in range(n)
    )

    def element(heaps: tuple[int, ...]) -> int:
        x = 0
        for h in heaps:
            x = table[x][images[h]]
        return x

    orders = {}
    for bound in bounds:
        types = {
            (images[h], frozenset(element(parts) for parts in kayles_parts(h)))
            for h in range(1, bound + 1)
        }
        start: tuple[int, frozenset[int]] = (0, frozenset())
        seen, stack = {start}, [start]
        while stack:
            x, options = stack.pop()
            assert (x in p_elements) == (bool(options) and not options & p_elements), (x, options)
            for g, heap_options in types:
                state = (
                    table[x][g],
                    frozenset([table[y][g] for y in options] + [table[x][z] for z in heap_options]),
                )
                if state not in seen:
                    seen.add(state)
                    stack.append(state)
        gens = sorted({images[h] for h in range(1, bound + 1)})
        reached, frontier = {0}, [0]
        while frontier:
            x = frontier.pop()
            for g in gens:
                if table[x][g] not in reached:
                    reached.add(table[x][g])
                    frontier.append(table[x][g])
        cls = {x: int(x in p_elements) for x in reached}
        while True:
            keys = {x: (cls[x], *(cls[table[x][g]] for g in gens)) for x in reached}
            ids: dict[tuple[int, ...], int] = {}
            new = {x: ids.setdefault(keys[x], len(ids)) for x in reached}
            if len(ids) == len(set(cls.values())):
                break
            cls = new
        orders[bound] = len(ids)
    return orders


@pytest.fixture(scope="module")
def proven() -> MisereQuotient:
    return misere_quotient(KAYLES, 200)


def test_an_independent_check_of_the_certificate_pins_every_order(proven: MisereQuotient) -> None:
    """nimlab's proven quotient, read as a certificate (table, P-portion, heap images) and checked
    by :func:`certified_orders` with the heap images continued by its period: for every heap bound
    N the order of the quotient of A_N is exactly the one in docs/quotients.md, 40 from N = 27 on
    (so 40 for all sums of Kayles heaps, by the periodicity test)."""
    q = proven
    assert q.proven and q.period is not None and q.preperiod is not None
    images = [q.image(h) for h in range(0, 301)]
    bounds = [1, 2, 4, 5, 8, 9, 11, 12, 24, 25, 26, 27, 300]  # each end of each range
    expected = [2, 6, 6, 12, 12, 18, 18, 24, 24, 32, 32, 40, 40]
    orders = certified_orders(q.table, set(q.p_elements), images, bounds)
    assert orders == dict(zip(bounds, expected, strict=True))  # bound by bound: test_quotient.py


def test_the_certificate_check_rejects_a_wrong_model(proven: MisereQuotient) -> None:
    """The check can fail: one P-element moved out of the P-portion, or one heap given the image
    of another, and some reachable state is inconsistent."""
    q = proven
    images = [q.image(h) for h in range(0, 61)]
    wrong_p = set(q.p_elements) - {q.p_elements[-1]}
    with pytest.raises(AssertionError):
        certified_orders(q.table, wrong_p, images, [60])
    swapped = list(images)
    swapped[25], swapped[27] = images[27], images[25]
    with pytest.raises(AssertionError):
        certified_orders(q.table, set(q.p_elements), swapped, [30])
