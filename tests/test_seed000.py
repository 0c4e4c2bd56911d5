"""Seed 000's semantics: extra end positions really change the game (seed-facts.md)."""

from __future__ import annotations

import pytest

from nimlab import Game, Position, PositionError, Ruleset, analyze
from nimlab.theory.outcome import Outcome

MISERE_DEFAULTS = Ruleset.parse("nim misere defaults")
NORMAL_DEFAULTS = Ruleset.parse("nim defaults")


@pytest.mark.parametrize("heaps", [(1, 2, 4), (1, 3, 5), (4, 5, 6), (2, 8, 10)])
def test_p_positions_under_misere_defaults(heaps: tuple[int, ...]) -> None:
    assert MISERE_DEFAULTS.evaluator.outcome(tuple(sorted(heaps))) is Outcome.P


def test_one_four_five() -> None:
    assert MISERE_DEFAULTS.evaluator.outcome((1, 4, 5)) is Outcome.N
    assert NORMAL_DEFAULTS.evaluator.outcome((1, 4, 5)) is Outcome.P


def test_plain_misere_nim_disagrees() -> None:
    plain = Ruleset.parse("nim misere").evaluator
    assert plain.outcome((1, 2, 4)) is Outcome.N
    assert plain.outcome((4, 5, 6)) is Outcome.N


def test_only_winning_move_from_345_takes_three_from_the_four() -> None:
    a = analyze(MISERE_DEFAULTS, Position.of([3, 4, 5]))
    assert a.outcome is Outcome.N
    assert [(m.move.pile, m.move.take) for m in a.winning_moves] == [(2, 3)]


def test_end_position_matches_as_multiset_ignoring_empty_piles() -> None:
    assert MISERE_DEFAULTS.is_end_position([0, 2, 0, 2, 2])
    assert MISERE_DEFAULTS.is_end_position([3, 2, 1])
    assert not MISERE_DEFAULTS.is_end_position([2, 2])


@pytest.mark.parametrize("misere", [False, True])
@pytest.mark.parametrize("players", [2, 4])
def test_a_start_position_already_an_end_position_is_refused(misere: bool, players: int) -> None:
    # the game would be over before anyone moves: the library refuses it as `nimlab play` does
    ruleset = Ruleset(misere=misere).with_defaults()
    names = [f"human:P{i}" for i in range(players)]
    for start in ([2, 2, 2], [0, 0]):
        with pytest.raises(PositionError, match="already an end position"):
            Game(ruleset, start, names)


def test_three_player_elimination_rounds() -> None:
    ruleset = Ruleset.parse("nim misere")
    game = Game(ruleset, [1, 2], ["human:A", "human:B", "human:C"])
    game.push("2 2")  # A -> [1, 0]
    game.push("1 1")  # B moves into the empty board: eliminated
    assert [p.name for p in game.eliminated] == ["B"]
    assert game.round == 2 and game.board.heaps == (1, 2) and game.to_move.name == "A"
    assert not game.is_over
    game.push("1 1")  # A -> [0, 2]
    turn = game.push("2 2")  # C empties the board: eliminated, A is the last player left
    assert turn.eliminated and turn.winner is not None and turn.winner.name == "A"
    assert game.is_over and game.winner is not None and game.winner.name == "A"


def test_four_player_elimination_new_round_starts_with_first_remaining() -> None:
    ruleset = Ruleset.parse("nim misere")
    game = Game(ruleset, [1], ["human:A", "human:B", "human:C", "human:D"])
    game.push("1 1")  # A eliminated
    assert game.to_move.name == "B" and game.round == 2
    game.push("1 1")  # B eliminated
    assert game.to_move.name == "C" and game.active == (2, 3)
    game.push("1 1")  # C eliminated -> D wins
    assert game.winner is not None and game.winner.name == "D"
    assert [p.name for p in game.eliminated] == ["A", "B", "C"]


def test_normal_play_many_players_first_into_end_wins() -> None:
    ruleset = Ruleset.parse("nim end=2.2")
    game = Game(ruleset, [2, 2, 3], ["human:A", "human:B", "human:C"])
    game.push("3 1")  # A -> [2, 2, 2] (not an end: 2.2 has two heaps)
    turn = game.push("3 2")  # B -> [2, 2, 0] = end position 2.2: B wins
    assert turn.winner is not None and turn.winner.name == "B" and game.is_over
