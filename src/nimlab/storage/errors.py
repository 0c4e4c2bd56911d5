"""Storage errors. Input errors are :class:`~nimlab.core.errors.NimlabError` subclasses (bad usage,
exit status 2 on the command line); :class:`StorageError` is a failure of the database itself."""

from __future__ import annotations

from nimlab.core.errors import NimlabError

__all__ = [
    "GameNotFoundError",
    "PlayerExistsError",
    "RecordError",
    "RegistryError",
    "StorageError",
    "UnknownPlayerError",
]


class StorageError(Exception):
    """The database cannot be opened or used (unreadable file, newer schema, ...)."""


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
