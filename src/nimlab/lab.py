"""The teaching module: the Nim lab notebook's functions with exactly the notebook's contracts,
so its asserts run unchanged after ``from nimlab.lab import *``.

Boards are lists of row lengths; rows are numbered from 1.

.. warning:: Naming. The notebook calls a position with nim-sum 0 an "N-position"; standard
   combinatorial game theory (and the rest of nimlab) calls it a **P-position** (the *previous*
   player wins). :func:`is_n_position` and :func:`is_p_position` keep the notebook's swapped
   meaning so its exercises still pass; :func:`standard_outcome` gives the standard letter.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from nimlab.core.errors import NimlabError
from nimlab.core.position import Move, Position
from nimlab.theory.nim import nim_sum as _nim_sum
from nimlab.theory.nim import nim_winning_moves
from nimlab.theory.octal import TakeAndBreak

__all__ = [
    "binary_numeral",
    "bitwise_exclusive_or",
    "exclusive_or",
    "is_board_empty",
    "is_human",
    "is_n_position",
    "is_p_position",
    "make_move",
    "nim_sum",
    "numeral_binary",
    "optimal_move",
    "play_nim",
    "present_board",
    "standard_outcome",
]

_NIM = TakeAndBreak.nim()


def present_board(board: list[int]) -> str:
    """``"Nim:"`` then one line per row, ``"{i}: X X X"`` (an empty row is ``"{i}:"``).

    >>> present_board([4, 3, 1, 2])
    'Nim:\\n1: X X X X\\n2: X X X\\n3: X\\n4: X X'
    """
    return "\n".join(["Nim:"] + [f"{i}:" + " X" * n for i, n in enumerate(board, 1)])


def make_move(board: list[int], row: int, elements: int) -> tuple[list[int], bool]:
    """Remove ``elements`` from row ``row`` (1-based). Returns ``(new_board, success)``; the input
    is never changed, and an illegal move returns an unchanged copy with ``False``."""
    try:
        after = Position(tuple(board)).play(_NIM, Move(row, elements))
    except NimlabError:
        return board[:], False
    return list(after.heaps), True


def exclusive_or(a: int, b: int) -> int:
    """XOR of two bits, with ``if`` statements (the notebook's exercise)."""
    if a == 0 and b == 0:
        return 0
    if a == 0 and b == 1:
        return 1
    if a == 1 and b == 0:
        return 1
    return 0


def numeral_binary(numeral: int) -> list[int]:
    """The binary digits of ``numeral``, most significant first; ``0 -> []``."""
    bits: list[int] = []
    while numeral:
        bits.append(numeral % 2)
        numeral //= 2
    return bits[::-1]


def binary_numeral(binary: list[int]) -> int:
    """The number whose binary digits (most significant first) are ``binary``; ``[] -> 0``."""
    result = 0
    for bit in binary:
        result = 2 * result + bit
    return result


def bitwise_exclusive_or(a: int, b: int) -> int:
    """XOR of two numbers, bit by bit with :func:`exclusive_or`."""
    x, y = numeral_binary(a), numeral_binary(b)
    width = max(len(x), len(y))
    x = [0] * (width - len(x)) + x
    y = [0] * (width - len(y)) + y
    return binary_numeral([exclusive_or(i, j) for i, j in zip(x, y, strict=True)])


def nim_sum(board: list[int]) -> int:
    """The nim-sum (XOR of all row lengths); ``[] -> 0``."""
    return _nim_sum(board)


def is_n_position(board: list[int]) -> bool:
    """The notebook's "N-position": nim-sum 0. **Standard name: P-position** (see module docs)."""
    return nim_sum(board) == 0


def is_p_position(board: list[int]) -> bool:
    """The notebook's "P-position": nim-sum not 0. **Standard name: N-position**."""
    return nim_sum(board) != 0


def standard_outcome(board: list[int]) -> str:
    """``"P"`` (previous player wins: nim-sum 0) or ``"N"`` (next player wins), standard names."""
    return "P" if nim_sum(board) == 0 else "N"


def optimal_move(board: list[int]) -> tuple[int, int]:
    """``(row, elements)``, 1-based: a random winning move (leaving nim-sum 0), or a random legal
    move when none exists. The board must not be empty."""
    winning = nim_winning_moves(board)
    if winning:
        i, after = random.choice(winning)
        return i + 1, board[i] - after
    rows = [i for i, n in enumerate(board) if n > 0]
    if not rows:
        raise ValueError("the board is empty: there is no move")
    i = random.choice(rows)
    return i + 1, random.randint(1, board[i])


def is_human(player_string: str) -> bool:
    """A player is a computer when its name contains "computer" (any case)."""
    return "computer" not in player_string.lower()


def is_board_empty(board: list[int]) -> bool:
    """Whether every row is empty (also for no rows at all)."""
    return not any(board)


def play_nim(
    player1: str,
    player2: str,
    board: list[int],
    *,
    read: Callable[[str], str] = input,
    write: Callable[[str], None] = print,
) -> str | None:
    """Play Nim in the terminal: human vs human, human vs computer or computer vs computer (a
    name containing "computer" plays :func:`optimal_move`). The board is printed every turn,
    humans type ``row, elements`` and are asked again after any bad or illegal input; whoever
    takes the last object wins. Returns the winner's name, or ``None`` when input ends."""
    board = board[:]
    player, other = player1, player2
    while not is_board_empty(board):
        write(present_board(board))
        if is_human(player):
            try:
                text = read(f"make a move {player} (row, elements) ")
            except (EOFError, KeyboardInterrupt):
                write("\nGame abandoned.")
                return None
            try:
                row, elements = (int(p) for p in text.replace(",", " ").split())
            except ValueError:
                write("Please type the row and how many elements to take, e.g. 3, 2")
                continue
            board, success = make_move(board, row, elements)
            if not success:
                write(
                    f"Illegal move: choose a non-empty row 1-{len(board)} "
                    "and take 1 up to its size."
                )
                continue
        else:
            row, elements = optimal_move(board)
            write(f"{player} makes a move {row} {elements}")
            board, _ = make_move(board, row, elements)
        player, other = other, player
    write(present_board(board))
    write(f"{other} wins")
    return other
