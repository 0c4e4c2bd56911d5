"""The store: registry, statistics, rankings, game records, schema versions, and what happens
with several processes, restarts and kills. Every test uses its own database: the tests that
take ``database`` run on SQLite and on PostgreSQL."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from nimlab.core.game import Game
from nimlab.storage import (
    SCHEMA_VERSION,
    GameNotFoundError,
    PlayerExistsError,
    RecordError,
    RegistryError,
    StorageError,
    Store,
    UnknownPlayerError,
    default_db_path,
    import_document,
    read_document,
    resolve_db_path,
)
from processes import PATIENCE, read_until


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "nimlab.db"


def finished_game(
    players: tuple[str, str] = ("human:Ann", "bot:perfect:Hal"), winner_first: bool = True
) -> Game:
    """A finished Nim game on [1]: the first player wins by taking the single object, or (with
    ``winner_first=False``) on [2] misère where taking both loses."""
    if winner_first:
        game = Game("nim", [1], players, seed=1)
        game.push("1 1")
    else:
        game = Game("nim misere", [2], players, seed=1)
        game.push("1 2")
    assert game.is_over
    return game


# -- paths ----------------------------------------------------------------------------------------


def test_db_path_resolution(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("NIMLAB_DB", raising=False)
    assert resolve_db_path() == default_db_path()
    assert default_db_path().name == "nimlab.db"
    monkeypatch.setenv("NIMLAB_DB", str(tmp_path / "env.db"))
    assert resolve_db_path() == tmp_path / "env.db"
    assert resolve_db_path(tmp_path / "arg.db") == tmp_path / "arg.db"
    assert resolve_db_path(":memory:") == ":memory:"


def test_open_creates_directories_and_wal(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "x.db"
    with Store.open(path) as store:
        assert store.integrity_check() == "ok"
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("SELECT version FROM schema_version").fetchone()[0] == SCHEMA_VERSION


def test_a_new_file_another_connection_writes_to_is_opened_once_it_is_done(
    tmp_path: Path,
) -> None:
    """Two servers started together on a new SQLite file: while one writes to it (not in WAL
    mode yet), the other's switch to WAL mode, which SQLite does not wait for, is tried again
    until it can be made (it said "database is locked" at once, and that server ended)."""
    import threading

    path = tmp_path / "new.db"
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("CREATE TABLE t (x)")
    writer.execute("BEGIN IMMEDIATE")
    writer.execute("INSERT INTO t VALUES (1)")
    opened: list[object] = []
    other = threading.Thread(target=lambda: opened.append(Store.open(path)))
    other.start()
    other.join(0.3)
    assert other.is_alive() and not opened  # waiting, not refused
    writer.execute("COMMIT")
    other.join(30)
    assert len(opened) == 1 and isinstance(opened[0], Store)
    opened[0].close()
    writer.close()


def test_unusable_files(tmp_path: Path) -> None:
    with pytest.raises(StorageError, match="directory"):
        Store.open(tmp_path)
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StorageError, match="cannot use database"):
        Store.open(junk)


# -- schema versions ------------------------------------------------------------------------------


def test_migrations_are_idempotent_and_versioned(database: str) -> None:
    Store.open(database).close()
    with Store.open(database) as store:
        store.add_player("lee", given="Bruce", family="Lee")
    with Store.open(database) as store:
        assert [p.username for p in store.players()] == ["lee"]
        assert store.db.one("SELECT COUNT(*), MAX(version) FROM schema_version") == (
            1,
            SCHEMA_VERSION,
        )


def test_newer_schema_is_refused(database: str) -> None:
    with Store.open(database) as store, store.db.write() as conn:
        conn.execute("UPDATE schema_version SET version = ?", (SCHEMA_VERSION + 1,))
    with pytest.raises(StorageError, match="newer"):
        Store.open(database)


# -- the registry ---------------------------------------------------------------------------------


def test_players_add_edit_remove(database: str) -> None:
    with Store.open(database) as store:
        store.add_player("lee", given="Bruce", family="Lee")
        store.add_player("deep", given="Deep", family="Blue", bot="perfect")
        with pytest.raises(PlayerExistsError):
            store.add_player("lee", given="Other", family="Person")
        assert store.find_player("Lee") is None  # usernames are case-sensitive
        assert [p.username for p in store.players()] == ["deep", "lee"]
        assert store.get_player("deep").is_ai and not store.get_player("lee").is_ai
        edited = store.edit_player("lee", given="Brucie")
        assert (edited.given_name, edited.family_name, edited.full_name) == (
            "Brucie",
            "Lee",
            "Brucie Lee",
        )
        store.edit_player("lee", family="Li")
        assert store.get_player("lee").full_name == "Brucie Li"
        with pytest.raises(UnknownPlayerError):
            store.edit_player("nobody", given="X")
        with pytest.raises(UnknownPlayerError):
            store.remove_player("nobody")
        with pytest.raises(UnknownPlayerError):
            store.reset_stats("nobody")
        store.remove_player("deep")
        assert [p.username for p in store.players()] == ["lee"]
        assert store.remove_all_players() == 1
        assert store.players() == []


@pytest.mark.parametrize(
    ("username", "given", "family"),
    [
        ("", "A", "B"),
        ("a,b", "A", "B"),
        ("x" * 41, "A", "B"),
        ("ok", "", "B"),
        ("ok", "A", "Smith, Jr"),
        ("ok", "A:B", "C"),
        ("ok", "A", "\x07"),
    ],
)
def test_bad_names_are_refused(database: str, username: str, given: str, family: str) -> None:
    with Store.open(database) as store:
        with pytest.raises(RegistryError):
            store.add_player(username, given=given, family=family)
        assert store.players() == []


def test_no_player_cap(database: str) -> None:
    with Store.open(database) as store:
        for i in range(150):
            store.add_player(f"p{i:03d}", given="P", family=str(i))
        assert len(store.players()) == 150


def test_as_player(database: str) -> None:
    with Store.open(database) as store:
        lee = store.add_player("lee", given="Bruce", family="Lee")
        deep = store.add_player("deep", given="Deep", family="Blue", bot="classic:error=10")
        long = store.add_player("long", given="G" * 30, family="F" * 30)
    assert (lee.as_player().name, lee.as_player().bot) == ("Bruce Lee", None)
    assert deep.as_player().bot is not None and str(deep.as_player().bot) == "classic:error=10"
    assert long.as_player().name == "long"


# -- statistics and rankings ----------------------------------------------------------------------


def _set_stats(db: str, stats: dict[str, tuple[int, int]]) -> None:
    with Store.open(db) as store, store.db.write() as conn:
        for username, (played, won) in stats.items():
            conn.execute(
                "UPDATE players SET games_played = ?, games_won = ? WHERE username = ?",
                (played, won, username),
            )


def test_rankings_follow_seed_003(database: str) -> None:
    stats = {
        "amy": (4, 2),
        "bob": (2, 1),
        "cat": (0, 0),
        "dan": (3, 3),
        "eve": (3, 0),
        "fay": (6, 4),
    }
    with Store.open(database) as store:
        for name in stats:
            store.add_player(name, given=name.title(), family="X")
    _set_stats(database, stats)
    with Store.open(database) as store:
        # highest first; ties (amy and bob at 50 %, cat and eve at 0 %) by username
        assert [p.username for p in store.rankings()] == ["dan", "fay", "amy", "bob", "cat", "eve"]
        assert [p.username for p in store.rankings(ascending=True)] == [
            "cat",
            "eve",
            "amy",
            "bob",
            "fay",
            "dan",
        ]
        assert [p.username for p in store.rankings(limit=2)] == ["dan", "fay"]
        fay = store.get_player("fay")
    assert fay.win_percent == 67  # 66.67 rounded
    assert store_percent(1, 8) == 13  # 12.5 rounds half up, like Java's Math.round
    assert store_percent(0, 0) == 0


def store_percent(won: int, played: int) -> int:
    from nimlab.storage import PlayerRecord

    return PlayerRecord("u", "g", "f", None, played, won).win_percent


def test_rankings_top_ten_by_default(database: str) -> None:
    with Store.open(database) as store:
        for i in range(12):
            store.add_player(f"p{i:02d}", given="P", family="Q")
        assert len(store.rankings()) == 10
        assert len(store.rankings(limit=None)) == 12


def test_reset_stats(database: str) -> None:
    with Store.open(database) as store:
        store.add_player("a", given="A", family="A")
        store.add_player("b", given="B", family="B")
    _set_stats(database, {"a": (5, 2), "b": (3, 3)})
    with Store.open(database) as store:
        store.reset_stats("a")
        assert (store.get_player("a").games_played, store.get_player("b").games_played) == (0, 3)
        store.reset_all_stats()
        assert all(p.games_played == p.games_won == 0 for p in store.players())


# -- game records ---------------------------------------------------------------------------------


def test_save_game_updates_stats_and_history(database: str) -> None:
    with Store.open(database) as store:
        store.add_player("ann", given="Ann", family="A")
        store.add_player("hal", given="Hal", family="H", bot="perfect")
        gid = store.save_game(finished_game().to_record(), ["ann", "hal"])
        gid2 = store.save_game(finished_game(winner_first=False).to_record(), ["ann", None])
        assert (store.get_player("ann").games_played, store.get_player("ann").games_won) == (2, 1)
        assert (store.get_player("hal").games_played, store.get_player("hal").games_won) == (1, 0)
        games = store.games()
        assert [g.id for g in games] == [gid2, gid]
        assert games[1].winner is not None and games[1].winner.username == "ann"
        assert games[0].winner is not None and games[0].winner.name == "Hal"
        assert [g.id for g in store.games(username="hal")] == [gid]
        stored = store.game(gid)
        replayed = Game.from_record(stored.record)
        assert replayed.is_over and replayed.winner is not None and replayed.winner.name == "Ann"
        with pytest.raises(GameNotFoundError):
            store.game(999)


def test_save_game_is_all_or_nothing(database: str) -> None:
    with Store.open(database) as store:
        store.add_player("ann", given="Ann", family="A")
        with pytest.raises(UnknownPlayerError):
            store.save_game(finished_game().to_record(), ["ann", "ghost"])
        unfinished = Game("nim", [3], ["human:A", "human:B"]).to_record()
        with pytest.raises(RecordError, match="finished"):
            store.save_game(unfinished, ["ann", None])
        with pytest.raises(RecordError):
            store.save_game(finished_game().to_record(), ["ann", None, None])
        assert store.game_count() == 0
        assert store.get_player("ann").games_played == 0


def test_removed_players_keep_their_games(database: str) -> None:
    with Store.open(database) as store:
        store.add_player("ann", given="Ann", family="A")
        gid = store.save_game(finished_game().to_record(), ["ann", None])
        store.remove_player("ann")
        game = store.game(gid)
        assert game.summary.seats[0].name == "Ann" and game.summary.seats[0].username == "ann"
        store.add_player("ann", given="New", family="Ann")
        assert store.get_player("ann").games_played == 0


def test_export_import_round_trip(database: str, tmp_path: Path) -> None:
    with Store.open(database) as store:
        store.add_player("ann", given="Ann", family="A")
        store.save_game(finished_game().to_record(), ["ann", None])
        kayles = Game("kayles", [4], ["human:A", "bot:perfect:B"], seed=3)
        while not kayles.is_over:
            if kayles.to_move.is_bot:
                kayles.play_bot()
            else:
                kayles.push(kayles.legal_moves[0])
        store.save_game(kayles.to_record(), [])
        document = json.loads(json.dumps(store.export_games()))
    assert document["format"] == "nimlab-games/1" and len(document["games"]) == 2
    with Store.open(tmp_path / "b.db") as other:
        other.add_player("ann", given="Ann", family="A")
        ids = import_document(other, document).added
        assert len(ids) == 2 and other.game_count() == 2
        assert other.get_player("ann").games_played == 0  # imports do not change statistics
        assert [g.id for g in other.games(username="ann")] == [ids[0]]
        again = other.export_games(ids)
    assert [g["record"]["moves"] for g in again["games"]] == [
        g["record"]["moves"] for g in document["games"]
    ]


def test_import_checks_every_game(database: str) -> None:
    good = finished_game().to_record()
    cheat = json.loads(json.dumps(good))
    cheat["moves"][0]["move"] = "1 5"
    with pytest.raises(RecordError, match="game 2 of the file does not replay"):
        read_document([good, cheat])
    unfinished = Game("nim", [3], ["human:A", "human:B"]).to_record()
    with pytest.raises(RecordError, match="not finished"):
        read_document([unfinished])
    with pytest.raises(RecordError, match="not a nimlab export"):
        read_document({"games": []})
    with Store.open(database) as store, pytest.raises(RecordError):
        import_document(store, [good, cheat])
    with Store.open(database) as store:
        assert store.game_count() == 0


def test_a_game_over_before_anyone_moved_is_never_stored(database: str) -> None:
    # no Game starts over (it refuses to): a record written by hand, or by an older version
    record = Game("nim", [1], ["human:Ann", "human:Bob"]).to_record()
    record.update(start=[0], over=True, winner=0)
    with Store.open(database) as store:
        store.add_player("ann", given="Ann", family="A")
        with pytest.raises(RecordError, match="already an end position"):
            store.save_game(record, ["ann", None])
        with pytest.raises(RecordError, match="already an end position"):
            import_document(store, [record])
        assert store.game_count() == 0 and store.get_player("ann").games_played == 0


# -- restarts, kills and concurrent writers -------------------------------------------------------


def test_statistics_survive_a_restart(database: str) -> None:
    code = (
        "import sys\n"
        "from nimlab.storage import Store\n"
        "from nimlab.core.game import Game\n"
        "store = Store.open(sys.argv[1])\n"
        "store.add_player('ann', given='Ann', family='A')\n"
        "g = Game('nim', [1], ['human:Ann', 'human:Bob']); g.push('1 1')\n"
        "store.save_game(g.to_record(), ['ann', None])\n"
    )
    subprocess.run([sys.executable, "-c", code, str(database)], check=True, timeout=PATIENCE)
    with Store.open(database) as store:
        ann = store.get_player("ann")
        assert (ann.games_played, ann.games_won) == (1, 1)
        assert store.game_count() == 1


def _writer(path: str, name: str, count: int) -> None:
    with Store.open(path) as store:
        store.add_player(name, given=name, family="Writer")
        other = "a" if name == "b" else "b"
        for i in range(count):
            while store.find_player(other) is None:
                time.sleep(0.01)
            game = finished_game(("human:X", "human:Y"), winner_first=i % 2 == 0)
            store.save_game(game.to_record(), [name, other])
            store.add_player(f"{name}{i}", given="P", family=str(i))


def test_two_processes_writing_at_once(db: Path) -> None:
    Store.open(db).close()
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(db), name, 40)) for name in ("a", "b")]
    for p in procs:
        p.start()
    for p in procs:
        p.join(PATIENCE)
        assert p.exitcode == 0
    with Store.open(db) as store:
        assert store.integrity_check() == "ok"
        assert store.game_count() == 80
        assert len(store.players()) == 82
        a, b = store.get_player("a"), store.get_player("b")
        assert a.games_played == b.games_played == 80
        assert a.games_won + b.games_won == 80


_KILL_LOOP = """
import sys
from nimlab.storage import Store
from nimlab.core.game import Game
store = Store.open(sys.argv[1])
print('ready', flush=True)
i = 0
while True:
    g = Game('nim', [1], ['human:X', 'human:Y'])
    g.push('1 1')
    store.save_game(g.to_record(), ['a', 'b'] if i % 2 else ['b', 'a'])
    i += 1
    print('saved', i, flush=True)
"""


def test_a_killed_writer_leaves_the_database_consistent(db: Path) -> None:
    with Store.open(db) as store:
        store.add_player("a", given="A", family="A")
        store.add_player("b", given="B", family="B")
    proc = subprocess.Popen(
        [sys.executable, "-c", _KILL_LOOP, str(db)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    assert "saved 20\n" in read_until(proc.stdout, "saved 20\n")  # then killed mid-write
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(PATIENCE)
    with Store.open(db) as store:
        assert store.integrity_check() == "ok"
        games = store.game_count()
        a, b = store.get_player("a"), store.get_player("b")
        # every stored game counted exactly once, no half-written game
        assert a.games_played == b.games_played == games > 0
        assert a.games_won + b.games_won == games
    conn = sqlite3.connect(db)
    assert (
        conn.execute(
            "SELECT COUNT(*) FROM games WHERE id NOT IN (SELECT game_id FROM game_players)"
        ).fetchone()[0]
        == 0
    )
