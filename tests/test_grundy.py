"""Grundy sequences of take-and-break games: fast paths against the pure-Python twin, published
values and periods, the exact Guy–Smith bound, and the API's edges."""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager
from functools import reduce
from operator import xor
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import nimlab.theory.grundy as grundy_module
from nimlab.theory.grundy import (
    GrundySequence,
    Method,
    _sequence_with_mask,
    grundy_sequence,
    grundy_value,
    naive_grundy,
)
from nimlab.theory.octal import TakeAndBreak
from nimlab.theory.outcome import Outcome
from nimlab.theory.positions import canonical
from nimlab.theory.solver import ExactSolver

# -- strategies ----------------------------------------------------------------------------------

octal_rules = (
    st.lists(st.integers(0, 7), min_size=1, max_size=4)
    .filter(any)
    .map(lambda digits: TakeAndBreak(tuple(digits)))
)
subtraction_rules = st.sets(st.integers(1, 8), min_size=1, max_size=4).map(TakeAndBreak.subtraction)
finite_rules = st.one_of(octal_rules, subtraction_rules)
tail_rules = st.builds(
    lambda digits, tail: TakeAndBreak(tuple(digits), tail),
    st.lists(st.integers(0, 7), max_size=3),
    st.integers(1, 7),
)
METHODS: tuple[Method, ...] = ("auto", "sparse", "quadratic")


def values(seq: GrundySequence) -> list[int]:
    return [int(v) for v in seq.values]


@contextmanager
def engine_constants(**changed: Any) -> Iterator[None]:
    """The engine's module constants ``changed`` for the time of a block (hypothesis tests
    cannot take the monkeypatch fixture)."""
    saved = {name: getattr(grundy_module, name) for name in changed}
    for name, value in changed.items():
        setattr(grundy_module, name, value)
    try:
        yield
    finally:
        for name, value in saved.items():
            setattr(grundy_module, name, value)


# -- fast paths = the pure-Python twin -----------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(rule=finite_rules, n=st.integers(0, 60))
def test_every_method_equals_naive(rule: TakeAndBreak, n: int) -> None:
    expected = naive_grundy(rule, n)
    for method in METHODS:
        seq = grundy_sequence(rule, n, method=method)
        assert values(seq) == expected, method
        assert seq.values.dtype == np.uint16


@settings(max_examples=150, deadline=None)
@given(
    rule=octal_rules,
    n=st.integers(0, 80),
    mask=st.integers(1, 255),
    positional=st.booleans(),
)
def test_sparse_method_is_exact_for_any_mask(
    rule: TakeAndBreak, n: int, mask: int, positional: bool
) -> None:
    """The rare/common split only decides what is searched, never the values."""
    splits = {k & 1 for k, d in enumerate(rule.digits, 1) if d & 4}
    assume(not positional or len(splits) <= 1)
    assert values(_sequence_with_mask(rule, n, mask, positional=positional)) == naive_grundy(
        rule, n
    )


@settings(max_examples=100, deadline=None)
@given(
    rule=octal_rules,
    n=st.integers(0, 160),
    mask=st.integers(1, 255),
    block=st.integers(1, 6),
)
def test_sparse_search_in_blocks_is_exact(
    rule: TakeAndBreak, n: int, mask: int, block: int
) -> None:
    """The last pending values are looked for in blocks of pairs from both ends: any block
    length (tiny ones split the pairs into many blocks of both kinds) gives the plain values."""
    with engine_constants(_BLOCK=block):
        got = values(_sequence_with_mask(rule, n, mask))
    assert got == naive_grundy(rule, n)


@settings(max_examples=120, deadline=None)
@given(
    rule=octal_rules,
    d0=st.sampled_from([0, 4]),
    n=st.integers(0, 200),
    mask=st.one_of(st.none(), st.integers(1, 63)),
    positional=st.booleans(),
    unequal=st.booleans(),
    width=st.sampled_from([1, 2, 4, 8, 16, 64]),
    far_block=st.sampled_from([0, 2, 5]),
    auto=st.booleans(),
)
def test_sparse_kernel_on_words_is_exact_on_both_sides_of_its_width(
    rule: TakeAndBreak,
    d0: int,
    n: int,
    mask: int | None,
    positional: bool,
    unequal: bool,
    width: int,
    far_block: int,
    auto: bool,
) -> None:
    """While every value is below the word's width the sparse method keeps a heap's options
    in one word (the rare heaps of a block of 16 heaps paired at once); the first heap whose
    value needs more is left to the kernel of stamps. Whichever width (so wherever the switch
    falls, if it does), with any mask, equal splits allowed or not, and with the far pairing in
    blocks or the plain kernel (``auto``, the mask chosen as it goes: the plain one while no
    mask makes the rare heaps few) taking turns with it, whose values may outgrow the width
    meanwhile, the values are the plain mex's."""
    rule = TakeAndBreak(rule.digits, d0=d0)
    splits = {k & 1 for k, d in enumerate((d0, *rule.digits)) if d & 4}
    positional = positional and mask is not None
    assume(splits and (not positional or len(splits) <= 1))
    changed: dict[str, Any] = {"_NARROW": width, "_SPARSE_FROM": 8}
    if far_block:
        changed |= {"_FAR_BLOCK": far_block, "_FAR_RARE": 1, "_THREADS": 1}
    with engine_constants(**changed):
        method: Method = "auto" if auto else "sparse"
        engine = grundy_module._Engine(
            rule, n, method, mask=mask, positional=positional, unequal=unequal
        )
        engine.chunk = 7  # many calls, each starting mid-block
        engine.extend(n, None, n)
        got = values(engine.result())
    assert got == (naive_unequal(rule, n) if unequal else naive_grundy(rule, n))


@pytest.mark.parametrize("threads", [1, 2])
def test_the_kernel_on_words_never_sees_a_value_beyond_its_width(
    monkeypatch: pytest.MonkeyPatch, threads: int
) -> None:
    """4.044's first 2,048 values (by the plain kernel) reach 256: the sparse kernel on words,
    whose options are the bits of one word, must then never run (a value of 65 would mark
    option 1); the kernel of stamps computes the rest, and the values are the plain ones."""
    monkeypatch.setattr(grundy_module, "_THREADS", threads)
    rule = TakeAndBreak((0, 4, 4), d0=4)
    expected = values(grundy_sequence(rule, 4000, method="quadratic"))
    assert max(expected[:2048]) == 256
    engine = grundy_module._Engine(rule, 4000, "auto")
    seen: list[int] = []
    narrow_call = engine._narrow_call

    def watched(stop: int) -> int:
        seen.append(int(engine.g[: engine.count].max()))
        return narrow_call(stop)

    engine._narrow_call = watched  # type: ignore[method-assign]
    engine.extend(4000, None, 4000)
    assert values(engine.result()) == expected
    assert all(top < grundy_module._NARROW for top in seen)


@settings(max_examples=100, deadline=None)
@given(
    rule=octal_rules,
    d0=st.sampled_from([0, 4]),
    n=st.integers(0, 300),
    mask=st.integers(1, 63),
    unequal=st.booleans(),
    block=st.integers(1, 9),
    width=st.sampled_from([4, 64]),
)
def test_values_guessed_on_one_thread_and_checked_on_the_other_are_exact(
    rule: TakeAndBreak, d0: int, n: int, mask: int, unequal: bool, block: int, width: int
) -> None:
    """On two threads the sparse kernel on words guesses each heap's value (its bound c) a block
    at a time while the other thread checks the block before; a wrong guess (the next rare
    heap) is set right and the blocks after it are guessed again. Any block length, mask and
    width gives the plain mex's values."""
    rule = TakeAndBreak(rule.digits, d0=d0)
    assume(any(d & 4 for d in (d0, *rule.digits)))
    with engine_constants(_THREADS=2, _GUESS_FROM=1, _GUESS_BLOCK=block, _NARROW=width):
        engine = grundy_module._Engine(rule, n, "sparse", mask=mask, unequal=unequal)
        engine.extend(n, None, n)
        got = values(engine.result())
    assert got == (naive_unequal(rule, n) if unequal else naive_grundy(rule, n))


def test_wrong_guesses_are_the_rare_heaps(monkeypatch: pytest.MonkeyPatch) -> None:
    """0.106 past its first values: every rare heap after the first ones is met as a wrong guess
    of the thread that guesses, and the values are still the plain ones."""
    rule = TakeAndBreak.octal("0.106")
    expected = values(grundy_sequence(rule, 3000, method="quadratic"))
    for name, value in (("_THREADS", 2), ("_GUESS_FROM", 64), ("_GUESS_BLOCK", 16)):
        monkeypatch.setattr(grundy_module, name, value)
    engine = grundy_module._Engine(rule, 3000, "sparse", mask=13, positional=True)
    together = engine._run_narrow_together
    wrong: list[int] = []
    first: list[int] = []

    def counted(stop: int) -> int:
        first.append(engine.count)
        nrare = engine.nrare
        status = together(stop)
        if engine.nrare > nrare:
            wrong.append(int(engine.rare_pos[engine.nrare - 1]))
        return status

    engine._run_narrow_together = counted  # type: ignore[method-assign]
    engine.extend(3000, None, 3000)
    assert values(engine.result()) == expected
    rare = [int(r) for r in engine.rare_pos[: engine.nrare]]
    assert rare[:8] == [3, 7, 10, 26, 68, 84, 96, 101]  # (0.106's rare heaps for this mask)
    assert wrong == [r for r in rare if r >= first[0]] and len(wrong) >= 5


@settings(max_examples=200, deadline=None)
@given(
    data=st.data(),
    stop=st.integers(3, 120),
    splits=st.sets(st.integers(0, 5), min_size=1, max_size=3),
    unequal=st.integers(0, 1),
    middle=st.integers(0, 5),
)
def test_far_pairing_marks_exactly_its_options(
    data: st.DataObject, stop: int, splits: set[int], unequal: int, middle: int
) -> None:
    """``sparse_far`` (several heaps per pass over the rare heaps where a block has room, one
    heap at a time elsewhere) marks for each heap n exactly the values of its splits with a rare
    heap of the indices given and of at least ``n - start + lag``, and of its ``middle`` splits
    nearest the middle: by definition."""
    from nimlab.theory import _grundy_kernels as kernels

    g = np.array(data.draw(st.lists(st.integers(0, 63), min_size=stop, max_size=stop)), np.uint16)
    start = data.draw(st.integers(1, stop - 1))
    pos = sorted(data.draw(st.sets(st.integers(1, stop - 1), max_size=40)))
    val = [int(g[r]) for r in pos]
    lo = data.draw(st.integers(0, len(pos)))
    hi = data.draw(st.integers(lo, len(pos)))
    lag = data.draw(st.integers(0, 12))
    split_k = np.array(sorted(splits), np.int64)
    far = np.full((stop - start, 128), 7, np.uint8)
    rare_pos, rare_val = np.array(pos, np.int64), np.array(val, np.int64)
    args = (g, start, stop, split_k, rare_pos, rare_val, lo, lag, hi, unequal, middle, far)
    kernels.sparse_far(*args)
    for n in range(start, stop):
        want = set()
        for k in sorted(splits):
            tot = n - k
            if tot < 2:
                continue
            for r, w in zip(pos[lo:hi], val[lo:hi], strict=True):
                if r < n - start + lag:
                    continue  # (later heaps of the block take only larger rare heaps)
                if r < tot and not (unequal and 2 * r == tot):
                    want.add(w ^ int(g[tot - r]))
            top = (tot - unequal) // 2
            want |= {int(g[a] ^ g[tot - a]) for a in range(max(1, top - middle + 1), top + 1)}
        row = far[n - start]
        assert set(np.flatnonzero(row).tolist()) == want, n
        assert set(row.tolist()) <= {0, 1}


@settings(max_examples=150, deadline=None)
@given(
    rule=st.one_of(octal_rules, octal_rules.map(lambda r: TakeAndBreak(r.digits, d0=4))),
    n=st.integers(0, 300),
    mask=st.integers(1, 255),
    far_block=st.integers(1, 40),
    middle=st.integers(0, 6),
    unequal=st.booleans(),
    threads=st.sampled_from([1, 2]),
)
def test_rare_heaps_paired_by_blocks_give_the_plain_values(
    rule: TakeAndBreak, n: int, mask: int, far_block: int, middle: int, unequal: bool, threads: int
) -> None:
    """The large rare heaps are paired a block of heaps at a time (four heaps per pass over the
    rare heaps where the block has room): on two threads the other one pairs them (and the
    splits nearest the middle) for the next block, on one thread this one does before each
    block. Small blocks (many of them, with every kind of rare heap and split divided between
    the two kernels) give the plain values, also when splits into equal heaps are forbidden."""
    with engine_constants(
        _THREADS=threads, _FAR_BLOCK=far_block, _FAR_RARE=1, _FAR_MIDDLE=middle, _CHUNK_SECONDS=0.0
    ):
        engine = grundy_module._Engine(rule, n, "sparse", mask=mask, unequal=unequal)
        blocks = 0
        run_far = engine._run_far

        def counted(stop: int, together: bool) -> bool:
            nonlocal blocks
            assert together == (threads == 2)
            blocks += 1
            return run_far(stop, together)

        engine._run_far = counted  # type: ignore[method-assign]
        engine.chunk = 3 * far_block + 1  # calls of a few blocks each (blocks start early)
        engine.extend(n, None, n)
        got = values(engine.result())
    assert got == (naive_unequal(rule, n) if unequal else naive_grundy(rule, n))
    if n > 12 * far_block and engine.nrare > 4 * far_block:
        assert blocks > 0  # (blocks were really used)


def naive_unequal(rule: TakeAndBreak, n: int) -> list[int]:
    """The plain mex when no split may leave two equal heaps (as in Grundy's game)."""
    g: list[int] = []
    for m in range(n):
        options = set()
        for _take, parts in rule.options(m):
            if len(parts) == 2 and parts[0] == parts[1]:
                continue
            options.add(reduce(xor, (g[p] for p in parts), 0))
        v = 0
        while v in options:
            v += 1
        g.append(v)
    return g


@settings(max_examples=60, deadline=None)
@given(rule=tail_rules, n=st.integers(0, 40))
def test_infinite_tails_equal_naive(rule: TakeAndBreak, n: int) -> None:
    seq = grundy_sequence(rule, n)
    assert values(seq) == naive_grundy(rule, n)
    assert not seq.proven


@pytest.mark.parametrize(
    "code", ["0.77", "0.07", "0.137", "0.16", "0.127", "0.354", "0.376", "0.1777", "0.6", "0.106"]
)
def test_classic_games_agree_across_methods(code: str) -> None:
    rule = TakeAndBreak.octal(code)
    quadratic = values(grundy_sequence(rule, 4000, method="quadratic"))
    assert quadratic[:300] == naive_grundy(rule, 300)
    assert values(grundy_sequence(rule, 4000, method="sparse")) == quadratic
    assert values(grundy_sequence(rule, 4000)) == quadratic


@settings(max_examples=25, deadline=None)
@given(
    digits=st.lists(st.integers(0, 7), min_size=1, max_size=4).filter(
        lambda ds: any(d & 4 for d in ds)
    ),
    d0=st.sampled_from([0, 4]),
    n=st.integers(2100, 3000),
    threads=st.sampled_from([1, 2]),
)
def test_rare_heaps_paired_with_every_removal_at_once(
    digits: list[int], d0: int, n: int, threads: int
) -> None:
    """The sparse kernel pairs the rare heaps below ``n - kmax`` with every splitting removal in
    one pass (one, two or more removals) and the few larger ones removal by removal: past the
    first 2,048 values, with hundreds of rare heaps on either side of that bound, the values
    are the plain kernel's."""
    rule = TakeAndBreak(tuple(digits), d0=d0)
    plain = values(grundy_sequence(rule, n, method="quadratic"))
    run = grundy_module.GrundyRun(rule, n, method="sparse", threads=threads)
    assert values(run.run()) == plain


def test_growing_the_value_range_and_rare_list(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tiny starting arrays force every 'grow' path of both kernels."""
    monkeypatch.setattr(grundy_module, "_INITIAL_SIZE", 4)
    monkeypatch.setattr(grundy_module, "_RARE_SLACK", 1)
    monkeypatch.setattr(grundy_module, "_SPARSE_FROM", 5)
    for code in ("0.77", "0.354", "0.7777", "0.6"):
        rule = TakeAndBreak.octal(code)
        expected = naive_grundy(rule, 400)
        for method in METHODS:
            assert values(grundy_sequence(rule, 400, method=method)) == expected, (code, method)
    wide = TakeAndBreak((), tail=7)  # every move: the values climb past the first array sizes
    assert values(grundy_sequence(wide, 60)) == naive_grundy(wide, 60)


def test_without_a_sparse_space_auto_falls_back_to_plain(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(grundy_module, "_SPARSE_FROM", 50)
    rule = TakeAndBreak.octal("0.354")
    sparse = grundy_sequence(rule, 3000)
    assert sparse.rare_count is not None
    monkeypatch.setattr(grundy_module, "_DENSE_SHARE", 0.0)  # every mask counts as too dense
    plain = grundy_sequence(rule, 3000)
    assert plain.rare_count is None
    assert (
        values(plain) == values(sparse) == values(grundy_sequence(rule, 3000, method="quadratic"))
    )


# -- Sprague–Grundy = the exact solver -----------------------------------------------------------


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rule=st.one_of(finite_rules, st.just(TakeAndBreak.nim())),
    heaps=st.lists(st.integers(0, 9), min_size=1, max_size=3),
)
def test_zero_nim_sum_iff_previous_player_wins(rule: TakeAndBreak, heaps: list[int]) -> None:
    position = canonical(heaps)
    nim_sum = reduce(xor, (grundy_value(rule, h) for h in heaps), 0)
    outcome = ExactSolver(rule).value(position).outcome
    assert (nim_sum == 0) == (outcome is Outcome.P)


# -- published values ----------------------------------------------------------------------------

# OEIS A002186 (offset 0): Kayles, octal game 0.77, n = 0..104.
KAYLES = [
    0, 1, 2, 3, 1, 4, 3, 2, 1, 4, 2, 6, 4, 1, 2, 7, 1, 4, 3, 2, 1, 4, 6, 7, 4, 1, 2, 8, 5, 4, 7, 2,
    1, 8, 6, 7, 4, 1, 2, 3, 1, 4, 7, 2, 1, 8, 2, 7, 4, 1, 2, 8, 1, 4, 7, 2, 1, 4, 2, 7, 4, 1, 2, 8,
    1, 4, 7, 2, 1, 8, 6, 7, 4, 1, 2, 8, 1, 4, 7, 2, 1, 8, 2, 7, 4, 1, 2, 8, 1, 4, 7, 2, 1, 8, 2, 7,
    4, 1, 2, 8, 1, 4, 7, 2, 1,
]  # fmt: skip
# OEIS A002187 (offset 0): Dawson's chess, octal game 0.137, n = 0..131. Its comment: "Octal game
# .07 (Dawson's Kayles) has values a(n-1)", i.e. G_0.07(n) = a(n - 1) for n >= 1.
DAWSON_CHESS = [
    0, 1, 1, 2, 0, 3, 1, 1, 0, 3, 3, 2, 2, 4, 0, 5, 2, 2, 3, 3, 0, 1, 1, 3, 0, 2, 1, 1, 0, 4, 5, 2,
    7, 4, 0, 1, 1, 2, 0, 3, 1, 1, 0, 3, 3, 2, 2, 4, 4, 5, 5, 2, 3, 3, 0, 1, 1, 3, 0, 2, 1, 1, 0, 4,
    5, 3, 7, 4, 8, 1, 1, 2, 0, 3, 1, 1, 0, 3, 3, 2, 2, 4, 4, 5, 5, 9, 3, 3, 0, 1, 1, 3, 0, 2, 1, 1,
    0, 4, 5, 3, 7, 4, 8, 1, 1, 2, 0, 3, 1, 1, 0, 3, 3, 2, 2, 4, 4, 5, 5, 9, 3, 3, 0, 1, 1, 3, 0, 2,
    1, 1, 0, 4,
]  # fmt: skip
# OEIS A071464 (offset 1): octal game 0.127, n = 1..87.
OCTAL_127 = [
    1, 0, 2, 2, 1, 0, 4, 4, 1, 2, 2, 0, 1, 4, 4, 6, 1, 7, 7, 0, 1, 2, 2, 6, 1, 4, 4, 8, 1, 2, 7, 8,
    1, 0, 7, 2, 6, 8, 1, 4, 9, 8, 1, 2, 6, 0, 1, 4, 6, 2, 1, 8, 9, 0, 1, 6, 2, 2, 7, 0, 1, 8, 3, 2,
    1, 4, 4, 8, 9, 2, 7, 8, 1, 0, 9, 2, 2, 6, 4, 4, 1, 8, 3, 2, 1, 0, 4,
]  # fmt: skip


def test_kayles_matches_oeis_and_its_proven_period() -> None:
    kayles = TakeAndBreak.octal("0.77")
    seq = grundy_sequence(kayles, 10_000, prove=True)
    assert values(seq)[: len(KAYLES)] == KAYLES
    # A002186: "From n=71 on, the sequence is periodic with period 12" (last exception n=70)
    assert (seq.period, seq.preperiod, seq.proven) == (12, 71, True)
    assert seq.values[70] != seq.values[82]


def test_dawsons_kayles_matches_oeis_shifted_by_one() -> None:
    seq = grundy_sequence(TakeAndBreak.octal("0.07"), 10_000, prove=True)
    assert values(seq)[: len(DAWSON_CHESS) + 1] == [0, *DAWSON_CHESS]
    # A002187: period 34, exceptions n = 0, 14, 16, 17, 31, 34, 51 for 0.137. Shifted by one for
    # 0.07 they are 1, 15, 17, 18, 32, 35, 52, and G(0) = 0 != G(34) = 4 is one more: the last
    # exception is 52, so the preperiod (least n0) is 53.
    assert (seq.period, seq.preperiod, seq.proven) == (34, 53, True)
    chess = grundy_sequence(TakeAndBreak.octal("0.137"), 10_000, prove=True)
    assert values(chess)[: len(DAWSON_CHESS)] == DAWSON_CHESS
    assert (chess.period, chess.preperiod, chess.proven) == (34, 52, True)


def test_octal_16_published_period() -> None:
    """0.16: preperiod 105,351 and period 149,459 (Gangolli and Plambeck 1989; Flammenkamp's
    table, where the preperiod is the number of values before the periodic part), found with
    the rare/common split of mask 0x1e: 53 rare values, the last at 13,935 (tczajka/octal-games,
    SolvedGames.md, agreeing with Flammenkamp)."""
    seq = grundy_sequence(TakeAndBreak.octal("0.16"), 1 << 20, prove=True)
    assert (seq.period, seq.preperiod, seq.proven) == (149_459, 105_351, True)
    assert seq.proof_length == 2 * 105_351 + 2 * 149_459 + 2 <= len(seq)
    assert seq.values[105_350] != seq.values[105_350 + 149_459]  # the last exception
    assert (seq.rare_mask, seq.rare_positional) == (0x1E, False)
    assert (seq.rare_count, seq.last_rare) == (53, 13_935)  # heap 0 (G = 0) counts too
    # the proven period predicts values that were never computed; compute them and compare
    more = grundy_sequence(TakeAndBreak.octal("0.16"), len(seq) + 3000)
    tail = range(len(seq), len(more))
    assert [seq.value(n) for n in tail] == values(more)[len(seq) :]


def test_octal_127_published_period() -> None:
    """0.127: period 4, last exception at n = 46,577 (OEIS A071464, Gangolli and Plambeck), so
    the preperiod is 46,578; rare/common split by mask 1 together with the heap's parity: 693
    rare values, the last at 27,106 (same table)."""
    seq = grundy_sequence(TakeAndBreak.octal("0.127"), 1 << 20, prove=True)
    assert values(seq)[1 : len(OCTAL_127) + 1] == OCTAL_127
    assert (seq.period, seq.preperiod, seq.proven) == (4, 46_578, True)
    assert seq.values[46_577] != seq.values[46_581]
    assert (seq.rare_mask, seq.rare_positional, seq.rare_count) == (1, True, 693)
    assert seq.last_rare == 27_106


# -- periods and proofs --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "period", "preperiod", "t"),
    [("0.77", 12, 71, 2), ("0.07", 34, 53, 2), ("0.137", 34, 52, 3)],
)
def test_guy_smith_bound_is_exact(code: str, period: int, preperiod: int, t: int) -> None:
    """Proven exactly from 2 n0 + 2 p + t values on (t = the largest removal), not one before."""
    rule = TakeAndBreak.octal(code)
    assert rule.max_take == t
    need = 2 * preperiod + 2 * period + t
    short = grundy_sequence(rule, need - 1)
    assert (short.period, short.preperiod, short.proven) == (period, preperiod, False)
    enough = grundy_sequence(rule, need)
    assert (enough.period, enough.preperiod, enough.proven) == (period, preperiod, True)
    assert enough.proof_length == need
    assert "(not proven)" in short.certificate()
    assert f"2*n0 + p + t = {need - period:,}" in enough.certificate()


@pytest.mark.parametrize(("code", "n"), [("0.77", 9_000), ("0.137", 5_000), ("0.356", 20_000)])
def test_values_copied_from_a_proven_period_report_what_computing_them_all_does(
    code: str, n: int
) -> None:
    """``"auto"`` proves the period on the way and copies the rest from it (no second scan of
    every value); computing every value (``"sparse"`` looks for a period only at the end) gives
    the same values, period, preperiod, proof length and rare heaps."""
    rule = TakeAndBreak.octal(code)
    copied = grundy_sequence(rule, n)
    computed = grundy_sequence(rule, n, method="sparse")
    assert copied.proven and computed.proven
    assert values(copied) == values(computed)

    def facts(s: GrundySequence) -> tuple[object, ...]:
        return (s.period, s.preperiod, s.proof_length, s.rare_count, s.last_rare, s.rare_mask)

    assert facts(copied) == facts(computed)
    assert copied.certificate() == computed.certificate()


def _scan_by_definition(seq: list[int], t: int, splitting: bool) -> tuple[int, int, int, int]:
    """(proven p, its tail, found p, its tail) by checking every p against the definitions."""
    count = len(seq)
    pmax = (count - t) // 2 if splitting else count - t - 1
    proven = found = (-1, -1)
    for p in range(1, pmax + 1):
        z = 0
        while z < count - p and seq[count - 1 - z] == seq[count - 1 - z - p]:
            z += 1
        n0 = count - p - z
        n1 = max(n0, 1)  # Guy–Smith holds from n0 >= 1 only (see test_guy_smith_needs_n0_1)
        ok = count >= 2 * n1 + 2 * p + t if splitting else count - p >= n1 + t
        if ok and proven[0] < 0:
            proven = (p, z)
        if z >= p + t and found[0] < 0:
            found = (p, z)
    return (*proven, *found)


def test_period_scan_pruning_is_exact() -> None:
    """The pruned period scan finds what checking every p by the definition finds, on random
    values with a planted periodic tail and a few planted exceptions (small alphabets make
    near-periods common). A tiny exception list (4) exercises its truncation too."""
    from nimlab.theory import _grundy_kernels as kernels

    rng = random.Random(2024)
    proven_cases = 0
    for _ in range(20_000):
        top = rng.randint(1, 3)
        seq = [rng.randint(0, top) for _ in range(rng.randint(0, 40))]
        seq += [rng.randint(0, top) for _ in range(rng.randint(1, 10))] * rng.randint(1, 30)
        for _ in range(rng.randint(0, 3)):
            seq[rng.randrange(len(seq))] = rng.randint(0, top)
        t, splitting = rng.randint(1, 4), rng.random() < 0.8
        count = len(seq)
        pmax = (count - t) // 2 if splitting else count - t - 1
        if pmax < 1:
            continue
        want = _scan_by_definition(seq, t, splitting)
        got = kernels.period_scan(np.array(seq, np.uint16), count, t, splitting, True, pmax, 4)
        assert (int(got[0]), int(got[1])) == want[:2], (seq, t, splitting)
        if want[0] < 0:
            assert (int(got[2]), int(got[3])) == want[2:], (seq, t, splitting)
        proven_cases += want[0] > 0
    assert proven_cases > 5000  # the sweep really exercises proofs


def test_non_splitting_games_use_the_window_condition() -> None:
    """Subtraction {1, 2}: G(n) = n mod 3. Without splits the t = 2 values after max(n0, 1)
    repeating suffice: G(4) = G(1), G(5) = G(2), i.e. 6 values."""
    rule = TakeAndBreak.subtraction({1, 2})
    assert values(grundy_sequence(rule, 9)) == [n % 3 for n in range(9)]
    assert not grundy_sequence(rule, 5).proven
    seq = grundy_sequence(rule, 6)
    assert (seq.period, seq.preperiod, seq.proven, seq.proof_length) == (3, 0, True, 6)
    assert seq.value(10**100) == 10**100 % 3
    # 0.1: only a heap of exactly 1 can be taken: 0, 1, 0, 0, ... (period 1 from n0 = 2)
    one = grundy_sequence(TakeAndBreak.octal("0.1"), 4)
    assert (values(one), one.period, one.preperiod, one.proven) == ([0, 1, 0, 0], 1, 2, True)
    assert not grundy_sequence(TakeAndBreak.octal("0.1"), 3).proven


def test_unproven_periods_are_only_reported_with_real_evidence() -> None:
    """A guess needs two whole periods plus t values repeating, covering a quarter of the
    values: Kayles' 12 shows after 100 values, a chance repeat of 3 at the end of 0.16 does not."""
    kayles = grundy_sequence(TakeAndBreak.octal("0.77"), 100)
    assert (kayles.period, kayles.preperiod, kayles.proven) == (12, 71, False)
    chance = grundy_sequence(TakeAndBreak.octal("0.16"), 10_000)
    assert chance.values[-10:].tolist() == chance.values[-13:-3].tolist()  # it repeats by 3 ...
    assert chance.period is None  # ... but that is no evidence of a period


def test_a_game_without_moves() -> None:
    seq = grundy_sequence(TakeAndBreak(()), 10)
    assert values(seq) == [0] * 10
    assert (seq.period, seq.preperiod, seq.proven) == (1, 0, True)


def test_prove_stops_once_proven_and_respects_the_maximum() -> None:
    kayles = TakeAndBreak.octal("0.77")
    seq = grundy_sequence(kayles, 10**9, prove=True)
    assert seq.proven and len(seq) <= 4096
    capped = grundy_sequence(TakeAndBreak.octal("0.16"), 5000, prove=True)
    assert len(capped) == 5000 and not capped.proven


def test_values_beyond_the_computed_ones() -> None:
    kayles = TakeAndBreak.octal("0.77")
    proven = grundy_sequence(kayles, 200, prove=True)
    big = 10**100
    assert proven.value(big) == KAYLES[71 + (big - 71) % 12]
    assert proven.value(104) == KAYLES[104]
    unproven = grundy_sequence(kayles, 100)
    assert unproven.value(99) == KAYLES[99]
    with pytest.raises(ValueError, match="no period is proven"):
        unproven.value(100)
    take_two_or_more = TakeAndBreak((0,), tail=3)
    with pytest.raises(ValueError, match="no period is proven"):
        grundy_sequence(take_two_or_more, 50, prove=True).value(10**6)


def test_grundy_value() -> None:
    assert grundy_value(TakeAndBreak.nim(), 10**30) == 10**30
    kayles = TakeAndBreak.octal("0.77")
    assert [grundy_value(kayles, n) for n in range(len(KAYLES))] == KAYLES
    assert grundy_value(kayles, 10**100) == KAYLES[71 + (10**100 - 71) % 12]
    dawson = TakeAndBreak.octal("0.07")
    assert grundy_value(dawson, 10**40 + 1) == DAWSON_CHESS[52 + (10**40 - 52) % 34]
    sub = TakeAndBreak.subtraction({1, 3, 4})
    assert [grundy_value(sub, n) for n in range(50)] == naive_grundy(sub, 50)
    tail = TakeAndBreak((1,), tail=3)
    assert [grundy_value(tail, n) for n in range(30)] == naive_grundy(tail, 30)
    with pytest.raises(ValueError, match="too large"):
        grundy_value(tail, 10**9)


def test_nim_sequence() -> None:
    seq = grundy_sequence(TakeAndBreak.nim(), 70_000)
    assert seq.values.dtype == np.uint32 and int(seq.values[69_999]) == 69_999
    assert seq.value(10**50) == 10**50 and seq.period is None and not seq.proven


def test_progress_reports() -> None:
    calls: list[tuple[int, int]] = []
    grundy_sequence(TakeAndBreak.octal("0.16"), 300_000, progress=lambda d, t: calls.append((d, t)))
    assert calls and calls[-1] == (300_000, 300_000)
    assert all(0 < d <= t for d, t in calls)
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)


@pytest.mark.parametrize("bad", [-1, -(10**20)])
def test_negative_sizes_are_rejected(bad: int) -> None:
    kayles = TakeAndBreak.octal("0.77")
    with pytest.raises(ValueError, match="must be >= 0"):
        grundy_sequence(kayles, bad)
    with pytest.raises(ValueError, match="must be >= 0"):
        grundy_value(kayles, bad)
    with pytest.raises(ValueError, match="must be >= 0"):
        naive_grundy(kayles, bad)
    with pytest.raises(ValueError, match="must be >= 0"):
        grundy_sequence(kayles, 10).value(bad)


def test_bad_arguments() -> None:
    kayles = TakeAndBreak.octal("0.77")
    with pytest.raises(TypeError):
        grundy_sequence(kayles, 2.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown method"):
        grundy_sequence(kayles, 10, method="fast")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="positional"):
        _sequence_with_mask(TakeAndBreak.octal("0.44"), 10, 1, positional=True)  # k = 1, 2
