"""Staircase Nim: coins on the steps of a staircase; a move moves one or more coins from one step
down to the step below it, and coins moved from step 1 leave the game (they reach the ground).
The player who makes the last move wins (normal play); in misère play that player loses.

A position is the tuple of coin counts on the steps, listed from the step next to the ground:
``position[0]`` is step 1, ``position[i]`` is step ``i + 1``. Empty steps count (their places
matter), trailing empty steps do not change the game.

Theory: a position is a P-position exactly when the nim-sum of the odd steps (1, 3, 5, ...) is 0
(the even steps are Nim's discard pile: coins moved from an even step onto an odd one can be moved
on to the next even step at once).

Misère play: a position is a P-position exactly when the odd steps are a P-position of misère
Nim. Proof, by induction over the finite game: the only end position is the empty staircase, an
N-position of misère play and of misère Nim. From a position whose odd steps are misère-Nim N,
either some odd step has coins, and misère Nim's winning move (always a reduction) is a legal
move here, or every odd step is empty and some even step is not, and moving one coin from it
onto the odd step below leaves odd steps with a single coin (misère-Nim P). From a misère-Nim P
position, a move either reduces one odd step (a misère Nim move, so to N) or adds coins to one
(then either the nim-sum changes while a step above 1 remains, or a step rises above 1 as the
only one, or the count of 1s becomes even with none above 1: N in every case). The tests check
it against the exact search.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from nimlab.theory.nim import nim_sum
from nimlab.theory.outcome import Outcome

__all__ = [
    "StaircaseMove",
    "StaircaseWorking",
    "staircase_apply",
    "staircase_moves",
    "staircase_outcome",
    "staircase_winning_moves",
    "staircase_working",
]

Steps = tuple[int, ...]


@dataclass(frozen=True, slots=True)
class StaircaseMove:
    """Move ``coins >= 1`` coins from step ``step >= 1`` to step ``step - 1`` (0: the ground)."""

    step: int
    coins: int


def _check(position: Sequence[int]) -> Steps:
    steps = tuple(position)
    if any(c < 0 for c in steps):
        raise ValueError(f"coin counts must be at least 0, got {steps}")
    return steps


def staircase_apply(position: Sequence[int], move: StaircaseMove) -> Steps:
    """The position after ``move``; raises ``ValueError`` when the move is not legal. O(n)."""
    steps = list(_check(position))
    if not 1 <= move.step <= len(steps):
        raise ValueError(f"there is no step {move.step}: the steps are 1 to {len(steps)}")
    if not 1 <= move.coins <= steps[move.step - 1]:
        raise ValueError(f"step {move.step} has {steps[move.step - 1]} coins: move 1 to that many")
    steps[move.step - 1] -= move.coins
    if move.step >= 2:
        steps[move.step - 2] += move.coins
    return tuple(steps)


def staircase_moves(position: Sequence[int]) -> Iterator[Steps]:
    """Every position one move away (same length), step 1 first, fewest coins first. O(total
    coins) positions of O(n) each."""
    steps = _check(position)
    for i, c in enumerate(steps):
        for t in range(1, c + 1):
            child = list(steps)
            child[i] -= t
            if i:
                child[i - 1] += t
            yield tuple(child)


@dataclass(frozen=True, slots=True)
class StaircaseWorking:
    """Why a Staircase Nim position has its outcome, as data: the odd steps (their numbers, 1,
    3, 5, ..., and their coins), the nim-sum of those coins, and whether some odd step holds
    more than one coin (which misère play asks). ``p_position`` is Bouton's rule for normal
    play (nim-sum 0) or misère play (nim-sum 0 when some odd step holds more than one coin,
    else nim-sum 1) applied to the odd steps."""

    odd_steps: tuple[int, ...]
    odd_coins: tuple[int, ...]
    nim_sum: int
    big_odd_step: bool
    misere: bool

    @property
    def p_position(self) -> bool:
        if self.misere and not self.big_odd_step:
            return self.nim_sum == 1
        return self.nim_sum == 0


def staircase_working(position: Sequence[int], *, misere: bool = False) -> StaircaseWorking:
    """The odd steps of ``position`` and their nim-sum. O(n)."""
    steps = _check(position)
    odd = tuple(range(1, len(steps) + 1, 2))
    coins = tuple(steps[s - 1] for s in odd)
    return StaircaseWorking(odd, coins, nim_sum(coins), any(c > 1 for c in coins), misere)


def staircase_outcome(position: Sequence[int], *, misere: bool = False) -> Outcome:
    """P exactly when the odd steps form a P-position of Nim (normal play: nim-sum 0) or of
    misère Nim (misère play). O(n).

    >>> staircase_outcome((3, 7, 3)), staircase_outcome((1, 5))
    (<Outcome.P: 'P'>, <Outcome.N: 'N'>)
    """
    return Outcome.of(not staircase_working(position, misere=misere).p_position)


def staircase_winning_moves(
    position: Sequence[int], *, misere: bool = False
) -> list[StaircaseMove]:
    """Every winning move (by step, then coins); empty for a P-position. O(n).

    For each odd step there is exactly one number of coins ``v`` it could hold that makes the
    odd steps a P-position (Nim: ``c ^ s`` for its ``c`` coins and the nim-sum ``s``; misère
    Nim: the nim-sum of the other odd steps when one of them holds more than one coin, else
    1 minus it). A move wins exactly when it gives one odd step its ``v``: moving ``c - v``
    coins down from it when ``v < c``, or ``v - c`` coins onto it from the even step above when
    ``v > c`` and that step has so many coins.
    """
    working = staircase_working(position, misere=misere)
    if working.p_position:
        return []
    steps = _check(position)
    big = sum(1 for c in working.odd_coins if c > 1)
    moves = []
    for i, c in enumerate(steps):
        step = i + 1
        odd = i if step % 2 else i - 1  # the odd step this move changes (0-based)
        have = steps[odd]
        others = working.nim_sum ^ have
        # misère with no other odd step above 1: their nim-sum is their parity; make it odd
        lone = misere and big - (have > 1) == 0
        target = 1 - others if lone else others
        if step % 2:  # odd: move coins down, off the odd steps
            if target < c:
                moves.append(StaircaseMove(step, c - target))
        elif 0 < target - have <= c:  # even: move coins onto the odd step below
            moves.append(StaircaseMove(step, target - have))
    return moves
