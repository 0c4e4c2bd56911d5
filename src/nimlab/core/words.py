"""The words people see, in one place: counts with their nouns, and the glossary that every
interface follows (docs/games.md explains it).

Glossary (what a user sees):

- **pile**: what a move takes from in Nim and its relatives on piles (Wythoff's game, Moore's
  Nim, Fibonacci Nim); piles are lettered at the terminal (pile B) and numbered elsewhere
  (pile 2): sentences name both where the two meet (``"pile B (2)"``).
- **row of stones**: what a move takes from in games that split heaps (Kayles, Dawson's
  Kayles, Lasker's Nim, Grundy's game, octal games): numbered rows of numbered stones.
- **coins on steps**: Staircase Nim.
- **heap**: the theory's word (a heap of ``n`` objects, ``G(n)``), in explanations of Grundy
  values, octal codes and misère quotients only; never in the prompts of a game.

>>> count_text(1, "pile"), count_text(2, "pile"), count_text(1_000, "game")
('1 pile', '2 piles', '1,000 games')
"""

from __future__ import annotations

__all__ = [
    "BOARD_WORDS",
    "DIGITS_SHOWN",
    "THEORY_WORDS",
    "board_words",
    "count_text",
    "digit_count",
    "number_text",
    "rate_text",
]

BOARD_WORDS: dict[str, tuple[str, ...]] = {
    "piles": ("pile", "piles", "object", "objects"),
    "rows": ("row", "rows", "run", "runs", "stone", "stones"),
    "steps": ("step", "steps", "coin", "coins"),
}
"""The words for what a move takes from, by kind of board: a game's prompts, help and messages
use its own kind's words and no other kind's."""
THEORY_WORDS = ("heap", "heaps")
"""Words of the theory, for explanations only: never in a game's prompts or move help."""


def board_words(kind: str) -> tuple[str, ...]:
    """The words of :data:`BOARD_WORDS` a game on ``kind`` (``"piles"``, ``"rows"``,
    ``"steps"``) must not use: the other kinds'. O(1)."""
    return tuple(w for k, words in BOARD_WORDS.items() if k != kind for w in words)


_PLURALS = {"match": "matches"}


def count_text(n: int, noun: str = "move", plural: str | None = None) -> str:
    """``"1 move"``, ``"2 moves"``, ``"1,000 moves"``: a count with its noun, singular for 1
    (the noun's last word takes the plural ``s``: ``count_text(1, "more move")`` is ``"1 more
    move"``; ``plural`` gives another plural: ``count_text(2, "match", "matches")``). O(digits).
    """
    number = f"{n:,}" if n.bit_length() <= 256 else f"a number of {n.bit_length():,} bits of"
    if n == 1:
        return f"{number} {noun}"
    return f"{number} {plural if plural is not None else _PLURALS.get(noun, noun + 's')}"


def rate_text(per_second: float, noun: str) -> str:
    """``"1 game/s"``, ``"1,234 games/s"``, ``"1.2M values/s"``, ``"45k values/s"``: a rate with
    its noun, singular when it rounds to 1. O(1)."""
    if per_second >= 1e6:
        return f"{per_second / 1e6:.1f}M {noun}s/s"
    if per_second >= 1e4:
        return f"{per_second / 1e3:.0f}k {noun}s/s"
    n = round(per_second)
    return f"{n:,} {noun}/s" if n == 1 else f"{n:,} {noun}s/s"


DIGITS_SHOWN = 4300
"""Most decimal digits a count is written with (Python writes no integer of more than 4,300
digits in decimal; a move count of Moore's Nim is a product of piles, each up to that long)."""


def digit_count(n: int) -> int:
    """How many decimal digits ``n >= 0`` has, without writing it in decimal. O(digits²)."""
    if n < 10:
        return 1
    d = int((n.bit_length() - 1) * 0.30102999566398120) + 1  # n >= 2**(bits - 1): a floor
    while n >= 10**d:
        d += 1
    return d


def number_text(n: int) -> str:
    """``n`` with thousands separators (``"1,234"``), or ``"more than 10^N"`` beyond
    :data:`DIGITS_SHOWN` digits."""
    digits = digit_count(n)
    return f"{n:,}" if digits <= DIGITS_SHOWN else f"more than 10^{digits - 1:,}"
