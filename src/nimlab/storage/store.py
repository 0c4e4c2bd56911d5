"""The SQLite store: the player registry with statistics, and finished game records.

Every SQL statement of nimlab lives in this package, so another database (PostgreSQL) can replace
SQLite by reimplementing :class:`Store`. Writes run in ``BEGIN IMMEDIATE`` transactions with a busy
timeout, the journal is in WAL mode, so several processes (shells, games, the web app) can share
one file; a game record and the statistics it changes are written in one transaction.

>>> with Store.open(":memory:") as store:
...     lee = store.add_player("lee", given="Bruce", family="Lee")
...     [p.username for p in store.rankings()]
['lee']
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import unicodedata
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from fractions import Fraction
from pathlib import Path
from types import TracebackType
from typing import Any

import platformdirs

from nimlab.core.errors import NimlabError
from nimlab.core.players import Player, normalize_text, parse_bot
from nimlab.core.record import GameRecord
from nimlab.storage.errors import (
    GameNotFoundError,
    PlayerExistsError,
    RecordError,
    RegistryError,
    StorageError,
    UnknownPlayerError,
)
from nimlab.storage.schema import migrate

__all__ = [
    "DB_ENV",
    "EXPORT_FORMAT",
    "GameSummary",
    "PlayerRecord",
    "Seat",
    "Store",
    "StoredGame",
    "check_name",
    "check_username",
    "default_db_path",
    "resolve_db_path",
]

DB_ENV = "NIMLAB_DB"
"""The environment variable that names the database file."""

EXPORT_FORMAT = "nimlab-games/1"
MAX_NAME = 40
BUSY_TIMEOUT_S = 30.0


def default_db_path() -> Path:
    """Where the database lives by default: ``nimlab.db`` in the user's data directory."""
    return Path(platformdirs.user_data_dir("nimlab", appauthor=False)) / "nimlab.db"


def resolve_db_path(path: str | os.PathLike[str] | None = None) -> Path | str:
    """The database to use: ``path`` if given, else ``$NIMLAB_DB``, else :func:`default_db_path`.
    ``":memory:"`` is passed through."""
    chosen = os.fspath(path) if path is not None else os.environ.get(DB_ENV) or None
    if chosen == ":memory:":
        return chosen
    return Path(chosen).expanduser() if chosen else default_db_path()


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def check_username(text: str) -> str:
    """A username as stored: 1 to 40 printable characters without commas, surrounding spaces
    removed, in Unicode NFKC form (so full-width ``ａnn`` is ``ann``). Raises
    :class:`RegistryError` saying what is allowed."""
    name = unicodedata.normalize("NFKC", text).strip()
    if not name or len(name) > MAX_NAME or not name.isprintable() or "," in name:
        raise RegistryError(
            f"username {text!r}: use 1 to {MAX_NAME} printable characters without commas"
        )
    return name


def check_name(text: str, what: str = "name") -> str:
    """A given or family name: 1 to 40 printable characters, no comma or colon, inner spaces
    collapsed, in Unicode NFKC form. Raises :class:`RegistryError`."""
    name = normalize_text(text)
    if not name or len(name) > MAX_NAME or not name.isprintable() or re.search(r"[,:]", name):
        raise RegistryError(
            f"{what} {text!r}: use 1 to {MAX_NAME} printable characters without commas or colons"
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
        """``"Given Family"``, as seed 003 shows it."""
        return f"{self.given_name} {self.family_name}"

    @property
    def win_rate(self) -> Fraction:
        """Games won / games played, exactly; 0 when no game was played."""
        return Fraction(self.games_won, self.games_played) if self.games_played else Fraction(0)

    @property
    def win_percent(self) -> int:
        """The win rate in whole percent, halves rounded up (seed 003's ``Math.round``)."""
        return int(self.win_rate * 100 + Fraction(1, 2)) if self.games_played else 0

    def as_player(self) -> Player:
        """This player at a game table: named by full name (by username, or "Player", when that
        is not a valid player name), a bot for an AI player."""
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


@dataclass(frozen=True, slots=True)
class Seat:
    """One seat of a stored game: the name shown, the registered username (if any), the result."""

    seat: int
    name: str
    username: str | None
    won: bool

    def to_json(self) -> dict[str, Any]:
        return {"seat": self.seat, "name": self.name, "username": self.username, "won": self.won}


@dataclass(frozen=True, slots=True)
class GameSummary:
    """A stored game without its moves."""

    id: int
    ruleset: str
    start: Any
    seats: tuple[Seat, ...]
    winner_seat: int | None
    move_count: int
    started_at: str
    finished_at: str
    source: str

    @property
    def winner(self) -> Seat | None:
        return None if self.winner_seat is None else self.seats[self.winner_seat]


@dataclass(frozen=True, slots=True)
class StoredGame:
    """A stored game with its full record (``Game.from_record`` replays it)."""

    summary: GameSummary
    record: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        """One entry of the export format."""
        s = self.summary
        return {
            "id": s.id,
            "source": s.source,
            "finished_at": s.finished_at,
            "seats": [seat.to_json() for seat in s.seats],
            "record": self.record,
        }


_PLAYER_COLUMNS = "username, given_name, family_name, bot, games_played, games_won"


def _player(row: sqlite3.Row | tuple[Any, ...]) -> PlayerRecord:
    return PlayerRecord(row[0], row[1], row[2], row[3], int(row[4]), int(row[5]))


class Store:
    """The database: players, statistics and game records. Use :meth:`open`; close it (or use it
    as a context manager) when done. One ``Store`` per thread."""

    def __init__(self, conn: sqlite3.Connection, path: Path | str) -> None:
        self._conn = conn
        self.path = path

    # -- opening ------------------------------------------------------------------------------

    @classmethod
    def open(cls, path: str | os.PathLike[str] | None = None) -> Store:
        """Open (creating and migrating as needed) the database at ``path``, ``$NIMLAB_DB`` or
        the default file. Raises :class:`StorageError` when that is impossible."""
        where = resolve_db_path(path)
        try:
            if isinstance(where, Path):
                if where.is_dir():
                    raise StorageError(f"database {str(where)!r} is a directory, not a file")
                where.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(
                where, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
            )
        except (OSError, sqlite3.Error) as e:
            raise StorageError(f"cannot open database {str(where)!r}: {e}") from None
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
            if where != ":memory:":
                conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = FULL")
            conn.execute("PRAGMA foreign_keys = ON")
            migrate(conn)
        except sqlite3.DatabaseError as e:
            conn.close()
            raise StorageError(f"cannot use database {str(where)!r}: {e}") from None
        except BaseException:
            conn.close()
            raise
        return cls(conn, where)

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction: all or nothing, serialised with other processes."""
        try:
            self._conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as e:
            raise StorageError(f"the database is busy or unwritable: {e}") from None
        try:
            yield self._conn
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise
        else:
            self._conn.execute("COMMIT")

    def integrity_check(self) -> str:
        """SQLite's own consistency check: ``"ok"`` for a sound file."""
        return str(self._conn.execute("PRAGMA integrity_check").fetchone()[0])

    # -- players ------------------------------------------------------------------------------

    def add_player(
        self, username: str, *, given: str, family: str, bot: str | None = None
    ) -> PlayerRecord:
        """Register a human (``bot=None``) or an AI player (``bot`` is its bot spec, e.g.
        ``"perfect"``). Raises :class:`PlayerExistsError` or :class:`RegistryError`."""
        username = check_username(username)
        given, family = check_name(given, "given name"), check_name(family, "family name")
        with self._write() as conn:
            try:
                conn.execute(
                    "INSERT INTO players (username, given_name, family_name, bot, created_at) "
                    "VALUES (?, ?, ?, ?, ?)",
                    (username, given, family, bot, _now()),
                )
            except sqlite3.IntegrityError:
                raise PlayerExistsError(f"player {username!r} already exists") from None
        return PlayerRecord(username, given, family, bot, 0, 0)

    def find_player(self, username: str) -> PlayerRecord | None:
        """The player with exactly this username (case matters), or ``None``."""
        row = self._conn.execute(
            f"SELECT {_PLAYER_COLUMNS} FROM players WHERE username = ?", (username.strip(),)
        ).fetchone()
        return None if row is None else _player(row)

    def get_player(self, username: str) -> PlayerRecord:
        """The player with this username; raises :class:`UnknownPlayerError`."""
        player = self.find_player(username)
        if player is None:
            raise UnknownPlayerError(username)
        return player

    def players(self) -> list[PlayerRecord]:
        """Every player, sorted by username."""
        rows = self._conn.execute(f"SELECT {_PLAYER_COLUMNS} FROM players ORDER BY username")
        return [_player(r) for r in rows]

    def remove_player(self, username: str) -> None:
        """Remove a player (their past games stay, with the name they had). Raises
        :class:`UnknownPlayerError`."""
        with self._write() as conn:
            if (
                conn.execute("DELETE FROM players WHERE username = ?", (username.strip(),)).rowcount
                == 0
            ):
                raise UnknownPlayerError(username)

    def remove_all_players(self) -> int:
        """Remove every player; returns how many there were."""
        with self._write() as conn:
            return int(conn.execute("DELETE FROM players").rowcount)

    def edit_player(
        self, username: str, *, given: str | None = None, family: str | None = None
    ) -> PlayerRecord:
        """Change a player's given and/or family name. Raises :class:`UnknownPlayerError`."""
        new_given = None if given is None else check_name(given, "given name")
        new_family = None if family is None else check_name(family, "family name")
        with self._write() as conn:
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
        with self._write() as conn:
            cur = conn.execute(
                "UPDATE players SET games_played = 0, games_won = 0 WHERE username = ?",
                (username.strip(),),
            )
            if cur.rowcount == 0:
                raise UnknownPlayerError(username)

    def reset_all_stats(self) -> None:
        """Set every player's games played and won to 0."""
        with self._write() as conn:
            conn.execute("UPDATE players SET games_played = 0, games_won = 0")

    def rankings(self, *, ascending: bool = False, limit: int | None = 10) -> list[PlayerRecord]:
        """Players by win rate (a player with no games counts as 0 %), highest first or with
        ``ascending`` lowest first; ties by username (seed 003's rules). ``limit=None``: all."""
        order = "ASC" if ascending else "DESC"
        sql = (
            f"SELECT {_PLAYER_COLUMNS} FROM players ORDER BY "
            f"CASE WHEN games_played = 0 THEN 0.0 ELSE CAST(games_won AS REAL) / games_played END "
            f"{order}, username ASC"
        )
        params: tuple[int, ...] = ()
        if limit is not None:
            sql += " LIMIT ?"
            params = (max(limit, 0),)
        return [_player(r) for r in self._conn.execute(sql, params)]

    # -- games --------------------------------------------------------------------------------

    def save_game(
        self,
        record: Mapping[str, Any],
        usernames: Sequence[str | None] = (),
        *,
        source: str = "play",
        update_stats: bool = True,
        finished_at: str | None = None,
    ) -> int:
        """Store a finished game (``Game.to_record()``) and, in the same transaction, add it to
        the statistics of its registered players: ``usernames[seat]`` is the username playing at
        that seat, or ``None``. Each registered seat counts one game played, and a win for the
        winner's seat. Returns the game's id. Raises :class:`RecordError` for an unfinished game
        or players that do not match, :class:`UnknownPlayerError` for an unregistered username;
        nothing is written then."""
        players, winner, moves = _check_record(record)
        names = [_seat_name(p) for p in players]
        seats = list(usernames) + [None] * (len(players) - len(usernames))
        if len(seats) != len(players):
            raise RecordError(
                f"the game has {len(players)} players but {len(usernames)} usernames were given"
            )
        start = json.dumps(record["start"])
        finished = finished_at or _now()
        with self._write() as conn:
            ids: list[int | None] = []
            for username in seats:
                if username is None:
                    ids.append(None)
                    continue
                row = conn.execute(
                    "SELECT id FROM players WHERE username = ?", (username,)
                ).fetchone()
                if row is None:
                    raise UnknownPlayerError(username)
                ids.append(int(row[0]))
            game_id = conn.execute(
                "INSERT INTO games (ruleset, start, winner_seat, move_count, started_at, "
                "finished_at, source, record) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    str(record["ruleset"]),
                    start,
                    winner,
                    moves,
                    str(record.get("started_at") or finished),
                    finished,
                    source,
                    json.dumps(record),
                ),
            ).lastrowid
            assert game_id is not None
            for seat, (name, username, pid) in enumerate(zip(names, seats, ids, strict=True)):
                won = seat == winner
                conn.execute(
                    "INSERT INTO game_players (game_id, seat, name, username, player_id, won) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    (game_id, seat, name, username, pid, int(won)),
                )
                if pid is not None and update_stats:
                    conn.execute(
                        "UPDATE players SET games_played = games_played + 1, "
                        "games_won = games_won + ? WHERE id = ?",
                        (int(won), pid),
                    )
        return int(game_id)

    def games(self, *, username: str | None = None, limit: int | None = 20) -> list[GameSummary]:
        """Stored games, newest first; with ``username`` only that player's games."""
        sql = (
            "SELECT id, ruleset, start, winner_seat, move_count, started_at, finished_at, source "
            "FROM games"
        )
        params: list[Any] = []
        if username is not None:
            sql += " WHERE id IN (SELECT game_id FROM game_players WHERE username = ?)"
            params.append(username)
        sql += " ORDER BY id DESC"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(max(limit, 0))
        rows = self._conn.execute(sql, params).fetchall()
        seats = self._seats([int(r[0]) for r in rows])
        return [_summary(r, seats.get(int(r[0]), ())) for r in rows]

    def game_count(self) -> int:
        return int(self._conn.execute("SELECT COUNT(*) FROM games").fetchone()[0])

    def game(self, game_id: int) -> StoredGame:
        """One stored game with its record. Raises :class:`GameNotFoundError`."""
        row = self._conn.execute(
            "SELECT id, ruleset, start, winner_seat, move_count, started_at, finished_at, source, "
            "record FROM games WHERE id = ?",
            (game_id,),
        ).fetchone()
        if row is None:
            raise GameNotFoundError(f"there is no game #{game_id} (nimlab history lists the games)")
        seats = self._seats([game_id]).get(game_id, ())
        return StoredGame(_summary(row, seats), json.loads(row[8]))

    def export_games(self, ids: Sequence[int] | None = None) -> dict[str, Any]:
        """The export document: ``{"format": "nimlab-games/1", "games": [...]}``, oldest first;
        all games, or those with the given ids (raises :class:`GameNotFoundError`)."""
        if ids is None:
            ids = [int(r[0]) for r in self._conn.execute("SELECT id FROM games ORDER BY id")]
        return {"format": EXPORT_FORMAT, "games": [self.game(i).to_json() for i in ids]}

    def import_games(
        self, entries: Sequence[tuple[Mapping[str, Any], Sequence[Seat], str | None]]
    ) -> list[int]:
        """Store already-checked games, each as ``(record, seats, finished_at)``, as new games,
        all or none. Usernames are linked to registered players of that name, but statistics are
        not changed (they count the games played here). Returns the new ids."""
        ids: list[int] = []
        with self._write() as conn:
            for record, seats, finished_at in entries:
                players, winner, moves = _check_record(record)
                if len(seats) != len(players):
                    raise RecordError("the seats do not match the record's players")
                finished = finished_at or _now()
                game_id = conn.execute(
                    "INSERT INTO games (ruleset, start, winner_seat, move_count, started_at, "
                    "finished_at, source, record) VALUES (?, ?, ?, ?, ?, ?, 'import', ?)",
                    (
                        str(record["ruleset"]),
                        json.dumps(record["start"]),
                        winner,
                        moves,
                        str(record.get("started_at") or finished),
                        finished,
                        json.dumps(record),
                    ),
                ).lastrowid
                assert game_id is not None
                for seat in seats:
                    pid = None
                    if seat.username is not None:
                        row = conn.execute(
                            "SELECT id FROM players WHERE username = ?", (seat.username,)
                        ).fetchone()
                        pid = None if row is None else int(row[0])
                    conn.execute(
                        "INSERT INTO game_players (game_id, seat, name, username, player_id, won) "
                        "VALUES (?, ?, ?, ?, ?, ?)",
                        (
                            game_id,
                            seat.seat,
                            seat.name,
                            seat.username,
                            pid,
                            int(seat.seat == winner),
                        ),
                    )
                ids.append(int(game_id))
        return ids

    def _seats(self, game_ids: Sequence[int]) -> dict[int, tuple[Seat, ...]]:
        out: dict[int, list[Seat]] = {}
        if not game_ids:
            return {}
        for start in range(0, len(game_ids), 500):
            chunk = list(game_ids[start : start + 500])
            marks = ",".join("?" * len(chunk))
            rows = self._conn.execute(
                f"SELECT game_id, seat, name, username, won FROM game_players "
                f"WHERE game_id IN ({marks}) ORDER BY game_id, seat",
                chunk,
            )
            for gid, seat, name, username, won in rows:
                out.setdefault(int(gid), []).append(Seat(int(seat), name, username, bool(won)))
        return {k: tuple(v) for k, v in out.items()}

    # -- games in progress (the web app) ------------------------------------------------------

    def add_live_game(self, key: str, record: Mapping[str, Any], meta: Mapping[str, Any]) -> None:
        """Keep a game that has just begun (``Game.to_record()``; its moves, if any, are stored
        too) under ``key``, with the interface's own JSON data ``meta``. Raises
        :class:`RecordError` if ``key`` is taken."""
        moves = list(record.get("moves", []))
        begun = {**record, "moves": []}
        with self._write() as conn:
            try:
                conn.execute(
                    "INSERT INTO live_games (key, record, meta, created_at) VALUES (?, ?, ?, ?)",
                    (key, json.dumps(begun), json.dumps(meta), _now()),
                )
            except sqlite3.IntegrityError:
                raise RecordError(f"a game in progress already has the key {key!r}") from None
            _insert_live_moves(conn, key, 1, moves)

    def add_live_moves(self, batch: Sequence[tuple[str, int, Sequence[Mapping[str, Any]]]]) -> None:
        """Append moves to games in progress, all in one transaction (group commit): each item
        is ``(key, number of the first move, moves)``, moves as in ``Game.to_record()["moves"]``.
        Raises :class:`RecordError` (nothing written) for an unknown key or a move number that
        is already stored."""
        with self._write() as conn:
            for key, first, moves in batch:
                known = conn.execute("SELECT 1 FROM live_games WHERE key = ?", (key,)).fetchone()
                if known is None:
                    raise RecordError(f"no game in progress has the key {key!r}")
                try:
                    _insert_live_moves(conn, key, first, moves)
                except sqlite3.IntegrityError:
                    raise RecordError(f"game {key!r} already has move {first}") from None

    def live_games(self) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
        """Every game in progress as ``(key, record, meta)``, oldest first; each record has all
        its stored moves, ready for ``Game.from_record``."""
        games = self._conn.execute(
            "SELECT key, record, meta FROM live_games ORDER BY created_at, rowid"
        ).fetchall()
        out = []
        for key, record_text, meta_text in games:
            record = json.loads(record_text)
            record["moves"] = [
                {"seat": int(seat), "move": move, "at": at} | ({"claim": claim} if claim else {})
                for seat, move, claim, at in self._conn.execute(
                    "SELECT seat, move, claim, at FROM live_moves WHERE key = ? ORDER BY number",
                    (key,),
                )
            ]
            out.append((str(key), record, json.loads(meta_text)))
        return out

    def remove_live_game(self, key: str) -> bool:
        """Forget a game in progress (finished or abandoned); ``False`` if there was none."""
        with self._write() as conn:
            return bool(conn.execute("DELETE FROM live_games WHERE key = ?", (key,)).rowcount)


def _insert_live_moves(
    conn: sqlite3.Connection, key: str, first: int, moves: Sequence[Mapping[str, Any]]
) -> None:
    for number, move in enumerate(moves, first):
        conn.execute(
            "INSERT INTO live_moves (key, number, seat, move, claim, at) VALUES (?, ?, ?, ?, ?, ?)",
            (key, number, int(move["seat"]), str(move["move"]), move.get("claim"), str(move["at"])),
        )


def _summary(row: Sequence[Any], seats: tuple[Seat, ...]) -> GameSummary:
    return GameSummary(
        id=int(row[0]),
        ruleset=row[1],
        start=json.loads(row[2]),
        seats=seats,
        winner_seat=None if row[3] is None else int(row[3]),
        move_count=int(row[4]),
        started_at=row[5],
        finished_at=row[6],
        source=row[7],
    )


def _seat_name(spec: Any) -> str:
    """The name in a player spec (``human:Ann`` -> ``Ann``, ``bot:perfect:Hal`` -> ``Hal``)."""
    try:
        return Player.parse(str(spec)).name
    except NimlabError:
        return str(spec)


def _check_record(record: Mapping[str, Any]) -> tuple[list[Any], int | None, int]:
    """The players, winner seat and move count of a finished game record (checked once by
    :meth:`GameRecord.from_json <nimlab.core.record.GameRecord.from_json>`); raises
    RecordError."""
    try:
        checked = GameRecord.from_json(record)
    except NimlabError as e:
        raise RecordError(f"not a valid game record: {e}") from None
    if not checked.over:
        raise RecordError("only finished games are stored")
    return [str(p) for p in checked.players], checked.winner, len(checked.moves)
