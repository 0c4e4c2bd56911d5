"""Boards drawn for the terminal: ``A (1): X X X`` for piles (lettered A, B, C... up to 26
piles, with their number as ``nimlab analyze`` names them; numbered beyond; a number for big
piles) and ``<1,*> <2,x>`` for rows of stones, as the Nim Game
System shell draws them (runs shown as ranges in long rows)."""

from __future__ import annotations

from rich.text import Text

from nimlab.core.narrate import pile_name
from nimlab.core.position import Board, Piles, Position, Rows
from nimlab.core.words import count_text

__all__ = ["MAX_X", "render_board"]

MAX_X = 30
"""Piles up to this size are drawn as X's; bigger ones as a number."""
MAX_STONES = 40
"""Rows up to this length show every stone; longer ones show runs as ranges."""
MAX_LINES = 40
"""At most this many piles or rows are drawn one per line."""


def render_board(board: Board) -> Text:
    """The board as styled text, one line per pile or row."""
    if isinstance(board, Position | Piles):
        out = _render_piles(board)
        if isinstance(board, Piles) and board.limit is not None:
            out.append(f"\n(the next move takes at most {board.limit:,})", style="dim")
        return out
    assert isinstance(board, Rows)
    return _render_rows(board)


def _render_piles(board: Position | Piles) -> Text:
    heaps = board.heaps
    lettered = pile_name(1, board, letters=True) != "1"
    width = len(str(min(len(heaps), MAX_LINES)))
    out = Text()
    for i, heap in enumerate(heaps[:MAX_LINES], 1):
        if i > 1:
            out.append("\n")
        if lettered:  # the letter people type, and the number analyze names it by
            label = f"{pile_name(i, board, letters=True)} ({i:>{width}})"
        else:
            label = f"{i:>{width}}"
        out.append(f"{label}:", style="bold cyan")
        if heap == 0:
            out.append(" (empty)", style="dim")
        elif heap <= MAX_X:
            out.append(" " + " ".join("X" * heap), style="yellow")
        else:
            out.append(f" {heap:,}", style="bold yellow")
            out.append(" objects", style="dim")
    if len(heaps) > MAX_LINES:
        rest = heaps[MAX_LINES:]
        out.append(
            f"\n... and {count_text(len(rest), 'more pile')} "
            f"({count_text(sum(rest), 'object')}, {sum(1 for h in rest if h):,} not empty)",
            style="dim",
        )
    return out


def _render_rows(board: Rows) -> Text:
    out = Text()
    single = board.pile_count == 1
    for r, segments in enumerate(board.rows[:MAX_LINES], 1):
        if r > 1:
            out.append("\n")
        if not single:
            out.append(f"Row {r}:", style="bold cyan")
        long_row = sum(segments) > MAX_STONES
        position = 1
        for i, run in enumerate(segments):
            if run == 0:
                if i % 2 == 1:  # a cut by a split that took nothing (e.g. octal 4.07)
                    out.append(" |", style="bold")
                continue
            present = i % 2 == 0
            mark = "*" if present else "x"
            style = "bold yellow" if present else "dim"
            if long_row and run > 1:
                tokens = [f"<{position}-{position + run - 1},{mark}>"]
            else:
                tokens = [f"<{p},{mark}>" for p in range(position, position + run)]
            for token in tokens:
                if out.plain and not out.plain.endswith("\n"):
                    out.append(" ")
                out.append(token, style=style)
            position += run
    if board.pile_count > MAX_LINES:
        out.append(f"\n... and {board.pile_count - MAX_LINES:,} more rows", style="dim")
    return out
