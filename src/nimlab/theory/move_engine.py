"""An engine for games given by a move generator and a theorem: the classic relatives of Nim
(Wythoff's game, Moore's Nim, Staircase Nim, Fibonacci Nim), whose positions are not sums of
independent heaps. The take-and-break games have :class:`~nimlab.theory.engine.Engine`."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable

from nimlab.theory.budget import Budget, BudgetExceeded, Shortfall
from nimlab.theory.engine import Evaluation, interactive_budget
from nimlab.theory.outcome import Outcome
from nimlab.theory.positions import Canon
from nimlab.theory.solver import MoveSolver

__all__ = ["REMOTENESS_COST", "SEARCH_LIMIT", "MoveEngine"]

REMOTENESS_COST = 300_000
"""A search for the remoteness alone (the theorem gave the outcome) runs only below this many
positions (estimated)."""

SEARCH_LIMIT = 1_000_000
"""Most positions an engine's search keeps between questions (then it starts afresh)."""


class MoveEngine:
    """Outcome and remoteness of the positions of a game given by its move generator (the
    classic relatives of Nim), for one ruleset: the game's theorem where it holds (``formula``
    answers ``None`` where it does not; never with extra end positions), else and for the
    remoteness the exact search (:class:`~nimlab.theory.solver.MoveSolver`) within the
    question's budget, when its estimated ``cost`` (positions) fits. Never guesses: beyond the
    budget the answer is not proven, with the step that ran out. Thread safe (one lock).

    ``moves(key)`` yields the keys one move away; ``end_key(key)`` is the multiset of heaps an
    extra end position is compared with. Cost: O(1) for a formula, the search's O(R * B) for R
    reachable positions of B moves each (remembered up to :data:`SEARCH_LIMIT` positions)."""

    def __init__(
        self,
        moves: Callable[[Canon], Iterable[Canon]],
        formula: Callable[[Canon, bool], Outcome | None],
        *,
        misere: bool,
        end_positions: frozenset[Canon],
        end_key: Callable[[Canon], Canon],
        cost: Callable[[Canon], float],
        method: str,
    ) -> None:
        self.misere = misere
        self.end_positions = end_positions
        self.method = method
        self._formula = formula
        self._end_key = end_key
        self._cost = cost

        def is_end(key: Canon) -> bool:
            return bool(end_positions) and end_key(key) in end_positions

        self._solver: MoveSolver[Canon] = MoveSolver(moves, misere=misere, is_end=is_end)
        self.lock = threading.RLock()

    def formula(self, key: Canon) -> Outcome | None:
        """The theorem's outcome (``None`` where it does not hold under these rules: extra end
        positions, or a play no theorem covers)."""
        if self.end_positions:
            return None
        return self._formula(key, self.misere)

    def evaluate(
        self, key: Canon, *, remoteness: bool = True, budget: Budget | None = None
    ) -> Evaluation:
        """What is known of ``key``: the formula's outcome, and the search's remoteness (and
        outcome, where no formula holds) when it fits the budget."""
        known = self.formula(key)
        if known is not None and not remoteness:
            return Evaluation(known, None, self.method)
        if key in self._solver:
            v = self._solver.value(key)
            return Evaluation(v.outcome, v.remoteness, self.method if known else "search")
        if budget is None:
            budget = interactive_budget()
        cost = self._cost(key)
        if known is not None and cost > REMOTENESS_COST:
            return Evaluation(known, None, self.method)
        if not budget.allows(int(min(cost, 1e18))):
            return Evaluation(
                known,
                None,
                self.method if known else "not proven",
                Shortfall("the exact search", "positions"),
            )
        try:
            with self.lock:
                if len(self._solver) > SEARCH_LIMIT:
                    self._solver = MoveSolver(
                        self._solver.moves, misere=self.misere, is_end=self._solver.is_end
                    )
                v = self._solver.value(key, budget)
        except BudgetExceeded as e:
            shortfall = Shortfall("the exact search", e.reason)
            if known is not None:
                return Evaluation(known, None, self.method, shortfall)
            return Evaluation(None, None, "not proven", shortfall)
        if known is not None:
            return Evaluation(known, v.remoteness, self.method)
        return Evaluation(v.outcome, v.remoteness, "search")
