"""The web app: ``create_app(db)`` gives the FastAPI application ``nimlab serve`` runs.

The page is plain HTML, CSS and JavaScript modules from ``static/`` (no build step, no external
network); the JSON API is under ``/api`` with its OpenAPI schema at ``/api/openapi.json``.
"""

from __future__ import annotations

import asyncio
import functools
import math
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from nimlab import __version__
from nimlab.core.errors import GameOverError, NimlabError
from nimlab.storage import (
    GameNotFoundError,
    PlayerExistsError,
    TooManyGamesInPlayError,
    UnknownPlayerError,
)
from nimlab.web import club, lifecycle, logs, metrics
from nimlab.web import settings as configuration
from nimlab.web.api import refused_body, router
from nimlab.web.direct import DirectPlay
from nimlab.web.errors import TOO_DEEP, ApiError, TooManyRequests, Unauthorized, Unavailable
from nimlab.web.guard import Guard, Holdings
from nimlab.web.live import LiveGames
from nimlab.web.logs import request_id
from nimlab.web.proxies import ForwardedClient, TrustedProxies
from nimlab.web.schemas_in import whole_number
from nimlab.web.settings import ServerSettings

__all__ = ["STATIC_DIR", "ServerSettings", "create_app"]

STATIC_DIR = Path(__file__).parent / "static"
PAGES = ("/", "/game/{key}", "/players", "/rankings", "/history", "/history/{game_id}")


def create_app(
    db: str | None = None,
    *,
    bot_pace: float | None = None,
    reply_wait: float | None = None,
    compute_wait: float | None = None,
    settings: ServerSettings | None = None,
) -> FastAPI:
    """The application, with its games kept in the database ``db`` (``--db``; ``None``:
    ``settings.db``, and when that is ``None`` too the default file, see
    :func:`nimlab.storage.resolve_db_path`). Games in progress there resume
    when the app starts. ``settings`` holds every bound (:class:`ServerSettings`); ``bot_pace``
    (the pause between moves when only bots are left), ``reply_wait`` and ``compute_wait``
    override its fields of those names."""
    settings = settings or ServerSettings()
    changes = {"bot_pace": bot_pace, "reply_wait": reply_wait, "compute_wait": compute_wait}
    settings = settings.model_copy(update={k: v for k, v in changes.items() if v is not None})
    configuration.use(settings)
    live = LiveGames(db if db is not None else settings.db, settings)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        asyncio.get_running_loop().set_exception_handler(out_of_descriptors)
        watcher = asyncio.create_task(watch_descriptors(), name="descriptors")
        await live.start()
        try:
            yield
        finally:
            watcher.cancel()
            await live.stop()

    app = FastAPI(
        title="nimlab",
        version=__version__,
        description="Play, set up, analyse and keep Nim games. Seats are numbered from 0, "
        'piles and rows from 1; every error answers {"detail": message}.',
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
        openapi_url="/api/openapi.json",
    )
    app.state.live = live
    default_openapi = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = _whole_bounds(default_openapi())
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
    # The API's routers, in the order a request is matched against them: a game's (the most
    # requested first), the club's, and a game's life beyond its moves.
    app.include_router(router)
    app.include_router(club.router)
    app.include_router(lifecycle.router)
    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")

    index = STATIC_DIR / "index.html"

    async def page() -> FileResponse:
        return FileResponse(index, headers={"Cache-Control": "no-cache"})

    for path in PAGES:
        app.add_api_route(path, page, methods=["GET"], include_in_schema=False)
    _add_service_routes(app, live)

    _add_error_handlers(app)

    def paths() -> dict[str, set[str]]:
        table: dict[str, set[str]] = {
            p: {"GET"} for p in (*PAGES, *SERVICE_PATHS, "/static/{path:path}")
        }
        for path, item in app.openapi().get("paths", {}).items():
            table.setdefault(path, set()).update(m.upper() for m in item)
        return table

    app.add_middleware(DirectPlay, owner=app)  # inside the guard: after its checks
    app.add_middleware(
        Guard,
        paths=paths,
        max_body=settings.max_body,
        body_timeout=settings.body_timeout,
        allowed_hosts=settings.allowed_hosts,
        read_wait=functools.partial(_read_wait, live),
    )
    app.add_middleware(logs.RequestIds)
    # every answer, the guard's refusals included
    app.add_middleware(metrics.RouteMetrics)
    if settings.trusted_proxies:  # the client is taken from X-Forwarded-For only when they send it
        app.add_middleware(
            ForwardedClient,
            proxies=TrustedProxies(settings.trusted_proxies),
            holdings=live.held.setdefault("forwarded", Holdings.of("connections", settings)),
        )
    return app


_BOUNDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")


def _whole_bounds(schema: Any) -> Any:
    """``schema`` with the bounds of whole numbers written as whole numbers: FastAPI's OpenAPI
    models keep bounds as floats, and a float written in decimal is rounded (2^62 becomes
    4.611686018427388e+18, more than 2^62); those below 2^63 are exact as floats, so each is
    the whole number it was. Changes ``schema`` in place."""
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key in _BOUNDS:
                schema[key] = whole_number(value)
            else:
                _whole_bounds(value)
    elif isinstance(schema, list):
        for item in schema:
            _whole_bounds(item)
    return schema


DESCRIPTORS_SAID_EVERY = 10.0
"""Seconds between two log lines saying the process has no file descriptors left."""

_descriptors_said = -math.inf
_descriptors_out = -math.inf
"""When the process last found its file descriptors all in use (``time.monotonic()``)."""

DESCRIPTORS_READY_AFTER = 2.0
"""Seconds after the last time the descriptors were all in use that ``/readyz`` says ready again
(the descriptors are counted every :data:`DESCRIPTORS_LOOKED_AT_EVERY` seconds)."""


def out_of_descriptors(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """The event loop's handler of errors no task catches: a connection that cannot be accepted
    for want of file descriptors (EMFILE, ENFILE; asyncio tries again by itself) is one log
    line saying so and what the limit is, at most every :data:`DESCRIPTORS_SAID_EVERY` seconds;
    anything else is logged as asyncio logs it."""
    import errno
    import logging
    import resource
    import time

    global _descriptors_said, _descriptors_out
    error = context.get("exception")
    if not isinstance(error, OSError) or error.errno not in (errno.EMFILE, errno.ENFILE):
        loop.default_exception_handler(context)
        return
    now = _descriptors_out = time.monotonic()
    if now - _descriptors_said < DESCRIPTORS_SAID_EVERY:
        return
    _descriptors_said = now
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    logging.getLogger("nimlab.web").error(
        "no file descriptors left (%s): new connections are refused until others close; this "
        "process may open %s (raise LimitNOFILE= in the systemd unit, or ulimit -n)",
        error.strerror or error,
        "any number" if soft == resource.RLIM_INFINITY else f"{soft:,}",
    )


DESCRIPTORS_LOOKED_AT_EVERY = 1.0
"""Seconds between two counts of the descriptors open (:func:`watch_descriptors`)."""


def descriptors_in_use() -> tuple[int, int | None]:
    """The file descriptors this process has open, and how many it may open (``None``: no
    limit). O(open descriptors) on Linux (a listing of ``/proc/self/fd``); ``(0, None)`` where
    they cannot be counted."""
    import errno
    import os
    import resource

    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    limit = None if soft == resource.RLIM_INFINITY else int(soft)
    try:
        used = len(os.listdir("/proc/self/fd")) - 1  # (the listing's own)
    except OSError as e:
        if e.errno in (errno.EMFILE, errno.ENFILE) and limit is not None:
            return limit, limit  # not even the listing could be opened: all are in use
        return 0, None
    return used, limit


async def watch_descriptors() -> None:
    """Count the descriptors open every :data:`DESCRIPTORS_LOOKED_AT_EVERY` seconds and say
    when (nearly) all are in use, as :func:`out_of_descriptors` does: with uvloop (uvicorn's
    default loop when installed) a connection that cannot be accepted is closed by libuv
    without telling the loop's exception handler, so nothing else would notice."""
    import errno

    loop = asyncio.get_running_loop()
    while True:
        await asyncio.sleep(DESCRIPTORS_LOOKED_AT_EVERY)
        used, limit = descriptors_in_use()
        if limit is not None and used >= limit - 2:
            full = OSError(errno.EMFILE, "Too many open files")
            out_of_descriptors(loop, {"message": "descriptors all in use", "exception": full})


SERVICE_PATHS = ("/healthz", "/readyz", "/metrics")
READY_WAIT = 5.0
"""Seconds ``/readyz`` waits for the database to answer a read and commit a write."""


def _add_service_routes(app: FastAPI, live: LiveGames) -> None:
    """``/healthz`` (the process answers), ``/readyz`` (the database answers and its writer
    commits: 503 with what is wrong otherwise; ``solvers`` says whether the compiled solvers
    are still being prepared in the background, which does not make it 503) and ``/metrics``
    (Prometheus); not in the API's schema: they are the operator's, not the page's."""

    async def healthz() -> JSONResponse:
        return JSONResponse({"status": "ok"}, headers={"Cache-Control": "no-store"})

    async def readyz() -> JSONResponse:
        from nimlab.theory import kernels

        problems = await ready_problems(live)
        body = {
            "status": "not ready" if problems else "ready",
            "problems": problems,
            # the page and Nim answer meanwhile; questions that need a solver wait for it
            "solvers": "preparing" if kernels.preparing() else "ready",
        }
        return JSONResponse(
            body, status_code=503 if problems else 200, headers={"Cache-Control": "no-store"}
        )

    async def metrics_page() -> Response:
        try:
            held: int | None = await live.read(lambda s: s.count_games_in_play())
        except ApiError:  # the database does not answer (said by /readyz): the last count stands
            held = None
        metrics.observe(live, held)
        body = await asyncio.get_running_loop().run_in_executor(None, metrics.exposition)
        return Response(body, media_type=metrics.CONTENT_TYPE_LATEST)

    for path, endpoint in zip(SERVICE_PATHS, (healthz, readyz, metrics_page), strict=True):
        app.add_api_route(path, endpoint, methods=["GET"], include_in_schema=False)


def descriptor_problem() -> str | None:
    """What is wrong with this process's file descriptors, if anything: it ran out of them
    within the last :data:`DESCRIPTORS_READY_AFTER` seconds (a connection could not be accepted),
    or 95 % or more of its limit are open. ``None`` once connections have closed. O(open
    descriptors) (Linux: one listing of ``/proc/self/fd``; elsewhere only the first check)."""
    import time

    if time.monotonic() - _descriptors_out < DESCRIPTORS_READY_AFTER:
        return (
            "the process ran out of file descriptors: new connections are refused until others "
            "close (raise LimitNOFILE= or ulimit -n)"
        )
    used, limit = descriptors_in_use()
    if limit is not None and used >= 0.95 * limit:
        return f"{used:,} of the {limit:,} file descriptors this process may open are in use"
    return None


async def ready_problems(live: LiveGames) -> list[str]:
    """What keeps the server from serving: the database does not answer a read, or its writer
    does not commit within :data:`READY_WAIT` seconds (stuck, or the file is locked), or file
    descriptors ran out (:func:`descriptor_problem`)."""
    problems: list[str] = []
    descriptors = descriptor_problem()
    if descriptors is not None:
        problems.append(descriptors)
    checks = (
        ("the database does not answer a read", live.read(lambda s: s.ping())),
        ("the database writer does not commit", live.write(lambda s: None)),
    )
    for what, check in checks:
        try:
            await asyncio.wait_for(check, READY_WAIT)
        except TimeoutError:
            problems.append(f"{what} within {READY_WAIT:g} s (is the database locked?)")
        except ApiError as e:
            problems.append(f"{what}: {e.message}")
    return problems


def _status(error: NimlabError) -> int:
    if isinstance(error, GameNotFoundError | UnknownPlayerError):
        return 404
    if isinstance(error, GameOverError | PlayerExistsError):
        return 409
    if isinstance(error, TooManyGamesInPlayError):
        return 429
    return 422


def _add_error_handlers(app: FastAPI) -> None:
    index = STATIC_DIR / "index.html"

    @app.exception_handler(StarletteHTTPException)
    async def not_found(request: Request, exc: StarletteHTTPException) -> Response:
        path = request.url.path
        if exc.status_code == 404 and not path.startswith(("/api/", "/static/")):
            return FileResponse(index, status_code=404, headers={"Cache-Control": "no-cache"})
        detail = exc.detail
        if exc.status_code == 400:  # the body does not parse
            if isinstance(exc.__cause__, RecursionError):
                detail = TOO_DEEP
            over = await _over_limit(request)
            if over is not None:
                return await api_error(request, over)
        return _error(detail, exc.status_code, dict(exc.headers or {}))

    @app.exception_handler(ApiError)
    async def api_error(request: Request, exc: ApiError) -> JSONResponse:
        headers = {}
        if isinstance(exc, TooManyRequests):
            metrics.refused(exc.limit)
            if exc.retry_after is not None:
                headers["Retry-After"] = str(max(1, math.ceil(exc.retry_after)))
        if isinstance(exc, Unavailable):
            metrics.refused("unavailable")
        if isinstance(exc, Unauthorized):
            headers["WWW-Authenticate"] = "Bearer"
        return _error(exc.message, exc.status, headers)

    @app.exception_handler(NimlabError)
    async def core_error(request: Request, exc: NimlabError) -> JSONResponse:
        if isinstance(exc, TooManyGamesInPlayError):
            metrics.refused(metrics.refusal_limit(exc.limit))
        return _error(str(exc), _status(exc))

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        over = await _over_limit(request)
        if over is not None:
            return await api_error(request, over)
        errors = list(exc.errors())
        bad_json = [e for e in errors if e.get("type") == "json_invalid"]
        if bad_json:
            why = bad_json[0].get("ctx", {}).get("error", "")
            return _error(
                f"the request body is not valid JSON{': ' + str(why) if why else ''}", 400
            )
        parts = []
        for e in errors[:3]:
            where = ".".join(str(x) for x in e.get("loc", ()) if x != "body")
            parts.append(f"{where}: {e.get('msg', 'invalid')}" if where else e.get("msg", ""))
        more = f" (and {len(errors) - 3} more)" if len(errors) > 3 else ""
        return _error("; ".join(parts) + more, 422)


async def _read_wait(live: LiveGames, client: str) -> float:
    """0 when ``client`` may read the API once more (a token taken), else the seconds to wait."""
    try:
        await live.limit("read", client)
    except TooManyRequests as e:
        return e.retry_after or 1.0
    return 0.0


async def _over_limit(request: Request) -> TooManyRequests | None:
    """Why a request whose body its route refused is over the client's limit (see
    :func:`~nimlab.web.api.refused_body`); ``None`` when it is within it."""
    try:
        await refused_body(request)
    except TooManyRequests as e:
        return e
    return None


def _error(detail: str, status: int, headers: dict[str, str] | None = None) -> JSONResponse:
    """An error answer: ``{"detail": message, "request_id": id}``."""
    return JSONResponse(
        {"detail": detail, "request_id": request_id()}, status_code=status, headers=headers
    )
