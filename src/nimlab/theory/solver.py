"""The exact solver: outcome and remoteness of any position under any two-player ruleset.

This is the reference every fast path is checked against. It is a memoised search over canonical
positions (sorted tuples of non-zero heaps), so it serves every take-and-break game, normal and
misère play, and any set of extra end positions.

Conventions: a position is *terminal* when it is empty, an extra end position, or
has no legal move. In normal play the player who moved into a terminal position has won, so a
terminal position is a P-position; in misère play that player has lost, so it is an N-position.
Both have remoteness 0. Otherwise a position is N when some move leads to a P-position, with
remoteness 1 + the least remoteness among those moves (the winner hurries), and P when every move
leads to an N-position, with remoteness 1 + the largest remoteness among them (the loser delays).
"""

from __future__ import annotations

from dataclasses import dataclass

from nimlab.theory.budget import Budget, BudgetExceeded
from nimlab.theory.octal import TakeAndBreak
from nimlab.theory.outcome import Outcome
from nimlab.theory.positions import Canon, children

__all__ = ["BudgetExceeded", "ExactSolver", "Value"]


@dataclass(frozen=True, slots=True)
class Value:
    """The proven value of a position for two players."""

    outcome: Outcome
    remoteness: int


class ExactSolver:
    """Memoised exact search for one ruleset; the cache persists across calls.

    ``budget`` bounds the number of positions one query may store (an ``int``), and a
    :class:`~nimlab.theory.budget.Budget` given to :meth:`value` bounds that query's time,
    positions and cancellation; a query beyond either raises :class:`BudgetExceeded`. The
    positions solved so far stay cached and correct, and the next query starts afresh.

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
        self.misere = misere
        self.end_positions = end_positions
        self.budget = budget
        # position -> 2 * remoteness + (1 if N else 0)
        self._table: dict[Canon, int] = {}

    def __len__(self) -> int:
        return len(self._table)

    def __contains__(self, position: object) -> bool:
        """Whether ``position`` is solved already (and so is every position below it). O(1)."""
        return position in self._table

    def value(self, position: Canon, budget: Budget | None = None) -> Value:
        """The outcome and remoteness of a canonical position; raises :class:`BudgetExceeded`
        beyond the per-query limit or ``budget``."""
        code = self._table.get(position)
        if code is None:
            self._search(position, budget)
            code = self._table[position]
        return Value(Outcome.of(bool(code & 1)), code >> 1)

    def outcome(self, position: Canon) -> Outcome:
        return self.value(position).outcome

    def _search(self, root: Canon, budget: Budget | None) -> None:
        if budget is not None:
            budget.check()
        table = self._table
        stored = 0
        ends = self.end_positions
        rule = self.rule
        terminal = 1 if self.misere else 0
        pending: dict[Canon, list[Canon]] = {}
        stack = [root]
        while stack:
            position = stack[-1]
            if position in table:
                stack.pop()
                continue
            kids = pending.get(position)
            if kids is None:
                if not position or position in ends:
                    table[position] = terminal
                    stack.pop()
                    continue
                kids = list(set(children(rule, position)))
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
