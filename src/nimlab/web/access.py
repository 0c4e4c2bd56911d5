"""Who is asking: the games of the app a request reaches, the client's address (the forwarded
one from a trusted proxy, see :mod:`nimlab.web.proxies`), and the admin check (the admin token,
or this machine directly when the server has none); shared by the API's routers."""

from __future__ import annotations

import hmac
import ipaddress
from typing import Annotated

from fastapi import Query, Request
from fastapi.requests import HTTPConnection

from nimlab.storage import GameNotFoundError, Store, StoredGame
from nimlab.web.errors import Forbidden, Unauthorized
from nimlab.web.live import LiveGames
from nimlab.web.proxies import FORWARDING_HEADERS, TrustedProxies
from nimlab.web.schemas_in import MAX_KEY

__all__ = [
    "GameKeyQuery",
    "client_of",
    "from_this_machine",
    "is_admin",
    "live",
    "may_administer",
    "require_admin",
    "stored_game",
]


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


def may_administer(request: Request) -> bool:
    """Whether the request may do what the admin does: it carries the admin token, or the
    server has none and the request comes straight from this machine (see
    :func:`require_admin`)."""
    if live(request).settings.admin_secret():
        return is_admin(request)
    return from_this_machine(request)


GameKeyQuery = Annotated[
    str | None,
    Query(
        min_length=1,
        max_length=MAX_KEY,
        description="The id the game had in play (its link): a private game is read only with it",
    ),
]


async def stored_game(request: Request, game_id: int, key: str | None) -> StoredGame:
    """The stored game ``game_id`` as this request may read it: a private game (its players
    kept it private in play, see :attr:`nimlab.storage.GameSummary.private`) only with the key
    it had in play (``key``: its link, which its players and watchers were given), or for the
    admin (:func:`may_administer`). Raises the storage's :class:`GameNotFoundError` (404) for a
    private game without either, with the words it has for a game that does not exist, so that
    the ids of private games cannot be told from gaps."""
    admin = may_administer(request)

    def read(store: Store) -> StoredGame:
        stored = store.game(game_id)
        if stored.summary.private and not admin:
            found = store.finished_game(key) if key else None
            if found is None or found[0] != game_id:
                raise GameNotFoundError(
                    f"there is no game #{game_id} (nimlab history lists the games)"
                )
        return stored

    return await live(request).read(read)


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
    """Whether the request came straight from this machine: from a loopback address that is
    not a trusted proxy's, naming no other client (no ``X-Forwarded-For``, ``X-Real-IP`` or
    ``Forwarded`` header). A request through a proxy on this machine is a visitor's (or names a
    forged address), so it is never taken as this machine's, whatever address its headers
    give."""
    if any(name.decode() in request.headers for name in FORWARDING_HEADERS):
        return False
    host = client_of(request)
    if TrustedProxies(live(request).settings.trusted_proxies).trusts(host):
        return False  # a proxy's request without the header: still a visitor's
    return _loopback(host)


def _loopback(host: str | None) -> bool:
    try:
        return host is not None and ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
