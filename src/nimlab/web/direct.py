"""Starting a game and playing a move without the framework: :class:`DirectPlay`, plain ASGI
middleware.

Moves (``POST /api/games/{key}/moves``) and new games (``POST /api/games``) are most of a
server's requests, and FastAPI's layers (routing, the request object, dependency solving, its
exception and telemetry middlewares, the wrapped ``send``) cost a move more CPU than validating
it and answering it. :class:`DirectPlay` sits inside :class:`~nimlab.web.guard.Guard` (which has
read the body, checked its size and the host, and adds the security headers) and answers a
well-formed request of those two itself: the same function the route calls
(:func:`~nimlab.web.api.answer_move`, :func:`~nimlab.web.api.answer_create`), its errors answered
by the app's own exception handlers. Anything else, including every request whose body does not
validate or does not parse (not JSON, or nested deeper than the parser goes), goes on to the
app unchanged (the body replayed), so that its answer is the route's own, word for word (and
counted against the client's limit there, see :func:`nimlab.web.api.refused_body`).
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import Response
from pydantic import BaseModel, ValidationError
from starlette.exceptions import HTTPException
from starlette.routing import Route

from nimlab.web.api import answer_create, answer_move, create_game, play_move, router
from nimlab.web.live import LiveGames
from nimlab.web.schemas_in import MAX_KEY, MoveIn, SetupIn

__all__ = ["DirectPlay"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
Answer = Callable[[LiveGames, Any, str | None, dict[str, str]], Awaitable[Response] | None]
"""A route's answer to (games in play, body, client, path parameters); ``None`` when a path
parameter is one the route refuses (the route says why)."""


def _move(manager: LiveGames, move: Any, client: str | None, path: dict[str, str]) -> Any:
    key = path["key"]
    return answer_move(manager, key, move, client) if len(key) <= MAX_KEY else None


def _create(manager: LiveGames, setup: Any, client: str | None, path: dict[str, str]) -> Any:
    return answer_create(manager, setup, client)


@dataclass(frozen=True, slots=True)
class _Direct:
    endpoint: Callable[..., Any]
    """The route's function (which finds its path)."""
    body: type[BaseModel]
    answer: Answer


DIRECT = (_Direct(play_move, MoveIn, _move), _Direct(create_game, SetupIn, _create))
"""The requests answered directly: a move first (the most frequent)."""


class DirectPlay:
    """The middleware (see the module docstring); ``owner`` is the FastAPI app it is part of
    (its games in play and its exception handlers)."""

    def __init__(self, app: ASGIApp, *, owner: FastAPI) -> None:
        self.app = app
        self.owner = owner
        self._routes: list[tuple[Route, _Direct]] | None = None

    def routes(self) -> list[tuple[Route, _Direct]]:
        """The API's routes answered directly (the app includes the API's router as it is)."""
        if self._routes is None:
            self._routes = []
            for direct in DIRECT:
                found = [
                    r for r in router.routes if getattr(r, "endpoint", None) is direct.endpoint
                ]
                if len(found) != 1 or not isinstance(found[0], Route):
                    raise RuntimeError(f"the API has no single route {direct.endpoint.__name__}")
                self._routes.append((found[0], direct))
        return self._routes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or scope.get("method") != "POST"
            or scope.get("root_path")
            or scope.get("query_string")
        ):
            await self.app(scope, receive, send)
            return
        path = scope.get("path", "")
        for route, direct in self.routes():  # noqa: B007 (the one found is used below)
            found = route.path_regex.match(path)
            if found is not None:
                break
        else:
            await self.app(scope, receive, send)
            return
        scope["route"] = route  # as the router sets it (the metrics name requests by it)
        body, receive = await _read_body(receive)
        data = _body_of(scope, body, direct.body)
        answering = None
        client = scope.get("client")
        if data is not None:
            answering = direct.answer(
                self.owner.state.live, data, client[0] if client else None, found.groupdict()
            )
        if answering is None:  # the route says what is wrong
            await self.app(scope, receive, send)
            return
        try:
            response = await answering
        except Exception as exc:
            handler = self._handler(exc)
            if handler is None:
                raise  # as from the route: answered 500 by the request ids' middleware
            response = handler(Request(scope, receive), exc)
            if inspect.isawaitable(response):
                response = await response
        await response(scope, receive, send)

    def _handler(self, exc: Exception) -> Callable[[Request, Any], Any] | None:
        """The app's handler of ``exc``, found as Starlette's exception middleware finds it (an
        HTTP error's status code first, then its classes, nearest first); none for a bug."""
        handlers = self.owner.exception_handlers
        if isinstance(exc, HTTPException) and exc.status_code in handlers:
            return handlers[exc.status_code]
        for cls in type(exc).__mro__:
            if cls is not Exception and cls in handlers:
                return handlers[cls]
        return None


async def _read_body(receive: Receive) -> tuple[bytes | None, Receive]:
    """The whole request body (``None``: the client went away first), and a ``receive`` that
    gives the messages read again, then the client's next ones."""
    messages: list[Message] = []
    while True:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request" or not message.get("more_body", False):
            break
    body = None
    if messages[-1]["type"] == "http.request":
        body = b"".join(m.get("body", b"") for m in messages)
    read = iter(messages)

    async def replay() -> Message:
        return next(read, None) or await receive()

    return body, replay


def _body_of(scope: Scope, body: bytes | None, model: type[BaseModel]) -> BaseModel | None:
    """What a request's JSON body asks for, read as the route reads it (``json.loads``, then
    the model's validation of the object); ``None`` when the route would answer an error, or
    when the request is not plainly JSON."""
    kind = None
    for name, value in scope.get("headers", ()):
        if name == b"content-type":
            if kind is not None:
                return None
            kind = bytes(value).lower()
    if kind != b"application/json" or not body:
        return None
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict):
        return None
    try:
        return model.model_validate(data)
    except ValidationError:
        return None
