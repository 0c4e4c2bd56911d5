"""The archive: finished games, their seats and results, the history, export and import.

A finished game is stored with its full record (``Game.to_record()``, which replays it move by
move), its seats (the name shown, the registered username at the time) and its content hash
(:func:`~nimlab.storage.schema.record_hash`), which makes importing the same game twice add it
once.

A game stopped before its end is stored too when its record says how it ended (its ``"ended"``
object, see :class:`Ending`):

- **resigned**: the player who resigned loses and the other players still in the game win (with
  two players left: the other one, who is then the game's winner; with more, they share the win
  and the game has no single winner). The players' statistics count it like any finished game.
- **abandoned**: nobody wins and the players' statistics do not change (the game is kept for
  its replay only).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from nimlab.storage.backend import Connection
from nimlab.storage.connection import Database, now_stamp
from nimlab.storage.errors import GameNotFoundError, RecordError, RegistryError, UnknownPlayerError
from nimlab.storage.registry import (
    PLAYER_COLUMNS,
    PlayerRecord,
    check_name,
    check_username,
    clamp_limit,
    insert_player,
    now,
    player_from_row,
    player_id,
)
from nimlab.storage.schema import record_hash

__all__ = [
    "ENDINGS",
    "EXPORT_FORMAT",
    "Archive",
    "Ending",
    "GameSummary",
    "ImportResult",
    "Seat",
    "StoredGame",
    "check_record",
    "ending_of",
    "insert_game",
]

EXPORT_FORMAT = "nimlab-games/1"
"""The export document's format. Its optional ``"players"`` list names the registered players
of the exported games (username, names, bot; no statistics)."""

_MAX_ID = (1 << 63) - 1

ENDINGS = ("resigned", "abandoned")
"""How a game may stop before its end (the ``how`` of :class:`Ending`)."""


@dataclass(frozen=True, slots=True)
class Ending:
    """How a game stopped before its end, as its record's ``"ended"`` object
    ``{"how": "resigned", "seat": 1, "winners": [0]}``: ``how`` is one of :data:`ENDINGS`,
    ``seat`` the player who resigned or abandoned, ``winners`` the seats that win (resigned: the
    other players still in the game; abandoned: none)."""

    how: str
    seat: int
    winners: tuple[int, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"how": self.how, "seat": self.seat, "winners": list(self.winners)}


def ending_of(record: Mapping[str, Any], players: int) -> Ending | None:
    """The checked ``"ended"`` object of a record with ``players`` seats (``None`` when it has
    none); raises :class:`RecordError` saying what is wrong. O(players)."""
    raw = record.get("ended")
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise RecordError('a game record\'s "ended" must be an object {"how", "seat", "winners"}')
    how = raw.get("how")
    if how not in ENDINGS:
        raise RecordError(f'a game record\'s "ended" says how: one of {", ".join(ENDINGS)}')

    def seat(value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < players:
            raise RecordError(
                f'a game record\'s "ended" names seats 0 to {players - 1}, not {str(value)[:20]}'
            )
        return value

    who = seat(raw.get("seat"))
    winners_raw = raw.get("winners") or []
    if not isinstance(winners_raw, list) or len(winners_raw) >= players:
        raise RecordError('a game record\'s "ended" winners must be a list of other seats')
    winners = tuple(sorted({seat(w) for w in winners_raw}))
    if who in winners:
        raise RecordError("a player who resigned or abandoned a game does not win it")
    if how == "abandoned" and winners:
        raise RecordError("nobody wins an abandoned game")
    if how == "resigned" and not winners:
        raise RecordError("a resigned game has winners: the other players still in it")
    return Ending(str(how), who, winners)


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
    ending: str | None = None
    """``None`` for a game played to its end, else how it stopped (see :data:`ENDINGS`)."""
    private: bool = False
    """A game its players kept private (the web app's games not made public): not in the lists
    of the web app, and read there only with the key it had in play (or by the admin)."""

    @property
    def winner(self) -> Seat | None:
        return None if self.winner_seat is None else self.seats[self.winner_seat]


@dataclass(frozen=True, slots=True)
class StoredGame:
    """A stored game with its full record (``Game.from_record`` replays it)."""

    summary: GameSummary
    record: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        """One entry of the export format (``"private": true`` for a private game)."""
        s = self.summary
        out = {
            "id": s.id,
            "source": s.source,
            "finished_at": s.finished_at,
            "seats": [seat.to_json() for seat in s.seats],
            "record": self.record,
        }
        if s.private:
            out["private"] = True
        return out


@dataclass(frozen=True, slots=True)
class ImportResult:
    """What an import did: the ids of the games added, the ids of the games of the file that
    were stored already (same record), and the usernames it registered."""

    added: list[int] = field(default_factory=list)
    existing: list[int] = field(default_factory=list)
    players_added: list[str] = field(default_factory=list)


_SUMMARY_COLUMNS = (
    "id, ruleset, start, winner_seat, move_count, started_at, finished_at, source, ending, private"
)


def dumps(value: Any, what: str = "the game record") -> str:
    """JSON text for the database; raises :class:`RecordError` for what JSON cannot hold."""
    try:
        return json.dumps(value)
    except (TypeError, ValueError) as e:
        raise RecordError(f"{what} cannot be stored as JSON: {e}") from None


@dataclass(frozen=True, slots=True)
class CheckedRecord:
    """What the archive keeps of a record besides its text."""

    players: list[str]
    winner: int | None
    """The game's single winner (``None``: nobody, or several sharing a resigned game)."""
    winners: frozenset[int]
    moves: int
    ending: Ending | None
    start_text: str | None = None
    """The start's JSON text when the check made it already (else ``None``)."""


def check_record(record: Mapping[str, Any]) -> CheckedRecord:
    """The players (spec text), winners and move count of a finished game record, or of one
    that stopped before its end (its ``"ended"``, see :class:`Ending`), checked once by
    :meth:`GameRecord.from_json <nimlab.core.record.GameRecord.from_json>`; raises
    RecordError. O(size of the record).

    The common case (a record as ``Game.to_record()`` writes it, of a ruleset, start and
    players seen lately) takes a fast path that gives the same result: the ruleset, start and
    players are checked by ``GameRecord.from_json`` once per :data:`HEADER_CACHE_SIZE` recent
    combinations, the other fields by plain type and range checks; anything the fast path is
    not sure of is checked by ``GameRecord.from_json`` as a whole."""
    fast = _fast_check(record)
    start_text: str | None = None
    if fast is not None:
        players, winner, over, moves, start_text = fast
    else:
        from nimlab.core.errors import NimlabError
        from nimlab.core.record import GameRecord

        try:
            checked = GameRecord.from_json(record)
        except NimlabError as e:
            raise RecordError(f"not a valid game record: {e}") from None
        players = [str(p) for p in checked.players]
        winner, over, moves = checked.winner, checked.over, len(checked.moves)
    ending = ending_of(record, len(players))
    if ending is not None:
        if over:
            raise RecordError("a game played to its end cannot be resigned or abandoned")
        winners = frozenset(ending.winners)
        single = ending.winners[0] if len(ending.winners) == 1 else None
        return CheckedRecord(players, single, winners, moves, ending, start_text)
    if not over:
        raise RecordError("only finished games are stored (or resigned or abandoned ones)")
    if moves == 0:  # over with no move: its start position was already an end position
        raise RecordError(
            "a game whose start position is already an end position is not stored: "
            "it was over before anyone moved"
        )
    won = frozenset(() if winner is None else (winner,))
    return CheckedRecord(players, winner, won, moves, None, start_text)


HEADER_CACHE_SIZE = 256
"""Ruleset, start and players combinations whose check :func:`check_record` remembers (each at
most :data:`_HEADER_MAX_CHARS` characters and :data:`_HEADER_MAX_ITEMS` heaps or rows and
players: at most about 1 MB in all)."""

_HEADER_MAX_CHARS = 1024
_HEADER_MAX_ITEMS = 64

_Header = tuple[str, tuple[Any, ...], tuple[str, ...]]


def _header_key(record: dict[str, Any]) -> _Header | None:
    """The cache key of a record's ruleset, start and players; ``None`` when they are not of the
    plain kind the cache holds (exact ``str`` values and ``int`` heaps of at most 32 bits, few
    and short). O(heaps + players)."""
    ruleset, start, players = record.get("ruleset"), record.get("start"), record.get("players")
    if type(ruleset) is not str or type(players) is not list:
        return None
    chars = len(ruleset)
    if type(start) is list:
        if not all(type(h) is int and h.bit_length() <= 32 for h in start):
            return None
        shape: tuple[Any, ...] = ("heaps", *start)
    elif type(start) is dict and len(start) == 1 and type(rows := start.get("rows")) is list:
        if not all(type(r) is str for r in rows):
            return None
        chars += sum(len(r) for r in rows)
        shape = ("rows", *rows)
    else:
        return None
    if not all(type(p) is str for p in players):
        return None
    chars += sum(len(p) for p in players)
    if chars > _HEADER_MAX_CHARS or max(len(shape) - 1, len(players)) > _HEADER_MAX_ITEMS:
        return None
    return ruleset, shape, tuple(players)


@functools.lru_cache(maxsize=HEADER_CACHE_SIZE)
def _checked_header(
    ruleset: str, shape: tuple[Any, ...], players: tuple[str, ...]
) -> tuple[list[str], str]:
    """The players' spec text and the start's JSON text when a record of this ruleset, start
    and players (and nothing else) passes ``GameRecord.from_json``, else an empty list and
    text. O(heaps + players), cached."""
    from nimlab.core.errors import NimlabError
    from nimlab.core.record import RECORD_FORMAT, GameRecord

    start: Any = list(shape[1:]) if shape[0] == "heaps" else {"rows": list(shape[1:])}
    header = {
        "format": RECORD_FORMAT,
        "ruleset": ruleset,
        "start": start,
        "players": list(players),
        "first": 0,
        "moves": [],
    }
    try:
        checked = GameRecord.from_json(header)
    except NimlabError:
        return [], ""
    return [str(p) for p in checked.players], json.dumps(start)


@functools.cache
def _record_constants() -> tuple[str, int]:
    """The record format and the longest text of a record field (imported once, when first
    needed: the store does not load the game code until it checks a record)."""
    from nimlab.core.record import MAX_TEXT, RECORD_FORMAT

    return RECORD_FORMAT, MAX_TEXT


def _fast_check(
    record: Mapping[str, Any],
) -> tuple[list[str], int | None, bool, int, str] | None:
    """``(players, winner, over, moves)`` exactly as ``GameRecord.from_json`` would give them,
    and the JSON text of the start, for a plain record it surely accepts; ``None`` when unsure
    (the caller then asks ``GameRecord.from_json``, which says what is wrong). O(size of the
    record)."""
    record_format, max_text = _record_constants()
    if type(record) is not dict or record.get("format") != record_format:
        return None
    key = _header_key(record)
    if key is None:
        return None
    players, start_text = _checked_header(*key)
    n = len(players)
    if not n:
        return None
    first, seed, moves = record.get("first"), record.get("seed"), record.get("moves")
    if type(first) is not int or not 0 <= first < n or type(moves) is not list:
        return None
    if seed is not None and (type(seed) is not int or seed.bit_length() > 64):
        return None
    started_at = record.get("started_at") or ""
    if type(started_at) is not str or len(started_at) > max_text:
        return None
    seats = range(n)
    get = dict.get
    for move in moves:
        if type(move) is not dict:
            return None
        seat, text, at, claim = (
            get(move, "seat"),
            get(move, "move"),
            get(move, "at"),
            get(move, "claim"),
        )
        if type(seat) is not int or seat not in seats or type(text) is not str:
            return None
        if len(text) > max_text or (at and (type(at) is not str or len(at) > max_text)):
            return None  # a missing or empty time is the empty text
        if claim is not None and (type(claim) is not str or len(claim) > max_text):
            return None
    winner = record.get("winner")
    if winner is not None and (type(winner) is not int or not 0 <= winner < n):
        return None
    eliminated = record.get("eliminated") or []
    if type(eliminated) is not list or len(eliminated) > n:
        return None
    if not all(type(s) is int and 0 <= s < n for s in eliminated):
        return None
    over = record.get("over", False)
    if type(over) is not bool:
        return None
    return list(players), winner, over, len(moves), start_text


@functools.lru_cache(maxsize=1024)
def _cached_seat_name(spec: str) -> str:
    return _seat_name(spec)


def _seat_names(players: Sequence[str]) -> list[str]:
    """:func:`_seat_name` of each player, remembered for the last 1,024 short specs."""
    return [_cached_seat_name(p) if len(p) <= 256 else _seat_name(p) for p in players]


def _seat_name(spec: Any) -> str:
    """The name in a player spec (``human:Ann`` -> ``Ann``, ``bot:perfect:Hal`` -> ``Hal``)."""
    from nimlab.core.errors import NimlabError
    from nimlab.core.players import Player

    try:
        return Player.parse(str(spec)).name
    except NimlabError:
        return str(spec)


def insert_game(
    conn: Connection,
    record: Mapping[str, Any],
    usernames: Sequence[str | None] = (),
    *,
    source: str = "play",
    update_stats: bool = True,
    finished_at: str | None = None,
    unknown_players: str = "raise",
    private: bool = False,
) -> int:
    """Store a finished game inside the caller's write transaction (see
    :meth:`Archive.save_game`; a resigned or abandoned one as its ``"ended"`` says, see the
    module docstring). ``unknown_players``: ``"raise"`` an :class:`UnknownPlayerError` for an
    unregistered username, or ``"drop"`` it (the seat keeps only its name); ``private``: see
    :attr:`GameSummary.private`. Returns the new game's id. O(seats + size of the record)."""
    checked = check_record(record)
    players, winner, moves = checked.players, checked.winner, checked.moves
    if checked.ending is not None and checked.ending.how == "abandoned":
        update_stats = False  # nobody won or lost an abandoned game
    names = _seat_names(players)
    seats = list(usernames) + [None] * (len(players) - len(usernames))
    if len(seats) != len(players):
        raise RecordError(
            f"the game has {len(players)} players but {len(usernames)} usernames were given"
        )
    start = checked.start_text or dumps(record["start"], "the game's start")
    text = dumps(record)
    finished = finished_at or now_stamp()
    ids: list[int | None] = []
    for i, username in enumerate(seats):
        if username is None:
            ids.append(None)
            continue
        pid = player_id(conn, username)
        if pid is None:
            if unknown_players != "drop":
                raise UnknownPlayerError(username)
            seats[i] = None
        ids.append(pid)
    game_id = conn.execute(
        "INSERT INTO games (ruleset, start, winner_seat, move_count, started_at, "
        "finished_at, source, record, content_hash, ending, private) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
        (
            str(record["ruleset"]),
            start,
            winner,
            moves,
            str(record.get("started_at") or finished),
            finished,
            source,
            text,
            record_hash(record),
            None if checked.ending is None else checked.ending.how,
            int(private),
        ),
    ).fetchone()[0]
    winners = checked.winners
    rows = [
        (game_id, seat, name, username, pid, int(seat in winners))
        for seat, (name, username, pid) in enumerate(zip(names, seats, ids, strict=True))
    ]
    if rows:  # one statement for every seat (one round trip to a PostgreSQL server)
        conn.execute(
            "INSERT INTO game_players (game_id, seat, name, username, player_id, won) VALUES "
            + ", ".join(["(?, ?, ?, ?, ?, ?)"] * len(rows)),
            [value for row in rows for value in row],
        )
    if update_stats:
        for _, _, _, _, pid, won in rows:
            if pid is not None:
                conn.execute(
                    "UPDATE players SET games_played = games_played + 1, "
                    "games_won = games_won + ? WHERE id = ?",
                    (won, pid),
                )
    return int(game_id)


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
        ending=row[8],
        private=bool(row[9]),
    )


class Archive:
    """The finished games of one database."""

    def __init__(self, db: Database) -> None:
        self._db = db

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
        with self._db.write() as conn:
            return insert_game(
                conn,
                record,
                usernames,
                source=source,
                update_stats=update_stats,
                finished_at=finished_at,
            )

    def games(
        self,
        *,
        username: str | None = None,
        limit: int | None = 20,
        offset: int = 0,
        private: bool = True,
    ) -> list[GameSummary]:
        """Stored games, newest first, skipping the first ``offset``; with ``username`` only
        that player's games, without those their seat asked to delete
        (:meth:`request_delete`); ``private=False``: without the private games
        (:attr:`GameSummary.private`)."""
        sql = f"SELECT {_SUMMARY_COLUMNS} FROM games"
        params: list[Any] = []
        where = [] if private else ["private = 0"]
        if username is not None:
            where.append(
                "id IN (SELECT game_id FROM game_players WHERE username = ?1 AND NOT "
                "EXISTS (SELECT 1 FROM delete_requests d WHERE d.game_id = game_players.game_id "
                "AND d.seat = game_players.seat))"
            )
            params.append(username)
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY id DESC"
        if limit is not None or offset > 0:
            sql += f" LIMIT ?{len(params) + 1} OFFSET ?{len(params) + 2}"
            params += [clamp_limit(limit), clamp_limit(max(0, offset))]
        rows = self._db.rows(sql, params)
        seats = self._seats([int(r[0]) for r in rows])
        return [_summary(r, seats.get(int(r[0]), ())) for r in rows]

    def request_delete(self, game_id: int, seat: int, humans: Sequence[int]) -> bool:
        """Seat ``seat`` asks to delete stored game ``game_id`` whose human seats are ``humans``:
        the request is kept (its player's history no longer lists the game), and the game is
        deleted (:meth:`delete_game`) once every human seat asked. Returns whether it was
        deleted. Raises :class:`GameNotFoundError`. O(seats)."""
        with self._db.write() as conn:
            if conn.execute("SELECT 1 FROM games WHERE id = ?", (game_id,)).fetchone() is None:
                raise GameNotFoundError(
                    f"there is no game #{game_id} (nimlab history lists the games)"
                )
            conn.execute(
                "INSERT INTO delete_requests (game_id, seat) VALUES (?, ?) ON CONFLICT DO NOTHING",
                (game_id, seat),
            )
            asked = {
                int(r[0])
                for r in conn.execute(
                    "SELECT seat FROM delete_requests WHERE game_id = ?", (game_id,)
                )
            }
            if not set(humans) <= asked:
                return False
            _delete(conn, game_id)
        return True

    def game_count(self) -> int:
        """How many finished games are stored."""
        row = self._db.one("SELECT COUNT(*) FROM games")
        return 0 if row is None else int(row[0])

    def game(self, game_id: int) -> StoredGame:
        """One stored game with its record. Raises :class:`GameNotFoundError`."""
        row = None
        if 0 <= game_id <= _MAX_ID:
            row = self._db.one(
                f"SELECT {_SUMMARY_COLUMNS}, record FROM games WHERE id = ?", (game_id,)
            )
        if row is None:
            raise GameNotFoundError(f"there is no game #{game_id} (nimlab history lists the games)")
        seats = self._seats([game_id]).get(game_id, ())
        return StoredGame(_summary(row, seats), json.loads(row[10]))

    def delete_game(self, game_id: int) -> None:
        """Delete a finished game from the history (its seats with it). The players' statistics
        are not changed: they count the games played, and may have been reset since. Raises
        :class:`GameNotFoundError`."""
        with self._db.write() as conn:
            gone = 0
            if 0 <= game_id <= _MAX_ID:
                gone = _delete(conn, game_id)
            if not gone:
                raise GameNotFoundError(
                    f"there is no game #{game_id} (nimlab history lists the games)"
                )

    def export_games(self, ids: Sequence[int] | None = None) -> dict[str, Any]:
        """The export document ``{"format": "nimlab-games/1", "players": [...], "games":
        [...]}``, oldest first: all games, or those with the given ids (raises
        :class:`GameNotFoundError`). ``players`` lists the registered players who play in them,
        so an import can register them. O(games exported)."""
        if ids is None:
            ids = [int(r[0]) for r in self._db.rows("SELECT id FROM games ORDER BY id")]
        games = [self.game(i).to_json() for i in ids]
        usernames = sorted(
            {s["username"] for g in games for s in g["seats"] if s["username"] is not None}
        )
        players: list[dict[str, Any]] = []
        for start in range(0, len(usernames), 500):
            chunk = usernames[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for row in self._db.rows(
                f"SELECT {PLAYER_COLUMNS} FROM players WHERE username IN ({marks}) "
                "ORDER BY username",
                chunk,
            ):
                p = player_from_row(row)
                players.append(
                    {
                        "username": p.username,
                        "given_name": p.given_name,
                        "family_name": p.family_name,
                        "bot": p.bot,
                    }
                )
        return {"format": EXPORT_FORMAT, "players": players, "games": games}

    def import_games(
        self,
        entries: Sequence[tuple[Mapping[str, Any], Sequence[Seat], str | None, bool]],
        *,
        players: Sequence[PlayerRecord] = (),
    ) -> ImportResult:
        """Store already-checked games, each as ``(record, seats, finished_at, private)``, all
        or none (``private``: see :attr:`GameSummary.private`).
        A game whose record is stored already (same content hash: the same game, move for move
        and time for time) is not added again; importing a file twice adds nothing the second
        time. ``players`` not registered yet are registered first (with no games); seats are
        linked to registered players of their username. Statistics are not changed (they count
        the games played here). O(games + players + size of the records)."""
        result = ImportResult()
        with self._db.write() as conn:
            for p in players:
                username = check_username(p.username)
                if player_id(conn, username) is not None:
                    continue
                try:
                    given = check_name(p.given_name, "given name")
                    family = check_name(p.family_name, "family name")
                except RegistryError as e:
                    raise RecordError(f"player {username!r} of the file: {e}") from None
                insert_player(conn, username, given, family, p.bot)
                result.players_added.append(username)
            for record, seats, finished_at, private in entries:
                checked = check_record(record)
                winner, moves = checked.winner, checked.moves
                if len(seats) != len(checked.players):
                    raise RecordError("the seats do not match the record's players")
                digest = record_hash(record)
                row = conn.execute(
                    "SELECT id FROM games WHERE content_hash = ? ORDER BY id LIMIT 1", (digest,)
                ).fetchone()
                if row is not None:
                    result.existing.append(int(row[0]))
                    continue
                finished = finished_at or now()
                game_id = conn.execute(
                    "INSERT INTO games (ruleset, start, winner_seat, move_count, started_at, "
                    "finished_at, source, record, content_hash, ending, private) "
                    "VALUES (?, ?, ?, ?, ?, ?, 'import', ?, ?, ?, ?) RETURNING id",
                    (
                        str(record["ruleset"]),
                        dumps(record["start"], "the game's start"),
                        winner,
                        moves,
                        str(record.get("started_at") or finished),
                        finished,
                        dumps(record),
                        digest,
                        None if checked.ending is None else checked.ending.how,
                        int(private),
                    ),
                ).fetchone()[0]
                for seat in seats:
                    pid = None if seat.username is None else player_id(conn, seat.username)
                    conn.execute(
                        "INSERT INTO game_players (game_id, seat, name, username, player_id, won) "
                        "VALUES (?, ?, ?, ?, ?, ?)",
                        (
                            game_id,
                            seat.seat,
                            seat.name,
                            seat.username,
                            pid,
                            int(seat.seat in checked.winners),
                        ),
                    )
                result.added.append(int(game_id))
        return result

    def _seats(self, game_ids: Sequence[int]) -> dict[int, tuple[Seat, ...]]:
        out: dict[int, list[Seat]] = {}
        for start in range(0, len(game_ids), 500):
            chunk = list(game_ids[start : start + 500])
            marks = ",".join("?" * len(chunk))
            rows = self._db.rows(
                f"SELECT game_id, seat, name, username, won FROM game_players "
                f"WHERE game_id IN ({marks}) ORDER BY game_id, seat",
                chunk,
            )
            for gid, seat, name, username, won in rows:
                out.setdefault(int(gid), []).append(Seat(int(seat), name, username, bool(won)))
        return {k: tuple(v) for k, v in out.items()}


def _delete(conn: Connection, game_id: int) -> int:
    """Delete a stored game with its seats, its key in play and its delete requests; returns
    how many games were deleted (0 or 1)."""
    conn.execute("DELETE FROM finished_keys WHERE game_id = ?", (game_id,))
    conn.execute("DELETE FROM delete_requests WHERE game_id = ?", (game_id,))
    conn.execute("DELETE FROM game_players WHERE game_id = ?", (game_id,))
    return int(conn.execute("DELETE FROM games WHERE id = ?", (game_id,)).rowcount)
