"""One generic test over every registered game (in the style of OpenSpiel's), asking only the
game's rules (:class:`~nimlab.core.rules.Rules`): random playouts under normal and misère play
with random extra end positions (where the rules take them) check that the legal moves are the
successors, that every move's text form reads back to it, that a game is over exactly at an end
position or where no move is left, that records replay exactly, and that the perfect bot plays
as an exact solver says (for heap games the take-and-break reference; for the relatives a plain
search over the rules' own moves, which the engine's theorems must agree with). A game added to
the registry is tested here without a line more."""

from __future__ import annotations

import random

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from nimlab.core.analysis import analyze, count_moves
from nimlab.core.bots import perfect_choice
from nimlab.core.errors import PositionError
from nimlab.core.game import Game
from nimlab.core.games import GAMES, GameEntry, parse_game
from nimlab.core.position import Move
from nimlab.core.rules import PileRules, Rules
from nimlab.core.ruleset import Ruleset
from nimlab.theory.outcome import Outcome
from nimlab.theory.positions import Canon, canonical
from nimlab.theory.solver import ExactSolver, MoveSolver

EXTRA = ("octal:0.4", "octal:4.07", "octal:0.54", "subtraction:1,3,4", "moore:1", "moore:3")
"""Parameters of the parametrised games beyond each entry's example."""


def _kinds() -> list[str]:
    names = [f"{e.name}:{e.example}" if e.parameter else e.name for e in GAMES.values()]
    return names + list(EXTRA)


def test_every_entry_is_played() -> None:
    played = {parse_game(name).entry.name for name in _kinds()}
    assert played == {e.name for e in GAMES.values() if isinstance(e, GameEntry)}


@pytest.mark.parametrize("game", _kinds())
@settings(max_examples=15, deadline=None)
@given(
    misere=st.booleans(),
    ends=st.lists(st.lists(st.integers(1, 4), min_size=1, max_size=3), max_size=2),
    heaps=st.lists(st.integers(0, 7), min_size=1, max_size=3).filter(any),
    seed=st.integers(0, 10**6),
)
def test_random_playouts_keep_every_invariant(
    game: str, misere: bool, ends: list[list[int]], heaps: list[int], seed: int
) -> None:
    kind = parse_game(game)
    rules = kind.rules
    heaps = _fit(rules, heaps)
    if not rules.end_positions_allowed:
        ends = []
    ruleset = Ruleset(kind, misere).with_end_positions(*ends)
    rng = random.Random(seed)
    try:
        g = Game(ruleset, heaps, ["bot:random:A", "bot:random:B"], seed=seed)
    except PositionError:  # a start with no move (e.g. Fibonacci Nim on one object)
        assume(False)
        return
    exact = _exact(ruleset)
    while not g.is_over:
        board = g.board
        successors = list(rules.successors(board))
        legal = [m for m, _ in successors]
        assert g.legal_moves == legal
        assert all(rules.play(board, m) == after for m, after in successors)
        assert all(rules.parse_move(str(m), board) == m for m in legal[:50])
        assert count_moves(ruleset, board) == len(legal)
        assert legal and not ruleset.is_over(board)
        if not ruleset.game.is_heap_game:  # the rules' theorems agree with the search
            assert (
                analyze(ruleset, board, max_moves=0).outcome is exact.value(board.canonical).outcome
            )
        if rng.random() < 0.3:  # the perfect bot plays as the exact solver says
            perfect = Game.from_record(g.to_record())
            before = exact.value(board.canonical)
            choice = _perfect(ruleset, g)
            after = exact.value(rules.play(board, choice).canonical)
            if before.outcome is Outcome.N:
                assert after.outcome is Outcome.P
                assert after.remoteness == before.remoteness - 1
            else:
                assert after.remoteness == before.remoteness - 1
            assert perfect.board == board
        g.push(rng.choice(legal))
        if g.is_over:  # over exactly when the last move reached an end or a dead position
            last = g.history[-1].after
            assert ruleset.is_over(last)
            assert canonical(last.heaps) in ruleset.end_positions or not list(
                rules.successors(last)
            )
    replayed = Game.from_record(g.to_record())
    assert replayed.board == g.board
    assert replayed.winner_seat == g.winner_seat
    assert [t.move for t in replayed.history] == [t.move for t in g.history]


def _fit(rules: Rules, heaps: list[int]) -> list[int]:
    """Heaps the rules take: as many piles as they are played on."""
    if isinstance(rules, PileRules) and rules.piles is not None:
        return (heaps + [3, 5])[: rules.piles]
    return heaps


def _exact(ruleset: Ruleset) -> ExactSolver | MoveSolver[Canon]:
    """A reference solver of the ruleset: the take-and-break search for heap games, a plain
    search over the rules' own moves for the relatives (no theorem involved)."""
    if ruleset.game.is_heap_game:
        return ExactSolver(ruleset.rule, misere=ruleset.misere, end_positions=ruleset.end_positions)
    rules = ruleset.relative_rules
    return MoveSolver(
        lambda key: (after.canonical for _, after in rules.successors(rules.board_of(key))),
        misere=ruleset.misere,
        is_end=lambda key: rules.end_key(key) in ruleset.end_positions,
    )


def _perfect(ruleset: Ruleset, game: Game) -> Move:
    return perfect_choice(game.state, random.Random(0)).move
