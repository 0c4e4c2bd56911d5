"""The Nim Game System shell, command for command and message for message, over nimlab's
database and core games.

Commands (case-insensitive; arguments after the command, separated by commas, case-sensitive;
surplus arguments are ignored)::

    addplayer username,family_name,given_name      addaiplayer username,family_name,given_name
    removeplayer [username]                         editplayer username,family_name,given_name
    resetstats [username]                           displayplayer [username]
    rankings [asc|desc]                             startgame stones,upper_bound,username1,username2
    startadvancedgame stones,username1,username2    help
    exit

The original's bugs are fixed: a non-number where a number belongs gets "Invalid move." and how
to type a move (in a game) or an argument message (in a command) instead of a crash; ``help``
lists the commands (and, in a game, says how to move); there is no limit on the number of
players; every change is saved at once (not only on ``exit``); the end of input (Ctrl+D) leaves
cleanly: in a game it leaves the game (abandoned, not saved) and the shell goes on at its prompt,
at the prompt it leaves the shell; a player cannot play against themselves.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from typing import TextIO

from nimlab.core.errors import NimlabError
from nimlab.core.game import Game
from nimlab.core.position import Move, Rows
from nimlab.core.rules import how_to_move
from nimlab.core.ruleset import Ruleset, parse_game
from nimlab.core.setup import GameSetup
from nimlab.storage import (
    PlayerExistsError,
    PlayerRecord,
    RegistryError,
    Store,
    UnknownPlayerError,
)

__all__ = ["AI_BOT", "MAX_STONES", "NimShell", "run_shell"]

AI_BOT = "perfect"
"""How the shell's AI players (``addaiplayer``) play."""
MAX_STONES = 1000
"""The most stones a shell game may start with (the original crashed beyond 2^31 - 1)."""
MAX_LISTED = 10

COMMANDS = (
    "addplayer",
    "addaiplayer",
    "removeplayer",
    "editplayer",
    "resetstats",
    "displayplayer",
    "rankings",
    "startgame",
    "startadvancedgame",
    "help",
    "exit",
)

COMMAND_HELP = (
    ("addplayer username,family_name,given_name", "register a player"),
    ("addaiplayer username,family_name,given_name", "register a player the computer plays"),
    ("removeplayer [username]", "remove a player (or, asked first, every player)"),
    ("editplayer username,family_name,given_name", "change a player's names"),
    ("resetstats [username]", "reset a player's statistics (or everyone's)"),
    ("displayplayer [username]", "show a player (or every player)"),
    ("rankings [asc|desc]", "the players by their share of games won"),
    (
        "startgame stones,upper_bound,username1,username2",
        "a pile of stones: take 1 to upper_bound in turn; whoever takes the last stone loses",
    ),
    (
        "startadvancedgame stones,username1,username2",
        "a row of stones: take 1 stone, or 2 adjacent stones, in turn; whoever takes the last "
        "stone wins",
    ),
    ("help", "this list"),
    ("exit", "leave (everything is saved as it happens)"),
)
"""The shell's commands with their arguments, for ``help``."""
HELP_WORDS = {"help", "?"}
"""What asks for help in a game (at the prompt: the ``help`` command)."""

INVALID_ARGUMENTS = "Incorrect number of arguments supplied to command."
PLAYER_EXISTS = "The player already exists."
NO_PLAYER = "The player does not exist."
NO_PLAYERS = "One of the players does not exist."
SAME_PLAYER = "Invalid argument: a player cannot play against themselves."
GAME_LEFT = "End of input: the game is abandoned (it is not saved)."


class _EndOfInput(Exception):
    """The input ended: the shell leaves as on ``exit``."""


def player_line(p: PlayerRecord) -> str:
    """``username,given,family,N games,M wins`` (``displayplayer``)."""
    return f"{p.username},{p.given_name},{p.family_name},{p.games_played} games,{p.games_won} wins"


def ranking_line(p: PlayerRecord) -> str:
    """``"%-5s| %02d games | %s"`` with the rounded win percentage (``rankings``)."""
    return f"{str(p.win_percent) + '%':<5}| {p.games_played:02d} games | {p.full_name}"


class NimShell:
    """The shell, reading commands from ``stdin`` and writing to ``stdout``; every change goes
    to ``store`` at once. ``seed`` makes the AI players' random choices repeatable."""

    def __init__(
        self, store: Store, stdin: TextIO, stdout: TextIO, *, seed: int | None = None
    ) -> None:
        self.store = store
        self.stdin = stdin
        self.stdout = stdout
        self.rng = random.Random(seed)

    # -- input and output ---------------------------------------------------------------------

    def say(self, text: str = "") -> None:
        self.stdout.write(text + "\n")

    def _prompt(self, text: str) -> None:
        self.stdout.write(text)
        self.stdout.flush()

    def _line(self) -> str:
        """The next line of input (without its newline); raises :class:`_EndOfInput`."""
        self.stdout.flush()
        line = self.stdin.readline()
        if not line:
            raise _EndOfInput
        return line.rstrip("\r\n")

    def _nonblank_line(self) -> str:
        """The next line with something on it (blank lines are skipped, as the original's
        token reader did)."""
        while True:
            line = self._line()
            if line.strip():
                return line

    # -- the command loop ---------------------------------------------------------------------

    def run(self) -> int:
        """Run until ``exit`` or the end of input; returns the exit status (0)."""
        self.say("Welcome to Nim")
        try:
            while True:
                self.say()
                self._prompt("$")
                line = self._nonblank_line()
                if not self.execute(line):
                    break
        except _EndOfInput:
            pass
        self.say()
        self.stdout.flush()
        return 0

    def execute(self, line: str) -> bool:
        """Run one command line; False after ``exit``."""
        parts = line.strip().split(None, 1)
        command = parts[0]
        name = command.lower()
        if name not in COMMANDS:
            self.say(f"'{command}' is not a valid command.")
            return True
        args = [a.strip() for a in (parts[1] if len(parts) > 1 else "").split(",") if a.strip()]
        if name == "exit":
            return False
        if name == "help":
            self._help()
            return True
        handler: Callable[[list[str]], None] = getattr(self, f"_{name}")
        handler(args)
        return True

    def _help(self) -> None:
        self.say("Commands (arguments separated by commas):")
        for command, what in COMMAND_HELP:
            self.say(f"  {command}")
            self.say(f"      {what}")

    # -- the registry -------------------------------------------------------------------------

    def _add(self, args: list[str], bot: str | None) -> None:
        if len(args) < 3:
            self.say(INVALID_ARGUMENTS)
            return
        username, family, given = args[:3]
        try:
            self.store.add_player(username, given=given, family=family, bot=bot)
        except PlayerExistsError:
            self.say(PLAYER_EXISTS)
        except RegistryError as e:
            self.say(_argument_message(str(e)))

    def _addplayer(self, args: list[str]) -> None:
        self._add(args, None)

    def _addaiplayer(self, args: list[str]) -> None:
        self._add(args, AI_BOT)

    def _confirm(self, question: str) -> bool:
        self.say(question)
        try:
            answer = self._nonblank_line().strip()
        except _EndOfInput:
            return False
        return answer.startswith("y")

    def _removeplayer(self, args: list[str]) -> None:
        if args:
            try:
                self.store.remove_player(args[0])
            except UnknownPlayerError:
                self.say(NO_PLAYER)
        elif self._confirm("Are you sure you want to remove all players? (y/n)"):
            self.store.remove_all_players()

    def _editplayer(self, args: list[str]) -> None:
        if len(args) < 3:
            self.say(INVALID_ARGUMENTS)
            return
        username, family, given = args[:3]
        try:
            self.store.edit_player(username, given=given, family=family)
        except UnknownPlayerError:
            self.say(NO_PLAYER)
        except RegistryError as e:
            self.say(_argument_message(str(e)))

    def _resetstats(self, args: list[str]) -> None:
        if args:
            try:
                self.store.reset_stats(args[0])
            except UnknownPlayerError:
                self.say(NO_PLAYER)
        elif self._confirm("Are you sure you want to reset all player statistics? (y/n)"):
            self.store.reset_all_stats()

    def _displayplayer(self, args: list[str]) -> None:
        if args:
            player = self.store.find_player(args[0])
            self.say(NO_PLAYER if player is None else player_line(player))
            return
        for p in self.store.players():
            self.say(player_line(p))

    def _rankings(self, args: list[str]) -> None:
        ascending = bool(args) and args[0] == "asc"
        for p in self.store.rankings(ascending=ascending, limit=MAX_LISTED):
            self.say(ranking_line(p))

    # -- games --------------------------------------------------------------------------------

    def _players(self, usernames: list[str]) -> list[PlayerRecord] | None:
        found = [self.store.find_player(u) for u in usernames]
        if any(p is None for p in found):
            self.say(NO_PLAYERS)
            return None
        if len({p.username for p in found if p is not None}) < len(found):
            self.say(SAME_PLAYER)
            return None
        return [p for p in found if p is not None]

    def _startgame(self, args: list[str]) -> None:
        if len(args) < 4:
            self.say(INVALID_ARGUMENTS)
            return
        stones = _count(args[0])
        bound = _count(args[1], limit=None)
        if stones is None:
            self.say(_stones_message())
            return
        if bound is None:
            self.say("Invalid argument: the upper bound must be a whole number of at least 1.")
            return
        players = self._players(args[2:4])
        if players is None:
            return
        take = min(bound, stones)
        ruleset = Ruleset(parse_game(f"subtraction:1-{take}"), misere=True)
        game = self._new_game(ruleset, [stones], players)
        if game is None:
            return
        self.say()
        self.say(f"Initial stone count: {stones}")
        self.say(f"Maximum stone removal: {bound}")
        self._announce_players(players)
        try:
            while not game.is_over:
                self._basic_turn(game, players, bound)
                self.say()
        except _EndOfInput:  # Ctrl+D leaves the game, back at the shell's prompt
            self.say()
            self.say(GAME_LEFT)
            return
        self._finish(game, players)

    def _basic_turn(self, game: Game, players: list[PlayerRecord], bound: int) -> None:
        heap = game.position[0]
        stones_line = f"{heap} stones left:" + " *" * heap
        self.say(stones_line)
        player = players[game.to_move_seat]
        largest = min(bound, heap)
        while True:
            self.say(f"{player.given_name}'s turn - remove how many?")
            if game.to_move.is_bot:
                game.play_bot()
                return
            words = self._nonblank_line().split()
            if words[0].lower() in HELP_WORDS:
                self.say(
                    f"Type how many stones to remove, 1 to {largest}: whoever removes the last "
                    "stone loses."
                )
                self.say()
                self.say(stones_line)
                continue
            amount = _integer(words[0])
            if amount is not None and 1 <= amount <= largest:
                game.push(Move(1, amount))
                return
            self.say()
            self.say(f"Invalid move. You must remove between 1 and {largest} stones.")
            self.say()
            self.say(stones_line)

    def _startadvancedgame(self, args: list[str]) -> None:
        if len(args) < 3:
            self.say(INVALID_ARGUMENTS)
            return
        stones = _count(args[0])
        if stones is None:
            self.say(_stones_message())
            return
        players = self._players(args[1:3])
        if players is None:
            return
        game = self._new_game(Ruleset(parse_game("kayles")), Rows.full([stones]), players)
        if game is None:
            return
        self.say()
        self.say(f"Initial stone count: {stones}")
        self.say("Stones display:" + "".join(f" <{i},*>" for i in range(1, stones + 1)))
        self._announce_players(players)
        try:
            while not game.is_over:
                self._advanced_turn(game, players)
                self.say()
        except _EndOfInput:  # Ctrl+D leaves the game, back at the shell's prompt
            self.say()
            self.say(GAME_LEFT)
            return
        self._finish(game, players)

    def _advanced_turn(self, game: Game, players: list[PlayerRecord]) -> None:
        board = game.board
        assert isinstance(board, Rows)
        stones_line = f"{sum(board.heaps)} stones left:" + "".join(
            f" <{i},{mark}>" for i, mark in enumerate(board.to_strings()[0], 1)
        )
        self.say(stones_line)
        player = players[game.to_move_seat]
        while True:
            self.say(f"{player.given_name}'s turn - which to remove?")
            if game.to_move.is_bot:
                game.play_bot()
                return
            words = self._line().split()
            how = how_to_move(game.ruleset.rules, board)
            if words and words[0].lower() in HELP_WORDS:
                self.say(f"{how.syntax[0].upper()}{how.syntax[1:]}: {how.rule}.")
                self.say()
                self.say(stones_line)
                continue
            position = _integer(words[0]) if words else None
            count = _integer(words[1]) if len(words) > 1 else None
            reason = ""
            if position is not None and count is not None:
                try:
                    game.push(Move(1, count, at=position))
                    return
                except NimlabError as e:
                    reason = f": {e}"
            self.say()
            self.say(f"Invalid move{reason}. {how.syntax[0].upper()}{how.syntax[1:]}.")
            self.say()
            self.say(stones_line)

    def _new_game(
        self, ruleset: Ruleset, start: list[int] | Rows, players: list[PlayerRecord]
    ) -> Game | None:
        """The game, or ``None`` after saying why the core refuses it (e.g. a start position
        that is already an end position)."""
        board = start if isinstance(start, Rows) else ruleset.rules.start(start)
        try:
            setup = GameSetup(
                ruleset,
                board,
                tuple(p.as_player() for p in players),
                seed=self.rng.randrange(1 << 31),
            )
        except NimlabError as e:
            self.say(_argument_message(str(e)))
            return None
        return setup.build()

    def _announce_players(self, players: list[PlayerRecord]) -> None:
        self.say(f"Player 1: {players[0].full_name}")
        self.say(f"Player 2: {players[1].full_name}")
        self.say()

    def _finish(self, game: Game, players: list[PlayerRecord]) -> None:
        winner = game.winner_seat
        assert winner is not None
        self.store.save_game(game.to_record(), [p.username for p in players], source="shell")
        self.say("Game Over")
        self.say(f"{players[winner].full_name} wins!")


def _integer(text: str) -> int | None:
    """A whole number written in decimal (optionally signed), else None."""
    return int(text) if re.fullmatch(r"[+-]?\d{1,30}", text) else None


def _count(text: str, limit: int | None = MAX_STONES) -> int | None:
    """A count of at least 1 (and at most ``limit``), else None."""
    n = _integer(text)
    if n is None or n < 1 or (limit is not None and n > limit):
        return None
    return n


def _stones_message() -> str:
    return f"Invalid argument: the stone count must be a whole number from 1 to {MAX_STONES}."


def _argument_message(reason: str) -> str:
    return f"Invalid argument: {reason}."


def run_shell(store: Store, stdin: TextIO, stdout: TextIO, *, seed: int | None = None) -> int:
    """Run the shell over ``store`` until ``exit`` or the end of input; returns the exit status."""
    return NimShell(store, stdin, stdout, seed=seed).run()
