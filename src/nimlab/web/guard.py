"""What stands between the network and the app: host check, body limit, security headers, the
methods a path allows, and rate limits per client.

:class:`Guard` is plain ASGI middleware (it adds no per-request work beyond a few header reads):

- a ``Host`` header not in the allowed host names is refused with 421 (against DNS rebinding:
  a page on another site that resolves its name to this machine cannot talk to the server);
- a request body over the limit is refused with 413 before any of it is parsed (by its
  ``Content-Length``, or while it streams in), and so is one naming more than
  :data:`MAX_JSON_FIELDS` fields (each would cost the validation time on the event loop); a
  body that takes more than ``body_timeout`` seconds to arrive is cut with 408 and
  its connection closed (slow bodies hold connections as slow headers would);
- every HTTP answer carries the security headers :data:`SECURITY_HEADERS`;
- ``OPTIONS`` answers 204 with ``Allow`` listing every method of the path, and a 405 lists them
  too (the router alone names only the first route's).

:class:`RateLimiter` is a token bucket per client and action (429 beyond).
"""

from __future__ import annotations

import asyncio
import json
import math
import re
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from starlette.routing import compile_path

from nimlab.web import metrics
from nimlab.web.logs import request_id

__all__ = ["SECURITY_HEADERS", "Guard", "RateLimiter", "host_name"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (
        b"content-security-policy",
        b"default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
        b"img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; "
        b"form-action 'self'; frame-ancestors 'none'",
    ),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    (b"cross-origin-opener-policy", b"same-origin"),
)
"""Headers on every HTTP answer: scripts only from this server, no framing, no sniffing, and no
``Referer`` (share links carry seat tokens)."""

_BODY_METHODS = {"POST", "PUT", "PATCH", "DELETE"}
_LIMITS = {413: "max_body", 421: "allow_host"}
"""The setting behind each refusal of the guard, for the metrics."""

MAX_JSON_FIELDS = 4096
"""A request body may name at most this many object fields (no request has more than a few
hundred): counted in C before parsing, since validating each unknown field costs."""


def host_name(value: str) -> str:
    """The host name of a ``Host`` header, lower case, without port or IPv6 brackets."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1 : value.find("]")] if "]" in value else value[1:]
    if value.count(":") == 1:
        value = value.split(":", 1)[0]
    return value.rstrip(".")


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return bytes(value).decode("latin-1")
    return None


async def _answer(send: Send, status: int, detail: str, extra: list[tuple[bytes, bytes]]) -> None:
    if status in _LIMITS:
        metrics.refused(_LIMITS[status])
    body = json.dumps({"detail": detail, "request_id": request_id()}).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"connection", b"close"),
        *extra,
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class Guard:
    """The middleware (see the module docstring). ``paths`` gives the methods of each path;
    ``allowed_hosts`` ``None`` accepts any host; ``max_body`` is in bytes."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        paths: Callable[[], dict[str, set[str]]],
        max_body: int,
        body_timeout: float,
        allowed_hosts: tuple[str, ...] | None = None,
    ) -> None:
        self.app = app
        self._paths = paths
        self._table: list[tuple[re.Pattern[str], set[str]]] | None = None
        self.max_body = max_body
        self.body_timeout = body_timeout
        self.allowed = None if allowed_hosts is None else {host_name(h) for h in allowed_hosts}

    def methods(self, scope: Scope) -> list[str]:
        """Every method some route of this path takes, in a stable order (from ``paths``: path
        templates as in OpenAPI, and their methods; read once)."""
        if self._table is None:
            self._table = [
                (compile_path(path)[0], {m.upper() for m in methods})
                for path, methods in self._paths().items()
            ]
        path = scope.get("path", "")
        found: set[str] = set()
        for pattern, methods in self._table:
            if pattern.match(path):
                found |= methods
        if "GET" in found:
            found.add("HEAD")
        order = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"]
        return [m for m in order if m in found] + sorted(found - set(order))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        if self.allowed is not None:
            host = host_name(_header(scope, b"host") or "")
            if host not in self.allowed:
                if kind == "websocket":
                    await send({"type": "websocket.close", "code": 1008})
                    return
                await _answer(
                    send,
                    421,
                    f"this server does not answer for the host name {host!r}: its operator "
                    f"can allow it with --allow-host {host or 'NAME'} (or NIMLAB_ALLOW_HOST)",
                    list(SECURITY_HEADERS),
                )
                return
        if kind == "websocket":
            await self.app(scope, receive, send)
            return
        await self._http(scope, receive, send)

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        method = scope.get("method", "GET")
        if method == "OPTIONS":
            allow = self.methods(scope)
            if allow:
                headers = [
                    (b"allow", ", ".join([*allow, "OPTIONS"]).encode()),
                    (b"content-length", b"0"),
                    *SECURITY_HEADERS,
                ]
                await send({"type": "http.response.start", "status": 204, "headers": headers})
                await send({"type": "http.response.body", "body": b""})
                return
        if method in _BODY_METHODS:
            length = _header(scope, b"content-length")
            too_big = f"the request body is larger than {self.max_body:,} bytes"
            if length is not None:
                try:
                    declared = int(length)
                except ValueError:
                    declared = -1
                if declared < 0:
                    await _answer(send, 400, "bad Content-Length header", list(SECURITY_HEADERS))
                    return
                if declared > self.max_body:
                    await _answer(send, 413, too_big, list(SECURITY_HEADERS))
                    return
            chunks: list[bytes] = []
            size = 0
            seconds = self.body_timeout
            try:
                async with asyncio.timeout(seconds):
                    while True:
                        message = await receive()
                        if message["type"] != "http.request":
                            return  # the client went away
                        chunk = message.get("body", b"")
                        size += len(chunk)
                        if size > self.max_body:
                            await _answer(send, 413, too_big, list(SECURITY_HEADERS))
                            return
                        chunks.append(chunk)
                        if not message.get("more_body", False):
                            break
            except TimeoutError:  # a slow body holds a connection as slow headers would
                await _answer(
                    send,
                    408,
                    f"the request body did not arrive within {seconds:g} s",
                    list(SECURITY_HEADERS),
                )
                return
            body = b"".join(chunks)
            fields = body.count(b'":') - body.count(b'\\":')
            if fields > MAX_JSON_FIELDS:
                await _answer(
                    send,
                    413,
                    f"the request body names more than {MAX_JSON_FIELDS:,} fields",
                    list(SECURITY_HEADERS),
                )
                return
            replayed = False

            async def replay() -> Message:
                nonlocal replayed
                if not replayed:
                    replayed = True
                    return {"type": "http.request", "body": body, "more_body": False}
                return await receive()

            receive = replay

        async def guarded_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [
                    (k, v) for k, v in message.get("headers", ()) if k.lower() != b"allow"
                ] + list(SECURITY_HEADERS)
                allow = [v for k, v in message.get("headers", ()) if k.lower() == b"allow"]
                if message["status"] == 405:
                    allow = [", ".join(self.methods(scope)).encode()]
                headers += [(b"allow", a) for a in allow]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, guarded_send)


class RateLimiter:
    """Token buckets per ``(action, client)``: ``rate`` tokens per second up to ``burst``.
    Memory: at most ``max_clients`` buckets (full buckets are forgotten first)."""

    def __init__(self, max_clients: int = 10_000) -> None:
        self.max_clients = max_clients
        self._buckets: dict[tuple[str, str], tuple[float, float]] = {}

    def take(self, action: str, client: str, rate: float, burst: int) -> float:
        """Take one token; returns 0 when allowed, else the seconds until the next token."""
        if rate <= 0 or math.isinf(rate):
            return 0.0
        now = time.monotonic()
        key = (action, client)
        tokens, at = self._buckets.get(key, (float(burst), now))
        tokens = min(float(burst), tokens + (now - at) * rate)
        if tokens < 1.0:
            self._buckets[key] = (tokens, now)
            return (1.0 - tokens) / rate
        self._buckets[key] = (tokens - 1.0, now)
        if len(self._buckets) > self.max_clients:
            self._forget(now, rate, burst)
        return 0.0

    def _forget(self, now: float, rate: float, burst: int) -> None:
        full = [k for k, (t, at) in self._buckets.items() if t + (now - at) * rate >= burst]
        for k in full:
            del self._buckets[k]
        while len(self._buckets) > self.max_clients:
            del self._buckets[next(iter(self._buckets))]
