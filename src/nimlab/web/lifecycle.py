"""A game's life beyond its moves: resign, abandon, take back (undo), delete, and the analysis
of a stored game's positions for replay.

- ``POST /api/games/{key}/resign``: a seat (its token proves it) gives up; with two players
  left the other one wins. The game stops and leaves the games in play.
- ``POST /api/games/{key}/abandon``: a seat stops the game; nobody wins.
- ``POST /api/games/{key}/undo``: in a game against bots, a seat takes back its last move and
  the bots' replies (``Game.undo_for``); the stored moves follow.
- ``DELETE /api/games/{key}``: forget a finished or stopped game (and its stored record).
- ``DELETE /api/history/{game_id}``: delete a stored game.
- ``GET /api/history/{game_id}/analysis?at=N``: the analysis of the position after move ``N``
  of a stored game, with the whole game's value history (mistakes marked).

Thin, like :mod:`nimlab.web.api`: checks, then the core (:class:`~nimlab.core.game.Game`) and
the store (:class:`~nimlab.storage.Store`) do the work.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from nimlab.core.errors import GameOverError, NimlabError, PlayerError
from nimlab.core.game import Game
from nimlab.core.narrate import wins_text
from nimlab.storage import Store
from nimlab.web.errors import Conflict, Forbidden
from nimlab.web.live import LiveGame, LiveGames
from nimlab.web.schemas import AnalysisOut, ErrorOut, GameStateOut
from nimlab.web.views import analysis_out

__all__ = ["DeletedOut", "SeatIn", "router"]

router = APIRouter()

GameKey = Annotated[str, Path(max_length=64, description="The game's id")]
GameId = Annotated[int, Path(ge=1, le=(1 << 63) - 1, description="The stored game's id")]

_SEAT_ERRORS: dict[int | str, dict[str, Any]] = {
    403: {"model": ErrorOut, "description": "Wrong token for the seat, or a bot's seat"},
    404: {"model": ErrorOut, "description": "No game with that id is in play"},
    409: {"model": ErrorOut, "description": "Not possible now (the game is over, ...)"},
    422: {"model": ErrorOut, "description": "Invalid input; the message says what is allowed"},
}


class SeatIn(BaseModel):
    """Who acts: the seat and its token (from the seat's share link)."""

    model_config = ConfigDict(extra="forbid")

    seat: int = Field(..., description="The seat (0 = first player).")
    token: str = Field(..., max_length=200, description="The seat's token.")


class DeletedOut(BaseModel):
    deleted: bool
    detail: str


def _live(request: Request) -> LiveGames:
    manager: LiveGames = request.app.state.live
    return manager


def _seat(lg: LiveGame, body: SeatIn) -> str:
    """The name of the seat acting; raises unless the token is that human seat's."""
    players = lg.game.players
    if not 0 <= body.seat < len(players):
        raise PlayerError(f"seat {body.seat} does not exist: seats are 0 to {len(players) - 1}")
    player = players[body.seat]
    if player.is_bot:
        raise Forbidden(f"seat {body.seat} is {player.name}, a bot: bots cannot do that")
    if not lg.check_token(body.seat, body.token):
        raise Forbidden(
            f"wrong token for seat {body.seat} ({player.name}): only the link given to "
            f"{player.name} can act for them"
        )
    return player.name


def _in_play(lg: LiveGame) -> None:
    if lg.game.is_over or lg.ended is not None:
        raise GameOverError("the game is over already")


async def _stop(manager: LiveGames, lg: LiveGame, why: str, winner: int | None) -> None:
    """End the game now: stop its bots, forget it in the games in play, tell every page."""
    driver = lg.driver
    if driver is not None and not driver.done():
        driver.cancel()
    lg.ended = why
    lg.ended_winner = winner
    lg.thinking = False
    key = lg.key
    await manager.write(lambda s: s.remove_live_game(key))
    manager.broadcast(lg)


@router.post(
    "/games/{key}/resign",
    response_model=GameStateOut,
    responses=_SEAT_ERRORS,
    summary="A seat resigns: with two players left the other one wins; the game stops",
)
async def resign(key: GameKey, body: SeatIn, request: Request) -> JSONResponse:
    manager = _live(request)
    lg = manager.get(key)
    name = _seat(lg, body)
    async with lg.lock:
        _in_play(lg)
        game = lg.game
        active = list(game.active)
        if body.seat not in active:
            raise Conflict(f"{name} is out of the game already")
        others = [s for s in active if s != body.seat]
        if len(others) == 1:
            winner = others[0]
            why = f"{name} resigned. {wins_text(game.players[winner])}"
        else:
            winner = None
            why = f"{name} resigned: the game is stopped."
        await _stop(manager, lg, why, winner)
    return JSONResponse(manager.state(lg).model_dump())


@router.post(
    "/games/{key}/abandon",
    response_model=GameStateOut,
    responses=_SEAT_ERRORS,
    summary="A seat abandons the game: it stops, nobody wins",
)
async def abandon(key: GameKey, body: SeatIn, request: Request) -> JSONResponse:
    manager = _live(request)
    lg = manager.get(key)
    name = _seat(lg, body)
    async with lg.lock:
        _in_play(lg)
        await _stop(manager, lg, f"Abandoned by {name}: nobody wins.", None)
    return JSONResponse(manager.state(lg).model_dump())


@router.post(
    "/games/{key}/undo",
    response_model=GameStateOut,
    responses=_SEAT_ERRORS,
    summary="Take back the seat's last move and the bots' replies (games against bots only)",
)
async def undo(key: GameKey, body: SeatIn, request: Request) -> JSONResponse:
    manager = _live(request)
    lg = manager.get(key)
    name = _seat(lg, body)
    game = lg.game
    humans = [s for s, p in enumerate(game.players) if not p.is_bot]
    if humans != [body.seat]:
        raise Conflict("take-backs are only for games against bots: ask the others for a new game")
    driver = lg.driver
    if driver is not None and not driver.done():
        driver.cancel()
    async with lg.lock:
        _in_play(lg)
        if lg.problem is not None:
            lg.problem = None
        try:
            game.undo_for(body.seat)
        except GameOverError:
            raise Conflict(f"{name} has no move to take back") from None
        record = game.to_record()
        key_ = lg.key

        def rewrite(store: Store) -> None:
            entry = store.live_game(key_)
            if entry is None:
                raise Conflict("the game is no longer in play")
            store.remove_live_game(key_)
            store.add_live_game(key_, record, entry[2])

        await manager.write(rewrite)
        lg.saved = len(game.history)
        lg.thinking = False
        lg.takebacks += 1
    manager.broadcast(lg)
    return JSONResponse(manager.state(lg).model_dump())


@router.delete(
    "/games/{key}",
    response_model=DeletedOut,
    responses={**_SEAT_ERRORS},
    summary="Delete a finished or stopped game (and its stored record)",
)
async def delete_game(key: GameKey, request: Request) -> JSONResponse:
    manager = _live(request)
    lg = manager.get(key)
    if not lg.game.is_over and lg.ended is None:
        raise Conflict("the game is still in play: resign or abandon it first")
    saved = lg.saved_as
    if saved is not None:
        await manager.write(lambda s: s.delete_game(saved))
    manager.games.pop(key, None)
    what = f"game #{saved}" if saved is not None else "the game"
    return JSONResponse({"deleted": True, "detail": f"{what} was deleted"})


@router.delete(
    "/history/{game_id}",
    response_model=DeletedOut,
    responses={404: {"model": ErrorOut, "description": "No such stored game"}},
    summary="Delete a stored game (players' statistics stay as they are)",
)
async def delete_stored(game_id: GameId, request: Request) -> JSONResponse:
    manager = _live(request)
    await manager.write(lambda s: s.delete_game(game_id))
    for key, lg in list(manager.games.items()):
        if lg.saved_as == game_id:
            manager.games.pop(key, None)
    return JSONResponse({"deleted": True, "detail": f"game #{game_id} was deleted"})


@router.get(
    "/history/{game_id}/analysis",
    response_model=AnalysisOut,
    responses={404: {"model": ErrorOut, "description": "No such stored game"}},
    summary="The analysis after move `at` of a stored game, with its whole value history",
)
async def stored_analysis(
    game_id: GameId,
    request: Request,
    at: Annotated[int | None, Query(ge=0, description="The move (default: the last)")] = None,
) -> JSONResponse:
    manager = _live(request)
    stored = await manager.read(lambda s: s.game(game_id))

    def work() -> AnalysisOut:
        game = Game.from_record(stored.record)
        whole = analysis_out(game)
        upto = len(game.history) if at is None else min(at, len(game.history))
        if upto == len(game.history):
            return whole
        while len(game.history) > upto:
            game.pop()
        out = analysis_out(game)
        out.history = whole.history
        return out

    try:
        out = await manager.compute(f"stored:{game_id}", "analysis", work)
    except NimlabError as e:
        raise NimlabError(f"game #{game_id} cannot be analysed: {e}") from None
    return JSONResponse(out.model_dump())
