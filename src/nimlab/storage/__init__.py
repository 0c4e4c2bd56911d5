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
from nimlab.storage.inplay import InPlayLimits
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
    "upgrade_database",
]
