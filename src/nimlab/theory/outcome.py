"""Outcome classes of combinatorial game theory."""

from __future__ import annotations

from enum import StrEnum

__all__ = ["Outcome"]


class Outcome(StrEnum):
    """The outcome class of a position for two players.

    ``P``: the *previous* player (who just moved) wins with perfect play.
    ``N``: the *next* player (to move) wins with perfect play.
    """

    P = "P"
    N = "N"

    @classmethod
    def of(cls, next_player_wins: bool) -> Outcome:
        return cls.N if next_player_wins else cls.P

    @property
    def next_player_wins(self) -> bool:
        return self is Outcome.N

    @property
    def description(self) -> str:
        """Plain words for people."""
        if self is Outcome.N:
            return "N-position (Next player wins): the player to move wins with perfect play"
        return "P-position (Previous player wins): the player who just moved wins with perfect play"
