"""Databases as older versions of nimlab made them, for the tests of upgrades."""

from __future__ import annotations

from typing import Any

from nimlab.storage.schema import SCHEMA_VERSION

ADDED_BY: dict[int, tuple[str, ...]] = {
    10: (  # the engine work the processes share; no index on when a game was last moved in
        "DROP TABLE engine_claims",
        "CREATE INDEX live_games_touched ON live_games(touched_at)",
    ),
    9: (  # the shared rate limits and counts, the network of each game in play
        "DROP TABLE rate_buckets",
        "DROP TABLE held_counts",
        "DROP TABLE server_processes",
        "DROP INDEX IF EXISTS live_games_network",
        "ALTER TABLE live_games DROP COLUMN network",
    ),
    8: ("ALTER TABLE games DROP COLUMN private",),
    7: ("DROP INDEX IF EXISTS live_games_listed", "ALTER TABLE live_games DROP COLUMN listed_at"),
    6: ("DROP TABLE live_changes", "ALTER TABLE live_games DROP COLUMN version"),
    5: ("DROP TABLE delete_requests",),
}
"""What undoes each schema version's additions (SQLite and PostgreSQL alike)."""


def back_to_version(conn: Any, version: int) -> None:
    """Make the database on ``conn`` (sqlite3 or psycopg) what schema version ``version`` was:
    the additions of every later version undone, newest first."""
    for later in range(SCHEMA_VERSION, version, -1):
        for statement in ADDED_BY[later]:
            conn.execute(statement)
    conn.execute(f"UPDATE schema_version SET version = {int(version)}")
