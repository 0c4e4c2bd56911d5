"""``nimlab play``: a game at the terminal, for any ruleset and any mix of humans and bots.

The board is drawn before every turn; humans type moves as ``2 3``, ``2,3`` or ``b3`` (take 3
from pile B), just the amount in a one-pile game, ``POSITION COUNT`` in one row of stones;
``?`` for a hint, ``values``, ``undo``, ``quit``. An unfinished game is kept among the store's
games in play (``nimlab play --resume``). Every finished game is stored; games between
registered players (``--player @username``) count in their statistics.
"""

from __future__ import annotations

import contextlib
import random
import re
import secrets
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
    KeepsArgs,
    MisereOption,
    PileCountOption,
    PileSizeOption,
    board_from_args,
    check_first_auto,
    console,
    err_console,
    fail,
    pile_count_default,
    position_words,
    ruleset_from_options,
)
from nimlab.cli.database import DbOption, open_store
from nimlab.core.errors import NimlabError
from nimlab.core.game import FIRST_CHOICES, Game, Player, Turn
from nimlab.core.narrate import (
    LETTERS,
    eliminated_text,
    move_instruction,
    player_label,
    round_text,
    rules_text,
    turn_text,
    wins_text,
)
from nimlab.core.players import BOT_CHOICES
from nimlab.core.position import Board, Move, Rows
from nimlab.core.review import hint
from nimlab.core.rules import HowToMove, how_to_move, typed_move
from nimlab.core.setup import GameSetup
from nimlab.core.simulation import deal_start, parse_range
from nimlab.core.words import count_text, number_text
from nimlab.storage import StorageError, Store

__all__ = ["LIVE_PREFIX", "TerminalGame", "play_command"]

DEFAULT_PLAYERS = ("human:You", "bot:perfect:Hal")
DEFAULT_PILES = ("3", "4", "5")
QUIT_WORDS = {"quit", "q", "exit"}
HINT_WORDS = {"?", "hint"}
HELP_WORDS = {"help", "h"}
VALUES_WORDS = {"values", "v"}
LIVE_PREFIX = "terminal-"
"""Keys of the terminal's unfinished games among the store's games in play."""
SHOWN_VALUES = 40
"""The ``values`` command lists at most this many moves."""
MAX_LINE = 400
"""Lines of an explanation longer than this are cut (a hint on 10,000 piles stays readable)."""

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

    ``read(prompt)`` returns one line of input and raises ``EOFError`` at the end of input.
    ``on_change(game)`` (optional) is called after every move and every undo, so the game can be
    kept as it goes (``nimlab play --resume``)."""

    def __init__(
        self,
        game: Game,
        out: Console,
        read: Reader,
        *,
        interactive: bool = False,
        on_change: Callable[[Game], None] | None = None,
        resumable: bool = False,
    ) -> None:
        self.game = game
        self.out = out
        self.read = read
        self.interactive = interactive
        self.on_change = on_change
        self.resumable = resumable
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
        self.say(Text(rules_text(g.ruleset, len(g.players)), style="bold"))
        names = ", ".join(player_label(p) for p in g.players)
        self.say(f"Players: {names}. First to move: {g.players[g.first_seat].name}.")
        if g.history:
            self.say(f"Resumed after {count_text(len(g.history))}.")

    def _bot_turn(self) -> None:
        player = self.game.to_move
        if self.interactive:
            with self.out.status(f"{player.name} is thinking..."):
                turn = self.game.play_bot()
        else:
            turn = self.game.play_bot()
        line = Text(turn_text(turn, letters=True), style="bold magenta")
        if turn.claim:
            line.append(f" - {turn.claim}", style="dim")
        self.say(line)
        self._changed()
        self._consequences(turn)

    def _changed(self) -> None:
        if self.on_change is not None:
            self.on_change(self.game)

    def _human_turn(self) -> None:
        player = self.game.to_move
        if not self._helped:
            help_text = self._move_help()
            self.say(
                Text(
                    help_text[0].upper()
                    + help_text[1:]
                    + "; ? for a hint, values, undo, quit, help.",
                    style="dim",
                )
            )
            self._helped = True
        while True:
            try:
                text = self.read(f"{player.name}, your move: ")
            except EOFError:
                self.out.print()
                self.say(f"End of input: {self.left_text()}")
                raise _Leave("eof") from None
            word = text.strip().lower()
            if word in QUIT_WORDS:
                self.say(f"You left the game: {self.left_text()}")
                raise _Leave("quit")
            if word in HINT_WORDS:
                self._hint()
                continue
            if word in VALUES_WORDS:
                self._values()
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
                self._complain(_letters_in(str(e), self.game.board))
                continue
            self.say(Text(turn_text(turn, letters=True), style="bold blue"))
            self._changed()
            self._consequences(turn)
            return

    def left_text(self) -> str:
        """What becomes of the game when the player leaves it now."""
        if self.resumable and self.game.history:
            return "the game is kept; go on with nimlab play --resume."
        if self.resumable:
            return "the game has no moves, so it is not kept."
        return "the game is abandoned."

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
        """Print a line, word-wrapped to the terminal's width; a line longer than
        :data:`MAX_LINE` characters is cut."""
        line = text if isinstance(text, Text) else Text(text)
        if len(line) > MAX_LINE:
            line = line[: MAX_LINE - 1]
            line.append("…")
        self.out.print(line)

    # -- commands -----------------------------------------------------------------------------

    def _move_help(self) -> str:
        """How to type a move here (the game's help, from its rules: one place)."""
        return self._how().syntax

    def _how(self) -> HowToMove:
        return how_to_move(self.game.ruleset.rules, self.game.board, letters=True)

    def _help(self) -> None:
        g = self.game
        how = self._how()
        lines = [
            f"Rules: {rules_text(g.ruleset, len(g.players))}.",
            f"Moves: {how.rule}.",
            f"Typing a move: {how.syntax}.",
            "?  or hint   the best move and why",
            "values       what every move leads to: a win or a loss for you",
            "undo         take back your last move (and the bots' replies)",
            "quit         leave the game"
            + (" (go on later: nimlab play --resume)" if self.resumable else " (it is not saved)"),
        ]
        for line in lines:
            self.say(line)

    def _hint(self) -> None:
        g = self.game
        advice = hint(g, explain=True)
        self.say(
            Text.assemble(
                ("Hint: ", "bold green"),
                move_instruction(advice.move, g.board, letters=True),
                (f" - {advice.claim}", "dim"),
            )
        )
        for line in advice.explanation:
            self._explain(_letters_in(line, g.board))

    def _explain(self, line: str) -> None:
        """An explanation line: word-wrapped prose, or a row of the binary table (cut at the
        terminal's edge rather than wrapped into the next row)."""
        if line.startswith("  ") and ("=" in line or set(line.strip()) <= {"-"}):
            self.out.print(Text(line), no_wrap=True, overflow="ellipsis", crop=True)
        else:
            self.say(line)

    def _values(self) -> None:
        """Every legal move's value for the player to move (winning moves first)."""
        from nimlab.core.analysis import analyze
        from nimlab.core.review import paranoid_move_values
        from nimlab.theory.budget import BudgetExceeded

        g = self.game
        rows: list[tuple[str, str | None]] = []
        if len(g.active) > 2:
            try:
                found = paranoid_move_values(g)
            except BudgetExceeded:
                found = None
            if found is None:
                self._complain("Too many moves or too long a search to value every move here.")
                return
            self.say(
                f"With {len(g.active)} players: a move wins when you can then win against all "
                "the others together."
            )
            rows = [(self._value_label(v.move), "wins" if v.wins else "loses") for v in found]
        else:
            a = analyze(g.ruleset, g.board)
            for m in sorted(a.moves, key=lambda m: m.winning is not True):
                value = None if m.winning is None else ("wins" if m.winning else "loses")
                if value is not None and m.remoteness is not None:
                    value += f" in {count_text(m.remoteness + 1)}"
                rows.append((self._value_label(m.move), value))
            if not a.moves_complete:
                self.say(
                    f"{number_text(a.move_count)} legal moves; only the winning ones are listed."
                )
        if not rows:
            self.say("No move is valued here.")
            return
        for text, value in rows[:SHOWN_VALUES]:
            shown = "not proven" if value is None else value
            style = "green" if shown.startswith("wins") else "red" if value else "yellow"
            self.say(Text.assemble(f"  {text}: ", (shown, style)))
        if len(rows) > SHOWN_VALUES:
            hidden = count_text(len(rows) - SHOWN_VALUES, "more move")
            self.say(Text(f"  ... and {hidden}", style="dim"))

    def _value_label(self, move: Move) -> str:
        """A move in the ``values`` list: as its rules word it, and as it is typed
        (``take 2 from pile B (b2)``, ``move 1 coin from step A to the ground (a1)``)."""
        board = self.game.board
        typed = typed_move(move, board, letters=True)
        return f"{move_instruction(move, board, letters=True)} ({typed})"

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
        taken = "; ".join(turn_text(t, letters=True) for t in reversed(undone))
        self.say(Text(f"Taken back: {taken}", style="yellow"))
        self._changed()
        return True


def _letters_in(line: str, board: Board) -> str:
    """A line from the core (an explanation, a refused move) with piles named by letter, as
    the board draws them: ``"pile 2"`` becomes ``"pile B"``, ``"piles are 1-3"`` ``"piles are
    A-C"``."""
    if board.pile_count > 26 or isinstance(board, Rows):
        return line
    line = re.sub(
        r"\bpiles are 1(?:-(\d+))?\b",
        lambda m: (
            "piles are A" + ("" if m.group(1) is None else "-" + LETTERS[int(m.group(1)) - 1])
        ),
        line,
    )
    return re.sub(
        r"\bpile (\d+)\b",
        lambda m: (
            "pile " + (LETTERS[int(m.group(1)) - 1] if 1 <= int(m.group(1)) <= 26 else m.group(1))
        ),
        line,
    )


def _console_reader(out: Console) -> Reader:
    def read(prompt: str) -> str:
        return out.input(Text(prompt, style="bold"))

    return read


@app.command("play", cls=KeepsArgs)
def play_command(
    ctx: typer.Context,
    heaps: Annotated[
        list[str] | None,
        typer.Argument(
            help="The start position: pile sizes, 3 4 5 or 3,4,5 (the same as --piles; row "
            "lengths in games on rows of stones).",
            show_default=False,
        ),
    ] = None,
    piles: Annotated[
        list[str] | None,
        typer.Option(
            "--piles",
            "-p",
            help="The start position: --piles 3,4,5 (or --piles 3 4 5); rows of stones in "
            "Kayles-like games (default: 3 4 5).",
            metavar="N,N,...",
            show_default=False,
        ),
    ] = None,
    random_piles: Annotated[
        bool,
        typer.Option("--random-piles", help="Deal random piles (see --pile-count, --pile-size)."),
    ] = False,
    pile_count: PileCountOption = None,
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
            help="Who moves first: first (the first listed), random, or auto (two players "
            "only: the one in the winning position).",
        ),
    ] = "first",
    seed: Annotated[
        int | None, typer.Option("--seed", help="Seed for random piles, bots and --first random.")
    ] = None,
    resume: Annotated[
        bool,
        typer.Option(
            "--resume",
            help="Go on with a game left unfinished at the terminal (quit, end of input, "
            "Ctrl+C); asks which when there are several.",
        ),
    ] = False,
    db: DbOption = None,
) -> None:
    """Play a game at the terminal: you against a perfect bot on 3 4 5 unless told otherwise.

    At your turn type a move (b3 or 2 3: take 3 from pile B; in a one-pile game just the
    amount), ? for a hint, values for the value of every move, undo, quit or help. A game you
    leave unfinished is kept: nimlab play --resume goes on with it. Finished games are stored
    (nimlab history, nimlab replay ID)."""
    opener = StoreOpener(db)
    try:
        _require_writable(opener)
        if resume:
            if heaps or piles or random_piles or player:
                fail("--resume goes on with a kept game: give no position or players with it")
            key, the_game, usernames = _pick_unfinished(opener())
            seats = Seats(list(the_game.players), usernames)
        else:
            key = LIVE_PREFIX + secrets.token_hex(6)
            the_game, seats = _new_game(
                opener,
                position_words(ctx),
                random_piles,
                pile_count,
                pile_size,
                game,
                misere,
                end,
                defaults,
                player,
                first,
                seed,
            )
        store = opener()

        def keep(g: Game) -> None:
            """Keep the game as it is now among the games in play: a game with no move yet is
            not kept (there is nothing to go on with), nor a finished one."""
            store.remove_live_game(key)
            if not g.is_over and g.history:
                meta = {"interface": "terminal", "usernames": seats.usernames}
                store.add_live_game(key, g.to_record(), meta, client="terminal")

        interactive = sys.stdin.isatty() and console.is_terminal
        if interactive:
            with contextlib.suppress(ImportError):
                import readline  # noqa: F401  (line editing for input())
        session = TerminalGame(
            the_game,
            console,
            _console_reader(console),
            interactive=interactive,
            on_change=keep,
            resumable=True,
        )
        try:
            ending = session.run()
        except KeyboardInterrupt:
            console.print()
            console.print(f"Interrupted: {session.left_text()}")
            raise typer.Exit(130) from None
        if ending == "over":
            _save(the_game, seats, opener, key, registered=any(seats.usernames))
    finally:
        opener.close()


def _new_game(
    opener: StoreOpener,
    typed: list[str],
    random_piles: bool,
    pile_count: str | None,
    pile_size: str,
    game: str,
    misere: bool,
    end: list[str] | None,
    defaults: bool,
    player: list[str] | None,
    first: str,
    seed: int | None,
) -> tuple[Game, Seats]:
    """The game the options describe (see :func:`play_command`)."""
    ruleset = ruleset_from_options(game, misere, end, defaults)
    if first not in FIRST_CHOICES:
        fail(f"--first {first!r}: choose {', '.join(FIRST_CHOICES)}")
    if random_piles and typed:
        fail("give --piles or --random-piles, not both")
    game_seed = seed if seed is not None else random.randrange(1 << 31)
    if random_piles:
        start: Board = ruleset.rules.start(
            deal_start(
                ruleset,
                random.Random(game_seed),
                parse_range(pile_count_default(ruleset, pile_count), "--pile-count"),
                parse_range(pile_size, "--pile-size"),
            ),
        )
    else:
        start = board_from_args(ruleset, list(typed or DEFAULT_PILES))
    seats = resolve_players(list(player or []), opener)
    check_first_auto(first, len(seats.players), "--first first or --first random")
    setup = GameSetup(ruleset, start, tuple(seats.players), first=first, seed=game_seed)
    return setup.build(), seats


def _pick_unfinished(store: Store) -> tuple[str, Game, list[str | None]]:
    """The kept game to go on with: the only one, else the one the user picks from a list."""
    kept: list[tuple[str, Game, list[str | None]]] = []
    for key, record, meta in store.live_games():
        if not key.startswith(LIVE_PREFIX):
            continue  # the web app's games in play
        try:
            game = Game.from_record(record)
        except NimlabError:
            continue
        players = len(game.players)
        usernames = list(meta.get("usernames") or [None] * players)[:players]
        kept.append((key, game, usernames))
    if not kept:
        fail("no game was left unfinished at the terminal: start one with nimlab play")
    if len(kept) == 1:
        return kept[0]
    console.print("Games left unfinished:", highlight=False)
    for i, (_, game, _u) in enumerate(kept, 1):
        names = ", ".join(p.name for p in game.players)
        rules = rules_text(game.ruleset, len(game.players))
        console.print(
            f"  {i}. {rules}; {names}; {count_text(len(game.history))}; "
            f"position {' '.join(map(str, game.board.heaps[:12]))}"
            + (" ..." if len(game.board.heaps) > 12 else ""),
            highlight=False,
        )
    try:
        answer = console.input(f"Which one (1-{len(kept)}, Enter: 1)? ").strip()
    except EOFError:  # Ctrl+D (or the end of input) leaves the chooser: nothing is resumed
        console.print()
        console.print("No game chosen: the games are kept (nimlab play --resume).")
        raise typer.Exit(0) from None
    if not answer:
        return kept[0]
    if not answer.isdigit() or not 1 <= int(answer) <= len(kept):
        fail(f"{answer!r} is not one of the games listed: choose 1 to {len(kept)}")
    return kept[int(answer) - 1]


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


def _save(game: Game, seats: Seats, opener: StoreOpener, key: str, *, registered: bool) -> None:
    """Store the finished game (and drop it from the kept games in one transaction)."""
    try:
        store = opener.store or Store.open(opener.db)
        opener.store = store
        if store.live_game(key) is None:
            game_id = store.save_game(game.to_record(), seats.usernames, source="play")
        else:
            game_id = store.finish_live_game(key, game.to_record(), seats.usernames, source="play")
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
