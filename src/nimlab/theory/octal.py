"""Take-and-break games on heaps: Nim, subtraction games and octal games as one value.

An octal game is written ``0.d1d2d3...``: digit ``d_k`` (an octal digit, 0 to 7) says what may
happen when ``k`` objects are removed from one heap:

- bit 1: the heap may be removed entirely when it has exactly ``k`` objects;
- bit 2: one (non-empty) heap may be left;
- bit 4: two non-empty heaps may be left.

Nim is ``0.333...`` (every digit 3, forever), and the subtraction game with set ``S`` has digit 3
at every ``k`` in ``S`` and 0 elsewhere. :class:`TakeAndBreak` holds a finite digit string plus
a *tail digit* that repeats forever after it, so all three families are the same value and every
algorithm in :mod:`nimlab.theory` serves all of them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property

__all__ = ["OctalCodeError", "TakeAndBreak"]

_OCTAL_RE = re.compile(r"^\s*0?\.([0-7]+)\s*$")
_MAX_DIGITS = 4096


class OctalCodeError(ValueError):
    """A malformed octal code or subtraction set."""


@dataclass(frozen=True)
class TakeAndBreak:
    """The move rule of a take-and-break game on heaps.

    ``digits[k - 1]`` is the octal digit ``d_k`` for ``k = 1 .. len(digits)``; for every larger
    ``k`` the digit is ``tail``. Trailing zero digits are stripped so that equal games compare
    equal.
    """

    digits: tuple[int, ...]
    tail: int = 0

    def __post_init__(self) -> None:
        if not all(isinstance(d, int) and 0 <= d <= 7 for d in self.digits):
            raise OctalCodeError(f"octal digits must be 0 to 7, got {self.digits!r}")
        if not (isinstance(self.tail, int) and 0 <= self.tail <= 7):
            raise OctalCodeError(f"the tail digit must be 0 to 7, got {self.tail!r}")
        digits = self.digits
        while digits and digits[-1] == self.tail:
            digits = digits[:-1]
        object.__setattr__(self, "digits", digits)

    # -- constructors -------------------------------------------------------------------------

    @classmethod
    def nim(cls) -> TakeAndBreak:
        """Nim: take any positive number from one heap (``0.333...``)."""
        return cls((), tail=3)

    @classmethod
    def octal(cls, code: str) -> TakeAndBreak:
        """Parse an octal code such as ``"0.77"``, ``".07"`` or ``"0.1777"``.

        >>> TakeAndBreak.octal("0.77").digits
        (7, 7)
        """
        match = _OCTAL_RE.match(code)
        if not match:
            raise OctalCodeError(
                f"{code!r} is not an octal code: write 0. followed by octal digits 0-7, "
                "e.g. 0.77 (Kayles), 0.07 (Dawson's Kayles), 0.137"
            )
        text = match.group(1)
        if len(text) > _MAX_DIGITS:
            raise OctalCodeError(f"octal codes have at most {_MAX_DIGITS} digits")
        game = cls(tuple(int(c) for c in text))
        if not game.digits:
            raise OctalCodeError(f"{code!r} allows no move at all: some digit must be non-zero")
        return game

    @classmethod
    def subtraction(
        cls, takes: frozenset[int] | set[int] | list[int] | tuple[int, ...]
    ) -> TakeAndBreak:
        """The subtraction game where a move takes ``k`` objects for some ``k`` in ``takes``."""
        ks = sorted(set(takes))
        if not ks:
            raise OctalCodeError("a subtraction set needs at least one number")
        if ks[0] < 1:
            raise OctalCodeError(f"subtraction amounts must be at least 1, got {ks[0]}")
        if ks[-1] > _MAX_DIGITS:
            raise OctalCodeError(f"subtraction amounts must be at most {_MAX_DIGITS}")
        digits = [0] * ks[-1]
        for k in ks:
            digits[k - 1] = 3
        return cls(tuple(digits))

    @classmethod
    def parse_subtraction_set(cls, text: str) -> TakeAndBreak:
        """Parse a subtraction set written like ``1-3``, ``1,3,4`` or ``1-3,5``."""
        takes: set[int] = set()
        for part in text.split(","):
            part = part.strip()
            m = re.fullmatch(r"(\d+)\s*-\s*(\d+)|(\d+)", part)
            if not m:
                raise OctalCodeError(
                    f"{text!r} is not a subtraction set: write amounts like 1-3 or 1,3,4"
                )
            if m.group(3) is not None:
                takes.add(int(m.group(3)))
            else:
                lo, hi = int(m.group(1)), int(m.group(2))
                if lo > hi:
                    raise OctalCodeError(f"range {part!r} is empty: write the low end first")
                if hi > _MAX_DIGITS:
                    raise OctalCodeError(f"subtraction amounts must be at most {_MAX_DIGITS}")
                takes.update(range(lo, hi + 1))
        return cls.subtraction(takes)

    # -- properties ---------------------------------------------------------------------------

    def digit(self, k: int) -> int:
        """The octal digit for removing ``k >= 1`` objects."""
        if k < 1:
            return 0
        return self.digits[k - 1] if k <= len(self.digits) else self.tail

    @cached_property
    def max_take(self) -> int | None:
        """The largest number of objects one move may remove, or ``None`` if unbounded."""
        if self.tail:
            return None
        return len(self.digits)

    @cached_property
    def splits(self) -> bool:
        """Whether some move leaves two heaps where there was one."""
        return bool(self.tail & 4) or any(d & 4 for d in self.digits)

    @cached_property
    def is_nim(self) -> bool:
        return self.digits == () and self.tail == 3

    @cached_property
    def subtraction_set(self) -> tuple[int, ...] | None:
        """The set ``S`` when this is a finite subtraction game (every digit 0 or 3), else None."""
        if self.tail or any(d not in (0, 3) for d in self.digits):
            return None
        return tuple(k for k, d in enumerate(self.digits, 1) if d == 3)

    @property
    def code(self) -> str:
        """The octal code, e.g. ``"0.77"``; Nim and other infinite codes end in ``"..."``."""
        body = "".join(map(str, self.digits))
        if self.tail:
            body += f"{self.tail}{self.tail}{self.tail}..."
        return "0." + body

    def __str__(self) -> str:
        return self.code

    # -- moves on one heap --------------------------------------------------------------------

    def takes(self, n: int) -> Iterator[int]:
        """Every ``k`` (ascending) for which some move removes ``k`` objects from a heap of ``n``.

        O(min(n, len(digits))) for finite codes; for an infinite tail, O(n).
        """
        top = n if self.max_take is None else min(n, self.max_take)
        for k in range(1, top + 1):
            d = self.digit(k)
            if (k == n and d & 1) or (k < n and d & 2) or (n - k >= 2 and d & 4):
                yield k

    def options(self, n: int) -> Iterator[tuple[int, tuple[int, ...]]]:
        """Every distinct move from one heap of ``n`` as ``(take, parts)``.

        ``parts`` is the sorted tuple of non-empty heaps left: ``()``, ``(a,)`` or ``(a, b)``
        with ``a <= b``. Each distinct ``(take, parts)`` appears once.
        """
        for k in self.takes(n):
            d = self.digit(k)
            rest = n - k
            if rest == 0:
                yield k, ()
                continue
            if d & 2:
                yield k, (rest,)
            if d & 4:
                for a in range(1, rest // 2 + 1):
                    yield k, (a, rest - a)

    def can_leave(self, take: int, left: int, right: int) -> bool:
        """Whether removing ``take`` objects so that ``left`` and ``right`` remain beside the gap
        (in a row of stones, ``left + take + right`` is the heap) is a legal move."""
        if take < 1:
            return False
        d = self.digit(take)
        nonzero = (left > 0) + (right > 0)
        return bool(d & (1, 2, 4)[nonzero])
