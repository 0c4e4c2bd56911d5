"""The move request without the framework: :class:`DirectMoves`, plain ASGI middleware.

A move (``POST /api/games/{key}/moves``) is most of a server's requests, and FastAPI's layers
(routing, the request object, dependency solving, its exception and telemetry middlewares, the
wrapped ``send``) cost a move more CPU than validating it and answering it. :class:`DirectMoves`
sits inside :class:`~nimlab.web.guard.Guard` (which has read the body, checked its size and the
host, and adds the security headers) and answers a well-formed move request itself: the same
:func:`~nimlab.web.api.answer_move` the route calls, its errors answered by the app's own
exception handlers. Anything else, including every request whose body does not validate, goes on
to the app unchanged (the body replayed), so that its answer is the route's own, word for word.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from fastapi import FastAPI, Request
from pydantic import ValidationError
from starlette.exceptions import HTTPException
from starlette.routing import Route

from nimlab.web.api import answer_move, play_move, router
from nimlab.web.schemas import MAX_KEY, MoveIn

__all__ = ["DirectMoves"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class DirectMoves:
    """The middleware (see the module docstring); ``owner`` is the FastAPI app it is part of
    (its games in play and its exception handlers)."""

    def __init__(self, app: ASGIApp, *, owner: FastAPI) -> None:
        self.app = app
        self.owner = owner
        self._route: Route | None = None

    def _move_route(self) -> Route:
        """The API's move route (the app includes the API's router as it is)."""
        if self._route is None:
            found = [r for r in router.routes if getattr(r, "endpoint", None) is play_move]
            if len(found) != 1 or not isinstance(found[0], Route):
                raise RuntimeError("the API has no single move route")
            self._route = found[0]
        return self._route

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or scope.get("method") != "POST"
            or scope.get("root_path")
            or scope.get("query_string")
        ):
            await self.app(scope, receive, send)
            return
        found = self._move_route().path_regex.match(scope.get("path", ""))
        if found is None:
            await self.app(scope, receive, send)
            return
        body, receive = await _read_body(receive)
        move = _move_of(scope, body)
        key = found.group("key")
        if move is None or len(key) > MAX_KEY:  # the route says what is wrong
            await self.app(scope, receive, send)
            return
        client = scope.get("client")
        try:
            response = await answer_move(
                self.owner.state.live, key, move, client[0] if client else None
            )
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


def _move_of(scope: Scope, body: bytes | None) -> MoveIn | None:
    """The move a request's JSON body asks for, read as the route reads it (``json.loads``,
    then the model's strict validation of the object); ``None`` when the route would answer
    an error, or when the request is not plainly JSON."""
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
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    try:
        return MoveIn.model_validate(data)
    except ValidationError:
        return None
