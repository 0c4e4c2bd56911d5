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
from typing import TYPE_CHECKING, Any

from pydantic import Field, SecretStr, ValidationError
from pydantic.fields import FieldInfo
from pydantic_settings import (
    BaseSettings,
    InitSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from nimlab.web.setting_groups import (
    ClientShareSettings,
    ConnectionSettings,
    EngineSettings,
    GamesInPlaySettings,
    ListeningSettings,
    LogSettings,
    PageSettings,
    RateSettings,
    UpkeepSettings,
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


class SettingsError(ValueError):
    """A setting has a value it may not have (the message names the setting)."""


class ServerSettings(
    # pydantic takes the fields of the last base first: the groups are listed last one first,
    # so that the settings come in GROUPS' order.
    PageSettings,
    UpkeepSettings,
    ClientShareSettings,
    GamesInPlaySettings,
    RateSettings,
    EngineSettings,
    LogSettings,
    ConnectionSettings,
    ListeningSettings,
    BaseSettings,
):
    """How the server listens, logs, and how much one request, one game and one client may ask:
    every setting of the groups of :mod:`nimlab.web.setting_groups`, in their order.

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

    # -- filled in by the server --------------------------------------------------------------
    allowed_hosts: tuple[str, ...] | None = Field(
        default=None, json_schema_extra={"setting": False}
    )
    """The host names a request's ``Host`` may name (``None``: any), from ``host`` and
    ``allow_host`` (see ``nimlab.cli.serve.allowed_hosts``)."""

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
