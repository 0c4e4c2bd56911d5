"""The settings of ``nimlab serve`` by what they govern: one class per group, which
:class:`nimlab.web.settings.ServerSettings` inherits (see that module for how a setting is named
and read). The groups are listed here in the settings' order, the order of
``nimlab serve --help``, ``--print-config`` and docs/configuration.md's table.

Loads without FastAPI, as :mod:`nimlab.web.settings` does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, SecretStr, field_validator
from pydantic_settings import NoDecode

__all__ = [
    "GROUPS",
    "ClientShareSettings",
    "ConnectionSettings",
    "EngineSettings",
    "GamesInPlaySettings",
    "ListeningSettings",
    "LogSettings",
    "PageSettings",
    "RateSettings",
    "UpkeepSettings",
]

Names = Annotated[tuple[str, ...], NoDecode]
"""A list of names: a list in the file, comma- or space-separated in the environment."""


class ListeningSettings(BaseModel):
    """Where the server listens, the database it serves, the host names and proxies it
    trusts, and the admin token."""

    host: str = Field(
        default="127.0.0.1", description="The address to listen on (0.0.0.0: every network)."
    )
    port: int = Field(default=8000, ge=0, le=65535, description="The port (0: any free port).")
    db: str | None = Field(
        default=None,
        description="The database: an SQLite file, or a PostgreSQL URL "
        "(postgresql://USER:PASSWORD@HOST/DATABASE) (default: nimlab.db in your user data "
        "directory).",
    )
    workers: int = Field(
        default=1,
        ge=1,
        le=64,
        description="Server processes sharing the port and the database (more than 1 needs a "
        "PostgreSQL database: --db postgresql://...).",
    )
    allow_host: Names = Field(
        default=(),
        description="More host names requests may use, besides this machine's own names and "
        "addresses (e.g. the name a proxy forwards); * turns the check off.",
    )
    trusted_proxies: Names = Field(
        default=(),
        description="Addresses or networks (CIDR) of reverse proxies: only a request from one "
        "of them has its client taken from X-Forwarded-For (and its connections are counted "
        "per client behind it).",
    )
    admin_token: SecretStr | None = Field(
        default=None,
        description="Removing players, resetting statistics and deleting stored games need "
        "this token (Authorization: Bearer TOKEN); without one, only requests straight from "
        "this machine may (from loopback, not through a proxy). Environment or file only (a "
        "flag would show in the process list).",
    )
    admin_token_file: Path | None = Field(
        default=None, description="A file whose first line is the admin token."
    )

    @field_validator("allow_host", "trusted_proxies", mode="before")
    @classmethod
    def _split(cls, value: Any) -> Any:
        if isinstance(value, str):
            return tuple(v for v in value.replace(",", " ").split() if v)
        return value

    @field_validator("trusted_proxies")
    @classmethod
    def _networks(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        import ipaddress

        for item in value:
            try:
                ipaddress.ip_network(item, strict=False)
            except ValueError:
                raise ValueError(f"{item!r} is not an address or a network (CIDR)") from None
        return value

    def admin_secret(self) -> str | None:
        """The admin token (``None``: none is set)."""
        token: Any = self.admin_token
        if isinstance(token, SecretStr):
            token = token.get_secret_value()
        return str(token) if token else None


class ConnectionSettings(BaseModel):
    """How long a connection may take and how many are served at once."""

    request_timeout: float = Field(
        default=10.0,
        ge=0.1,
        le=3600,
        description="Seconds a connection may take to send a request's headers.",
    )
    keep_alive: float = Field(
        default=5.0,
        ge=0.1,
        le=3600,
        description="Seconds an idle keep-alive connection stays open.",
    )
    ws_max_size: int = Field(
        default=64 * 1024,
        ge=1024,
        le=16 * 1024 * 1024,
        description="The largest WebSocket message accepted, in bytes.",
    )
    max_concurrency: int = Field(
        default=4096,
        ge=1,
        le=1_000_000,
        description="Connections and requests served at once (503 beyond).",
    )
    shutdown_timeout: float = Field(
        default=5.0,
        ge=0,
        le=3600,
        description="Seconds a stop (SIGTERM, Ctrl+C) waits for requests in flight.",
    )


class LogSettings(BaseModel):
    """What the log says, and how."""

    log_level: Literal["debug", "info", "warning", "error"] = Field(
        default="info", description="The least important log lines written (to stderr)."
    )
    log_format: Literal["text", "json"] = Field(
        default="text", description="text: a line for people; json: one JSON object per line."
    )


class EngineSettings(BaseModel):
    """The engine's work (see :mod:`nimlab.web.work`): ``engine_threads`` threads; a bot
    move, the first answer to a hint or an analysis, and a setup check each get ``move_seconds``
    and ``job_positions`` stored positions; when that answer is not proven, a deeper search gets
    ``deep_seconds`` and its proven answer is pushed to the game's pages. ``reply_wait`` and
    ``compute_wait`` bound how long a request waits for the bots' replies or a hint/analysis
    before it answers (what comes later arrives over the game's WebSocket); ``bot_pace`` is the
    pace of a game of bots only."""

    bot_pace: float = Field(
        default=0.8, ge=0, le=60, description="Seconds between moves when only bots are left."
    )
    reply_wait: float = Field(
        default=10.0,
        gt=0,
        le=600,
        description="Seconds a move request waits for the bots' replies (later ones arrive "
        "over the game's WebSocket).",
    )
    compute_wait: float = Field(
        default=2.0,
        gt=0,
        le=600,
        description="Seconds a hint or analysis request waits before it answers.",
    )
    engine_threads: int = Field(default=3, ge=1, le=64, description="Engine threads.")
    bots_only_threads: int = Field(
        default=1,
        ge=1,
        le=64,
        description="Engine threads the games of bots only use at once, all of them together "
        "(the others are kept for games people play).",
    )
    move_seconds: float = Field(
        default=2.0,
        gt=0,
        le=3600,
        description="Engine time for a bot move, a first hint or analysis, a setup check.",
    )
    deep_seconds: float = Field(
        default=20.0,
        gt=0,
        le=86400,
        description="Engine time for the deeper search after an answer that is not proven.",
    )
    job_positions: int = Field(
        default=2_000_000, ge=1000, le=10**9, description="Positions one engine job may store."
    )


class RateSettings(BaseModel):
    """How large one request may be, and how many requests of each kind one client may send."""

    max_body: int = Field(
        default=1024 * 1024,
        ge=1024,
        le=1024**3,
        description="The largest request body, in bytes (413).",
    )
    create_rate: float = Field(
        default=30.0, ge=0, description="New games per minute per client (429 beyond; 0: no limit)."
    )
    create_burst: int = Field(default=20, ge=1, description="New games a client may start at once.")
    move_rate: float = Field(
        default=20.0, ge=0, description="Moves per second per client (429 beyond; 0: no limit)."
    )
    move_burst: int = Field(default=40, ge=1, description="Moves a client may send at once.")
    read_rate: float = Field(
        default=20.0,
        ge=0,
        description="Reads of the API (GET /api/...) per second per client (429 beyond; 0: no "
        "limit); pages and static files are not counted.",
    )
    read_burst: int = Field(default=100, ge=1, description="API reads a client may send at once.")


class GamesInPlaySettings(BaseModel):
    """How many games may be in play (in all and per client), how many moves one may have,
    and how long an untouched one is kept."""

    max_games_in_play: int = Field(
        default=5000, ge=1, description="Unfinished games in the database (429 beyond)."
    )
    max_games_per_client: int = Field(default=50, ge=1, description="Unfinished games per client.")
    max_moves_per_game: int = Field(
        default=10_000, ge=1, description="Moves in one game (422 beyond)."
    )
    game_expiry_days: int = Field(
        default=7, ge=1, description="Days after which an untouched unfinished game is deleted."
    )
    idle_game_expiry_hours: int = Field(
        default=3,
        ge=1,
        le=100_000,
        description="Hours after which an untouched unfinished game no person has moved in yet "
        "(nobody, or only bots) is deleted; one a person moved in is kept game_expiry_days.",
    )


class ClientShareSettings(BaseModel):
    """What one client, or one network, may take from the others."""

    network_allowance: float = Field(
        default=4.0,
        ge=1,
        le=10_000,
        description="A network (the /24 of an IPv4 address, the /64 of an IPv6 one) gets this "
        "many times one client's allowance of every per-client limit (rates, games in play, "
        "WebSockets, connections, engine jobs waiting).",
    )
    network_share: float = Field(
        default=0.1,
        gt=0,
        le=1,
        description="The largest share of the games in play, WebSockets or connections one "
        "network may hold.",
    )
    reserve_share: float = Field(
        default=0.1,
        ge=0,
        lt=1,
        description="The last share of the games in play, WebSockets and connections: kept for "
        "networks holding little (less than an eighth of one client's bound).",
    )
    engine_jobs_per_client: int = Field(
        default=16,
        ge=1,
        le=100_000,
        description="Engine jobs a client asked for (hints, analyses, setup checks) waiting at "
        "once (503 beyond).",
    )
    max_connections_per_client: int = Field(
        default=256, ge=1, description="Connections one client address holds at once (429 beyond)."
    )
    max_sockets_per_client: int = Field(
        default=64,
        ge=1,
        description="WebSockets (open game pages) one client holds at once (closed with 1013).",
    )
    max_watchers_per_game: int = Field(
        default=500, ge=1, description="WebSockets (open pages) of one game at once (1013 beyond)."
    )
    register_per_hour: int = Field(
        default=60, ge=1, description="Players one client may register per hour (429 beyond)."
    )
    body_timeout: float = Field(
        default=10.0,
        gt=0,
        le=3600,
        description="Seconds a request body may take to arrive after its headers (408 beyond).",
    )


class UpkeepSettings(BaseModel):
    """How games in play are kept going: a game of bots nobody watches, another process's
    bots taken over, the sweep of expired games."""

    unwatched_pause: float = Field(
        default=60.0,
        ge=0,
        description="Seconds a game of bots only plays on with nobody watching it.",
    )
    takeover_grace: float = Field(
        default=2.0,
        ge=0,
        le=3600,
        description="Seconds a process waits, after another process last changed a game, before "
        "it plays that game's bot itself (the other process may have stopped); the database "
        "lets only one of them play the move.",
    )
    expiry_interval: float = Field(
        default=600.0,
        gt=0,
        description="Seconds between two sweeps of expired games in play while serving.",
    )


class PageSettings(BaseModel):
    """How many entries one answer of a list holds."""

    page_size: int = Field(
        default=100, ge=1, le=100_000, description="Entries in one answer of a list by default."
    )
    max_page: int = Field(
        default=1000,
        ge=1,
        le=100_000,
        description="The most entries one answer of a list may ask for (limit=).",
    )


GROUPS: tuple[type[BaseModel], ...] = (
    ListeningSettings,
    ConnectionSettings,
    LogSettings,
    EngineSettings,
    RateSettings,
    GamesInPlaySettings,
    ClientShareSettings,
    UpkeepSettings,
    PageSettings,
)
"""The groups in the settings' order."""
