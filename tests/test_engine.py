"""The engine: every strategy agrees with the exact solver wherever it applies; display limits
never decide what is played; one question's budget never spoils the next."""

from __future__ import annotations

import functools
import random
import threading
from collections import OrderedDict

from hypothesis import given, settings
from hypothesis import strategies as st

from nimlab.core.analysis import analyze, board_move, count_moves, display_heaps
from nimlab.core.bots import perfect_choice
from nimlab.core.game import Game
from nimlab.core.games import parse_game
from nimlab.core.position import board_for
from nimlab.core.rules import HeapRules
from nimlab.core.ruleset import Ruleset
from nimlab.theory.budget import Budget, budget_scope
from nimlab.theory.engine import (
    STRATEGIES,
    DenseTable,
    Engine,
    MisereQuotientStrategy,
    SplitSearch,
    Strategy,
    Terminal,
    canonical_moves,
)
from nimlab.theory.octal import TakeAndBreak
from nimlab.theory.outcome import Outcome
from nimlab.theory.positions import is_terminal
from nimlab.theory.solver import ExactSolver
from strategies import end_positions, positions, rules


def _alone(strategy: Strategy) -> tuple[Strategy, ...]:
    """The strategy with its compiled threshold removed, behind the terminal rule."""
    if isinstance(strategy, DenseTable):
        strategy = DenseTable(min_cost=0)
    elif isinstance(strategy, SplitSearch):
        strategy = SplitSearch(min_cost=0)
    elif isinstance(strategy, MisereQuotientStrategy):
        strategy = MisereQuotientStrategy(min_cost=0)
    return (strategy,) if isinstance(strategy, Terminal) else (Terminal(), strategy)


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(range(len(STRATEGIES))),
    rules(),
    positions(6, 4),
    end_positions(),
    st.booleans(),
)
def test_every_strategy_agrees_with_the_exact_solver(
    index: int, rule, position, ends, misere: bool
) -> None:
    strategy = STRATEGIES[index]
    engine = Engine(rule, misere=misere, end_positions=ends, strategies=_alone(strategy))
    exact = ExactSolver(rule, misere=misere, end_positions=ends)
    expected = exact.value(position)
    if not strategy.applies(engine, position):
        return
    got = strategy.value(engine, position, Budget())
    assert got.outcome == expected.outcome
    if got.remoteness is not None:
        assert got.remoteness == expected.remoteness
    wins = strategy.winning_moves(engine, position, None, Budget())
    if wins is not None:
        over = is_terminal(rule, position, ends)  # no move is made from an end position
        winning_children = {
            move
            for move, child in canonical_moves(rule, position)
            if not over and exact.value(child).outcome is Outcome.P
        }
        assert set(wins) <= winning_children
        assert bool(wins) == bool(winning_children)


@settings(max_examples=40, deadline=None)
@given(rules(), positions(6, 4), end_positions(), st.booleans())
def test_engine_answers_equal_the_exact_solver(rule, position, ends, misere: bool) -> None:
    engine = Engine(rule, misere=misere, end_positions=ends)
    expected = ExactSolver(rule, misere=misere, end_positions=ends).value(position)
    got = engine.evaluate(position, budget=Budget())
    assert got.outcome == expected.outcome
    assert got.remoteness in (None, expected.remoteness)


def test_a_display_limit_never_hides_a_proven_win() -> None:
    """601 700 with end position [3, 601]: taking 697 from pile 2 wins at once."""
    ruleset = Ruleset.parse("nim end=3.601")
    board = board_for(ruleset.rule, [601, 700])
    with budget_scope(Budget()):  # what is proven, not how fast: no deadline (a busy machine)
        a = analyze(ruleset, board, max_moves=10)
        game = Game(ruleset, [601, 700], ["bot:perfect:A", "bot:random:B"], seed=1)
        choice = perfect_choice(game.state, random.Random(1))
    assert a.outcome is Outcome.N and a.remoteness == 1
    assert [(m.move.pile, m.move.take) for m in a.winning_moves] == [(2, 697)]
    assert (choice.move.pile, choice.move.take) == (2, 697) and choice.proven


def _win_keys(a: object) -> list[tuple[object, ...]]:
    return sorted(
        (m.move.pile, m.move.take, m.move.at or 0, m.result, m.remoteness)
        for m in a.winning_moves  # type: ignore[attr-defined]
    )


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(["nim", "kayles", "dawson", "subtraction:1,3,4", "octal:0.137", "octal:0.77"]),
    st.lists(st.integers(0, 6), min_size=1, max_size=6),
    st.booleans(),
)
def test_a_display_limit_never_changes_an_answer(game: str, heaps: list[int], misere: bool) -> None:
    """With a move limit of 1 the outcome, the remoteness and the set of winning moves (every
    pile and every placement of them) are those of the full list; the count covers them all."""
    ruleset = Ruleset(parse_game(game), misere=misere)
    board = board_for(ruleset.rule, heaps)
    full = analyze(ruleset, board, max_moves=None, budget=Budget(seconds=60))
    short = analyze(ruleset, board, max_moves=1, budget=Budget(seconds=60))
    assert (short.outcome, short.remoteness) == (full.outcome, full.remoteness)
    assert _win_keys(short) == _win_keys(full)
    if not short.moves_complete:
        assert short.winning_move_count == len(full.winning_moves)
        few = analyze(ruleset, board, max_moves=1, max_cells=1, budget=Budget(seconds=60))
        # every formula counts the winning moves it does not list (Nim's, the Grundy values',
        # a misère quotient's); where only a search decides, those past the list are not counted
        formula = ruleset.engine.formula_strategy(board.canonical) is not None
        exact = game == "nim" or len(full.winning_moves) == 0 or formula
        assert few.winning_move_count == (len(full.winning_moves) if exact else None)
        assert len(few.winning_moves) == min(1, len(full.winning_moves))
        assert few.listing_note()


def test_a_result_limit_says_how_many_winning_moves_are_not_listed() -> None:
    """Every pile of a winning size is a winning move of its own; a cell limit lists fewer but
    counts them all and says how to list more."""
    ruleset = Ruleset(parse_game("nim"), misere=True)
    board = board_for(ruleset.rule, [2, 0, 1, 2, 2, 0, 1, 0, 3, 0])
    a = analyze(ruleset, board, max_moves=1)
    assert [m.move.pile for m in a.winning_moves] == [3, 7, 9]
    assert a.to_json()["winning_move_count"] == 3 and a.remoteness == 10
    few = analyze(ruleset, board, max_moves=1, max_cells=25)
    assert len(few.moves) == 2 and few.winning_move_count == 3
    assert "2 of 3" in few.listing_note() and "--max-result-heaps" in few.listing_note()


def test_a_spent_budget_does_not_spoil_the_next_question() -> None:
    engine = Engine(
        Ruleset.parse("kayles misere").rule, misere=True, end_positions=frozenset({(2, 2, 2)})
    )
    tiny = Budget(positions=10)
    assert engine.evaluate((25, 27, 29), budget=tiny).outcome is None
    assert engine.evaluate((1,), budget=Budget()).outcome is Outcome.P  # must take the last stone
    assert engine.evaluate((2, 3), budget=Budget()).proven


def test_many_heaps_answer_by_formula_in_linear_time() -> None:
    ruleset = Ruleset()
    heaps = [10**9 - i for i in range(20_000)]
    a = analyze(ruleset, board_for(ruleset.rule, heaps))
    assert a.proven and not a.moves_complete
    assert all(m.winning for m in a.moves)
    ones = analyze(ruleset, board_for(ruleset.rule, [1] * 3000))
    assert ones.outcome is Outcome.P and ones.moves_complete is False


def test_kayles_rows_keep_empty_rows_and_list_winning_moves() -> None:
    ruleset = Ruleset.parse("kayles")
    a = analyze(ruleset, board_for(ruleset.rule, [0, 3]))
    assert a.to_json()["position"] == [0, 3]
    assert all(m.move.pile == 2 for m in a.moves)
    big = analyze(ruleset, board_for(ruleset.rule, [1001]))
    assert big.proven and big.winning_moves


@given(rules(), positions(9, 4, 1))
def test_move_counts_and_canonical_moves_agree_with_the_board(rule, position) -> None:
    ruleset = Ruleset().__class__(Ruleset().game.__class__("x", HeapRules(rule)))
    board = board_for(rule, position)
    assert count_moves(ruleset, board) == sum(1 for _ in board.legal_moves(rule))
    for move, child in canonical_moves(rule, position):
        after = board.play(rule, board_move(board, move))
        assert after.canonical == child
    assert sorted(h for h in display_heaps(board) if h) == list(position)


@settings(max_examples=30, deadline=None)
@given(positions(7, 4))
def test_li_model_names_the_last_mover(position) -> None:
    ruleset = Ruleset()
    a = analyze(ruleset, board_for(ruleset.rule, list(position) or [0]), players=3, model="li")
    columns_even = all(sum((h >> bit) & 1 for h in position) % 3 == 0 for bit in range(4))
    assert a.proven and a.to_json()["last_mover"] == a.last_mover
    assert (a.last_mover == 2) == columns_even
    if a.moves:
        assert min(m.last_mover for m in a.moves if m.last_mover is not None) == a.last_mover


def test_paranoid_analysis_of_four_players_is_proven() -> None:
    ruleset = Ruleset.parse("nim misere defaults")
    a = analyze(ruleset, board_for(ruleset.rule, [7, 8, 9, 10, 11]), players=4, budget=Budget())
    out = a.to_json()
    assert a.proven and out["model"] == "paranoid" and out["players"] == 4
    assert a.moves_complete and len(a.moves) == 45
    game = Game(ruleset, [7, 8, 9, 10, 11], [f"bot:perfect:P{i}" for i in range(4)], seed=3)
    with budget_scope(Budget()):  # what is proven, not how fast: no deadline (a busy machine)
        while not game.is_over:
            turn = game.play_bot()
            assert turn.claim is not None and "not proven" not in turn.claim


@functools.cache
def _quotient_and_exact(code: str) -> tuple[Engine, MisereQuotientStrategy, ExactSolver]:
    """An engine with the quotient strategy alone, and the exact solver, for a misère octal
    game (shared by the examples: the exact answers do not depend on what was asked before)."""
    unequal = code == "grundys-game"  # splits into unequal heaps: a partial quotient
    rule = TakeAndBreak((), d0=4, unequal=True) if unequal else TakeAndBreak.octal(code)
    strategy = MisereQuotientStrategy(min_cost=0)
    engine = Engine(rule, misere=True, strategies=(Terminal(), strategy))
    return engine, strategy, ExactSolver(rule, misere=True)


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from(["0.77", "0.07", "0.75", "0.137", "4.02", "grundys-game"]), positions(12, 4, 1)
)
def test_misere_quotient_strategy_agrees_with_the_exact_solver(code: str, position) -> None:
    engine, strategy, exact = _quotient_and_exact(code)
    rule = engine.rule
    if Terminal().applies(engine, position):
        return
    assert strategy.applies(engine, position)  # heaps up to 12 are always covered
    assert strategy.value(engine, position, Budget()).outcome == exact.value(position).outcome
    wins = set(strategy.winning_moves(engine, position, None, Budget()) or [])
    assert wins == {
        m for m, child in canonical_moves(rule, position) if exact.value(child).outcome is Outcome.P
    }


def test_a_quotient_that_ran_out_answers_the_whole_question_with_what_it_verified(
    monkeypatch,
) -> None:
    """The strategy asks for the quotient in applies, value and winning moves: once this
    question's attempt ran out, each is answered from what that attempt verified."""
    import nimlab.theory.quotient as quotient_module
    from nimlab.theory.budget import BudgetExceeded

    rule = TakeAndBreak.octal("0.77")
    verified = quotient_module.misere_quotient(rule, 12)

    def ran_out(*args: object, **kwargs: object) -> None:
        raise BudgetExceeded(1.0, "time")

    monkeypatch.setattr(quotient_module, "quotient_for", ran_out)
    monkeypatch.setattr(quotient_module, "quotient_progress", lambda rule: verified)
    strategy = MisereQuotientStrategy(min_cost=0)
    engine = Engine(rule, misere=True, strategies=(Terminal(), strategy))
    position, budget = (9, 10, 12), Budget(seconds=60)
    assert strategy.applies(engine, position, budget)
    exact = ExactSolver(rule, misere=True)
    assert strategy.value(engine, position, budget).outcome == exact.value(position).outcome
    assert strategy.winning_moves(engine, position, None, budget) is not None


def test_a_quotient_attempt_that_verified_nothing_more_is_tried_again_only_with_more_time(
    monkeypatch,
) -> None:
    """Each question may give the quotient a share of its time, going on from the heaps verified
    before; an attempt that verified no further heap is not repeated by questions with no more
    time (each would spend its share on the same unfinished heap: a second of every analysis of
    misère 4.07 at heap 30), but one with twice the time tries, progress made tries again, and
    any question tries once a minute has passed (a busy machine may have slowed the attempt)."""
    import nimlab.theory.engine as engine_module
    import nimlab.theory.quotient as quotient_module
    from nimlab.theory.budget import BudgetExceeded

    rule = TakeAndBreak.octal("0.77")
    attempts: list[float | None] = []
    verified = [12]

    def ran_out(rule: TakeAndBreak, bound: int, *, budget: Budget) -> None:
        attempts.append(budget.seconds)
        raise BudgetExceeded(budget.seconds, "time")

    monkeypatch.setattr(engine_module, "_QUOTIENT_STALLED", {})
    monkeypatch.setattr(quotient_module, "_cache", OrderedDict())  # (none built by other tests)
    monkeypatch.setattr(quotient_module, "quotient_for", ran_out)
    monkeypatch.setattr(quotient_module, "verified_heaps", lambda rule: verified[0])
    monkeypatch.setattr(quotient_module, "quotient_progress", lambda rule: None)
    engine = Engine(rule, misere=True)

    def ask(seconds: float | None) -> None:
        assert engine.quotient((9, 10, 30), Budget(seconds=seconds)) is None

    ask(10)
    ask(10)
    ask(19)  # (a share of 9.5 s: less than twice 5 s)
    assert len(attempts) == 1
    ask(30)  # twice the time and more
    ask(None)  # no deadline
    assert len(attempts) == 3
    ask(30)
    assert len(attempts) == 3
    verified[0] = 14  # another process, or a longer question, got further
    ask(10)
    assert len(attempts) == 4
    ask(10)
    assert len(attempts) == 4
    monkeypatch.setattr(engine_module, "QUOTIENT_RETRY_AFTER", 0.0)  # a minute later
    ask(10)
    assert len(attempts) == 5

    built = quotient_module.misere_quotient(rule, 32)  # a longer question builds it at last

    def builds(rule: TakeAndBreak, bound: int, *, budget: Budget) -> object:
        return built

    monkeypatch.setattr(quotient_module, "quotient_for", builds)
    for seconds in (100, 10, 10):
        assert engine.quotient((9, 10, 30), Budget(seconds=seconds)) is built


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from(["nim", "subtraction:1,3,4", "kayles", "dawson", "octal:0.137"]),
    positions(7, 4, 1),
    end_positions(),
    st.booleans(),
    st.integers(0, 2**32),
)
def test_a_settled_position_is_answered_without_any_search(
    name: str, position, ends, misere: bool, seed: int
) -> None:
    """Once the engine says a position is settled, the perfect bot's choice there (and every
    child's value) comes from memory: with every search forbidden, the same proven choice."""
    ruleset = Ruleset(parse_game(name), misere=misere, end_positions=frozenset(ends))
    rule, engine = ruleset.rule, ruleset.engine
    board = board_for(rule, list(position))
    if is_terminal(rule, board.canonical, ends):
        return
    game = Game(ruleset, list(position), ["human:Ann", "bot:perfect:Hal"], first=1, seed=seed)
    if not engine.settled(board.canonical):
        engine.evaluate(board.canonical)  # solves it (when the search is the strategy here)
    if not engine.settled(board.canonical):
        return
    assert all(engine.settled(child) for _, child in canonical_moves(rule, board.canonical))
    assert game.bot_choice_is_instant()
    expected = perfect_choice(game.state, random.Random(seed))

    def no_search(*args: object, **kwargs: object) -> None:
        raise AssertionError("a settled position needed a search")

    real = ExactSolver._search
    ExactSolver._search = no_search  # type: ignore[method-assign]
    try:
        assert perfect_choice(game.state, random.Random(seed)) == expected
    finally:
        ExactSolver._search = real  # type: ignore[method-assign]
    assert expected.proven


def test_a_table_built_already_answers_what_it_holds_without_search_or_wait() -> None:
    """Once a dense table is built for a big position, the smaller positions it holds are
    looked up there (a value history of a long game on big piles searched them one by one),
    count as settled, and are read while another thread holds the engine's lock (as it does
    while building a larger table)."""
    engine = Engine(TakeAndBreak.nim())
    small, other = (30, 41), (29, 40)
    assert not engine.dense_covers(small) and not engine.settled(small)
    engine.evaluate((200, 200))
    assert engine.dense_covers(small) and engine.settled(small)
    exact = ExactSolver(TakeAndBreak.nim())
    expected = [exact.value(small).remoteness, exact.value(other).remoteness]

    def no_search(*args: object, **kwargs: object) -> None:
        raise AssertionError("a position the table holds was searched")

    real = ExactSolver._search
    ExactSolver._search = no_search  # type: ignore[method-assign]
    try:
        found = [engine.evaluate(small).remoteness]
        with engine.lock:  # held here; the other thread must not wait for it
            reader = threading.Thread(
                target=lambda: found.append(engine.evaluate(other).remoteness)
            )
            reader.start()
            reader.join(60)
    finally:
        ExactSolver._search = real  # type: ignore[method-assign]
    assert found == expected


@settings(max_examples=25, deadline=None)
@given(rules(), st.booleans())
def test_heap_values_agree_on_both_sides_of_the_plain_mex(rule: TakeAndBreak, fresh: bool) -> None:
    """Below 64 objects a heap's Grundy value is the plain mex in pure Python, from 64 on the
    compiled kernels' (or a proven period's): on both sides of the switch they are the exact
    mex over the rule's options, whichever side is asked first."""
    from nimlab.theory.engine import Engine
    from nimlab.theory.grundy import naive_grundy

    exact = naive_grundy(rule, 72)
    engine = Engine(rule)
    sizes = list(range(56, 72))
    for heap in sizes if fresh else reversed(sizes):
        assert engine.heap_grundy(heap) == exact[heap], (rule.code, heap)
