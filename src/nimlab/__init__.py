"""nimlab: play, solve and study Nim and its relatives.

The core types, in the style of python-chess::

    >>> from nimlab import Game, Ruleset
    >>> ruleset = Ruleset.parse("nim misere defaults")
    >>> game = Game(ruleset, [3, 4, 5], ["human:Ann", "bot:perfect:Hal"])

and, for a notebook or a script, questions that take a game as ``Game`` takes its rules
(text such as ``"kayles"`` or ``"0.77"``, or a ``Ruleset``) and answer with plain ints::

    >>> import nimlab
    >>> nimlab.analyze("nim", [3, 4, 5]).grundy
    2
    >>> nimlab.grundy("kayles", 12).values
    (0, 1, 2, 3, 1, 4, 3, 2, 1, 4, 2, 6)
    >>> nimlab.grundy_table("wythoff", 4).values[1]      # Wythoff's game: pairs of piles
    (1, 2, 0, 4)
    >>> nimlab.quotient("kayles").proven
    True

Every question that computes takes ``seconds=`` (its time budget; ``analyze`` also takes a
:class:`Budget` as ``budget=``); past it the answer says "not proven" or stops where it got.
Every refusal is a :class:`NimlabError` (a ``ValueError``) with a one-line message:
:class:`ArgumentError` for a count or time out of range, :class:`RulesetError`,
:class:`PositionError`, :class:`PlayerError` and the move errors for the rest.

Positions, games, analyses, Grundy values and quotients draw themselves in Jupyter.

nimlab's names are imported on first use (PEP 562), so ``import nimlab.storage`` or
``nimlab --help`` do not load the engine, NumPy or Numba.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from nimlab._lazy import lazy_exports

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    "Analysis": "nimlab.core.analysis",
    "MoveValue": "nimlab.core.analysis",
    "analyze": "nimlab.core.analysis",
    "Choice": "nimlab.core.bots",
    "make_bot": "nimlab.core.bots",
    "BotSpec": "nimlab.core.players",
    "Player": "nimlab.core.players",
    "parse_bot": "nimlab.core.players",
    "ArgumentError": "nimlab.core.errors",
    "GameOverError": "nimlab.core.errors",
    "IllegalMoveError": "nimlab.core.errors",
    "InvalidMoveError": "nimlab.core.errors",
    "NimlabError": "nimlab.core.errors",
    "PlayerError": "nimlab.core.errors",
    "PositionError": "nimlab.core.errors",
    "RulesetError": "nimlab.core.errors",
    "Game": "nimlab.core.game",
    "Turn": "nimlab.core.game",
    "GameState": "nimlab.core.state",
    "GameRecord": "nimlab.core.record",
    "GameSetup": "nimlab.core.setup",
    "GameKind": "nimlab.core.games",
    "GAMES": "nimlab.core.games",
    "load_game": "nimlab.core.games",
    "parse_game": "nimlab.core.games",
    "Move": "nimlab.core.position",
    "Position": "nimlab.core.position",
    "Rows": "nimlab.core.position",
    "board_for": "nimlab.core.position",
    "DEFAULT_END_POSITIONS": "nimlab.core.ruleset",
    "Ruleset": "nimlab.core.ruleset",
    "Outcome": "nimlab.theory.outcome",
    "Budget": "nimlab.theory.budget",
    "BudgetExceeded": "nimlab.theory.budget",
    "GrundyTable": "nimlab.core.study",
    "GrundyValues": "nimlab.core.study",
    "Quotient": "nimlab.core.study",
    "grundy": "nimlab.core.study",
    "grundy_table": "nimlab.core.study",
    "quotient": "nimlab.core.study",
    "evaluate": "nimlab.ai.measure",
}

__all__ = [
    "DEFAULT_END_POSITIONS",
    "GAMES",
    "Analysis",
    "ArgumentError",
    "BotSpec",
    "Budget",
    "BudgetExceeded",
    "Choice",
    "Game",
    "GameKind",
    "GameOverError",
    "GameRecord",
    "GameSetup",
    "GameState",
    "GrundyTable",
    "GrundyValues",
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
    "Quotient",
    "Rows",
    "Ruleset",
    "RulesetError",
    "Turn",
    "analyze",
    "board_for",
    "evaluate",
    "grundy",
    "grundy_table",
    "load_game",
    "make_bot",
    "parse_bot",
    "parse_game",
    "quotient",
]

if TYPE_CHECKING:
    from nimlab.ai.measure import evaluate
    from nimlab.core.analysis import Analysis, MoveValue, analyze
    from nimlab.core.bots import Choice, make_bot
    from nimlab.core.errors import (
        ArgumentError,
        GameOverError,
        IllegalMoveError,
        InvalidMoveError,
        NimlabError,
        PlayerError,
        PositionError,
        RulesetError,
    )
    from nimlab.core.game import Game, Turn
    from nimlab.core.games import GAMES, GameKind, load_game, parse_game
    from nimlab.core.players import BotSpec, Player, parse_bot
    from nimlab.core.position import Move, Position, Rows, board_for
    from nimlab.core.record import GameRecord
    from nimlab.core.ruleset import DEFAULT_END_POSITIONS, Ruleset
    from nimlab.core.setup import GameSetup
    from nimlab.core.state import GameState
    from nimlab.core.study import (
        GrundyTable,
        GrundyValues,
        Quotient,
        grundy,
        grundy_table,
        quotient,
    )
    from nimlab.theory.budget import Budget, BudgetExceeded
    from nimlab.theory.outcome import Outcome


__getattr__ = lazy_exports(globals(), _EXPORTS)


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
