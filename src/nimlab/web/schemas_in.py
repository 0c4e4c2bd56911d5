"""The web API's request bodies and path parameters, and the bounds they hold (pydantic
models; with :mod:`nimlab.web.schemas_out`'s answers they make the OpenAPI schema).

Requests are read strictly (:class:`PlayerIn`, :class:`SetupIn`, :class:`MoveIn`, ...: no
unknown fields, no ``"1"`` for 1). Seats are numbered from 0 in the order players were given (as
in game records); piles and rows from 1, as people see them. Heap sizes are exact JSON integers
up to a googol (:data:`MAX_HEAP`).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import Path
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator

from nimlab.core.games import game_choices
from nimlab.core.players import MAX_LOOKAHEAD
from nimlab.core.record import MAX_PLAYERS

__all__ = [
    "MAX_ALSO",
    "MAX_HEAP",
    "MAX_KEY",
    "MAX_NAME",
    "MAX_SEAT",
    "MAX_SETUP_PILES",
    "MAX_STONES",
    "MAX_TURN",
    "GameId",
    "GameKey",
    "MoveIn",
    "PlayerIn",
    "RegisterIn",
    "SeatIn",
    "SetupIn",
    "StopIn",
    "UsernameIn",
    "whole_number",
]

MAX_SETUP_PILES = 100
"""The web app draws every pile, so a setup has at most this many."""

MAX_STONES = 1000
"""Rows of stones are drawn stone by stone: a game on rows has at most this many stones."""

MAX_HEAP = 10**100
"""The largest heap a web setup may have (a googol): heaps are sent as exact JSON integers,
so this bounds the size of every board the server sends (the terminal takes any size)."""

MAX_SEAT = MAX_PLAYERS - 1
"""Seats are numbered from 0 to this."""

MAX_NAME = 40
"""Names and usernames: 1 to this many characters (as the registry stores them)."""


def whole_number(value: Any) -> Any:
    """``value`` as the whole number it equals when it is a float with a zero fraction below
    2^63 (where a float is exact, so it is the number that was meant); anything else as it is."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**63:
        return int(value)
    return value


def _digits_only(value: object) -> object:
    """A stored game's id in a path is decimal digits only (no sign, space or other digit)."""
    if isinstance(value, str) and not (value.isascii() and value.isdigit()):
        raise ValueError("a game id is a number: digits 0-9 only")
    return value


MAX_KEY = 64
"""The longest key of a game in play a path may name."""
GameKey = Annotated[str, Path(max_length=MAX_KEY, description="The game's id")]
"""A game in play, in a path."""
GameId = Annotated[
    int,
    Path(ge=1, le=(1 << 63) - 1, description="The stored game's id"),
    BeforeValidator(_digits_only),  # after Path: its bounds then reach the schema as JSON Schema's
]
"""A stored game, in a path."""

MAX_TURN = 2**31 - 1
"""The largest move number a request may name."""

BotKind = Literal["human", "random", "classic", "lookahead", "perfect"]

Heap = Annotated[int, Field(ge=0, le=MAX_HEAP)]
EndPosition = Annotated[str, Field(min_length=1, max_length=200)]


class _In(BaseModel):
    """Requests are read strictly: no unknown fields, no "1" for 1, no false for 0; a number
    written with a zero fraction (``0.0``) is the whole number it equals, as in JSON Schema."""

    model_config = ConfigDict(extra="forbid", strict=True)

    @field_validator("*", mode="before")
    @classmethod
    def _whole_numbers(cls, value: Any) -> Any:
        if isinstance(value, list) and any(isinstance(v, float) for v in value):
            return [whole_number(v) for v in value]
        return whole_number(value)


class PlayerIn(_In):
    """A seat in a setup: a human by name, a bot by name and kind, or a registered player."""

    name: str = Field("", max_length=MAX_NAME, description="The name shown; bots get one if empty.")
    kind: BotKind = Field("human", description="human, or the bot kind.")
    depth: int | None = Field(
        None, ge=1, le=MAX_LOOKAHEAD, description="Look-ahead depth (lookahead bots only)."
    )
    error: float = Field(
        0, ge=0, le=100, description="Error rate in percent (bots): a random move that often."
    )
    username: str | None = Field(
        None,
        min_length=1,
        max_length=MAX_NAME,
        description="A registered player's username: the game counts in their statistics "
        "(name and kind then come from the registry).",
    )


class SetupIn(_In):
    """Everything that makes a game: players in turn order, piles, rules, who starts."""

    players: list[PlayerIn] = Field(..., min_length=2, max_length=MAX_PLAYERS)
    piles: list[Heap] = Field(
        ...,
        min_length=1,
        max_length=MAX_SETUP_PILES,
        description="Heap sizes (0 to a googol, 10^100); row lengths in Kayles-like games.",
    )
    game: str = Field(
        "nim", min_length=1, max_length=200, description=f"The game: {game_choices()}"
    )
    misere: bool = False
    end_positions: list[EndPosition] = Field(
        [],
        max_length=64,
        description="Extra end positions as free text: every run of digits is a heap size.",
    )
    first: Literal["first", "random", "auto"] | Annotated[int, Field(ge=0, le=MAX_SEAT)] = Field(
        "first",
        description="first (listed), random, auto (two players: the winning side) or a "
        "seat (0 = the first listed)",
    )
    seed: int | None = Field(None, ge=0, lt=1 << 62, description="For repeatable bots and dealing.")
    analysis: bool = Field(
        True,
        description="Whether hints and move values may be asked during play in a game between "
        "people (always after the game, in replays, and in games against bots only).",
    )
    public: bool = Field(
        False,
        description="Whether the game is listed among the games in play (GET /api/games) for "
        "anyone to watch, and once over in the history (GET /api/history); a private game is "
        "watched, and replayed once over, only by those given its link.",
    )


MAX_ALSO = 16
"""Most extra piles one move may name (Moore's Nim takes from at most 16 piles)."""


class MoveIn(_In):
    """A move request: the seat and its token prove who is moving; ``turn`` is the number the
    move will have (a retried request with the same turn gets the same answer, nothing is played
    twice). The move is ``pile`` and ``take`` (and ``at`` in rows of stones; ``also`` for more
    piles of a move on several piles, as in Wythoff's game), or ``text`` as people type it
    (``"2 3"``, ``"b3"``, ``"1 4 2"``, ``"a3 b3"``). ``take`` 0 is a split that removes nothing
    (rows of stones of games like 4.07 or Lasker's Nim, where the rules allow it)."""

    seat: int = Field(..., ge=0, le=MAX_SEAT, description="The moving seat (0 = first player).")
    token: str = Field(
        ..., min_length=1, max_length=200, description="The seat's token from its share link."
    )
    turn: int = Field(
        ...,
        ge=1,
        le=MAX_TURN,
        description="The number this move will have (1 = the first move): a stale request is "
        "refused (409), a retried one answered as the first time.",
    )
    pile: int | None = Field(
        None, ge=1, le=MAX_SETUP_PILES, description="The pile (or row) to take from, 1-based."
    )
    take: int | None = Field(
        None,
        ge=0,
        le=MAX_HEAP,
        description="How many objects to take (0: split a run without taking, where allowed).",
    )
    at: int | None = Field(
        None, ge=1, le=MAX_STONES, description="Rows of stones: the first stone taken, 1-based."
    )
    also: list[Annotated[list[int], Field(min_length=2, max_length=2)]] | None = Field(
        None,
        max_length=MAX_ALSO,
        description="More [pile, take] pairs of the same move (moves on several piles).",
    )
    text: str | None = Field(
        None, min_length=1, max_length=200, description="The move as text instead."
    )


class SeatIn(_In):
    """Who acts on a game (resign, abandon, take back, delete): the seat and its token."""

    seat: int = Field(..., ge=0, le=MAX_SEAT, description="The seat (0 = first player).")
    token: str = Field(
        ..., min_length=1, max_length=200, description="The seat's token from its share link."
    )


class StopIn(_In):
    """Who stops a game in play: the owner of a game of bots only, with the token its creation
    answered (``owner_token``); the admin sends the admin token as a header instead."""

    token: str | None = Field(
        None, min_length=1, max_length=200, description="The game's owner token."
    )


class RegisterIn(_In):
    """A player for the registry (addplayer / addaiplayer)."""

    username: str = Field(..., min_length=1, max_length=MAX_NAME)
    given: str = Field(..., min_length=1, max_length=MAX_NAME)
    family: str = Field(..., min_length=1, max_length=MAX_NAME)
    bot: str | None = Field(None, max_length=200, description="A bot spec for an AI player.")


class UsernameIn(_In):
    username: str = Field(..., min_length=1, max_length=MAX_NAME)
