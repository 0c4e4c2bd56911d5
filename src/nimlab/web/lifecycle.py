"""A game's life beyond its moves: resign, abandon, take back (undo), delete, and the analysis
of a stored game's positions for replay.

- ``POST /api/games/{key}/resign``: a seat (its token proves it) gives up: the other players
  still in the game win (with two left: the other one; with more, they share the win).
- ``POST /api/games/{key}/abandon``: a seat stops the game; nobody wins, no statistics change.
  Both store the game with its ending (``ended``) in the history and take it out of the games
  in play in one transaction; its link then leads to its replay.
- ``POST /api/games/{key}/stop``: the owner of a game of bots only (the token its creation
  answered) or the admin (the admin token) stops a game in play: stored as abandoned, nobody
  wins.
- ``POST /api/games/{key}/undo``: in a game against bots, a seat takes back its last move and
  the bots' replies (``Game.undo_for``); the stored moves follow.
- ``DELETE /api/games/{key}``: a seat (its token) asks to delete its finished or stopped game:
  the game leaves that player's history at once, and the stored game is deleted once every
  human seat asked (or at once with the admin token).
- ``DELETE /api/history/{game_id}``: delete a stored game (behind the admin token when the
  server has one, like the registry's changes).
- ``GET /api/history/{game_id}/analysis?at=N``: the analysis of the position after move ``N``
  of a stored game, with the whole game's value history (mistakes marked).

Each goes through the server's guards like a move: the rate limit on moves per client, the
seat's token, strict request bodies; and each stops the game's engine work (bots, hints,
analyses) before it changes the game (:meth:`~nimlab.web.bots_driver.BotDriver.halt`), and every
change is the owner's (:class:`~nimlab.web.owner.GameOwner`).

Thin, like :mod:`nimlab.web.api`: checks, then the core (:class:`~nimlab.core.game.Game`) and
the store (:class:`~nimlab.storage.Store`) do the work.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel

from nimlab.core.errors import NimlabError
from nimlab.core.game import Game
from nimlab.theory.budget import BudgetExceeded
from nimlab.web.access import GameKeyQuery, client_of, is_admin, live, require_admin, stored_game
from nimlab.web.analysis_views import analysis_after, blank_analysis
from nimlab.web.answers import json_answer
from nimlab.web.errors import Conflict, Forbidden
from nimlab.web.live import LiveGame, LiveGames
from nimlab.web.schemas_in import MAX_TURN, GameId, GameKey, SeatIn, StopIn
from nimlab.web.schemas_out import (
    ADMIN_ONLY,
    BUSY,
    INPUT_ERRORS,
    NO_GAME_IN_PLAY,
    NO_STORED_GAME,
    READ_LIMITED,
    AnalysisOut,
    ErrorOut,
    GameStateOut,
)

__all__ = ["DeletedOut", "router"]

router = APIRouter(prefix="/api")


_SEAT_ERRORS: dict[int | str, dict[str, Any]] = {
    **INPUT_ERRORS,
    **BUSY,
    403: {"model": ErrorOut, "description": "Wrong token for the seat, or a bot's seat"},
    **NO_GAME_IN_PLAY,
    409: {"model": ErrorOut, "description": "Not possible now (the game is over, ...)"},
    429: {"model": ErrorOut, "description": "Too many requests from this client: wait and retry"},
}


class DeletedOut(BaseModel):
    deleted: bool
    detail: str


async def _guarded(request: Request) -> LiveGames:
    """The games, after taking one of the client's move tokens (429 beyond the rate limit)."""
    manager = live(request)
    await manager.limit("move", client_of(request))
    return manager


def _seat(manager: LiveGames, lg: LiveGame, body: SeatIn) -> str:
    """The name of the seat acting; raises unless the token is that human seat's."""
    return manager.owner.check_seat(lg, body.seat, body.token)


def _state(manager: LiveGames, lg: LiveGame) -> Response:
    """The game's state after a change, as every route answers it."""
    return Response(manager.state_json(lg), media_type="application/json")


async def _stop(request: Request, key: str, body: SeatIn, how: str) -> Response:
    manager = await _guarded(request)
    lg = await manager.lookup(key)
    name = _seat(manager, lg, body)

    def still_playing() -> None:
        if body.seat not in lg.game.active:
            raise Conflict(f"{name} is out of the game already")

    await manager.owner.end(lg, how, lambda: body.seat, allowed=still_playing)
    return _state(manager, lg)


@router.post(
    "/games/{key}/resign",
    response_model=GameStateOut,
    responses=_SEAT_ERRORS,
    summary="A seat resigns: the other players still in the game win; the game is stored",
)
async def resign(key: GameKey, body: SeatIn, request: Request) -> Response:
    return await _stop(request, key, body, "resigned")


@router.post(
    "/games/{key}/abandon",
    response_model=GameStateOut,
    responses=_SEAT_ERRORS,
    summary="A seat abandons the game: it stops, nobody wins, no statistics change",
)
async def abandon(key: GameKey, body: SeatIn, request: Request) -> Response:
    return await _stop(request, key, body, "abandoned")


@router.post(
    "/games/{key}/stop",
    response_model=GameStateOut,
    responses=_SEAT_ERRORS,
    summary="Stop a game in play: its owner (a game of bots only, with the owner token) or the "
    "admin (Authorization: Bearer TOKEN); it is stored as abandoned, nobody wins",
)
async def stop(key: GameKey, body: StopIn, request: Request) -> Response:
    manager = await _guarded(request)
    lg = await manager.lookup(key)
    admin = is_admin(request)
    if not manager.owner.may_stop(lg, body.token, admin=admin):
        raise Forbidden(
            "only the owner of a game of bots only (with the token its creation answered) or "
            "the admin (Authorization: Bearer TOKEN) may stop a game; players resign or abandon"
        )
    by = "the admin" if admin else "its owner"
    ended = f"Stopped by {by}: nobody wins."
    await manager.owner.end(lg, "abandoned", lambda: lg.game.to_move_seat, text=ended)
    return _state(manager, lg)


@router.post(
    "/games/{key}/undo",
    response_model=GameStateOut,
    responses=_SEAT_ERRORS,
    summary="Take back the seat's last move and the bots' replies (games against bots only)",
)
async def undo(key: GameKey, body: SeatIn, request: Request) -> Response:
    manager = await _guarded(request)
    lg = await manager.lookup(key)
    await manager.owner.undo(lg, body.seat, body.token)
    return _state(manager, lg)


@router.delete(
    "/games/{key}",
    response_model=DeletedOut,
    responses=_SEAT_ERRORS,
    summary="A seat asks to delete its finished or stopped game: it leaves that player's "
    "history, and the stored game is deleted once every human seat asked (or by the admin)",
)
async def delete_game(key: GameKey, body: SeatIn, request: Request) -> JSONResponse:
    manager = await _guarded(request)
    lg = await manager.lookup(key)
    name = _seat(manager, lg, body)
    if not lg.game.is_over and lg.ended is None:
        raise Conflict("the game is still in play: resign or abandon it first")
    await manager.bots.halt(lg)
    saved = lg.saved_as
    humans = [s for s, p in enumerate(lg.game.players) if not p.is_bot]
    deleted = True
    if saved is not None:
        if is_admin(request):
            await manager.write(lambda s: s.delete_game(saved))
        else:
            seat = body.seat
            deleted = await manager.write(lambda s: s.request_delete(saved, seat, humans))
    what = f"game #{saved}" if saved is not None else "the game"
    if not deleted:
        return JSONResponse(
            {
                "deleted": False,
                "detail": f"{what} left {name}'s history; it is deleted for everyone once "
                "every player of it asked",
            }
        )
    manager.owner.ledger.drop(lg)
    return JSONResponse({"deleted": True, "detail": f"{what} was deleted"})


@router.delete(
    "/history/{game_id}",
    response_model=DeletedOut,
    responses={
        **INPUT_ERRORS,
        **ADMIN_ONLY,
        **NO_STORED_GAME,
        429: {"model": ErrorOut, "description": "Too many requests from this client"},
    },
    summary="Delete a stored game (players' statistics stay as they are; behind the admin "
    "token when the server has one)",
)
async def delete_stored(game_id: GameId, request: Request) -> JSONResponse:
    require_admin(request)
    manager = await _guarded(request)
    await manager.write(lambda s: s.delete_game(game_id))
    for lg in list(manager.games.values()):
        if lg.saved_as == game_id:
            manager.owner.ledger.drop(lg)
    return JSONResponse({"deleted": True, "detail": f"game #{game_id} was deleted"})


@router.get(
    "/history/{game_id}/analysis",
    response_model=AnalysisOut,
    responses={
        **INPUT_ERRORS,
        **BUSY,
        **READ_LIMITED,
        **NO_STORED_GAME,
    },
    summary="The analysis after move `at` of a stored game, with its whole value history (a "
    "private game: with key=, the id it had in play)",
)
async def stored_analysis(
    game_id: GameId,
    request: Request,
    at: Annotated[
        int | None, Query(ge=0, le=MAX_TURN, description="The move (default: the last)")
    ] = None,
    key: GameKeyQuery = None,
) -> Response:
    manager = live(request)
    stored = await stored_game(request, game_id, key)

    def work() -> AnalysisOut:
        return analysis_after(Game.from_record(stored.record), at)

    try:
        out = await manager.compute(f"stored:{game_id}", "analysis", work)
    except NimlabError as e:
        raise NimlabError(f"game #{game_id} cannot be analysed: {e}") from None
    except BudgetExceeded:
        out = blank_analysis(
            len(stored.record.get("moves") or []) if at is None else at,
            available=False,
            note="Not worked out: this game's analysis is beyond the engine's budget.",
        )
    return json_answer(out)
