"""The original pure-Python paranoid search, kept as the exact twin of
:class:`nimlab.theory.paranoid.ParanoidSolver` for tests and benchmarks (private; unbounded: do not
serve requests with it).

Semantics as in :mod:`nimlab.theory.paranoid`: the paranoid model, misère elimination rounds that
restart from the start position, extra end positions.
"""

from __future__ import annotations

from nimlab.theory.octal import TakeAndBreak
from nimlab.theory.paranoid import ParanoidValue
from nimlab.theory.positions import Canon, children, is_terminal
from nimlab.theory.solver import BudgetExceeded

__all__ = ["ReferenceParanoidSolver"]


class ReferenceParanoidSolver:
    """Exact paranoid search for one ruleset and one start position (for elimination rounds).

    Memoised per (players left, hero); ``budget`` bounds the number of stored states.
    O(S * B * n) time for S reachable positions, B options each and n players.
    """

    def __init__(
        self,
        rule: TakeAndBreak,
        start: Canon,
        *,
        misere: bool = False,
        end_positions: frozenset[Canon] = frozenset(),
        budget: int = 2_000_000,
    ) -> None:
        self.rule = rule
        self.start = start
        self.misere = misere
        self.end_positions = end_positions
        self.budget = budget
        self._tables: dict[tuple[tuple[int, ...], int], dict[tuple[Canon, int], ParanoidValue]] = {}
        self._rounds: dict[tuple[tuple[int, ...], int], bool] = {}
        self._kids: dict[Canon, list[Canon]] = {}
        self._size = 0

    def _terminal(self, position: Canon) -> bool:
        return is_terminal(self.rule, position, self.end_positions)

    def _children(self, position: Canon) -> list[Canon]:
        kids = self._kids.get(position)
        if kids is None:
            kids = self._kids[position] = list(set(children(self.rule, position)))
        return kids

    def round_winner_value(self, players: tuple[int, ...], hero: int) -> bool:
        """Whether ``hero`` wins the whole game from the start of a round with ``players``
        (seat numbers in seat order) left, the first of them to move."""
        key = (players, hero)
        if key in self._rounds:
            return self._rounds[key]
        if hero not in players:
            result = False
        elif len(players) == 1:
            result = True
        elif self._terminal(self.start):
            first = players[0]
            if not self.misere:
                result = first == hero
            else:
                result = first != hero and self.round_winner_value(players[1:], hero)
        else:
            result = self.value(self.start, players, 0, hero).hero_wins
        self._rounds[key] = result
        return result

    def _after_terminal_move(self, players: tuple[int, ...], mover: int, hero: int) -> bool:
        """The hero's result when ``players[mover]`` moves into a terminal position."""
        if not self.misere:
            return players[mover] == hero
        if players[mover] == hero:
            return False
        rest = players[:mover] + players[mover + 1 :]
        return self.round_winner_value(rest, hero)

    def value(
        self, position: Canon, players: tuple[int, ...], to_move: int, hero: int
    ) -> ParanoidValue:
        """The value for ``hero`` of a non-terminal ``position`` with ``players[to_move]`` to
        move. Raises :class:`BudgetExceeded` beyond the budget."""
        table = self._tables.setdefault((players, hero), {})
        n = len(players)
        stack: list[tuple[Canon, int]] = [(position, to_move)]
        while stack:
            pos, t = stack[-1]
            if (pos, t) in table:
                stack.pop()
                continue
            nxt = (t + 1) % n
            missing = [
                (c, nxt)
                for c in self._children(pos)
                if not self._terminal(c) and (c, nxt) not in table
            ]
            if missing:
                stack.extend(missing)
                continue
            stack.pop()
            table[(pos, t)] = self._combine(pos, players, t, hero, table)
            self._size += 1
            if self._size > self.budget:
                raise BudgetExceeded(self.budget)
        return table[(position, to_move)]

    def _combine(
        self,
        pos: Canon,
        players: tuple[int, ...],
        t: int,
        hero: int,
        table: dict[tuple[Canon, int], ParanoidValue],
    ) -> ParanoidValue:
        nxt = (t + 1) % len(players)
        outcomes: list[tuple[bool, int]] = []
        for c in self._children(pos):
            if self._terminal(c):
                outcomes.append((self._after_terminal_move(players, t, hero), 1))
            else:
                v = table[(c, nxt)]
                outcomes.append((v.hero_wins, v.remoteness + 1))
        hero_moves = players[t] == hero
        wins = [r for w, r in outcomes if w]
        losses = [r for w, r in outcomes if not w]
        if hero_moves:
            if wins:
                return ParanoidValue(True, min(wins))
            return ParanoidValue(False, max(losses))
        if losses:
            return ParanoidValue(False, min(losses))
        return ParanoidValue(True, max(wins))

    def move_value(
        self, child: Canon, players: tuple[int, ...], mover: int, hero: int
    ) -> ParanoidValue:
        """The hero's value after ``players[mover]`` moves to ``child`` (remoteness counts that
        move)."""
        if self._terminal(child):
            return ParanoidValue(self._after_terminal_move(players, mover, hero), 1)
        v = self.value(child, players, (mover + 1) % len(players), hero)
        return ParanoidValue(v.hero_wins, v.remoteness + 1)
