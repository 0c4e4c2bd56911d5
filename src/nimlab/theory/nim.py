"""Nim by formula: nim-sums, normal and misère outcomes, winning moves.

All functions take heap sizes in display order (Python ints of any size, or a NumPy integer
array for very long positions) and never search.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from functools import reduce
from operator import xor
from typing import TYPE_CHECKING, TypeAlias

from nimlab.theory.outcome import Outcome

if TYPE_CHECKING:  # NumPy loads only for long inputs (``nimlab --help`` must not import it)
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "as_heap_array",
    "misere_nim_outcome",
    "misere_nim_winning_moves",
    "nim_outcome",
    "nim_sum",
    "nim_winning_moves",
]

Heaps: TypeAlias = "Sequence[int] | npt.NDArray[np.integer]"

_NUMPY_FROM = 4096  # below this many heaps plain Python is faster than converting


def as_heap_array(heaps: Heaps) -> npt.NDArray[np.int64] | None:
    """The heaps as an ``int64`` array when that is exact and worth it, else ``None``."""
    loaded = sys.modules.get("numpy")  # not loaded yet: ``heaps`` cannot be an array
    if loaded is not None and isinstance(heaps, loaded.ndarray):
        array: npt.NDArray[np.int64] = heaps.astype(loaded.int64, copy=False)
        return array
    if len(heaps) < _NUMPY_FROM:
        return None
    import numpy as np

    try:
        return np.fromiter(heaps, dtype=np.int64, count=len(heaps))
    except (OverflowError, TypeError):
        return None


def nim_sum(heaps: Heaps) -> int:
    """The nim-sum (XOR) of the heap sizes; 0 for no heaps. O(n); vectorised for long inputs.

    >>> nim_sum([3, 4, 5])
    2
    """
    array = as_heap_array(heaps)
    if array is not None:
        import numpy as np

        return int(np.bitwise_xor.reduce(array)) if array.size else 0
    return reduce(xor, heaps, 0)


def nim_outcome(heaps: Heaps) -> Outcome:
    """Normal-play Nim: P exactly when the nim-sum is 0 (Bouton). O(n)."""
    return Outcome.of(nim_sum(heaps) != 0)


def misere_nim_outcome(heaps: Heaps) -> Outcome:
    """Misère Nim: P exactly when (nim-sum 0 and some heap > 1) or (every heap <= 1 and nim-sum 1).

    O(n).
    """
    array = as_heap_array(heaps)
    big = bool((array > 1).any()) if array is not None else any(h > 1 for h in heaps)
    s = nim_sum(heaps if array is None else array)
    p_position = (s == 0) if big else (s == 1)
    return Outcome.of(not p_position)


def nim_winning_moves(heaps: Heaps, *, limit: int | None = None) -> list[tuple[int, int]]:
    """Every winning move of normal-play Nim as ``(pile index, heap size after)``, 0-based.

    A move is winning when it leaves nim-sum 0: heap ``h`` becomes ``h ^ s``, which is smaller
    exactly when ``h`` has a 1 in the nim-sum's highest column. Empty for a P-position. ``limit``
    stops after that many. O(n), and for lists the scan stops at the ``limit``-th winning move.
    """
    array = as_heap_array(heaps)
    s = nim_sum(heaps if array is None else array)
    if s == 0:
        return []
    high = 1 << (s.bit_length() - 1)
    if array is not None:
        index = _first_where(array, high, limit)
        return [(int(i), int(array[i]) ^ s) for i in index]
    moves = []
    for i, h in enumerate(heaps):
        if h & high:
            moves.append((i, h ^ s))
            if limit is not None and len(moves) >= limit:
                break
    return moves


_CHUNK = 1 << 15


def _first_where(array: npt.NDArray[np.int64], bit: int, limit: int | None) -> list[int]:
    """Indices of the first ``limit`` heaps (all if ``None``) that have ``bit`` set, scanning in
    chunks so that asking for a few does not build an index of millions."""
    import numpy as np

    if limit is None:
        return [int(i) for i in np.flatnonzero(array & bit)]
    found: list[int] = []
    for start in range(0, len(array), _CHUNK):
        hits = np.flatnonzero(array[start : start + _CHUNK] & bit)[: limit - len(found)]
        found.extend(start + int(i) for i in hits)
        if len(found) >= limit:
            break
    return found


def misere_nim_winning_moves(heaps: Heaps, *, limit: int | None = None) -> list[tuple[int, int]]:
    """Every winning move of misère Nim as ``(pile index, heap size after)``, 0-based. O(n).

    With two or more heaps above 1 these are the normal-play moves. With exactly one, the only
    winning move reduces it to 0 or 1 so that an odd number of 1-heaps remains. With none, taking
    a 1-heap wins exactly when their number is even.
    """
    array = as_heap_array(heaps)
    if array is not None:
        import numpy as np

        big = int(np.count_nonzero(array > 1))
        ones = int(np.count_nonzero(array == 1))
    else:
        big = sum(1 for h in heaps if h > 1)
        ones = sum(1 for h in heaps if h == 1)
    if big >= 2:
        return nim_winning_moves(heaps if array is None else array, limit=limit)
    if big == 1:
        if array is not None:
            i = int((array > 1).argmax())
        else:
            i = next(i for i, h in enumerate(heaps) if h > 1)
        # leave an odd number of 1-heaps: take the big heap to 1 if the others are even
        return [(i, 1 if ones % 2 == 0 else 0)]
    if ones % 2 == 1:
        return []
    index = (
        (array == 1).nonzero()[0]
        if array is not None
        else [i for i, h in enumerate(heaps) if h == 1]
    )
    moves = [(int(i), 0) for i in index]
    return moves[:limit] if limit is not None else moves
