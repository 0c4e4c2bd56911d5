"""Typed errors. Every one is a ``ValueError`` whose message says what was wrong and what is
allowed, so interfaces can show it to people as it is."""

from __future__ import annotations

__all__ = [
    "ArgumentError",
    "GameOverError",
    "IllegalMoveError",
    "InvalidMoveError",
    "NimlabError",
    "PlayerError",
    "PositionError",
    "RulesetError",
]


class NimlabError(ValueError):
    """Base class of nimlab's input errors."""


class ArgumentError(NimlabError):
    """A number or option out of its range or of the wrong type: a count of values, a time
    budget (``seconds``), a bound."""


class RulesetError(NimlabError):
    """A ruleset, game name, octal code, subtraction set or end position that cannot be used."""


class PositionError(NimlabError):
    """A position (list of heap sizes) that cannot be used."""


class InvalidMoveError(NimlabError):
    """Move text that cannot be read as a move at all."""


class IllegalMoveError(NimlabError):
    """A well-formed move that the rules do not allow in the current position."""


class GameOverError(NimlabError):
    """A move or undo was asked of a game in a state that does not allow it."""


class PlayerError(NimlabError):
    """A player or bot specification that cannot be used."""
