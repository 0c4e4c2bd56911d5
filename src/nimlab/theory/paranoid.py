"""More than two players, in the paranoid model: can one player (the *hero*) force a win against
all the others playing together?

Rules: players move in turn in seat order. In normal play whoever moves
into a terminal position wins and the game is over. In misère play whoever moves into a terminal
position is eliminated; a new round starts from the original position with the remaining players
in their original order, the first of them moving first; the last player left wins. If a round's
start position is already terminal, its first player wins (normal) or is eliminated (misère) at
once.

A state within a round is ``(position, index of the player to move)``. The hero wins a state where
it moves when some move wins; a state where another player moves only when every move wins for the
hero. Remoteness counts the moves to the end of the current round (the hero hurries when winning
and delays when losing). With two players this is exactly the two-player solver.

Only the number ``n`` of players left and the hero's index among them matter (seat numbers do
not), so values are memoised per ``(n, hero index)``. Two engines give the same values:

- **dense tables** (rules that never split a heap, when the table is small enough): every sorted
  position of at most ``K`` heaps each at most ``M`` (``K`` non-empty start heaps, ``M`` the
  largest) up to the start's colex rank (see :mod:`nimlab.theory.retrograde`), times the ``n``
  players to move, filled in one increasing-rank pass by a Numba kernel
  (:mod:`nimlab.theory._paranoid_kernels`). Misère elimination needs the round result of every
  smaller player set, so those tables are built first (recursively, memoised).
- **bounded search** otherwise: a depth-first search whose frames hold child *generators* (no
  child lists are stored), whose tables hold at most ``max_states`` states in all, and that checks
  the :class:`~nimlab.theory.budget.Budget` (deadline, positions, bytes, cancel flag) as it goes.

Every query method takes an optional ``budget``; without one, a fresh
``Budget(positions=max_states)`` is used. A dense table is built only when its states fit the
budget's positions and bytes (and :data:`DENSE_MAX_STATES`, ``max_table_bytes``); building it
charges all its states at once, and otherwise the bounded search answers. Beyond the budget a
query raises :class:`~nimlab.theory.budget.BudgetExceeded` and the solver stays usable: a later
query with a fresh budget works (what was stored stays valid, and caches over their bound are
dropped). The original unbounded search is kept as the exact twin in
:mod:`nimlab.theory._paranoid_reference` (tests and ``bench/bench_multiplayer.py``).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from math import comb
from typing import TYPE_CHECKING, Any

from nimlab.theory.budget import Budget, BudgetExceeded
from nimlab.theory.octal import TakeAndBreak
from nimlab.theory.positions import Canon, canonical, children, is_terminal

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np
    from numpy.typing import NDArray

__all__ = [
    "DENSE_MAX_STATES",
    "STATE_BYTES",
    "ParanoidSolver",
    "ParanoidValue",
]

DENSE_MAX_STATES = 16_000_000
"""The most states (positions times players) one dense table may have (32 MB at 2 bytes)."""

STATE_BYTES = 200
"""The memory one state of the search tables (or one search frame) is counted as (a dict entry
with its tuple key and int value, generously)."""

_H_SEARCH = 1 << 62
_CHUNK = 1 << 16
"""Ranks per kernel call between two budget checks."""


@dataclass(frozen=True, slots=True)
class ParanoidValue:
    """Whether the hero can force a win, and in how many moves the current round ends."""

    hero_wins: bool
    remoteness: int


def _shift(u: int) -> int:
    """A state's value seen one move earlier (the round lasts one move longer)."""
    return u - 1 if u > 0 else u + 1


class _Frame:
    __slots__ = ("best", "kids", "pending", "pos", "t")

    def __init__(self, pos: Canon, t: int, kids: Iterator[Canon], best: int) -> None:
        self.pos = pos
        self.t = t
        self.kids = kids
        self.best = best
        self.pending: Canon | None = None


class ParanoidSolver:
    """Exact paranoid values for one ruleset and one start position (for elimination rounds).

    ``budget`` (kept under this name for compatibility) is ``max_states``: the most states the
    search tables and frames may hold in all, and the default position limit of a query without a
    :class:`Budget`. ``max_table_bytes`` bounds the dense tables kept (least recently used ones are
    dropped and rebuilt when needed again). ``dense=False`` forces the search (for tests).

    Time: a dense table costs O(R * B * n) for ``R`` ranks up to the start's, ``B`` moves per
    position and ``n`` players, once per (players left, hero); the search O(S * B * n) for ``S``
    reachable positions. A query on a built table is O(K).
    """

    def __init__(
        self,
        rule: TakeAndBreak,
        start: Canon,
        *,
        misere: bool = False,
        end_positions: frozenset[Canon] = frozenset(),
        budget: int = 2_000_000,
        max_table_bytes: int = 256 * 2**20,
        dense: bool = True,
    ) -> None:
        self.rule = rule
        self.start = canonical(start)
        self.misere = misere
        self.end_positions = frozenset(canonical(p) for p in end_positions)
        self.budget = budget
        self.max_states = budget
        self.max_table_bytes = max_table_bytes
        self._lock = threading.RLock()
        self._depth = 0
        self._rounds: dict[tuple[int, int], bool] = {}
        # bounded search
        self._py_tables: dict[tuple[int, int], dict[tuple[Canon, int], int]] = {}
        self._py_stored = 0
        self._frames = 0
        # dense tables
        self._dense: OrderedDict[tuple[int, int], NDArray[np.signedinteger]] = OrderedDict()
        self._dense_bytes = 0
        self._K = len(self.start)
        self._M = max(self.start, default=0)
        # the start's colex rank bounds every reachable position's (exact big-int arithmetic)
        self._limit_rank = sum(comb(h + i, i + 1) for i, h in enumerate(self.start))
        self._half = 2**15 - 1 if self._K * self._M + 2 < 2**15 - 1 else 2**31 - 1
        self._dense_ok = (
            dense
            and not rule.splits
            and self._K > 0
            and (self._limit_rank + 1) <= DENSE_MAX_STATES
            and self._K * self._M + 2 < 2**31 - 1
        )
        # C(a, b) for a <= M + K, b <= K + 1: only for tables small enough to build
        self._binom: list[list[int]] = (
            [[comb(a, b) for b in range(self._K + 2)] for a in range(self._M + self._K + 1)]
            if self._dense_ok
            else []
        )

    # -- accounting ---------------------------------------------------------------------------

    @property
    def stored(self) -> int:
        """The number of states held now (dense tables and search tables)."""
        dense = sum(int(t.shape[0]) for t in self._dense.values())
        return dense + self._py_stored

    @property
    def nbytes(self) -> int:
        """The memory held now, counted as the dense tables' bytes plus :data:`STATE_BYTES` per
        search state and frame."""
        return self._dense_bytes + (self._py_stored + self._frames) * STATE_BYTES

    def _fresh(self, budget: Budget | None) -> Budget:
        return budget if budget is not None else Budget(positions=self.max_states)

    # -- helpers ------------------------------------------------------------------------------

    def _terminal(self, position: Canon) -> bool:
        """Empty, an extra end position, or no legal move (checked on the moves themselves: a
        rule may allow taking ``k`` from a heap only by splitting what cannot be split)."""
        if is_terminal(self.rule, position, self.end_positions):
            return True
        return next(children(self.rule, position), None) is None

    def _rank(self, canon: Canon) -> int:
        binom = self._binom
        offset = self._K - len(canon)
        return sum(binom[h + i][i + 1] for i, h in enumerate(canon, offset))

    def _covered(self, position: Canon) -> bool:
        """Whether the dense tables hold ``position`` (O(K)); always false without them."""
        return (
            self._dense_ok
            and len(position) <= self._K
            and max(position, default=0) <= self._M
            and self._rank(position) <= self._limit_rank
        )

    @staticmethod
    def _index(players: tuple[int, ...], hero: int) -> int:
        return players.index(hero) if hero in players else -1

    def _decode(self, u: int, half: int) -> ParanoidValue:
        return ParanoidValue(True, half - u) if u > 0 else ParanoidValue(False, u + half)

    # -- rounds -------------------------------------------------------------------------------

    def round_winner_value(
        self, players: tuple[int, ...], hero: int, budget: Budget | None = None
    ) -> bool:
        """Whether ``hero`` wins the whole game from the start of a round with ``players``
        (seat numbers in seat order) left, the first of them to move. Raises
        :class:`BudgetExceeded` beyond ``budget``."""
        with self._lock:
            return self._round(len(players), self._index(players, hero), self._fresh(budget))

    def _round(self, n: int, h: int, budget: Budget) -> bool:
        key = (n, h)
        known = self._rounds.get(key)
        if known is not None:
            return known
        if h < 0:
            result = False
        elif n == 1:
            result = True
        elif self._terminal(self.start) and not self.misere:
            result = h == 0  # the first player wins at once
        elif self._terminal(self.start):
            result = h != 0 and self._round(n - 1, h - 1, budget)  # the first one is out
        else:
            result = self._state(self.start, n, 0, h, budget) > 0
        self._rounds[key] = result
        return result

    def _terminal_move_wins(self, n: int, mover: int, h: int, budget: Budget) -> bool:
        """Whether the hero (index ``h``) wins when player ``mover`` moves into a terminal
        position."""
        if not self.misere:
            return mover == h
        if mover == h or h < 0:
            return False
        return self._round(n - 1, h - 1 if mover < h else h, budget)

    # -- queries ------------------------------------------------------------------------------

    def value(
        self,
        position: Canon,
        players: tuple[int, ...],
        to_move: int,
        hero: int,
        budget: Budget | None = None,
    ) -> ParanoidValue:
        """The value for ``hero`` of a non-terminal ``position`` with ``players[to_move]`` to
        move. Raises :class:`BudgetExceeded` beyond ``budget`` and :class:`ValueError` for a
        terminal position (use :meth:`move_value` for moves into one)."""
        position = canonical(position)
        if self._terminal(position):
            raise ValueError(f"{position!r} is terminal: it has no paranoid value")
        with self._lock:
            u, half = self._state_half(
                position, len(players), to_move, self._index(players, hero), self._fresh(budget)
            )
        return self._decode(u, half)

    def move_value(
        self,
        child: Canon,
        players: tuple[int, ...],
        mover: int,
        hero: int,
        budget: Budget | None = None,
    ) -> ParanoidValue:
        """The hero's value after ``players[mover]`` moves to ``child`` (remoteness counts that
        move). Raises :class:`BudgetExceeded` beyond ``budget``."""
        child = canonical(child)
        n = len(players)
        h = self._index(players, hero)
        with self._lock:
            b = self._fresh(budget)
            if self._terminal(child):
                return ParanoidValue(self._terminal_move_wins(n, mover, h, b), 1)
            u, half = self._state_half(child, n, (mover + 1) % n, h, b)
        v = self._decode(u, half)
        return ParanoidValue(v.hero_wins, v.remoteness + 1)

    def _state(self, position: Canon, n: int, t: int, h: int, budget: Budget) -> int:
        u, _ = self._state_half(position, n, t, h, budget)
        return u

    def _state_half(
        self, position: Canon, n: int, t: int, h: int, budget: Budget
    ) -> tuple[int, int]:
        """The signed value ``u`` of a non-terminal state and the ``H`` it is encoded with."""
        if self._covered(position):
            table = self._dense_table(n, h, budget)
            if table is not None:
                return int(table[self._rank(position) * n + t]), self._half
        return self._search(position, n, t, h, budget), _H_SEARCH

    # -- dense tables -------------------------------------------------------------------------

    def _dense_table(self, n: int, h: int, budget: Budget) -> NDArray[np.signedinteger] | None:
        """The dense table for ``n`` players and hero index ``h`` (built if needed), or ``None``
        when it does not fit the budget (the caller then searches)."""
        key = (n, h)
        table = self._dense.get(key)
        if table is not None:
            self._dense.move_to_end(key)
            return table
        states = (self._limit_rank + 1) * n
        itemsize = 2 if self._half < 2**15 else 4
        if states > DENSE_MAX_STATES or not budget.allows(states):
            return None
        if budget.nbytes is not None and self.nbytes + states * itemsize > budget.nbytes:
            return None
        if states * itemsize > self.max_table_bytes:
            return None
        # the round results of smaller player sets first (misère), each its own table
        wins = [self._terminal_move_wins(n, mover, h, budget) for mover in range(n)]
        table = self._build(n, h, wins, budget)
        budget.charge(states)
        self._dense[key] = table
        self._dense_bytes += int(table.nbytes)
        while self._dense_bytes > self.max_table_bytes and len(self._dense) > 1:
            _, old = self._dense.popitem(last=False)
            self._dense_bytes -= int(old.nbytes)
        return table

    def _build(self, n: int, h: int, wins: list[bool], budget: Budget) -> NDArray[np.signedinteger]:
        import numpy as np

        from nimlab.theory import kernels

        kernels.ensure("paranoid")
        from nimlab.theory._paranoid_kernels import paranoid_pass

        half = self._half
        dtype: Any = np.int16 if half < 2**15 else np.int32
        size = self._limit_rank + 1
        tab = np.zeros(size * n, dtype=dtype)
        K = self._K
        ends = sorted(
            self._rank(p)
            for p in self.end_positions
            if len(p) <= K and max(p, default=0) <= self._M and self._rank(p) <= self._limit_rank
        )
        end_ranks = np.array(ends, dtype=np.int64)
        binom = np.array(self._binom, dtype=np.int64)
        digits = np.array(self.rule.digits, dtype=np.int64)
        term_u = np.array([half - 1 if w else 1 - half for w in wins], dtype=np.int64)
        c = np.zeros(K, dtype=np.int64)
        ends_at = np.zeros(1, dtype=np.int64)
        r = 0
        while r < size:
            budget.check()
            r1 = min(size, r + _CHUNK)
            paranoid_pass(
                r, r1, c, ends_at, digits, self.rule.tail, end_ranks, binom, n, h, term_u, tab
            )
            r = r1
        tab.flags.writeable = False
        return tab

    # -- bounded search -----------------------------------------------------------------------

    def _search(self, position: Canon, n: int, to_move: int, h: int, budget: Budget) -> int:
        """Depth-first search for one state; every stored state is charged to ``budget`` and
        counted against ``max_states``."""
        if self._depth == 0 and self._py_stored > self.max_states // 2:
            self._py_tables.clear()
            self._py_stored = 0
        table = self._py_tables.setdefault((n, h), {})
        found = table.get((position, to_move))
        if found is not None:
            return found
        self._depth += 1
        frames_before = self._frames
        try:
            return self._run(position, n, to_move, h, table, budget)
        finally:
            self._depth -= 1
            self._frames = frames_before

    def _open(self, pos: Canon, t: int, h: int) -> _Frame:
        best = -_H_SEARCH if t == h else _H_SEARCH
        return _Frame(pos, t, children(self.rule, pos), best)

    def _run(
        self,
        position: Canon,
        n: int,
        to_move: int,
        h: int,
        table: dict[tuple[Canon, int], int],
        budget: Budget,
    ) -> int:
        top_win = _H_SEARCH - 1  # the best a state can be for its mover
        stack = [self._open(position, to_move, h)]
        self._frames += 1
        budget.charge(1)
        steps = 0
        while True:
            fr = stack[-1]
            t = fr.t
            nxt = (t + 1) % n
            hero_moves = t == h
            if fr.pending is not None:
                v = _shift(table[(fr.pending, nxt)])
                fr.pending = None
                fr.best = max(fr.best, v) if hero_moves else min(fr.best, v)
            opened = False
            done = fr.best == (top_win if hero_moves else -top_win)
            while not done:
                kid = next(fr.kids, None)
                if kid is None:
                    break
                steps += 1
                if steps >= 1024:
                    steps = 0
                    budget.check()
                if self._terminal(kid):
                    v = top_win if self._terminal_move_wins(n, t, h, budget) else -top_win
                else:
                    known = table.get((kid, nxt))
                    if known is None:
                        if self._py_stored + self._frames >= self.max_states:
                            raise BudgetExceeded(self.max_states, "memory")
                        if budget.nbytes is not None:
                            budget.check_bytes(self.nbytes + STATE_BYTES)
                        fr.pending = kid
                        stack.append(self._open(kid, nxt, h))
                        self._frames += 1
                        budget.charge(1)  # one frame now, one stored state later
                        opened = True
                        break
                    v = _shift(known)
                fr.best = max(fr.best, v) if hero_moves else min(fr.best, v)
                done = fr.best == (top_win if hero_moves else -top_win)
            if opened:
                continue
            if abs(fr.best) == _H_SEARCH:  # no move at all: cannot happen for non-terminal
                raise AssertionError(f"{fr.pos!r} has no move but is not terminal")
            if self._py_stored >= self.max_states:
                raise BudgetExceeded(self.max_states, "memory")
            table[(fr.pos, t)] = fr.best
            self._py_stored += 1
            stack.pop()
            self._frames -= 1
            if not stack:
                return fr.best
