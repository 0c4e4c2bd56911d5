"""Exact outcomes of a finite game whose moves may return to an earlier position (a *loopy*
game, such as Northcott's game, where a checker may move back): win, loss or draw for the player
to move, by retrograde analysis of the whole game graph reachable from a start.

:class:`~nimlab.theory.solver.MoveSolver` assumes no position repeats; this is its counterpart
for games where one may. Conventions as there: a position with no move is lost by the player to
move in normal play and won in misère play; a position from which neither player can force a
win is a draw (``None``), which happens only when play can go on forever.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Hashable, Iterable
from typing import TypeVar

from nimlab.theory.budget import Budget
from nimlab.theory.outcome import Outcome

__all__ = ["loopy_outcomes"]

S = TypeVar("S", bound=Hashable)


def loopy_outcomes(
    start: S,
    moves: Callable[[S], Iterable[S]],
    *,
    misere: bool = False,
    budget: Budget | None = None,
) -> dict[S, Outcome | None]:
    """The outcome of every position reachable from ``start``: ``Outcome.N`` (the player to
    move wins), ``Outcome.P`` (the player to move loses) or ``None`` (a draw: neither can force
    a win). ``moves(position)`` yields the positions one move away (whose turn it is belongs in
    the position when the game is partizan).

    ``budget`` is charged one unit per position found and raises
    :class:`~nimlab.theory.budget.BudgetExceeded` beyond it. O(V + E) time and memory for the V
    positions and E moves reachable.
    """
    if budget is not None:
        budget.check()
    children: dict[S, list[S]] = {}
    frontier = [start]
    while frontier:
        position = frontier.pop()
        if position in children:
            continue
        kids = list(dict.fromkeys(moves(position)))
        children[position] = kids
        frontier.extend(k for k in kids if k not in children)
        if budget is not None:
            budget.charge()
    parents: dict[S, list[S]] = {p: [] for p in children}
    for position, kids in children.items():
        for kid in kids:
            parents[kid].append(position)
    outcome: dict[S, Outcome | None] = {}
    unresolved = {p: len(kids) for p, kids in children.items()}
    queue: deque[S] = deque()
    for position, kids in children.items():
        if not kids:
            outcome[position] = Outcome.N if misere else Outcome.P
            queue.append(position)
    while queue:
        position = queue.popleft()
        for parent in parents[position]:
            if parent in outcome:
                continue
            if outcome[position] is Outcome.P:  # a move to a lost position wins
                outcome[parent] = Outcome.N
                queue.append(parent)
            else:
                unresolved[parent] -= 1
                if not unresolved[parent]:  # every move leads to a won position
                    outcome[parent] = Outcome.P
                    queue.append(parent)
    for position in children:
        outcome.setdefault(position, None)
    return outcome
