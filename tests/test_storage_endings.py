"""Games stopped before their end in the archive (resigned: the others win; abandoned: nobody
wins, no statistics change), the key a game had in play leading to its stored game, take-backs
of stored moves, and the upgrade of a version-3 database."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from nimlab.core.game import Game
from nimlab.storage import (
    SCHEMA_VERSION,
    InPlayLimits,
    RecordError,
    StaleGameError,
    Store,
    TooManyGamesInPlayError,
    import_document,
    takebacks_of,
)
from nimlab.storage.schema import MIGRATIONS, _statements
from schemas import back_to_version


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "nimlab.db"


@pytest.fixture
def store(database: str) -> Iterator[Store]:
    """A store with three players, on SQLite and on PostgreSQL."""
    with Store.open(database) as s:
        s.add_player("ann", given="Ann", family="A")
        s.add_player("bob", given="Bob", family="B")
        s.add_player("cy", given="Cy", family="C")
        yield s


def in_play(store: Store, key: str, players: list[str], moves: int = 1) -> Game:
    game = Game("nim", [3, 4, 5], players, seed=1)
    store.add_live_game(key, game.to_record(), {"tokens": {"0": "h"}})
    for _ in range(moves):
        game.push("1 1")
    store.add_live_moves([(key, 1, game.to_record()["moves"])])
    return game


def stopped(game: Game, how: str, seat: int, winners: list[int]) -> dict[str, Any]:
    record = game.to_record()
    record["ended"] = {"how": how, "seat": seat, "winners": winners}
    return record


def test_a_resigned_game_is_stored_with_the_other_player_as_winner(store: Store) -> None:
    game = in_play(store, "k1", ["human:Ann", "human:Bob"])
    gid = store.finish_live_game("k1", stopped(game, "resigned", 1, [0]), ["ann", "bob"])
    summary = store.game(gid).summary
    assert summary.ending == "resigned" and summary.winner_seat == 0
    assert [s.won for s in summary.seats] == [True, False]
    ann, bob = store.get_player("ann"), store.get_player("bob")
    assert (ann.games_played, ann.games_won) == (1, 1)
    assert (bob.games_played, bob.games_won) == (1, 0)
    assert store.finished_game("k1") == (gid, {"tokens": {"0": "h"}})
    assert store.live_games() == []
    assert store.games()[0].ending == "resigned"


def test_with_three_players_the_others_share_the_win(store: Store) -> None:
    game = in_play(store, "k3", ["human:Ann", "human:Bob", "human:Cy"])
    gid = store.finish_live_game("k3", stopped(game, "resigned", 2, [0, 1]), ["ann", "bob", "cy"])
    summary = store.game(gid).summary
    assert summary.winner_seat is None  # no single winner
    assert [s.won for s in summary.seats] == [True, True, False]
    assert [store.get_player(u).games_won for u in ("ann", "bob", "cy")] == [1, 1, 0]


def test_an_abandoned_game_has_no_winner_and_changes_no_statistics(store: Store) -> None:
    game = in_play(store, "k2", ["human:Ann", "human:Bob"])
    gid = store.finish_live_game("k2", stopped(game, "abandoned", 0, []), ["ann", "bob"])
    summary = store.game(gid).summary
    assert summary.ending == "abandoned" and summary.winner_seat is None
    assert not any(s.won for s in summary.seats)
    assert store.get_player("ann").games_played == 0
    assert store.get_player("bob").games_played == 0
    assert store.finished_game("k2") == (gid, {"tokens": {"0": "h"}})


@pytest.mark.parametrize(
    ("ended", "message"),
    [
        ({"how": "lost", "seat": 0, "winners": [1]}, "says how"),
        ({"how": "resigned", "seat": 0, "winners": [0]}, "does not win"),
        ({"how": "resigned", "seat": 0, "winners": []}, "has winners"),
        ({"how": "abandoned", "seat": 0, "winners": [1]}, "nobody wins"),
        ({"how": "resigned", "seat": 5, "winners": [1]}, "seats 0 to 1"),
        ({"how": "resigned", "seat": True, "winners": [1]}, "seats 0 to 1"),
        ("resigned", "must be an object"),
    ],
)
def test_a_bad_ending_is_refused_and_nothing_is_written(
    store: Store, ended: Any, message: str
) -> None:
    game = in_play(store, "kb", ["human:Ann", "human:Bob"])
    record = game.to_record()
    record["ended"] = ended
    with pytest.raises(RecordError, match=message):
        store.finish_live_game("kb", record, ["ann", "bob"])
    assert store.game_count() == 0 and store.finished_game("kb") is None
    assert [k for k, _, _ in store.live_games()] == ["kb"]


def test_an_unfinished_game_without_an_ending_and_a_finished_one_with_one_are_refused(
    store: Store,
) -> None:
    game = in_play(store, "ku", ["human:Ann", "human:Bob"])
    with pytest.raises(RecordError, match="only finished games"):
        store.finish_live_game("ku", game.to_record(), [])
    done = Game("nim", [1], ["human:Ann", "human:Bob"])
    done.push("1 1")
    record = done.to_record()
    record["ended"] = {"how": "abandoned", "seat": 0, "winners": []}
    with pytest.raises(RecordError, match="played to its end"):
        store.save_game(record)


def test_deleting_the_stored_game_forgets_its_key(store: Store) -> None:
    game = in_play(store, "kd", ["human:Ann", "human:Bob"])
    gid = store.finish_live_game("kd", stopped(game, "abandoned", 0, []))
    store.delete_game(gid)
    assert store.finished_game("kd") is None and store.finished_game("never") is None


def test_stopped_games_export_and_import_with_their_ending(store: Store, tmp_path: Path) -> None:
    game = in_play(store, "ke", ["human:Ann", "human:Bob"])
    store.finish_live_game("ke", stopped(game, "resigned", 0, [1]), ["ann", "bob"])
    document = store.export_games()
    with Store.open(tmp_path / "other.db") as other:
        result = import_document(other, document)
        [gid] = result.added
        summary = other.game(gid).summary
        assert summary.ending == "resigned" and summary.winner_seat == 1
        assert [s.won for s in summary.seats] == [False, True]
        assert other.game(gid).record["ended"] == {"how": "resigned", "seat": 0, "winners": [1]}
        assert import_document(other, document).existing == [gid]  # once only
    document["games"][0]["record"]["ended"] = {"how": "abandoned", "seat": 9, "winners": []}
    with Store.open(tmp_path / "third.db") as third, pytest.raises(RecordError, match="game 1"):
        import_document(third, document)


def test_take_back_forgets_the_later_stored_moves(store: Store) -> None:
    in_play(store, "kt", ["human:Ann", "bot:perfect:Hal"], moves=3)
    assert store.take_back_live_moves("kt", 1) == 2
    entry = store.live_game("kt")
    assert entry is not None and len(entry[1]["moves"]) == 1
    store.add_live_moves([("kt", 2, [{"seat": 1, "move": "1 1", "at": "t"}])])  # goes on
    with pytest.raises(RecordError, match="no game in progress"):
        store.take_back_live_moves("nope", 0)
    with pytest.raises(RecordError, match="0 or more"):
        store.take_back_live_moves("kt", -1)


def _takebacks(store: Store, key: str) -> int:
    found = store.live_game_with_version(key)
    assert found is not None
    return takebacks_of(found[0][2])


def test_take_backs_are_counted_with_the_game_and_kept_when_it_finishes(store: Store) -> None:
    """Every process reading the game sees the same count (it was one process's memory)."""
    game = in_play(store, "kc", ["human:Ann", "bot:perfect:Hal"], moves=3)
    assert _takebacks(store, "kc") == 0
    store.take_back_live_moves("kc", 1)
    assert _takebacks(store, "kc") == 1
    version = store.live_version("kc")
    assert version is not None
    store.take_back_live_moves("kc", 0, expect=version)
    with pytest.raises(StaleGameError):  # a refused take-back is not counted
        store.take_back_live_moves("kc", 0, expect=version)
    assert _takebacks(store, "kc") == 2
    for _ in range(3):
        game.pop()
    gid = store.finish_live_game("kc", stopped(game, "abandoned", 0, []), ["ann"])
    # the rest of the game's data is kept as it was
    assert store.finished_game("kc") == (gid, {"tokens": {"0": "h"}, "takebacks": 2})
    assert [takebacks_of({"takebacks": v}) for v in (3, -1, "2", True, None)] == [3, 0, 0, 0, 0]


def test_a_version_3_database_is_upgraded_and_keeps_its_games(db: Path) -> None:
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
    conn.execute("INSERT INTO schema_version (version) VALUES (3)")
    for step in MIGRATIONS[:3]:
        if isinstance(step, str):
            for statement in _statements(step):
                conn.execute(statement)
        else:
            step(conn)
    done = Game("nim", [1], ["human:Ann", "human:Bob"])
    done.push("1 1")
    conn.execute(
        "INSERT INTO games (ruleset, start, winner_seat, move_count, started_at, finished_at, "
        "source, record) VALUES ('nim', '[1]', 0, 1, 'a', 'b', 'play', ?)",
        (json.dumps(done.to_record()),),
    )
    conn.close()
    with Store.open(db, upgrade=True) as store:  # (nimlab db migrate)
        assert store.integrity_check() == "ok"
        [summary] = store.games()
        assert summary.ending is None and summary.winner_seat == 0
        assert store.finished_game("x") is None
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT version FROM schema_version").fetchone()[0] == SCHEMA_VERSION == 10
    conn.close()


def test_public_games_in_play_are_listed_newest_first_a_page_at_a_time(store: Store) -> None:
    """Every process lists the same public games: the database's, newest first; a private game
    and a game that left the games in play are not listed."""
    begun = Game("nim", [3, 4, 5], ["human:Ann", "human:Bob"], seed=1).to_record()
    for key in ("p1", "x", "p2", "p3", "p4"):  # begun in this order
        store.add_live_game(key, begun, {}, public=key != "x")
    assert store.public_games_in_play(limit=10) == [("p4", 0), ("p3", 0), ("p2", 0), ("p1", 0)]
    game = in_play(store, "p5", ["human:Ann", "human:Bob"])  # not public
    assert [k for k, _ in store.public_games_in_play(limit=2, offset=1)] == ["p3", "p2"]
    store.add_live_moves([("p2", 1, game.to_record()["moves"])], expect={"p2": 0})
    store.finish_live_game("p3", stopped(game, "abandoned", 0, []))
    store.remove_live_game("p4")
    assert store.public_games_in_play(limit=10) == [("p2", 1), ("p1", 0)]
    assert store.public_games_in_play(limit=10, offset=2) == []


def test_a_version_7_database_keeps_its_private_web_games_private(db: Path) -> None:
    """Finished web games that were private in play (their data says so) become private; those
    made public, those from before the choice existed and every other game stay listed."""
    with Store.open(db) as store:
        for key, meta in (("pub", {"public": True}), ("priv", {"public": False}), ("old", {})):
            game = Game("nim", [1], ["human:Ann", "human:Bob"])
            store.add_live_game(key, game.to_record(), meta)
            game.push("1 1")
            store.finish_live_game(key, game.to_record())
        done = Game("nim", [1], ["human:Ann", "human:Bob"])
        done.push("1 1")
        store.save_game(done.to_record())
    with sqlite3.connect(db) as conn:
        back_to_version(conn, 7)
    with Store.open(db, upgrade=True) as store:  # (nimlab db migrate)
        private = {store.finished_game(k)[0] for k in ("priv",)}  # type: ignore[index]
        assert {g.id for g in store.games(limit=None) if g.private} == private
        assert len(store.games(limit=None)) == 4
        assert [g.id for g in store.games(limit=None, private=False)] == [4, 3, 1]
        assert store.game(2).summary.private and not store.game(1).summary.private
        document = store.export_games()
        assert [g.get("private", False) for g in document["games"]] == [False, True, False, False]
    fresh = db.with_name("copy.db")
    with Store.open(fresh) as store:  # an export keeps a private game private
        assert len(import_document(store, document).added) == 4
        assert [g.private for g in store.games(limit=None)] == [False, False, True, False]


def test_a_version_6_database_keeps_its_public_games_listed(db: Path) -> None:
    begun = Game("nim", [3], ["human:Ann", "human:Bob"]).to_record()
    with Store.open(db) as store:  # as version 6 stored them: public only in the web's data
        store.add_live_game("pub", begun, {"public": True})
        store.add_live_game("priv", begun, {"public": False})
        store.add_live_game("old", begun, {})
    with sqlite3.connect(db) as conn:
        back_to_version(conn, 6)
    with Store.open(db, upgrade=True) as store:
        assert store.public_games_in_play(limit=10) == [("pub", 0)]


def test_a_version_8_database_counts_its_games_in_play_by_network_from_then_on(db: Path) -> None:
    """Version 9 adds the shared rate limits and counts, and the network of each game in play:
    the games in play from before keep counting for their client (they have no network), the
    new ones for their network too."""
    begun = Game("nim", [3], ["human:Ann", "human:Bob"]).to_record()
    with Store.open(db) as store:
        store.add_live_game("old", begun, {}, client="10.0.0.1")
    with sqlite3.connect(db) as conn:
        back_to_version(conn, 8)
    limits = InPlayLimits(max_per_client=1, max_per_network=1)
    with Store.open(db, upgrade=True, limits=limits) as store:  # (nimlab db migrate)
        assert store.db.problems() == []
        with pytest.raises(TooManyGamesInPlayError, match="you have 1 games"):
            store.add_live_game("again", begun, {}, client="10.0.0.1", network="10.0.0.0/24")
        store.add_live_game("new", begun, {}, client="10.0.0.2", network="10.0.0.0/24")
        with pytest.raises(TooManyGamesInPlayError, match="your network"):
            store.add_live_game("third", begun, {}, client="10.0.0.3", network="10.0.0.0/24")
        assert store.db.one("SELECT COUNT(*) FROM rate_buckets") == (0,)
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT version FROM schema_version").fetchone()[0] == SCHEMA_VERSION
    conn.close()
