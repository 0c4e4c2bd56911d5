"""The one action encoding and observation of every adapter (OpenSpiel, PettingZoo, Gymnasium).

Learning libraries want a fixed-size discrete action space per game. A :class:`Table` is a
ruleset, a start position and a number of players; its :class:`ActionSpace` lists, once, every
move that can ever be legal in a game from that start (heaps only shrink, rows only lose
stones, and a round of misère play with three or more players starts again from the start), in
a fixed order. Action ``i`` is the ``i``-th move of that list:

- heap games on piles (Nim, subtraction games): ``(pile, take)`` for every take the rule allows
  from a heap no larger than the pile's start;
- games on rows of stones (Kayles, octal games, Lasker's Nim, Grundy's game): ``(row, take,
  first stone)`` for every take the rule allows and every place in the row, the splits that
  take nothing (``take == 0``, a cut before the stone) first;
- Wythoff's game: one pile, then the same number from both;
- Moore's Nim_k: every set of at most ``k`` piles with a take from each;
- Staircase Nim: ``(step, coins)``, up to the coins on that step and above;
- Fibonacci Nim: the take, up to the pile.

>>> table = Table.of("nim", [2, 1])
>>> table.actions.size, [str(m) for m in table.actions.moves]
(3, ['1 1', '1 2', '2 1'])
>>> table.actions.legal_actions(table.start)
[0, 1, 2]
>>> str(table.actions.move(1))
'1 2'
>>> Table.of("kayles", [3]).actions.size      # takes of 1 (3 places) and of 2 (2 places)
5

The observation (:meth:`Table.observation`) is a vector of small whole numbers: the board
(pile sizes; Fibonacci Nim also the most the next move may take; rows of stones one entry per
stone, 1 when present, then one per gap between stones, 1 for a cut), then the seat to move
(one-hot) and the seats still in.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import combinations, product

import numpy as np
import numpy.typing as npt

from nimlab.core.errors import InvalidMoveError, PlayerError, PositionError, RulesetError
from nimlab.core.players import Player
from nimlab.core.position import Board, Move, Piles, Position, Rows
from nimlab.core.record import MAX_PLAYERS
from nimlab.core.rules import (
    FibonacciRules,
    MooreRules,
    Rules,
    StaircaseRules,
    WythoffRules,
)
from nimlab.core.ruleset import Ruleset, as_ruleset
from nimlab.core.state import GameState

__all__ = ["MAX_ACTIONS", "ActionSpace", "Table", "canonical_move", "returns"]

MAX_ACTIONS = 1_000_000
"""The most actions a table may have (learning libraries hold a mask of them per step)."""


def canonical_move(move: Move) -> Move:
    """The move with its parts in pile order (how the rules list a move on several piles), so
    that ``"2 3 1 3"`` and ``"1 3 2 3"`` are one action."""
    if not move.also:
        return move
    parts = sorted(move.parts)
    return Move(parts[0][0], parts[0][1], move.at, tuple(parts[1:]))


def _row_moves(rules: Rules, start: Rows) -> Iterator[Move]:
    rule = rules.heap_rule
    assert rule is not None
    for r in range(1, start.pile_count + 1):
        length = start.row_length(r)
        if rule.d0 & 4:
            for at in range(2, length + 1):
                yield Move(r, 0, at=at)
        for k in range(1, length + 1):
            if rule.digit(k):
                for at in range(1, length - k + 2):
                    yield Move(r, k, at=at)


def _pile_moves(rules: Rules, heaps: tuple[int, ...]) -> Iterator[Move]:
    if isinstance(rules, WythoffRules):
        for i, heap in enumerate(heaps, 1):
            for k in range(1, heap + 1):
                yield Move(i, k)
        for k in range(1, min(heaps) + 1):
            yield Move(1, k, also=((2, k),))
    elif isinstance(rules, MooreRules):
        full = [i for i, h in enumerate(heaps, 1) if h]
        for count in range(1, min(rules.k, len(full)) + 1):
            for piles in combinations(full, count):
                for takes in product(*(range(1, heaps[p - 1] + 1) for p in piles)):
                    parts = tuple(zip(piles, takes, strict=True))
                    yield Move(parts[0][0], parts[0][1], also=parts[1:])
    elif isinstance(rules, StaircaseRules):
        for i in range(1, len(heaps) + 1):
            for k in range(1, sum(heaps[i - 1 :]) + 1):
                yield Move(i, k)
    elif isinstance(rules, FibonacciRules):
        for k in range(1, heaps[0] + 1):
            yield Move(1, k)
    elif rules.heap_rule is not None:
        rule = rules.heap_rule
        for i, heap in enumerate(heaps, 1):
            for k in range(1, heap + 1):
                if rule.digit(k) & 3:
                    yield Move(i, k)
    else:  # pragma: no cover - a game added to the registry without an encoding
        raise RulesetError(f"{type(rules).__name__}: no action encoding for this game yet")


def _count_moves(rules: Rules, start: Board) -> int:
    """How many actions :func:`_all_moves` lists, without listing them (to refuse a table too
    large before building it). O(piles * k) or O(rows * length)."""
    heaps = start.heaps if not isinstance(start, Rows) else ()
    if isinstance(start, Rows):
        rule = rules.heap_rule
        assert rule is not None
        total = 0
        for r in range(1, start.pile_count + 1):
            n = start.row_length(r)
            total += max(n - 1, 0) if rule.d0 & 4 else 0
            total += sum(n - k + 1 for k in range(1, n + 1) if rule.digit(k))
        return total
    if isinstance(rules, MooreRules):
        e = [1] + [0] * rules.k
        for h in heaps:
            for j in range(rules.k, 0, -1):
                e[j] += e[j - 1] * h
        return sum(e[1:])
    if isinstance(rules, StaircaseRules):
        return sum(sum(heaps[i:]) for i in range(len(heaps)))
    if isinstance(rules, WythoffRules):
        return sum(heaps) + min(heaps)
    return sum(heaps)  # an upper bound for heap games on piles and Fibonacci Nim


def _all_moves(rules: Rules, start: Board) -> Iterator[Move]:
    if isinstance(start, Rows):
        return _row_moves(rules, start)
    return _pile_moves(rules, start.heaps)


@dataclass(frozen=True, eq=False)
class ActionSpace:
    """Every move that can be legal in a game from ``start``, numbered from 0 (see the module).
    Built in O(actions); :meth:`action` and :meth:`move` are O(1)."""

    rules: Rules
    start: Board
    moves: tuple[Move, ...]
    _index: dict[Move, int] = field(repr=False)

    @classmethod
    def of(cls, rules: Rules, start: Board) -> ActionSpace:
        """The action space of ``rules`` from ``start``. Raises :class:`PositionError` beyond
        :data:`MAX_ACTIONS` actions."""
        return _action_space(rules, start)  # type: ignore[arg-type]  # frozen dataclasses

    @property
    def size(self) -> int:
        return len(self.moves)

    def action(self, move: Move) -> int:
        """The action of ``move``; raises :class:`InvalidMoveError` for a move no position of
        this game allows."""
        index = self._index.get(canonical_move(move))
        if index is None:
            raise InvalidMoveError(f"move {move} is never legal in this game from this start")
        return index

    def move(self, action: int) -> Move:
        """The move of ``action``; raises :class:`InvalidMoveError` outside ``0 .. size - 1``."""
        if isinstance(action, bool) or not 0 <= int(action) < len(self.moves):
            raise InvalidMoveError(f"action {action!r}: actions are 0 to {len(self.moves) - 1}")
        return self.moves[int(action)]

    def legal_actions(self, board: Board) -> list[int]:
        """The actions of the legal moves on ``board``, ascending. O(moves)."""
        rule = self.rules.heap_rule
        if isinstance(board, Position) and rule is not None:
            # (pile, take) in the order of the actions: no Move made, no sort needed
            index = self._index
            return [index[Move(i, k)] for i, k in board.takes(rule)]
        return sorted(self._index[canonical_move(m)] for m in self.rules.legal_moves(board))

    def mask(self, board: Board) -> npt.NDArray[np.int8]:
        """1 for each legal action on ``board``, else 0 (length :attr:`size`)."""
        out = np.zeros(len(self.moves), dtype=np.int8)
        out[self.legal_actions(board)] = 1
        return out


@lru_cache(maxsize=8)
def _action_space(rules: Rules, start: Board) -> ActionSpace:
    count = _count_moves(rules, start)
    if count > MAX_ACTIONS:
        raise PositionError(
            f"this start has about {count:,} actions: at most {MAX_ACTIONS:,} "
            "(choose smaller piles or fewer of them)"
        )
    moves = tuple(_all_moves(rules, start))
    return ActionSpace(rules, start, moves, {m: i for i, m in enumerate(moves)})


def returns(state: GameState) -> list[float]:
    """What each seat gets at the end: 1 for the winner and ``-1 / (players - 1)`` for each of
    the others (a zero-sum game); zeros while the game goes on."""
    n = len(state.players)
    if state.winner is None:
        return [0.0] * n
    return [1.0 if s == state.winner else -1.0 / (n - 1) for s in range(n)]


def _heaps_of(start: object) -> list[int]:
    if isinstance(start, str):
        return [int(t) for t in start.replace(",", " ").replace(".", " ").split()]
    if isinstance(start, Iterable):
        return list(start)
    raise PositionError(f"a start position is heap sizes like [3, 4, 5], not {start!r}")


@dataclass(frozen=True, eq=False)
class Table:
    """A game ready for learning: the ruleset, the start position, the number of players and
    the :class:`ActionSpace`. Every adapter is made from one."""

    ruleset: Ruleset
    start: Board
    players: int
    actions: ActionSpace

    @classmethod
    def of(
        cls,
        game: Ruleset | str = "nim",
        start: Iterable[int] | Board | str = (3, 4, 5),
        *,
        misere: bool | None = None,
        end: Sequence[Iterable[int] | str] | str = (),
        players: int = 2,
    ) -> Table:
        """A table of ``game`` (a ruleset or its text, e.g. ``"kayles misere"``) from ``start``
        (heap sizes, as a list or text such as ``"5 7"``, or a board), with ``misere`` play
        when given, extra end positions ``end`` (heap lists, or text like ``"2.2.2 1.2.3"``;
        ``"defaults"`` for the classic ones), and ``players`` seats (2, or more where the rules
        are solved for them: games of three or more in misère play go in elimination rounds).
        Raises a :class:`~nimlab.core.errors.NimlabError` saying what is allowed."""
        ruleset = as_ruleset(game)
        if misere is not None and misere != ruleset.misere:
            ruleset = Ruleset(ruleset.game, misere, ruleset.end_positions)
        if isinstance(end, str):
            words = end.split()
            if "defaults" in words:
                ruleset = ruleset.with_defaults()
            ends: list[Iterable[int] | str] = [w for w in words if w != "defaults"]
        else:
            ends = list(end)
        if ends:
            ruleset = ruleset.with_end_positions(*ends)
        given = start if isinstance(start, Position | Rows | Piles) else _heaps_of(start)
        board = ruleset.rules.as_board(given)
        if board.pile_count == 0 or ruleset.is_over(board):
            raise PositionError("the start position is already an end position: nothing to play")
        if isinstance(players, bool) or not isinstance(players, int) or players < 2:
            raise PlayerError(f"players {players!r}: a game needs at least two players")
        most = ruleset.rules.max_players
        most = MAX_PLAYERS if most is None else min(most, MAX_PLAYERS)
        if players > most:
            raise PlayerError(f"{ruleset.game.title} is played by at most {most} players")
        return cls(ruleset, board, players, ActionSpace.of(ruleset.rules, board))

    # -- states -------------------------------------------------------------------------------

    def initial_state(self) -> GameState:
        """The state before the first move (seat 0 to move)."""
        return GameState(
            ruleset=self.ruleset,
            start=self.start,
            board=self.start,
            players=tuple(Player(f"player_{i}") for i in range(self.players)),
            active=tuple(range(self.players)),
            to_move=0,
        ).settled()

    def play(self, state: GameState, action: int) -> GameState:
        """The state after the player to move plays ``action``; raises
        :class:`~nimlab.core.errors.IllegalMoveError` or :class:`InvalidMoveError`."""
        return state.play(self.actions.move(action))

    @property
    def max_game_length(self) -> int:
        """An upper bound on the moves of one game: the moves of a round (each takes at least
        one object, a split that takes nothing adds a run, a coin goes down at most its step
        count) times the rounds (elimination rounds with three or more players in misère)."""
        heaps = self.start.heaps
        if isinstance(self.ruleset.rules, StaircaseRules):
            per_round = sum(i * h for i, h in enumerate(heaps, 1))
        elif isinstance(self.start, Rows) and self.ruleset.rules.heap_rule is not None:
            per_round = sum(heaps) * (2 if self.ruleset.rules.heap_rule.d0 & 4 else 1)
        else:
            per_round = sum(heaps)
        rounds = self.players - 1 if self.ruleset.misere and self.players > 2 else 1
        return max(1, per_round * rounds)

    # -- observations -------------------------------------------------------------------------

    @property
    def board_size(self) -> int:
        """The length of :meth:`board_features`."""
        if isinstance(self.start, Rows):
            return sum(2 * n - 1 for n in map(self.start.row_length, self._rows) if n)
        extra = 1 if isinstance(self.ruleset.rules, FibonacciRules) else 0
        return len(self.start.heaps) + extra

    @property
    def _rows(self) -> range:
        return range(1, self.start.pile_count + 1)

    @property
    def observation_size(self) -> int:
        return self.board_size + 2 * self.players

    @property
    def observation_high(self) -> int:
        """The largest entry an observation may hold (every entry is 0 or more)."""
        return max(1, sum(self.start.heaps))

    def board_features(self, board: Board) -> list[int]:
        """The board as whole numbers (see the module); same length for every board of a game
        from this start."""
        if isinstance(board, Rows):
            out: list[int] = []
            for segments in board.rows:
                stones: list[int] = []
                cuts: list[int] = []
                for i, n in enumerate(segments):
                    if i % 2 == 0:
                        stones += [1] * n
                    else:
                        stones += [0] * n
                        if n == 0:
                            cuts.append(len(stones) - 1)
                if not stones:
                    continue
                gaps = [0] * (len(stones) - 1)
                for c in cuts:
                    gaps[c] = 1
                out += stones + gaps
            return out
        features = list(board.heaps)
        if isinstance(self.ruleset.rules, FibonacciRules):
            features.append(int(board.canonical[1]))
        return features

    def observation(self, state: GameState) -> npt.NDArray[np.int64]:
        """:meth:`board_features`, then the seat to move (one-hot; none once the game is over)
        and the seats still in (1 each)."""
        seat = [0] * self.players
        if state.winner is None:
            seat[state.to_move] = 1
        active = [1 if s in state.active else 0 for s in range(self.players)]
        return np.array(self.board_features(state.board) + seat + active, dtype=np.int64)
