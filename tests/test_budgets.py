"""Every question about a huge position answers within its budget, counted as work (options
tried, moves listed), or says what it could not prove: never a wait proportional to the heap.

The work is counted by wrapping the functions that do it (every option of a heap a search for
winning moves tries, every move a listing plays), never by a clock: the tests do not depend on
the machine's load.
"""

from __future__ import annotations

import json
import random
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import nimlab
from nimlab.core import analysis as analysis_module
from nimlab.core.bots import classic_choice
from nimlab.core.position import Rows
from nimlab.core.ruleset import as_ruleset
from nimlab.theory import engine as engine_module
from nimlab.theory import grundy as grundy_module
from nimlab.theory import octal as octal_module
from nimlab.theory.budget import METER_STEP, Budget, BudgetExceeded, budget_scope, metered
from nimlab.theory.octal import TakeAndBreak
from nimlab.theory.outcome import Outcome
from nimlab.theory.positions import canonical
from nimlab.theory.quotient import misere_quotient, quotient_winning_moves
from nimlab.theory.solver import ExactSolver
from processes import nimlab as run_nimlab
from strategies import rules

BILLION = 10**9


@dataclass
class Work:
    """What a question did: options of heaps tried, moves played on a board."""

    options: int = 0
    plays: int = 0


@pytest.fixture
def work(monkeypatch: pytest.MonkeyPatch) -> Work:
    """Counts every option a search for winning moves tries and every move a listing plays."""
    counted = Work()
    listed = TakeAndBreak.options_listed
    play = Rows.play

    def options_listed(self: TakeAndBreak, n: int) -> Iterator[tuple[int, tuple[int, ...]]]:
        for option in listed(self, n):
            counted.options += 1
            yield option

    def rows_play(self: Rows, *args: object, **kwargs: object) -> Rows:
        counted.plays += 1
        return play(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(TakeAndBreak, "options_listed", options_listed)
    monkeypatch.setattr(Rows, "play", rows_play)
    return counted


def _misere_kayles_is_p(result: tuple[int, ...]) -> bool:
    """By the proven misère quotient of Kayles (the engine's, built once per process)."""
    q = as_ruleset("kayles misere").engine.quotient((BILLION,), Budget())
    assert q is not None and q.proven
    return q.outcome(canonical(result)) is Outcome.P


def test_misere_kayles_row_of_a_billion_answers_within_its_budget(work: Work) -> None:
    """The reported failure: a row of 10^9 stones in misère Kayles ran for minutes (every
    winning move of the row was looked for, about 1.7 * 10^8 of them, outside the budget). Now
    the outcome comes from the quotient, the winning moves found within the budget are listed,
    each proven, and the others are counted (by residue class), not listed."""
    positions = 20_000
    a = nimlab.analyze("kayles misere", [BILLION], budget=Budget(positions=positions))
    # the search may take a quarter of the budget, finding and listing half (the rest is kept
    # for showing what is listed)
    assert work.options <= positions // 4 and work.options + work.plays <= positions // 2
    assert a.outcome is Outcome.N and a.method == "misere-quotient"
    assert not a.moves_complete and a.listing_ran_out and a.winning_move_count == 166_666_675
    assert a.moves and all(m.winning and _misere_kayles_is_p(m.result) for m in a.moves)
    best = a.best
    assert best is not None and best.result == (1, BILLION - 3)  # take stones 2-3
    note = a.listing_note()
    assert f"the first {len(a.moves):,} of 166,666,675 found within the budget" in note
    assert "analyze --seconds N" in note


def test_winning_moves_not_all_worked_out_are_not_counted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Where the theory cannot count them, the explanation says the best move is one of at
    least those found, and the listing claims no count."""
    monkeypatch.setattr(engine_module.Engine, "count_winning_moves", lambda *a, **k: None)
    a = nimlab.analyze("kayles misere", [BILLION], budget=Budget(positions=20_000))
    assert a.winning_move_count is None and a.moves
    assert any("at least" in line and "not all of them" in line for line in a.explanation)
    assert f"the first {len(a.moves):,} found within the budget" in a.listing_note()


def test_the_default_budget_counts_the_listing(work: Work, monkeypatch: pytest.MonkeyPatch) -> None:
    """nimlab.analyze("kayles misere", [10**7]) took 52 s against its default budget: the
    default budget's position limit now bounds the search and the listing (here within a
    scope without a deadline, so that work alone decides)."""
    assert _misere_kayles_is_p((1,))  # the quotient is built (once per process) beforehand
    monkeypatch.setattr(engine_module, "INTERACTIVE_POSITIONS", 5_000)
    with budget_scope(Budget()):
        a = nimlab.analyze("kayles misere", [10**7])
    assert work.options <= 5_000 and work.plays <= 5_000
    assert a.outcome is Outcome.N and a.listing_ran_out
    assert a.moves and all(_misere_kayles_is_p(m.result) for m in a.moves)


def test_command_line_row_of_a_billion_within_its_budget(
    work: Work, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``nimlab analyze 1000000000 --game kayles --misere --seconds 2`` ran for minutes: it
    answers within its budget now (its position limit made small here, and its time large, so
    that work, not time, decides)."""
    assert _misere_kayles_is_p((1,))  # the quotient is built (once per process) beforehand
    monkeypatch.setattr("nimlab.cli.analyze.INTERACTIVE_POSITIONS", 1_000)
    args = ("analyze", str(BILLION), "--game", "kayles", "--misere", "--seconds", "3600")
    r = run_nimlab(*args)
    assert r.returncode == 0, r.stderr
    assert work.options <= 10_000 and work.plays <= 10_000
    assert "found within the budget" in r.stdout.replace("\n", " ")
    out = json.loads(run_nimlab(*args, "--json").stdout)
    assert work.options <= 20_000 and work.plays <= 20_000
    assert out["outcome"] == "N" and out["moves_complete"] is False
    assert out["winning_move_count"] == 166_666_675  # counted, not listed
    assert out["moves"] and all(m["winning"] for m in out["moves"])


def test_a_budget_too_small_to_list_says_so(work: Work) -> None:
    a = nimlab.analyze("kayles misere", [BILLION], budget=Budget(positions=10))
    assert a.outcome is Outcome.N  # the quotient decides; the listing had no room
    assert a.moves == [] and a.winning_move_count is None and work.options <= 10
    assert "could not be proven within the budget" in a.listing_note()


def test_normal_kayles_row_of_a_billion_counts_what_it_does_not_list(work: Work) -> None:
    """Normal-play Kayles of 10^9 listed 36 winning moves, those of a representative set of
    splits, and called them all. Now the moves found within the budget are listed, all of them
    winning, and all of them counted (by residue class)."""
    positions = 20_000
    a = nimlab.analyze("kayles", [BILLION], budget=Budget(positions=positions))
    assert work.options <= positions and work.plays <= positions
    assert a.outcome is Outcome.N and a.winning_move_count == 166_666_675 and len(a.moves) > 36
    g = as_ruleset("kayles").engine.heap_grundy
    for m in a.moves:
        total = 0
        for heap in m.result:
            total ^= g(heap)
        assert total == 0


def test_misere_kayles_three_huge_rows_within_budget(work: Work) -> None:
    positions = 20_000
    heaps = [BILLION, BILLION - 1, 7]
    a = nimlab.analyze("kayles misere", heaps, budget=Budget(positions=positions))
    assert work.options <= positions and work.plays <= positions
    assert a.outcome is not None
    assert all(_misere_kayles_is_p(m.result) for m in a.moves)


def test_the_classic_bot_finds_a_winning_move_on_a_billion_stones(
    work: Work, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every winning move of a row of 10^9 stones lies far apart in the options' usual order
    (the splits of one take come before the next take): the search meets every kind of move
    near the row's ends first, so a bot's budget finds one. A budget that runs out before the
    64 moves the bot picks from were found still gives it those found (each proven)."""
    assert _misere_kayles_is_p((1,))  # the quotient is built (once per process) beforehand
    monkeypatch.setattr(engine_module, "INTERACTIVE_POSITIONS", METER_STEP)
    ruleset = as_ruleset("kayles misere")
    board = ruleset.rules.as_board([BILLION])
    with budget_scope(Budget()):
        choice = classic_choice(ruleset, board, random.Random(1))
    # (one more option is made than handed out: the one that finds the budget spent)
    assert "misère quotient" in choice.claim and work.options <= METER_STEP + 1
    after = board.play(ruleset.rule, choice.move)
    assert _misere_kayles_is_p(analysis_module.display_heaps(after))


# -- the pieces ----------------------------------------------------------------------------------


def test_metered_hands_out_no_more_than_the_budget() -> None:
    budget = Budget(positions=1_000)
    seen = 0
    with pytest.raises(BudgetExceeded):
        for _ in metered(range(BILLION), budget):
            seen += 1
    assert seen <= 1_000 and budget.spent <= 1_000 + METER_STEP


@settings(max_examples=60, deadline=None)
@given(rule=rules(), n=st.integers(0, 40))
def test_options_by_part_are_the_options(rule: TakeAndBreak, n: int) -> None:
    listed = list(rule.options_by_part(n))
    assert len(listed) == len(set(listed))
    assert sorted(listed) == sorted(rule.options(n))


def test_options_by_part_meet_every_take_early() -> None:
    rule = TakeAndBreak.octal("0.77")
    first = []
    for option in rule.options_by_part(BILLION):
        first.append(option)
        if len(first) == 6:
            break
    assert first == [
        (1, (BILLION - 1,)),
        (2, (BILLION - 2,)),
        (1, (1, BILLION - 2)),
        (2, (1, BILLION - 3)),
        (1, (2, BILLION - 3)),
        (2, (2, BILLION - 4)),
    ]


def test_winning_moves_in_the_huge_heap_order_are_the_exact_ones(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The order used on huge heaps, forced on small ones: the quotient's and the Grundy
    values' winning moves are exactly those exact search finds."""
    monkeypatch.setattr(octal_module, "BY_PART_FROM", 2)
    for code in ("0.77", "0.07", "0.137"):
        rule = TakeAndBreak.octal(code)
        misere = ExactSolver(rule, misere=True)
        normal = ExactSolver(rule)
        q = misere_quotient(rule, 16)
        engine = engine_module.Engine(rule)
        for position in [(9,), (3, 11), (2, 5, 13), (1, 6, 6, 10)]:
            for solver, found in (
                (misere, quotient_winning_moves(q, position)),
                (normal, engine_module.GrundySum().winning_moves(engine, position, None, Budget())),
            ):
                assert found is not None
                got = {engine_module.apply_move(position, m) for m in found}
                exact = {
                    child
                    for _, child in engine_module.canonical_moves(rule, position)
                    if solver.outcome(child) is Outcome.P
                }
                assert got == exact, (code, position)


# -- Grundy values computed within the question's budget -----------------------------------------


@pytest.fixture
def fresh_grundy(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """No Grundy values cached or runs kept; returns the values computed by each run call."""
    monkeypatch.setattr(grundy_module, "_CACHE", OrderedDict())
    monkeypatch.setattr(grundy_module, "_RUNS", OrderedDict())
    computed: list[int] = []
    run = grundy_module.GrundyRun.run

    def counted(self: grundy_module.GrundyRun, **kwargs: Any) -> grundy_module.GrundySequence:
        seq = run(self, **kwargs)
        computed.append(self.computed)
        return seq

    monkeypatch.setattr(grundy_module.GrundyRun, "run", counted)
    return computed


def test_grundy_values_are_not_computed_for_a_spent_budget(fresh_grundy: list[int]) -> None:
    """Grundy's game has no known period: a heap of 10^9 made the engine compute 2^20 values
    (seconds of work) outside any budget. A budget spent already computes nothing."""
    budget = Budget()
    budget.cancel()
    a = nimlab.analyze("grundys-game", [BILLION], budget=budget)
    assert a.outcome is None and fresh_grundy == []
    assert a.shortfall is not None and a.shortfall.step == "the Grundy values"


def test_grundy_values_stop_with_the_budget_and_go_on_next_time(
    fresh_grundy: list[int],
) -> None:
    """The values are charged to the budget as they are computed (checked between chunks):
    a budget of one position stops the run after its first chunk, says which step ran out, and
    the next question goes on from there instead of starting again."""
    first = nimlab.analyze("grundys-game", [BILLION], budget=Budget(positions=1))
    assert first.outcome is None and first.shortfall is not None
    assert (first.shortfall.step, first.shortfall.reason) == ("the Grundy values", "positions")
    second = nimlab.analyze("grundys-game", [BILLION], budget=Budget(positions=1))
    assert second.outcome is None
    assert len(fresh_grundy) == 2 and 0 < fresh_grundy[0] < fresh_grundy[1] < 1 << 20


# -- counting winning moves without listing them -------------------------------------------------


def _enumerated(moves: list[tuple[int, int, tuple[int, ...]]]) -> dict[int, tuple[int, int]]:
    """``{heap: (single, pairs)}`` of a full list of canonical winning moves."""
    out: dict[int, tuple[int, int]] = {}
    for heap, _take, parts in moves:
        single, pairs = out.get(heap, (0, 0))
        if len(parts) == 2 and parts[0] != parts[1]:
            pairs += 1
        else:
            single += 1
        out[heap] = (single, pairs)
    return out


@pytest.mark.parametrize("code", ["0.77", "0.07", "0.137"])
def test_counts_by_class_are_the_enumerated_counts(code: str) -> None:
    """The count of a huge heap's winning moves by residue class (the fast path) agrees with
    trying every option (the reference, itself checked against exact search), on heaps just
    large enough for the classes and beyond, alone and beside others."""
    rule = TakeAndBreak.octal(code)
    engine = engine_module.Engine(rule)
    strategy = engine_module.GrundySum()
    assert engine.grundy((1 << 80,), Budget()) is not None  # the period is proven
    period = grundy_module.cached_grundy_period(rule)
    assert period is not None and rule.max_take is not None
    start = 2 * sum(period) + 2 + rule.max_take
    for position in [(start,), (start + 1,), (start + 7,), (3, start + 5), (5, 9, start + 12)]:
        counted = strategy.count_winning_moves(engine, position, Budget())
        assert counted is not None
        every = strategy.winning_moves(engine, position, None, Budget()) or []
        expected = _enumerated(every)
        assert {h: (s, p) for h, s, p in counted if s or p} == expected, position


def test_misere_counts_by_class_are_the_enumerated_counts() -> None:
    q = as_ruleset("kayles misere").engine.quotient((BILLION,), Budget())
    assert q is not None and q.proven and q.preperiod is not None and q.period is not None
    engine = as_ruleset("kayles misere").engine
    strategy = engine_module.MisereQuotientStrategy()
    start = 2 * (q.preperiod + q.period) + 4
    for position in [(start,), (start + 3,), (1, start + 4), (2, 7, start + 11)]:
        counted = strategy.count_winning_moves(engine, position, Budget())
        assert counted is not None
        expected = _enumerated(quotient_winning_moves(q, position))
        assert {h: (s, p) for h, s, p in counted if s or p} == expected, position


def test_a_billion_stones_count_every_winning_move() -> None:
    """Misère Kayles on a row of 10^9 stones: 166,666,675 winning moves (board moves: a split
    into unequal parts counts on either side), counted, while the first ones found are
    listed; the count on a row of 10^6 is the one every option tried gave (166,675)."""
    a = nimlab.analyze("kayles misere", [BILLION], budget=Budget(positions=20_000))
    assert a.winning_move_count == 166_666_675 and a.listing_ran_out
    assert "There are 166,666,674 other winning moves." in " ".join(a.explanation)
    million = nimlab.analyze("kayles misere", [10**6], budget=Budget(positions=20_000))
    assert million.winning_move_count == 166_675


@settings(max_examples=40, deadline=None)
@given(
    rule=rules(),
    n0=st.integers(0, 6),
    p=st.integers(1, 5),
    early=st.lists(st.integers(0, 3), min_size=7, max_size=7),
    winning=st.sets(st.tuples(st.integers(0, 9), st.integers(0, 9)), max_size=30),
    extra=st.integers(0, 30),
)
def test_count_heap_wins_by_class_is_the_count_of_every_option(
    rule: TakeAndBreak, n0: int, p: int, early: list[int], winning: set[tuple[int, int]], extra: int
) -> None:
    """Any test of the parts' values, values periodic from n0 on: the count by class equals
    the count over every option (the period ignored)."""
    top = rule.max_take if rule.max_take is not None else 0

    def value(h: int) -> int:
        return early[h] if h < n0 else 4 + (h - n0) % p

    def wins(parts: tuple[int, ...]) -> bool:
        values = [value(h) for h in parts] + [9, 9]
        return (values[0], values[1]) in winning

    heap = 2 * (n0 + p) + 2 + top + extra
    fast = engine_module.count_heap_wins(rule, heap, wins, (n0, p), Budget())
    assert fast == engine_module.count_heap_wins(rule, heap, wins, None, Budget())
