"""Sentences about games for people, shared by every interface (terminal, shell, web).

>>> from nimlab.core.game import Game
>>> game = Game("nim", [3, 4, 5], ["human:Ann", "bot:perfect:Hal"])
>>> turn_text(game.push("3 2"))
'Ann took 2 from pile 3'
"""

from __future__ import annotations

from collections.abc import Sequence

from nimlab.core.game import Game, Player, Turn
from nimlab.core.position import Board, Move, Rows

__all__ = [
    "eliminated_text",
    "move_text",
    "names_text",
    "new_round_text",
    "player_label",
    "round_text",
    "turn_messages",
    "turn_text",
    "wins_text",
]

YOU = "You"
"""The default name of a human player; sentences about "You" are conjugated accordingly."""


def move_text(move: Move, board: Board) -> str:
    """What a move takes, after "took": ``"2 from pile 3"``, ``"stones 4-5"`` (one row of
    stones) or ``"stone 4 from row 2"``. ``board`` is the board the move was made on."""
    if move.at is None:
        return f"{move.take:,} from pile {move.pile}"
    single = isinstance(board, Rows) and board.pile_count == 1
    if move.take == 0:  # a split that takes nothing (octal codes like 4.07)
        where = "" if single else f" of row {move.pile}"
        return f"no stone, cutting before stone {move.at}{where}"
    last = move.at + move.take - 1
    stones = f"stone {move.at}" if move.take == 1 else f"stones {move.at}-{last}"
    if single:
        return stones
    return f"{stones} from row {move.pile}"


def turn_text(turn: Turn) -> str:
    """``"Hal took 2 from pile 3"``: the seeds' announcement of a move."""
    return f"{turn.player.name} took {move_text(turn.move, turn.before)}"


def player_label(player: Player) -> str:
    """``"Hal (perfect bot)"`` or ``"Ann"``."""
    if player.bot is None or player.name.lower().startswith(player.bot.label.lower()):
        return player.name
    return f"{player.name} ({player.bot.label})"


def names_text(names: Sequence[str]) -> str:
    """``"Ann"``, ``"Ann and Bob"``, ``"Ann, Bob and Hal"``."""
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def new_round_text(round_number: int, names: Sequence[str]) -> str:
    """``"Round 2: Bob and Hal play on from the start position."``"""
    return f"Round {round_number}: {names_text(names)} play on from the start position."


def round_text(game: Game) -> str:
    """The sentence for the round in play (:func:`new_round_text` with the players still in)."""
    return new_round_text(game.round, [game.players[s].name for s in game.active])


def turn_messages(game: Game) -> list[list[str]]:
    """For each move of the game, what it caused, in the seeds' words: ``"Ann was
    eliminated!"``, the new round with the players still in, ``"Hal wins!"``."""
    out_seats = set(game.opening_eliminations)
    out: list[list[str]] = []
    for turn in game.history:
        messages = []
        if turn.eliminated:
            out_seats.add(turn.seat)
            messages.append(eliminated_text(turn.player))
        if turn.new_round and turn.winner is None:
            names = [p.name for s, p in enumerate(game.players) if s not in out_seats]
            messages.append(new_round_text(turn.round + 1, names))
        if turn.winner is not None:
            messages.append(wins_text(turn.winner))
        out.append(messages)
    return out


def wins_text(player: Player) -> str:
    """``"Hal wins!"`` (seed 000), or ``"You win!"``."""
    return "You win!" if player.name == YOU else f"{player.name} wins!"


def eliminated_text(player: Player) -> str:
    """``"Ann was eliminated!"`` (seed 000), or ``"You were eliminated!"``."""
    return "You were eliminated!" if player.name == YOU else f"{player.name} was eliminated!"
