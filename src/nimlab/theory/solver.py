"""The exact solver: outcome and remoteness of any position under any two-player ruleset.

This is the reference every fast path is checked against. :class:`MoveSolver` is a memoised
search over the positions of any game given by its move generator (a function from a position to
the positions one move away); :class:`ExactSolver` is that search over canonical positions
(sorted tuples of non-zero heaps) of a take-and-break game, so it serves every take-and-break
game, normal and misère play, and any set of extra end positions.

Conventions: a position is *terminal* when it is empty, an extra end position, or
has no legal move. In normal play the player who moved into a terminal position has won, so a
terminal position is a P-position; in misère play that player has lost, so it is an N-position.
Both have remoteness 0. Otherwise a position is N when some move leads to a P-position, with
remoteness 1 + the least remoteness among those moves (the winner hurries), and P when every move
leads to an N-position, with remoteness 1 + the largest remoteness among them (the loser delays).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass
from typing import Generic, TypeVar

from nimlab.theory.budget import Budget, BudgetExceeded
from nimlab.theory.octal import TakeAndBreak
from nimlab.theory.outcome import Outcome
from nimlab.theory.positions import Canon, children

__all__ = ["BudgetExceeded", "ExactSolver", "MoveSolver", "Value"]

S = TypeVar("S", bound=Hashable)


@dataclass(frozen=True, slots=True)
class Value:
    """The proven value of a position for two players."""

    outcome: Outcome
    remoteness: int


class MoveSolver(Generic[S]):
    """Memoised exact search over the positions of any finite game without draws, given by its
    move generator; the cache persists across calls.

    ``moves(position)`` yields every position one move away (repeats are fine); a position is
    terminal when ``is_end(position)`` holds or it has no move. The game graph must be acyclic
    (every relative of Nim here is: some count strictly decreases with each move).

    ``budget`` bounds the number of positions one query may store (an ``int``), and a
    :class:`~nimlab.theory.budget.Budget` given to :meth:`value` bounds that query's time,
    positions and cancellation; a query beyond either raises :class:`BudgetExceeded`. The
    positions solved so far stay cached and correct, and the next query starts afresh.

    Complexity: O(R * B) time and O(R) memory, where R is the number of positions reachable
    from the query and B the number of moves per position.
    """

    def __init__(
        self,
        moves: Callable[[S], Iterable[S]],
        *,
        misere: bool = False,
        is_end: Callable[[S], bool] | None = None,
        budget: int = 2_000_000,
    ) -> None:
        self.moves = moves
        self.misere = misere
        self.is_end = is_end
        self.budget = budget
        # position -> 2 * remoteness + (1 if N else 0)
        self._table: dict[S, int] = {}

    def __len__(self) -> int:
        return len(self._table)

    def __contains__(self, position: object) -> bool:
        """Whether ``position`` is solved already (and so is every position below it). O(1)."""
        return position in self._table

    def value(self, position: S, budget: Budget | None = None) -> Value:
        """The outcome and remoteness of ``position``; raises :class:`BudgetExceeded` beyond the
        per-query limit or ``budget``."""
        code = self._table.get(position)
        if code is None:
            self._search(position, budget)
            code = self._table[position]
        return Value(Outcome.of(bool(code & 1)), code >> 1)

    def outcome(self, position: S) -> Outcome:
        return self.value(position).outcome

    def winning_moves(self, position: S, budget: Budget | None = None) -> list[S]:
        """The distinct positions one move away that are P-positions (in the order ``moves``
        gives them): the moves that win. Empty for a P-position or a terminal one."""
        if self.is_end is not None and self.is_end(position):
            return []
        kids = list(dict.fromkeys(self.moves(position)))
        self.value(position, budget)
        return [kid for kid in kids if self.value(kid, budget).outcome is Outcome.P]

    def _search(self, root: S, budget: Budget | None) -> None:
        if budget is not None:
            budget.check()
        table = self._table
        stored = 0
        is_end = self.is_end
        moves = self.moves
        terminal = 1 if self.misere else 0
        pending: dict[S, list[S]] = {}
        stack = [root]
        while stack:
            position = stack[-1]
            if position in table:
                stack.pop()
                continue
            kids = pending.get(position)
            if kids is None:
                if is_end is not None and is_end(position):
                    table[position] = terminal
                    stack.pop()
                    continue
                kids = list(set(moves(position)))
                if not kids:
                    table[position] = terminal
                    stack.pop()
                    continue
                pending[position] = kids
                unknown = [k for k in kids if k not in table]
                if unknown:
                    stack.extend(unknown)
                    continue
            del pending[position]
            stack.pop()
            # codes: P at remoteness r is 2r, N is 2r + 1. A P-child wins: the fastest one
            # (2r -> 2(r + 1) + 1 = 2r + 3); else every child is N: resist longest (2r + 2).
            codes = [table[kid] for kid in kids]
            wins = [c for c in codes if not c & 1]
            table[position] = min(wins) + 3 if wins else max(codes) + 1
            stored += 1
            if stored > self.budget:
                raise BudgetExceeded(self.budget)
            if budget is not None:
                budget.charge()


class ExactSolver(MoveSolver[Canon]):
    """Memoised exact search for one take-and-break ruleset over canonical positions; the cache
    persists across calls. A :class:`MoveSolver` whose moves are
    :func:`~nimlab.theory.positions.children` and whose end positions are the empty position
    and ``end_positions``.

    Complexity: O(R * B) time and O(R) memory, where R is the number of canonical positions
    reachable from the query and B the number of options per position.
    """

    def __init__(
        self,
        rule: TakeAndBreak,
        *,
        misere: bool = False,
        end_positions: frozenset[Canon] = frozenset(),
        budget: int = 2_000_000,
    ) -> None:
        self.rule = rule
        self.end_positions = end_positions
        super().__init__(
            lambda position: children(rule, position),
            misere=misere,
            is_end=lambda position: not position or position in end_positions,
            budget=budget,
        )

    def value(self, position: Canon, budget: Budget | None = None) -> Value:
        """The outcome and remoteness of a canonical position; raises :class:`BudgetExceeded`
        beyond the per-query limit or ``budget``."""
        return super().value(position, budget)
