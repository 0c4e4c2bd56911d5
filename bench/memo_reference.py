"""The plain memoised recursion the exact solver is measured against: misère Nim with the
classic end positions [2,2,2], [1,2,3], [1,1,2,2], ``functools.lru_cache`` over sorted tuples,
full remoteness. It imports only the position helpers it needs (no NumPy, no Numba), so that
``python bench/memo_reference.py FILE`` is the reference as a whole process: one cache for the
whole batch, ``[outcome, remoteness]`` printed for each line (a JSON list of piles) of FILE."""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable

from nimlab.theory.octal import TakeAndBreak
from nimlab.theory.positions import Canon, canonical, children

RULE = TakeAndBreak.nim()
MISERE = True
ENDS: frozenset[Canon] = frozenset({(2, 2, 2), (1, 2, 3), (1, 1, 2, 2)})


def memoised_solver() -> Callable[[Canon], tuple[bool, int]]:
    """A new recursion with an empty cache: position -> (whether the player to move wins, its
    remoteness)."""

    @functools.lru_cache(maxsize=None)  # noqa: UP033 -- the baseline named in the brief
    def solve(pos: Canon) -> tuple[bool, int]:
        if not pos or pos in ENDS:
            return MISERE, 0
        best_win: int | None = None
        worst_loss = 0
        moved = False
        for child in children(RULE, pos):
            moved = True
            next_wins, remoteness = solve(child)
            if not next_wins:
                best_win = remoteness if best_win is None else min(best_win, remoteness)
            else:
                worst_loss = max(worst_loss, remoteness)
        if not moved:
            return MISERE, 0
        if best_win is not None:
            return True, best_win + 1
        return False, worst_loss + 1

    return solve


if __name__ == "__main__":
    solve = memoised_solver()
    with open(sys.argv[1]) as lines:
        for line in lines:
            next_wins, remoteness = solve(canonical(json.loads(line)))
            print(json.dumps(["N" if next_wins else "P", remoteness]))
