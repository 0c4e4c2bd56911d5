"""Plain Nim best move for 10**6 heaps (issue 2 target: under 20 ms).

Prints nimlab's time next to a plain-Python baseline measured in the same run, and the ratio.
Run: ``python bench/bench_nim.py``.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable

import numpy as np

from nimlab.theory.nim import misere_nim_winning_moves, nim_sum, nim_winning_moves

N = 10**6


def best_time(f: Callable[[], object], repeat: int = 7) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return min(times)


def baseline_best_move(heaps: list[int]) -> tuple[int, int] | None:
    """The textbook loop: nim-sum, then the first heap that shrinks when XORed with it."""
    s = 0
    for h in heaps:
        s ^= h
    if s == 0:
        return None
    for i, h in enumerate(heaps):
        if h ^ s < h:
            return i, h - (h ^ s)
    return None


def main() -> None:
    rng = random.Random(1)
    heaps = [rng.randrange(1, 2**20) for _ in range(N)]
    array = np.array(heaps, dtype=np.int64)
    big = np.arange(10**7, dtype=np.int64)
    expected = baseline_best_move(heaps)
    got = nim_winning_moves(array, limit=1)[0]
    assert expected is not None and (got[0], heaps[got[0]] - got[1]) == expected
    rows = [
        ("baseline: plain Python loop over a list", best_time(lambda: baseline_best_move(heaps))),
        ("nimlab, NumPy array of heaps", best_time(lambda: nim_winning_moves(array, limit=1))),
        ("nimlab, Python list of heaps", best_time(lambda: nim_winning_moves(heaps, limit=1))),
        ("nimlab misère, NumPy array", best_time(lambda: misere_nim_winning_moves(array, limit=1))),
        ("nimlab nim-sum of 10**7 heaps (array)", best_time(lambda: nim_sum(big), 3)),
    ]
    base = rows[0][1]
    print(f"Plain Nim best move, {N:,} heaps (target: under 20 ms)")
    for name, t in rows:
        print(f"  {name:<42} {t * 1000:8.2f} ms   ratio vs baseline {base / t:6.1f}x")
    runs = [best_time(lambda: nim_winning_moves(array, limit=1), 1) for _ in range(15)]
    print(f"  NumPy path median over 15 single runs: {statistics.median(runs) * 1000:.2f} ms")


if __name__ == "__main__":
    main()
