"""The perfect bot's fast path in N-positions (only the winning children are evaluated) makes
exactly the choice of the full ranking of every legal move: same pool of fastest wins in
successor order, same claim, same draws from the random generator."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from nimlab import Game, Ruleset
from nimlab.core.bots import (
    Choice,
    Scored,
    _ranked_choice,
    _ranked_scores,
    _winning_scores,
    perfect_choice,
)
from nimlab.core.games import GameKind
from nimlab.core.position import Position
from nimlab.core.ruleset import parse_game
from nimlab.core.state import GameState
from nimlab.theory.budget import Budget
from nimlab.theory.engine import interactive_budget
from nimlab.theory.outcome import Outcome
from nimlab.theory.solver import ExactSolver
from strategies import end_positions, octal_rules, positions

NAMED = st.sampled_from(
    ["nim", "subtraction:1-3", "subtraction:1,3,4", "kayles", "dawson", "octal:0.137"]
)
GAMES = st.one_of(
    NAMED.map(parse_game), octal_rules(splitting=False).map(lambda r: parse_game(f"octal:{r.code}"))
)


def _state(ruleset: Ruleset, heaps: list[int]) -> GameState:
    """The bot to move at ``heaps``; every child is solved beforehand without a deadline, so
    that a first compilation of the engine's kernels never runs out of the bot's budget."""
    state = Game(ruleset, heaps, ["bot:perfect:B", "human:H"]).state
    ruleset.engine.child_values(state.board.canonical, budget=Budget.unlimited())
    return state


def reference_wins(ruleset: Ruleset, heaps: list[int]) -> list[Scored]:
    """Every winning move, straightforwardly: each legal move in pile order (smallest take
    first), judged by the exact solver, with the length of the win it starts."""
    solver = ExactSolver(ruleset.rule, misere=ruleset.misere, end_positions=ruleset.end_positions)
    board = _state(ruleset, heaps).board
    wins: list[Scored] = []
    for move in board.legal_moves(ruleset.rule):
        value = solver.value(board.play(ruleset.rule, move).canonical)
        if value.outcome is Outcome.P:
            wins.append((True, value.remoteness + 1, move))
    return wins


def reference_choice(ruleset: Ruleset, heaps: list[int], rng: random.Random) -> Choice | None:
    """The fastest win, drawn from the pool of fastest wins in successor order (``None`` in a
    P-position)."""
    wins = reference_wins(ruleset, heaps)
    if not wins:
        return None
    fastest = min(length for _, length, _ in wins)
    _, length, move = rng.choice([w for w in wins if w[1] == fastest])
    assert length is not None
    moves = "1 move" if length == 1 else f"{length} moves"
    return Choice(move, f"a proven winning move (wins in {moves})", True)


def full_ranking(state: GameState, rng: random.Random) -> Choice:
    scored = _ranked_scores(state.ruleset, state.board, interactive_budget())
    assert scored is not None
    return _ranked_choice(scored, rng)


@settings(max_examples=150, deadline=None)
@given(
    GAMES,
    st.booleans(),
    st.one_of(st.just(frozenset()), end_positions()),
    st.lists(st.integers(0, 8), min_size=1, max_size=5),
    st.integers(0, 2**32),
)
def test_perfect_choice_is_the_full_ranking_choice(
    game: GameKind, misere: bool, ends: frozenset[tuple[int, ...]], heaps: list[int], seed: int
) -> None:
    """Same seed, same choice and the same random numbers consumed, fast path or not; in an
    N-position it is the reference's draw from the fastest wins; where the fast path answers,
    its candidates are exactly the reference's winning moves."""
    ruleset = Ruleset(game, misere, ends)
    if ruleset.is_terminal(heaps):
        return
    state = _state(ruleset, heaps)
    fast_rng, full_rng, ref_rng = random.Random(seed), random.Random(seed), random.Random(seed)
    got = perfect_choice(state, fast_rng)
    assert got == full_ranking(state, full_rng)
    draw = fast_rng.random()  # the next random number: as much was consumed
    assert draw == full_rng.random()
    expected = reference_choice(ruleset, heaps, ref_rng)
    if expected is not None:
        assert got == expected
        assert draw == ref_rng.random()
    c = state.board.canonical
    scored = _winning_scores(ruleset.engine, state.board, c, interactive_budget())
    if scored is not None:
        assert scored == reference_wins(ruleset, heaps)
    if isinstance(state.board, Position) and not ends and expected is not None:
        # the fast path applies wherever the engine's nim-sum / Grundy formula answers
        name = ruleset.engine.formula_strategy(c)
        if name is not None and name.name in ("nim-formula", "grundy"):
            assert scored is not None


@settings(max_examples=60, deadline=None)
@given(positions(12, 4, 2), st.booleans(), st.integers(0, 2**32))
def test_plain_nim_n_positions_take_the_fast_path(heaps, misere: bool, seed: int) -> None:
    """On Nim without extra end positions (normal or misère) every N-position is answered from
    the formula's winning moves alone, and they are all the winning moves."""
    ruleset = Ruleset(misere=misere)
    if not heaps or ruleset.engine.outcome(heaps) is not Outcome.N:
        return
    state = _state(ruleset, list(heaps))
    scored = _winning_scores(ruleset.engine, state.board, heaps, interactive_budget())
    assert scored is not None
    assert [m for _, _, m in scored] == [m for _, _, m in reference_wins(ruleset, list(heaps))]
    assert perfect_choice(state, random.Random(seed)) == full_ranking(state, random.Random(seed))


def test_equal_piles_keep_every_winning_move_in_pile_order() -> None:
    """[5, 2, 5, 5]: nim-sum 7, three winning moves (each 5 to 2), one per pile of 5 in pile
    order; different seeds pick different piles, as the full ranking does."""
    ruleset = Ruleset()
    state = _state(ruleset, [5, 2, 5, 5])
    scored = _winning_scores(ruleset.engine, state.board, (2, 5, 5, 5), interactive_budget())
    assert scored is not None
    assert [str(m) for _, _, m in scored] == ["1 3", "3 3", "4 3"]
    picked = set()
    for seed in range(30):
        choice = perfect_choice(state, random.Random(seed))
        assert choice == full_ranking(state, random.Random(seed))
        picked.add(str(choice.move))
    assert picked == {"1 3", "3 3", "4 3"}


def test_the_fast_path_steps_aside_where_it_does_not_apply() -> None:
    """P-positions, rows of stones, extra end positions and misère subtraction games are ranked
    in full."""
    budget = interactive_budget()
    cases = [
        (Ruleset(), [1, 2, 3]),  # a P-position
        (Ruleset(parse_game("kayles")), [3, 4]),  # rows of stones
        (Ruleset().with_defaults(), [3, 4, 5]),  # the classic end positions
        (Ruleset(parse_game("subtraction:1-3"), True), [5, 6]),  # misère quotient/search
    ]
    for ruleset, heaps in cases:
        state = _state(ruleset, heaps)
        c = state.board.canonical
        assert _winning_scores(ruleset.engine, state.board, c, budget) is None
