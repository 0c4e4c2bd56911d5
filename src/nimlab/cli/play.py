"""``nimlab play``: a game at the terminal, for any ruleset and any mix of humans and bots.

The board is drawn before every turn; humans type moves the ways the seeds' users did (``2 3``,
``2,3``, ``b3``; ``POSITION COUNT`` in one row of stones), ``?`` for a hint, ``undo``, ``quit``.
Every finished game is stored; games between registered players (``--player @username``) count in
their statistics.
"""

from __future__ import annotations

import contextlib
import random
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Literal

import typer
from rich.console import Console
from rich.text import Text

from nimlab.cli.app import app
from nimlab.cli.board import render_board
from nimlab.cli.common import (
    DefaultsOption,
    EndOption,
    GameOption,
    MisereOption,
    PileCountOption,
    PileSizeOption,
    console,
    err_console,
    fail,
    ruleset_from_options,
)
from nimlab.cli.database import DbOption, open_store
from nimlab.core.errors import NimlabError
from nimlab.core.game import FIRST_CHOICES, Game, Player, Turn
from nimlab.core.narrate import (
    eliminated_text,
    move_text,
    player_label,
    round_text,
    turn_text,
    wins_text,
)
from nimlab.core.players import BOT_CHOICES
from nimlab.core.position import Rows, board_for, parse_heaps
from nimlab.core.review import hint
from nimlab.core.setup import GameSetup
from nimlab.core.simulation import deal, parse_range
from nimlab.storage import StorageError, Store

__all__ = ["TerminalGame", "play_command"]

DEFAULT_PLAYERS = ("human:You", "bot:perfect:Hal")
DEFAULT_PILES = ("3", "4", "5")
QUIT_WORDS = {"quit", "q", "exit"}
HINT_WORDS = {"?", "hint"}
HELP_WORDS = {"help", "h"}

Ending = Literal["over", "quit", "eof"]
Reader = Callable[[str], str]
"""Reads one line after showing a prompt; raises ``EOFError`` at the end of input."""


class _Leave(Exception):
    def __init__(self, why: Ending) -> None:
        self.why = why


@dataclass
class Seats:
    """Players for a game and the registered username at each seat (``None``: not registered)."""

    players: list[Player]
    usernames: list[str | None]


def resolve_players(specs: list[str], store_for: StoreOpener) -> Seats:
    """Read ``--player`` values: ``human:NAME``, ``bot:KIND[:NAME]...`` or ``@username`` (a
    registered player; AI players play with their registered bot). One player alone gets the
    default opponent."""
    if not specs:
        specs = list(DEFAULT_PLAYERS)
    players: list[Player] = []
    usernames: list[str | None] = []
    for spec in specs:
        if spec.strip().startswith("@"):
            record = store_for().get_player(spec.strip()[1:])
            players.append(record.as_player())
            usernames.append(record.username)
        else:
            players.append(Player.parse(spec))
            usernames.append(None)
    if len(players) == 1:
        if players[0].is_bot:
            players.insert(0, Player.parse(DEFAULT_PLAYERS[0]))
            usernames.insert(0, None)
        else:
            players.append(Player.parse(DEFAULT_PLAYERS[1]))
            usernames.append(None)
    return Seats(players, usernames)


class StoreOpener:
    """Opens the database the first time it is needed, and only then."""

    def __init__(self, db: str | None) -> None:
        self.db = db
        self.store: Store | None = None

    def __call__(self) -> Store:
        if self.store is None:
            self.store = open_store(self.db)
        return self.store

    def close(self) -> None:
        if self.store is not None:
            self.store.close()


class TerminalGame:
    """Runs a game at the terminal: draws the board, asks humans for moves, lets bots play.

    ``read(prompt)`` returns one line of input and raises ``EOFError`` at the end of input."""

    def __init__(
        self, game: Game, out: Console, read: Reader, *, interactive: bool = False
    ) -> None:
        self.game = game
        self.out = out
        self.read = read
        self.interactive = interactive
        self._helped = False

    # -- the game loop ------------------------------------------------------------------------

    def run(self) -> Ending:
        """Play until the game is over (``"over"``) or the player leaves (``"quit"``, ``"eof"``).
        ``KeyboardInterrupt`` propagates."""
        self._introduce()
        try:
            while not self.game.is_over:
                self.out.print()
                self.out.print(render_board(self.game.board))
                if self.game.to_move.is_bot:
                    self._bot_turn()
                else:
                    self._human_turn()
        except _Leave as leave:
            return leave.why
        return "over"

    def _introduce(self) -> None:
        g = self.game
        self.say(Text(g.ruleset.describe(), style="bold"))
        names = ", ".join(player_label(p) for p in g.players)
        self.say(f"Players: {names}. First to move: {g.players[g.first_seat].name}.")
        if not g.history and (g.opening_eliminations or g.is_over):
            self.say("The start position is already an end position.")
            for seat in g.opening_eliminations:
                self.say(Text(eliminated_text(g.players[seat]), style="bold red"))
            if g.round > 1 and not g.is_over:
                self.say(round_text(g))
            if g.is_over and g.winner is not None:
                self.say(Text(wins_text(g.winner), style="bold green"))

    def _bot_turn(self) -> None:
        player = self.game.to_move
        if self.interactive:
            with self.out.status(f"{player.name} is thinking..."):
                turn = self.game.play_bot()
        else:
            turn = self.game.play_bot()
        line = Text(turn_text(turn), style="bold magenta")
        if turn.claim:
            line.append(f"  ({turn.claim})", style="dim")
        self.say(line)
        self._consequences(turn)

    def _human_turn(self) -> None:
        player = self.game.to_move
        if not self._helped:
            help_text = self._move_help()
            self.say(
                Text(
                    help_text[0].upper() + help_text[1:] + "; ? for a hint, undo, quit, help.",
                    style="dim",
                )
            )
            self._helped = True
        while True:
            try:
                text = self.read(f"{player.name}, your move: ")
            except EOFError:
                self.out.print()
                self.say("End of input: the game is abandoned.")
                raise _Leave("eof") from None
            word = text.strip().lower()
            if word in QUIT_WORDS:
                self.say("You left the game.")
                raise _Leave("quit")
            if word in HINT_WORDS:
                self._hint()
                continue
            if word in HELP_WORDS:
                self._help()
                continue
            if word == "undo":
                if self._undo():
                    return
                continue
            if not word:
                self._complain(f"Nothing typed: {self._move_help()}, or ? for a hint.")
                continue
            try:
                turn = self.game.push(self.game.parse_move(text))
            except NimlabError as e:
                self._complain(str(e))
                continue
            self.say(Text(turn_text(turn), style="bold blue"))
            self._consequences(turn)
            return

    def _consequences(self, turn: Turn) -> None:
        g = self.game
        if turn.eliminated:
            self.say(Text(eliminated_text(turn.player), style="bold red"))
        if turn.new_round and not g.is_over:
            self.say(round_text(g))
        if turn.winner is not None:
            self.say(Text(wins_text(turn.winner), style="bold green"))

    def _complain(self, message: str) -> None:
        self.say(Text(message, style="red"))

    def say(self, text: str | Text) -> None:
        """Print a line, left to the terminal to wrap (no hard line breaks in messages)."""
        self.out.print(text if isinstance(text, Text) else Text(text), soft_wrap=True)

    # -- commands -----------------------------------------------------------------------------

    def _move_help(self) -> str:
        board = self.game.board
        if isinstance(board, Rows):
            if board.pile_count == 1:
                return (
                    "type POSITION COUNT to take COUNT adjacent stones from POSITION on (e.g. 3 2)"
                )
            return (
                "type ROW POSITION COUNT to take COUNT adjacent stones of ROW from POSITION on "
                "(e.g. 1 3 2)"
            )
        return "type PILE AMOUNT to take AMOUNT from PILE (e.g. 2 3, 2,3 or b3)"

    def _help(self) -> None:
        g = self.game
        lines = [
            f"Rules: {g.ruleset.describe()}.",
            f"Moves: {self._move_help()}.",
            "?  or hint   the best move and why",
            "undo         take back your last move (and the bots' replies)",
            "quit         leave the game (it is not saved)",
        ]
        for line in lines:
            self.say(line)

    def _hint(self) -> None:
        g = self.game
        advice = hint(g, explain=True)
        self.say(
            Text.assemble(
                ("Hint: ", "bold green"),
                "take " + move_text(advice.move, g.board),
                (f"  ({advice.claim})", "dim"),
            )
        )
        for line in advice.explanation:
            self.say(line)

    def _undo(self) -> bool:
        """Take back the player's last move and the bots' replies; True when done."""
        g = self.game
        seat = g.to_move_seat
        history = g.history
        for turn in reversed(history):
            if turn.seat == seat:
                break
            if not turn.player.is_bot:
                self._complain(
                    f"undo takes back your move only when bots alone have moved since: "
                    f"{turn.player.name} has moved"
                )
                return False
        try:
            undone = g.undo_for(seat)
        except NimlabError as e:
            self._complain(str(e))
            return False
        taken = "; ".join(turn_text(t) for t in reversed(undone))
        self.say(Text(f"Taken back: {taken}", style="yellow"))
        return True


def _console_reader(out: Console) -> Reader:
    def read(prompt: str) -> str:
        return out.input(Text(prompt, style="bold"))

    return read


@app.command("play")
def play_command(
    heaps: Annotated[
        list[str] | None,
        typer.Argument(help="Heap sizes (the same as --piles).", show_default=False),
    ] = None,
    piles: Annotated[
        list[str] | None,
        typer.Option(
            "--piles",
            "-p",
            help="The start position: --piles 3 4 5 (or 3,4,5); rows of stones in Kayles-like "
            "games (default: 3 4 5).",
            metavar="N N ...",
            show_default=False,
        ),
    ] = None,
    random_piles: Annotated[
        bool,
        typer.Option("--random-piles", help="Deal random piles (see --pile-count, --pile-size)."),
    ] = False,
    pile_count: PileCountOption = "3-5",
    pile_size: PileSizeOption = "1-9",
    game: GameOption = "nim",
    misere: MisereOption = False,
    end: EndOption = None,
    defaults: DefaultsOption = False,
    player: Annotated[
        list[str] | None,
        typer.Option(
            "--player",
            help="A player, in turn order (repeatable): human:NAME, bot:KIND[:NAME][:error=R] "
            f"(KIND {BOT_CHOICES}) or @USERNAME (registered). "
            "(default: human:You and bot:perfect:Hal)",
            metavar="SPEC",
            show_default=False,
        ),
    ] = None,
    first: Annotated[
        str,
        typer.Option(
            "--first",
            help="Who moves first: first (listed), random, or auto (two players: the one who "
            "can win).",
        ),
    ] = "first",
    seed: Annotated[
        int | None, typer.Option("--seed", help="Seed for random piles, bots and --first random.")
    ] = None,
    db: DbOption = None,
) -> None:
    """Play a game at the terminal: you against a perfect bot on 3 4 5 unless told otherwise."""
    ruleset = ruleset_from_options(game, misere, end, defaults)
    if first not in FIRST_CHOICES:
        fail(f"--first {first!r}: choose {', '.join(FIRST_CHOICES)}")
    sizes = [
        part for value in (piles or []) + (heaps or []) for part in value.replace(",", " ").split()
    ]
    if random_piles and sizes:
        fail("give --piles or --random-piles, not both")
    game_seed = seed if seed is not None else random.randrange(1 << 31)
    if random_piles:
        start = deal(
            random.Random(game_seed),
            parse_range(pile_count, "--pile-count"),
            parse_range(pile_size, "--pile-size"),
        )
    else:
        start = parse_heaps(sizes or DEFAULT_PILES)
    opener = StoreOpener(db)
    try:
        _require_writable(opener)
        seats = resolve_players(list(player or []), opener)
        setup = GameSetup(
            ruleset,
            board_for(ruleset.rule, start),
            tuple(seats.players),
            first=first,
            seed=game_seed,
        )
        the_game = setup.build()
        interactive = sys.stdin.isatty() and console.is_terminal
        if interactive:
            with contextlib.suppress(ImportError):
                import readline  # noqa: F401  (line editing for input())
        session = TerminalGame(the_game, console, _console_reader(console), interactive=interactive)
        try:
            ending = session.run()
        except KeyboardInterrupt:
            console.print()
            console.print("Interrupted: the game is abandoned.")
            raise typer.Exit(130) from None
        if ending == "over":
            _save(the_game, seats, opener, registered=any(seats.usernames))
    finally:
        opener.close()


def _require_writable(opener: StoreOpener) -> None:
    """Check before the game that it can be saved: a database that cannot be written (read-only
    file or file system) ends the command now, with a message and exit status 1."""
    store = opener()
    try:
        store.require_writable()
    except StorageError as e:
        err_console.print(
            Text.assemble(("error: ", "bold red"), f"{e}: the game could not be saved"),
            highlight=False,
            soft_wrap=True,
        )
        raise typer.Exit(1) from None


def _save(game: Game, seats: Seats, opener: StoreOpener, *, registered: bool) -> None:
    try:
        store = opener.store or Store.open(opener.db)
        opener.store = store
        game_id = store.save_game(game.to_record(), seats.usernames, source="play")
    except StorageError as e:
        err_console.print(
            Text(f"warning: the game was not saved: {e}", style="yellow"),
            highlight=False,
            soft_wrap=True,
        )
        if registered:
            raise typer.Exit(1) from None
        return
    console.print(Text(f"Saved as game #{game_id} (nimlab replay {game_id}).", style="dim"))
