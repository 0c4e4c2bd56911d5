"""Game records in and out as JSON: the export document ``{"format": "nimlab-games/1", "players":
[...], "games": [...]}`` written by :meth:`Store.export_games`, and its checked import."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from nimlab.core.errors import NimlabError
from nimlab.storage.archive import ending_of
from nimlab.storage.errors import RecordError, RegistryError
from nimlab.storage.store import (
    EXPORT_FORMAT,
    ImportResult,
    PlayerRecord,
    Seat,
    Store,
    check_name,
    check_username,
)

__all__ = ["import_document", "is_timestamp", "read_document", "read_players"]

ImportEntry = tuple[dict[str, Any], list[Seat], str | None, bool]
"""A game to import: its record, seats, when it finished, and whether it is private."""


def read_document(document: Any) -> list[ImportEntry]:
    """Check an export document: every game record must be well formed (``GameRecord``),
    replay move by move (``Game.from_record``) and be finished, or say how it stopped before
    its end (resigned, abandoned: its ``"ended"``). A bare list of game records
    (``Game.to_record()``) is accepted too. Returns the entries ready for
    :meth:`Store.import_games`; raises :class:`RecordError` naming the first bad game."""
    if isinstance(document, Mapping) and document.get("format") == EXPORT_FORMAT:
        games = document.get("games")
    elif isinstance(document, list):
        games = [{"record": g} for g in document]
    else:
        raise RecordError(
            f'not a nimlab export: expected {{"format": "{EXPORT_FORMAT}", "games": [...]}}'
        )
    if not isinstance(games, list):
        raise RecordError('the export\'s "games" must be a list')
    from nimlab.core.game import Game  # replaying needs the move rules, not storage itself

    entries: list[ImportEntry] = []
    for number, entry in enumerate(games, 1):
        if not isinstance(entry, Mapping) or not isinstance(entry.get("record"), Mapping):
            raise RecordError(f'game {number} of the file has no "record" object')
        record = dict(entry["record"])
        try:
            game = Game.from_record(record)
        except NimlabError as e:
            raise RecordError(f"game {number} of the file does not replay: {e}") from None
        try:
            ending = ending_of(record, len(game.players))
        except RecordError as e:
            raise RecordError(f"game {number} of the file: {e}") from None
        if not game.is_over and ending is None:
            raise RecordError(f"game {number} of the file is not finished")
        if game.is_over and ending is not None:
            raise RecordError(f"game {number} of the file was played to its end: no 'ended'")
        won = {game.winner_seat} if ending is None else set(ending.winners)
        seats_in = entry.get("seats") or []
        usernames: dict[int, str | None] = {}
        if isinstance(seats_in, list):
            for s in seats_in:
                if isinstance(s, Mapping) and isinstance(s.get("seat"), int):
                    name = s.get("username")
                    usernames[s["seat"]] = name if isinstance(name, str) else None
        seats = [Seat(i, p.name, usernames.get(i), i in won) for i, p in enumerate(game.players)]
        replayed = game.to_record()  # checked and normalised; start and move times are kept
        if ending is not None:
            replayed["ended"] = ending.to_json()
        finished = entry.get("finished_at")
        times = [("finished_at", finished), ("started_at", record.get("started_at"))]
        moves = record.get("moves")
        for i, move in enumerate(moves if isinstance(moves, list) else [], 1):
            if isinstance(move, Mapping):
                times.append((f'move {i}\'s "at"', move.get("at")))
        for what, value in times:
            if value not in (None, "") and not is_timestamp(value):
                raise RecordError(
                    f"game {number} of the file: {what} {str(value)[:40]!r} is not a time: "
                    "write an ISO 8601 date and time, e.g. 2024-05-01T12:00:00+00:00"
                )
        entries.append((replayed, seats, finished or None, entry.get("private") is True))
    return entries


def is_timestamp(value: Any) -> bool:
    """Whether ``value`` is a time as nimlab writes it: ISO 8601 text, a date and a time
    (``2024-05-01T12:00:00+00:00``; seconds' fractions and a missing offset are allowed)."""
    if not isinstance(value, str) or not 16 <= len(value) <= 40 or value[10] not in "Tt ":
        return False
    try:
        datetime.fromisoformat(value)
    except ValueError:
        return False
    return True


def read_players(document: Any) -> list[PlayerRecord]:
    """The players an export document names (its optional ``"players"`` list: username, given
    and family name, bot spec), checked like new registrations; statistics are not imported.
    Raises :class:`RecordError` naming the first bad entry."""
    if not isinstance(document, Mapping):
        return []
    entries = document.get("players") or []
    if not isinstance(entries, list):
        raise RecordError('the export\'s "players" must be a list')
    from nimlab.core.players import parse_bot

    out: list[PlayerRecord] = []
    for number, entry in enumerate(entries, 1):
        try:
            if not isinstance(entry, Mapping):
                raise RecordError("not an object")
            fields = [entry.get(k) for k in ("username", "given_name", "family_name")]
            if not all(isinstance(f, str) for f in fields):
                raise RecordError("username, given_name and family_name must be strings")
            username, given, family = (str(f) for f in fields)
            bot = entry.get("bot")
            if bot is not None:
                if not isinstance(bot, str):
                    raise RecordError("bot must be a bot spec or null")
                bot = str(parse_bot(bot))
            out.append(
                PlayerRecord(
                    check_username(username),
                    check_name(given, "given name"),
                    check_name(family, "family name"),
                    bot,
                    0,
                    0,
                )
            )
        except (RecordError, RegistryError, NimlabError) as e:
            raise RecordError(f"player {number} of the file: {e}") from None
    return out


def import_document(store: Store, document: Any) -> ImportResult:
    """Check and store every game of an export document, all or none, registering the players
    it names who are not registered yet. Games stored already (the same record) are not added
    again, so importing a file twice adds its games once."""
    entries = read_document(document)
    return store.import_games(entries, players=read_players(document))
