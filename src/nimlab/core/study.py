"""Grundy values and misère quotients of a game, for people working in Python or a notebook.

:func:`grundy`, :func:`grundy_table` and :func:`quotient` take a game as
:class:`~nimlab.core.game.Game` takes its rules (text such as ``"kayles"`` or ``"0.77"``, or a
:class:`~nimlab.core.ruleset.Ruleset`) and answer with plain Python values (``int``,
``tuple``), never NumPy scalars. A period is reported only with the argument that proves it; a
repetition seen in the computed values but not proven is reported apart, as a guess
(:attr:`GrundyValues.guessed_period`).

:func:`grundy` is the sequence of one heap (games whose positions are sums of heaps);
:func:`grundy_table` the table of pairs of Wythoff's game, whose positions are pairs of piles
(``nimlab grundy wythoff`` prints either, by the game). They are two functions because they
answer with two kinds of thing: a sequence with its period, a table without one.

The results render in Jupyter (:mod:`nimlab.core.render`): a Grundy sequence as a small plot,
a table of pairs and a quotient as tables.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, overload

from nimlab.core.arguments import check_count, check_seconds, shown
from nimlab.core.errors import PositionError, RulesetError
from nimlab.core.rules import WythoffRules
from nimlab.core.ruleset import Ruleset, as_ruleset

if TYPE_CHECKING:
    from nimlab.core.games import GameKind
    from nimlab.theory.grundy import ArithmeticPeriod
    from nimlab.theory.quotient import MisereQuotient

__all__ = [
    "DEFAULT_TABLE",
    "DEFAULT_VALUES",
    "GRUNDY_SECONDS",
    "MAX_QUOTIENT_HEAP",
    "MAX_TABLE",
    "MAX_VALUES",
    "QUOTIENT_SECONDS",
    "GrundyTable",
    "GrundyValues",
    "Quotient",
    "grundy",
    "grundy_table",
    "has_grundy_table",
    "quotient",
]

DEFAULT_VALUES = 1000
"""How many values :func:`grundy` computes unless told (with ``prove=True``: the most)."""
GRUNDY_SECONDS = 60.0
"""The longest :func:`grundy` computes unless told: then it returns the values so far."""
QUOTIENT_SECONDS = 60.0
"""The longest :func:`quotient` computes unless told."""
MAX_VALUES = 10_000_000
"""The most values :func:`grundy` computes (about 80 MB as a tuple of ints; ``nimlab grundy``
at the command line goes further)."""
MAX_QUOTIENT_HEAP = 1000
"""The largest heap bound :func:`quotient` accepts."""
DEFAULT_TABLE = 15
"""Piles ``0 .. DEFAULT_TABLE - 1`` in a table of pairs unless told (it fits a terminal)."""
MAX_TABLE = 2000
"""The most piles a table of pairs covers (``0 .. MAX_TABLE - 1``): its ``MAX_TABLE²`` values
take about 4 s on one core (half of them are computed, the rest by symmetry), 16 MB while
computed and about 200 MB as Python ints (``nimlab grundy wythoff --max 2000 --json``: 5 s,
290 MB at its peak)."""


@dataclass(frozen=True)
class GrundyValues:
    """The Grundy values ``G(0) .. G(len(values) - 1)`` of one heap of a game.

    ``period`` and ``preperiod`` are set only when the period is **proven** (then
    ``G(n + period) = G(n)`` for every ``n >= preperiod``, forever) and ``proof`` says by which
    argument and what was checked. When the values repeat but no theorem proves it,
    ``period``/``preperiod``/``proof`` are ``None`` and ``guessed_period``/``guessed_preperiod``
    hold the repetition seen: a guess, not a claim. ``stopped`` is ``"time"`` when the time
    budget ran out before the goal (the values so far are kept). ``arithmetic`` is the
    arithmetic period of values that grow (``G(n + p) = G(n) + s``: Nim, Lasker's Nim), with
    its proof when a theorem gives one (:class:`~nimlab.theory.grundy.ArithmeticPeriod`).
    """

    title: str
    """The game's name, e.g. ``"Kayles (octal 0.77)"``."""
    code: str
    """The game's octal code, e.g. ``"0.77"``."""
    values: tuple[int, ...]
    period: int | None
    preperiod: int | None
    proof: str | None
    """How the period is proven, in a sentence (``None`` when it is not)."""
    guessed_period: int | None = None
    guessed_preperiod: int | None = None
    stopped: str | None = None
    arithmetic: ArithmeticPeriod | None = None

    @property
    def proven(self) -> bool:
        """Whether the period is proven (for every heap size)."""
        return self.period is not None

    def __len__(self) -> int:
        return len(self.values)

    @overload
    def __getitem__(self, n: int) -> int: ...
    @overload
    def __getitem__(self, n: slice) -> tuple[int, ...]: ...
    def __getitem__(self, n: int | slice) -> int | tuple[int, ...]:
        """``G(n)``: a computed value, or one given by the proven period. O(1). A slice gives
        computed values only (``g[:12]``)."""
        if isinstance(n, slice):
            return self.values[n]
        if not isinstance(n, int) or isinstance(n, bool) or n < 0:
            raise IndexError(f"heap sizes are whole numbers 0 or more, not {shown(n)}")
        if n < len(self.values):
            return self.values[n]
        if self.period is not None and self.preperiod is not None:
            n0, p = self.preperiod, self.period
            return self.values[n0 + (n - n0) % p]
        if self.arithmetic is not None and self.arithmetic.proven:
            return self.arithmetic.value(n, self.values)
        raise IndexError(
            f"G({shown(n)}) is beyond the {len(self.values):,} computed values and no period is "
            "proven"
        )

    def summary(self) -> str:
        """One line: what was computed and what is proven."""
        head = f"Grundy values of {self.title}: {len(self.values):,} computed"
        if self.period is not None:
            return f"{head}; period {self.period:,} from heap {self.preperiod:,}, proven"
        a = self.arithmetic
        if a is not None:
            how = "proven" if a.proven else "observed, not proven"
            return (
                f"{head}; G(n + {a.period:,}) = G(n) + {a.saltus:,} from heap {a.preperiod:,} "
                f"({how})"
            )
        if self.guessed_period is not None:
            return (
                f"{head}; they seem to repeat with period {self.guessed_period:,} from heap "
                f"{self.guessed_preperiod:,} (a guess: not proven)"
            )
        return f"{head}; no period found"

    def __str__(self) -> str:
        return self.summary()

    def __repr__(self) -> str:
        period = (
            f"period={self.period}, preperiod={self.preperiod}, proven"
            if self.period is not None
            else f"guessed_period={self.guessed_period}, not proven"
        )
        return f"<GrundyValues of {self.title}: {len(self.values):,} values, {period}>"

    def _repr_svg_(self) -> str:
        from nimlab.core.render import grundy_svg

        return grundy_svg(self)


def grundy(
    game: Ruleset | str,
    n: int = DEFAULT_VALUES,
    *,
    prove: bool = False,
    seconds: float = GRUNDY_SECONDS,
) -> GrundyValues:
    """The Grundy values of one heap of ``game`` for heaps ``0 .. n - 1``, with the period when
    it is proven.

    ``game`` is what :class:`~nimlab.core.game.Game` takes: ``"kayles"``, ``"0.77"``,
    ``"dawson"``, a :class:`~nimlab.core.ruleset.Ruleset`. Grundy values are those of normal
    play; misère play and end positions do not change them. With ``prove=True`` the values are
    computed until the period is proven, at most ``n`` of them (``n`` is at most
    :data:`MAX_VALUES`). At most ``seconds`` of work:
    then the values so far come back with ``stopped="time"``. Raises
    :class:`~nimlab.core.errors.RulesetError` for rules that are not understood and
    :class:`~nimlab.core.errors.ArgumentError` for a count or ``seconds`` out of range
    (``seconds`` is 0 to :data:`~nimlab.core.arguments.MAX_SECONDS`).

    >>> g = grundy("kayles", 1000, prove=True)
    >>> g.values[:12]
    (0, 1, 2, 3, 1, 4, 3, 2, 1, 4, 2, 6)
    >>> g.period, g.preperiod
    (12, 71)
    """
    from nimlab.theory.grundy import GrundyRun, arithmetic_period

    ruleset = as_ruleset(game)
    check_count(n, "n (how many values to compute)", 1, MAX_VALUES)
    seconds = check_seconds(seconds)
    if has_grundy_table(ruleset.game):
        raise RulesetError(
            f"no Grundy values of one heap: {ruleset.game.title} is played on a pair of piles; "
            "nimlab.grundy_table gives the Grundy value of every pair"
        )
    if ruleset.game.grundy_support:
        raise RulesetError(f"no Grundy values: {ruleset.game.grundy_support}")
    seq = GrundyRun(ruleset.rule, n, prove=prove).run(seconds=seconds)
    values = tuple(seq.values.tolist())  # Python ints, at C speed (2**20 values: ~10 ms)
    if seq.proven and seq.period is not None:
        return GrundyValues(
            title=ruleset.game.title,
            code=ruleset.rule.code,
            values=values,
            period=int(seq.period),
            preperiod=int(seq.preperiod or 0),
            proof=("Guy–Smith theorem: " if seq.proof == "guy-smith" else "window argument: ")
            + seq.certificate(),
            stopped=seq.stopped,
        )
    return GrundyValues(
        title=ruleset.game.title,
        code=ruleset.rule.code,
        values=values,
        period=None,
        preperiod=None,
        proof=None,
        guessed_period=None if seq.period is None else int(seq.period),
        guessed_preperiod=None if seq.preperiod is None else int(seq.preperiod),
        stopped=seq.stopped,
        arithmetic=None if seq.period is not None else arithmetic_period(seq.rule, values),
    )


def has_grundy_table(kind: GameKind) -> bool:
    """Whether the game's Grundy values are a table of pairs of piles (:func:`grundy_table`):
    Wythoff's game, whose positions are pairs and not sums of heaps."""
    return isinstance(kind.rules, WythoffRules)


@dataclass(frozen=True)
class GrundyTable:
    """The Grundy values ``G(x, y)`` (normal play) of Wythoff's game for every pair of piles
    ``0 <= x, y < n``: ``values[x][y]``, exact (computed, not guessed; no period is involved).

    ``G(x, y) = 0`` exactly at the P-positions (Wythoff's pairs ``(⌊kφ⌋, ⌊kφ²⌋)``), ``G(0, y)
    = y``, and the table is symmetric. Misère play and extra end positions do not change the
    values, but the values decide only normal play without extra end positions.
    """

    title: str
    values: tuple[tuple[int, ...], ...]

    def __len__(self) -> int:
        """How many piles each side covers (``n``)."""
        return len(self.values)

    def __getitem__(self, pair: tuple[int, int]) -> int:
        """``G(x, y)``: a computed value, or one a theorem gives (``(0, y)`` and the
        P-positions, however large). O(1) or O(M(log n))."""
        from nimlab.theory.wythoff import wythoff_grundy_known

        if not isinstance(pair, tuple) or len(pair) != 2:
            raise IndexError(f"a position is a pair of piles (x, y), not {pair!r}")
        x, y = pair
        for v in pair:
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                raise IndexError(f"pile sizes are whole numbers 0 or more, not {v!r}")
        n = len(self.values)
        if x < n and y < n:
            return self.values[x][y]
        known = wythoff_grundy_known((x, y))
        if known is not None:
            return known
        raise IndexError(f"G({x}, {y}) is beyond the table of piles 0..{n - 1}")

    def p_positions(self) -> list[tuple[int, int]]:
        """The pairs of value 0 in the table, ``x <= y``, by ``x``."""
        n = len(self.values)
        return [(x, y) for x in range(n) for y in range(x, n) if self.values[x][y] == 0]

    def summary(self) -> str:
        """One line: what the table covers."""
        n = len(self.values)
        return (
            f"Grundy values of {self.title}: every pair of piles 0..{n - 1:,} ({n * n:,} "
            "values, exact)"
        )

    def __str__(self) -> str:
        return self.summary()

    def __repr__(self) -> str:
        return f"<GrundyTable of {self.title}: piles 0..{len(self.values) - 1:,}>"

    def _repr_html_(self) -> str:
        from nimlab.core.render import grundy_table_html

        return grundy_table_html(self)


def grundy_table(
    game: Ruleset | str = "wythoff",
    n: int = DEFAULT_TABLE,
    *,
    seconds: float = GRUNDY_SECONDS,
) -> GrundyTable:
    """The Grundy values ``G(x, y)`` of every pair of piles ``0 <= x, y < n`` of a game played
    on a pair of piles (Wythoff's game; see :func:`has_grundy_table`), as ``nimlab grundy
    wythoff --max N`` prints them. O(n²) time (about 2 µs per pair with ``x <= y`` on one
    core) and 4 bytes per value while computing; ``n`` is 1 to :data:`MAX_TABLE`.

    Raises :class:`~nimlab.core.errors.RulesetError` for a game without such a table (games
    on heaps have :func:`grundy`), :class:`~nimlab.core.errors.ArgumentError` for ``n`` or
    ``seconds`` out of range, and
    :class:`~nimlab.theory.budget.BudgetExceeded` after ``seconds`` of work.

    >>> t = grundy_table("wythoff", 6)
    >>> t.values[1], t[3, 5], t.p_positions()
    ((1, 2, 0, 4, 5, 3), 0, [(0, 0), (1, 2), (3, 5)])
    """
    from nimlab.theory.budget import Budget
    from nimlab.theory.wythoff import table_cells, wythoff_grundy_table

    ruleset = as_ruleset(game)
    if not has_grundy_table(ruleset.game):
        raise RulesetError(
            f"no table of pairs: {ruleset.game.title} is not played on a pair of piles "
            "(Wythoff's game is); nimlab.grundy gives the values of one heap"
        )
    check_count(n, "n (how many piles the table covers)", 1, MAX_TABLE)
    budget = Budget(seconds=check_seconds(seconds), positions=table_cells(MAX_TABLE, MAX_TABLE))
    table = wythoff_grundy_table(n, budget=budget)
    return GrundyTable(title=ruleset.game.title, values=tuple(tuple(row) for row in table.tolist()))


@dataclass(frozen=True)
class Quotient:
    """The misère quotient of a game: a finite commutative monoid that decides misère play of
    every sum of heaps it covers (:meth:`outcome`).

    ``order`` elements (numbered ``0 .. order - 1``, ``0`` the empty position, ``elements[x]``
    a word in the generators), the P-portion ``p_elements``, the element of one heap of ``h``
    objects ``heap_images[h]`` (``h <= heap_bound``) and the multiplication ``table``.
    ``proven`` is True when the periodicity test proves the quotient for every heap size (then
    ``period`` and ``preperiod`` say how the heap images repeat); otherwise it holds, verified,
    for heaps up to ``heap_bound`` only. ``reason`` says which. ``theory`` is the
    :class:`~nimlab.theory.quotient.MisereQuotient` itself.
    """

    title: str
    theory: MisereQuotient = field(repr=False)

    @property
    def order(self) -> int:
        return self.theory.order

    @property
    def elements(self) -> tuple[str, ...]:
        return self.theory.elements

    @property
    def p_elements(self) -> tuple[str, ...]:
        """The names of the elements in the P-portion."""
        return tuple(self.theory.elements[x] for x in self.theory.p_elements)

    @property
    def heap_images(self) -> tuple[str, ...]:
        """The names of the elements of heaps ``0 .. heap_bound``."""
        return tuple(self.theory.elements[x] for x in self.theory.heap_images)

    @property
    def relations(self) -> tuple[str, ...]:
        return self.theory.relations

    @property
    def table(self) -> tuple[tuple[int, ...], ...]:
        return self.theory.table

    @property
    def heap_bound(self) -> int:
        return self.theory.heap_bound

    @property
    def proven(self) -> bool:
        return self.theory.proven

    @property
    def period(self) -> int | None:
        """The period of the heap images, set only when the quotient is proven."""
        return self.theory.period if self.theory.proven else None

    @property
    def preperiod(self) -> int | None:
        return self.theory.preperiod if self.theory.proven else None

    @property
    def reason(self) -> str:
        return self.theory.reason

    def outcome(self, position: list[int] | tuple[int, ...]) -> str:
        """``"P"`` or ``"N"``: the misère outcome of a sum of heaps, read off the quotient.
        O(heaps); raises :class:`~nimlab.core.errors.PositionError` for heaps that are not
        whole numbers 0 or more, or a heap it does not cover."""
        from nimlab.core.position import parse_heaps
        from nimlab.theory.quotient import QuotientError

        heaps = parse_heaps(position)
        try:
            return str(self.theory.outcome(tuple(sorted(heaps))))
        except QuotientError as e:
            raise PositionError(str(e)) from None

    def summary(self) -> str:
        """One line: the order, the P-portion, and what is proven."""
        head = (
            f"Misère quotient of {self.title}: order {self.order}, P-portion "
            f"{{{', '.join(self.p_elements)}}}"
        )
        if self.proven:
            return f"{head}; proven for every heap size"
        return f"{head}; verified for heaps up to {self.heap_bound} (not proven beyond)"

    def __str__(self) -> str:
        return self.summary()

    def __repr__(self) -> str:
        how = "proven" if self.proven else f"verified for heaps up to {self.heap_bound:,}"
        return f"<Quotient of {self.title}: order {self.order:,}, {how}>"

    def _repr_html_(self) -> str:
        from nimlab.core.render import quotient_html

        return quotient_html(self)


def quotient(
    game: Ruleset | str,
    max_heap: int | None = None,
    *,
    seconds: float = QUOTIENT_SECONDS,
) -> Quotient:
    """The misère quotient of ``game`` over sums of heaps of at most ``max_heap`` objects (the
    computation stops earlier once the quotient is proven for every heap size). By default
    200, or 24 for games no period can prove (Lasker's Nim, Grundy's game: the quotient of the
    heaps up to the bound, ``proven`` False).

    ``game`` is what :class:`~nimlab.core.game.Game` takes (``"kayles"``, ``"0.77"``, a
    :class:`~nimlab.core.ruleset.Ruleset`); misère play is implied. Raises
    :class:`~nimlab.core.errors.RulesetError` for a game without one here (Nim, the relatives
    whose positions are not sums of heaps, end positions),
    :class:`~nimlab.core.errors.ArgumentError` for a bound or ``seconds`` out of range, and
    :class:`~nimlab.theory.budget.BudgetExceeded` after ``seconds``.

    >>> q = quotient("kayles")
    >>> q.order, q.proven
    (40, True)
    """
    from nimlab.theory.budget import Budget
    from nimlab.theory.quotient import QuotientError, default_heap_bound, misere_quotient

    ruleset = as_ruleset(game)
    if ruleset.game.quotient_support:
        raise RulesetError(f"no misère quotient: {ruleset.game.quotient_support}")
    rule = ruleset.rule
    if max_heap is None:
        max_heap = default_heap_bound(rule)
    check_count(max_heap, "max_heap (the largest heap covered)", 0, MAX_QUOTIENT_HEAP)
    seconds = check_seconds(seconds)
    if ruleset.end_positions:
        raise RulesetError("a misère quotient is computed for rules without extra end positions")
    try:
        q = misere_quotient(rule, max_heap, budget=Budget(seconds=seconds))
    except QuotientError as e:
        raise RulesetError(str(e)) from None
    return Quotient(title=ruleset.game.title, theory=q)
