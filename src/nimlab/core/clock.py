"""The time stamps that games, records and the database keep: UTC, ISO 8601 to the second."""

from __future__ import annotations

import time
from datetime import UTC, datetime

__all__ = ["now_stamp"]

_last_stamp: tuple[int, str] = (-1, "")


def now_stamp() -> str:
    """The current UTC time, ISO 8601 to the second (``2024-01-01T00:00:00+00:00``), made once
    per second and then reused: O(1), thread-safe (a stale second is only recomputed)."""
    global _last_stamp
    second = int(time.time())
    last = _last_stamp
    if last[0] == second:
        return last[1]
    text = datetime.fromtimestamp(second, UTC).isoformat(timespec="seconds")
    _last_stamp = (second, text)
    return text
