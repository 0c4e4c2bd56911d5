"""nimlab: play, solve and study Nim and its relatives.

The core types, in the style of python-chess::

    >>> from nimlab import Game, Ruleset
    >>> ruleset = Ruleset.parse("nim misere defaults")
    >>> game = Game(ruleset, [3, 4, 5], ["human:Ann", "bot:perfect:Hal"])
"""

from nimlab.core.analysis import Analysis, MoveValue, analyze
from nimlab.core.bots import BotSpec, Choice, make_bot, parse_bot
from nimlab.core.errors import (
    GameOverError,
    IllegalMoveError,
    InvalidMoveError,
    NimlabError,
    PlayerError,
    PositionError,
    RulesetError,
)
from nimlab.core.game import Game, Player, Turn
from nimlab.core.position import Move, Position, Rows, board_for
from nimlab.core.ruleset import DEFAULT_END_POSITIONS, GameKind, Ruleset, parse_game
from nimlab.theory.outcome import Outcome

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_END_POSITIONS",
    "Analysis",
    "BotSpec",
    "Choice",
    "Game",
    "GameKind",
    "GameOverError",
    "IllegalMoveError",
    "InvalidMoveError",
    "Move",
    "MoveValue",
    "NimlabError",
    "Outcome",
    "Player",
    "PlayerError",
    "Position",
    "PositionError",
    "Rows",
    "Ruleset",
    "RulesetError",
    "Turn",
    "analyze",
    "board_for",
    "make_bot",
    "parse_bot",
    "parse_game",
]
