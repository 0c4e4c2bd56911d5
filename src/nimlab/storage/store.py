"""The store: one object over the player registry, the archive of finished games and the games
in play, in one database (an SQLite file, or PostgreSQL given as a URL).

Every SQL statement of nimlab lives in this package, the same for both databases behind the same
:class:`Store` interface. The parts:

- :class:`~nimlab.storage.registry.Registry`: players, statistics, rankings;
- :class:`~nimlab.storage.archive.Archive`: finished games, history, export and import;
- :class:`~nimlab.storage.inplay.GamesInPlay`: unfinished games saved move by move, with bounds;
- :class:`~nimlab.storage.connection.Database`: the connection, transactions and migrations.

:class:`Store` keeps the methods the interfaces call (and gives each part as ``store.registry``,
``store.archive``, ``store.in_play``). A game record and the statistics it changes are written in
one transaction; finishing a game in play is one transaction too.

>>> with Store.open(":memory:") as store:
...     lee = store.add_player("lee", given="Bruce", family="Lee")
...     [p.username for p in store.rankings()]
['lee']
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from types import TracebackType
from typing import Any

from nimlab.storage.archive import (
    EXPORT_FORMAT,
    Archive,
    GameSummary,
    ImportResult,
    Seat,
    StoredGame,
)
from nimlab.storage.connection import (
    BUSY_TIMEOUT_S,
    DB_ENV,
    Database,
    default_db_path,
    resolve_db_path,
)
from nimlab.storage.inplay import GamesInPlay, InPlayLimits, LiveEntry
from nimlab.storage.registry import PlayerRecord, Registry, check_name, check_username

__all__ = [
    "BUSY_TIMEOUT_S",
    "DB_ENV",
    "EXPORT_FORMAT",
    "GameSummary",
    "ImportResult",
    "PlayerRecord",
    "Seat",
    "Store",
    "StoredGame",
    "check_name",
    "check_username",
    "default_db_path",
    "resolve_db_path",
]


class Store:
    """The database: players, statistics, finished games and games in play. Use :meth:`open`;
    close it (or use it as a context manager) when done. One ``Store`` per thread (or one
    :class:`~nimlab.storage.writer.StoreWriter` thread owning it)."""

    def __init__(self, db: Database, limits: InPlayLimits | None = None) -> None:
        self.db = db
        self.registry = Registry(db)
        self.archive = Archive(db)
        self.in_play = GamesInPlay(db, limits)

    @property
    def path(self) -> Path | str:
        """The database file (or ``":memory:"``)."""
        return self.db.path

    @property
    def read_only(self) -> bool:
        """Whether the store was opened read-only (every write raises ReadOnlyError)."""
        return self.db.read_only

    # -- opening ------------------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str] | None = None,
        *,
        read_only: bool = False,
        limits: InPlayLimits | None = None,
        upgrade: bool = False,
    ) -> Store:
        """Open the database at ``path``, ``$NIMLAB_DB`` or the default file. Read-write (the
        default): create the folder and file as needed. A database of an older schema is
        refused (:class:`OldSchemaError`, nothing changed) unless ``upgrade`` (see
        :func:`~nimlab.storage.connection.upgrade_database`, which backs it up first).
        ``read_only``: create nothing (a missing file is a :class:`NoDatabaseError` "no database
        at PATH"), and read even a database on a read-only file system. ``limits``: the bounds
        on games in play (default :meth:`InPlayLimits.from_env`). Raises :class:`StorageError`
        when the database cannot be used."""
        return cls(Database.open(path, read_only=read_only, upgrade=upgrade), limits)

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def integrity_check(self) -> str:
        """SQLite's own consistency check: ``"ok"`` for a sound file."""
        return self.db.integrity_check()

    def ping(self) -> None:
        """Read from the database once (raises :class:`StorageError` when it cannot). O(1)."""
        self.db.one("SELECT 1")

    def backup(self, target: str | os.PathLike[str]) -> Path:
        """A copy of the database at ``target``, made while it is in use (see
        :meth:`Database.backup`)."""
        return self.db.backup(target)

    def problems(self) -> list[str]:
        """What is wrong with the database file (see :meth:`Database.problems`); empty when
        nothing is found."""
        return self.db.problems()

    def require_writable(self) -> None:
        """Raise :class:`ReadOnlyError` unless the database can be written now (check before a
        game is played, not after). O(1)."""
        self.db.require_writable()

    # -- players (the registry) -----------------------------------------------------------------

    def add_player(
        self, username: str, *, given: str, family: str, bot: str | None = None
    ) -> PlayerRecord:
        """See :meth:`Registry.add_player`."""
        return self.registry.add_player(username, given=given, family=family, bot=bot)

    def find_player(self, username: str) -> PlayerRecord | None:
        """See :meth:`Registry.find_player`."""
        return self.registry.find_player(username)

    def get_player(self, username: str) -> PlayerRecord:
        """See :meth:`Registry.get_player`."""
        return self.registry.get_player(username)

    def players(self, *, limit: int | None = None, offset: int = 0) -> list[PlayerRecord]:
        """See :meth:`Registry.players`."""
        return self.registry.players(limit=limit, offset=offset)

    def remove_player(self, username: str) -> None:
        """See :meth:`Registry.remove_player`."""
        self.registry.remove_player(username)

    def remove_all_players(self) -> int:
        """See :meth:`Registry.remove_all_players`."""
        return self.registry.remove_all_players()

    def edit_player(
        self, username: str, *, given: str | None = None, family: str | None = None
    ) -> PlayerRecord:
        """See :meth:`Registry.edit_player`."""
        return self.registry.edit_player(username, given=given, family=family)

    def reset_stats(self, username: str) -> None:
        """See :meth:`Registry.reset_stats`."""
        self.registry.reset_stats(username)

    def reset_all_stats(self) -> None:
        """See :meth:`Registry.reset_all_stats`."""
        self.registry.reset_all_stats()

    def rankings(self, *, ascending: bool = False, limit: int | None = 10) -> list[PlayerRecord]:
        """See :meth:`Registry.rankings`."""
        return self.registry.rankings(ascending=ascending, limit=limit)

    # -- finished games (the archive) -----------------------------------------------------------

    def save_game(
        self,
        record: Mapping[str, Any],
        usernames: Sequence[str | None] = (),
        *,
        source: str = "play",
        update_stats: bool = True,
        finished_at: str | None = None,
    ) -> int:
        """See :meth:`Archive.save_game`."""
        return self.archive.save_game(
            record, usernames, source=source, update_stats=update_stats, finished_at=finished_at
        )

    def games(
        self,
        *,
        username: str | None = None,
        limit: int | None = 20,
        offset: int = 0,
        private: bool = True,
    ) -> list[GameSummary]:
        """See :meth:`Archive.games`."""
        return self.archive.games(username=username, limit=limit, offset=offset, private=private)

    def game_count(self) -> int:
        """See :meth:`Archive.game_count`."""
        return self.archive.game_count()

    def game(self, game_id: int) -> StoredGame:
        """See :meth:`Archive.game`."""
        return self.archive.game(game_id)

    def delete_game(self, game_id: int) -> None:
        """See :meth:`Archive.delete_game`."""
        self.archive.delete_game(game_id)

    def request_delete(self, game_id: int, seat: int, humans: Sequence[int]) -> bool:
        """See :meth:`Archive.request_delete`."""
        return self.archive.request_delete(game_id, seat, humans)

    def export_games(self, ids: Sequence[int] | None = None) -> dict[str, Any]:
        """See :meth:`Archive.export_games`."""
        return self.archive.export_games(ids)

    def import_games(
        self,
        entries: Sequence[tuple[Mapping[str, Any], Sequence[Seat], str | None, bool]],
        *,
        players: Sequence[PlayerRecord] = (),
    ) -> ImportResult:
        """See :meth:`Archive.import_games`."""
        return self.archive.import_games(entries, players=players)

    # -- games in play --------------------------------------------------------------------------

    def add_live_game(
        self,
        key: str,
        record: Mapping[str, Any],
        meta: Mapping[str, Any],
        *,
        client: str | None = None,
        public: bool = False,
        network: str | None = None,
    ) -> None:
        """See :meth:`GamesInPlay.add`."""
        self.in_play.add(key, record, meta, client=client, public=public, network=network)

    def add_live_moves(
        self,
        batch: Sequence[tuple[str, int, Sequence[Mapping[str, Any]]]],
        *,
        expect: Mapping[str, int] | None = None,
    ) -> None:
        """See :meth:`GamesInPlay.add_moves`."""
        self.in_play.add_moves(batch, expect=expect)

    def live_games(self, *, limit: int | None = None) -> list[LiveEntry]:
        """See :meth:`GamesInPlay.games`."""
        return self.in_play.games(limit=limit)

    def live_games_with_versions(self, *, limit: int | None = None) -> list[tuple[LiveEntry, int]]:
        """See :meth:`GamesInPlay.games_with_versions`."""
        return self.in_play.games_with_versions(limit=limit)

    def live_game(self, key: str) -> LiveEntry | None:
        """See :meth:`GamesInPlay.game`."""
        return self.in_play.game(key)

    def live_game_with_version(self, key: str) -> tuple[LiveEntry, int] | None:
        """See :meth:`GamesInPlay.game_with_version`."""
        return self.in_play.game_with_version(key)

    def live_version(self, key: str) -> int | None:
        """See :meth:`GamesInPlay.version`."""
        return self.in_play.version(key)

    def remove_live_game(self, key: str) -> bool:
        """See :meth:`GamesInPlay.remove`."""
        return self.in_play.remove(key)

    def finish_live_game(
        self,
        key: str,
        record: Mapping[str, Any],
        usernames: Sequence[str | None] = (),
        *,
        source: str = "web",
        expect: int | None = None,
        private: bool = False,
    ) -> int:
        """See :meth:`GamesInPlay.finish`: one transaction, the game is never lost."""
        return self.in_play.finish(
            key, record, usernames, source=source, expect=expect, private=private
        )

    def finished_game(self, key: str) -> tuple[int, dict[str, Any]] | None:
        """See :meth:`GamesInPlay.finished_game`."""
        return self.in_play.finished_game(key)

    def take_back_live_moves(self, key: str, keep: int, *, expect: int | None = None) -> int:
        """See :meth:`GamesInPlay.take_back`."""
        return self.in_play.take_back(key, keep, expect=expect)

    def public_games_in_play(self, *, limit: int, offset: int = 0) -> list[tuple[str, int]]:
        """See :meth:`GamesInPlay.public`."""
        return self.in_play.public(limit=limit, offset=offset)

    def count_games_in_play(self, client: str | None = None) -> int:
        """See :meth:`GamesInPlay.count`."""
        return self.in_play.count(client)

    def expire_games_in_play(
        self, older_than: timedelta | None = None, *, at: datetime | None = None
    ) -> list[str]:
        """See :meth:`GamesInPlay.expire`."""
        return self.in_play.expire(older_than, at=at)
