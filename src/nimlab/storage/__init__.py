"""Storage: the player registry with statistics, and finished game records, in SQLite.

Every SQL statement of nimlab is in this package (so PostgreSQL could replace SQLite behind the
same :class:`Store` interface). The database file is ``--db PATH``, else ``$NIMLAB_DB``, else
``nimlab.db`` in the user's data directory.
"""

from nimlab.storage.errors import (
    GameNotFoundError,
    PlayerExistsError,
    RecordError,
    RegistryError,
    StorageError,
    UnknownPlayerError,
)
from nimlab.storage.schema import SCHEMA_VERSION
from nimlab.storage.store import (
    DB_ENV,
    EXPORT_FORMAT,
    GameSummary,
    PlayerRecord,
    Seat,
    Store,
    StoredGame,
    check_name,
    check_username,
    default_db_path,
    resolve_db_path,
)
from nimlab.storage.transfer import import_document, read_document

__all__ = [
    "DB_ENV",
    "EXPORT_FORMAT",
    "SCHEMA_VERSION",
    "GameNotFoundError",
    "GameSummary",
    "PlayerExistsError",
    "PlayerRecord",
    "RecordError",
    "RegistryError",
    "Seat",
    "StorageError",
    "Store",
    "StoredGame",
    "UnknownPlayerError",
    "check_name",
    "check_username",
    "default_db_path",
    "import_document",
    "read_document",
    "resolve_db_path",
]
