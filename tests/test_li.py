"""Li's ranking model: the exact search against a brute-force ranking of whole plays, the
two-player solver, and Li's formula for Nim."""

from __future__ import annotations

from functools import cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nimlab.theory.budget import Budget, BudgetExceeded
from nimlab.theory.li import LiModelError, LiSolver, li_formula, li_last_mover
from nimlab.theory.octal import TakeAndBreak
from nimlab.theory.outcome import Outcome
from nimlab.theory.positions import Canon, children, is_terminal
from nimlab.theory.solver import ExactSolver
from strategies import end_positions, positions, rules

NIM = TakeAndBreak.nim()


def rank_after(plays: int, players: int) -> int:
    """The rank of the player who moves first in a play of ``plays`` moves, ranking players by
    the time of their last move (latest first); players who never moved come last."""
    last: dict[int, int] = {}
    for i in range(plays):
        last[i % players] = i
    order = sorted(last, key=lambda p: -last[p])
    return order.index(0) + 1 if 0 in last else players


def brute_last_mover(
    rule: TakeAndBreak, position: Canon, players: int, ends: frozenset[Canon]
) -> int:
    """Every player picks the move that gives it the best rank at the end of the whole play
    (the rank computed from the play itself); the answer is the last mover's offset."""

    @cache
    def length(pos: Canon) -> int:  # the number of moves of the rational play from pos
        kids = set(children(rule, pos))
        if is_terminal(rule, pos, ends) or not kids:
            return 0
        return min((length(k) + 1 for k in kids), key=lambda m: rank_after(m, players))

    m = length(position)
    return (m - 1) % players if m else players - 1


def no_move_quirk(rule: TakeAndBreak) -> bool:
    return all(
        (next(rule.takes(h), None) is None) == (next(rule.options(h), None) is None)
        for h in range(1, 7)
    )


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rule=rules(splitting=True),
    position=positions(max_heap=6, max_piles=3),
    players=st.integers(2, 5),
    ends=end_positions(max_heap=4),
)
def test_search_equals_the_brute_force_rank_model(
    rule: TakeAndBreak, position: Canon, players: int, ends: frozenset[Canon]
) -> None:
    solver = LiSolver(rule, players, end_positions=ends, use_formula=False)
    assert solver.last_mover(position) == brute_last_mover(rule, position, players, ends)


@settings(max_examples=100, deadline=None)
@given(
    rule=rules(splitting=True),
    position=positions(max_heap=7, max_piles=4),
    ends=end_positions(max_heap=4),
)
def test_two_players_last_mover_is_the_previous_player_at_p_positions(
    rule: TakeAndBreak, position: Canon, ends: frozenset[Canon]
) -> None:
    exact = ExactSolver(rule, end_positions=ends)
    got = li_last_mover(rule, position, 2, end_positions=ends)
    assert (got == 1) == (exact.value(position).outcome is Outcome.P)


@cache
def nim_search(players: int) -> LiSolver:
    """The search without the formula for Nim, one per number of players, kept from one example
    to the next (what it worked out for one position answers the next one's subpositions; a
    fresh search per position is compared with the rank model above)."""
    return LiSolver(NIM, players, use_formula=False)


@settings(max_examples=300, deadline=None)
@given(position=positions(max_heap=10, max_piles=4), players=st.integers(2, 6))
def test_li_formula_agrees_with_the_search(position: Canon, players: int) -> None:
    want = nim_search(players).last_mover(position)
    found = li_formula(position, players)
    if players <= 3:
        assert found is not None
    if found is not None:
        assert found == want
    assert li_last_mover(NIM, position, players) == want
    # Li 1978: the player who just moved is last exactly when every column sum is divisible
    divisible = all(
        sum((h >> b) & 1 for h in position) % players == 0
        for b in range(max(position, default=0).bit_length())
    )
    assert (want == players - 1) == divisible


def test_formula_on_huge_heaps() -> None:
    big = 10**100
    assert li_last_mover(NIM, (big, big, big), 3) == 2
    assert li_last_mover(NIM, (big, big), 2) == 1
    assert li_last_mover(NIM, (big, big + 1), 2) == 0
    assert li_last_mover(NIM, (big,), 5) == 0
    assert li_formula((1, 2), 4) is None  # four players: the formula stops here
    assert li_last_mover(NIM, (1, 2), 4) == 1


def test_terminal_positions_and_bad_player_counts() -> None:
    assert li_last_mover(NIM, (), 4) == 3
    assert li_last_mover(NIM, (1, 2, 3), 3, end_positions=frozenset({(1, 2, 3)})) == 2
    assert li_last_mover(TakeAndBreak.octal("0.07"), (1,), 3) == 2  # no move from a heap of 1
    with pytest.raises(LiModelError, match="at least 2 players"):
        li_last_mover(NIM, (1, 2), 1)


def test_huge_positions_beyond_the_budget() -> None:
    kayles = TakeAndBreak.octal("0.77")
    with pytest.raises(BudgetExceeded) as info:
        li_last_mover(kayles, (10**100,), 3, budget=Budget(positions=1000))
    assert info.value.reason == "positions"
    cancelled = Budget()
    cancelled.cancel()
    with pytest.raises(BudgetExceeded) as info:
        li_last_mover(NIM, (10**100, 10**100 - 1, 3, 5), 4, budget=cancelled)
    assert info.value.reason == "cancelled"
    # a later question with a fresh budget still works
    assert li_last_mover(kayles, (3, 4), 3) == brute_last_mover(kayles, (3, 4), 3, frozenset())


def test_the_table_is_bounded() -> None:
    solver = LiSolver(TakeAndBreak.octal("0.77"), 4, max_states=200)
    for _ in range(2):
        with pytest.raises(BudgetExceeded) as info:
            solver.last_mover((40, 41))
        assert info.value.reason == "memory"
        assert solver.stored <= 200
    assert solver.last_mover((3,)) == brute_last_mover(solver.rule, (3,), 4, frozenset())
