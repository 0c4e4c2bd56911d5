"""The web server's bounds and knobs in one place (:class:`ServerSettings`)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ServerSettings"]

# Bounds on what one client may take from the others (read where used as ``settings.NAME``).
EXPIRY_INTERVAL = 600.0  # seconds between two sweeps of expired games in play while serving
PAGE_SIZE = 100  # entries in one answer of /api/players, /api/games, /api/history by default
MAX_PAGE = 1000  # the most entries one answer of a list may ask for (limit=)
REGISTER_PER_HOUR = 60  # players one client may register per hour (429 beyond)
MAX_CONNECTIONS_PER_CLIENT = 256  # connections one client address holds at once (429, closed)
MAX_SOCKETS_PER_CLIENT = 64  # WebSockets (open game pages) one client holds at once (1013)
MAX_WATCHERS_PER_GAME = 500  # WebSockets (open pages) of one game at once (1013 beyond)
UNWATCHED_PAUSE = 60.0  # seconds a game of bots only plays on with nobody watching it
BODY_TIMEOUT = 10.0  # seconds a request body may take to arrive after its headers (408 beyond)


@dataclass(frozen=True, slots=True)
class ServerSettings:
    """How much one request, one game and one client may ask of the server.

    Engine work (see :mod:`nimlab.web.work`): ``workers`` threads; a bot move, the first answer
    to a hint or an analysis, and a setup check each get ``move_seconds`` and ``job_positions``
    stored positions; when that answer is not proven, a deeper search gets ``deep_seconds`` and
    its proven answer is pushed to the game's pages. ``reply_wait`` and ``compute_wait`` bound
    how long a request waits for the bots' replies or a hint/analysis before it answers (what
    comes later arrives over the game's WebSocket).

    Input: request bodies of at most ``max_body`` bytes (413). Rate limits per client (429):
    ``create_rate`` new games per minute with bursts of ``create_burst``; ``move_rate`` moves
    per second with bursts of ``move_burst``.

    Network: ``allowed_hosts`` (``None``: any) are the host names a request's ``Host`` header may
    name (against DNS rebinding); ``admin_token`` (``None``: none needed) must be sent as
    ``Authorization: Bearer TOKEN`` to remove players, reset statistics or delete a stored game
    by its id.
    """

    bot_pace: float = 0.8
    reply_wait: float = 10.0
    compute_wait: float = 2.0
    workers: int = 3
    move_seconds: float = 2.0
    deep_seconds: float = 20.0
    job_positions: int = 2_000_000
    max_body: int = 1024 * 1024
    create_rate: float = 30.0
    create_burst: int = 20
    move_rate: float = 20.0
    move_burst: int = 40
    allowed_hosts: tuple[str, ...] | None = None
    admin_token: str | None = None
