"""Game records: the typed, validated form of the JSON that replays a game exactly.

A record is JSON of format ``nimlab-game/1`` (what ``Game.to_record()`` writes and storage keeps):

``{"format": "nimlab-game/1", "ruleset": "kayles misere", "start": {"rows": ["***"]} or
[3, 4, 5], "players": ["human:Ann", "bot:perfect:Hal"], "first": 0, "seed": 7,
"started_at": "2024-01-01T00:00:00+00:00", "moves": [{"seat": 0, "move": "1 2", "at": "...",
"claim": "..."}], "winner": 1, "eliminated": [], "over": true}``

:meth:`GameRecord.from_json` checks it once, whatever it is given (wrong types, missing keys,
deeply nested values, huge numbers), and raises :class:`~nimlab.core.errors.RulesetError`,
:class:`~nimlab.core.errors.PlayerError` or :class:`~nimlab.core.errors.PositionError` with a
message that says what is wrong. Whether the moves are legal is checked by replaying them
(``Game.from_record``). Cost: linear in the size of the record.

>>> record = GameRecord.from_json({"format": "nimlab-game/1", "ruleset": "nim",
...     "start": [1, 2], "players": ["human:Ann", "bot:perfect:Hal"], "first": 0,
...     "moves": [{"seat": 0, "move": "2 1"}]})
>>> record.players[1].name, record.moves[0].move, record.over
('Hal', '2 1', False)
>>> GameRecord.from_json(record.to_json()) == record
True
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from nimlab.core.errors import NimlabError, PlayerError, PositionError, RulesetError
from nimlab.core.players import Player
from nimlab.core.position import Board, Position, Rows
from nimlab.core.ruleset import MAX_PLAYERS, Ruleset

__all__ = ["MAX_PLAYERS", "RECORD_FORMAT", "GameRecord", "RecordedMove"]

RECORD_FORMAT = "nimlab-game/1"
MAX_TEXT = 10_000
"""The longest text field of a record (ruleset, player spec, move, claim, time stamp)."""
MAX_ROW = 1_000_000
"""The longest row of stones in a record's start position."""
_SEED_BITS = 64


def _show(value: Any) -> str:
    """A short, safe description of a JSON value for messages (never a huge or deep repr)."""
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, str):
        return repr(value[:40] + "…") if len(value) > 40 else repr(value)
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        return "a number too large"
    return repr(value)


def _text(value: Any, what: str, *, error: type[NimlabError] = PositionError) -> str:
    if not isinstance(value, str):
        raise error(f"the game record's {what} must be text, not {_show(value)}")
    if len(value) > MAX_TEXT:
        raise error(f"the game record's {what} is longer than {MAX_TEXT:,} characters")
    return value


def _seat(value: Any, what: str, players: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < players:
        raise PositionError(
            f"the game record's {what} must be a seat number 0 to {players - 1}, not {_show(value)}"
        )
    return value


@dataclass(frozen=True, slots=True)
class RecordedMove:
    """One move of a record: the seat that moved, the move's text, when, and the bot's claim."""

    seat: int
    move: str
    at: str = ""
    claim: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"seat": self.seat, "move": self.move, "at": self.at}
        if self.claim:
            out["claim"] = self.claim
        return out


@dataclass(frozen=True, slots=True)
class GameRecord:
    """A game record, checked: typed ruleset, start board and players; moves as text (their
    legality is checked when the game is replayed). ``winner``, ``eliminated`` and ``over`` are
    what the recording game said at the end (replaying recomputes them)."""

    ruleset: Ruleset
    start: Board
    players: tuple[Player, ...]
    first: int = 0
    seed: int | None = None
    started_at: str = ""
    moves: tuple[RecordedMove, ...] = ()
    winner: int | None = None
    eliminated: tuple[int, ...] = ()
    over: bool = False

    FORMAT: ClassVar[str] = RECORD_FORMAT

    # -- JSON ---------------------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        """The record as JSON-ready values (the format :meth:`from_json` reads)."""
        return {
            "format": RECORD_FORMAT,
            "ruleset": str(self.ruleset),
            "start": {"rows": self.start.to_json()}
            if isinstance(self.start, Rows)
            else self.start.to_json(),
            "players": [str(p) for p in self.players],
            "first": self.first,
            "seed": self.seed,
            "started_at": self.started_at,
            "moves": [m.to_json() for m in self.moves],
            "winner": self.winner,
            "eliminated": list(self.eliminated),
            "over": self.over,
        }

    @classmethod
    def from_json(cls, obj: Any) -> GameRecord:
        """Check a record read from JSON. Raises :class:`RulesetError` (the ruleset),
        :class:`PlayerError` (the players) or :class:`PositionError` (anything else: not a
        record, missing keys, wrong types, the start position, seats out of range)."""
        if isinstance(obj, GameRecord):
            return obj
        if not isinstance(obj, Mapping) or obj.get("format") != RECORD_FORMAT:
            raise PositionError(f"not a nimlab game record (expected format {RECORD_FORMAT!r})")
        missing = [k for k in ("ruleset", "start", "players", "first", "moves") if k not in obj]
        if missing:
            raise PositionError(
                "incomplete game record: it has no " + ", ".join(repr(k) for k in missing)
            )
        ruleset = Ruleset.parse(_text(obj["ruleset"], "ruleset", error=RulesetError))
        start = _start(obj["start"], ruleset)
        players = _players(obj["players"])
        n = len(players)
        first = _seat(obj["first"], "first player", n)
        seed = obj.get("seed")
        if seed is not None and (
            isinstance(seed, bool) or not isinstance(seed, int) or seed.bit_length() > _SEED_BITS
        ):
            raise PositionError(
                f"the game record's seed must be a whole number below 2**64, not {_show(seed)}"
            )
        started_at = obj.get("started_at") or ""
        started_at = _text(started_at, "start time")
        moves_raw = obj["moves"]
        if not isinstance(moves_raw, list):
            raise PositionError(f"the game record's moves must be a list, not {_show(moves_raw)}")
        moves = tuple(_move(m, i, n) for i, m in enumerate(moves_raw, 1))
        winner = obj.get("winner")
        if winner is not None:
            winner = _seat(winner, "winner", n)
        eliminated_raw = obj.get("eliminated") or []
        if not isinstance(eliminated_raw, list) or len(eliminated_raw) > n:
            raise PositionError("the game record's eliminated players must be a list of seats")
        eliminated = tuple(_seat(s, "eliminated player", n) for s in eliminated_raw)
        over = obj.get("over", False)
        if not isinstance(over, bool):
            raise PositionError(
                f"the game record's 'over' must be true or false, not {_show(over)}"
            )
        return cls(
            ruleset, start, players, first, seed, started_at, moves, winner, eliminated, over
        )


def _start(raw: Any, ruleset: Ruleset) -> Board:
    """The start board: a list of heap sizes, or ``{"rows": ["**x*", ...]}`` for games that
    split heaps."""
    if isinstance(raw, Mapping):
        rows = raw.get("rows")
        if not isinstance(rows, list) or not all(isinstance(r, str) for r in rows):
            raise PositionError(
                'the game record\'s start must be {"rows": ["**x*", ...]} or a list of heap sizes'
            )
        if sum(len(r) for r in rows) > MAX_ROW:
            raise PositionError(f"the game record's rows have more than {MAX_ROW:,} stones")
        board: Board = Rows.from_strings(rows)
    elif isinstance(raw, list):
        for h in raw:
            if isinstance(h, bool) or not isinstance(h, int) or h < 0:
                raise PositionError(
                    f"the game record's heap sizes must be whole numbers 0 or more, not {_show(h)}"
                )
        board = Position.of(raw)
    else:
        raise PositionError(
            f"the game record's start must be a list of heap sizes, not {_show(raw)}"
        )
    if ruleset.rules.splits != isinstance(board, Rows):
        raise PositionError(
            "the game record's start does not fit its game: "
            + (
                "it is played on rows of stones"
                if ruleset.rules.splits
                else "it is played on piles"
            )
        )
    return ruleset.rules.as_board(board)


def _players(raw: Any) -> tuple[Player, ...]:
    if not isinstance(raw, list):
        raise PlayerError(f"the game record's players must be a list, not {_show(raw)}")
    if not 2 <= len(raw) <= MAX_PLAYERS:
        raise PlayerError(f"a game record has 2 to {MAX_PLAYERS} players, not {len(raw)}")
    return tuple(
        Player.parse(_text(p, f"player {i}", error=PlayerError)) for i, p in enumerate(raw, 1)
    )


def _move(raw: Any, number: int, players: int) -> RecordedMove:
    if not isinstance(raw, Mapping):
        raise PositionError(f"move {number} of the game record must be an object, not {_show(raw)}")
    if "seat" not in raw or "move" not in raw:
        raise PositionError(f"incomplete game record: move {number} needs 'seat' and 'move'")
    seat = _seat(raw["seat"], f"move {number}'s seat", players)
    text = _text(raw["move"], f"move {number}")
    at = _text(raw.get("at") or "", f"move {number}'s time")
    claim = raw.get("claim")
    if claim is not None:
        claim = _text(claim, f"move {number}'s claim")
    return RecordedMove(seat, text, at, claim or None)
