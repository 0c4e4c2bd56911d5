"""The engine: one place that answers every question about a position, for any ruleset.

Questions (two players): the :meth:`Engine.evaluate` of a position (outcome, remoteness, the
method that proved it), the :meth:`Engine.winning_moves` from it, and the values of its children
(:meth:`Engine.child_values`). Every answer carries ``proven`` and the method used; an answer
that could not be proven within its :class:`~nimlab.theory.budget.Budget` says so (outcome
``None``) instead of guessing. Nothing above the theory layer chooses a method.

The strategies form one ordered list, :data:`STRATEGIES`. Each says whether it
:meth:`~Strategy.applies` to a position under the engine's rules, what it would
:meth:`~Strategy.cost` (positions to store; 0 for a formula), and gives the answer. The engine
asks them in order: the first *formula* that applies gives the outcome (and winning moves without
listing every move); the first *search* that applies within the budget gives outcome and
remoteness.

================  ======================================================  =================
strategy          applies to                                              cost
================  ======================================================  =================
terminal          an end position or a position with no legal move        O(distinct heaps)
nim-formula       Nim, normal or misère, no extra end positions            O(n)
grundy            normal play, no extra end positions (Sprague–Grundy;    O(n) once the
                  computed or proven-periodic Grundy values per heap)     values are known
misere-quotient   misère octal games, no extra end positions, heaps       O(n) once the
                  covered by the game's misère quotient                   quotient is known
dense-table       games that never split a heap, any rules: the          C(M+K, K) once,
                  retrograde table over all positions below the query    then O(K)
split-search      games that split heaps (and any other), any rules:     reachable
                  compiled memoised search                               positions
search            the pure-Python exact search (reference twin)          reachable positions
================  ======================================================  =================

Formulas give no remoteness; where one is wanted a search runs only when its cost estimate fits
the budget. Every strategy is tested against :class:`~nimlab.theory.solver.ExactSolver`.

Canonical moves: a move on a canonical position is ``(heap, take, parts)``: one heap of size
``heap`` loses ``take`` objects and is replaced by ``parts`` (sorted, 0 to 2 non-empty heaps).
"""

from __future__ import annotations

import importlib
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from functools import cache, reduce
from itertools import islice
from operator import xor
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from nimlab.theory import kernels
from nimlab.theory.budget import Budget, BudgetExceeded, Shortfall, current_scope, metered
from nimlab.theory.octal import TakeAndBreak
from nimlab.theory.outcome import Outcome
from nimlab.theory.positions import Canon, is_terminal
from nimlab.theory.solver import ExactSolver, Value
from nimlab.theory.splitting import LASKERS_NIM, lasker_grundy, lasker_options_of_value

if TYPE_CHECKING:
    from nimlab.theory.paranoid import ParanoidSolver
    from nimlab.theory.quotient import MisereQuotient
    from nimlab.theory.retrograde import DenseSolver

__all__ = [
    "DENSE_LIMIT",
    "STRATEGIES",
    "CanonMove",
    "Engine",
    "EngineKey",
    "Evaluation",
    "HeapWins",
    "Strategy",
    "apply_move",
    "count_heap_wins",
    "engine_for",
    "engine_key",
    "engine_of",
    "interactive_budget",
]

CanonMove = tuple[int, int, tuple[int, ...]]
"""``(heap, take, parts)``: a move on a canonical position."""

HeapWins = tuple[int, int, int]
"""``(heap, single, pairs)``: the winning moves of one heap (of each heap of that size) that
leave at most one heap or two equal heaps (``single``), and those that leave two unequal heaps
(``pairs``: on a row of stones each can leave the smaller part on either side)."""

DENSE_LIMIT = 40_000_000
"""Largest dense retrograde table built on demand (positions)."""

SEARCH_LIMIT = 1_000_000
"""Most positions a memoised search keeps between questions (then its cache is cleared)."""

INTERACTIVE_SECONDS = 2.0
"""How long a bot move or an interactive analysis may think before it answers "not proven"."""

INTERACTIVE_POSITIONS = 3_000_000
"""How many positions one interactive question may store (bounds its memory)."""

_REMOTENESS_COST = 300_000
"""A search for remoteness alone (the outcome is known by formula) runs only below this cost."""

PARANOID_SOLVERS = 4
PARANOID_STATES = 1_000_000
PARANOID_TABLE_BYTES = 128 * 2**20

_ANSWERS = 200_000
"""Answers an engine remembers (then it forgets them all)."""

QUOTIENT_HEAP_LIMIT = 256
"""Largest heap bound up to which a misère quotient is computed on demand."""

FEW_POSITIONS = 12_000
"""A position whose total can be split into at most this many positions in all (every
partition of every total up to its own, :func:`positions_through`: totals up to 26) is
estimated without the compiled search, whose import costs NumPy's (tens of milliseconds, more
than such a search): a quarter of this bound, like a quarter of the compiled search's estimate
(which it bounds), is at most the costs the strategies compare with (SplitSearch's 3,000,
:data:`QUOTIENT_FROM`, the remoteness limit), so the same strategy answers."""


@cache
def positions_through(total: int) -> int:
    """How many positions (multisets of positive heaps) have at most ``total`` objects: the sum
    of the partition numbers p(0) + ... + p(total). O(total^2), once per total."""
    p = [1] + [0] * total
    for part in range(1, total + 1):
        for n in range(part, total + 1):
            p[n] += p[n - part]
    return sum(p)


def few_positions(position: Canon) -> int | None:
    """:func:`positions_through` the position's total, when it is at most
    :data:`FEW_POSITIONS` (else ``None``). O(piles) once the bound is known."""
    total = sum(position)
    if total > 40:  # (p(40) alone is 37,338)
        return None
    bound = positions_through(total)
    return bound if bound <= FEW_POSITIONS else None


QUOTIENT_FROM = 20_000
"""Positions whose exact search stores fewer positions than this are searched instead (the
quotient of some games takes long to build, or cannot be built)."""

QUOTIENT_SHARE = 0.5
"""The share of a question's time left that one attempt at a misère quotient may take (a
quotient is computed once per game and bound, then cached)."""

_QUOTIENT_IMPOSSIBLE: dict[TakeAndBreak, int] = {}
"""The least heap bound at which a game's quotient provably cannot be built (too large, or
infinite: :class:`~nimlab.theory.quotient.QuotientError`, whatever the budget)."""

_QUOTIENT_STALLED: dict[TakeAndBreak, tuple[int, float, float]] = {}
"""Per game, the heap its quotient had been verified to, the most seconds an attempt that
verified no further heap had, and when it ended: until :data:`QUOTIENT_RETRY_AFTER` seconds
later, a question with less than twice that time does not try again (each would spend its share
on the same unfinished heap), one with more time does."""

QUOTIENT_RETRY_AFTER = 60.0
"""Seconds after which a quotient attempt that verified nothing more is tried again by any
question (it may have been slowed by a busy machine): at most one share a minute is spent so."""

_PLAIN_GRUNDY = 64
"""Heaps below this size get their Grundy values from the plain mex in pure Python (about a
millisecond for all of them) instead of the compiled kernels."""


def interactive_budget() -> Budget:
    """The budget of one interactive question: about 2 s and a few million positions. Within
    a :func:`~nimlab.theory.budget.budget_scope` (a server's bounded work), the scope's budget
    decides instead: what is left of its time and positions, cancelled with it."""
    scope = current_scope()
    if scope is not None:
        return scope.derive(positions=INTERACTIVE_POSITIONS)
    return Budget(seconds=INTERACTIVE_SECONDS, positions=INTERACTIVE_POSITIONS)


@dataclass(frozen=True, slots=True)
class Evaluation:
    """What is known about a position for two players.

    ``outcome`` is ``None`` only when it could not be proven within the budget; ``remoteness``
    is ``None`` when only a formula answered (and a search for it did not fit the budget).
    ``method`` names the strategy that proved the outcome (or ``"not proven"``);
    ``shortfall`` says, when the outcome or the remoteness is missing, which step ran out of
    which budget (``None`` when every step that could answer did, or none fits any budget).
    """

    outcome: Outcome | None
    remoteness: int | None
    method: str
    shortfall: Shortfall | None = None

    @property
    def proven(self) -> bool:
        return self.outcome is not None


NOT_PROVEN = Evaluation(None, None, "not proven")


class SplitSolverLike(Protocol):
    """What the engine needs of the compiled search (:mod:`nimlab.theory.splitsearch`)."""

    def estimate(self, position: Canon) -> int: ...
    def value(self, position: Canon, budget: Budget | None = None) -> Value: ...


def _optional(module: str) -> Any:
    """A theory module that may be missing from a partial install (``None`` then)."""
    try:
        return importlib.import_module(module)
    except ImportError:  # pragma: no cover
        return None


# -- strategies --------------------------------------------------------------------------------


class Strategy:
    """One way to answer. Subclasses set :attr:`name`, :attr:`formula` (gives outcomes without
    search, and no remoteness) and implement :meth:`applies` and :meth:`value`; formulas may
    implement :meth:`winning_moves`."""

    name: ClassVar[str] = ""
    formula: ClassVar[bool] = False
    description: ClassVar[str] = ""

    def applies(self, engine: Engine, position: Canon, budget: Budget | None = None) -> bool:
        """Whether this strategy answers ``position``; ``budget`` is the question's (a formula
        may have to compute its tables within it)."""
        raise NotImplementedError

    def cost(self, engine: Engine, position: Canon) -> float:
        """Positions the strategy would store to answer (0 for formulas; ``inf`` = too many)."""
        return 0.0

    def value(self, engine: Engine, position: Canon, budget: Budget) -> Evaluation:
        """The answer; raises :class:`BudgetExceeded` beyond the budget."""
        raise NotImplementedError

    def winning_moves(
        self, engine: Engine, position: Canon, limit: int | None, budget: Budget
    ) -> list[CanonMove] | None:
        """Winning moves straight from the theory (``None``: this strategy offers none): at
        most ``limit`` of :meth:`iter_winning_moves`; raises :class:`BudgetExceeded` when the
        budget runs out before they are found."""
        found = self.iter_winning_moves(engine, position, budget)
        if found is None:
            return None
        return list(found if limit is None else islice(found, max(0, limit)))

    def iter_winning_moves(
        self, engine: Engine, position: Canon, budget: Budget
    ) -> Iterator[CanonMove] | None:
        """The winning moves straight from the theory, lazily, each option tried charged to
        ``budget`` (the iteration raises :class:`BudgetExceeded` when it runs out); ``None``:
        this strategy offers none."""
        return None

    def count_winning_moves(
        self, engine: Engine, position: Canon, budget: Budget
    ) -> list[HeapWins] | None:
        """How many winning moves each distinct heap has, without listing them (see
        :func:`count_heap_wins`); ``None``: this strategy does not count them. Raises
        :class:`BudgetExceeded` beyond the budget."""
        return None


class Terminal(Strategy):
    name = "terminal"
    description = "an end position, or no legal move is left"

    def applies(self, engine: Engine, position: Canon, budget: Budget | None = None) -> bool:
        return is_terminal(engine.rule, position, engine.end_positions)

    def value(self, engine: Engine, position: Canon, budget: Budget) -> Evaluation:
        return Evaluation(Outcome.of(engine.misere), 0, self.name)

    def iter_winning_moves(
        self, engine: Engine, position: Canon, budget: Budget
    ) -> Iterator[CanonMove] | None:
        return iter(())


class NimFormula(Strategy):
    name = "nim-formula"
    formula = True
    description = "Bouton's theorem: nim-sum 0 (misère: with the endgame rule) is a P-position"

    def applies(self, engine: Engine, position: Canon, budget: Budget | None = None) -> bool:
        return engine.rule.is_nim and not engine.end_positions

    def value(self, engine: Engine, position: Canon, budget: Budget) -> Evaluation:
        from nimlab.theory.nim import misere_nim_outcome, nim_outcome

        outcome = (misere_nim_outcome if engine.misere else nim_outcome)(position)
        return Evaluation(outcome, None, self.name)

    def winning_moves(
        self, engine: Engine, position: Canon, limit: int | None, budget: Budget
    ) -> list[CanonMove] | None:
        from nimlab.theory.nim import misere_nim_winning_moves, nim_winning_moves

        finder = misere_nim_winning_moves if engine.misere else nim_winning_moves
        moves: list[CanonMove] = []
        seen: set[tuple[int, int]] = set()
        for i, after in finder(position, limit=None if limit is None else 4 * limit):
            heap = position[i]
            if (heap, after) not in seen:
                seen.add((heap, after))
                moves.append((heap, heap - after, (after,) if after else ()))
                if limit is not None and len(moves) >= limit:
                    break
        return moves

    def iter_winning_moves(
        self, engine: Engine, position: Canon, budget: Budget
    ) -> Iterator[CanonMove] | None:
        return iter(self.winning_moves(engine, position, None, budget) or ())


class GrundySum(Strategy):
    name = "grundy"
    formula = True
    description = "the Sprague–Grundy theorem: the XOR of the heaps' Grundy values is 0 at P"

    def applies(self, engine: Engine, position: Canon, budget: Budget | None = None) -> bool:
        if engine.misere or engine.end_positions or engine.rule.is_nim:
            return False
        return engine.grundy(position, budget) is not None

    def value(self, engine: Engine, position: Canon, budget: Budget) -> Evaluation:
        g = engine.grundy(position, budget)
        assert g is not None
        return Evaluation(Outcome.of(g != 0), None, self.name)

    def iter_winning_moves(
        self, engine: Engine, position: Canon, budget: Budget
    ) -> Iterator[CanonMove] | None:
        total = engine.grundy(position, budget)
        if total is None:
            return None
        return self._wins(engine, position, total, budget)

    def count_winning_moves(
        self, engine: Engine, position: Canon, budget: Budget
    ) -> list[HeapWins] | None:
        total = engine.grundy(position, budget)
        if total is None:
            return None
        if total == 0:
            return []
        from nimlab.theory.grundy import cached_grundy_period

        g = engine.heap_grundy
        period = cached_grundy_period(engine.rule)
        out = []
        for heap in sorted(set(position)):
            target = g(heap) ^ total
            if period is None:  # every option of that value, as the engine lists them
                single = pairs = 0
                for _take, parts in engine.options_of_value(heap, target, budget):
                    if len(parts) == 2 and parts[0] != parts[1]:
                        pairs += 1
                    else:
                        single += 1
                out.append((heap, single, pairs))
                continue

            def wins(parts: tuple[int, ...], target: int = target) -> bool:
                return reduce(xor, (g(p) for p in parts), 0) == target

            out.append((heap, *count_heap_wins(engine.rule, heap, wins, period, budget)))
        return out

    @staticmethod
    def _wins(engine: Engine, position: Canon, total: int, budget: Budget) -> Iterator[CanonMove]:
        """Every option of every distinct heap whose parts' values XOR to the heap's value
        XOR ``total``, in order; each option tried is charged to ``budget``."""
        if total == 0:
            return
        g = engine.heap_grundy
        for heap in sorted(set(position)):
            for take, parts in engine.options_of_value(heap, g(heap) ^ total, budget):
                yield heap, take, parts


class TameMisere(Strategy):
    name = "misere-tame"
    formula = True
    description = (
        "the game is tame: in misère play a position is a P-position when all heaps are 0 or 1 "
        "and their number is odd, or some heap is 2 or more and the XOR of the Grundy values is 0"
    )

    def applies(self, engine: Engine, position: Canon, budget: Budget | None = None) -> bool:
        return engine.misere and not engine.end_positions and engine.rule in TAME_RULES

    def value(self, engine: Engine, position: Canon, budget: Budget) -> Evaluation:
        from nimlab.theory.splitting import lasker_misere_outcome

        return Evaluation(lasker_misere_outcome(position), None, self.name)

    def iter_winning_moves(
        self, engine: Engine, position: Canon, budget: Budget
    ) -> Iterator[CanonMove] | None:
        return self._wins(engine, position, budget)

    @staticmethod
    def _wins(engine: Engine, position: Canon, budget: Budget) -> Iterator[CanonMove]:
        """The moves to a P-position of the tame rule, in order of the heaps: to XOR 0 while a
        heap of 2 or more stays, or to heaps of 0 and 1 only, an odd number of 1s. O(options of
        one value) per distinct heap."""
        g = engine.heap_grundy
        total = 0
        for heap, count in _counted(position):
            if count % 2:
                total ^= g(heap)
        big = sum(1 for h in position if h >= 2)
        ones = sum(1 for h in position if h == 1)
        if big == 0:
            if ones and ones % 2 == 0:
                yield 1, 1, ()
            return
        for heap in sorted(set(position)):
            others_big = big - (heap >= 2)
            for take, parts in engine.options_of_value(heap, g(heap) ^ total, budget):
                if others_big + sum(1 for p in parts if p >= 2):
                    yield heap, take, parts
            if others_big == 0:  # this heap is the only one of 2 or more
                others_ones = ones - (heap == 1)
                for parts in ((), (1,), (1, 1)):
                    take = heap - sum(parts)
                    if (others_ones + len(parts)) % 2 and _leaves(engine.rule, heap, take, parts):
                        yield heap, take, parts


def _leaves(rule: TakeAndBreak, heap: int, take: int, parts: tuple[int, ...]) -> bool:
    """Whether one move of ``rule`` takes ``take`` from a heap of ``heap`` and leaves
    ``parts`` (at most two heaps). O(1)."""
    if take < 0 or take > heap:
        return False
    d = rule.digit(take)
    if len(parts) == 2:
        return bool(d & 4) and not (rule.unequal and parts[0] == parts[1])
    return bool(d & (2 if parts else 1)) and (take > 0)


class MisereQuotientStrategy(Strategy):
    name = "misere-quotient"
    formula = True

    def __init__(self, min_cost: float = QUOTIENT_FROM) -> None:
        self.min_cost = min_cost

    description = "the game's misère quotient (Plambeck–Siegel): the product of heap images"

    def applies(self, engine: Engine, position: Canon, budget: Budget | None = None) -> bool:
        if not engine.misere or engine.end_positions or engine.rule.is_nim:
            return False
        if self.min_cost > 0 and engine.search_cost(position) <= self.min_cost:
            return False  # a search is cheap here, exact, and gives the remoteness too
        return engine.quotient(position, budget) is not None

    def value(self, engine: Engine, position: Canon, budget: Budget) -> Evaluation:
        q = engine.quotient(position, budget)
        assert q is not None
        return Evaluation(q.outcome(position), None, self.name)

    def iter_winning_moves(
        self, engine: Engine, position: Canon, budget: Budget
    ) -> Iterator[CanonMove] | None:
        q = engine.quotient(position, budget)
        if q is None:
            return None
        from nimlab.theory.quotient import iter_quotient_winning_moves

        return iter_quotient_winning_moves(q, position, budget)

    def count_winning_moves(
        self, engine: Engine, position: Canon, budget: Budget
    ) -> list[HeapWins] | None:
        q = engine.quotient(position, budget)
        if q is None:
            return None
        period = None
        if q.proven and q.period is not None and q.preperiod is not None:
            period = (q.preperiod, q.period)
        table = q.table
        out = []
        for heap in sorted(set(position)):
            rest = list(position)
            rest.remove(heap)
            others = q.element_of(rest)

            def wins(parts: tuple[int, ...], x: int = others) -> bool:
                for part in parts:
                    x = table[x][q.image(part)]
                return q.is_p(x)

            out.append((heap, *count_heap_wins(engine.rule, heap, wins, period, budget)))
        return out


class _Compiled(Strategy):
    """A search by a compiled kernel: below ``min_cost`` positions the pure-Python search is
    quicker than loading the kernel, so the strategy steps aside."""

    def __init__(self, min_cost: float = 3000) -> None:
        self.min_cost = min_cost


class DenseTable(_Compiled):
    name = "dense-table"
    description = "the retrograde table of every position up to the query's heaps"

    def applies(self, engine: Engine, position: Canon, budget: Budget | None = None) -> bool:
        if engine.rule.splits:
            return False
        return (
            self.min_cost <= 0
            or engine.dense_covers(position)  # a lookup in the table built already
            or engine.dense_cost(position) >= self.min_cost
        )

    def cost(self, engine: Engine, position: Canon) -> float:
        return 1.0 if engine.dense_covers(position) else engine.dense_cost(position)

    def value(self, engine: Engine, position: Canon, budget: Budget) -> Evaluation:
        v = engine.dense_value(position, budget)
        return Evaluation(v.outcome, v.remoteness, self.name)


class SplitSearch(_Compiled):
    name = "split-search"
    description = "the compiled exact search over every reachable position"

    def applies(self, engine: Engine, position: Canon, budget: Budget | None = None) -> bool:
        if self.min_cost > 0:
            few = few_positions(position)
            if few is not None and few / 4 < self.min_cost:
                return False  # (the estimate is at most this bound: no solver made for it)
        if engine.split_solver() is None:
            return False
        return self.min_cost <= 0 or self.cost(engine, position) >= self.min_cost

    def cost(self, engine: Engine, position: Canon) -> float:
        solver = engine.split_solver()
        if solver is None:
            return math.inf
        try:
            # the estimate is a true upper bound, typically four to six times the real count
            return float(solver.estimate(position)) / 4
        except (ValueError, OverflowError):
            return math.inf

    def value(self, engine: Engine, position: Canon, budget: Budget) -> Evaluation:
        solver = engine.split_solver()
        assert solver is not None
        try:
            with engine.lock:  # the compiled search is not thread safe
                v = solver.value(position, budget)
        except ValueError:
            raise BudgetExceeded(None, "positions") from None
        return Evaluation(v.outcome, v.remoteness, self.name)


class Search(Strategy):
    name = "search"
    description = "the exact memoised search over every reachable position"

    def applies(self, engine: Engine, position: Canon, budget: Budget | None = None) -> bool:
        return True

    def cost(self, engine: Engine, position: Canon) -> float:
        return engine.search_cost(position)

    def value(self, engine: Engine, position: Canon, budget: Budget) -> Evaluation:
        v = engine.search_value(position, budget)
        return Evaluation(v.outcome, v.remoteness, self.name)


_STEPS = {
    GrundySum.name: "the Grundy values",
    MisereQuotientStrategy.name: "the misère quotient",
    DenseTable.name: "the retrograde table",
    SplitSearch.name: "the exact search",
    Search.name: "the exact search",
}
"""The step each strategy is, in the words of a "not proven" answer."""

STRATEGIES: tuple[Strategy, ...] = (
    Terminal(),
    NimFormula(),
    GrundySum(),
    TameMisere(),
    MisereQuotientStrategy(),
    DenseTable(min_cost=20_000),
    SplitSearch(),
    Search(),
)
"""Every strategy, in the order the engine asks them."""

TAME_RULES: frozenset[TakeAndBreak] = frozenset({LASKERS_NIM})
"""Games other than Nim proven *tame* (:class:`TameMisere`): Lasker's Nim
(:func:`~nimlab.theory.splitting.lasker_misere_outcome` has the proof)."""


# -- the engine --------------------------------------------------------------------------------


class Engine:
    """Answers for one two-player ruleset (move rule, misère or normal play, extra end
    positions). Its tables and caches persist across questions and are bounded; each question
    has its own :class:`Budget`, so one question that ran out never spoils the next.
    Thread safe: one lock per engine serialises the searches that write its tables. The
    compiled kernels release Python's global interpreter lock while they run (other threads,
    such as a server's event loop, go on meanwhile); every kernel that writes a table kept
    across questions runs under this lock (or the paranoid solver's own), the others only
    write arrays of their own call.
    """

    def __init__(
        self,
        rule: TakeAndBreak,
        *,
        misere: bool = False,
        end_positions: frozenset[Canon] = frozenset(),
        strategies: tuple[Strategy, ...] = STRATEGIES,
    ) -> None:
        self.rule = rule
        self.misere = misere
        self.end_positions = frozenset(e for e in end_positions if e)
        self.strategies = strategies
        self.lock = threading.RLock()
        """Serialises the searches (their tables are shared)."""
        self._sparse = ExactSolver(rule, misere=misere, end_positions=self.end_positions)
        self._dense: DenseSolver | None = None
        """The dense table, once one is built (published only then: read without the lock)."""
        self._split: SplitSolverLike | None = None
        self._split_checked = False
        self._answers: dict[tuple[Canon, bool], Evaluation] = {}
        self._paranoid: OrderedDict[Canon, ParanoidSolver] = OrderedDict()
        self._plain_grundy: list[int] | None = None

    # -- helpers the strategies share ---------------------------------------------------------

    @property
    def has_formula(self) -> bool:
        """Whether outcomes of typical positions come from a formula (no search)."""
        if self.end_positions:
            return False
        return (
            not self.misere
            or self.rule.is_nim
            or self.rule.max_take is not None
            or self.rule in TAME_RULES
        )

    def heap_grundy(self, heap: int, budget: Budget | None = None) -> int:
        """The Grundy value of one heap (raises :class:`ValueError` when out of reach). Values
        not computed yet are computed within ``budget`` when one is given
        (:class:`BudgetExceeded` when it runs out; the next question goes on from there)."""
        if self.rule.is_nim:
            return heap
        if self.rule == LASKERS_NIM:
            return lasker_grundy(heap)
        if heap < _PLAIN_GRUNDY:  # the plain mex: quicker than loading the compiled kernels
            if self._plain_grundy is None:
                self._plain_grundy = self.rule.plain_grundy_values(_PLAIN_GRUNDY)
            return self._plain_grundy[heap]
        kernels.ensure("grundy")  # outside the budget
        from nimlab.theory.grundy import grundy_value

        return grundy_value(self.rule, heap, budget)

    def grundy(self, position: Canon, budget: Budget | None = None) -> int | None:
        """The Grundy value of the position, or ``None`` where it is not defined (misère play,
        extra end positions) or out of reach (a heap too large with no proven period, or the
        heaps' values not computed within ``budget``, the question's, default
        :func:`interactive_budget`: that is then remembered for the question, see
        :attr:`Budget.failed`). O(distinct heaps) once the heaps' values are known."""
        if self.misere or self.end_positions:
            return None
        if self.rule.is_nim:
            from nimlab.theory.nim import nim_sum

            return nim_sum(position)
        if budget is None:
            budget = interactive_budget()
        failed_key = ("grundy", self.rule)
        try:
            total = 0
            for heap, count in _counted(position):
                if count % 2:
                    if failed_key in budget.failed:  # ran out once: only cached values answer
                        from nimlab.theory.grundy import cached_grundy_value

                        value = cached_grundy_value(self.rule, heap)
                        if value is None:
                            return None
                        total ^= value
                    else:
                        total ^= self.heap_grundy(heap, budget)
            return total
        except BudgetExceeded as e:
            budget.failed[failed_key] = e.reason
            return None
        except (ValueError, OverflowError):
            return None

    def quotient(self, position: Canon, budget: Budget | None = None) -> MisereQuotient | None:
        """The misère quotient that covers every heap of ``position``, or ``None``.

        The quotient is computed up to a heap bound: the next power of two at or above the
        largest heap (at least 16), or :data:`QUOTIENT_HEAP_LIMIT` for larger heaps (then only
        a proven quotient, periodic, answers); it stops early once proven, and a proven quotient
        covers every heap size. The attempt has :data:`QUOTIENT_SHARE` of the time left of
        ``budget`` (the question's; default :func:`interactive_budget`). One that runs out is
        not tried again within the same question (``budget.failed``: what it verified answers
        there, every time it is asked), but the next question tries again, going on from what
        was verified (and what was verified answers when it covers the heaps), unless the last
        attempt verified no further heap (then only a question with at least twice that
        attempt's time tries, or any once a minute has passed: see :data:`_QUOTIENT_STALLED`).
        A bound at which the quotient provably cannot be built (too large, or infinite) is
        remembered for the process. For rules no period can prove (splits into unequal heaps:
        Grundy's game) the bound is the largest heap itself (at least 16): their quotient of the
        heaps up to it answers, nothing larger is worth building."""
        if self.rule.max_take is None or not position:
            return None
        if budget is None:
            budget = interactive_budget()
        from nimlab.theory.quotient import (
            QuotientError,
            cached_quotient,
            periodicity_applies,
            quotient_for,
            quotient_progress,
            verified_heaps,
        )

        top = position[-1]
        if not periodicity_applies(self.rule):
            bound = max(16, top)
        elif top <= QUOTIENT_HEAP_LIMIT:
            bound = max(16, 1 << (top - 1).bit_length())
        else:
            bound = top
        bound = min(bound, QUOTIENT_HEAP_LIMIT)
        impossible = _QUOTIENT_IMPOSSIBLE.get(self.rule)
        if impossible is not None and bound >= impossible:
            return None
        failed_key = ("quotient", self.rule)
        ran_out = budget.failed.get(failed_key)
        q: MisereQuotient | None
        share = budget.share(QUOTIENT_SHARE)
        verified = verified_heaps(self.rule)
        if self._quotient_stalled(verified, share) and cached_quotient(self.rule, bound) is None:
            ran_out = budget.failed[failed_key] = bound  # not twice the last attempt's time
        if isinstance(ran_out, int) and bound >= ran_out:
            # this question's attempt ran out: it answers (and is asked again by the strategy's
            # applies, value and winning moves) with what that attempt verified
            q = quotient_progress(self.rule)
        else:
            try:
                q = quotient_for(self.rule, bound, budget=share)
                _QUOTIENT_STALLED.pop(self.rule, None)
            except QuotientError:
                _QUOTIENT_IMPOSSIBLE[self.rule] = min(bound, impossible or bound)
                return None
            except BudgetExceeded as e:
                budget.failed[failed_key] = bound
                if e.reason == "time":
                    self._quotient_ran_out(verified, verified_heaps(self.rule), share)
                q = quotient_progress(self.rule)  # what the attempt verified stays
        return q if q is not None and (q.proven or top <= q.heap_bound) else None

    def _quotient_stalled(self, verified: int, share: Budget) -> bool:
        """Whether the last attempt at this game's quotient, less than
        :data:`QUOTIENT_RETRY_AFTER` seconds ago, verified no heap beyond ``verified`` with at
        least half the time ``share`` has (see :data:`_QUOTIENT_STALLED`). O(1)."""
        stalled = _QUOTIENT_STALLED.get(self.rule)
        return (
            stalled is not None
            and stalled[0] == verified
            and share.seconds is not None
            and share.seconds <= 2 * stalled[1]
            and time.monotonic() < stalled[2] + QUOTIENT_RETRY_AFTER
        )

    def _quotient_ran_out(self, before: int, after: int, share: Budget) -> None:
        """Remember an attempt given ``share`` that ran out of time having verified the heaps
        up to ``after`` (``before`` when it began): stalled when it got no further, else
        forgotten. O(1)."""
        if share.seconds is None:
            return
        if after > before:
            _QUOTIENT_STALLED.pop(self.rule, None)
            return
        stalled = _QUOTIENT_STALLED.get(self.rule)
        most = max(share.seconds, stalled[1] if stalled else 0.0)
        _QUOTIENT_STALLED[self.rule] = (before, most, time.monotonic())

    def options_of_value(
        self, heap: int, value: int, budget: Budget
    ) -> Iterable[tuple[int, tuple[int, ...]]]:
        """The options of one heap (as :meth:`heap_options` gives them) whose Grundy value is
        ``value``. Lasker's Nim: every such option of any heap at once
        (:func:`~nimlab.theory.splitting.lasker_options_of_value`, O(heap) with NumPy)."""
        if self.rule == LASKERS_NIM:
            budget.check()
            if not budget.allows(heap):
                raise BudgetExceeded(budget.positions, "positions")
            return lasker_options_of_value(heap, value)
        g = self.heap_grundy
        return (
            (take, parts)
            for take, parts in self.heap_options(heap, budget)
            if reduce(xor, (g(p) for p in parts), 0) == value
        )

    def heap_options(self, heap: int, budget: Budget) -> Iterator[tuple[int, tuple[int, ...]]]:
        """Every option of one heap as ``(take, parts)``, in
        :meth:`~nimlab.theory.octal.TakeAndBreak.options_listed` order (huge heaps: the moves
        near a row's ends first), lazily: each is charged to ``budget`` before it is handed
        out (a heap of 10^9 objects has about 10^9 options; the iteration stops with
        :class:`BudgetExceeded` when the budget is spent). O(1) per option."""
        return metered(self.rule.options_listed(heap), budget)

    def dense_cost(self, position: Canon) -> float:
        """Positions of the dense table that covers ``position`` (``inf`` when far too many).
        O(1) for huge inputs: a log-size bound is checked before any exact count."""
        if not position:
            return 1.0
        k, m = len(position), position[-1]
        if k > 64 or m > DENSE_LIMIT:
            return math.inf
        log_size = math.lgamma(m + k + 1) - math.lgamma(m + 1) - math.lgamma(k + 1)
        if log_size > math.log(DENSE_LIMIT * 4):
            return math.inf
        return float(math.comb(m + k, k))

    def dense_value(self, position: Canon, budget: Budget) -> Value:
        """Outcome and remoteness from the dense table (built on demand, at most
        :data:`DENSE_LIMIT` positions; a larger table replaces a smaller one). O(piles) when
        the table built already holds ``position``."""
        dense = self._dense  # a table is published only once built: read it without waiting
        if dense is not None and dense.covers(position):
            return dense.value(position)
        kernels.load("retrograde")  # imported outside the budget (the build prepares kernels)
        from nimlab.theory.retrograde import DenseSolver

        with self.lock:
            dense = self._dense
            if dense is not None and dense.covers(position):
                return dense.value(position)
            size = self.dense_cost(position)
            if size > DENSE_LIMIT or not budget.allows(int(size)):
                raise BudgetExceeded(budget.positions, "positions")
            budget.check()
            max_heap, max_piles = position[-1], len(position)
            if dense is not None:
                piles = max(max_piles, dense.max_piles)
                grown = self.dense_cost((*([1] * (piles - 1)), max(max_heap, dense.max_heap)))
                if grown <= DENSE_LIMIT:
                    max_heap = max(max_heap, dense.max_heap)
                    max_piles = max(max_piles, dense.max_piles)
            try:
                dense = DenseSolver(
                    self.rule,
                    misere=self.misere,
                    end_positions=self.end_positions,
                    max_heap=max_heap,
                    max_piles=max_piles,
                )
            except ValueError:
                raise BudgetExceeded(budget.nbytes, "memory") from None
            budget.check_bytes(dense.build_bytes)
            dense.build()
            self._dense = dense
            return dense.value(position)

    def dense_covers(self, position: Canon) -> bool:
        """Whether the dense table built already holds ``position`` (its value is then a
        lookup, with no wait for a larger table being built). O(piles)."""
        dense = self._dense
        return dense is not None and dense.covers(position)

    def split_solver(self) -> SplitSolverLike | None:
        """The compiled search for this ruleset (``None`` where it is not available). Made
        once, under the lock: another thread never sees it missing while it is being made."""
        if not self._split_checked:
            with self.lock:
                if not self._split_checked:
                    module = _optional("nimlab.theory.splitsearch")
                    if module is not None:
                        self._split = module.SplitSolver(
                            self.rule, misere=self.misere, end_positions=self.end_positions
                        )
                    self._split_checked = True
        return self._split

    def known_cost(self, position: Canon) -> float | None:
        """:meth:`search_cost` when it is known without building the compiled search or
        waiting for another thread's (a progress display asks it while a search runs),
        else ``None``."""
        if self.rule.splits and not self._split_checked and few_positions(position) is None:
            return None
        return self.search_cost(position)

    def search_cost(self, position: Canon) -> float:
        """A rough count of the positions an exact search of ``position`` stores: the dense
        table's size for games that never split a heap, else a quarter of the positions its
        total can be split into when they are few (:data:`FEW_POSITIONS`), else the compiled
        search's estimate (or a partition-count bound)."""
        if not self.rule.splits:
            return self.dense_cost(position)
        few = few_positions(position)
        if few is not None:
            return few / 4
        solver = self.split_solver()
        if solver is not None:
            try:
                return float(solver.estimate(position)) / 4
            except (ValueError, OverflowError):
                return math.inf
        total = sum(position)
        if total > 400:
            return math.inf
        # every partition of every total up to this one: sum_k p(k) <= total * p(total)
        return total * math.exp(math.pi * math.sqrt(2 * total / 3)) / (4 * total * math.sqrt(3) + 1)

    def search_value(self, position: Canon, budget: Budget) -> Value:
        solver = self._sparse
        if position in solver:  # solved: read without waiting for a search in another thread
            return solver.value(position)
        with self.lock:
            if len(self._sparse) > SEARCH_LIMIT:
                self._sparse = ExactSolver(
                    self.rule, misere=self.misere, end_positions=self.end_positions
                )
            return self._sparse.value(position, budget)

    def settled(self, position: Canon) -> bool:
        """Whether every question about ``position`` and the positions below it (values,
        remoteness, winning moves) is answered from memory, with no search and no wait for
        another thread's search: the strategy that answers it is the dense table and the table
        built already holds it, or the exact search and it has solved it already. O(piles)."""
        for strategy in self.strategies:
            if strategy.formula or strategy.name == "terminal":
                continue
            if strategy.applies(self, position):
                if strategy.name == DenseTable.name:
                    return self.dense_covers(position)
                return strategy.name == Search.name and position in self._sparse
        return False

    # -- questions ----------------------------------------------------------------------------

    def evaluate(
        self, position: Canon, *, remoteness: bool = True, budget: Budget | None = None
    ) -> Evaluation:
        """Everything known about a canonical position: the first formula that applies gives
        the outcome; with ``remoteness`` (or without a formula) the first search that fits the
        budget gives outcome and remoteness. Never raises for budget reasons: beyond the budget
        the answer is not proven (or has no remoteness). Proven answers are remembered
        (unless a step ran out: a later question may complete them)."""
        key = (position, remoteness)
        answer = self._answers.get(key)
        if answer is not None:
            return answer
        if budget is None:
            budget = interactive_budget()
        answer = self._evaluate(position, remoteness, budget)
        if answer.proven and answer.shortfall is None:  # what ran out is tried again next time
            if len(self._answers) >= _ANSWERS:
                self._answers.clear()
            self._answers[key] = answer
        return answer

    def _evaluate(self, position: Canon, remoteness: bool, budget: Budget) -> Evaluation:
        known: Evaluation | None = None
        shortfall: Shortfall | None = None
        for strategy in self.strategies:
            if strategy.formula:
                if known is None and strategy.applies(self, position, budget):
                    known = strategy.value(self, position, budget)
                    if not remoteness:
                        return known
                continue
            if not strategy.applies(self, position, budget):
                continue
            cost = strategy.cost(self, position)
            limit = _REMOTENESS_COST if known is not None else math.inf
            if cost > limit:
                continue
            if not budget.allows(int(min(cost, 1e18))):
                shortfall = shortfall or Shortfall(
                    _STEPS.get(strategy.name, "the exact search"), "positions"
                )
                continue
            try:
                found = strategy.value(self, position, budget)
            except BudgetExceeded as e:
                shortfall = Shortfall(_STEPS.get(strategy.name, "the exact search"), e.reason)
                break
            if known is not None:
                return Evaluation(known.outcome, found.remoteness, known.method)
            return found
        quotient_ran_out = ("quotient", self.rule) in budget.failed
        if known is None and quotient_ran_out and not (shortfall and shortfall.more_time_helps):
            # the quotient would have answered with more time: that is what to say
            shortfall = Shortfall(_STEPS[MisereQuotientStrategy.name], "time")
        grundy_ran_out = budget.failed.get(("grundy", self.rule))
        more_time = shortfall is not None and shortfall.more_time_helps
        if known is None and isinstance(grundy_ran_out, str) and not more_time:
            shortfall = Shortfall(_STEPS[GrundySum.name], grundy_ran_out)  # (as for the quotient)
        if known is not None:
            return known if shortfall is None else replace(known, shortfall=shortfall)
        return NOT_PROVEN if shortfall is None else replace(NOT_PROVEN, shortfall=shortfall)

    def remoteness_within_reach(self, position: Canon) -> bool:
        """Whether some search could find the remoteness of ``position`` (and so of every
        position below it) at a cost a formula's answer may add. O(1) for huge positions."""
        return any(
            not s.formula
            and s.name != "terminal"
            and s.applies(self, position)
            and s.cost(self, position) <= _REMOTENESS_COST
            for s in self.strategies
        )

    def outcome(self, position: Canon, budget: Budget | None = None) -> Outcome | None:
        """The outcome, or ``None`` if it could not be proven within the budget."""
        return self.evaluate(position, remoteness=False, budget=budget).outcome

    def formula_strategy(self, position: Canon, budget: Budget | None = None) -> Strategy | None:
        """The first formula (or the terminal rule) that answers ``position`` (within
        ``budget``, for a formula that computes its tables), if any."""
        for strategy in self.strategies:
            if (strategy.formula or strategy.name == "terminal") and strategy.applies(
                self, position, budget
            ):
                return strategy
        return None

    def winning_moves(
        self, position: Canon, *, limit: int | None = None, budget: Budget | None = None
    ) -> list[CanonMove] | None:
        """Winning moves from ``position`` as canonical moves (at most ``limit``), from a
        formula when one applies (O(n) for Nim whatever the heap sizes), else by evaluating
        every child; see :meth:`winning_moves_found`. When the budget runs out after some were
        found, those (each proven) are the answer; ``None`` when none could be proven within
        the budget."""
        found = self.winning_moves_found(position, limit=limit, budget=budget)
        if found is None:
            return None
        moves, complete = found
        return moves if complete or moves else None

    def winning_moves_found(
        self, position: Canon, *, limit: int | None = None, budget: Budget | None = None
    ) -> tuple[list[CanonMove], bool] | None:
        """The winning moves from ``position`` found within ``budget`` (at most ``limit``),
        and whether they are all of them (``False``: ``limit`` were found and there may be
        more, or the budget ran out first; each move listed is proven). A formula names them
        lazily, every option it tries charged to the budget (a heap of 10^9 objects costs what
        the budget allows); without one every child is evaluated, one unit of work each.
        ``None`` when the outcome of some child could not be proven."""
        if budget is None:
            budget = interactive_budget()
        strategy = self.formula_strategy(position, budget)
        found = None if strategy is None else strategy.iter_winning_moves(self, position, budget)
        if found is None:
            values = self.child_values(position, budget=budget)
            if values is None:
                return None
            found = iter([m for m, ev in values if ev.outcome is Outcome.P])
        moves: list[CanonMove] = []
        if limit is not None and limit <= 0:
            return moves, False
        try:
            for move in found:
                moves.append(move)
                if limit is not None and len(moves) >= limit:
                    return moves, False
        except (BudgetExceeded, ValueError, OverflowError):
            return moves, False
        return moves, True

    def count_winning_moves(
        self, position: Canon, *, budget: Budget | None = None
    ) -> list[HeapWins] | None:
        """How many winning moves each distinct heap of ``position`` has, from the formula that
        answers it, without listing them: O(takes * (preperiod + period)) per huge heap with a
        proven period, every option tried (charged to ``budget``) otherwise. ``None`` when no
        formula counts them or the budget ran out."""
        if budget is None:
            budget = interactive_budget()
        strategy = self.formula_strategy(position, budget)
        if strategy is None:
            return None
        try:
            return strategy.count_winning_moves(self, position, budget)
        except (BudgetExceeded, ValueError, OverflowError):
            return None

    def child_values(
        self, position: Canon, *, remoteness: bool = True, budget: Budget | None = None
    ) -> list[tuple[CanonMove, Evaluation]] | None:
        """Every distinct move of ``position`` with the value of the position it leaves, or
        ``None`` when some child could not be proven within the budget. Each child is one unit
        of work charged to the budget before it is valued (a heap of 10^9 objects has about
        10^9 children: the budget runs out, and the answer is ``None``). Cost: the children's
        evaluations (each remembered)."""
        if budget is None:
            budget = interactive_budget()
        out = []
        try:
            for move, child in metered(canonical_moves(self.rule, position), budget):
                ev = self.evaluate(child, remoteness=remoteness, budget=budget)
                if ev.outcome is None:
                    return None
                out.append((move, ev))
        except BudgetExceeded:
            return None
        return out

    # -- more than two players ----------------------------------------------------------------

    def paranoid(self, start: Canon) -> ParanoidSolver:
        """The paranoid-model solver for games that start (every round) at ``start``; at most
        :data:`PARANOID_SOLVERS` are kept per engine, each bounded by :data:`PARANOID_STATES`
        searched states and :data:`PARANOID_TABLE_BYTES` of compiled tables."""
        from nimlab.theory.paranoid import ParanoidSolver

        with self.lock:
            solver = self._paranoid.get(start)
            if solver is None:
                solver = ParanoidSolver(
                    self.rule,
                    start,
                    misere=self.misere,
                    end_positions=self.end_positions,
                    budget=PARANOID_STATES,
                    max_table_bytes=PARANOID_TABLE_BYTES,
                )
                self._paranoid[start] = solver
                while len(self._paranoid) > PARANOID_SOLVERS:
                    self._paranoid.popitem(last=False)
            else:
                self._paranoid.move_to_end(start)
            return solver


def apply_move(position: Canon, move: CanonMove) -> Canon:
    """The canonical position a canonical move leaves: one heap replaced by its parts. O(n)
    (no sorting)."""
    from bisect import bisect_left, insort

    heap, _take, parts = move
    rest = list(position)
    del rest[bisect_left(rest, heap)]
    for part in parts:
        insort(rest, part)
    return tuple(rest)


def canonical_moves(rule: TakeAndBreak, position: Canon) -> Iterator[tuple[CanonMove, Canon]]:
    """Every distinct move of a canonical position with the canonical position it leaves.
    O(sum of the distinct heaps' options)."""
    from bisect import insort

    previous = -1
    for i, heap in enumerate(position):
        if heap == previous:
            continue
        previous = heap
        rest = list(position[:i] + position[i + 1 :])
        for take, parts in rule.options(heap):
            child = rest.copy()
            for part in parts:
                insort(child, part)
            yield (heap, take, parts), tuple(child)


def count_heap_wins(
    rule: TakeAndBreak,
    heap: int,
    wins: Callable[[tuple[int, ...]], bool],
    period: tuple[int, int] | None,
    budget: Budget,
) -> tuple[int, int]:
    """How many options ``(take, parts)`` of one heap of ``heap`` objects have ``wins(parts)``:
    ``(those that leave at most one heap or two equal heaps, those that leave two unequal
    heaps)``. ``wins`` must depend only on each part's value, and ``period = (n0, p)`` says
    that the values repeat with period ``p`` from ``n0`` on. When a heap is so large that every
    split's larger part is at least ``n0``, the splits of one take whose smaller parts are
    congruent modulo ``p`` (and at least ``n0``) leave the same values: one of each class is
    tried and the class counted, O(takes * (n0 + p)) for a heap of any size. Otherwise every
    option is tried, each charged to ``budget`` (:class:`BudgetExceeded` when it runs out)."""
    single = pairs = 0
    if (
        period is None
        or rule.max_take is None
        or heap - rule.max_take < 2 * (period[0] + period[1]) + 2
    ):
        for _take, parts in metered(rule.options(heap), budget):
            if wins(parts):
                if len(parts) == 2 and parts[0] != parts[1]:
                    pairs += 1
                else:
                    single += 1
        return single, pairs
    n0, p = period
    low = max(n0, 1)  # the smaller parts from here on are counted by class
    for k in rule.takes(heap):
        d = rule.digit(k)
        rest = heap - k
        if rest == 0:
            single += wins(())
            continue
        if d & 2:
            single += wins((rest,))
        if not d & 4:
            continue
        budget.charge(low + p)
        top = (rest - rule.unequal) // 2  # rest >= 2 * low: every larger part is >= n0
        for a in range(1, low):
            pairs += wins((a, rest - a))  # a < n0 <= rest - a: unequal
        half = rest // 2 if rest % 2 == 0 and not rule.unequal else None
        for r in range(p):
            a = low + r
            if a > top:
                break
            if not wins((a, rest - a)):
                continue
            members = (top - a) // p + 1
            if half is not None and (half - a) % p == 0:
                single += 1  # the split into two equal heaps is one of them
                members -= 1
            pairs += members
    return single, pairs


def _counted(position: Canon) -> Iterable[tuple[int, int]]:
    """``(heap, how many times)`` for a canonical (sorted) position."""
    count = 0
    previous: int | None = None
    for heap in position:
        if heap == previous:
            count += 1
            continue
        if previous is not None:
            yield previous, count
        previous, count = heap, 1
    if previous is not None:
        yield previous, count


# -- one engine per ruleset, bounded -----------------------------------------------------------

EngineKey = tuple[TakeAndBreak, bool, frozenset[Canon], frozenset[str] | None]
"""What an engine is kept under: the rule, misère play, the extra end positions (none empty)
and the strategy families allowed (see :func:`engine_key`)."""

_ENGINES: OrderedDict[EngineKey, Engine] = OrderedDict()
_ENGINES_LOCK = threading.Lock()
MAX_ENGINES = 8
"""Engines kept at once (each may hold a dense table of up to :data:`DENSE_LIMIT` positions);
the least recently used one is dropped first."""


def engine_key(
    rule: TakeAndBreak,
    *,
    misere: bool = False,
    end_positions: frozenset[Canon] = frozenset(),
    allowed: frozenset[str] | None = None,
) -> EngineKey:
    """The key :func:`engine_for` keeps the engine of these arguments under (a caller that asks
    often may keep the key and ask :func:`engine_of`)."""
    return (rule, misere, frozenset(e for e in end_positions if e), allowed)


def engine_for(
    rule: TakeAndBreak,
    *,
    misere: bool = False,
    end_positions: frozenset[Canon] = frozenset(),
    allowed: frozenset[str] | None = None,
) -> Engine:
    """The shared engine for a ruleset (its tables persist across games; at most
    :data:`MAX_ENGINES` are kept). ``allowed`` names the strategy families that may answer
    (a game registry's entry lists them); the terminal rule always applies."""
    return engine_of(engine_key(rule, misere=misere, end_positions=end_positions, allowed=allowed))


def engine_of(key: EngineKey) -> Engine:
    """:func:`engine_for` of the arguments :func:`engine_key` made ``key`` of. O(1)."""
    with _ENGINES_LOCK:
        engine = _ENGINES.get(key)
        if engine is None:
            rule, misere, ends, allowed = key
            strategies = tuple(
                s
                for s in STRATEGIES
                if allowed is None or s.name == "terminal" or s.name in allowed
            )
            engine = _ENGINES[key] = Engine(
                rule, misere=misere, end_positions=ends, strategies=strategies
            )
            while len(_ENGINES) > MAX_ENGINES:
                _ENGINES.popitem(last=False)
        else:
            _ENGINES.move_to_end(key)
        return engine


Evaluator = Engine
"""The former name of :class:`Engine`."""
