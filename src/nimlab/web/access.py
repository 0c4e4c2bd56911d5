"""Who is asking: the games of the app a request reaches, the client's address (the forwarded
one from a trusted proxy, see :mod:`nimlab.web.proxies`), and the admin check (the admin token,
or this machine directly when the server has none); shared by the API's routers."""

from __future__ import annotations

import hmac
import ipaddress

from fastapi import Request
from fastapi.requests import HTTPConnection

from nimlab.web.errors import Forbidden, Unauthorized
from nimlab.web.live import LiveGames
from nimlab.web.proxies import FORWARDING_HEADERS

__all__ = ["client_of", "from_this_machine", "is_admin", "live", "require_admin"]


def live(request: Request) -> LiveGames:
    """The games in play of the app the request reaches."""
    manager: LiveGames = request.app.state.live
    return manager


def client_of(connection: HTTPConnection) -> str | None:
    """Who sent the request or opened the WebSocket (its network address), for the limits per
    client."""
    return connection.client.host if connection.client is not None else None


def is_admin(request: Request) -> bool:
    """Whether the server has an admin token and the request carries it as
    ``Authorization: Bearer TOKEN``."""
    token = live(request).settings.admin_secret()
    if not token:
        return False
    given = request.headers.get("authorization", "")
    scheme, _, value = given.partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(
        value.strip().encode("utf-8", "surrogatepass"), token.encode("utf-8", "surrogatepass")
    )


def require_admin(request: Request) -> None:
    """With an admin token set (``$NIMLAB_ADMIN_TOKEN`` / ``--admin-token-file``), registry
    changes need ``Authorization: Bearer TOKEN``: raises :class:`Unauthorized` (401) otherwise.
    Without one, they are allowed only from this machine directly (:func:`from_this_machine`):
    raises :class:`Forbidden` (403) saying how to allow them."""
    if not live(request).settings.admin_secret():
        if not from_this_machine(request):
            raise Forbidden(
                "removing players, resetting statistics and deleting stored games are allowed "
                "only from the server's own machine, not through a proxy; to allow them from "
                "elsewhere, start the server with an admin token (NIMLAB_ADMIN_TOKEN or "
                "--admin-token-file) and send it as Authorization: Bearer TOKEN"
            )
        return
    if not is_admin(request):
        raise Unauthorized(
            "this server keeps its registry behind an admin token: send it as "
            "Authorization: Bearer TOKEN"
        )


def from_this_machine(request: Request) -> bool:
    """Whether the request came straight from this machine: from a loopback address, naming no
    other client (no ``X-Forwarded-For``, ``X-Real-IP`` or ``Forwarded`` header). A request
    through a proxy on this machine names the visitor behind it (or a forged address), so it is
    never taken as this machine's, whatever address its headers give and whether or not the
    proxy is trusted."""
    if any(name.decode() in request.headers for name in FORWARDING_HEADERS):
        return False
    return _loopback(client_of(request))


def _loopback(host: str | None) -> bool:
    try:
        return host is not None and ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
