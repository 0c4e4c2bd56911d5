"""The public, immutable state of a game: what bots, the engine and the interfaces read.

A :class:`GameState` is one moment of a game (OpenSpiel's State): the rules, the start position of
every round, the board now, the seats still in, whose turn it is and the round. The mutable session
with its history, clock and records is :class:`nimlab.core.game.Game`; ``game.state`` gives its
current :class:`GameState`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from nimlab.core.position import Board, Move
from nimlab.core.ruleset import Ruleset

if TYPE_CHECKING:
    from nimlab.core.players import Player

__all__ = ["GameState"]


@dataclass(frozen=True, slots=True)
class GameState:
    """One moment of a game, immutable.

    ``active`` lists the seats still in (seat order); ``to_move`` is the seat to move;
    ``winner`` is the winning seat once the game is over. With more than two players in misère
    play every round starts again from ``start`` (elimination rounds).
    """

    ruleset: Ruleset
    start: Board
    board: Board
    players: tuple[Player, ...]
    active: tuple[int, ...]
    to_move: int
    round: int = 1
    eliminated: tuple[int, ...] = ()
    winner: int | None = None

    @property
    def is_over(self) -> bool:
        return self.winner is not None

    def moved(self, board: Board, to_move: int) -> GameState:
        """This state with ``board`` and ``to_move`` (a move that ends nothing): what
        ``dataclasses.replace`` gives, made directly (a few times faster, twice a move)."""
        return GameState(
            self.ruleset,
            self.start,
            board,
            self.players,
            self.active,
            to_move,
            self.round,
            self.eliminated,
            self.winner,
        )

    @property
    def mover_index(self) -> int:
        """The index of the player to move within :attr:`active`."""
        return self.active.index(self.to_move)

    @property
    def player_count(self) -> int:
        """Players still in the game."""
        return len(self.active)

    def play(self, move: Move) -> GameState:
        """The state after the player to move plays ``move`` (the game's rules move on: the
        next active seat moves, or the round ends at an end position, see :meth:`end_round`).
        Raises :class:`~nimlab.core.errors.IllegalMoveError` for an illegal move; the game must
        not be over. O(the rules' move)."""
        return self.advance(self.ruleset.rules.play(self.board, move))

    def advance(self, after: Board) -> GameState:
        """The state once the player to move has left the board ``after`` (the result of a
        legal move, as :meth:`play` makes it)."""
        if self.ruleset.is_over(after):
            return replace(self, board=after).end_round(self.to_move).settled()
        i = self.active.index(self.to_move)
        return self.moved(after, self.active[(i + 1) % len(self.active)])

    def end_round(self, seat: int) -> GameState:
        """The state once ``seat`` has moved into the terminal position :attr:`board` (or was
        to move first from it): in normal play that player wins; in misère play that player is
        eliminated, and either the last player left wins or a new round starts from the start
        position with the others in seat order, the first of them to move."""
        if not self.ruleset.misere:
            return replace(self, winner=seat)
        rest = tuple(s for s in self.active if s != seat)
        eliminated = (*self.eliminated, seat)
        if len(rest) == 1:
            return replace(self, active=rest, eliminated=eliminated, winner=rest[0])
        return replace(
            self,
            board=self.start,
            active=rest,
            to_move=rest[0],
            round=self.round + 1,
            eliminated=eliminated,
        )

    def settled(self) -> GameState:
        """This state with the rounds resolved whose start position is already an end
        position (the player to move there moved into it)."""
        state = self
        while state.winner is None and state.ruleset.is_over(state.board):
            state = state.end_round(state.to_move)
        return state
