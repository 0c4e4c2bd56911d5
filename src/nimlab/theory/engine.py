"""One entry point for the value of a position: formulas where theory gives them, exact search
everywhere else, and an honest "not proven" when the search budget runs out.

Which method answers (all of them agree; the tests check every fast path against
:class:`~nimlab.theory.solver.ExactSolver`):

- normal play, no extra end positions: the Sprague–Grundy theorem (XOR of heap Grundy values;
  for Nim the heaps themselves), O(n) for any heap sizes;
- misère Nim, no extra end positions: Bouton's misère rule, O(n);
- everything else: exact search, by the dense retrograde table
  (:mod:`nimlab.theory.retrograde`) for games that never split a heap when the table is small
  enough, else the memoised search of :mod:`nimlab.theory.solver` within a position budget.

Remoteness always comes from exact search, so it is ``None`` for positions beyond the budget
even when the outcome is known by formula.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import reduce
from math import comb
from operator import xor

from nimlab.theory.octal import TakeAndBreak
from nimlab.theory.outcome import Outcome
from nimlab.theory.positions import Canon
from nimlab.theory.solver import BudgetExceeded, ExactSolver, Value

__all__ = ["Evaluation", "Evaluator"]

DEFAULT_BUDGET = 250_000
"""Positions the memoised (pure-Python) search may store before it gives up: a few seconds to
half a minute, so a bot or a web request never hangs. Games that never split a heap use the dense
tables instead, up to ``DENSE_LIMIT`` positions."""

DENSE_LIMIT = 40_000_000
"""Largest dense retrograde table built on demand (entries)."""

_SPARSE_PREFERRED = 3_000
_ANSWERS = 1_000_000
"""Below this many positions the pure-Python search beats loading the compiled kernel."""


@dataclass(frozen=True, slots=True)
class Evaluation:
    """What is known about a position for two players.

    ``outcome`` is ``None`` only when it could not be proven within the budget; ``remoteness``
    is ``None`` when the outcome came from a formula and the exact search was out of reach.
    """

    outcome: Outcome | None
    remoteness: int | None
    method: str

    @property
    def proven(self) -> bool:
        return self.outcome is not None


class Evaluator:
    """Values of positions under one two-player ruleset, with caches that persist across calls
    (a game in progress gets its later positions answered instantly)."""

    def __init__(
        self,
        rule: TakeAndBreak,
        *,
        misere: bool = False,
        end_positions: frozenset[Canon] = frozenset(),
        budget: int = DEFAULT_BUDGET,
    ) -> None:
        self.rule = rule
        self.misere = misere
        self.end_positions = frozenset(e for e in end_positions if e)
        self.budget = budget
        self._sparse = ExactSolver(
            rule, misere=misere, end_positions=self.end_positions, budget=budget
        )
        self._dense: object | None = None  # a DenseSolver once one is built
        self._answers: dict[tuple[Canon, bool], Evaluation] = {}

    # -- formulas -----------------------------------------------------------------------------

    @property
    def has_formula(self) -> bool:
        """Whether outcomes come from a formula (no search) under these rules."""
        if self.end_positions:
            return False
        return not self.misere or self.rule.is_nim

    def grundy(self, position: Canon) -> int | None:
        """The Grundy value of the position, or ``None`` where it is not defined (misère play,
        extra end positions) or cannot be computed (a heap too large with no proven period)."""
        if self.misere or self.end_positions:
            return None
        if self.rule.is_nim:
            return reduce(xor, position, 0)
        from nimlab.theory.grundy import grundy_value

        try:
            return reduce(xor, (grundy_value(self.rule, h) for h in position), 0)
        except ValueError:
            return None

    def formula_outcome(self, position: Canon) -> Outcome | None:
        """The outcome by formula, or ``None`` when no formula applies."""
        if not self.has_formula:
            return None
        if self.misere:
            from nimlab.theory.nim import misere_nim_outcome

            return misere_nim_outcome(position)
        g = self.grundy(position)
        return None if g is None else Outcome.of(g != 0)

    # -- exact search -------------------------------------------------------------------------

    def search_size(self, position: Canon) -> int | None:
        """An upper bound on the positions an exact search of ``position`` visits, when one is
        cheap to state (games that never split a heap), else ``None``."""
        if self.rule.splits or not position:
            return 1 if not position else None
        return comb(max(position) + len(position), len(position))

    def exact(self, position: Canon) -> Value | None:
        """Outcome and remoteness by exact search, or ``None`` beyond the budget."""
        size = self.search_size(position)
        if position and size is not None and size > _SPARSE_PREFERRED:
            return self._dense_value(position, size)
        if size is None and len(self._sparse) > self.budget:
            return None
        try:
            return self._sparse.value(position)
        except BudgetExceeded:
            return None

    def _dense_value(self, position: Canon, size: int) -> Value | None:
        from nimlab.theory.retrograde import DenseSolver

        dense = self._dense
        if isinstance(dense, DenseSolver) and dense.covers(position):
            return dense.value(position)
        max_heap, max_piles = max(position), len(position)
        if isinstance(dense, DenseSolver):
            max_heap = max(max_heap, dense.max_heap)
            max_piles = max(max_piles, dense.max_piles)
        if comb(max_heap + max_piles, max_piles) > DENSE_LIMIT:
            if size > DENSE_LIMIT:
                return None
            max_heap, max_piles = max(position), len(position)
        dense = DenseSolver(
            self.rule,
            misere=self.misere,
            end_positions=self.end_positions,
            max_heap=max_heap,
            max_piles=max_piles,
        )
        self._dense = dense
        return dense.value(position)

    # -- the answer ---------------------------------------------------------------------------

    def evaluate(self, position: Canon, *, remoteness: bool = True) -> Evaluation:
        """Everything known about a canonical position.

        With ``remoteness=False`` a formula answer skips the exact search entirely (O(n)).
        Answers are remembered (up to ``_ANSWERS`` of them), so asking again is O(1).
        """
        key = (position, remoteness)
        answer = self._answers.get(key)
        if answer is None:
            if len(self._answers) >= _ANSWERS:
                self._answers.clear()
            answer = self._answers[key] = self._evaluate(position, remoteness)
        return answer

    def _evaluate(self, position: Canon, remoteness: bool) -> Evaluation:
        outcome = self.formula_outcome(position)
        if outcome is not None and not remoteness:
            return Evaluation(outcome, None, "formula")
        value = self.exact(position) if outcome is None or self._search_feasible(position) else None
        if value is not None:
            return Evaluation(value.outcome, value.remoteness, "formula" if outcome else "search")
        return Evaluation(outcome, None, "formula" if outcome else "budget exceeded")

    def outcome(self, position: Canon) -> Outcome | None:
        """The outcome, or ``None`` if it could not be proven within the budget."""
        return self.evaluate(position, remoteness=False).outcome

    def _search_feasible(self, position: Canon) -> bool:
        size = self.search_size(position)
        if size is None:
            return sum(position) <= 40
        return size <= DENSE_LIMIT
