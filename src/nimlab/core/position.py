"""Positions and moves as people see them.

- :class:`Move` is a small immutable value with a text form that round-trips (``"2 3"``: take 3
  from pile 2; ``"1 4 2"``: in row 1, take 2 stones starting at stone 4).
- :class:`Position` is a list of piles in display order (an emptied pile stays in place), for games
  that never split a heap.
- :class:`Rows` is a list of rows of stones, for games that split heaps (Kayles and other octal
  games): each row's maximal runs of present stones are its heaps, and a move removes adjacent
  present stones. The layout is kept so a game replays exactly as it was seen.

Splits that remove nothing (octal codes with ``4`` before the point, e.g. ``4.07``) are moves
on rows too: ``Move(row, take=0, at=i)`` (text ``"row i 0"``) cuts a run of stones just before
its stone ``i`` (stones ``i - 1`` and ``i`` must both be present in one run). The cut is a gap of
zero width: in :attr:`Rows.rows` an absent segment of length 0 between two runs, in the row
strings a ``|`` (``"**|***"`` is a run of 2 and a run of 3). A cut disappears into a real gap
once a stone beside it is taken. Stone numbers never change.

Both boards offer the same calls: ``heaps``, ``canonical``, ``legal_moves(rule)``,
``play(rule, move)``, ``count_moves(rule)``.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from nimlab.core.arguments import shown
from nimlab.core.errors import IllegalMoveError, InvalidMoveError, PositionError, RulesetError
from nimlab.theory.octal import TakeAndBreak
from nimlab.theory.positions import Canon, canonical

__all__ = [
    "Board",
    "Move",
    "PileRule",
    "Piles",
    "Position",
    "Rows",
    "as_board",
    "board_for",
    "heap_text",
    "heaps_text",
    "parse_heaps",
    "pile_letter",
    "take_places",
]

MAX_PILES = 10_000_000
_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def pile_letter(pile: int) -> str:
    """The heap letter for a 1-based pile number (A-Z), or ``""`` beyond 26."""
    return _LETTERS[pile - 1].upper() if 1 <= pile <= 26 else ""


@dataclass(frozen=True, slots=True)
class Move:
    """A move: take ``take`` objects from pile (or row) ``pile`` (1-based).

    In a row of stones ``at`` is the 1-based position of the first stone removed; in piles it is
    ``None``. With ``take == 0`` (games with ``4`` before the point) the move removes nothing and
    cuts the run before stone ``at``. ``str(move)`` is the canonical text and :meth:`from_text`
    reads it back.
    """

    pile: int
    take: int
    at: int | None = None
    also: tuple[tuple[int, int], ...] = ()
    """More ``(pile, take)`` parts of the same move, in games whose move takes from several
    piles at once (Wythoff's game: the same from both; Moore's Nim: from up to k piles)."""

    def __str__(self) -> str:
        if self.at is None:
            return " ".join(f"{p} {t}" for p, t in self.parts)
        return f"{self.pile} {self.at} {self.take}"

    @property
    def parts(self) -> tuple[tuple[int, int], ...]:
        """Every ``(pile, take)`` of the move, the first one first."""
        return ((self.pile, self.take), *self.also)

    @classmethod
    def from_text(
        cls,
        text: str,
        *,
        rows: bool = False,
        single_row: bool = False,
        single_pile: bool = False,
        syntax: Callable[[], str] | None = None,
    ) -> Move:
        """Read a move the ways people type them.

        Piles: ``"2 3"``, ``"2,3"``, ``"2:3"``, ``"b3"`` (heap letters) all mean "take
        3 from pile 2". Rows: ``"1 4 2"`` means "in row 1, take 2 stones starting at stone 4";
        with ``single_row=True`` ``"4 2"`` (position, count) means the same in row 1. With
        ``single_pile=True`` (a one-pile game) ``"3"`` means "take 3 from pile 1".
        Piles, several at once (Wythoff's game, Moore's Nim): ``"1 3 2 3"``, ``"1 3 + 2 3"`` or
        ``"a3 b3"`` (pairs of PILE AMOUNT) takes 3 from pile 1 and 3 from pile 2.
        Moves are also read as hints and explanations write them (an optional ``take`` first):
        ``"3 from pile B"``; in rows ``"5-6"``, ``"stones 5-6"``, ``"stone 4"``, and with several
        rows ``"stones 5-6 of row 2"`` (or ``from row 2``) or ``"2 5-6"`` (row, stones).
        Raises :class:`InvalidMoveError` for text that is not a move, saying how to type one:
        ``syntax()`` when given (the game's own, see :func:`nimlab.core.rules.how_to_move`).
        """
        if not isinstance(text, str):
            raise InvalidMoveError(f"a move is text like '2 3', not {type(text).__name__}")
        raw = text.strip()
        written = _written_move(raw, rows=rows, single_row=single_row)
        if written is not None:
            return written
        m = re.fullmatch(r"([A-Za-z])\s*[,:]?\s*(\d+)", raw)
        if m and not rows:
            return cls(_LETTERS.index(m.group(1).lower()) + 1, int(m.group(2)))
        lettered = re.findall(r"([A-Za-z])\s*[,:]?\s*(\d{1,4000})", raw)
        if lettered and not rows and re.fullmatch(r"(?:[A-Za-z]\s*[,:]?\s*\d+[\s,;+]*)+", raw):
            pairs = tuple((_LETTERS.index(p.lower()) + 1, int(t)) for p, t in lettered)
            return cls(pairs[0][0], pairs[0][1], also=pairs[1:])
        parts = [p for p in re.split(r"[\s,;:+]+", raw) if p]
        if not all(re.fullmatch(r"[+-]?\d{1,4000}", p) for p in parts) or not parts:
            raise InvalidMoveError(
                _move_help(text, rows=rows, single_row=single_row, single_pile=single_pile)
                if syntax is None
                else f"{shown(text)} is not a move: {syntax()}"
            )
        numbers = [int(p) for p in parts]
        if single_pile and not rows and len(numbers) == 1:
            return cls(1, numbers[0])
        if rows:
            if len(numbers) == 2 and single_row:
                return cls(1, numbers[1], at=numbers[0])
            if len(numbers) == 3:
                return cls(numbers[0], numbers[2], at=numbers[1])
        elif len(numbers) == 2:
            return cls(numbers[0], numbers[1])
        elif len(numbers) % 2 == 0:
            pairs = tuple(zip(numbers[::2], numbers[1::2], strict=True))
            return cls(pairs[0][0], pairs[0][1], also=pairs[1:])
        raise InvalidMoveError(
            _move_help(text, rows=rows, single_row=single_row, single_pile=single_pile)
            if syntax is None
            else f"{shown(text)} is not a move: {syntax()}"
        )

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Move:
        """Read :meth:`to_json`'s form back (``at`` and ``also`` optional)."""
        also = tuple((int(p), int(t)) for p, t in data.get("also") or ())
        at = data.get("at")
        return cls(int(data["pile"]), int(data["take"]), None if at is None else int(at), also)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"pile": self.pile, "take": self.take}
        if self.at is not None:
            out["at"] = self.at
        if self.also:
            out["also"] = [list(part) for part in self.also]
        return out


_TAKE = r"(?:take\s+)?"
_ROW = r"(?:\s+(?:of|from|in)\s+row\s+(\d{1,30}))?"
_PILE_WORDS = re.compile(_TAKE + r"(\d{1,4000})\s+from\s+pile\s+([a-z]|\d{1,30})", re.IGNORECASE)
_STONE_RANGE = re.compile(
    _TAKE + r"(?:(\d{1,30})\s+)?(?:stones?\s+)?(\d{1,30})\s*-\s*(\d{1,30})" + _ROW, re.IGNORECASE
)
_ONE_STONE = re.compile(_TAKE + r"stone\s+(\d{1,30})" + _ROW, re.IGNORECASE)


def _written_move(text: str, *, rows: bool, single_row: bool) -> Move | None:
    """A move written as hints write it (see :meth:`Move.from_text`), else ``None``. Raises
    :class:`InvalidMoveError` for such a move that names no row where one is needed, or stones
    from a higher to a lower number."""
    if not rows:
        m = _PILE_WORDS.fullmatch(text)
        if m is None:
            return None
        pile = m.group(2).lower()
        number = _LETTERS.index(pile) + 1 if pile.isalpha() else int(pile)
        return Move(number, int(m.group(1)))
    m = _STONE_RANGE.fullmatch(text)
    if m is not None:
        row_before, first, last, row_after = m.groups()
        at, end = int(first), int(last)
        if end < at:
            raise InvalidMoveError(
                f"{text!r}: write the stones from the lower number up, e.g. {end}-{at}"
            )
        take = end - at + 1
    else:
        m = _ONE_STONE.fullmatch(text)
        if m is None:
            return None
        row_before, at, take, row_after = None, int(m.group(1)), 1, m.group(2)
    if row_before is not None and row_after is not None:
        raise InvalidMoveError(f"{text!r} names the row twice: e.g. 5-6 of row 2, or 2 5-6")
    row = row_before if row_before is not None else row_after
    if row is None and not single_row:
        raise InvalidMoveError(
            f"{text!r}: say which row, e.g. {at}-{at + 1} of row 2 (or ROW POSITION COUNT)"
        )
    return Move(1 if row is None else int(row), take, at=at)


def _move_help(text: str, *, rows: bool, single_row: bool, single_pile: bool = False) -> str:
    if rows:
        form = "POSITION COUNT (e.g. 3 2)" if single_row else "ROW POSITION COUNT (e.g. 1 3 2)"
        return f"{text!r} is not a move: type {form}"
    if single_pile:
        return f"{text!r} is not a move: type how many to take (e.g. 3)"
    return f"{text!r} is not a move: type PILE AMOUNT (e.g. 2 3, 2,3 or b3)"


def heap_text(heap: int) -> str:
    """A heap size for a sentence: its digits, or ``"a number of 5,000 digits"`` for one too
    long to read (Python will not even write ints of more than 4,300 digits). O(digits)."""
    if heap.bit_length() > 80:
        digits = len(str(heap)) if heap.bit_length() < 14_000 else None
        return (
            f"a number of {digits:,} digits"
            if digits is not None
            else f"a number of {heap.bit_length():,} bits"
        )
    return str(heap)


def heaps_text(heaps: Iterable[int], most: int = 12) -> str:
    """Heap sizes for a sentence: ``"3 4 5"``; past ``most`` of them the first ``most`` and
    ``"... (N piles)"``. O(most)."""
    heaps = tuple(heaps)
    shown = " ".join(heap_text(h) for h in heaps[:most])
    return shown if len(heaps) <= most else f"{shown} ... ({len(heaps):,} piles)"


MAX_WRITTEN_DIGITS = 4300
"""The most decimal digits Python writes an int with: an analysis, which writes its heaps,
takes none larger (:func:`check_writable`)."""
_WRITABLE = 10**MAX_WRITTEN_DIGITS


def check_writable(heaps: Iterable[int]) -> None:
    """Refuse, with a :class:`PositionError`, a heap of more than :data:`MAX_WRITTEN_DIGITS`
    digits, which no sentence can write. O(n)."""
    for h in heaps:
        if h >= _WRITABLE:
            raise PositionError(
                f"a heap of {h.bit_length():,} bits cannot be written out: heaps of at most "
                f"{MAX_WRITTEN_DIGITS:,} digits are analysed"
            )


def parse_heaps(values: Iterable[Any]) -> tuple[int, ...]:
    """Validate heap sizes: whole numbers 0 or more, of any size. Strings of ASCII digits are
    read. Raises :class:`PositionError`. O(n); a list of plain ints is checked in one pass."""
    if not isinstance(values, Iterable):
        raise PositionError(
            f"heap sizes are a list of whole numbers like [3, 4, 5], not {type(values).__name__}"
        )
    if isinstance(values, list | tuple) and all(type(v) is int for v in values):
        if len(values) > MAX_PILES:
            raise PositionError(f"at most {MAX_PILES:,} piles")
        if values and min(values) < 0:
            v = min(values)
            raise PositionError(f"heap size {shown(v)} is negative: heaps hold 0 or more objects")
        return tuple(values)
    heaps: list[int] = []
    for v in values:
        if isinstance(v, bool) or not isinstance(v, int | str):
            raise PositionError(f"heap size {shown(v)} is not a whole number")
        if isinstance(v, str):
            if re.fullmatch(r"\s*-[0-9]+\s*", v):
                raise PositionError(
                    f"heap size {v.strip()} is negative: heaps hold 0 or more objects"
                )
            if not re.fullmatch(r"\s*\+?[0-9]+\s*", v):
                raise PositionError(
                    f"heap size {v[:40]!r} is not a whole number 0 or more (e.g. 3 4 5)"
                )
            try:
                v = int(v)
            except ValueError:
                raise PositionError(
                    f"heap size of {len(v.strip()):,} digits: at most 4,300 digits"
                ) from None
        if v < 0:
            raise PositionError(f"heap size {shown(v)} is negative: heaps hold 0 or more objects")
        heaps.append(v)
        if len(heaps) > MAX_PILES:
            raise PositionError(f"at most {MAX_PILES:,} piles")
    return tuple(heaps)


class Board(Protocol):
    """What every board offers."""

    @property
    def heaps(self) -> tuple[int, ...]: ...
    @property
    def canonical(self) -> Canon: ...
    def legal_moves(self, rule: TakeAndBreak) -> Iterator[Move]: ...
    def count_moves(self, rule: TakeAndBreak) -> int: ...
    def play(self, rule: TakeAndBreak, move: Move) -> Board: ...
    def successors(self, rule: TakeAndBreak) -> Iterator[tuple[Move, Board]]: ...
    def check(self, rule: TakeAndBreak, move: Move) -> None: ...
    def to_json(self) -> Any: ...
    @property
    def pile_count(self) -> int: ...


def _allowed_takes(rule: TakeAndBreak, heap: int) -> str:
    """``"1 to 5"``, ``"1, 3 or 4"`` ... for messages."""
    takes = []
    for k in rule.takes(heap):
        if k == 0:
            continue  # a split without taking: described separately
        takes.append(k)
        if len(takes) > 12:
            break
    if not takes:
        return ""
    if takes == list(range(1, takes[-1] + 1)) and len(takes) > 2:
        top = heap if rule.max_take is None else min(heap, rule.max_take)
        if takes[-1] == top or len(takes) <= 12:
            return f"1 to {top if rule.max_take is None else takes[-1]}"
    words = [str(k) for k in takes[:12]]
    if len(takes) > 12:
        return ", ".join(words) + ", ..."
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


@dataclass(frozen=True, slots=True)
class Position:
    """Piles in display order; an emptied pile stays in place (as 0)."""

    heaps: tuple[int, ...]

    @classmethod
    def of(cls, heaps: Iterable[Any]) -> Position:
        return cls(parse_heaps(heaps))

    def __str__(self) -> str:
        return " ".join(map(str, self.heaps))

    @property
    def canonical(self) -> Canon:
        return canonical(self.heaps)

    @property
    def pile_count(self) -> int:
        return len(self.heaps)

    def _repr_svg_(self) -> str:
        """The piles drawn as matches (Jupyter shows this)."""
        from nimlab.core.render import board_svg

        return board_svg(self)

    def to_json(self) -> list[int]:
        return list(self.heaps)

    def _pile_error(self, move: Move) -> IllegalMoveError | None:
        n = len(self.heaps)
        if not 1 <= move.pile <= n:
            allowed = (
                "there are no piles"
                if n == 0
                else ("piles are 1" if n == 1 else f"piles are 1-{n}")
            )
            return IllegalMoveError(f"pile {move.pile} does not exist: {allowed}")
        return None

    def check(self, rule: TakeAndBreak, move: Move) -> None:
        """Raise :class:`IllegalMoveError` unless ``move`` is legal here."""
        error = self._pile_error(move)
        if error:
            raise error
        if move.at is not None:
            raise IllegalMoveError("piles take no stone position: type PILE AMOUNT (e.g. 2 3)")
        heap = self.heaps[move.pile - 1]
        if heap == 0:
            raise IllegalMoveError(f"pile {move.pile} is empty: choose a pile with objects in it")
        d = rule.digit(move.take)
        legal = 1 <= move.take <= heap and (
            (move.take == heap and d & 1) or (move.take < heap and d & 2)
        )
        if not legal:
            allowed = _allowed_takes(rule, heap)
            if not allowed:
                raise IllegalMoveError(f"no move is possible from pile {move.pile} (it has {heap})")
            raise IllegalMoveError(
                f"cannot take {move.take} from pile {move.pile}: "
                f"take {allowed} from pile {move.pile} (it has {heap})"
            )

    def play(self, rule: TakeAndBreak, move: Move) -> Position:
        """The position after ``move``; raises :class:`IllegalMoveError` if it is not legal."""
        if rule.splits:
            raise IllegalMoveError("this game splits heaps: play it on rows of stones")
        self.check(rule, move)
        i = move.pile - 1
        return Position(self.heaps[:i] + (self.heaps[i] - move.take,) + self.heaps[i + 1 :])

    def legal_moves(self, rule: TakeAndBreak) -> Iterator[Move]:
        """Every legal move, pile by pile, smallest take first."""
        for i, k in self.takes(rule):
            yield Move(i, k)

    def takes(self, rule: TakeAndBreak) -> Iterator[tuple[int, int]]:
        """Every legal move as ``(pile, take)``, in the order of :meth:`legal_moves` (for those
        who need no :class:`Move`, such as the list of legal moves in every answer of the web
        API)."""
        for i, heap in enumerate(self.heaps, 1):
            for k in rule.takes(heap):
                yield i, k

    def successors(self, rule: TakeAndBreak) -> Iterator[tuple[Move, Position]]:
        """Every legal move with the position it leaves (no re-validation: faster than
        :meth:`play` on each of :meth:`legal_moves`)."""
        heaps = self.heaps
        for i, heap in enumerate(heaps):
            before, after = heaps[:i], heaps[i + 1 :]
            for k in rule.takes(heap):
                yield Move(i + 1, k), Position((*before, heap - k, *after))

    def count_moves(self, rule: TakeAndBreak) -> int:
        """The number of legal moves, without listing them (O(piles) for Nim)."""
        if rule.is_nim:
            return sum(self.heaps)
        return sum(sum(1 for _ in rule.takes(h)) for h in self.heaps)


Segments = tuple[int, ...]
"""A row of stones as run lengths: present, absent, present, ... (starting with present)."""


@dataclass(frozen=True, slots=True)
class Rows:
    """Rows of stones for games that split heaps.

    Each row is stored as run lengths alternating present and absent stones, starting with
    present stones (possibly 0), so rows of any length cost O(runs). An absent segment of length
    0 between two runs is a cut made by a split that removed nothing (``|`` in the strings).
    """

    rows: tuple[Segments, ...]

    @classmethod
    def full(cls, heaps: Iterable[Any]) -> Rows:
        """One full row of stones per heap."""
        return cls(tuple((h,) for h in parse_heaps(heaps)))

    @classmethod
    def from_strings(cls, rows: Iterable[str]) -> Rows:
        """Rows from text like ``"**x**"`` (``*`` present, ``x`` or ``.`` absent, ``|`` a cut
        between two stones; a cut beside a gap or at an end of the row means nothing and is
        dropped)."""
        out = []
        for text in rows:
            if not re.fullmatch(r"[*xX.|]*", text):
                raise PositionError(
                    f"row {text!r}: use * for a stone, x for a gap and | for a cut between stones"
                )
            out.append(_normalize([(0, False) if ch == "|" else (1, ch == "*") for ch in text]))
        return cls(tuple(out))

    def to_strings(self) -> list[str]:
        """Rows as text, ``*`` for a stone, ``x`` for a gap and ``|`` for a cut (a gap of zero
        width) -- only for reasonable lengths."""
        return [
            "".join(("*" * n) if i % 2 == 0 else ("x" * n if n else "|") for i, n in enumerate(row))
            for row in self.rows
        ]

    def _repr_svg_(self) -> str:
        """The rows drawn as stones (Jupyter shows this)."""
        from nimlab.core.render import board_svg

        return board_svg(self)

    def to_json(self) -> list[str]:
        return self.to_strings()

    def __str__(self) -> str:
        return " / ".join(self.to_strings())

    @property
    def heaps(self) -> tuple[int, ...]:
        """The heaps: every run of present stones, row by row, left to right."""
        return tuple(n for row in self.rows for i, n in enumerate(row) if i % 2 == 0 and n)

    @property
    def canonical(self) -> Canon:
        return canonical(self.heaps)

    @property
    def pile_count(self) -> int:
        return len(self.rows)

    def row_length(self, row: int) -> int:
        return sum(self.rows[row - 1])

    def _runs(self, row: Segments) -> Iterator[tuple[int, int]]:
        """(0-based start, length) of each run of present stones."""
        start = 0
        for i, n in enumerate(row):
            if i % 2 == 0 and n:
                yield start, n
            start += n

    def _locate(self, move: Move) -> tuple[int, int, int]:
        """The run a move removes from, as (row index, run start, run length); raises."""
        n = len(self.rows)
        if not 1 <= move.pile <= n:
            allowed = (
                "there are no rows" if n == 0 else ("rows are 1" if n == 1 else f"rows are 1-{n}")
            )
            raise IllegalMoveError(f"row {move.pile} does not exist: {allowed}")
        length = self.row_length(move.pile)
        if move.at is None:
            raise IllegalMoveError(
                "say where in the row: ROW POSITION COUNT (e.g. 1 3 2 takes stones 3-4 of row 1)"
            )
        if not 1 <= move.at <= length:
            raise IllegalMoveError(
                f"stone position {move.at} does not exist: row {move.pile} has stones 1-{length}"
                if length
                else f"row {move.pile} has no stones"
            )
        if move.take < 0:
            raise IllegalMoveError(f"take at least 1 stone (got {move.take})")
        first = move.at - 1
        if move.take == 0:
            for start, run in self._runs(self.rows[move.pile - 1]):
                if start < first < start + run:
                    return move.pile - 1, start, run
            raise IllegalMoveError(
                f"cannot cut row {move.pile} before stone {move.at}: a split that takes nothing "
                "goes between two adjacent stones of one run"
            )
        last = first + move.take - 1
        for start, run in self._runs(self.rows[move.pile - 1]):
            if start <= first and last < start + run:
                return move.pile - 1, start, run
        stones = f"stone {move.at}" if move.take == 1 else f"stones {move.at}-{last + 1}"
        raise IllegalMoveError(
            f"{stones} of row {move.pile} are not all present and adjacent: "
            "take adjacent stones that are still there"
            if move.take > 1
            else f"{stones} of row {move.pile} is already gone"
        )

    def check(self, rule: TakeAndBreak, move: Move) -> None:
        """Raise :class:`IllegalMoveError` unless ``move`` is legal here."""
        if move.take == 0 and not rule.d0 & 4:
            raise IllegalMoveError("take at least 1 stone (got 0)")
        if move.take >= 1 and not rule.digit(move.take):
            top = min(rule.max_take if rule.max_take is not None else move.take, move.take)
            takes = [k for k in range(1, top + 1) if rule.digit(k)]
            typed = "POSITION 0" if len(self.rows) == 1 else "ROW POSITION 0"
            cut = f"splits a run in two without taking any stone (type {typed})"
            if not takes:
                raise IllegalMoveError(f"cannot take {move.take}: in this game a move {cut}")
            words = (
                ", ".join(map(str, takes[:-1]))
                + (" or " if len(takes) > 1 else "")
                + str(takes[-1])
            )
            stones = "stone" if takes == [1] else "stones"
            also = f", or {cut}" if rule.d0 & 4 else ""
            raise IllegalMoveError(
                f"cannot take {move.take}: in this game a move takes {words} {stones}{also}"
            )
        _row, start, run = self._locate(move)
        left = move.at - 1 - start if move.at is not None else 0
        right = run - left - move.take
        if not rule.can_leave(move.take, left, right):
            allowed = _allowed_takes(rule, run)
            raise IllegalMoveError(
                f"cannot take {move.take} there: in this game a move takes {allowed or 'no'} "
                f"stones from a run of {run}" + _split_rule(rule, move.take)
            )

    def play(self, rule: TakeAndBreak, move: Move) -> Rows:
        """The rows after ``move``; raises :class:`IllegalMoveError` if it is not legal."""
        self.check(rule, move)
        assert move.at is not None
        r = move.pile - 1
        row = _cut(self.rows[r], move.at - 1, move.take)
        return Rows(self.rows[:r] + (row,) + self.rows[r + 1 :])

    def legal_moves(self, rule: TakeAndBreak) -> Iterator[Move]:
        """Every legal move, row by row, left to right, smallest take first (the splits that
        take nothing, ``take == 0``, first)."""
        for r, row in enumerate(self.rows, 1):
            for start, run in self._runs(row):
                for k in rule.takes(run):
                    for left in range(run - k + 1):
                        if rule.can_leave(k, left, run - k - left):
                            yield Move(r, k, at=start + left + 1)

    def successors(self, rule: TakeAndBreak) -> Iterator[tuple[Move, Rows]]:
        """Every legal move with the rows it leaves."""
        for move in self.legal_moves(rule):
            assert move.at is not None
            r = move.pile - 1
            row = _cut(self.rows[r], move.at - 1, move.take)
            yield move, Rows(self.rows[:r] + (row,) + self.rows[r + 1 :])

    def count_moves(self, rule: TakeAndBreak) -> int:
        """The number of legal moves (take-0 cuts included), without listing them.
        O(runs * (explicit digits + 1))."""
        return sum(_run_move_count(rule, run) for row in self.rows for _, run in self._runs(row))

    def random_move(self, rule: TakeAndBreak, rng: random.Random) -> Move:
        """A uniformly random legal move, without listing them: the same move as
        ``rng.choice(list(self.legal_moves(rule)))``, with the same draw from ``rng``, in
        O(runs * (explicit digits + 1) + log of the longest run). Raises
        :class:`IllegalMoveError` when there is no legal move."""
        runs = [
            (r, start, run) for r, row in enumerate(self.rows, 1) for start, run in self._runs(row)
        ]
        counts = [_run_move_count(rule, run) for _, _, run in runs]
        total = sum(counts)
        if not total:
            raise IllegalMoveError("there is no legal move")
        i = rng.randrange(total)
        for (r, start, run), count in zip(runs, counts, strict=True):
            if i < count:
                take, left = _run_move(rule, run, i)
                return Move(r, take, at=start + left + 1)
            i -= count
        raise AssertionError("unreachable")  # pragma: no cover


def _take_count(rule: TakeAndBreak, take: int, rest: int) -> int:
    """The legal places to remove ``take`` stones from a run, leaving ``rest`` beside the gap
    (``left`` from 0 to ``rest``, as :meth:`TakeAndBreak.can_leave` allows). O(1)."""
    d = rule.digit(take)
    if rest == 0:
        return 1 if d & 1 else 0
    n = 2 if d & 2 else 0
    if d & 4 and rest >= 2:
        n += rest - 1 - (1 if rule.unequal and rest % 2 == 0 else 0)
    return n


def _take_place(rule: TakeAndBreak, take: int, rest: int, j: int) -> int:
    """The ``j``-th legal ``left`` for :func:`_take_count`, in ascending order. O(1)."""
    d = rule.digit(take)
    if rest == 0:
        return 0
    if d & 2:
        if j == 0:
            return 0
        if j == _take_count(rule, take, rest) - 1:
            return rest
        j -= 1
    left = j + 1  # two parts: 1 .. rest - 1, without the middle one when they must be unequal
    if rule.unequal and rest % 2 == 0 and left >= rest // 2:
        left += 1
    return left


def _tail_prefix(rule: TakeAndBreak, longest: int) -> int:
    """Moves with a take of the tail digit that leave a rest of 1 to ``longest``. O(1)."""
    d, m = rule.tail, longest
    total = (2 * m if d & 2 else 0) + (m * (m - 1) // 2 if d & 4 else 0)
    if d & 4 and rule.unequal:
        total -= m // 2
    return total


def _run_move_count(rule: TakeAndBreak, run: int) -> int:
    """The legal moves on one run of ``run`` stones. O(explicit digits + 1)."""
    explicit = min(run, len(rule.digits))
    total = sum(_take_count(rule, k, run - k) for k in range(0, explicit + 1))
    if rule.tail and run > explicit:
        total += _tail_prefix(rule, run - explicit - 1) + _take_count(rule, run, 0)
    return total


def _run_move(rule: TakeAndBreak, run: int, i: int) -> tuple[int, int]:
    """The ``i``-th legal move on a run of ``run`` stones as ``(take, left)``, in the order of
    :meth:`Rows.legal_moves` (takes ascending, then places left to right). O(explicit digits +
    log run)."""
    explicit = min(run, len(rule.digits))
    for k in range(0, explicit + 1):
        count = _take_count(rule, k, run - k)
        if i < count:
            return k, _take_place(rule, k, run - k, i)
        i -= count
    # takes of the tail digit, explicit + 1 .. run - 1 (rests run - explicit - 1 down to 1),
    # then the whole run: find the take whose moves hold move i by bisection
    longest = run - explicit - 1
    within = _tail_prefix(rule, longest)
    if i >= within:
        return run, _take_place(rule, run, 0, i - within)
    lo, hi = explicit + 1, run - 1  # the take k with moves i: before(k) <= i < before(k + 1)

    def before(k: int) -> int:  # moves of the takes explicit + 1 .. k - 1
        return within - _tail_prefix(rule, run - k)

    while lo < hi:
        mid = (lo + hi + 1) // 2
        if before(mid) <= i:
            lo = mid
        else:
            hi = mid - 1
    return lo, _take_place(rule, lo, run - lo, i - before(lo))


_PLACES_IN_ROWS = {
    1: "only as a whole run",
    2: "from an end of a run, leaving some of it",
    3: "from an end of a run, or as a whole run",
    4: "from inside a run, leaving stones on both sides",
    5: "as a whole run, or from inside a run leaving stones on both sides",
    6: "from anywhere in a run but not as a whole run",
    7: "from anywhere in a run",
}
_PLACES_IN_PILES = {
    1: "from one pile, only when they are the whole pile",
    2: "from one pile, leaving at least one",
    3: "from one pile",
}


def take_places(digit: int, *, rows: bool) -> str:
    """Where an octal digit lets a move take its stones (``rows``) or objects (piles):
    ``"from anywhere in a run"``, ``"from one pile"``... (a digit's bits: 1 a whole run, 2
    from an end, 4 from inside, splitting the run). Every sentence about where a take may be
    made is made of it. O(1)."""
    if rows:
        return _PLACES_IN_ROWS.get(digit & 7, "nowhere")
    return _PLACES_IN_PILES.get(digit & 3, "nowhere")


def _split_rule(rule: TakeAndBreak, take: int) -> str:
    d = rule.digit(take)
    if take == 0:
        return " (a split that takes nothing leaves two non-empty runs)" if d & 4 else ""
    if not d & 7:
        return ""
    stones = "1 stone" if take == 1 else f"{take:,} stones"
    return f" ({stones} may be taken {take_places(d, rows=True)})"


def _cut(row: Segments, first: int, take: int) -> Segments:
    """Mark stones ``first .. first+take-1`` (0-based) of a row absent; with ``take == 0`` cut
    the run before stone ``first`` (a gap of zero width). O(segments)."""
    pieces: list[tuple[int, bool]] = []
    pos = 0
    for i, n in enumerate(row):
        present = i % 2 == 0
        lo, hi = pos, pos + n
        if not present and n == 0:
            pieces.append((0, False))  # an earlier cut
        elif take == 0 and present and lo < first < hi:
            pieces += [(first - lo, True), (0, False), (hi - first, True)]
        else:
            for a, b, p in (
                (lo, min(hi, first), present),
                (max(lo, first), min(hi, first + take), False),
                (max(lo, first + take), hi, present),
            ):
                if b > a:
                    pieces.append((b - a, p))
        pos = hi
    return _normalize(pieces)


def _normalize(pieces: list[tuple[int, bool]]) -> Segments:
    """Segments from ``(length, present)`` pieces in row order: neighbours of one kind merge (a
    zero-width cut next to a gap becomes part of it), and a cut at an end of the row is dropped,
    so that a zero-length absent segment only ever stands between two stones. O(pieces)."""
    out: list[int] = [0]
    for length, present in pieces:
        if present and length == 0:
            continue
        if (len(out) % 2 == 1) == present:
            out[-1] += length
        else:
            out.append(length)
    if len(out) >= 3 and out[0] == 0 and out[1] == 0:
        out = out[2:]  # a cut before the first stone
    if len(out) % 2 == 0 and out[-1] == 0:
        out.pop()  # a cut after the last stone
    return tuple(out)


class PileRule(Protocol):
    """What a board of :class:`Piles` asks its game's rules (the classic relatives of Nim in
    :mod:`nimlab.core.rules`): the moves, a move played, and the engine's key of a board."""

    def successors(self, board: Board) -> Iterator[tuple[Move, Board]]: ...
    def count_moves(self, board: Piles) -> int: ...
    def play(self, board: Board, move: Move) -> Piles: ...
    def key(self, board: Piles) -> Canon: ...
    def describe_move(self, move: Move, board: Board) -> str: ...
    def move_phrase(
        self,
        move: Move,
        board: Board,
        name: Callable[[int], str] = str,
        *,
        past: bool = False,
    ) -> str: ...


@dataclass(frozen=True, slots=True)
class Piles:
    """Piles in display order under a rule of their own (Wythoff's game, Moore's Nim, Staircase
    Nim, Fibonacci Nim): the board knows its rules (as a python-chess board knows its variant),
    and a move may take from several piles (:attr:`Move.also`). ``limit`` is the most the next
    move may take, for rules where the position carries one (Fibonacci Nim), else ``None``.
    Offers the calls every :class:`Board` offers; the ``rule`` they are given is not needed."""

    heaps: tuple[int, ...]
    rule: PileRule
    limit: int | None = None

    def __str__(self) -> str:
        text = " ".join(map(str, self.heaps))
        return text if self.limit is None else f"{text} (take at most {self.limit})"

    @property
    def canonical(self) -> Canon:
        """The engine's key of this position (what the rules count as the same position)."""
        return self.rule.key(self)

    @property
    def pile_count(self) -> int:
        return len(self.heaps)

    def _repr_svg_(self) -> str:
        """The piles drawn as matches (Jupyter shows this)."""
        from nimlab.core.render import board_svg

        return board_svg(Position(self.heaps))

    def to_json(self) -> list[int]:
        return list(self.heaps)

    def check(self, rule: object, move: Move) -> None:
        """Raise :class:`IllegalMoveError` unless ``move`` is legal here."""
        self.rule.play(self, move)

    def play(self, rule: object, move: Move) -> Piles:
        """The position after ``move``; raises :class:`IllegalMoveError` if it is not legal."""
        return self.rule.play(self, move)

    def successors(self, rule: object = None) -> Iterator[tuple[Move, Board]]:
        """Every legal move with the position it leaves."""
        return self.rule.successors(self)

    def legal_moves(self, rule: object = None) -> Iterator[Move]:
        """Every legal move, in the rules' order."""
        return (move for move, _ in self.rule.successors(self))

    def count_moves(self, rule: object = None) -> int:
        """The number of legal moves: the rules' count, without listing them."""
        return self.rule.count_moves(self)


def board_for(rule: TakeAndBreak, heaps: Iterable[Any]) -> Position | Rows:
    """The board a game starts on: rows of stones for games that split heaps, else piles.
    ``rule`` is a :class:`~nimlab.theory.octal.TakeAndBreak` (``Ruleset.parse("kayles").rule``);
    raises :class:`PositionError` for heaps that are not whole numbers 0 or more."""
    if not isinstance(rule, TakeAndBreak):
        raise RulesetError(
            f"board_for takes a game's move rule (Ruleset.parse('kayles').rule), not "
            f"{type(rule).__name__}; Ruleset.rules.start(heaps) makes the board of any game"
        )
    return Rows.full(heaps) if rule.splits else Position.of(heaps)


def as_board(rule: TakeAndBreak, start: object) -> Position | Rows | Piles:
    """What the Python API takes as a position (``Game(...)``, ``analyze(...)``): a board as it
    is, or heap sizes (a list or other iterable of whole numbers) as :func:`board_for` makes
    them. Raises :class:`PositionError` for anything else (text, a number, ``None``)."""
    if isinstance(start, Position | Rows | Piles):
        return start
    if isinstance(start, str | bytes) or not isinstance(start, Iterable):
        given = f"the text {start[:40]!r}" if isinstance(start, str) else type(start).__name__
        raise PositionError(
            f"a position is a list of heap sizes like [3, 4, 5] (or a Position), not {given}"
        )
    return board_for(rule, start)
