"""More than two players, in the paranoid model: can one player (the *hero*) force a win against
all the others playing together?

Rules (``rules.md``, seed 000): players move in turn in seat order. In normal play whoever moves
into a terminal position wins and the game is over. In misère play whoever moves into a terminal
position is eliminated; a new round starts from the original position with the remaining players
in their original order, the first of them moving first; the last player left wins. If a round's
start position is already terminal, its first player wins (normal) or is eliminated (misère) at
once.

A state within a round is ``(position, index of the player to move)``. The hero wins a state where
it moves when some move wins; a state where another player moves only when every move wins for the
hero. Remoteness counts the moves to the end of the current round (the hero hurries when winning
and delays when losing). With two players this is exactly the two-player solver.
"""

from __future__ import annotations

from dataclasses import dataclass

from nimlab.theory.budget import Budget, BudgetExceeded
from nimlab.theory.octal import TakeAndBreak
from nimlab.theory.positions import Canon, children, is_terminal

__all__ = ["ParanoidSolver", "ParanoidValue"]


@dataclass(frozen=True, slots=True)
class ParanoidValue:
    """Whether the hero can force a win, and in how many moves the current round ends."""

    hero_wins: bool
    remoteness: int


class ParanoidSolver:
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

    def round_winner_value(
        self, players: tuple[int, ...], hero: int, budget: Budget | None = None
    ) -> bool:
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
                result = first != hero and self.round_winner_value(players[1:], hero, budget)
        else:
            result = self.value(self.start, players, 0, hero, budget).hero_wins
        self._rounds[key] = result
        return result

    def _after_terminal_move(
        self, players: tuple[int, ...], mover: int, hero: int, budget: Budget | None = None
    ) -> bool:
        """The hero's result when ``players[mover]`` moves into a terminal position."""
        if not self.misere:
            return players[mover] == hero
        if players[mover] == hero:
            return False
        rest = players[:mover] + players[mover + 1 :]
        return self.round_winner_value(rest, hero, budget)

    def value(
        self,
        position: Canon,
        players: tuple[int, ...],
        to_move: int,
        hero: int,
        budget: Budget | None = None,
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
            table[(pos, t)] = self._combine(pos, players, t, hero, table, budget)
            self._size += 1
            if budget is not None:
                budget.charge()
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
        budget: Budget | None = None,
    ) -> ParanoidValue:
        nxt = (t + 1) % len(players)
        outcomes: list[tuple[bool, int]] = []
        for c in self._children(pos):
            if self._terminal(c):
                outcomes.append((self._after_terminal_move(players, t, hero, budget), 1))
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
        self,
        child: Canon,
        players: tuple[int, ...],
        mover: int,
        hero: int,
        budget: Budget | None = None,
    ) -> ParanoidValue:
        """The hero's value after ``players[mover]`` moves to ``child`` (remoteness counts that
        move)."""
        if self._terminal(child):
            return ParanoidValue(self._after_terminal_move(players, mover, hero, budget), 1)
        v = self.value(child, players, (mover + 1) % len(players), hero, budget)
        return ParanoidValue(v.hero_wins, v.remoteness + 1)
