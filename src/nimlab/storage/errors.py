"""Storage errors. Input errors are :class:`~nimlab.core.errors.NimlabError` subclasses (bad usage,
exit status 2 on the command line); :class:`StorageError` is a failure of the database itself (exit
status 1 on the command line, 503 on the web)."""

from __future__ import annotations

from nimlab.core.errors import NimlabError

__all__ = [
    "DatabaseChoiceError",
    "GameNotFoundError",
    "LimitError",
    "NoDatabaseError",
    "OldSchemaError",
    "PlayerExistsError",
    "ReadOnlyError",
    "RecordError",
    "RegistryError",
    "StaleGameError",
    "StorageError",
    "TooManyGamesInPlayError",
    "TooManyMovesError",
    "UnknownPlayerError",
    "UnsupportedDatabaseError",
    "WriterBusyError",
]


class StorageError(Exception):
    """The database cannot be opened or used (unreadable file, newer schema, ...)."""


class DatabaseChoiceError(StorageError):
    """The database named (``--db``, ``$NIMLAB_DB``) cannot be used as it is written: bad usage,
    exit status 2 on the command line (other storage errors exit with 1)."""


class UnsupportedDatabaseError(DatabaseChoiceError):
    """A database written as a URL (``scheme://...``) of a kind nimlab does not open."""

    def __init__(self, scheme: str) -> None:
        super().__init__(
            f"the database {scheme}://... is a URL of a kind nimlab does not open: give an "
            "SQLite database file, e.g. --db games.db, or a PostgreSQL URL, e.g. --db "
            "postgresql://USER:PASSWORD@HOST/DATABASE (also as NIMLAB_DB)"
        )
        self.scheme = scheme


class NoDatabaseError(DatabaseChoiceError):
    """A command that only reads was given a database file that does not exist (or a
    PostgreSQL database without nimlab's tables)."""

    def __init__(self, path: str, message: str | None = None) -> None:
        super().__init__(
            message
            or f"no database at {path} (check --db or $NIMLAB_DB; commands that change the "
            "database create it)"
        )
        self.path = path


class OldSchemaError(StorageError):
    """The database was made by an older nimlab (an older schema version): nothing but ``nimlab
    db migrate`` (which backs it up first) upgrades it, so no other command changes it
    unasked."""

    def __init__(self, name: str, version: int, latest: int, *, default: bool = False) -> None:
        where = "" if default else f" --db {_quoted(name)}"
        super().__init__(
            f"the database {name} has schema version {version}, older than this nimlab's "
            f"({latest}): upgrade it with `nimlab db migrate{where}` (it backs the database up "
            "first), then run this command again"
        )
        self.name = name
        self.version = version


def _quoted(text: str) -> str:
    import shlex

    return shlex.quote(text)


class ReadOnlyError(StorageError):
    """The database can be read but not written (read-only file, folder or file system)."""


class WriterBusyError(StorageError):
    """The database writer has as many jobs waiting as it accepts: try again later."""


class RegistryError(NimlabError):
    """A username or name the registry does not accept."""


class PlayerExistsError(RegistryError):
    """A player with that username is already registered."""


class UnknownPlayerError(RegistryError):
    """No player with that username is registered."""

    def __init__(self, username: str) -> None:
        super().__init__(f"no player {username!r} is registered (nimlab players show lists them)")
        self.username = username


class GameNotFoundError(NimlabError):
    """No stored game has that id."""


class RecordError(NimlabError):
    """A game record that cannot be stored (not finished, players do not match, bad JSON...)."""


class LimitError(RecordError):
    """A bound of the storage is reached (games in play, moves per game): nothing was written."""


class TooManyGamesInPlayError(LimitError):
    """As many unfinished games are in play (in all, or for one client: ``per_client``) as are
    allowed."""

    def __init__(self, message: str, *, per_client: bool = False) -> None:
        super().__init__(message)
        self.per_client = per_client


class TooManyMovesError(LimitError):
    """A game in play has as many moves stored as one game may have."""


class StaleGameError(RecordError):
    """A change to a game in play was made against an older state of it than the stored one
    (another process moved, took back or finished it first): nothing was written; read the game
    again and judge the change against its current state."""
