"""One generic test over every registered game (in the style of OpenSpiel's): random playouts
under normal and misère play with random extra end positions check that the legal moves are the
board's successors, that a game is over exactly at an end position or where no move is left, that
records replay exactly, and that the perfect bot plays as the exact solver says."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nimlab.core.analysis import count_moves
from nimlab.core.bots import perfect_choice
from nimlab.core.game import Game
from nimlab.core.games import GAMES, GameEntry, parse_game
from nimlab.core.position import Move
from nimlab.core.ruleset import Ruleset
from nimlab.theory.outcome import Outcome
from nimlab.theory.solver import ExactSolver

EXTRA = ("octal:0.4", "octal:4.07", "octal:0.54", "subtraction:1,3,4")
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
    ruleset = Ruleset(parse_game(game), misere).with_end_positions(*ends)
    rule = ruleset.rule
    rng = random.Random(seed)
    g = Game(ruleset, heaps, ["bot:random:A", "bot:random:B"], seed=seed)
    exact = ExactSolver(rule, misere=misere, end_positions=ruleset.end_positions)
    while not g.is_over:
        board = g.board
        legal = list(board.legal_moves(rule))
        successors = list(board.successors(rule))
        assert [m for m, _ in successors] == legal
        assert all(board.play(rule, m) == after for m, after in successors)
        assert count_moves(ruleset, board) == len(legal)
        assert legal and not ruleset.is_terminal(board.heaps)
        if rng.random() < 0.3:  # the perfect bot plays as the exact solver says
            perfect = Game.from_record(g.to_record())
            before = exact.value(board.canonical)
            choice = _perfect(ruleset, g)
            after = exact.value(board.play(rule, choice).canonical)
            if before.outcome is Outcome.N:
                assert after.outcome is Outcome.P
                assert after.remoteness == before.remoteness - 1
            else:
                assert after.remoteness == before.remoteness - 1
            assert perfect.board == board
        g.push(rng.choice(legal))
        if g.is_over:  # over exactly when the last move reached an end or a dead position
            last = g.history[-1].after
            assert ruleset.is_terminal(last.heaps)
            assert (
                last.canonical in ruleset.end_positions
                or not last.canonical
                or not list(last.legal_moves(rule))
            )
    replayed = Game.from_record(g.to_record())
    assert replayed.board == g.board
    assert replayed.winner_seat == g.winner_seat
    assert [t.move for t in replayed.history] == [t.move for t in g.history]


def _perfect(ruleset: Ruleset, game: Game) -> Move:
    return perfect_choice(game.state, random.Random(0)).move
