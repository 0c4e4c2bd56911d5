"""Northcott's game: a board of rows, all ``width`` squares wide; each row holds one white and
one black checker. White moves a white checker, Black a black one: any number of squares left or
right along its row, staying on the board, never onto or over the other checker of the row. The
player who cannot move loses (normal play); in misère play that player wins.

Encoding: a row is ``(white, black)``, the columns (0 to ``width - 1``) of its two checkers, and
a position is the tuple of rows, top to bottom. Whose turn it is: ``side`` 0 (White) or 1
(Black); the exact search works on states ``(rows, side)`` (:func:`northcott_state_moves`).

Theory: the *gap* of a row is the number of empty squares between its checkers. Moving a checker
toward the other is a Nim move on the gap; moving it away (a retreat) enlarges the gap, and the
opponent can at once move their own checker after it, which restores the gap. So the player to
move wins exactly when the nim-sum of the gaps is not 0, whatever their colour: the winner plays
Nim on the gaps and answers every retreat by following it. Play cannot go on forever: the
loser's room to retreat (the squares behind the loser's checkers) shrinks with every retreat
answered, and grows only with the loser's advances, each of which the winner answers by shrinking
the gaps by at least one more; twice the sum of the gaps plus that room falls with each pair of
moves, so there are no draws. The tests check this against retrograde analysis of the whole game
(:func:`nimlab.theory.loopy.loopy_outcomes`) on small boards. Misère play: exact search only (on
small boards it finds nearly every position drawn: nobody has to make the last move, since a
checker can always shuffle back and forth).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from nimlab.theory.nim import nim_sum
from nimlab.theory.outcome import Outcome

__all__ = [
    "NorthcottWorking",
    "northcott_gaps",
    "northcott_moves",
    "northcott_outcome",
    "northcott_state_moves",
    "northcott_winning_moves",
    "northcott_working",
]

Row = tuple[int, int]
Rows = tuple[Row, ...]
State = tuple[Rows, int]


def _check(rows: Sequence[Sequence[int]], width: int | None = None) -> Rows:
    board = tuple((int(r[0]), int(r[1])) for r in rows)
    for white, black in board:
        if white == black or min(white, black) < 0:
            raise ValueError(
                f"a row holds a white and a black checker on different squares (columns from "
                f"0), got {(white, black)}"
            )
        if width is not None and max(white, black) >= width:
            raise ValueError(f"the board is {width} squares wide: columns are 0 to {width - 1}")
    return board


def _side(side: int) -> int:
    if side not in (0, 1):
        raise ValueError(f"the side to move is 0 (White) or 1 (Black), got {side!r}")
    return side


def northcott_gaps(rows: Sequence[Sequence[int]]) -> tuple[int, ...]:
    """The empty squares between the two checkers of each row. O(rows)."""
    return tuple(abs(white - black) - 1 for white, black in _check(rows))


def northcott_moves(
    rows: Sequence[Sequence[int]], width: int, side: int
) -> Iterator[tuple[int, int, Rows]]:
    """Every move of ``side`` (0 White, 1 Black) as ``(row index, new column, rows after)``,
    row by row, columns ascending. O(rows * width)."""
    board = _check(rows, width)
    _side(side)
    for i, row in enumerate(board):
        own, other = row[side], row[1 - side]
        squares = range(other) if own < other else range(other + 1, width)
        for column in squares:
            if column != own:
                after = (column, other) if side == 0 else (other, column)
                yield i, column, board[:i] + (after,) + board[i + 1 :]


def northcott_state_moves(state: State, width: int) -> Iterator[State]:
    """The states one move away from ``(rows, side)``: the move generator for the exact search
    (the side to move changes with every move). O(rows * width)."""
    rows, side = state
    for _i, _column, after in northcott_moves(rows, width, side):
        yield after, 1 - side


@dataclass(frozen=True, slots=True)
class NorthcottWorking:
    """Why a Northcott position has its outcome, as data: the gap of each row and their nim-sum
    (Nim on the gaps); P exactly when it is 0, whichever side is to move."""

    gaps: tuple[int, ...]
    nim_sum: int

    @property
    def p_position(self) -> bool:
        return self.nim_sum == 0


def northcott_working(rows: Sequence[Sequence[int]]) -> NorthcottWorking:
    """The gaps and their nim-sum. O(rows)."""
    gaps = northcott_gaps(rows)
    return NorthcottWorking(gaps, nim_sum(gaps))


def northcott_outcome(rows: Sequence[Sequence[int]]) -> Outcome:
    """Normal play: the player to move wins exactly when the gaps' nim-sum is not 0. O(rows).

    >>> northcott_outcome(((0, 3), (5, 2))), northcott_outcome(((0, 3), (5, 1)))
    (<Outcome.P: 'P'>, <Outcome.N: 'N'>)
    """
    return Outcome.of(not northcott_working(rows).p_position)


def northcott_winning_moves(
    rows: Sequence[Sequence[int]], width: int, side: int
) -> list[tuple[int, int]]:
    """Every winning move of ``side`` in normal play as ``(row index, new column)``, in the order
    of :func:`northcott_moves`: those that make the gaps' nim-sum 0, the Nim moves toward the
    other checker and the retreats that enlarge a gap to ``gap ^ s`` (winning too, though
    slower). Empty for a P-position. O(rows)."""
    board = _check(rows, width)
    _side(side)
    s = northcott_working(board).nim_sum
    if s == 0:
        return []
    moves = []
    for i, row in enumerate(board):
        own, other = row[side], row[1 - side]
        gap = abs(own - other) - 1
        target = gap ^ s
        column = other - target - 1 if own < other else other + target + 1
        if 0 <= column < width:
            moves.append((i, column))
    return moves
