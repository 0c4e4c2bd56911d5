"""Arguments as people give them, checked in one place: time budgets (``seconds=`` in the
library, ``--seconds`` at the command line) and counts (how many values, piles, moves).

>>> check_seconds(2)
2.0
>>> check_seconds(float("nan"))
Traceback (most recent call last):
...
nimlab.core.errors.ArgumentError: seconds is nan: give a number of seconds, 0 to 86,400
"""

from __future__ import annotations

import math
import reprlib

from nimlab.core.errors import ArgumentError

__all__ = ["MAX_SECONDS", "check_count", "check_seconds", "shown"]

MAX_SECONDS = 86_400.0
"""The longest time budget accepted (a day): a budget is a bound, "no limit" is not one."""


def shown(value: object) -> str:
    """A value as a message shows it: short (``reprlib``), and a number of thousands of digits
    by its size (Python refuses to write ints of more than 4,300 digits). O(shown)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        return f"a number of {value.bit_length():,} bits"
    try:
        return reprlib.repr(value)
    except ValueError:  # holds a number too long to write
        return f"a {type(value).__name__}"


def check_seconds(seconds: object, *, what: str = "seconds", least: float = 0.0) -> float:
    """``seconds`` as a float when it is a time budget: a real number (an int or a float, not
    ``True``/``False``), finite, from ``least`` to :data:`MAX_SECONDS`. Otherwise
    :class:`~nimlab.core.errors.ArgumentError` with a one-line message naming ``what`` (the
    argument's or option's name). O(1)."""
    allowed = f"give a number of seconds, {least:g} to {MAX_SECONDS:,.0f}"
    if isinstance(seconds, bool) or not isinstance(seconds, int | float):
        raise ArgumentError(f"{what} is {shown(seconds)}: {allowed}")
    if isinstance(seconds, int) and seconds.bit_length() > 64:
        raise ArgumentError(f"{what} is {shown(seconds)}: {allowed}")
    value = float(seconds)
    if math.isnan(value) or not least <= value <= MAX_SECONDS:
        raise ArgumentError(f"{what} is {shown(seconds)}: {allowed}")
    return value


def check_count(value: object, what: str, least: int, most: int | None = None) -> int:
    """``value`` when it is a whole number (an int, not ``True``/``False``) from ``least`` to
    ``most`` (no upper bound when ``None``); otherwise
    :class:`~nimlab.core.errors.ArgumentError` saying what ``what`` is allowed to be. O(1).

    >>> check_count(-1, "n (how many values)", 1, 1000)
    Traceback (most recent call last):
    ...
    nimlab.core.errors.ArgumentError: n (how many values) is -1: a whole number from 1 to 1,000
    """
    allowed = (
        f"a whole number {least:,} or more"
        if most is None
        else f"a whole number from {least:,} to {most:,}"
    )
    if isinstance(value, bool) or not isinstance(value, int):
        raise ArgumentError(f"{what} is {shown(value)}: {allowed}")
    if value < least or (most is not None and value > most):
        raise ArgumentError(f"{what} is {shown(value)}: {allowed}")
    return value
