"""Storage: the player registry with statistics, finished game records and games in play, in
SQLite or PostgreSQL.

Every SQL statement of nimlab is in this package, written once for both databases behind the
same :class:`Store` interface (:mod:`~nimlab.storage.backend`). The database is ``--db PATH``,
else ``$NIMLAB_DB``, else ``nimlab.db`` in the user's data directory; a PostgreSQL database is
given as a URL (``postgresql://...``, :mod:`~nimlab.storage.postgres`), and
:mod:`~nimlab.storage.dbcopy` copies a whole database into another. The parts:
:mod:`~nimlab.storage.registry` (players, statistics, rankings),
:mod:`~nimlab.storage.archive` (finished games, history, export, import),
:mod:`~nimlab.storage.inplay` (games in play and their bounds), :mod:`~nimlab.storage.writer`
(the thread that owns a server's writes), behind one :class:`Store`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from nimlab._lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "ENDINGS": "nimlab.storage.archive",
    "upgrade_database": "nimlab.storage.connection",
    "Ending": "nimlab.storage.archive",
    "ending_of": "nimlab.storage.archive",
    "DatabaseChoiceError": "nimlab.storage.errors",
    "GameNotFoundError": "nimlab.storage.errors",
    "LimitError": "nimlab.storage.errors",
    "NoDatabaseError": "nimlab.storage.errors",
    "OldSchemaError": "nimlab.storage.errors",
    "PlayerExistsError": "nimlab.storage.errors",
    "ReadOnlyError": "nimlab.storage.errors",
    "RecordError": "nimlab.storage.errors",
    "RegistryError": "nimlab.storage.errors",
    "StaleGameError": "nimlab.storage.errors",
    "StorageError": "nimlab.storage.errors",
    "TooManyGamesInPlayError": "nimlab.storage.errors",
    "TooManyMovesError": "nimlab.storage.errors",
    "UnknownPlayerError": "nimlab.storage.errors",
    "UnsupportedDatabaseError": "nimlab.storage.errors",
    "WriterBusyError": "nimlab.storage.errors",
    "Change": "nimlab.storage.feed",
    "ChangeFeed": "nimlab.storage.feed",
    "Changes": "nimlab.storage.feed",
    "InPlayLimits": "nimlab.storage.inplay",
    "takebacks_of": "nimlab.storage.inplay",
    "SCHEMA_VERSION": "nimlab.storage.schema",
    "record_hash": "nimlab.storage.schema",
    "DB_ENV": "nimlab.storage.store",
    "EXPORT_FORMAT": "nimlab.storage.store",
    "GameSummary": "nimlab.storage.store",
    "ImportResult": "nimlab.storage.store",
    "PlayerRecord": "nimlab.storage.store",
    "Seat": "nimlab.storage.store",
    "Store": "nimlab.storage.store",
    "StoredGame": "nimlab.storage.store",
    "check_name": "nimlab.storage.store",
    "check_username": "nimlab.storage.store",
    "default_db_path": "nimlab.storage.store",
    "resolve_db_path": "nimlab.storage.store",
    "import_document": "nimlab.storage.transfer",
    "read_document": "nimlab.storage.transfer",
    "read_players": "nimlab.storage.transfer",
    "LoopWriter": "nimlab.storage.writer",
    "StoreWriter": "nimlab.storage.writer",
}
"""Where each name is defined: a name is imported when first used, so that importing one part
(``nimlab.storage.errors``, as every command line does) does not import the others (the
server's writer and its asyncio, the database drivers)."""

if TYPE_CHECKING:
    from nimlab.storage.archive import ENDINGS, Ending, ending_of
    from nimlab.storage.connection import upgrade_database
    from nimlab.storage.errors import (
        DatabaseChoiceError,
        GameNotFoundError,
        LimitError,
        NoDatabaseError,
        OldSchemaError,
        PlayerExistsError,
        ReadOnlyError,
        RecordError,
        RegistryError,
        StaleGameError,
        StorageError,
        TooManyGamesInPlayError,
        TooManyMovesError,
        UnknownPlayerError,
        UnsupportedDatabaseError,
        WriterBusyError,
    )
    from nimlab.storage.feed import Change, ChangeFeed, Changes
    from nimlab.storage.inplay import InPlayLimits, takebacks_of
    from nimlab.storage.schema import SCHEMA_VERSION, record_hash
    from nimlab.storage.store import (
        DB_ENV,
        EXPORT_FORMAT,
        GameSummary,
        ImportResult,
        PlayerRecord,
        Seat,
        Store,
        StoredGame,
        check_name,
        check_username,
        default_db_path,
        resolve_db_path,
    )
    from nimlab.storage.transfer import import_document, read_document, read_players
    from nimlab.storage.writer import LoopWriter, StoreWriter


__getattr__ = lazy_exports(globals(), _EXPORTS)


__all__ = [
    "DB_ENV",
    "ENDINGS",
    "EXPORT_FORMAT",
    "SCHEMA_VERSION",
    "Change",
    "ChangeFeed",
    "Changes",
    "DatabaseChoiceError",
    "Ending",
    "GameNotFoundError",
    "GameSummary",
    "ImportResult",
    "InPlayLimits",
    "LimitError",
    "LoopWriter",
    "NoDatabaseError",
    "OldSchemaError",
    "PlayerExistsError",
    "PlayerRecord",
    "ReadOnlyError",
    "RecordError",
    "RegistryError",
    "Seat",
    "StaleGameError",
    "StorageError",
    "Store",
    "StoreWriter",
    "StoredGame",
    "TooManyGamesInPlayError",
    "TooManyMovesError",
    "UnknownPlayerError",
    "UnsupportedDatabaseError",
    "WriterBusyError",
    "check_name",
    "check_username",
    "default_db_path",
    "ending_of",
    "import_document",
    "read_document",
    "read_players",
    "record_hash",
    "resolve_db_path",
    "takebacks_of",
    "upgrade_database",
]
