"""The Typer application every command module registers on, and how the command line runs.

Commands load lazily: ``nimlab --help`` lists every command from :data:`COMMANDS` without
importing any command module, and ``nimlab COMMAND`` imports only the module that defines
COMMAND (which registers itself on :data:`app` with ``@app.command``). So the registry commands
start without NumPy, Numba, FastAPI or the engine. ``tests/test_cli_app.py`` checks that the
table below matches the commands the modules define.
"""

from __future__ import annotations

import importlib
import io
import sys
from typing import Annotated, Any

import typer
from typer.core import TyperCommand, TyperGroup

from nimlab import _start

__all__ = ["COMMANDS", "FullHelpGroup", "NotDoneError", "UsageError", "app", "os_error_text", "run"]

COMMANDS: dict[str, tuple[str, str]] = {
    "analyze": (
        "nimlab.cli.analyze",
        "Analyse a position: who wins, why, and the value of every legal move.",
    ),
    "grundy": (
        "nimlab.cli.grundy",
        "Grundy values of a take-and-break game, with its period proven by the Guy–Smith theorem "
        "(games that split heaps) or the window argument (games that never do).",
    ),
    "census": (
        "nimlab.cli.census",
        "Grundy sequences of every octal game up to D code digits, as a table (CSV and JSON).",
    ),
    "play": (
        "nimlab.cli.play",
        "Play a game at the terminal: you against a perfect bot on 3 4 5 unless told otherwise.",
    ),
    "rankings": (
        "nimlab.cli.players",
        "Players by win rate (ties by username; top 10 by default).",
    ),
    "quotient": (
        "nimlab.cli.quotient",
        "The misère quotient of a take-and-break game, verified heap by heap.",
    ),
    "history": ("nimlab.cli.records", "The stored games, newest first."),
    "replay": ("nimlab.cli.records", "Step through a stored game move by move."),
    "export": (
        "nimlab.cli.records",
        'Write stored games as JSON ({"format": "nimlab-games/1", "games": [...]}).',
    ),
    "import": ("nimlab.cli.records", "Add the games of an export file to the history."),
    "delete-game": (
        "nimlab.cli.records",
        "Delete stored games from the history. Statistics are not changed.",
    ),
    "serve": (
        "nimlab.cli.serve",
        "The web app: set up, play, analyse and keep games in the browser (Ctrl+C stops it).",
    ),
    "prepare": (
        "nimlab.cli.prepare",
        "Compile the solvers now into their cache, which a first start does otherwise (30-60 s).",
    ),
    "shell": (
        "nimlab.cli.shell",
        "The Nim Game System shell: register players and play its two games by typed commands.",
    ),
    "simulate": (
        "nimlab.cli.simulate",
        "Play many bot-against-bot games and report each bot's win rate with a 95 % confidence "
        "interval (Wilson).",
    ),
    "players": (
        "nimlab.cli.players",
        "The player registry: humans and AI players with their statistics.",
    ),
    "db": ("nimlab.cli.database", "Which database is in use, and what it holds."),
}
"""Every top-level command in the order of ``--help``: the module that defines it and its
one-line help (the first paragraph of the command's own help)."""


def _framework_error(name: str) -> type[Exception]:
    """The framework's own exception class ``name`` (Typer does not export it)."""
    return next(c for c in typer.BadParameter.__mro__ if c.__name__ == name)


_UsageError = _framework_error("UsageError")
_ClickException = _framework_error("ClickException")


class UsageError(Exception):
    """The request was wrong (bad usage or input): reported on stderr, exit status 2."""


class NotDoneError(Exception):
    """A right request that could not be done (a file that cannot be written, a cluster that
    cannot be reached...): reported on stderr, exit status 1."""


def os_error_text(error: OSError, doing: str | None = None) -> str:
    """An operating-system error in words, without the exception's name or errno:
    ``cannot write 'x.db': Read-only file system``. ``doing`` (e.g. ``"cannot write"``) says
    what was being done, else it is guessed from the error."""
    where = error.filename
    reason = error.strerror or str(error) or "failed"
    if doing is None:
        doing = "cannot use" if where is not None else "could not be done"
    if where is None:
        return f"{doing}: {reason}"
    return f"{doing} {str(where)!r}: {reason}"


class _Pending(TyperCommand):
    """A command whose module is not loaded yet: just enough (name and one-line help) for
    ``--help`` and for suggestions on a mistyped command."""


class FullHelpGroup(TyperGroup):
    """A command group whose help shows each command's whole one-line help, wrapped (not cut
    off with "...")."""

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        rows = []
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is None or command.hidden:
                continue
            line = (command.help or "").split("\n\n")[0]
            rows.append((name, " ".join(line.split())))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


class LazyGroup(FullHelpGroup):
    """The ``nimlab`` group: commands whose modules are not loaded yet stand in as
    :class:`_Pending`; resolving a command to run it loads its module first."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        loaded = dict(self.commands)
        self.commands = {}
        for name, (_, line) in COMMANDS.items():
            self.commands[name] = loaded.pop(name) if name in loaded else _Pending(name, help=line)
        self.commands.update(loaded)
        for command in self.commands.values():
            _name_placeholders(command)

    def main(self, *args: Any, **kwargs: Any) -> Any:
        """Run the command line. Usage errors (the framework's own too: a bad number, a
        missing argument, an unknown option) are reported in one style, ``error: ...`` on
        stderr with exit status 2, like every other error of ours."""
        standalone_mode = kwargs.pop("standalone_mode", True)
        try:
            kwargs["standalone_mode"] = False
            result = super().main(*args, **kwargs)
        except typer.Abort:
            if not standalone_mode:
                raise
            print("interrupted", file=sys.stderr)
            sys.exit(130)
        except _ClickException as exc:
            e: Any = exc
            if not standalone_mode:
                raise
            if type(e).__name__ == "NoArgsIsHelpError":
                e.show()  # the help itself
            elif isinstance(e, _UsageError):
                _error(_usage_message(e))
            else:
                _error(e.format_message())
            sys.exit(2 if isinstance(e, _UsageError) else e.exit_code)
        if not standalone_mode:
            return result
        sys.exit(result if isinstance(result, int) else 0)

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        if args and isinstance(self.commands.get(args[0]), _Pending):
            self._load(args[0])
        _start.resume()  # the command's module is loaded: collections resume for its work
        return super().resolve_command(ctx, args)

    def invoke(self, ctx: Any) -> Any:
        """Run the command; our errors end it with one line ``error: ...`` on stderr and no
        traceback (the policy: docs/errors.md). The request was wrong, exit status 2: bad
        usage, :class:`~nimlab.core.errors.NimlabError`, a database named wrongly
        (:class:`~nimlab.storage.errors.DatabaseChoiceError`), a file that is not UTF-8 text.
        It could not be done, exit status 1: :class:`NotDoneError`, a database that cannot be
        used (:class:`~nimlab.storage.errors.StorageError`), an operating-system error
        (``OSError``: a file that cannot be read or written, a connection refused)."""
        from nimlab.core.errors import NimlabError  # only exception classes: cheap
        from nimlab.storage.errors import DatabaseChoiceError, StorageError

        try:
            return super().invoke(ctx)
        except StorageError as e:
            _error(str(e))
            ctx.exit(2 if isinstance(e, DatabaseChoiceError) else 1)
        except (UsageError, NimlabError) as e:
            _error(str(e))
            ctx.exit(2)
        except NotDoneError as e:
            _error(str(e))
            ctx.exit(1)
        except UnicodeDecodeError as e:
            _error(
                f"the input is not UTF-8 text (byte {e.start + 1} cannot be read): give a "
                "UTF-8 text file"
            )
            ctx.exit(2)
        except OSError as e:
            _error(os_error_text(e))
            ctx.exit(1)

    def _load(self, name: str) -> None:
        """Import the module of command ``name`` and take the commands it registered."""
        module = COMMANDS[name][0]
        importlib.import_module(module)
        built = typer.main.get_command(app)  # the commands registered so far, built by Typer
        assert isinstance(built, TyperGroup)
        for other, (home, _) in COMMANDS.items():
            if home == module and other in built.commands:
                self.commands[other] = built.commands[other]
                _name_placeholders(built.commands[other])


def _usage_message(e: Any) -> str:
    """The framework's usage error in our words: what was wrong and where to read more."""
    message = str(e.format_message())
    message = message[0].lower() + message[1:] if message else message
    for kind, words in (
        ("int range", "a whole number"),
        ("int", "a whole number"),
        ("float range", "a number"),
        ("float", "a number"),
    ):
        message = message.replace(f"is not a valid {kind}.", f"is not {words}.")
    ctx = getattr(e, "ctx", None)
    where = ctx.command_path if ctx is not None else "nimlab"
    return f"{message.rstrip('.')} (see {where} --help)"


def _version(value: bool) -> None:
    if not value:
        return
    from nimlab import __version__
    from nimlab.storage.connection import resolve_db_path, shown_db
    from nimlab.storage.errors import StorageError

    print(f"nimlab {__version__}")
    try:
        where = shown_db(resolve_db_path(None))
    except StorageError as e:
        where = f"none usable ({e})"
    print(f"database: {where} (change it with --db PATH or $NIMLAB_DB)")
    raise typer.Exit()


PLACEHOLDERS = {
    "heaps": "PILE...",
    "game": "GAME",
    "game_id": "ID",
    "game_ids": "ID...",
    "source": "FILE",
    "username": "USERNAME",
    "given": "NAME",
    "family": "NAME",
    "bot": "KIND",
    "first": "first|random|auto",
    "pile_count": "RANGE",
    "pile_size": "RANGE",
    "seconds": "SECONDS",
    "host": "HOST",
    "port": "PORT",
}
"""The placeholder shown in help for a parameter that names none: by the parameter's name, else
``N`` for whole numbers, ``X`` for numbers and ``TEXT`` for the rest (never the framework's
``<int range>``)."""


def _name_placeholders(command: Any) -> None:
    """Give every parameter of ``command`` (and of its subcommands) a readable placeholder."""
    for sub in getattr(command, "commands", {}).values():
        _name_placeholders(sub)
    for param in getattr(command, "params", ()):
        if param.metavar is not None or getattr(param, "is_flag", False):
            continue
        name = param.name or ""
        kind = getattr(param.type, "name", "")
        default = "N" if kind.startswith("int") else "X" if kind.startswith("float") else "TEXT"
        placeholder = PLACEHOLDERS.get(name, default)
        if param.param_type_name == "argument" and param.nargs != 1:
            placeholder = placeholder if placeholder.endswith("...") else placeholder + "..."
        param.metavar = placeholder


def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            "-V",
            help="Show nimlab's version and the database in use, and exit.",
            callback=_version,
            is_eager=True,
        ),
    ] = False,
) -> None:
    """Play, solve and study Nim and its relatives.

    Positions are heap sizes, written 3 4 5 or 3,4,5 everywhere. Every command has its own
    help: nimlab COMMAND --help."""


app = typer.Typer(
    name="nimlab",
    cls=LazyGroup,
    callback=_root,  # a group even before any command module is loaded
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain help: no boxes, no type placeholders
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _error(message: str) -> None:
    from rich.console import Console
    from rich.text import Text

    Console(stderr=True).print(
        Text.assemble(("error: ", "bold red"), message), highlight=False, soft_wrap=True
    )


class _WholeWrites(io.TextIOWrapper):
    """A text stream over a buffered writer that passes every write on at once: the
    unbuffered standard streams of ``python -u`` / ``PYTHONUNBUFFERED``, without their loss of
    data. (Over a raw stream, a write that a signal interrupts part way, such as a job stopped
    with Ctrl-Z and continued while a pipe was full, is cut short silently: the rest of the
    line is never written. A buffered writer writes the rest.)"""

    def write(self, text: str) -> int:
        count = super().write(text)
        self.flush()
        return count


def _whole_writes() -> None:
    """Make the standard output and error streams write everything they are given, when they
    are unbuffered (see :class:`_WholeWrites`)."""
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        raw = getattr(stream, "buffer", None)
        if isinstance(stream, io.TextIOWrapper) and isinstance(raw, io.RawIOBase):
            stream.flush()
            setattr(
                sys,
                name,
                _WholeWrites(
                    # a writer of its own on the same descriptor: the stream replaced may be
                    # closed when it is collected, and would close a raw stream it shared
                    io.BufferedWriter(io.FileIO(raw.fileno(), "w", closefd=False)),
                    encoding=stream.encoding,
                    errors=stream.errors,
                    newline=None,
                ),
            )


def run(app: typer.Typer = app) -> None:
    """Run the app: our errors exit with a message (see :meth:`LazyGroup.invoke`), anything
    unexpected exits 1 with one line, and none shows a traceback or an exception's name."""
    _whole_writes()
    try:
        app(standalone_mode=True)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(130)
    except Exception as e:  # a bug: said in words, without the exception's name
        _error(f"nimlab failed unexpectedly ({e or 'no detail'}); please report it")
        sys.exit(1)
