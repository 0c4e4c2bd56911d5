"""What every command shares: the ruleset options, positions from the command line, the
``--seconds`` check, files to read and to write, and errors that end the command with one line
and its exit status (2: the request was wrong; 1: it could not be done; see docs/errors.md)."""

from __future__ import annotations

import math
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console
from typer.core import TyperCommand

from nimlab.cli.app import NotDoneError, UsageError
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
    "NotDoneError",
    "UsageError",
    "board_from_args",
    "cannot",
    "check_first_auto",
    "check_output",
    "console",
    "err_console",
    "fail",
    "first_ctrl_c_stops",
    "heap_words",
    "input_file",
    "number_check",
    "pile_count_default",
    "position_words",
    "progress_bar",
    "read_input_text",
    "ruleset_from_options",
    "save_atomically",
    "seconds_check",
    "showing_progress",
    "write_atomically",
]

console = Console(emoji=False)  # (no ":name:" in nimlab's text is an emoji code)
err_console = Console(stderr=True, emoji=False)


def write_atomically(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (a crash leaves the old file or the new: a
    temporary file beside it, synced, then renamed); raises ``OSError``, leaving no temporary
    file behind."""
    tmp = path.with_name(path.name + ".tmp")
    try:
        with open(tmp, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except OSError:
        tmp.unlink(missing_ok=True)
        raise


def save_atomically(path: Path, data: bytes) -> bool:
    """Write ``data`` to ``path`` atomically (see :func:`write_atomically`); on failure say why
    on stderr (the computation goes on) and return False. For the state of long runs
    (``--save``)."""
    try:
        write_atomically(path, data)
    except OSError as exc:
        err_console.print(
            f"[red]Cannot save to {path}: {exc.strerror or exc}[/red]", highlight=False
        )
        return False
    return True


PROGRESS_AFTER = 1.0
"""Seconds a command works before :func:`showing_progress` shows what it does."""


def progress_bar(title: str, *columns: str, disable: bool = False) -> Any:
    """The progress bar of a long command, as every command shows it: on stderr and only when
    stderr is a terminal (and not ``disable``: nothing at all is printed otherwise), gone once
    done; ``TITLE``, the bar, then ``columns``: ``"m of n"`` (completed of total),
    ``"line"`` (the task's field ``line``), ``"elapsed"``, ``"remaining"``. A
    :class:`rich.progress.Progress`, to be used as a context manager."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        ProgressColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    made: dict[str, Callable[[], ProgressColumn]] = {
        "m of n": MofNCompleteColumn,
        "line": lambda: TextColumn("{task.fields[line]}"),
        "elapsed": TimeElapsedColumn,
        "remaining": TimeRemainingColumn,
    }
    return Progress(
        TextColumn(f"[bold]{title}"),
        BarColumn(),
        *(made[c]() for c in columns),
        console=err_console,
        transient=True,
        disable=disable or not err_console.is_terminal,
    )


@contextmanager
def showing_progress(describe: Callable[[], str], after: float | None = None) -> Iterator[None]:
    """While the block runs, one line on stderr saying what is being done and how far
    (``describe()``, asked again a few times a second from another thread), from ``after``
    seconds on (default :data:`PROGRESS_AFTER`; at once, in this thread, when 0), and gone
    once the block ends; only when stderr is a terminal: nothing at all is printed otherwise,
    and ``describe`` is never called."""
    if not err_console.is_terminal:
        yield
        return
    from rich.live import Live
    from rich.text import Text

    class _Line:
        def __rich__(self) -> Text:
            return Text(describe(), style="dim", no_wrap=True, overflow="ellipsis")

    live = Live(_Line(), console=err_console, transient=True, refresh_per_second=4)
    lock = threading.Lock()
    ended = False

    def start() -> None:
        with lock:
            if not ended:
                live.start()

    wait = PROGRESS_AFTER if after is None else after
    timer = None
    if wait <= 0:
        start()
    else:
        timer = threading.Timer(wait, start)
        timer.daemon = True
        timer.start()
    try:
        yield
    finally:
        if timer is not None:
            timer.cancel()
        with lock:
            ended = True
            if live.is_started:
                live.stop()


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
    """End the command: the request was wrong (one line ``error: message``, exit status 2)."""
    raise UsageError(message)


def cannot(message: str) -> NoReturn:
    """End the command: it could not be done (one line ``error: message``, exit status 1)."""
    raise NotDoneError(message)


def number_check(
    what: str, low: float = 0.0, high: float | None = None, example: str = "20"
) -> Callable[[float | None], float | None]:
    """The check of an option that takes a number (``what``: ``"a number of seconds"``), the
    same for every command: a finite number from ``low`` to ``high`` (``None``: no bound
    above); ``nan``, ``inf`` and numbers out of range are refused with one message (exit
    status 2). Use as ``typer.Option(callback=...)``."""
    allowed = f"from {low:g} to {high:g}" if high is not None else f"{low:g} or more"

    def check(value: float | None) -> float | None:
        if value is None:
            return None
        if not math.isfinite(value) or value < low or (high is not None and value > high):
            raise typer.BadParameter(f"{value:g} is not {what} {allowed} (e.g. {example})")
        return value

    return check


def seconds_check(
    low: float = 0.0, high: float | None = None
) -> Callable[[float | None], float | None]:
    """The check of every ``--seconds`` option (see :func:`number_check`)."""
    return number_check("a number of seconds", low, high)


def input_file(source: str, what: str = "file") -> Path:
    """The file named ``source`` for reading, checked: one that does not exist or is a folder
    is a wrong request (exit status 2)."""
    path = Path(source)
    if path.is_dir():
        fail(f"{what} {source!r} is a folder, not a file: give the file's name")
    if not path.exists():
        fail(f"{what} {source!r} does not exist")
    return path


def read_input_text(source: str, what: str = "file") -> str:
    """The text of the file ``source`` (``-``: standard input), which must be UTF-8: a file that
    does not exist, is a folder or is not UTF-8 text is a wrong request (exit status 2); one
    that exists and cannot be read could not be done (exit status 1)."""
    try:
        if source == "-":
            stream = getattr(sys.stdin, "buffer", None)
            if stream is None:  # a text stream only: already decoded
                return str(sys.stdin.read())
            data: bytes = stream.read()
        else:
            data = input_file(source, what).read_bytes()
    except OSError as e:
        cannot(f"cannot read {what} {source!r}: {e.strerror or e}")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        shown = "standard input" if source == "-" else f"{what} {source!r}"
        fail(f"{shown} is not UTF-8 text (byte {e.start + 1} cannot be read): give a UTF-8 file")


def check_output(path: Path, option: str) -> None:
    """Check before any work that a file can be written at ``path`` (given by ``option``, e.g.
    ``"--save x.run"``), leaving nothing behind: a folder is a wrong request (exit status 2);
    a place that cannot be written (a missing folder, no permission, a read-only file system)
    means it could not be done (exit status 1)."""
    if path.is_dir():
        fail(f"{option} is a folder: give a file name")
    folder = path.parent
    if folder.exists() and not folder.is_dir():
        cannot(f"cannot write {option}: {str(folder)!r} is a file, not a folder")
    if not folder.is_dir():
        cannot(
            f"cannot write {option}: the folder {str(folder)!r} does not exist "
            "(create it first, or write the file elsewhere)"
        )
    probe = folder / f".{path.name}.{os.getpid()}.probe"  # files are written beside, renamed
    try:
        with open(probe, "wb"):
            pass
        probe.unlink()
    except OSError as e:
        cannot(f"cannot write {option}: {e.strerror or e}")


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
    str | None,
    typer.Option(
        "--pile-count",
        help="Random piles: how many, e.g. 5 or 3-5 (default: 3-5, or the game's number of piles).",
        show_default=False,
    ),
]
PileSizeOption = Annotated[str, typer.Option("--pile-size", help="Random piles: sizes, e.g. 1-9.")]


def ruleset_from_options(game: str, misere: bool, end: list[str] | None, defaults: bool) -> Ruleset:
    """The ruleset the common options describe; raises :class:`NimlabError` for bad values."""
    return ruleset_from(game, misere, end or (), defaults=defaults)


def heap_words(words: list[str]) -> list[str]:
    """The heap sizes typed as ``words``: ``3 4 5`` or ``3,4,5`` (the same syntax everywhere a
    position is typed). An empty item (``3,,4``, ``3,``) is refused rather than skipped.
    O(length of the words)."""
    text = " ".join(words)
    sizes: list[str] = []
    for item in text.split(","):
        parts = item.split()
        if not parts and "," in text:
            fail(
                f"{text[:40]!r} has an empty heap size (two commas in a row, or a comma at an "
                "end): write heap sizes like 3,4,5 (or 3 4 5)"
            )
        sizes.extend(parts)
    return sizes


def check_first_auto(first: str, players: int, others: str) -> None:
    """``--first auto`` is for two players (it lets the player in the winning position start):
    with more it is refused, the same for ``play`` and ``simulate``; ``others`` names the
    choices that remain (e.g. ``"--first first or --first random"``)."""
    if first == "auto" and players > 2:
        fail(
            f"--first auto is for two players (it lets the player in the winning position "
            f"start); with {players} players use {others}"
        )


def pile_count_default(ruleset: Ruleset, given: str | None) -> str:
    """``--pile-count`` as given, else the default for the game: its number of piles where it
    is played on a fixed number (Wythoff's game: 2), else 3-5."""
    if given is not None:
        return given
    piles = getattr(ruleset.rules, "piles", None)
    return str(piles) if isinstance(piles, int) else "3-5"


def board_from_args(ruleset: Ruleset, heaps: list[str]) -> Board:
    """A board from heap sizes typed on the command line: ``3 4 5`` or ``3,4,5`` (see
    :func:`heap_words`)."""
    sizes = heap_words(heaps)
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
