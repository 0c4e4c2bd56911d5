"""The JSON API under ``/api`` and the live WebSocket of each game (thin: parse, call, render)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable
from typing import Annotated, Any, Literal, TypeVar

from fastapi import APIRouter, Query, Request, WebSocket, WebSocketDisconnect
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel

from nimlab.core.errors import NimlabError
from nimlab.core.game import Game
from nimlab.core.games import GAMES, parse_game
from nimlab.core.narrate import player_label
from nimlab.core.players import BOT_KINDS, BOT_TITLES, MAX_LOOKAHEAD, parse_bot
from nimlab.core.ruleset import DEFAULT_END_POSITIONS, Ruleset
from nimlab.core.setup import FIRST_CHOICES
from nimlab.storage import GameSummary, PlayerRecord, Store, check_username, ending_of
from nimlab.web import metrics
from nimlab.web.access import GameKeyQuery, client_of, live, require_admin, stored_game
from nimlab.web.errors import NotFound, Unavailable
from nimlab.web.live import LiveGame, LiveGames, ended_text, engine_waits
from nimlab.web.livegame import state_text
from nimlab.web.schemas_in import (
    MAX_NAME,
    MAX_SETUP_PILES,
    MAX_STONES,
    MAX_TURN,
    GameId,
    GameKey,
    MoveIn,
    RegisterIn,
    SetupIn,
    UsernameIn,
)
from nimlab.web.schemas_out import (
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
    HistoryOut,
    LoadedGameOut,
    OptionsOut,
    PlayerRecordOut,
    ReplayOut,
)
from nimlab.web.views import created_json, replay_frames

__all__ = ["answer_create", "answer_move", "refused_body", "router"]

router = APIRouter(prefix="/api")

T = TypeVar("T")


_ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorOut, "description": "Malformed request (e.g. not JSON)"},
    413: {"model": ErrorOut, "description": "The request body is too large"},
    422: {"model": ErrorOut, "description": "Invalid input; the message says what is allowed"},
}
_BUSY: dict[int | str, dict[str, Any]] = {
    503: {"model": ErrorOut, "description": "The engine or the database is overloaded"},
}
_LIMITED: dict[int | str, dict[str, Any]] = {
    429: {
        "model": ErrorOut,
        "description": "Too many requests from this client (or games in play): wait and retry",
    },
}
_ADMIN: dict[int | str, dict[str, Any]] = {
    401: {
        "model": ErrorOut,
        "description": "The server has an admin token: send it as Authorization: Bearer TOKEN",
    },
    403: {
        "model": ErrorOut,
        "description": "The server has no admin token and the request is not from its machine",
    },
}
_SETUP_ERRORS: dict[int | str, dict[str, Any]] = {
    **_ERRORS,
    **_BUSY,
    404: {"model": ErrorOut, "description": "A registered username in the setup is unknown"},
}
_GAME_ERRORS: dict[int | str, dict[str, Any]] = {
    **_ERRORS,
    404: {"model": ErrorOut, "description": "No game with that id is in play"},
}
_MOVE_ERRORS: dict[int | str, dict[str, Any]] = {
    **_GAME_ERRORS,
    **_BUSY,
    403: {"model": ErrorOut, "description": "Wrong token for the seat, or a bot's seat"},
    409: {"model": ErrorOut, "description": "Not that seat's turn, stale, or the game is over"},
}


def _json(content: Any, status: int = 200) -> Response:
    """A JSON answer: a pydantic model is serialised by pydantic itself (in compiled code, with
    no intermediate dicts), anything else by the standard JSON encoder."""
    if isinstance(content, BaseModel):
        return Response(content.model_dump_json(), status, media_type="application/json")
    return JSONResponse(content, status_code=status)


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


# -- setting up -----------------------------------------------------------------------------------


# The routes most requested come first: a request is matched against the routes in order.


@router.post(
    "/games/{key}/moves",
    response_model=GameStateOut,
    responses={**_MOVE_ERRORS, **_LIMITED},
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
    responses={**_SETUP_ERRORS, **_LIMITED},
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
    return _json(out)


@router.get(
    "/game",
    response_model=LoadedGameOut,
    responses={**_ERRORS, **READ_LIMITED},
    summary="One game read by the core: its canonical name, title and board (piles or rows)",
)
async def load_game_kind(
    name: Annotated[str, Query(min_length=1, max_length=200)],
) -> Response:
    kind = parse_game(name)
    out = LoadedGameOut(
        name=kind.name, title=kind.title, board=kind.board, strategies=list(kind.strategies)
    )
    return _json(out)


@router.post(
    "/setup/check",
    response_model=CheckOut,
    responses=_SETUP_ERRORS,
    summary="Check a setup: 422 with the core's message when it cannot be played",
)
async def check_setup(setup: SetupIn, request: Request) -> Response:
    game = await live(request).starts.check(setup, client_of(request))
    return _json(
        {
            "ok": True,
            "description": game.ruleset.describe(),
            "players": [player_label(p) for p in game.players],
        }
    )


# -- games in play --------------------------------------------------------------------------------


def _page(request: Request, limit: int | None) -> int:
    """How many entries one answer of a list holds: ``limit``, the default page (``page_size``),
    at most the largest page (``max_page``)."""
    s = live(request).settings
    return min(s.page_size, s.max_page) if limit is None else min(limit, s.max_page)


Limit = Annotated[
    int | None,
    Query(ge=1, le=1_000_000, description="How many entries (default and bound: the server's)"),
]
Offset = Annotated[int, Query(ge=0, le=1 << 40, description="How many entries to skip")]


@router.get(
    "/games",
    response_model=GameListOut,
    responses={**_ERRORS, **READ_LIMITED},
    summary="The games in play their players made public (newest first, a page of them)",
)
async def list_games(request: Request, limit: Limit = None, offset: Offset = 0) -> Response:
    manager = live(request)
    page = await manager.public_games(_page(request, limit), offset)  # the database's list
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
    return _json({"games": entries})


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
    responses={**_GAME_ERRORS, **_BUSY, **READ_LIMITED},
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
    return GONE if done is None else _json(done[0])


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
        return _json(
            {
                "detail": f"{waits[0].lower()}{waits[1:]}: the hint will be sent to this "
                "game's pages as soon as it is worked out"
            },
            202,
        )
    return _json(hint)


@router.websocket("/games/{key}/live")
async def watch_game(websocket: WebSocket, key: str) -> None:
    """Every change of the game, as ``{"type": "state", "state": GameState}``: the first holds
    the last page of turns, each later one only the turns this page has not seen
    (``turns_from`` says where they start). Hints and analyses proven after their request was
    answered come as ``{"type": "hint", "hint": Hint}`` and
    ``{"type": "analysis", "analysis": Analysis}``. Messages from the page are ignored."""
    manager: LiveGames = websocket.app.state.live
    await websocket.accept()
    try:
        lg: LiveGame | None = await manager.lookup(key)
    except (NotFound, Unavailable, NimlabError):
        lg = None
    if lg is None:
        await websocket.send_text(
            json.dumps({"type": "error", "detail": f"there is no game {key!r} in play"})
        )
        await websocket.close(code=4404)
        return
    client = client_of(websocket)
    refused = manager.watchers.admit(lg, client)
    if refused is not None:  # 1013: try again later, with the reason
        await websocket.send_text(json.dumps({"type": "error", "detail": refused}))
        await websocket.close(code=1013, reason=refused[:120])
        return
    try:
        await _watch(manager, lg, websocket)
    finally:
        manager.watchers.release(client)


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


# -- the registry ---------------------------------------------------------------------------------


@router.get(
    "/players",
    response_model=list[PlayerRecordOut],
    responses={**_ERRORS, **READ_LIMITED},
    summary="Registered players by username (a page of them)",
)
async def list_players(request: Request, limit: Limit = None, offset: Offset = 0) -> Response:
    size = _page(request, limit)
    players = await live(request).read(lambda s: s.players(limit=size, offset=offset))
    return _json([_player_json(p) for p in players])


@router.post(
    "/players",
    response_model=PlayerRecordOut,
    status_code=201,
    responses={
        **_ERRORS,
        **_LIMITED,
        409: {"model": ErrorOut, "description": "The username is taken"},
    },
    summary="Register a human, or an AI player with a bot spec (so many per client per hour)",
)
async def add_player(body: RegisterIn, request: Request) -> Response:
    await live(request).limit("register", client_of(request))
    bot = None if body.bot is None or not body.bot.strip() else str(parse_bot(body.bot))

    def add(store: Store) -> PlayerRecord:
        return store.add_player(body.username, given=body.given, family=body.family, bot=bot)

    return _json(_player_json(await live(request).write(add)), 201)


@router.post(
    "/players/remove",
    response_model=list[PlayerRecordOut],
    responses={**_ERRORS, **_ADMIN, 404: {"model": ErrorOut, "description": "No such player"}},
    summary="Remove a registered player (their past games stay)",
)
async def remove_player(body: UsernameIn, request: Request) -> Response:
    require_admin(request)
    username = check_username(body.username)

    def remove(store: Store) -> list[PlayerRecord]:
        store.remove_player(username)
        return store.players()

    return _json([_player_json(p) for p in await live(request).write(remove)])


@router.post(
    "/players/reset",
    response_model=list[PlayerRecordOut],
    responses={**_ERRORS, **_ADMIN, 404: {"model": ErrorOut, "description": "No such player"}},
    summary="Set a player's games played and won to 0",
)
async def reset_player(body: UsernameIn, request: Request) -> Response:
    require_admin(request)
    username = check_username(body.username)

    def reset(store: Store) -> list[PlayerRecord]:
        store.reset_stats(username)
        return store.players()

    return _json([_player_json(p) for p in await live(request).write(reset)])


@router.get(
    "/rankings",
    response_model=list[PlayerRecordOut],
    responses={**_ERRORS, **READ_LIMITED},
    summary="Players by win rate",
)
async def rankings(
    request: Request,
    order: Literal["desc", "asc"] = "desc",
    limit: Annotated[int, Query(ge=1, le=1000)] = 10,
) -> Response:
    players = await live(request).read(lambda s: s.rankings(ascending=order == "asc", limit=limit))
    return _json([_player_json(p) for p in players])


# -- stored games ---------------------------------------------------------------------------------


@router.get(
    "/history",
    response_model=HistoryOut,
    responses={
        **_ERRORS,
        **READ_LIMITED,
        404: {"model": ErrorOut, "description": "No such player"},
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
    size = min(limit, live(request).settings.max_page)

    def games(store: Store) -> list[GameSummary]:
        if username is not None:
            store.get_player(username)
        return store.games(username=username, limit=size, offset=offset, private=False)

    summaries = await live(request).read(games)
    return _json({"games": [_summary_json(s) for s in summaries]})


@router.get(
    "/history/{game_id}",
    response_model=ReplayOut,
    responses={
        **_ERRORS,
        **READ_LIMITED,
        404: {"model": ErrorOut, "description": "No such stored game"},
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
    return _json(
        {
            "game": _summary_json(stored.summary),
            "rows": game.ruleset.rules.splits,
            "frames": [f.model_dump() for f in frames],
            "words": list(game.ruleset.rules.piece_words),
            "move_shape": game.ruleset.rules.move_shape,
        }
    )


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


from nimlab.web.lifecycle import router as _lifecycle  # noqa: E402  (resign, undo, delete, ...)

router.include_router(_lifecycle)
