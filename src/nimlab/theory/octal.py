"""Take-and-break games on heaps: Nim, subtraction games and octal games as one value.

An octal game is written ``d0.d1d2d3...``: digit ``d_k`` (an octal digit, 0 to 7) says what may
happen when ``k`` objects are removed from one heap of ``n``:

- bit 1: the heap may be removed entirely when it has exactly ``k`` objects (``n == k``);
- bit 2: one (non-empty) heap may be left (``n - k >= 1``);
- bit 4: two non-empty heaps may be left (``n - k >= 2``).

The digit before the point, ``d0``, governs moves that remove nothing. Only its bit 4 means
something -- a heap of ``n >= 2`` may be split into two non-empty heaps without removing any
object (e.g. ``4.07``, Dawson's Kayles plus splitting) -- so ``d0`` must be 0 or 4: bit 1
(remove an empty heap) and bit 2 (leave the heap as it is, a pass) have no sensible meaning and
are rejected. ``0.xyz`` and ``.xyz`` are the usual codes with ``d0 = 0``. A take-0 option is
``(0, (a, b))`` in :meth:`TakeAndBreak.options`, and ``0`` is listed first by
:meth:`TakeAndBreak.takes`.

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

_OCTAL_RE = re.compile(r"^\s*(\d?)\.([0-7]+)\s*$")
_MAX_DIGITS = 4096


class OctalCodeError(ValueError):
    """A malformed octal code or subtraction set."""


@dataclass(frozen=True)
class TakeAndBreak:
    """The move rule of a take-and-break game on heaps.

    ``digits[k - 1]`` is the octal digit ``d_k`` for ``k = 1 .. len(digits)``; for every larger
    ``k`` the digit is ``tail``. ``d0`` is the digit before the point (0 or 4: 4 lets a move split
    a heap in two without removing anything). Trailing digits equal to the tail are stripped so
    that equal games compare equal. ``unequal`` forbids a split into two equal heaps (Grundy's
    game is ``TakeAndBreak((), d0=4, unequal=True)``); the Grundy kernels, the exact searches
    (pure Python and compiled) and the boards know it; the dense table and the misère
    quotient's periodicity test do not, so the registry does not offer them such games.
    """

    digits: tuple[int, ...]
    tail: int = 0
    d0: int = 0
    unequal: bool = False

    def __post_init__(self) -> None:
        if not all(isinstance(d, int) and 0 <= d <= 7 for d in self.digits):
            raise OctalCodeError(f"octal digits must be 0 to 7, got {self.digits!r}")
        if not (isinstance(self.tail, int) and 0 <= self.tail <= 7):
            raise OctalCodeError(f"the tail digit must be 0 to 7, got {self.tail!r}")
        if self.d0 not in (0, 4) or isinstance(self.d0, bool):
            raise OctalCodeError(
                f"the digit before the point must be 0 or 4, got {self.d0!r}: 4 lets a move "
                "split a heap in two without removing anything; removing nothing and leaving "
                "one heap or none means nothing"
            )
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
        """Parse an octal code such as ``"0.77"``, ``".07"``, ``"0.1777"`` or ``"4.07"``.

        >>> TakeAndBreak.octal("0.77").digits
        (7, 7)
        >>> TakeAndBreak.octal("4.07").code
        '4.07'
        """
        match = _OCTAL_RE.match(code)
        if not match:
            raise OctalCodeError(
                f"{code!r} is not an octal code: write 0. (or 4.) followed by octal digits 0-7, "
                "e.g. 0.77 (Kayles), 0.07 (Dawson's Kayles), 0.137, 4.07"
            )
        head, text = match.group(1), match.group(2)
        if len(text) > _MAX_DIGITS:
            raise OctalCodeError(f"octal codes have at most {_MAX_DIGITS} digits")
        if head not in ("", "0", "4"):
            raise OctalCodeError(
                f"{code!r}: the digit before the point must be 0 or 4 (4 lets a move split a "
                "heap in two without removing anything, e.g. 4.07)"
            )
        game = cls(tuple(int(c) for c in text), d0=int(head or "0"))
        if not game.digits and not game.d0:
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
        """The octal digit for removing ``k >= 0`` objects (``d0`` for ``k = 0``; 0 if negative)."""
        if k < 1:
            return self.d0 if k == 0 else 0
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
        return bool(self.d0 & 4 or self.tail & 4) or any(d & 4 for d in self.digits)

    @cached_property
    def is_nim(self) -> bool:
        return self.digits == () and self.tail == 3 and not self.d0

    @cached_property
    def subtraction_set(self) -> tuple[int, ...] | None:
        """The set ``S`` when this is a finite subtraction game (every digit 0 or 3), else None."""
        if self.tail or self.d0 or any(d not in (0, 3) for d in self.digits):
            return None
        return tuple(k for k, d in enumerate(self.digits, 1) if d == 3)

    @property
    def code(self) -> str:
        """The octal code, e.g. ``"0.77"`` or ``"4.07"``; Nim and other infinite codes end in
        ``"..."``. :meth:`octal` reads a finite code back to an equal game."""
        body = "".join(map(str, self.digits))
        if self.tail:
            body += f"{self.tail}{self.tail}{self.tail}..."
        return f"{self.d0}." + (body or "0")

    def __str__(self) -> str:
        return self.code

    # -- moves on one heap --------------------------------------------------------------------

    def takes(self, n: int) -> Iterator[int]:
        """Every ``k`` (ascending, 0 first when ``d0`` allows a split) for which some move removes
        ``k`` objects from a heap of ``n``: ``k == n`` with bit 1, ``k < n`` with bit 2, or
        ``n - k >= 2`` with bit 4 of ``d_k``. A heap with no such ``k`` has no move.

        O(min(n, len(digits))) for finite codes; for an infinite tail, O(n).
        """
        if self.is_nim:  # every amount (the digits below say the same, one at a time)
            yield from range(1, n + 1)
            return
        if self.d0 & 4 and n >= 2 + self.unequal:
            yield 0
        top = n if self.max_take is None else min(n, self.max_take)
        for k in range(1, top + 1):
            d = self.digit(k)
            if (k == n and d & 1) or (k < n and d & 2) or (n - k >= 2 + self.unequal and d & 4):
                yield k

    def options(self, n: int) -> Iterator[tuple[int, tuple[int, ...]]]:
        """Every distinct move from one heap of ``n`` as ``(take, parts)``.

        ``parts`` is the sorted tuple of non-empty heaps left: ``()``, ``(a,)`` or ``(a, b)``
        with ``a <= b``. Each distinct ``(take, parts)`` appears once. With ``d0 = 4`` the
        splits that remove nothing come first, as ``(0, (a, b))`` with ``a + b == n``.
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
                for a in range(1, (rest - self.unequal) // 2 + 1):
                    yield k, (a, rest - a)

    def plain_grundy_values(self, n: int) -> list[int]:
        """``[G(0), .., G(n - 1)]`` by the plain mex over every option, in pure Python (no
        compiled kernel): the reference twin of every fast path, and the quick answer for small
        heaps. O(n^2 t) for a finite code with t digits, O(n^3) for an infinite tail."""
        g: list[int] = []
        for m in range(n):
            options: set[int] = set()
            for _take, parts in self.options(m):
                x = 0
                for part in parts:
                    x ^= g[part]
                options.add(x)
            v = 0
            while v in options:
                v += 1
            g.append(v)
        return g

    def can_leave(self, take: int, left: int, right: int) -> bool:
        """Whether removing ``take`` objects so that ``left`` and ``right`` remain beside the gap
        (in a row of stones, ``left + take + right`` is the heap) is a legal move.

        ``take == 0`` is a split without removing anything: legal when ``d0 = 4`` and both sides
        are non-empty. O(1)."""
        if take < 0 or left < 0 or right < 0:
            return False
        d = self.digit(take)
        nonzero = (left > 0) + (right > 0)
        if nonzero == 2 and self.unequal and left == right:
            return False
        return bool(d & (1, 2, 4)[nonzero])
