"""The web API's answers (pydantic models; with :mod:`nimlab.web.schemas_in`'s requests they
make the OpenAPI schema) and the error answers each route documents.

Seats are numbered from 0 in the order players were given (as in game records); piles and rows
from 1, as people see them. Heap sizes are exact JSON integers up to a googol
(:data:`nimlab.web.schemas_in.MAX_HEAP`).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "ADMIN_ONLY",
    "BUSY",
    "INPUT_ERRORS",
    "LEGAL_LIMIT",
    "LIMITED",
    "READ_LIMITED",
    "TURN_PAGE",
    "AnalysisOut",
    "BoardOut",
    "BotKindOut",
    "CheckOut",
    "CreatedOut",
    "ErrorOut",
    "GameKindOut",
    "GameListEntry",
    "GameListOut",
    "GameStateOut",
    "GameSummaryOut",
    "HintOut",
    "HistoryOut",
    "LoadedGameOut",
    "MoveOut",
    "MoveValueOut",
    "OptionsOut",
    "PlayerRecordOut",
    "QuotientOut",
    "ReplayFrame",
    "ReplayOut",
    "SeatLinkOut",
    "SeatOut",
    "TurnOut",
    "ValueStepOut",
]

TURN_PAGE = 100
"""The most turns one game state holds (``GET /api/games/{key}?since=N`` pages the rest)."""


LEGAL_LIMIT = 2000
"""A game's state lists its legal moves up to this many (``GameStateOut.moves``)."""


class ErrorOut(BaseModel):
    """Every error: ``detail`` says what was wrong and what is allowed; ``request_id`` is the
    id the server's log gives it (also in the ``X-Request-ID`` header)."""

    detail: str
    request_id: str | None = None


READ_LIMITED: dict[int | str, dict[str, Any]] = {
    429: {
        "model": ErrorOut,
        "description": "Too many reads of the API from this client (read_rate): wait and retry",
    },
}
"""The answer every read of the API (``GET /api/...``) may get, documented on each such route:
the server's guard takes one token of the client's read limit before the route runs
(:class:`nimlab.web.guard.Guard`)."""

INPUT_ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorOut, "description": "Malformed request (e.g. not JSON)"},
    413: {"model": ErrorOut, "description": "The request body is too large"},
    422: {"model": ErrorOut, "description": "Invalid input; the message says what is allowed"},
}
"""The answers to a request the API cannot read: not JSON, too large, or invalid (every route
that reads a body or parameters documents them)."""

NO_GAME_IN_PLAY: dict[int | str, dict[str, Any]] = {
    404: {"model": ErrorOut, "description": "No game with that id is in play"},
}
NO_STORED_GAME: dict[int | str, dict[str, Any]] = {
    404: {"model": ErrorOut, "description": "No such stored game"},
}
NO_PLAYER: dict[int | str, dict[str, Any]] = {
    404: {"model": ErrorOut, "description": "No such player"},
}
"""The answers of routes that name a game in play, a stored game or a registered player that
does not exist."""

BUSY: dict[int | str, dict[str, Any]] = {
    503: {"model": ErrorOut, "description": "The engine or the database is overloaded"},
}
"""The answer of a route that waits for the engine or the database when either is overloaded."""

LIMITED: dict[int | str, dict[str, Any]] = {
    429: {
        "model": ErrorOut,
        "description": "Too many requests from this client (or games in play): wait and retry",
    },
}
"""The answer of a route that takes a token of one of the client's limits (moves, new games,
registrations) beyond it."""

ADMIN_ONLY: dict[int | str, dict[str, Any]] = {
    401: {
        "model": ErrorOut,
        "description": "The server has an admin token: send it as Authorization: Bearer TOKEN",
    },
    403: {
        "model": ErrorOut,
        "description": "The server has no admin token and the request is not from its machine",
    },
}
"""The answers of a route only the admin may use (:func:`nimlab.web.access.require_admin`)."""


class BoardOut(BaseModel):
    """A board: ``piles`` (display order, emptied piles stay) or ``rows`` of stones as run
    lengths alternating present and absent stones, starting with present ones."""

    kind: Literal["piles", "rows"]
    piles: list[int]
    rows: list[list[int]]
    heaps: list[int]


class MoveOut(BaseModel):
    model_config = ConfigDict(frozen=True)  # the states listing a pile's move share its model

    pile: int
    take: int
    at: int | None
    also: list[list[int]] = Field(
        default_factory=list, description="More [pile, take] pairs of a move on several piles."
    )
    words: str | None = Field(
        None,
        description="What the move does, in words, for games that word their moves otherwise "
        'than taking from piles (Staircase Nim: "move 2 coins from step 3 down to step 2"); '
        "null for the others.",
    )


class SeatOut(BaseModel):
    seat: int
    name: str
    label: str
    bot: str | None
    username: str | None
    active: bool
    eliminated: bool


class TurnOut(BaseModel):
    number: int
    round: int
    seat: int
    name: str
    text: str = Field(..., description='e.g. "Hal took 2 from pile 3"')
    move: MoveOut
    before: BoardOut
    after: BoardOut
    claim: str | None
    eliminated: bool
    new_round: bool
    winner: int | None
    messages: list[str] = Field(
        ..., description='What the move caused: "Ann was eliminated!", the new round, "Hal wins!"'
    )


class GameStateOut(BaseModel):
    """A game as everyone sees it (no tokens)."""

    id: str
    ruleset: str
    description: str
    title: str
    rows: bool
    misere: bool
    end_positions: list[list[int]]
    start: BoardOut
    board: BoardOut
    players: list[SeatOut]
    first: int
    to_move: int | None
    round: int
    over: bool
    winner: int | None
    move_count: int
    turns_from: int = Field(
        ...,
        description="How many turns come before those in turns: turns holds moves "
        "turns_from+1 to move_count at most (GET ?since=N pages the history; a move's answer "
        "and the live updates hold only the new moves).",
    )
    turns: list[TurnOut]
    takes: list[list[int] | None] = Field(
        ..., description="Per pile, the amounts one may take (for piles small enough to draw)."
    )
    max_take: int | None
    thinking: bool
    status: str
    opening: list[str]
    saved_as: int | None = Field(None, description="The stored game's id once it is over.")
    problem: str | None = Field(
        None, description="Why the game cannot go on (a bot failed to move), else null."
    )
    ended: str | None = Field(
        None, description='Why the game stopped before its end: "Ann resigned.", "abandoned".'
    )
    takebacks: int = Field(0, description="How many take-backs (undo) this game has had.")
    analysis_allowed: bool = Field(
        True, description="Whether hints and move values may be asked now."
    )
    digits: list[int] = Field(
        [],
        description="Rows of stones: the rule's code digit for taking k stones at index k "
        "(1: may empty a run, 2: may leave one part, 4: may leave two parts); empty for games "
        "that are not take-and-break games. The page offers the moves of `moves` instead.",
    )
    words: list[str] = Field(
        ["pile", "match", "matches"],
        description='What a pile is called, and one and several of what is on it: ["pile", '
        '"match", "matches"], ["row", "stone", "stones"], Staircase Nim: ["step", "coin", '
        '"coins"].',
    )
    moves: list[MoveOut] | None = Field(
        None,
        description="Every legal move now (what a page may offer), when there are at most "
        "LEGAL_LIMIT of them and the game is not over; null beyond (type the move then).",
    )
    move_shape: Literal["one-pile", "several-piles", "stones"] = Field(
        "one-pile",
        description="What a move is: take from one pile, from several piles at once, or "
        "adjacent stones from a row (a cut of 0 stones where the rules allow it).",
    )
    limit: int | None = Field(
        None, description="The most the next move may take, where the position carries it."
    )


class SeatLinkOut(BaseModel):
    seat: int
    name: str
    token: str
    link: str


class CreatedOut(BaseModel):
    """A new game: its state and, for each human seat, the token and share link (shown once)."""

    state: GameStateOut
    seats: list[SeatLinkOut]
    watch: str
    owner_token: str | None = None
    """For a game of bots only: the token that stops it (POST /api/games/{key}/stop)."""


class CheckOut(BaseModel):
    ok: bool
    description: str
    players: list[str]


class GameListEntry(BaseModel):
    id: str
    description: str
    players: list[str]
    status: str
    move_count: int
    over: bool


class GameListOut(BaseModel):
    games: list[GameListEntry]


class MoveValueOut(BaseModel):
    pile: int
    take: int
    at: int | None
    also: list[list[int]] = Field(default_factory=list)
    result: list[int]
    outcome: str | None
    remoteness: int | None
    winning: bool | None


class ValueStepOut(BaseModel):
    """One step of the value history: after move ``number`` (0 = the start)."""

    number: int
    text: str
    to_move: int | None
    winner: int | None = Field(..., description="The seat that wins with perfect play from here.")
    remoteness: int | None
    mistake: bool
    mover_wins: bool | None = Field(
        None,
        description="More than two players (paranoid model): whether the player to move can "
        "force a win against all the others together.",
    )
    paranoid: bool = False


class QuotientOut(BaseModel):
    """A misère quotient, for the Learn panel: its elements, P-portion, presentation, the
    element of each heap size and (for at most 64 elements) its multiplication table."""

    code: str
    order: int
    elements: list[str]
    p_elements: list[str]
    generators: list[dict[str, Any]]
    relations: list[str]
    heap_images: list[str] = Field(..., description="The element of a heap of 0, 1, 2, ...")
    period: int | None
    preperiod: int | None
    proven: bool
    reason: str
    table: list[list[int]] | None = Field(
        None, description="table[x][y]: the product of elements x and y (indices of elements)."
    )


class AnalysisOut(BaseModel):
    move_count: int
    available: bool
    proven: bool = Field(..., description="Whether the position's value is proven.")
    pending: bool = Field(
        ...,
        description="Not proven yet, and a deeper search goes on: its answer is pushed over the "
        'game\'s WebSocket as {"type": "analysis", "analysis": ...}.',
    )
    note: str
    model: str
    to_move: int | None
    outcome: str | None
    remoteness: int | None
    grundy: int | None
    nim_sum: int | None
    binary: list[str]
    explanation: list[str]
    verdict: str
    moves: list[MoveValueOut]
    complete: bool
    history: list[ValueStepOut]
    quotient: QuotientOut | None = Field(
        None, description="The misère quotient that decides the position, when one does."
    )


class HintOut(BaseModel):
    move_count: int = Field(..., description="The number of moves played when it was given.")
    move: MoveOut
    text: str
    claim: str = Field(..., description="What the perfect bot claims: proven, or how it guessed.")
    proven: bool
    pending: bool = Field(
        ...,
        description="Not proven yet, and a deeper search goes on: its answer is pushed over the "
        'game\'s WebSocket as {"type": "hint", "hint": ...}.',
    )


class PlayerRecordOut(BaseModel):
    username: str
    given_name: str
    family_name: str
    ai: bool
    bot: str | None
    games_played: int
    games_won: int
    win_percent: int


class GameSummaryOut(BaseModel):
    id: int
    ruleset: str
    description: str
    players: list[str]
    winner: str | None
    move_count: int
    started_at: str
    finished_at: str
    source: str
    ending: Literal["resigned", "abandoned"] | None = Field(
        None, description="How the game stopped before its end, or null: played to its end."
    )
    winners: list[str] = Field(
        [], description="Who won: the winner, or the players sharing a resigned game's win."
    )


class HistoryOut(BaseModel):
    games: list[GameSummaryOut]


class ReplayFrame(BaseModel):
    """Frame 0 is the start; frame ``n`` shows move ``n`` (``before`` with ``taken`` marked,
    then ``board``, the position after it)."""

    number: int
    text: str
    before: BoardOut
    board: BoardOut
    taken: MoveOut | None
    note: str


class ReplayOut(BaseModel):
    game: GameSummaryOut
    rows: bool
    frames: list[ReplayFrame]
    words: list[str] = Field(
        ["pile", "match", "matches"], description="As a game's state says (GameStateOut.words)."
    )
    move_shape: Literal["one-pile", "several-piles", "stones"] = Field(
        "one-pile", description="As a game's state says (GameStateOut.move_shape)."
    )


class GameKindOut(BaseModel):
    """A kind of game from the registry (``nimlab.core.games``)."""

    name: str = Field(..., description='The name to send as a setup\'s game, e.g. "kayles".')
    title: str
    summary: str
    aliases: list[str]
    parameter: str = Field(
        ..., description='What follows "NAME:" (e.g. "CODE" for octal:CODE), "" for none.'
    )
    example: str = Field(..., description='An example parameter, e.g. "0.137".')
    board: Literal["piles", "rows"] | None = Field(
        ..., description="How it is shown; null when it depends on the parameter."
    )
    strategies: list[str] = Field(..., description="The engine strategy families that apply.")
    piles: int | None = Field(
        None, description="How many piles a position has, for games played on a fixed number."
    )
    start: list[int] = Field(
        default_factory=list, description="A start position to offer (heap sizes)."
    )
    move_shape: Literal["one-pile", "several-piles", "stones"] | None = Field(
        None, description="What a move is (null when it depends on the parameter)."
    )


class BotKindOut(BaseModel):
    kind: str
    title: str
    max_depth: int | None = Field(None, description="Look-ahead bots: the deepest search.")


class LoadedGameOut(BaseModel):
    """One game with its parameter, as the core reads it (``GET /api/game?name=...``)."""

    name: str = Field(..., description='The canonical text form, e.g. "octal:0.137".')
    title: str
    board: Literal["piles", "rows"]
    strategies: list[str]


class OptionsOut(BaseModel):
    bots: list[str]
    bot_kinds: list[BotKindOut]
    games: list[GameKindOut]
    default_end_positions: list[list[int]]
    first: list[str]
    max_piles: int
    max_stones: int
    registered: list[PlayerRecordOut]
