"""Every setting of the web server in one typed class (:class:`ServerSettings`, pydantic-settings).

A setting has one name everywhere: the field ``create_rate`` is the flag ``--create-rate`` of
``nimlab serve``, the environment variable ``NIMLAB_CREATE_RATE`` and the line
``create_rate = 30`` of a TOML file (``--config nimlab.toml``); a flag wins over the environment,
which wins over the file, which wins over the default (:meth:`ServerSettings.load`).
docs/configuration.md holds the table :func:`settings_table` makes from the class.

The server's own code reads the instance it was given (``LiveGames.settings``, the arguments of
the guard and of the connection protocol). The settings of the app created last are also this
module's attributes in capitals, for a script that reads a bound as ``settings.NAME``
(``settings.CREATE_RATE`` is the current ``create_rate``): :func:`use` sets them
(``create_app`` does), :func:`current` returns them.
"""

from __future__ import annotations

import contextvars
import os
import tomllib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import Field, SecretStr, ValidationError, field_validator
from pydantic.fields import FieldInfo
from pydantic_settings import (
    BaseSettings,
    InitSettingsSource,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

if TYPE_CHECKING:
    from nimlab.storage import InPlayLimits

__all__ = [
    "ADMIN_CREDENTIAL",
    "ENV_PREFIX",
    "ServerSettings",
    "SettingsError",
    "credential",
    "current",
    "env_name",
    "flag_name",
    "settings_fields",
    "settings_table",
    "unknown_variables",
    "use",
]

ENV_PREFIX = "NIMLAB_"

_FILE_VALUES: contextvars.ContextVar[Mapping[str, Any] | None] = contextvars.ContextVar(
    "nimlab_settings_file", default=None
)

Names = Annotated[tuple[str, ...], NoDecode]
"""A list of names: a list in the file, comma- or space-separated in the environment."""


class SettingsError(ValueError):
    """A setting has a value it may not have (the message names the setting)."""


class ServerSettings(BaseSettings):
    """How the server listens, logs, and how much one request, one game and one client may ask.

    Engine work (see :mod:`nimlab.web.work`): ``engine_threads`` threads; a bot move, the first
    answer to a hint or an analysis, and a setup check each get ``move_seconds`` and
    ``job_positions`` stored positions; when that answer is not proven, a deeper search gets
    ``deep_seconds`` and its proven answer is pushed to the game's pages. ``reply_wait`` and
    ``compute_wait`` bound how long a request waits for the bots' replies or a hint/analysis
    before it answers (what comes later arrives over the game's WebSocket).

    Constructed directly (``ServerSettings(move_rate=5)``), the keywords win over ``NIMLAB_*``
    variables, which win over the defaults; :meth:`load` adds a TOML file below them.
    """

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX,
        env_ignore_empty=True,
        frozen=True,
        extra="forbid",
        validate_default=True,
    )

    # -- listening ----------------------------------------------------------------------------
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
    # -- connections --------------------------------------------------------------------------
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
    log_level: Literal["debug", "info", "warning", "error"] = Field(
        default="info", description="The least important log lines written (to stderr)."
    )
    log_format: Literal["text", "json"] = Field(
        default="text", description="text: a line for people; json: one JSON object per line."
    )
    # -- limits -------------------------------------------------------------------------------
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
    # -- what one client may take from the others --------------------------------------------
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
    page_size: int = Field(
        default=100, ge=1, le=100_000, description="Entries in one answer of a list by default."
    )
    max_page: int = Field(
        default=1000,
        ge=1,
        le=100_000,
        description="The most entries one answer of a list may ask for (limit=).",
    )
    # -- filled in by the server --------------------------------------------------------------
    allowed_hosts: tuple[str, ...] | None = Field(
        default=None, json_schema_extra={"setting": False}
    )
    """The host names a request's ``Host`` may name (``None``: any), from ``host`` and
    ``allow_host`` (see ``nimlab.cli.serve.allowed_hosts``)."""

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

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        file = InitSettingsSource(settings_cls, init_kwargs=dict(_FILE_VALUES.get() or {}))
        return (init_settings, env_settings, file)

    def admin_secret(self) -> str | None:
        """The admin token (``None``: none is set)."""
        token: Any = self.admin_token
        if isinstance(token, SecretStr):
            token = token.get_secret_value()
        return str(token) if token else None

    def in_play_limits(self) -> InPlayLimits:
        """The bounds on games in play these settings give the store (by network and for
        newcomers as :meth:`Holdings.of <nimlab.web.guard.Holdings.of>` ``("games", ...)``
        says: the store counts the games of every process serving it)."""
        from datetime import timedelta

        from nimlab.storage import InPlayLimits
        from nimlab.web.guard import Holdings

        held = Holdings.of("games", self)
        return InPlayLimits(
            max_games=self.max_games_in_play,
            max_per_client=self.max_games_per_client,
            max_moves=self.max_moves_per_game,
            expire_after=timedelta(days=self.game_expiry_days),
            idle_after=timedelta(hours=self.idle_game_expiry_hours),
            max_per_network=held.per_network,
            reserved_from=held.open_until,
            little=held.little,
        )

    @classmethod
    def load(
        cls, flags: Mapping[str, Any], config: Path | None = None
    ) -> tuple[ServerSettings, dict[str, str]]:
        """The settings from ``flags`` (given on the command line), ``NIMLAB_*`` variables and
        the TOML file ``config``, in that order of precedence, with where each came from
        (``--flag``, ``$NIMLAB_NAME``, the file's name or ``default``). The admin token is read
        from ``admin_token_file`` when one is named. Raises :class:`SettingsError` naming the
        setting for a value it may not have, an unknown name, or a file that cannot be read."""
        values: dict[str, Any] = {}
        if config is not None:
            try:
                values = tomllib.loads(Path(config).read_text(encoding="utf-8"))
            except OSError as e:
                raise SettingsError(f"cannot read {config}: {e.strerror or e}") from None
            except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
                raise SettingsError(f"{config} is not a TOML file: {e}") from None
            known = dict(settings_fields())
            unknown = sorted(set(values) - set(known))
            if unknown:
                raise SettingsError(
                    f"{config}: unknown setting {unknown[0]!r} (the settings are listed by "
                    "nimlab serve --print-config)"
                )
        token = _FILE_VALUES.set(values)
        try:
            settings = cls(**dict(flags))
        except ValidationError as e:
            raise SettingsError(_explain(e)) from None
        finally:
            _FILE_VALUES.reset(token)
        sources: dict[str, str] = {}
        environ = {k.upper() for k, v in os.environ.items() if v}
        for name, _ in settings_fields():
            if name in flags:
                sources[name] = flag_name(name)
            elif env_name(name) in environ:
                sources[name] = "$" + env_name(name)
            elif name in values:
                sources[name] = str(config)
            else:
                sources[name] = "default"
        path = settings.admin_token_file
        if path is None and settings.admin_token is None:
            path = credential(ADMIN_CREDENTIAL)
        if path is not None:
            try:
                lines = path.read_text(encoding="utf-8").splitlines()
            except (OSError, UnicodeDecodeError) as e:
                raise SettingsError(
                    f"admin_token_file: cannot read {path}: {getattr(e, 'strerror', None) or e}"
                ) from None
            secret = lines[0].strip() if lines else ""
            if not secret:
                raise SettingsError(f"admin_token_file: {path} holds no token on its first line")
            settings = settings.model_copy(update={"admin_token": SecretStr(secret)})
            sources["admin_token"] = str(path)
        return settings, sources


ADMIN_CREDENTIAL = "admin-token"
"""The name of the admin token among systemd's credentials (``LoadCredential=admin-token:FILE``):
read from ``$CREDENTIALS_DIRECTORY/admin-token`` when neither ``NIMLAB_ADMIN_TOKEN`` nor
``admin_token_file`` is set."""


def credential(name: str) -> Path | None:
    """The file of systemd credential ``name`` (``$CREDENTIALS_DIRECTORY/NAME``, which systemd
    sets for a unit with ``LoadCredential=``), or None when there is none."""
    folder = os.environ.get("CREDENTIALS_DIRECTORY")
    if not folder:
        return None
    path = Path(folder) / name
    return path if path.is_file() else None


TOOL_VARIABLES = ("NIMLAB_TEST_", "NIMLAB_BENCH", "NIMLAB_PEERS")
"""Prefixes of ``NIMLAB_*`` variables read by the tests and benchmarks, not by the server."""


def unknown_variables(environ: Mapping[str, str] | None = None) -> list[str]:
    """One warning for each ``NIMLAB_*`` variable of ``environ`` (default: this process's) that
    is no setting (a misspelt ``NIMLAB_MOVE_RTAE`` would otherwise be ignored in silence),
    naming the closest setting's variable. O(variables x settings)."""
    import difflib

    known = [env_name(name) for name, _ in settings_fields()]
    out = []
    for variable in sorted(os.environ if environ is None else environ):
        upper = variable.upper()
        if not upper.startswith(ENV_PREFIX) or upper in known or upper.startswith(TOOL_VARIABLES):
            continue
        names = [k.removeprefix(ENV_PREFIX) for k in known]  # (the prefix is no likeness)
        close = difflib.get_close_matches(upper.removeprefix(ENV_PREFIX), names, n=1, cutoff=0.6)
        hint = f"; did you mean {ENV_PREFIX}{close[0]}?" if close else ""
        out.append(
            f"ignoring the environment variable {variable}: it is no setting of nimlab serve "
            f"(nimlab serve --print-config lists them){hint}"
        )
    return out


def _explain(error: ValidationError) -> str:
    parts = []
    for e in error.errors()[:3]:
        name = str(e["loc"][0]) if e.get("loc") else "?"
        given = e.get("input")
        shown = "" if name == "admin_token" or isinstance(given, dict) else f" (given {given!r})"
        if e.get("type") == "extra_forbidden":
            parts.append(f"unknown setting {name!r}")
        else:
            msg = str(e.get("msg", "invalid")).removeprefix("Value error, ")
            parts.append(f"{name} ({flag_name(name)}, ${env_name(name)}): {msg}{shown}")
    return "; ".join(parts)


def flag_name(name: str) -> str:
    """The command-line flag of setting ``name``: ``create_rate`` is ``--create-rate``."""
    return "--" + name.replace("_", "-")


def env_name(name: str) -> str:
    """The environment variable of setting ``name``: ``create_rate`` is ``NIMLAB_CREATE_RATE``."""
    return ENV_PREFIX + name.upper()


def settings_fields() -> Iterator[tuple[str, FieldInfo]]:
    """Every setting (name, field) in the class's order; not the fields the server fills in."""
    for name, info in ServerSettings.model_fields.items():
        extra = info.json_schema_extra
        if isinstance(extra, dict) and extra.get("setting") is False:
            continue
        yield name, info


def _shown_default(info: FieldInfo) -> str:
    default = info.default
    if default is None or default == ():
        return "—"
    if isinstance(default, float) and default.is_integer():
        return str(int(default))
    if isinstance(default, int) and default >= 10_000:
        return f"{default:_}"
    return str(default)


def settings_table() -> str:
    """The Markdown table of every setting: name, flag, variable, default, meaning (the one in
    docs/configuration.md)."""
    rows = [
        "| setting (file) | flag | environment | default | meaning |",
        "|---|---|---|---|---|",
    ]
    for name, info in settings_fields():
        flag = "—" if name == "admin_token" else f"`{flag_name(name)}`"
        rows.append(
            f"| `{name}` | {flag} | `{env_name(name)}` | {_shown_default(info)} "
            f"| {info.description or ''} |"
        )
    return "\n".join(rows) + "\n"


_current: ServerSettings | None = None


def use(settings: ServerSettings) -> None:
    """Make ``settings`` the ones the module's capital names give (``create_app`` calls it)."""
    global _current
    _current = settings


def current() -> ServerSettings:
    """The settings of the app being served (the defaults until :func:`use` is called)."""
    global _current
    if _current is None:
        _current = ServerSettings()
    return _current


def __getattr__(name: str) -> Any:
    if name.isupper() and name.lower() in ServerSettings.model_fields:
        return getattr(current(), name.lower())
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
