"""The club's routes under ``/api``: its registered players (list, register, remove, reset
their statistics), the rankings, and the stored games (the history, a game's replay frame by
frame). Thin, like :mod:`nimlab.web.api`: checks, then the store
(:class:`~nimlab.storage.Store`) and the core do the work.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response

from nimlab.core.errors import NimlabError
from nimlab.core.game import Game
from nimlab.core.players import parse_bot
from nimlab.core.ruleset import Ruleset
from nimlab.storage import GameSummary, PlayerRecord, Store, check_username, ending_of
from nimlab.web.access import GameKeyQuery, client_of, live, require_admin, stored_game
from nimlab.web.answers import Limit, Offset, json_answer, page_of
from nimlab.web.live import ended_text
from nimlab.web.schemas_in import MAX_NAME, GameId, RegisterIn, UsernameIn
from nimlab.web.schemas_out import (
    ADMIN_ONLY,
    INPUT_ERRORS,
    LIMITED,
    NO_PLAYER,
    NO_STORED_GAME,
    READ_LIMITED,
    ErrorOut,
    HistoryOut,
    PlayerRecordOut,
    ReplayOut,
)
from nimlab.web.views import replay_frames

__all__ = ["add_player", "router"]

router = APIRouter(prefix="/api")


def _player_json(p: PlayerRecord) -> dict[str, Any]:
    return p.to_json()


def _describe(ruleset: str) -> str:
    try:
        return Ruleset.parse(ruleset).describe()
    except NimlabError:
        return ruleset


def _summary_json(s: GameSummary) -> dict[str, Any]:
    return {
        "id": s.id,
        "ruleset": s.ruleset,
        "description": _describe(s.ruleset),
        "players": [seat.name for seat in s.seats],
        "winner": None if s.winner is None else s.winner.name,
        "move_count": s.move_count,
        "started_at": s.started_at,
        "finished_at": s.finished_at,
        "source": s.source,
        "ending": s.ending,
        "winners": [seat.name for seat in s.seats if seat.won],
    }


# -- the registry ---------------------------------------------------------------------------------


@router.get(
    "/players",
    response_model=list[PlayerRecordOut],
    responses={**INPUT_ERRORS, **READ_LIMITED},
    summary="Registered players by username (a page of them)",
)
async def list_players(request: Request, limit: Limit = None, offset: Offset = 0) -> Response:
    size = page_of(request, limit)
    players = await live(request).read(lambda s: s.players(limit=size, offset=offset))
    return json_answer([_player_json(p) for p in players])


@router.post(
    "/players",
    response_model=PlayerRecordOut,
    status_code=201,
    responses={
        **INPUT_ERRORS,
        **LIMITED,
        409: {"model": ErrorOut, "description": "The username is taken"},
    },
    summary="Register a human, or an AI player with a bot spec (so many per client per hour)",
)
async def add_player(body: RegisterIn, request: Request) -> Response:
    await live(request).limit("register", client_of(request))
    bot = None if body.bot is None or not body.bot.strip() else str(parse_bot(body.bot))

    def add(store: Store) -> PlayerRecord:
        return store.add_player(body.username, given=body.given, family=body.family, bot=bot)

    return json_answer(_player_json(await live(request).write(add)), 201)


@router.post(
    "/players/remove",
    response_model=list[PlayerRecordOut],
    responses={
        **INPUT_ERRORS,
        **ADMIN_ONLY,
        **NO_PLAYER,
    },
    summary="Remove a registered player (their past games stay)",
)
async def remove_player(body: UsernameIn, request: Request) -> Response:
    return await _players_after(request, body, Store.remove_player)


@router.post(
    "/players/reset",
    response_model=list[PlayerRecordOut],
    responses={
        **INPUT_ERRORS,
        **ADMIN_ONLY,
        **NO_PLAYER,
    },
    summary="Set a player's games played and won to 0",
)
async def reset_player(body: UsernameIn, request: Request) -> Response:
    return await _players_after(request, body, Store.reset_stats)


async def _players_after(
    request: Request, body: UsernameIn, change: Callable[[Store, str], object]
) -> Response:
    """An administrator's ``change`` of the player ``body`` names, answered with every player."""
    require_admin(request)
    username = check_username(body.username)

    def run(store: Store) -> list[PlayerRecord]:
        change(store, username)
        return store.players()

    return json_answer([_player_json(p) for p in await live(request).write(run)])


@router.get(
    "/rankings",
    response_model=list[PlayerRecordOut],
    responses={**INPUT_ERRORS, **READ_LIMITED},
    summary="Players by win rate",
)
async def rankings(
    request: Request,
    order: Literal["desc", "asc"] = "desc",
    limit: Annotated[int, Query(ge=1, le=1000)] = 10,
) -> Response:
    players = await live(request).read(lambda s: s.rankings(ascending=order == "asc", limit=limit))
    return json_answer([_player_json(p) for p in players])


# -- stored games ---------------------------------------------------------------------------------


@router.get(
    "/history",
    response_model=HistoryOut,
    responses={
        **INPUT_ERRORS,
        **READ_LIMITED,
        **NO_PLAYER,
    },
    summary="Stored games, newest first (not the games their players kept private)",
)
async def history(
    request: Request,
    limit: Annotated[int, Query(ge=1, le=1000)] = 50,
    player: Annotated[str | None, Query(min_length=1, max_length=MAX_NAME)] = None,
    offset: Offset = 0,
) -> Response:
    username = None if player is None else check_username(player)
    size = page_of(request, limit)

    def games(store: Store) -> list[GameSummary]:
        if username is not None:
            store.get_player(username)
        return store.games(username=username, limit=size, offset=offset, private=False)

    summaries = await live(request).read(games)
    return json_answer({"games": [_summary_json(s) for s in summaries]})


@router.get(
    "/history/{game_id}",
    response_model=ReplayOut,
    responses={
        **INPUT_ERRORS,
        **READ_LIMITED,
        **NO_STORED_GAME,
    },
    summary="A stored game, frame by frame, for replay (a private game: with key=, the id it "
    "had in play)",
)
async def replay(game_id: GameId, request: Request, key: GameKeyQuery = None) -> Response:
    manager = live(request)
    stored = await stored_game(request, game_id, key)
    try:
        game = await manager.compute(
            f"replay:{game_id}", "replay", lambda: Game.from_record(stored.record)
        )
    except NimlabError as e:
        raise NimlabError(f"game #{game_id} cannot be replayed: {e}") from None
    frames = replay_frames(game)
    ending = ending_of(stored.record, len(game.players))
    if ending is not None:  # the last frame says how it stopped
        last = frames[-1]
        last.note = " ".join(x for x in (last.note, ended_text(list(game.players), ending)) if x)
    return json_answer(
        {
            "game": _summary_json(stored.summary),
            "rows": game.ruleset.rules.splits,
            "frames": [f.model_dump() for f in frames],
            "words": list(game.ruleset.rules.piece_words),
            "move_shape": game.ruleset.rules.move_shape,
        }
    )
