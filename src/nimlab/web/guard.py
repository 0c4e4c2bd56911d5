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

Reads of the API (``GET /api/...``) take a token of the client's read limit (429 beyond); pages,
static files and the service paths do not (they are files or cheap, and a browser fetches them
in bursts).

:class:`RateLimiter` is a token bucket per client and action (429 beyond), and one per network
of clients (:func:`network_of`: the /24 of an IPv4 address, the /64 of an IPv6 one) holding a
multiple of one client's tokens, so a crowd of addresses from one network counts as a few
clients, not as hundreds.

:class:`Holdings` counts what clients hold at once (games in play, WebSockets, connections) by
address and by network, against a per-address bound, a per-network bound (a multiple of it, and
at most a share of the whole), and the whole capacity, whose last part is kept for clients
holding little: a crowd of new addresses fills the capacity only up to that reserve, and a
newcomer still gets in.
"""

from __future__ import annotations

import asyncio
import functools
import ipaddress
import json
import math
import re
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import TYPE_CHECKING, Any, Literal

from starlette.routing import compile_path

from nimlab.web import metrics
from nimlab.web.logs import request_id

if TYPE_CHECKING:
    from nimlab.web.metrics import RefusalLimit
    from nimlab.web.settings import ServerSettings

__all__ = [
    "SECURITY_HEADERS",
    "Guard",
    "Holdings",
    "RateLimiter",
    "holding_limit",
    "host_name",
    "little",
    "network_of",
]

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
_LIMITS: dict[int, RefusalLimit] = {413: "max_body", 421: "allow_host"}
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
    ``allowed_hosts`` ``None`` accepts any host; ``max_body`` is in bytes; ``read_wait`` takes
    one token of a client's reads of the API (``GET``/``HEAD`` of ``/api/...``) and answers 0,
    or the seconds to wait (429) when it has none."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        paths: Callable[[], dict[str, set[str]]],
        max_body: int,
        body_timeout: float,
        allowed_hosts: tuple[str, ...] | None = None,
        read_wait: Callable[[str], Awaitable[float]] | None = None,
    ) -> None:
        self.app = app
        self.read_wait = read_wait
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
        if (
            self.read_wait is not None
            and method in ("GET", "HEAD")
            and scope.get("path", "").startswith("/api/")
        ):
            address = scope.get("client")
            who = str(address[0]) if address else ""
            wait = await self.read_wait(who) if who else 0.0
            if wait > 0:
                metrics.refused("read_rate")
                await _answer(
                    send,
                    429,
                    f"too many requests from {who}: try again in {max(1, round(wait))} s",
                    [(b"retry-after", str(max(1, math.ceil(wait))).encode()), *SECURITY_HEADERS],
                )
                return
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

    def take_both(
        self, action: str, client: str, rate: float, burst: int, network_allowance: float
    ) -> float:
        """Take one token of ``client``'s bucket and one of its network's (:func:`network_of`),
        which holds ``network_allowance`` times as many and fills as much faster; 0 when both
        allowed, else the seconds until both have one (a token taken from one bucket while the
        other refused is not given back: a client over either limit waits)."""
        wait = self.take(action, client, rate, burst)
        if wait > 0:
            return wait
        network = network_of(client)
        if network == client or network_allowance <= 0:
            return 0.0
        return self.take(
            action + "@net",
            network,
            rate * network_allowance,
            max(burst, int(burst * network_allowance)),
        )

    def _forget(self, now: float, rate: float, burst: int) -> None:
        full = [k for k, (t, at) in self._buckets.items() if t + (now - at) * rate >= burst]
        for k in full:
            del self._buckets[k]
        while len(self._buckets) > self.max_clients:
            del self._buckets[next(iter(self._buckets))]


@functools.lru_cache(maxsize=65536)
def network_of(client: str) -> str:
    """The network a client address belongs to for the limits: ``1.2.3.0/24`` for an IPv4
    address, ``2001:db8:1:2::/64`` for an IPv6 one (an IPv4-mapped IPv6 address as its IPv4
    address); anything else (a test client's name) is its own network. O(1) (cached)."""
    try:
        address = ipaddress.ip_address(client)
    except ValueError:
        return client
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    prefix = 24 if address.version == 4 else 64
    return str(ipaddress.ip_network(f"{address}/{prefix}", strict=False))


def holding_limit(why: str, per_address: RefusalLimit, capacity: RefusalLimit) -> RefusalLimit:
    """The label under which a refusal of :meth:`Holdings.refusal` is counted
    (:data:`nimlab.web.metrics.REFUSAL_LIMITS`): ``per_address`` or ``capacity`` (the settings
    of those bounds of what is held), ``network_share`` or ``reserve_share``."""
    return {"address": per_address, "network": "network_share", "capacity": capacity}.get(
        why, "reserve_share"
    )


def little(per_address: int) -> int:
    """What a network may hold and still be served from the reserve of a capacity: an eighth
    of one address's bound, at least 1."""
    return max(1, per_address // 8)


class Holdings:
    """What clients hold at once (games, WebSockets, connections), counted by address and by
    network (:func:`network_of`). :meth:`refusal` applies, in order:

    - an address holds at most ``per_address``;
    - a network holds at most ``per_address * network_allowance``, and at most
      ``network_share`` of ``capacity``;
    - in all at most ``capacity``, and the last ``reserve_share`` of it only goes to a network
      holding less than :func:`little` ``(per_address)``.

    The counts are this process's plus what other processes serving the same database hold
    (:meth:`held_elsewhere`, told every second or so by :class:`nimlab.web.limits.SharedLimits`).

    O(1) per call; memory: one entry per address and network holding something."""

    def __init__(
        self,
        *,
        per_address: int,
        network_allowance: float,
        capacity: int,
        network_share: float,
        reserve_share: float,
    ) -> None:
        self.per_address = per_address
        self.per_network = max(
            per_address,
            min(int(per_address * network_allowance), math.ceil(capacity * network_share)),
        )
        self.capacity = capacity
        self.open_until = capacity - int(capacity * reserve_share)
        """Up to this many held in all, any client within its bounds gets more."""
        self.little = little(per_address)
        self.by_address: dict[str, int] = {}
        self.by_network: dict[str, int] = {}
        self.total = 0
        self._elsewhere: tuple[dict[str, int], dict[str, int], int] = ({}, {}, 0)
        """What other processes hold: by address, by network, in all."""

    def held_elsewhere(self, by_address: dict[str, int]) -> None:
        """What the other processes serving the same database hold now, by address (counted
        with this process's from now on). O(addresses)."""
        by_network: dict[str, int] = {}
        for address, count in by_address.items():
            network = network_of(address)
            by_network[network] = by_network.get(network, 0) + count
        self._elsewhere = (by_address, by_network, sum(by_address.values()))

    @classmethod
    def of(
        cls, what: Literal["games", "sockets", "connections"], settings: ServerSettings
    ) -> Holdings:
        """The bounds the settings give on ``what`` clients hold: games in play
        (``max_games_per_client`` of ``max_games_in_play``), WebSockets
        (``max_sockets_per_client``) or connections (``max_connections_per_client``), both of
        ``max_concurrency``; by network and in all as ``network_allowance``, ``network_share``
        and ``reserve_share`` say."""
        per_address, capacity = {
            "games": (settings.max_games_per_client, settings.max_games_in_play),
            "sockets": (settings.max_sockets_per_client, settings.max_concurrency),
            "connections": (settings.max_connections_per_client, settings.max_concurrency),
        }[what]
        return cls(
            per_address=per_address,
            network_allowance=settings.network_allowance,
            capacity=capacity,
            network_share=settings.network_share,
            reserve_share=settings.reserve_share,
        )

    def refusal(self, client: str, *, address_holds: int | None = None) -> str | None:
        """Why ``client`` may not take one more (a reason naming the bound), or ``None``.
        ``address_holds``: what the address holds when the caller counts it itself (else this
        object's count)."""
        addresses, networks, total = self._elsewhere
        mine = self.by_address.get(client, 0) if address_holds is None else address_holds
        if mine + addresses.get(client, 0) >= self.per_address:
            return "address"
        where = network_of(client)
        network = self.by_network.get(where, 0) + networks.get(where, 0)
        if network >= self.per_network:
            return "network"
        total += self.total
        if total >= self.capacity:
            return "capacity"
        if total >= self.open_until and network >= self.little:
            return "reserve"
        return None

    def holds(self, client: str) -> int:
        """What ``client`` holds on this process and the others. O(1)."""
        return self.by_address.get(client, 0) + self._elsewhere[0].get(client, 0)

    def take(self, client: str) -> str | None:
        """Take one for ``client`` when :meth:`refusal` allows it (``None``), else the reason
        (nothing taken)."""
        why = self.refusal(client)
        if why is None:
            self.add(client, 1)
        return why

    def add(self, client: str, count: int) -> None:
        """Count ``count`` more (or fewer, when negative) held by ``client``, unchecked."""
        for table, key in ((self.by_address, client), (self.by_network, network_of(client))):
            left = table.get(key, 0) + count
            if left > 0:
                table[key] = left
            else:
                table.pop(key, None)
        self.total = max(0, self.total + count)

    def give_back(self, client: str) -> None:
        """``client`` let one go."""
        self.add(client, -1)
