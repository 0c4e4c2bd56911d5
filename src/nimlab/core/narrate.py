"""Sentences about games for people, shared by every interface (terminal, shell, web).

>>> from nimlab.core.game import Game
>>> game = Game("nim", [3, 4, 5], ["human:Ann", "bot:perfect:Hal"])
>>> turn_text(game.push("3 2"))
'Ann took 2 from pile 3'
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from nimlab.core.position import Board, Move
from nimlab.core.rules import move_phrase
from nimlab.core.ruleset import Ruleset

if TYPE_CHECKING:  # (an analysis's header needs no game: its command loads none)
    from nimlab.core.game import Game, Player, Turn

__all__ = [
    "eliminated_text",
    "move_instruction",
    "move_text",
    "names_text",
    "new_round_text",
    "pile_name",
    "player_label",
    "round_text",
    "rules_text",
    "turn_messages",
    "turn_text",
    "wins_text",
]

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
"""Pile letters, for boards of at most 26 piles."""

YOU = "You"
"""The default name of a human player; sentences about "You" are conjugated accordingly."""


def pile_name(pile: int, board: Board, *, letters: bool = False) -> str:
    """How a pile is named: its number, or with ``letters`` its letter (``"B"``) when the board
    has at most 26 piles (as the terminal draws it)."""
    if letters and board.pile_count <= len(LETTERS):
        return LETTERS[pile - 1] if 1 <= pile <= len(LETTERS) else str(pile)
    return str(pile)


def move_text(move: Move, board: Board, *, letters: bool = False) -> str:
    """A move as an instruction without its verb where it is "take": ``"2 from pile 3"``
    (with ``letters``: ``"2 from pile C"``, see :func:`pile_name`), ``"stones 4-5"`` (one row
    of stones), ``"stone 4 from row 2"``, as people type it back; other moves as their rules
    word them (``"move 2 coins from step C down to step B"``). ``board`` is the board the
    move was made on."""
    text = move_instruction(move, board, letters=letters)
    return text.removeprefix("take ")


def move_instruction(move: Move, board: Board, *, letters: bool = False) -> str:
    """A move as an instruction, as its rules word it: ``"take 2 from pile C"``, ``"move 2
    coins from step C down to step B"`` (``letters``: see :func:`pile_name`)."""
    return move_phrase(move, board, _namer(board, letters))


def _namer(board: Board, letters: bool) -> Callable[[int], str]:
    return lambda pile: pile_name(pile, board, letters=letters)


def rules_text(ruleset: Ruleset, players: int = 2) -> str:
    """The ruleset in a sentence for a game of ``players`` players: with more than two in
    misère play nobody loses at once, so the sentence says what happens instead.

    >>> from nimlab.core.ruleset import Ruleset
    >>> rules_text(Ruleset.parse("nim misere"), 3)
    'Nim, misère play (whoever moves into an end position is eliminated, and the others play on from the start position, the first of them in seat order moving first, until one is left)'
    """  # noqa: E501
    text = ruleset.describe()
    if players > 2 and ruleset.misere:
        # Who starts a new round: the remaining player seated first (core.game.Game._end_round).
        text = text.replace(
            "whoever moves into an end position loses",
            "whoever moves into an end position is eliminated, and the others play on from the "
            "start position, the first of them in seat order moving first, until one is left",
        )
    return text


def turn_text(turn: Turn, *, letters: bool = False) -> str:
    """``"Hal took 2 from pile 3"``, ``"Hal moved 2 coins from step 3 down to step 2"``: the
    announcement of a move, as its rules word it (``letters``: see :func:`pile_name`)."""
    board = turn.before
    phrase = move_phrase(turn.move, board, _namer(board, letters), past=True)
    return f"{turn.player.name} {phrase}"


def player_label(player: Player) -> str:
    """``"Hal (perfect bot)"`` or ``"Ann"``; a bot named after its kind is not named twice:
    ``"Perfect bot (30% errors)"``, not ``"Perfect bot (perfect bot, 30% errors)"``."""
    if player.bot is None:
        return player.name
    label = player.bot.label
    kind, _, errors = label.partition(", ")
    if player.name.lower().startswith(label.lower()):
        return player.name
    if player.name.lower() == kind.lower():
        return f"{player.name} ({errors})" if errors else player.name
    return f"{player.name} ({label})"


def names_text(names: Sequence[str]) -> str:
    """``"Ann"``, ``"Ann and Bob"``, ``"Ann, Bob and Hal"``."""
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def new_round_text(round_number: int, names: Sequence[str]) -> str:
    """``"Round 2: Bob and Hal play on from the start position."``"""
    return f"Round {round_number}: {names_text(names)} play on from the start position."


def round_text(game: Game) -> str:
    """The sentence for the round in play (:func:`new_round_text` with the players still in)."""
    return new_round_text(game.round, [game.players[s].name for s in game.active])


def turn_messages(game: Game, start: int = 0, stop: int | None = None) -> list[list[str]]:
    """For moves ``start + 1`` to ``stop`` of the game (default: every move), what each caused,
    in the words every interface uses: ``"Ann was eliminated!"``, the new round with the
    players still in, ``"Hal wins!"``. O(stop - start), whatever the length of the game."""
    history = game.history
    stop = len(history) if stop is None else min(stop, len(history))
    start = max(0, start)
    if start >= stop:
        return []
    out_seats = set(game.state_before(start + 1).eliminated)
    out: list[list[str]] = []
    for turn in history[start:stop]:
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
    """``"Hal wins!"`` or ``"You win!"``."""
    return "You win!" if player.name == YOU else f"{player.name} wins!"


def eliminated_text(player: Player) -> str:
    """``"Ann was eliminated!"`` or ``"You were eliminated!"``."""
    return "You were eliminated!" if player.name == YOU else f"{player.name} was eliminated!"
