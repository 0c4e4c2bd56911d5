"""The player registry: registered humans and AI players, their statistics and the rankings.

The statistics (games played and won) are changed only by finishing a game
(:meth:`nimlab.storage.archive.Archive.save_game`), in the transaction that stores it.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from nimlab.core.clock import now_stamp
from nimlab.core.players import printable_text, quoted
from nimlab.storage.backend import Connection
from nimlab.storage.connection import Database
from nimlab.storage.errors import PlayerExistsError, RegistryError, UnknownPlayerError

if TYPE_CHECKING:
    from nimlab.core.players import Player

__all__ = ["MAX_NAME", "PlayerRecord", "Registry", "check_name", "check_username", "clamp_limit"]

MAX_NAME = 40


def now() -> str:
    """The current UTC time as stored: ISO 8601 to the second (see ``now_stamp``)."""
    return now_stamp()


def check_username(text: str) -> str:
    """A username as stored: 1 to 40 printable characters without commas, surrounding spaces
    removed, in Unicode NFKC form (so full-width ``ａnn`` is ``ann``). Raises
    :class:`RegistryError` saying what is allowed."""
    name = unicodedata.normalize("NFKC", text).strip()
    if not name or len(name) > MAX_NAME or not printable_text(name) or "," in name:
        raise RegistryError(
            f"username {quoted(text)}: use 1 to {MAX_NAME} printable characters without commas"
        )
    return name


def check_name(text: str, what: str = "name") -> str:
    """A given or family name: 1 to 40 printable characters, no comma or colon, inner spaces
    collapsed, in Unicode NFKC form. Raises :class:`RegistryError`."""
    name = " ".join(unicodedata.normalize("NFKC", text).split())
    if not name or len(name) > MAX_NAME or not printable_text(name) or re.search(r"[,:]", name):
        raise RegistryError(
            f"{what} {quoted(text)}: use 1 to {MAX_NAME} printable characters without commas "
            "or colons"
        )
    return name


@dataclass(frozen=True, slots=True)
class PlayerRecord:
    """A registered player and their statistics."""

    username: str
    given_name: str
    family_name: str
    bot: str | None
    games_played: int
    games_won: int

    @property
    def is_ai(self) -> bool:
        return self.bot is not None

    @property
    def full_name(self) -> str:
        """``"Given Family"``, as the Nim Game System shows it."""
        return f"{self.given_name} {self.family_name}"

    @property
    def win_rate(self) -> Fraction:
        """Games won / games played, exactly; 0 when no game was played."""
        return Fraction(self.games_won, self.games_played) if self.games_played else Fraction(0)

    @property
    def win_percent(self) -> int:
        """The win rate in whole percent, halves rounded up (like JavaScript's ``Math.round``)."""
        return int(self.win_rate * 100 + Fraction(1, 2)) if self.games_played else 0

    def as_player(self) -> Player:
        """This player at a game table: named by full name (by username, or "Player", when that
        is not a valid player name), a bot for an AI player."""
        from nimlab.core.errors import NimlabError
        from nimlab.core.players import Player, parse_bot

        bot = None if self.bot is None else parse_bot(self.bot)
        for candidate in (self.full_name, self.username):
            try:
                return Player(Player.parse(f"human:{candidate}").name, bot)
            except NimlabError:
                continue
        return Player("Player", bot)

    def to_json(self) -> dict[str, Any]:
        return {
            "username": self.username,
            "given_name": self.given_name,
            "family_name": self.family_name,
            "ai": self.is_ai,
            "bot": self.bot,
            "games_played": self.games_played,
            "games_won": self.games_won,
            "win_percent": self.win_percent,
        }


PLAYER_COLUMNS = "username, given_name, family_name, bot, games_played, games_won"


NO_LIMIT = 1 << 62
"""A row limit that means "all" (both databases bind it as a 64-bit integer)."""


def clamp_limit(limit: int | None) -> int:
    """A row limit both databases can bind: 0 to 2**62 (``None``, or a larger one, means
    "all")."""
    return NO_LIMIT if limit is None else min(max(limit, 0), NO_LIMIT)


def player_from_row(row: Sequence[Any]) -> PlayerRecord:
    return PlayerRecord(row[0], row[1], row[2], row[3], int(row[4]), int(row[5]))


def player_id(conn: Connection, username: str) -> int | None:
    """The row id of a registered username, inside a transaction; ``None`` if unknown."""
    row = conn.execute("SELECT id FROM players WHERE username = ?", (username,)).fetchone()
    return None if row is None else int(row[0])


def insert_player(
    conn: Connection, username: str, given: str, family: str, bot: str | None
) -> None:
    """Register a player inside a transaction (names already checked); raises
    :class:`PlayerExistsError`."""
    added = conn.execute(
        "INSERT INTO players (username, given_name, family_name, bot, created_at) "
        "VALUES (?, ?, ?, ?, ?) ON CONFLICT (username) DO NOTHING",
        (username, given, family, bot, now()),
    ).rowcount
    if added == 0:
        raise PlayerExistsError(f"player {username!r} already exists")


class Registry:
    """The players and their statistics in one database. Every method is one statement or one
    transaction; reads are O(players) at most, single lookups O(log players)."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def add_player(
        self, username: str, *, given: str, family: str, bot: str | None = None
    ) -> PlayerRecord:
        """Register a human (``bot=None``) or an AI player (``bot`` is its bot spec, e.g.
        ``"perfect"``). Raises :class:`PlayerExistsError` or :class:`RegistryError` (also for a
        username starting with ``@``, which marks registered players on the command line)."""
        username = check_username(username)
        if username.startswith("@"):
            raise RegistryError(
                f"username {username!r}: @ marks a registered player (--player @USERNAME), so a "
                "username cannot start with it"
            )
        given, family = check_name(given, "given name"), check_name(family, "family name")
        with self._db.write() as conn:
            insert_player(conn, username, given, family, bot)
        return PlayerRecord(username, given, family, bot, 0, 0)

    def find_player(self, username: str) -> PlayerRecord | None:
        """The player with exactly this username (case matters), or ``None``."""
        row = self._db.one(
            f"SELECT {PLAYER_COLUMNS} FROM players WHERE username = ?", (username.strip(),)
        )
        return None if row is None else player_from_row(row)

    def get_player(self, username: str) -> PlayerRecord:
        """The player with this username; raises :class:`UnknownPlayerError`."""
        player = self.find_player(username)
        if player is None:
            raise UnknownPlayerError(username)
        return player

    def players(self, *, limit: int | None = None, offset: int = 0) -> list[PlayerRecord]:
        """Every player (or ``limit`` of them after the first ``offset``), sorted by username."""
        sql = f"SELECT {PLAYER_COLUMNS} FROM players ORDER BY username"
        if limit is None and offset <= 0:
            rows = self._db.rows(sql)
        else:
            page = (clamp_limit(limit), clamp_limit(max(0, offset)))
            rows = self._db.rows(sql + " LIMIT ? OFFSET ?", page)
        return [player_from_row(r) for r in rows]

    def remove_player(self, username: str) -> None:
        """Remove a player (their past games stay, with the name they had). Raises
        :class:`UnknownPlayerError`."""
        with self._db.write() as conn:
            cur = conn.execute("DELETE FROM players WHERE username = ?", (username.strip(),))
            if cur.rowcount == 0:
                raise UnknownPlayerError(username)

    def remove_all_players(self) -> int:
        """Remove every player; returns how many there were."""
        with self._db.write() as conn:
            return int(conn.execute("DELETE FROM players").rowcount)

    def edit_player(
        self, username: str, *, given: str | None = None, family: str | None = None
    ) -> PlayerRecord:
        """Change a player's given and/or family name. Raises :class:`UnknownPlayerError`."""
        new_given = None if given is None else check_name(given, "given name")
        new_family = None if family is None else check_name(family, "family name")
        with self._db.write() as conn:
            cur = conn.execute(
                "UPDATE players SET given_name = COALESCE(?, given_name), "
                "family_name = COALESCE(?, family_name) WHERE username = ?",
                (new_given, new_family, username.strip()),
            )
            if cur.rowcount == 0:
                raise UnknownPlayerError(username)
        return self.get_player(username)

    def reset_stats(self, username: str) -> None:
        """Set a player's games played and won to 0. Raises :class:`UnknownPlayerError`."""
        with self._db.write() as conn:
            cur = conn.execute(
                "UPDATE players SET games_played = 0, games_won = 0 WHERE username = ?",
                (username.strip(),),
            )
            if cur.rowcount == 0:
                raise UnknownPlayerError(username)

    def reset_all_stats(self) -> None:
        """Set every player's games played and won to 0."""
        with self._db.write() as conn:
            conn.execute("UPDATE players SET games_played = 0, games_won = 0")

    def rankings(self, *, ascending: bool = False, limit: int | None = 10) -> list[PlayerRecord]:
        """Players by win rate (a player with no games counts as 0 %), highest first or with
        ``ascending`` lowest first; ties by username. ``limit=None``: all."""
        order = "ASC" if ascending else "DESC"
        sql = (
            f"SELECT {PLAYER_COLUMNS} FROM players ORDER BY "
            "CASE WHEN games_played = 0 THEN 0.0 "
            "ELSE CAST(games_won AS DOUBLE PRECISION) / games_played END "
            f"{order}, username ASC"
        )
        params: tuple[int, ...] = ()
        if limit is not None:
            sql += " LIMIT ?"
            params = (clamp_limit(limit),)
        return [player_from_row(r) for r in self._db.rows(sql, params)]
