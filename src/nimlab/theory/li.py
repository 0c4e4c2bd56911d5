"""More than two players, in Li's ranking model: who makes the last move?

Li's model (S.-Y. R. Li, "N-person Nim and N-person Moore's games", 1978): normal play, ``N``
players moving in turn; the player who makes the last move ranks first, the one who moved before
that second, and so on, and every player plays for the best rank. With the last move made by the
player ``r`` seats after the player to move (``0 <= r < N``), the player to move ranks ``r + 1``
(the ``r`` players after it moved later), so the player to move picks the move that minimises
``r``. Counting ``v(p)`` from the player to move at ``p``:

- ``v(p) = N - 1`` when ``p`` is terminal (the player who just moved made the last move);
- ``v(p) = min over moves p -> c of (v(c) + 1) mod N`` otherwise.

With two players ``v = 1`` exactly at P-positions. The value of a position does not depend on
which move the player to move picks among equally good ones, so it is well defined.

Nim without extra end positions has a closed form in part (Li 1978): ``v(p) = N - 1`` exactly
when every binary column sum of the heaps is divisible by ``N``. It follows that ``v(p) = 0``
exactly when some move reaches such a position, and, for three players, ``v(p) = 1`` otherwise.
:func:`li_last_mover` uses these (each tested against the exact search) and searches otherwise.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence

from nimlab.theory.budget import Budget, BudgetExceeded
from nimlab.theory.octal import TakeAndBreak
from nimlab.theory.positions import Canon, canonical, children, is_terminal

__all__ = ["LiModelError", "LiSolver", "li_formula", "li_last_mover"]

DEFAULT_MAX_STATES = 2_000_000
_SOLVERS_KEPT = 8


class LiModelError(ValueError):
    """A bad argument for Li's model (e.g. fewer than two players)."""


def _column_sums(heaps: Sequence[int]) -> list[int]:
    width = max(heaps, default=0).bit_length()
    return [sum((h >> b) & 1 for h in heaps) for b in range(width)]


def li_formula(position: Sequence[int], players: int) -> int | None:
    """The last mover in Nim without extra end positions by formula, or ``None`` where no proven
    formula applies (four or more players, neither of the two cases below).

    ``players - 1`` when every binary column sum is divisible by ``players`` (Li 1978); ``0``
    when one move reaches such a position; for three players, ``1`` otherwise.
    O(heaps * bits).
    """
    if players < 2:
        raise LiModelError(f"Li's model needs at least 2 players, got {players}")
    heaps = canonical(position)
    sums = _column_sums(heaps)
    if all(s % players == 0 for s in sums):
        return players - 1
    for x in set(heaps):
        target = 0
        for b, s in enumerate(sums):
            rest = s - ((x >> b) & 1)
            if rest % players == 0:
                continue
            if (rest + 1) % players == 0:
                target |= 1 << b
                continue
            break
        else:
            if target < x:
                return 0
    return 1 if players == 3 else None


class _Frame:
    __slots__ = ("best", "kids", "pending", "pos")

    def __init__(self, pos: Canon, kids: Iterator[Canon], players: int) -> None:
        self.pos = pos
        self.kids = kids
        self.best = players
        self.pending: Canon | None = None


class LiSolver:
    """Exact search of Li's model for one ruleset, number of players and set of end positions.

    Memoised: at most ``max_states`` positions are stored (the table is dropped before a question
    when it holds more than half of that); every stored position is charged to the question's
    :class:`Budget`; the search keeps child *generators*, not child lists, and checks the
    deadline and cancel flag as it goes. ``use_formula`` lets Nim without end positions use
    :func:`li_formula` at every position (the search still decides what it leaves open).

    O(S * B) time for ``S`` reachable positions with ``B`` moves each; thread safe.
    """

    def __init__(
        self,
        rule: TakeAndBreak,
        players: int,
        *,
        end_positions: frozenset[Canon] = frozenset(),
        max_states: int = DEFAULT_MAX_STATES,
        use_formula: bool = True,
    ) -> None:
        if not isinstance(players, int) or players < 2:
            raise LiModelError(f"Li's model needs at least 2 players, got {players!r}")
        self.rule = rule
        self.players = players
        self.end_positions = frozenset(canonical(p) for p in end_positions)
        self.max_states = max_states
        self.formula = use_formula and rule.is_nim and not self.end_positions
        self._table: dict[Canon, int] = {}
        self._frames = 0
        self._lock = threading.Lock()

    @property
    def stored(self) -> int:
        """The positions held now (table entries plus open search frames)."""
        return len(self._table) + self._frames

    def _terminal(self, position: Canon) -> bool:
        if is_terminal(self.rule, position, self.end_positions):
            return True
        return next(children(self.rule, position), None) is None

    def last_mover(self, position: Sequence[int], budget: Budget | None = None) -> int:
        """Who makes the last move from ``position`` under rational play in Li's model, counted
        from the player to move (``0``) to the player who just moved (``players - 1``). Raises
        :class:`BudgetExceeded` beyond ``budget`` (default: ``Budget(positions=max_states)``)."""
        canon = canonical(position)
        if any(h < 0 for h in canon):
            raise LiModelError(f"heap sizes cannot be negative: {tuple(position)!r}")
        budget = budget if budget is not None else Budget(positions=self.max_states)
        with self._lock:
            return self._value(canon, budget)

    def _known(self, position: Canon) -> int | None:
        if self._terminal(position):
            return self.players - 1
        if self.formula:
            found = li_formula(position, self.players)
            if found is not None:
                return found
        return self._table.get(position)

    def _value(self, position: Canon, budget: Budget) -> int:
        known = self._known(position)
        if known is not None:
            return known
        if len(self._table) > self.max_states // 2:
            self._table.clear()
        n = self.players
        table = self._table
        stack = [_Frame(position, children(self.rule, position), n)]
        self._frames = 1
        steps = 0
        try:
            budget.charge(1)
            while True:
                fr = stack[-1]
                if fr.pending is not None:
                    fr.best = min(fr.best, (table[fr.pending] + 1) % n)
                    fr.pending = None
                opened = False
                while fr.best > 0:
                    kid = next(fr.kids, None)
                    if kid is None:
                        break
                    steps += 1
                    if steps >= 1024:
                        steps = 0
                        budget.check()
                    v = self._known(kid)
                    if v is None:
                        if len(table) + self._frames >= self.max_states:
                            raise BudgetExceeded(self.max_states, "memory")
                        fr.pending = kid
                        stack.append(_Frame(kid, children(self.rule, kid), n))
                        self._frames += 1
                        budget.charge(1)  # one frame now, one stored state later
                        opened = True
                        break
                    fr.best = min(fr.best, (v + 1) % n)
                if opened:
                    continue
                if len(table) >= self.max_states:
                    raise BudgetExceeded(self.max_states, "memory")
                table[fr.pos] = fr.best
                stack.pop()
                self._frames -= 1
                if not stack:
                    return fr.best
        finally:
            self._frames = 0


_solvers: OrderedDict[tuple[TakeAndBreak, int, frozenset[Canon]], LiSolver] = OrderedDict()
_solvers_lock = threading.Lock()


def li_last_mover(
    rule: TakeAndBreak,
    position: Canon,
    players: int,
    *,
    end_positions: frozenset[Canon] = frozenset(),
    budget: Budget | None = None,
) -> int:
    """Who makes the last move under rational play in Li's model (normal play, ``players``
    players), counted from the player to move: ``0`` is the player to move, ``players - 1`` the
    player who just moved (so a terminal position gives ``players - 1``, and with two players
    ``1`` means a P-position).

    Nim without extra end positions uses :func:`li_formula` where it applies (any heap sizes,
    O(heaps * bits)); everything else is an exact search under ``budget`` (default: two million
    positions), which raises :class:`BudgetExceeded` beyond it. Solvers are cached per (rule,
    players, end positions): at most 8 of them, each holding at most two million positions.
    """
    if not isinstance(players, int) or players < 2:
        raise LiModelError(f"Li's model needs at least 2 players, got {players!r}")
    ends = frozenset(canonical(p) for p in end_positions)
    key = (rule, players, ends)
    with _solvers_lock:
        solver = _solvers.get(key)
        if solver is None:
            solver = _solvers[key] = LiSolver(rule, players, end_positions=ends)
            while len(_solvers) > _SOLVERS_KEPT:
                _solvers.popitem(last=False)
        else:
            _solvers.move_to_end(key)
    return solver.last_mover(position, budget)
