"""The public, immutable state of a game: what bots, the engine and the interfaces read.

A :class:`GameState` is one moment of a game (OpenSpiel's State): the rules, the start position of
every round, the board now, the seats still in, whose turn it is and the round. The mutable session
with its history, clock and records is :class:`nimlab.core.game.Game`; ``game.state`` gives its
current :class:`GameState`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from nimlab.core.position import Board
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
