"""nimlab: play, solve and study Nim and its relatives.

The core types, in the style of python-chess::

    >>> from nimlab import Game, Ruleset
    >>> ruleset = Ruleset.parse("nim misere defaults")
    >>> game = Game(ruleset, [3, 4, 5], ["human:Ann", "bot:perfect:Hal"])
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

_HOME = {
    "Analysis": "nimlab.core.analysis",
    "MoveValue": "nimlab.core.analysis",
    "analyze": "nimlab.core.analysis",
    "BotSpec": "nimlab.core.bots",
    "Choice": "nimlab.core.bots",
    "make_bot": "nimlab.core.bots",
    "parse_bot": "nimlab.core.bots",
    "GameOverError": "nimlab.core.errors",
    "IllegalMoveError": "nimlab.core.errors",
    "InvalidMoveError": "nimlab.core.errors",
    "NimlabError": "nimlab.core.errors",
    "PlayerError": "nimlab.core.errors",
    "PositionError": "nimlab.core.errors",
    "RulesetError": "nimlab.core.errors",
    "Game": "nimlab.core.game",
    "Player": "nimlab.core.game",
    "Turn": "nimlab.core.game",
    "Move": "nimlab.core.position",
    "Position": "nimlab.core.position",
    "Rows": "nimlab.core.position",
    "board_for": "nimlab.core.position",
    "DEFAULT_END_POSITIONS": "nimlab.core.ruleset",
    "GameKind": "nimlab.core.ruleset",
    "Ruleset": "nimlab.core.ruleset",
    "parse_game": "nimlab.core.ruleset",
    "Outcome": "nimlab.theory.outcome",
}
"""Where each public name lives: ``import nimlab`` (and so every ``import nimlab.x``) loads
nothing until a name is used, so ``nimlab --help`` starts fast."""


def __getattr__(name: str) -> Any:
    """Load a public name from its module on first use (PEP 562)."""
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module 'nimlab' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_HOME])
