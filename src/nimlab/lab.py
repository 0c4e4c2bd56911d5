"""The teaching module: the Nim lab notebook's functions with exactly the notebook's contracts,
so its asserts run unchanged after ``from nimlab.lab import *``.

Boards are lists of row lengths; rows are numbered from 1.

.. warning:: Naming. The notebook calls a position with nim-sum 0 an "N-position"; standard
   combinatorial game theory (and the rest of nimlab) calls it a **P-position** (the *previous*
   player wins). :func:`is_n_position` and :func:`is_p_position` keep the notebook's swapped
   meaning so its exercises still pass; :func:`standard_outcome` gives the standard letter.

Input outside a function's contract is refused, never guessed at: a value of the wrong type
(text, a float, ``True``/``False`` where a number belongs) raises ``TypeError``, a value of the
right type that is not allowed (a negative row, a bit that is not 0 or 1, a number too big to
work with) raises ``ValueError``; both messages say what is allowed, and both errors are also
:class:`~nimlab.core.errors.NimlabError` (:class:`LabTypeError` and
:class:`~nimlab.core.errors.ArgumentError`), as every refusal of nimlab is. Bounds keep every
call small: at most :data:`MAX_BITS` binary digits, at most :data:`MAX_DRAWN` objects drawn by
:func:`present_board`.
"""

from __future__ import annotations

import random
import reprlib
from collections.abc import Callable

from nimlab.core.errors import ArgumentError, NimlabError
from nimlab.core.position import Move, Position
from nimlab.theory.nim import nim_sum as _nim_sum
from nimlab.theory.nim import nim_winning_moves
from nimlab.theory.octal import TakeAndBreak

__all__ = [
    "MAX_BITS",
    "MAX_DRAWN",
    "LabTypeError",
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


class LabTypeError(ArgumentError, TypeError):
    """A value of the wrong type: a ``TypeError`` (the notebook's contract) and, like every
    refusal of nimlab, a :class:`~nimlab.core.errors.NimlabError`."""


MAX_BITS = 1_000_000
"""The most binary digits :func:`numeral_binary`, :func:`binary_numeral` and
:func:`bitwise_exclusive_or` work with (numbers below 2**1,000,000)."""
MAX_DRAWN = 100_000
"""The most objects :func:`present_board` draws, over all rows."""


def _shown(value: object) -> str:
    """A short text for a value in a message (a number of thousands of digits is not written)."""
    if isinstance(value, int) and value.bit_length() > 64:
        return f"a number of {value.bit_length():,} binary digits"
    return reprlib.repr(value)


def _whole(value: object, what: str) -> int:
    """``value`` if it is a whole number (an ``int``, not ``True``/``False``); else TypeError."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise LabTypeError(f"{what} must be a whole number (an int), not {_shown(value)}")
    return value


def _board(board: object) -> list[int]:
    """A copy of ``board`` checked: a list (or tuple) of whole numbers 0 or more. O(rows)."""
    if not isinstance(board, list | tuple):
        raise LabTypeError(
            f"a board is a list of row lengths like [4, 3, 1, 2], not {_shown(board)}"
        )
    rows = list(board)
    for i, n in enumerate(rows, 1):
        if isinstance(n, bool) or not isinstance(n, int):
            raise LabTypeError(
                f"row {i} is {_shown(n)}: row lengths are whole numbers (ints) 0 or more"
            )
        if n < 0:
            raise ArgumentError(f"row {i} is {n}: row lengths are 0 or more")
    return rows


def _natural(value: object, what: str) -> int:
    """A whole number from 0 to below 2**MAX_BITS; else TypeError or ValueError."""
    n = _whole(value, what)
    if n < 0:
        raise ArgumentError(f"{what} is {n}: only numbers 0 or more have binary digits here")
    if n.bit_length() > MAX_BITS:
        raise ArgumentError(f"{what} has {n.bit_length():,} binary digits: at most {MAX_BITS:,}")
    return n


def present_board(board: list[int]) -> str:
    """``"Nim:"`` then one line per row, ``"{i}: X X X"`` (an empty row is ``"{i}:"``).
    ``board`` is a list of whole numbers 0 or more, with at most :data:`MAX_DRAWN` objects in
    all; anything else raises TypeError or ValueError.

    >>> present_board([4, 3, 1, 2])
    'Nim:\\n1: X X X X\\n2: X X X\\n3: X\\n4: X X'
    """
    rows = _board(board)
    if sum(rows) > MAX_DRAWN:
        raise ArgumentError(f"the board has {sum(rows):,} objects: at most {MAX_DRAWN:,} are drawn")
    return "\n".join(["Nim:"] + [f"{i}:" + " X" * n for i, n in enumerate(rows, 1)])


def make_move(board: list[int], row: int, elements: int) -> tuple[list[int], bool]:
    """Remove ``elements`` from row ``row`` (1-based). Returns ``(new_board, success)``; the input
    is never changed, and an illegal move (no such row, or not 1 up to the row's length) returns
    an unchanged copy with ``False``. ``board`` must be a list of whole numbers 0 or more and
    ``row``, ``elements`` whole numbers (ints, not ``True``/``False``): else TypeError or
    ValueError."""
    rows = _board(board)
    _whole(row, "the row")
    _whole(elements, "the number of elements")
    if not 1 <= row <= len(rows) or not 1 <= elements <= rows[row - 1]:
        return rows, False
    try:
        after = Position(tuple(rows)).play(_NIM, Move(row, elements))
    except NimlabError:
        return rows, False
    return list(after.heaps), True


def exclusive_or(a: int, b: int) -> int:
    """XOR of two bits, with ``if`` statements (the notebook's exercise). ``a`` and ``b`` are the
    ints 0 or 1; anything else raises TypeError or ValueError."""
    for name, bit in (("a", a), ("b", b)):
        _whole(bit, f"bit {name}")
        if bit not in (0, 1):
            raise ArgumentError(f"bit {name} is {bit}: a bit is 0 or 1")
    if a == 0 and b == 0:
        return 0
    if a == 0 and b == 1:
        return 1
    if a == 1 and b == 0:
        return 1
    return 0


def numeral_binary(numeral: int) -> list[int]:
    """The binary digits of ``numeral``, most significant first; ``0 -> []``. ``numeral`` is a
    whole number from 0 to below 2**:data:`MAX_BITS`; else TypeError or ValueError. O(digits)."""
    n = _natural(numeral, "the number")
    return [int(c) for c in format(n, "b")] if n else []


def binary_numeral(binary: list[int]) -> int:
    """The number whose binary digits (most significant first) are ``binary``; ``[] -> 0``.
    Every digit is the int 0 or 1 and there are at most :data:`MAX_BITS`; else TypeError or
    ValueError. O(digits)."""
    if not isinstance(binary, list | tuple):
        raise LabTypeError(
            f"binary digits are a list of 0s and 1s like [1, 1, 0], not {_shown(binary)}"
        )
    if len(binary) > MAX_BITS:
        raise ArgumentError(f"{len(binary):,} binary digits: at most {MAX_BITS:,}")
    for i, bit in enumerate(binary, 1):
        _whole(bit, f"digit {i}")
        if bit not in (0, 1):
            raise ArgumentError(f"digit {i} is {bit}: binary digits are 0 or 1")
    return int("".join(map(str, binary)), 2) if binary else 0


def bitwise_exclusive_or(a: int, b: int) -> int:
    """XOR of two numbers, bit by bit with :func:`exclusive_or`. ``a`` and ``b`` are whole
    numbers from 0 to below 2**:data:`MAX_BITS`; else TypeError or ValueError."""
    x, y = numeral_binary(a), numeral_binary(b)
    width = max(len(x), len(y))
    x = [0] * (width - len(x)) + x
    y = [0] * (width - len(y)) + y
    return binary_numeral([exclusive_or(i, j) for i, j in zip(x, y, strict=True)])


def nim_sum(board: list[int]) -> int:
    """The nim-sum (XOR of all row lengths); ``[] -> 0``. ``board`` is a list of whole numbers
    0 or more; else TypeError or ValueError."""
    return _nim_sum(_board(board))


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
    move when none exists. The board must be a list of whole numbers 0 or more, not all 0: else
    TypeError or ValueError."""
    board = _board(board)
    winning = nim_winning_moves(board)
    if winning:
        i, after = random.choice(winning)
        return i + 1, board[i] - after
    rows = [i for i, n in enumerate(board) if n > 0]
    if not rows:
        raise ArgumentError("the board is empty: there is no move")
    i = random.choice(rows)
    return i + 1, random.randint(1, board[i])


def is_human(player_string: str) -> bool:
    """A player is a computer when its name contains "computer" (any case). ``player_string``
    is text; else TypeError."""
    if not isinstance(player_string, str):
        raise LabTypeError(f"a player's name is text, not {_shown(player_string)}")
    return "computer" not in player_string.lower()


def is_board_empty(board: list[int]) -> bool:
    """Whether every row is empty (also for no rows at all). ``board`` is a list of whole numbers
    0 or more; else TypeError or ValueError."""
    return not any(_board(board))


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
    takes the last object wins. Returns the winner's name, or ``None`` when input ends. The
    names are text and the board a list of whole numbers 0 or more (at most :data:`MAX_DRAWN`
    objects, as it is drawn): else TypeError or ValueError, before anything is printed."""
    for name in (player1, player2):
        is_human(name)  # text, or TypeError
    board = _board(board)
    present_board(board)  # drawable, or ValueError
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
