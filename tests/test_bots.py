"""Bots: perfect is perfect under the real rules; the others behave as specified."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from nimlab import Game, Position, Ruleset
from nimlab.core.analysis import analyze
from nimlab.core.bots import classic_choice
from nimlab.core.position import board_for
from nimlab.core.ruleset import parse_game
from nimlab.theory.outcome import Outcome
from nimlab.theory.solver import ExactSolver

GAMES = st.sampled_from(
    ["nim", "subtraction:1-3", "subtraction:1,3,4", "kayles", "dawson", "octal:0.137"]
)
ENDS = st.frozensets(
    st.lists(st.integers(1, 4), min_size=1, max_size=3).map(lambda xs: tuple(sorted(xs))),
    max_size=3,
)


@settings(max_examples=60)
@given(
    GAMES,
    st.booleans(),
    ENDS,
    st.lists(st.integers(0, 6), min_size=1, max_size=3),
    st.integers(0, 99),
)
def test_perfect_bot_wins_every_winnable_position(game, misere, ends, heaps, seed) -> None:
    ruleset = Ruleset(parse_game(game), misere, ends)
    if ruleset.is_terminal(heaps):
        return
    g = Game(ruleset, heaps, ["bot:perfect:P", "human:H"], seed=seed)
    solver = ExactSolver(ruleset.rule, misere=misere, end_positions=ruleset.end_positions)
    start = solver.value(g.board.canonical)
    choice = g.bot_choice()
    after = g.board.play(ruleset.rule, choice.move).canonical
    value = solver.value(after)
    if start.outcome is Outcome.N:
        assert value.outcome is Outcome.P
        assert value.remoteness == start.remoteness - 1  # and it hurries
        assert choice.proven
    else:
        assert value.remoteness == start.remoteness - 1  # it resists longest


def test_seed_000_defaults_classic_loses_a_third_perfect_none() -> None:
    """seed-facts: the textbook bot picks a losing move in about a third of winnable positions."""
    ruleset = Ruleset.parse("nim misere defaults")
    solver = ExactSolver(ruleset.rule, misere=True, end_positions=ruleset.end_positions)
    rng = random.Random(0)
    winnable = classic_wrong = perfect_wrong = 0
    for a in range(1, 8):
        for b in range(a, 8):
            for c in range(b, 8):
                heaps = [a, b, c]
                if ruleset.is_terminal(heaps) or solver.value((a, b, c)).outcome is not Outcome.N:
                    continue
                winnable += 1
                board = Position.of(heaps)
                move = classic_choice(ruleset, board, rng).move
                if solver.value(board.play(ruleset.rule, move).canonical).outcome is not Outcome.P:
                    classic_wrong += 1
                g = Game(ruleset, heaps, ["bot:perfect:P", "human:H"], seed=1)
                move = g.bot_choice().move
                if solver.value(board.play(ruleset.rule, move).canonical).outcome is not Outcome.P:
                    perfect_wrong += 1
    assert winnable > 50
    assert perfect_wrong == 0
    assert 0.15 < classic_wrong / winnable < 0.6


def test_perfect_bot_beats_classic_under_defaults() -> None:
    ruleset = Ruleset.parse("nim misere defaults")
    wins = 0
    for seed in range(20):
        g = Game(ruleset, [3, 4, 5], ["bot:perfect:P", "bot:classic:C"], seed=seed)
        while not g.is_over:
            g.play_bot()
        wins += g.winner is not None and g.winner.name == "P"
    assert wins == 20  # [3,4,5] is an N-position and P moves first


def test_error_rate_100_is_random_and_seedable() -> None:
    moves = []
    for _ in range(2):
        g = Game(Ruleset(), [7, 7, 7], ["bot:perfect:P:error=100", "human:H"], seed=42)
        moves.append([str(g.bot_choice().move) for _ in range(5)])
    assert moves[0] == moves[1]
    g = Game(Ruleset(), [7, 7, 7], ["bot:perfect:P:error=100", "human:H"], seed=42)
    assert "error rate" in g.bot_choice().claim


def test_random_bot_is_uniform_over_moves() -> None:
    g = Game(Ruleset(), [1, 3], ["bot:random:R", "human:H"], seed=1)
    counts: dict[str, int] = {}
    for _ in range(4000):
        m = str(g.bot_choice().move)
        counts[m] = counts.get(m, 0) + 1
    assert set(counts) == {"1 1", "2 1", "2 2", "2 3"}
    assert min(counts.values()) > 800


def test_lookahead_sees_the_end_positions() -> None:
    ruleset = Ruleset.parse("nim misere defaults")
    g = Game(ruleset, [3, 4, 5], ["bot:lookahead:12:L", "human:H"], seed=0)
    solver = ExactSolver(ruleset.rule, misere=True, end_positions=ruleset.end_positions)
    move = g.bot_choice().move
    assert solver.value(g.board.play(ruleset.rule, move).canonical).outcome is Outcome.P


def test_plain_nim_perfect_bot_on_a_huge_position() -> None:
    g = Game(Ruleset(), [10**100, 10**100 - 1, 5], ["bot:perfect:P", "human:H"])
    choice = g.bot_choice()
    after = g.board.play(g.ruleset.rule, choice.move)
    assert analyze(Ruleset(), after).outcome is Outcome.P  # nim-sum 0
    assert choice.proven


def test_perfect_bot_many_players_never_misses_a_paranoid_win() -> None:
    """With 2 players the paranoid model is the two-player solver."""
    ruleset = Ruleset.parse("nim misere defaults")
    for heaps in ([3, 4, 5], [1, 2, 4], [2, 3, 6]):
        solver = ExactSolver(ruleset.rule, misere=True, end_positions=ruleset.end_positions)
        g = Game(ruleset, heaps, ["bot:perfect:A", "human:B"])
        para = ruleset.engine.paranoid(g.start.canonical)
        assert para.value(tuple(sorted(heaps)), (0, 1), 0, 0).hero_wins == (
            solver.value(tuple(sorted(heaps))).outcome is Outcome.N
        )


def test_board_for_splitting_games_is_rows() -> None:
    assert board_for(parse_game("kayles").rule, [3]).heaps == (3,)


def test_a_losing_perfect_bot_gives_only_a_proven_length() -> None:
    """[1000, 1000] is lost; only emptying a pile has a remoteness within reach: the bot plays a
    move whose length is unknown (longer) and names no count for it."""
    from nimlab.core.bots import perfect_choice

    g = Game(Ruleset(), [1000, 1000], ["bot:perfect:P", "human:H"], seed=1)
    for seed in range(5):
        choice = perfect_choice(g.state, random.Random(seed))
        assert choice.move.take < 1000
        assert choice.claim == "every move loses; this one resists longest"
