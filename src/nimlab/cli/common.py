"""What every command shares: the ruleset options, positions from the command line, and errors
that end the command with a message and exit status 2 (no traceback)."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console
from typer.core import TyperCommand

from nimlab.cli.app import UsageError
from nimlab.core.games import game_choices
from nimlab.core.position import Board
from nimlab.core.ruleset import Ruleset
from nimlab.core.setup import ruleset_from

__all__ = [
    "DefaultsOption",
    "EndOption",
    "GameOption",
    "KeepsArgs",
    "MisereOption",
    "UsageError",
    "board_from_args",
    "console",
    "err_console",
    "fail",
    "first_ctrl_c_stops",
    "position_words",
    "ruleset_from_options",
    "save_atomically",
]

console = Console()
err_console = Console(stderr=True)


def save_atomically(path: Path, data: bytes) -> bool:
    """Write ``data`` to ``path`` atomically (a crash leaves the old file or the new: a
    temporary file beside it, synced, then renamed); on failure say why on stderr (the
    computation goes on) and return False. For the state of long runs (``--save``)."""
    tmp = path.with_name(path.name + ".tmp")
    try:
        with open(tmp, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        err_console.print(
            f"[red]Cannot save to {path}: {exc.strerror or exc}[/red]", highlight=False
        )
        return False
    return True


@contextmanager
def first_ctrl_c_stops(stop: Callable[[], None]) -> Iterator[None]:
    """While active in the main thread, the first Ctrl-C calls ``stop`` (a long run then ends at
    its next check, keeping what it has, and can be saved); a second one interrupts at once.
    Elsewhere (a thread of the test runner) nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_sigint(signum: int, frame: FrameType | None) -> None:
        stop()
        signal.signal(signal.SIGINT, signal.default_int_handler)

    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


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
    return ruleset.rules.start(sizes)


ARGV_KEY = "nimlab.argv"


class KeepsArgs(TyperCommand):
    """A command that keeps the words it was given (in ``ctx.meta``), so it can tell which came
    where: see :func:`position_words`."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        ctx.meta[ARGV_KEY] = list(args)
        result: list[str] = super().parse_args(ctx, args)
        return result


def position_words(ctx: typer.Context, option: str = "--piles", short: str = "-p") -> list[str]:
    """The start position typed for a :class:`KeepsArgs` command, ``3 4 5`` or ``3,4,5``, as
    arguments or after ``--piles`` (which takes the words after it up to the next option):
    ``--piles 3 4 5``, ``--piles 3,4,5`` and ``3 4 5`` are the same position. A position given
    both ways (``3 4 5 --piles 1 2``) or split by other options is refused with a message.
    O(number of words)."""
    argv: list[str] = ctx.meta.get(ARGV_KEY, [])
    takes_value: set[str] = set()
    for param in ctx.command.params:
        if param.param_type_name == "option" and not getattr(param, "is_flag", False):
            takes_value.update(param.opts)
    before: list[str] = []  # arguments outside --piles
    piles: list[str] = []
    in_piles = False
    i = 0
    while i < len(argv):
        word = argv[i]
        if word == "--":
            before.extend(argv[i + 1 :])
            break
        if word in (option, short):
            in_piles = True
        elif word.startswith(option + "="):
            piles.append(word[len(option) + 1 :])
            in_piles = False
        elif word.startswith("-") and not word[1:].replace(",", "").isdigit():
            in_piles = False
            if word in takes_value:
                i += 1  # the option's value
        elif in_piles:
            piles.append(word)
        else:
            before.append(word)
        i += 1
    if piles and before:
        fail(
            f"the start position is given twice ({' '.join(before)} and --piles "
            f"{' '.join(piles)}): give it once, e.g. 3 4 5 or --piles 3,4,5"
        )
    return piles or before
