"""What every command shares: the ruleset options, positions from the command line, and errors
that end the command with a message and exit status 2 (no traceback)."""

from __future__ import annotations

from typing import Annotated, NoReturn

import typer
from rich.console import Console

from nimlab.cli.app import UsageError
from nimlab.core.games import game_choices
from nimlab.core.position import Board, board_for
from nimlab.core.ruleset import Ruleset
from nimlab.core.setup import ruleset_from

__all__ = [
    "DefaultsOption",
    "EndOption",
    "GameOption",
    "MisereOption",
    "UsageError",
    "board_from_args",
    "console",
    "err_console",
    "fail",
    "ruleset_from_options",
]

console = Console()
err_console = Console(stderr=True)


def fail(message: str) -> NoReturn:
    raise UsageError(message)


GameOption = Annotated[
    str, typer.Option("--game", "-g", help=f"The game: {game_choices()}.", metavar="GAME")
]
MisereOption = Annotated[
    bool, typer.Option("--misere", help="Misère play: whoever moves into an end position loses.")
]
EndOption = Annotated[
    list[str] | None,
    typer.Option(
        "--end",
        "-e",
        help="An extra end position, e.g. 2,2,2 (repeatable; order and empty piles ignored).",
        metavar="H,H,H",
    ),
]
DefaultsOption = Annotated[
    bool,
    typer.Option("--defaults", help="Add the classic end positions [2,2,2], [1,2,3], [1,1,2,2]."),
]


PileCountOption = Annotated[
    str, typer.Option("--pile-count", help="Random piles: how many, e.g. 5 or 3-5.")
]
PileSizeOption = Annotated[str, typer.Option("--pile-size", help="Random piles: sizes, e.g. 1-9.")]


def ruleset_from_options(game: str, misere: bool, end: list[str] | None, defaults: bool) -> Ruleset:
    """The ruleset the common options describe; raises :class:`NimlabError` for bad values."""
    return ruleset_from(game, misere, end or (), defaults=defaults)


def board_from_args(ruleset: Ruleset, heaps: list[str]) -> Board:
    """A board from heap sizes typed on the command line: ``3 4 5`` or ``3,4,5`` (the same
    syntax everywhere a position is typed)."""
    sizes = [part for word in heaps for part in word.replace(",", " ").split()]
    if not sizes:
        fail("give the position as heap sizes, e.g. 3 4 5 (or 3,4,5)")
    return board_for(ruleset.rule, sizes)
