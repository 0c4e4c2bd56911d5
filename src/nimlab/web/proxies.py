"""Who a request comes from when reverse proxies stand in front of the server: one resolution of
the forwarded address for the whole server (the limits per client, the connections per client,
the log).

:class:`TrustedProxies` holds the addresses and networks of ``trusted_proxies``. A request whose
TCP peer is one of them has its client taken from ``X-Forwarded-For``: the last entry that is not
a trusted proxy (each proxy appends the address it saw, so the entries a client forged come
before it and are never read); when every entry is a trusted proxy, the first. A request from any
other peer is from that peer, whatever its headers say.

:class:`ForwardedClient` (ASGI middleware, outermost, installed when ``trusted_proxies`` is set)
puts that client in the request's scope, and bounds the requests and WebSockets open at once per
client of a trusted proxy (``max_connections_per_client``: 429, or a refused WebSocket): the
server's own bound per connection (``nimlab serve``) cannot see who is behind the proxy before the
request is read, so it leaves the proxy's connections to this one.

Whether a request may act as the admin without a token is decided by its TCP peer and headers,
not by the forwarded address (see :func:`nimlab.web.access.require_admin`).
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any

from nimlab.web import metrics
from nimlab.web.guard import Holdings, holding_limit

__all__ = ["FORWARDING_HEADERS", "TOO_MANY_CONNECTIONS", "ForwardedClient", "TrustedProxies"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

FORWARDING_HEADERS = (b"x-forwarded-for", b"x-real-ip", b"forwarded")
"""Headers by which a request names a client other than its TCP peer."""

TOO_MANY_CONNECTIONS = "too many connections from your address: close some and try again"


def _address(entry: str) -> str:
    """The address of one ``X-Forwarded-For`` entry (``1.2.3.4``, ``1.2.3.4:5``, ``[::1]:5``,
    ``::1``), stripped; the entry as it is when it is none of those."""
    entry = entry.strip()
    if entry.startswith("[") and "]" in entry:
        return entry[1 : entry.index("]")]
    if entry.count(":") == 1:
        return entry.split(":", 1)[0]
    return entry


class TrustedProxies:
    """The reverse proxies whose ``X-Forwarded-For`` is believed (see the module docstring)."""

    def __init__(self, networks: Iterable[str]) -> None:
        self.networks = tuple(ipaddress.ip_network(n, strict=False) for n in networks)

    def __bool__(self) -> bool:
        return bool(self.networks)

    def trusts(self, host: str | None) -> bool:
        """Whether ``host`` (an address; anything else is not trusted) is a trusted proxy."""
        if not host or not self.networks:
            return False
        try:
            address = ipaddress.ip_address(host)
        except ValueError:
            return False
        return any(address in network for network in self.networks)

    def client(self, peer: str | None, forwarded_for: str | None) -> str | None:
        """The client of a request from TCP peer ``peer`` carrying ``X-Forwarded-For``
        ``forwarded_for`` (its values joined by commas; ``None``: none). O(entries)."""
        if not forwarded_for or not self.trusts(peer):
            return peer
        entries = [_address(e) for e in forwarded_for.split(",")]
        entries = [e for e in entries if e]
        for entry in reversed(entries):
            if not self.trusts(entry):
                return entry
        return entries[0] if entries else peer


def _headers(scope: Scope, name: bytes) -> list[str]:
    return [bytes(v).decode("latin-1") for k, v in scope.get("headers", ()) if k == name]


class ForwardedClient:
    """The middleware (see the module docstring): the requests and WebSockets open at once
    per client of a trusted proxy, per network and in all, as ``holdings`` allows
    (:meth:`Holdings.of` ``("connections", settings)``)."""

    def __init__(self, app: ASGIApp, *, proxies: TrustedProxies, holdings: Holdings) -> None:
        self.app = app
        self.proxies = proxies
        self.open = holdings
        """Requests and WebSockets in progress per client of a trusted proxy."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        address = scope.get("client")
        peer = str(address[0]) if address else None
        if scope["type"] not in ("http", "websocket") or not self.proxies.trusts(peer):
            await self.app(scope, receive, send)
            return
        forwarded = _headers(scope, b"x-forwarded-for")
        client = self.proxies.client(peer, ", ".join(forwarded) if forwarded else None)
        if client != peer:
            scope["client"] = (client, 0)
        proto = _headers(scope, b"x-forwarded-proto")
        if proto and proto[0].strip() in ("http", "https"):
            scheme = proto[0].strip()
            scope["scheme"] = (
                scheme.replace("http", "ws") if scope["type"] == "websocket" else scheme
            )
        host = client or ""
        why = self.open.take(host)
        if why is not None:
            metrics.refused(holding_limit(why, "max_connections_per_client", "max_concurrency"))
            await _refuse(scope, send)
            return
        try:
            await self.app(scope, receive, send)
        finally:
            self.open.give_back(host)


async def _refuse(scope: Scope, send: Send) -> None:
    """429 with :data:`TOO_MANY_CONNECTIONS` (a WebSocket: as its handshake's answer when the
    server can send one, else closed with 1013, try again later)."""
    body = json.dumps({"detail": TOO_MANY_CONNECTIONS}).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"retry-after", b"5"),
    ]
    if scope["type"] == "websocket":
        if "websocket.http.response" not in scope.get("extensions", {}):
            await send({"type": "websocket.close", "code": 1013})
            return
        prefix = "websocket.http.response"
    else:
        prefix = "http.response"
    await send({"type": f"{prefix}.start", "status": 429, "headers": headers})
    await send({"type": f"{prefix}.body", "body": body})
