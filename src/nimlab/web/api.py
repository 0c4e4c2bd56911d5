"""The JSON API under ``/api`` (thin: parse, call, render): a game's start, its moves, its state,
its analysis and hints, and the live WebSocket of each game. The app matches them first, then
the club's routes (players, rankings, history, replay: :mod:`nimlab.web.club`), then a game's
life beyond its moves (resign, undo, delete: :mod:`nimlab.web.lifecycle`)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable
from typing import Annotated, Any, TypeVar

from fastapi import APIRouter, Query, Request, WebSocket, WebSocketDisconnect
from fastapi.responses import Response

from nimlab.core.errors import NimlabError
from nimlab.core.games import GAMES, parse_game
from nimlab.core.narrate import player_label
from nimlab.core.players import BOT_KINDS, BOT_TITLES, MAX_LOOKAHEAD
from nimlab.core.ruleset import DEFAULT_END_POSITIONS
from nimlab.core.setup import FIRST_CHOICES
from nimlab.web import metrics
from nimlab.web.access import client_of, live
from nimlab.web.answers import Limit, Offset, json_answer, page_of
from nimlab.web.club import add_player
from nimlab.web.errors import NotFound, Unavailable
from nimlab.web.live import LiveGame, LiveGames, engine_waits
from nimlab.web.livegame import state_text
from nimlab.web.schemas_in import (
    MAX_SETUP_PILES,
    MAX_STONES,
    MAX_TURN,
    GameKey,
    MoveIn,
    SetupIn,
)
from nimlab.web.schemas_out import (
    BUSY,
    INPUT_ERRORS,
    LIMITED,
    NO_GAME_IN_PLAY,
    READ_LIMITED,
    AnalysisOut,
    BotKindOut,
    CheckOut,
    CreatedOut,
    ErrorOut,
    GameKindOut,
    GameListOut,
    GameStateOut,
    HintOut,
    LoadedGameOut,
    OptionsOut,
    PlayerRecordOut,
)
from nimlab.web.views import created_json

__all__ = ["answer_create", "answer_move", "refused_body", "router"]

router = APIRouter(prefix="/api")

T = TypeVar("T")


_SETUP_ERRORS: dict[int | str, dict[str, Any]] = {
    **INPUT_ERRORS,
    **BUSY,
    404: {"model": ErrorOut, "description": "A registered username in the setup is unknown"},
}
_GAME_ERRORS: dict[int | str, dict[str, Any]] = {
    **INPUT_ERRORS,
    **NO_GAME_IN_PLAY,
}
_MOVE_ERRORS: dict[int | str, dict[str, Any]] = {
    **_GAME_ERRORS,
    **BUSY,
    403: {"model": ErrorOut, "description": "Wrong token for the seat, or a bot's seat"},
    409: {"model": ErrorOut, "description": "Not that seat's turn, stale, or the game is over"},
}


# -- setting up -----------------------------------------------------------------------------------


# The routes most requested come first: a request is matched against the routes in order.


@router.post(
    "/games/{key}/moves",
    response_model=GameStateOut,
    responses={**_MOVE_ERRORS, **LIMITED},
    summary="Play a move for a seat (its token proves it); bots reply before the answer, which "
    "holds the new turns only (a retry with the same turn gets the same answer)",
)
async def play_move(key: GameKey, move: MoveIn, request: Request) -> Response:
    return await answer_move(live(request), key, move, client_of(request))


async def answer_move(manager: LiveGames, key: str, move: MoveIn, client: str | None) -> Response:
    """The answer to a move request of ``client`` (:meth:`~nimlab.web.moves.MoveRequests.play`,
    within the client's limit): the game's new turns. Raises the errors the app's handlers
    answer. Shared by the route and :class:`~nimlab.web.direct.DirectPlay`, which calls it
    without the framework."""
    started = time.perf_counter()
    await manager.limit("move", client)
    lg, before = await manager.moves.play(key, move)
    metrics.move_answered(started)
    return Response(manager.state_json(lg, since=before), media_type="application/json")


@router.post(
    "/games",
    response_model=CreatedOut,
    status_code=201,
    responses={**_SETUP_ERRORS, **LIMITED},
    summary="Start a game; the answer has each human seat's token and share link",
)
async def create_game(setup: SetupIn, request: Request) -> Response:
    return await answer_create(live(request), setup, client_of(request))


async def answer_create(manager: LiveGames, setup: SetupIn, client: str | None) -> Response:
    """The answer to ``client``'s request to start a game
    (:meth:`~nimlab.web.starts.GameStarts.create`, within the client's limit): 201, the game and
    its seats' links. Raises the errors the app's handlers answer. Shared by the route and
    :class:`~nimlab.web.direct.DirectPlay`."""
    await manager.limit("create", client)
    lg, tokens, owner = await manager.starts.create(setup, client)
    seats = [
        {
            "seat": seat,
            "name": lg.game.players[seat].name,
            "token": token,
            "link": f"/game/{lg.key}#seat={seat}&token={token}",
        }
        for seat, token in sorted(tokens.items())
    ]
    created = created_json(manager.state_json(lg), seats, f"/game/{lg.key}", owner)
    return Response(created, 201, media_type="application/json")


@router.get(
    "/options",
    response_model=OptionsOut,
    responses=READ_LIMITED,
    summary="What a setup may choose",
)
async def options(request: Request) -> Response:
    manager = live(request)
    largest = manager.settings.max_page
    registered = await manager.read(lambda s: s.players(limit=largest))
    out = OptionsOut(
        bots=list(BOT_KINDS),
        bot_kinds=[
            BotKindOut(
                kind=kind,
                title=title,
                max_depth=MAX_LOOKAHEAD if kind == "lookahead" else None,
            )
            for kind, title in BOT_TITLES.items()
        ],
        games=[
            GameKindOut(
                name=e.name,
                title=e.title,
                summary=e.summary,
                aliases=list(e.aliases),
                parameter=e.parameter,
                example=e.example,
                board=e.board,
                strategies=list(e.strategies),
                piles=e.load(e.example).rules.piles,
                start=list(e.start),
                move_shape=None if e.board is None else e.load(e.example).rules.move_shape,
            )
            for e in GAMES.values()
        ],
        default_end_positions=[list(e) for e in DEFAULT_END_POSITIONS],
        first=list(FIRST_CHOICES),
        max_piles=MAX_SETUP_PILES,
        max_stones=MAX_STONES,
        registered=[PlayerRecordOut.model_validate(p.to_json()) for p in registered],
    )
    return json_answer(out)


@router.get(
    "/game",
    response_model=LoadedGameOut,
    responses={**INPUT_ERRORS, **READ_LIMITED},
    summary="One game read by the core: its canonical name, title and board (piles or rows)",
)
async def load_game_kind(
    name: Annotated[str, Query(min_length=1, max_length=200)],
) -> Response:
    kind = parse_game(name)
    out = LoadedGameOut(
        name=kind.name, title=kind.title, board=kind.board, strategies=list(kind.strategies)
    )
    return json_answer(out)


@router.post(
    "/setup/check",
    response_model=CheckOut,
    responses=_SETUP_ERRORS,
    summary="Check a setup: 422 with the core's message when it cannot be played",
)
async def check_setup(setup: SetupIn, request: Request) -> Response:
    game = await live(request).starts.check(setup, client_of(request))
    return json_answer(
        {
            "ok": True,
            "description": game.ruleset.describe(),
            "players": [player_label(p) for p in game.players],
        }
    )


# -- games in play --------------------------------------------------------------------------------


@router.get(
    "/games",
    response_model=GameListOut,
    responses={**INPUT_ERRORS, **READ_LIMITED},
    summary="The games in play their players made public (newest first, a page of them)",
)
async def list_games(request: Request, limit: Limit = None, offset: Offset = 0) -> Response:
    manager = live(request)
    page = await manager.public_games(page_of(request, limit), offset)  # the database's list
    entries = [
        {
            "id": lg.key,
            "description": lg.game.ruleset.describe(),
            "players": [p.name for p in lg.game.players],
            "status": manager.status(lg),
            "move_count": len(lg.game.history),
            "over": lg.game.is_over,
        }
        for lg in page
    ]
    return json_answer({"games": entries})


@router.get(
    "/games/{key}",
    response_model=GameStateOut,
    responses={**_GAME_ERRORS, **READ_LIMITED},
    summary="A game's state: with since=N the turns after move N (a page of them), else the "
    "last page of turns; a finished game's id still answers (saved_as: its stored game)",
)
async def get_game(
    key: GameKey,
    request: Request,
    since: Annotated[int | None, Query(ge=0, le=MAX_TURN)] = None,
) -> Response:
    manager = live(request)
    lg = await manager.lookup(key)
    manager.bots.looked_at(lg)
    return Response(manager.state_json(lg, since=since), media_type="application/json")


GONE = Response(status_code=499)
"""The answer to a request whose client went away before it (nobody reads it; 499 as nginx
logs it)."""


async def unless_gone(request: Request, work: Awaitable[T]) -> tuple[T] | None:
    """``(result,)`` of ``work``, or ``None`` when the client went away first: ``work`` is
    then cancelled, and with it the engine work nobody waits for any more (it went on for
    minutes after its askers left). Raises what ``work`` raises."""
    task = asyncio.ensure_future(work)
    gone = asyncio.ensure_future(_gone(request))
    try:
        await asyncio.wait({task, gone}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        gone.cancel()
        if not task.done():
            task.cancel()
    if task.cancelled():
        return None
    return (task.result(),)


async def _gone(request: Request) -> None:
    """Return once the client of ``request`` (a request without a body) has gone away."""
    while (await request.receive())["type"] != "http.disconnect":
        pass


@router.get(
    "/games/{key}/analysis",
    response_model=AnalysisOut,
    responses={**_GAME_ERRORS, **BUSY, **READ_LIMITED},
    summary="Every legal move's value, the nim-sum in binary, the explanation, the value "
    "history; within about 2 s, proven or not (a proof found later is pushed to the game's "
    "WebSocket)",
)
async def get_analysis(
    key: GameKey,
    request: Request,
    at: Annotated[
        int | None,
        Query(
            ge=0,
            le=MAX_TURN,
            description="A past position: the one after this move (0: the start); default: the "
            "position in play",
        ),
    ] = None,
) -> Response:
    learning = live(request).learning
    work = learning.analysis(key) if at is None else learning.analysis_at(key, at)
    done = await unless_gone(request, work)
    return GONE if done is None else json_answer(done[0])


@router.get(
    "/games/{key}/hint",
    response_model=HintOut,
    responses={
        **_MOVE_ERRORS,
        **READ_LIMITED,
        202: {
            "model": ErrorOut,
            "description": "The engine is busy with other games: the hint is pushed to the "
            'game\'s WebSocket as {"type": "hint", "hint": ...} when found',
        },
    },
    summary="The perfect bot's move for the player to move; within about 2 s, proven or an "
    "honest guess (a proof found later is pushed to the game's WebSocket)",
)
async def get_hint(key: GameKey, request: Request) -> Response:
    done = await unless_gone(request, live(request).learning.hint(key))
    if done is None:
        return GONE
    hint = done[0]
    if hint is None:
        waits = engine_waits()
        return json_answer(
            {
                "detail": f"{waits[0].lower()}{waits[1:]}: the hint will be sent to this "
                "game's pages as soon as it is worked out"
            },
            202,
        )
    return json_answer(hint)


@router.websocket("/games/{key}/live")
async def watch_game(websocket: WebSocket, key: str) -> None:
    """Every change of the game, as ``{"type": "state", "state": GameState}``: the first holds
    the last page of turns, each later one only the turns this page has not seen
    (``turns_from`` says where they start). Hints and analyses proven after their request was
    answered come as ``{"type": "hint", "hint": Hint}`` and
    ``{"type": "analysis", "analysis": Analysis}``. Messages from the page are ignored.

    A game not in play gets ``{"type": "error", "detail": ...}`` and close code 4404; a page
    that cannot be served now (the database cannot be read, or the client or the game has as
    many pages open as allowed) gets ``{"type": "unavailable", "detail": ...}`` and close code
    1013, try again later."""
    manager: LiveGames = websocket.app.state.live
    await websocket.accept()
    try:
        lg: LiveGame = await manager.lookup(key)
    except Unavailable as e:  # not known to be gone: the page tries again
        await _unavailable(websocket, e.message)
        return
    except (NotFound, NimlabError):
        await websocket.send_text(
            json.dumps({"type": "error", "detail": f"there is no game {key!r} in play"})
        )
        await websocket.close(code=4404)
        return
    client = client_of(websocket)
    refused = manager.watchers.admit(lg, client)
    if refused is not None:
        await _unavailable(websocket, refused)
        return
    try:
        await _watch(manager, lg, websocket)
    finally:
        manager.watchers.release(client)


async def _unavailable(websocket: WebSocket, detail: str) -> None:
    """Close a page's WebSocket with 1013 (try again later), saying why."""
    await websocket.send_text(json.dumps({"type": "unavailable", "detail": detail}))
    await websocket.close(code=1013, reason=detail[:120])


async def _watch(manager: LiveGames, lg: LiveGame, websocket: WebSocket) -> None:
    sub = manager.watchers.subscribe(lg)

    async def until_closed() -> None:
        while (await websocket.receive())["type"] != "websocket.disconnect":
            pass

    closed = asyncio.create_task(until_closed())
    try:
        await websocket.send_text(state_text(lg, None))
        while True:
            nxt = asyncio.create_task(manager.watchers.next_messages(lg, sub))
            done, _ = await asyncio.wait({nxt, closed}, return_when=asyncio.FIRST_COMPLETED)
            if closed in done:
                nxt.cancel()
                break
            for text in nxt.result():
                await websocket.send_text(text)
    except (WebSocketDisconnect, RuntimeError):
        pass
    finally:
        manager.watchers.unsubscribe(lg, sub)
        closed.cancel()


_BODY_LIMITS: dict[Any, str] = {play_move: "move", create_game: "create", add_player: "register"}
"""The routes whose requests take a token of a client's limit, and the limit's action."""


async def refused_body(request: Request) -> None:
    """Count a request whose body its route refused (it does not parse, or does not validate)
    against the client's limit of the route's action, as a well-formed request is counted, so
    that bad bodies cannot be sent faster than good ones: raises
    :class:`~nimlab.web.errors.TooManyRequests` beyond it. Nothing for another route."""
    action = _BODY_LIMITS.get(getattr(request.scope.get("route"), "endpoint", None))
    if action is not None:
        await live(request).limit(action, client_of(request))
