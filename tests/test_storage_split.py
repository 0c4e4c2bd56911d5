"""The storage parts behind one Store: registry, archive, games in play; the writer thread;
finishing a game in one transaction; the bounds on games in play; idempotent imports; read-only
and bad databases, and what the command line says about them. In-process, no timing."""

from __future__ import annotations

import json
import os
import sqlite3
import sys
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from nimlab.core.game import Game
from nimlab.storage import (
    SCHEMA_VERSION,
    GameNotFoundError,
    ImportResult,
    InPlayLimits,
    NoDatabaseError,
    OldSchemaError,
    ReadOnlyError,
    RecordError,
    StorageError,
    Store,
    StoreWriter,
    TooManyGamesInPlayError,
    TooManyMovesError,
    WriterBusyError,
    import_document,
    record_hash,
    upgrade_database,
)
from nimlab.storage import inplay as inplay_module
from nimlab.storage.archive import Archive
from nimlab.storage.inplay import GamesInPlay
from nimlab.storage.registry import Registry
from nimlab.storage.schema import MIGRATIONS, _statements
from storetools import held_writer


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "nimlab.db"


@pytest.fixture
def store(database: str) -> Iterator[Store]:
    """A new store, on SQLite and on PostgreSQL."""
    with Store.open(database) as s:
        yield s


@pytest.fixture
def sqlite_store(db: Path) -> Iterator[Store]:
    """A new store on SQLite (for a test that uses SQLite's own statements)."""
    with Store.open(db) as s:
        yield s


def started(
    piles: tuple[int, ...] = (3, 4), players: tuple[str, str] = ("human:Ann", "human:Bob")
) -> Game:
    return Game("nim", list(piles), list(players), seed=1)


def finished(players: tuple[str, str] = ("human:Ann", "human:Bob")) -> Game:
    game = Game("nim", [1], list(players), seed=1)
    game.push("1 1")
    return game


def in_play_with_moves(store: Store, key: str = "k1") -> Game:
    """A game in play on [3, 4] with two stored moves, then played to its end in memory."""
    game = started()
    store.add_live_game(key, game.to_record(), {"usernames": ["ann", None]})
    game.push("1 3")
    game.push("2 1")
    store.add_live_moves([(key, 1, game.to_record()["moves"])])
    game.push("2 3")
    assert game.is_over
    return game


# -- one Store over the parts ---------------------------------------------------------------------


def test_the_store_keeps_its_methods_and_gives_its_parts(store: Store) -> None:
    assert isinstance(store.registry, Registry)
    assert isinstance(store.archive, Archive)
    assert isinstance(store.in_play, GamesInPlay)
    names = (
        "add_player find_player get_player players remove_player remove_all_players edit_player "
        "reset_stats reset_all_stats rankings save_game games game_count game delete_game "
        "export_games import_games add_live_game add_live_moves live_games live_game "
        "remove_live_game finish_live_game count_games_in_play expire_games_in_play "
        "integrity_check require_writable close"
    )
    for name in names.split():
        assert callable(getattr(store, name)), name
    store.add_player("ann", given="Ann", family="A")
    gid = store.save_game(finished().to_record(), ["ann", None])
    assert store.registry.get_player("ann").games_won == 1
    assert store.archive.game(gid).summary.seats[0].username == "ann"


def test_sql_stays_in_storage() -> None:
    src = Path(__file__).parent.parent / "src" / "nimlab"
    for path in src.rglob("*.py"):
        if "storage" in path.parts:
            continue
        text = path.read_text()
        assert "import sqlite3" not in text or path.name == "live.py", path
        for word in ("SELECT ", "INSERT INTO", "DELETE FROM", "CREATE TABLE"):
            assert word not in text, (path, word)


# -- upgrading a database made by the previous schema ---------------------------------------------


def _version_2_database(path: Path) -> None:
    """A database as nimlab made it before version 3: players, a game stored twice (an import
    done twice), and a game in play with moves."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
    conn.execute("INSERT INTO schema_version (version) VALUES (2)")
    for script in MIGRATIONS[:2]:
        assert isinstance(script, str)
        for statement in _statements(script):
            conn.execute(statement)
    conn.execute(
        "INSERT INTO players (username, given_name, family_name, bot, games_played, games_won, "
        "created_at) VALUES ('ann', 'Ann', 'A', NULL, 1, 1, '2024-01-01T00:00:00+00:00')"
    )
    record = finished().to_record()
    for source in ("play", "import"):
        gid = conn.execute(
            "INSERT INTO games (ruleset, start, winner_seat, move_count, started_at, finished_at, "
            "source, record) VALUES ('nim', '[1]', 0, 1, '2024-01-01T00:00:00+00:00', "
            "'2024-01-01T00:01:00+00:00', ?, ?)",
            (source, json.dumps(record)),
        ).lastrowid
        conn.execute(
            "INSERT INTO game_players VALUES "
            "(?, 0, 'Ann', 'ann', 1, 1), (?, 1, 'Bob', NULL, NULL, 0)",
            (gid, gid),
        )
    game = started()
    conn.execute(
        "INSERT INTO live_games VALUES ('old', ?, '{}', '2024-01-01T00:00:00+00:00')",
        (json.dumps(game.to_record()),),
    )
    game.push("1 1")
    move = game.to_record()["moves"][0]
    conn.execute(
        "INSERT INTO live_moves VALUES ('old', 1, ?, ?, NULL, ?)",
        (move["seat"], move["move"], move["at"]),
    )
    conn.close()


def test_a_version_2_database_is_upgraded_and_keeps_everything(db: Path) -> None:
    _version_2_database(db)
    with Store.open(db, upgrade=True) as store:  # (nimlab db migrate)
        assert store.integrity_check() == "ok"
        assert store.get_player("ann").games_played == 1
        assert store.game_count() == 2  # games stored twice before stay: nothing is deleted
        hashes = {r[0] for r in store.db.rows("SELECT content_hash FROM games")}
        assert hashes == {record_hash(store.game(1).record)}
        [(key, record, meta)] = store.live_games()
        assert key == "old" and len(record["moves"]) == 1 and meta == {}
        assert Game.from_record(record).board.to_json() == [2, 4]
        assert store.db.rows("SELECT touched_at FROM live_games") == [
            ("2024-01-01T00:00:00+00:00",)
        ]
        # the game already stored is not imported again, under either id
        result = import_document(store, store.export_games([1]))
        assert result.added == [] and result.existing == [1]
        assert store.expire_games_in_play() == ["old"]  # untouched since 2024
    with Store.open(db, read_only=True) as again:
        assert again.game_count() == 2


def test_an_old_database_is_refused_unchanged_until_upgraded_with_its_backup(db: Path) -> None:
    """Only an explicit upgrade changes a database of an older schema: opening it, to read or to
    write, is refused with the command to run, and leaves the file as it was, byte for byte."""
    _version_2_database(db)
    before = db.read_bytes()
    for read_only in (True, False):
        with pytest.raises(OldSchemaError, match=r"schema version 2, .*`nimlab db migrate --db "):
            Store.open(db, read_only=read_only)
        assert db.read_bytes() == before
    assert upgrade_database(db, db.with_name("kept.db")) == (
        2,
        SCHEMA_VERSION,
        db.with_name("kept.db"),
    )
    with sqlite3.connect(db.with_name("kept.db")) as conn:  # the copy is the database as it was
        assert conn.execute("SELECT version FROM schema_version").fetchone()[0] == 2
    with Store.open(db, read_only=True) as store:
        assert store.read_only and store.game_count() == 2
    assert upgrade_database(db) == (SCHEMA_VERSION, SCHEMA_VERSION, None)  # nothing to do


# -- finishing a game: one transaction ------------------------------------------------------------


def test_finishing_stores_the_game_and_removes_it_from_play(store: Store) -> None:
    store.add_player("ann", given="Ann", family="A")
    game = in_play_with_moves(store)
    gid = store.finish_live_game("k1", game.to_record(), ["ann", None])
    assert store.live_games() == [] and store.count_games_in_play() == 0
    assert store.db.rows("SELECT COUNT(*) FROM live_moves") == [(0,)]
    stored = store.game(gid)
    assert stored.summary.source == "web" and stored.summary.move_count == 3
    assert store.get_player("ann").games_played == 1
    with pytest.raises(RecordError, match="no game in progress"):  # at most once
        store.finish_live_game("k1", game.to_record(), ["ann", None])
    assert store.game_count() == 1 and store.get_player("ann").games_played == 1


def test_a_player_removed_during_the_game_is_stored_as_a_name(store: Store) -> None:
    game = in_play_with_moves(store)
    gid = store.finish_live_game("k1", game.to_record(), ["ghost", None])
    assert [s.username for s in store.game(gid).summary.seats] == [None, None]


def _assert_whole_in_play(store: Store, game: Game) -> None:
    [(key, record, _)] = store.live_games()
    assert key == "k1" and len(record["moves"]) == 2
    assert [m["move"] for m in record["moves"]] == [
        m["move"] for m in game.to_record()["moves"][:2]
    ]
    assert store.game_count() == 0
    assert store.get_player("ann").games_played == 0


def test_a_failure_while_storing_the_finished_game_loses_nothing(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.add_player("ann", given="Ann", family="A")
    game = in_play_with_moves(store)

    def broken(*args: Any, **kwargs: Any) -> int:
        raise StorageError("injected: the disk is full")

    monkeypatch.setattr(inplay_module, "insert_game", broken)
    with pytest.raises(StorageError, match="injected"):
        store.finish_live_game("k1", game.to_record(), ["ann", None])
    _assert_whole_in_play(store, game)


def test_a_failure_after_storing_before_removing_loses_nothing(
    sqlite_store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The finished record is written, then the step that removes the game in play fails: the
    whole transaction rolls back, so the game is whole, in play."""
    store = sqlite_store
    store.add_player("ann", given="Ann", family="A")
    game = in_play_with_moves(store)
    real = inplay_module.insert_game

    def then_crash(*args: Any, **kwargs: Any) -> int:
        real(*args, **kwargs)
        raise RuntimeError("injected: crash between the steps")

    monkeypatch.setattr(inplay_module, "insert_game", then_crash)
    with pytest.raises(RuntimeError, match="injected"):
        store.finish_live_game("k1", game.to_record(), ["ann", None])
    _assert_whole_in_play(store, game)
    monkeypatch.undo()
    # a database error while removing (a trigger refuses the delete): same
    store.db.conn.execute(
        "CREATE TRIGGER refuse BEFORE DELETE ON live_games BEGIN SELECT RAISE(ABORT, 'no'); END"
    )
    with pytest.raises(StorageError):
        store.finish_live_game("k1", game.to_record(), ["ann", None])
    _assert_whole_in_play(store, game)
    store.db.conn.execute("DROP TRIGGER refuse")
    store.finish_live_game("k1", game.to_record(), ["ann", None])
    assert store.game_count() == 1 and store.live_games() == []


# -- bounds on games in play ----------------------------------------------------------------------


def test_games_in_play_are_capped_in_all_and_per_client(database: str) -> None:
    limits = InPlayLimits(max_games=4, max_per_client=2, max_moves=10)
    with Store.open(database, limits=limits) as store:
        record = started().to_record()
        store.add_live_game("a1", record, {}, client="alice")
        store.add_live_game("a2", record, {}, client="alice")
        with pytest.raises(TooManyGamesInPlayError, match="you have 2 games in play"):
            store.add_live_game("a3", record, {}, client="alice")
        store.add_live_game("b1", record, {}, client="bob")
        store.add_live_game("x", record, {})
        assert store.count_games_in_play() == 4
        assert store.count_games_in_play("alice") == 2
        assert store.count_games_in_play("bob") == 1
        assert store.count_games_in_play("nobody") == 0
        with pytest.raises(TooManyGamesInPlayError, match="4 games are in play"):
            store.add_live_game("b2", record, {}, client="bob")
        assert store.live_game("a3") is None and store.live_game("b2") is None
        assert store.remove_live_game("a1")
        store.add_live_game("a3", record, {}, client="alice")
        assert store.count_games_in_play("alice") == 2


def test_moves_per_game_are_capped(database: str) -> None:
    with Store.open(database, limits=InPlayLimits(max_moves=3)) as store:
        game = Game("nim", [9], ["human:A", "human:B"])
        store.add_live_game("k", game.to_record(), {})
        for _ in range(4):
            game.push("1 1")
        moves = game.to_record()["moves"]
        store.add_live_moves([("k", 1, moves[:3])])
        with pytest.raises(TooManyMovesError, match="at most 3 moves"):
            store.add_live_moves([("k", 4, moves[3:])])
        entry = store.live_game("k")
        assert entry is not None and len(entry[1]["moves"]) == 3
        with pytest.raises(TooManyMovesError):
            store.add_live_game("k2", game.to_record(), {})
        assert store.live_game("k2") is None


def test_move_numbers_must_follow_the_stored_ones(store: Store) -> None:
    game = started()
    store.add_live_game("k", game.to_record(), {})
    game.push("1 1")
    game.push("1 1")
    moves = game.to_record()["moves"]
    with pytest.raises(RecordError, match="the next is move 1, not 2"):
        store.add_live_moves([("k", 2, moves[1:])])
    store.add_live_moves([("k", 1, moves[:1])])
    with pytest.raises(RecordError, match="already has move 1"):  # a retried append
        store.add_live_moves([("k", 1, moves[:1])])
    store.add_live_moves([("k", 2, moves[1:])])
    entry = store.live_game("k")
    assert entry is not None and len(entry[1]["moves"]) == 2


def test_limits_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NIMLAB_MAX_GAMES_IN_PLAY", "7")
    monkeypatch.setenv("NIMLAB_MAX_GAMES_PER_CLIENT", "3")
    monkeypatch.setenv("NIMLAB_MAX_MOVES_PER_GAME", "99")
    monkeypatch.setenv("NIMLAB_GAME_EXPIRY_DAYS", "2")
    assert InPlayLimits.from_env() == InPlayLimits(7, 3, 99, timedelta(days=2))
    monkeypatch.setenv("NIMLAB_MAX_GAMES_IN_PLAY", "0")
    with pytest.raises(StorageError, match="NIMLAB_MAX_GAMES_IN_PLAY"):
        InPlayLimits.from_env()
    monkeypatch.setenv("NIMLAB_MAX_GAMES_IN_PLAY", "many")
    with pytest.raises(StorageError, match="at least 1"):
        InPlayLimits.from_env()
    monkeypatch.delenv("NIMLAB_MAX_GAMES_IN_PLAY")
    assert InPlayLimits.from_env().max_games == InPlayLimits().max_games


def _set_touched(store: Store, key: str, when: datetime) -> None:
    store.db.conn.execute(
        "UPDATE live_games SET touched_at = ? WHERE key = ?",
        (when.isoformat(timespec="seconds"), key),
    )


def test_untouched_games_expire_and_a_move_touches_a_game(store: Store) -> None:
    now = datetime.now(UTC)
    for key in ("idle", "played", "fresh"):
        store.add_live_game(key, started().to_record(), {})
    _set_touched(store, "idle", now - timedelta(days=8))
    _set_touched(store, "played", now - timedelta(days=8))
    game = started()
    game.push("1 1")
    store.add_live_moves([("played", 1, game.to_record()["moves"])])  # touched now
    assert store.expire_games_in_play() == ["idle"]
    assert {k for k, _, _ in store.live_games()} == {"played", "fresh"}
    assert store.expire_games_in_play(at=now + timedelta(days=6)) == []
    assert sorted(store.expire_games_in_play(at=now + timedelta(days=8))) == ["fresh", "played"]
    assert store.db.rows("SELECT COUNT(*) FROM live_moves") == [(0,)]


def test_games_no_person_moved_in_expire_once_idle(database: str) -> None:
    """With ``idle_after``, a game untouched that long goes when no person has a move in it
    (nobody moved, or only bots); one a person moved in waits for ``expire_after``."""
    now = datetime.now(UTC)
    limits = InPlayLimits(idle_after=timedelta(hours=3))
    with Store.open(database, limits=limits) as store:
        bots = ("bot:random:Rex", "bot:random:Max")
        for key, players in (
            ("left", ("human:Ann", "human:Bob")),
            ("bots", bots),
            ("bot moved", ("human:Ann", "bot:random:Rex")),
            ("played", ("human:Ann", "bot:random:Rex")),
            ("fresh", ("human:Ann", "human:Bob")),
        ):
            store.add_live_game(key, started(players=players).to_record(), {})
        for key, seat in (("bots", 0), ("bot moved", 1), ("played", 0)):
            store.add_live_moves([(key, 1, [{"seat": seat, "move": "1 1", "at": "x"}])])
        for key in ("left", "bots", "bot moved", "played"):
            _set_touched(store, key, now - timedelta(hours=4))
        assert store.expire_games_in_play(older_than=timedelta(days=1)) == []
        assert sorted(store.expire_games_in_play()) == ["bot moved", "bots", "left"]
        assert {k for k, _, _ in store.live_games()} == {"played", "fresh"}
        assert store.expire_games_in_play(at=now + timedelta(days=6)) == ["fresh"]


def test_a_bounded_startup_reads_the_most_recently_touched_games(store: Store) -> None:
    now = datetime.now(UTC)
    for i in range(5):
        store.add_live_game(f"g{i}", started().to_record(), {"i": i})
    for i, age in enumerate((1, 5, 2, 4, 3)):
        _set_touched(store, f"g{i}", now - timedelta(hours=age))
    assert [k for k, _, _ in store.live_games(limit=2)] == ["g0", "g2"]  # oldest created first
    assert [k for k, _, _ in store.live_games(limit=0)] == []
    assert len(store.live_games(limit=10**30)) == 5
    entry = store.live_game("g3")
    assert entry is not None and entry[2] == {"i": 3}


# -- the writer thread ----------------------------------------------------------------------------


def test_the_writer_runs_jobs_in_order_and_reports_errors_to_the_caller(store: Store) -> None:
    writer = StoreWriter(store)
    try:
        added = writer.submit(lambda s: s.add_player("ann", given="Ann", family="A"))
        again = writer.submit(lambda s: s.add_player("ann", given="Ann", family="A"))
        count = writer.submit(lambda s: len(s.players()))
        assert added.result().username == "ann"
        with pytest.raises(ValueError, match="already exists"):
            again.result()
        assert count.result() == 1
    finally:
        writer.close()
    with pytest.raises(StorageError, match="closed"):
        writer.submit(lambda s: None)
    writer.close()  # twice is fine


def test_the_writer_group_commits_moves_and_fails_only_a_bad_append(database: str) -> None:
    store = Store.open(database)
    games = {}
    for key in ("a", "b", "c"):
        games[key] = started()
        store.add_live_game(key, games[key].to_record(), {})
        games[key].push("1 1")
    writer, gate = held_writer(store)
    futures = {k: writer.add_moves(k, 1, g.to_record()["moves"]) for k, g in games.items()}
    bad = writer.add_moves("nope", 1, games["a"].to_record()["moves"])
    again = writer.add_moves("a", 1, games["a"].to_record()["moves"])
    gate.set()
    writer.flush()
    for f in futures.values():
        assert f.result() is None
    with pytest.raises(RecordError, match="no game in progress"):
        bad.result()
    with pytest.raises(RecordError, match="already has move 1"):
        again.result()
    writer.close()
    with Store.open(database) as check:
        assert all(len(r["moves"]) == 1 for _, r, _ in check.live_games())


def test_the_writer_commits_waiting_jobs_together_and_undoes_a_failing_one_alone(
    store: Store,
) -> None:
    writer, gate = held_writer(store)
    ann = writer.submit(lambda s: s.add_player("ann", given="Ann", family="A"))

    def add_then_fail(s: Store) -> None:
        s.add_player("bob", given="Bob", family="B")
        raise RuntimeError("injected")

    failing = writer.submit(add_then_fail)
    # answered only once the group is durable: not while a later job of the group runs
    seen = writer.submit(lambda s: (ann.done(), [p.username for p in s.players()]))
    gate.set()
    assert seen.result() == (False, ["ann"])
    assert ann.result().username == "ann"
    with pytest.raises(RuntimeError, match="injected"):
        failing.result()
    writer.close()
    with Store.open(store.path) as check:
        assert [p.username for p in check.players()] == ["ann"]


class _CommitFails:
    """A connection whose COMMIT fails (everything else is passed on)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def execute(self, sql: str, *args: Any) -> Any:
        if sql == "COMMIT":
            raise sqlite3.OperationalError("disk I/O error (injected)")
        return self.conn.execute(sql, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.conn, name)


def test_a_group_whose_commit_fails_keeps_nothing_and_tells_every_job(store: Store) -> None:
    writer, gate = held_writer(store)
    real = store.db.conn
    store.db.conn = _CommitFails(real)  # type: ignore[assignment]
    jobs = [
        writer.submit(lambda s, n=n: s.add_player(n, given=n.title(), family="X"))
        for n in ("ann", "bob")
    ]
    gate.set()
    for job in jobs:
        with pytest.raises(StorageError, match="could not be written"):
            job.result()
    with pytest.raises(StorageError):
        writer.flush()  # its own group fails too
    store.db.conn = real
    assert writer.submit(lambda s: [p.username for p in s.players()]).result() == []
    writer.close()


def test_the_writer_queue_is_bounded(store: Store) -> None:
    writer = StoreWriter(store, max_pending=2)
    gate, holding = threading.Event(), threading.Event()

    def hold(_: Store) -> str:
        holding.set()
        gate.wait()
        return "held"

    first = writer.submit(hold)
    assert holding.wait(60)  # the writer is busy; the queue is empty
    waiting = [writer.submit(lambda s: s.game_count()) for _ in range(2)]
    with pytest.raises(WriterBusyError, match="2 writes waiting"):
        writer.submit(lambda s: s.game_count())
    with pytest.raises(WriterBusyError):
        writer.add_moves("k", 1, [])
    assert writer.pending == 2
    gate.set()
    assert first.result() == "held" and [f.result() for f in waiting] == [0, 0]
    writer.flush()
    assert writer.submit(lambda s: s.game_count()).result() == 0
    writer.close()


# -- import and export ----------------------------------------------------------------------------


def test_importing_twice_adds_each_game_once_and_registers_the_players(
    database: str, tmp_path: Path
) -> None:
    with Store.open(database) as source:
        source.add_player("ann", given="Ann", family="A")
        source.add_player("hal", given="Hal", family="H", bot="perfect")
        source.save_game(finished(("human:Ann", "bot:perfect:Hal")).to_record(), ["ann", "hal"])
        source.save_game(finished(("human:X", "human:Y")).to_record(), [])
        document = json.loads(json.dumps(source.export_games()))
        assert document["players"] == [
            {"username": "ann", "given_name": "Ann", "family_name": "A", "bot": None},
            {"username": "hal", "given_name": "Hal", "family_name": "H", "bot": "perfect"},
        ]
        # exporting and importing into the same database adds nothing
        assert import_document(source, document) == ImportResult([], [1, 2], [])
    with Store.open(tmp_path / "b.db") as target:
        target.add_player("hal", given="Other", family="Name")
        first = import_document(target, document)
        assert first.added == [1, 2] and first.existing == [] and first.players_added == ["ann"]
        assert target.get_player("hal").full_name == "Other Name"  # not overwritten
        assert target.get_player("ann").games_played == 0  # imports do not change statistics
        assert [g.id for g in target.games(username="ann")] == [1]
        second = import_document(target, document)
        assert second == ImportResult([], [1, 2], [])
        assert target.game_count() == 2
        doubled = dict(document, games=document["games"] * 2)
        assert import_document(target, doubled).added == []
        # one file naming the same game twice stores it once
    with Store.open(tmp_path / "c.db") as fresh:
        result = import_document(fresh, dict(document, games=document["games"] * 2))
        assert result.added == [1, 2] and result.existing == [1, 2]


def test_a_bad_player_in_the_file_imports_nothing(db: Path) -> None:
    with Store.open(db) as store:
        store.save_game(finished().to_record(), [])
        document = store.export_games()
    document["players"] = [
        {"username": "ok", "given_name": "O", "family_name": "K", "bot": None},
        {"username": "x,y", "given_name": "X", "family_name": "Y", "bot": None},
    ]
    with Store.open(tmp := db.with_name("other.db")) as other:
        with pytest.raises(RecordError, match="player 2 of the file"):
            import_document(other, document)
        document["players"][1] = {
            "username": "z",
            "given_name": "Z",
            "family_name": "Z",
            "bot": "telepathic",
        }
        with pytest.raises(RecordError, match="player 2 of the file"):
            import_document(other, document)
        assert other.players() == [] and other.game_count() == 0
    assert tmp.exists()


def test_deleting_a_game_from_the_history(store: Store) -> None:
    store.add_player("ann", given="Ann", family="A")
    gid = store.save_game(finished().to_record(), ["ann", None])
    keep = store.save_game(finished().to_record(), ["ann", None])
    store.delete_game(gid)
    assert [g.id for g in store.games()] == [keep]
    assert store.db.rows("SELECT DISTINCT game_id FROM game_players") == [(keep,)]
    assert store.get_player("ann").games_played == 2  # statistics are not changed
    for missing in (gid, -1, 10**30):
        with pytest.raises(GameNotFoundError):
            store.delete_game(missing)
        with pytest.raises(GameNotFoundError):
            store.game(missing)


def test_huge_limits_are_all(store: Store) -> None:
    store.add_player("ann", given="Ann", family="A")
    store.save_game(finished().to_record(), [])
    assert len(store.games(limit=10**40)) == 1
    assert len(store.rankings(limit=10**40)) == 1


def test_a_record_json_cannot_hold_is_a_record_error(store: Store) -> None:
    record = finished().to_record()
    record["extra"] = {1j}  # a well-formed game record (extra keys are kept) that is not JSON
    with pytest.raises(RecordError, match="cannot be stored as JSON"):
        store.save_game(record, [])
    assert store.game_count() == 0


# -- read-only and bad databases ------------------------------------------------------------------


def test_reading_a_missing_database_creates_nothing(tmp_path: Path) -> None:
    missing = tmp_path / "typo" / "deeper" / "nimlab.db"
    with pytest.raises(NoDatabaseError, match="no database at"):
        Store.open(missing, read_only=True)
    assert not (tmp_path / "typo").exists()
    empty = tmp_path / "empty.db"
    empty.touch()
    with pytest.raises(NoDatabaseError):
        Store.open(empty, read_only=True)
    assert empty.stat().st_size == 0
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not a database at all" * 100)
    with pytest.raises(StorageError, match="cannot read database"):
        Store.open(junk, read_only=True)
    with pytest.raises(StorageError, match="is a directory"):
        Store.open(tmp_path, read_only=True)


def test_a_read_only_store_reads_and_refuses_writes(db: Path) -> None:
    with Store.open(db) as store:
        store.add_player("ann", given="Ann", family="A")
        store.save_game(finished().to_record(), ["ann", None])
    with Store.open(db, read_only=True) as ro:
        assert ro.read_only and ro.get_player("ann").games_won == 1 and ro.game_count() == 1
        with pytest.raises(ReadOnlyError):
            ro.add_player("bob", given="Bob", family="B")
        with pytest.raises(ReadOnlyError):
            ro.require_writable()
        assert ro.integrity_check() == "ok"
    with Store.open(db) as store:
        store.require_writable()
        assert [p.username for p in store.players()] == ["ann"]


@pytest.mark.skipif(
    sys.platform == "win32" or os.geteuid() == 0, reason="root writes read-only files anyway"
)
def test_a_database_in_a_read_only_folder_can_be_read_but_not_written(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    path = folder / "nimlab.db"
    with Store.open(path) as store:
        store.add_player("ann", given="Ann", family="A")
    path.chmod(0o444)
    folder.chmod(0o555)
    try:
        with Store.open(path, read_only=True) as ro:
            assert [p.username for p in ro.players()] == ["ann"]
        with pytest.raises(StorageError), Store.open(path) as rw:
            rw.require_writable()
    finally:
        folder.chmod(0o755)
        path.chmod(0o644)


# -- the command line -----------------------------------------------------------------------------


def _cli(monkeypatch: pytest.MonkeyPatch, *args: str, stdin: str = "") -> int:
    import io

    from nimlab.cli import main

    monkeypatch.setattr(sys, "argv", ["nimlab", *args])
    monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    with pytest.raises(SystemExit) as exit_info:
        main()
    code = exit_info.value.code
    return 0 if code is None else int(code)


def test_cli_read_commands_with_a_mistyped_db_create_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "tpyo" / "nimlab.db"
    for command in (["history"], ["players", "show"], ["rankings"], ["export"], ["replay", "1"]):
        assert _cli(monkeypatch, *command, "--db", str(missing)) == 2, command
        err = capsys.readouterr().err
        assert "no database at" in err and "Traceback" not in err
    assert not (tmp_path / "tpyo").exists()


@pytest.mark.parametrize(
    "url", ["mysql://lee:secret@db.example/nimlab", "sqlite:///games.db", "HTTP://x/y.db"]
)
def test_a_database_url_nimlab_does_not_open_is_refused_and_never_becomes_a_folder(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    url: str,
) -> None:
    from nimlab.storage import UnsupportedDatabaseError

    monkeypatch.chdir(tmp_path)
    with pytest.raises(UnsupportedDatabaseError, match="a kind nimlab does not open"):
        Store.open(url)
    commands = (["history"], ["db"], ["players", "add", "lee", "--given", "B", "--family", "L"])
    for command in commands:
        for where in (["--db", url], []):
            if not where:
                monkeypatch.setenv("NIMLAB_DB", url)
            assert _cli(monkeypatch, *command, *where) == 2, (command, where)
            monkeypatch.delenv("NIMLAB_DB", raising=False)
            err = capsys.readouterr().err
            assert "is a URL" in err and "SQLite database file" in err and "--db" in err
            assert "postgresql://" in err
            assert "secret" not in err and "Traceback" not in err
    assert list(tmp_path.iterdir()) == []


def test_cli_play_on_a_read_only_database_stops_before_the_game(
    db: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    Store.open(db).close()

    def refuse(self: Store) -> None:
        raise ReadOnlyError(f"the database {self.path} is read-only")

    monkeypatch.setattr(Store, "require_writable", refuse)
    code = _cli(monkeypatch, "play", "--piles", "1", "--db", str(db), stdin="1 1\n")
    out = capsys.readouterr()
    assert code == 1
    assert "read-only" in out.err and "could not be saved" in out.err
    assert "Traceback" not in out.err and "wins" not in out.out  # the game was not played


def test_cli_storage_errors_are_messages_with_status_1(
    db: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with Store.open(db) as store:
        store.db.conn.execute(
            "CREATE TRIGGER full BEFORE INSERT ON players "
            "BEGIN SELECT RAISE(ABORT, 'disk full'); END"
        )
    code = _cli(
        monkeypatch, "players", "add", "ann", "--given", "A", "--family", "A", "--db", str(db)
    )
    err = capsys.readouterr().err
    assert code == 1 and "disk full" in err
    assert "Traceback" not in err and "StorageError" not in err


def test_cli_delete_game(
    db: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with Store.open(db) as store:
        first = store.save_game(finished().to_record(), [])
        second = store.save_game(finished().to_record(), [])
    assert _cli(monkeypatch, "delete-game", str(first), "99", "--db", str(db)) == 2
    assert "no game #99" in capsys.readouterr().err
    with Store.open(db) as store:
        assert store.game_count() == 2  # every number is checked before any is deleted
    assert _cli(monkeypatch, "delete-game", str(first), "--db", str(db)) == 0
    assert f"Deleted game #{first}." in capsys.readouterr().out
    with Store.open(db) as store:
        assert [g.id for g in store.games()] == [second]


def test_cli_import_twice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with Store.open(tmp_path / "a.db") as store:
        store.add_player("ann", given="Ann", family="A")
        store.save_game(finished().to_record(), ["ann", None])
        (tmp_path / "games.json").write_text(json.dumps(store.export_games()))
    target = str(tmp_path / "b.db")
    assert _cli(monkeypatch, "import", str(tmp_path / "games.json"), "--db", target) == 0
    assert capsys.readouterr().out == "Registered ann.\nImported 1 game as #1.\n"
    assert _cli(monkeypatch, "import", str(tmp_path / "games.json"), "--db", target) == 0
    assert capsys.readouterr().out == "1 game was stored already (not added again).\n"


def _read_only_mount_works(folder: Path) -> bool:
    import shutil
    import subprocess

    if sys.platform != "linux" or shutil.which("unshare") is None:
        return False
    probe = subprocess.run(
        ["unshare", "-rm", "sh", "-c", _MOUNT_RO.format(folder=folder) + " && true"],
        capture_output=True,
        timeout=60,
    )
    return probe.returncode == 0


_MOUNT_RO = "mount --bind {folder} {folder} && mount -o remount,bind,ro {folder}"

_ON_READ_ONLY_FS = """
import subprocess, sys
from nimlab.storage import Store, StorageError
path = sys.argv[1]
with Store.open(path, read_only=True) as ro:
    print("players", [p.username for p in ro.players()])
try:
    Store.open(path).require_writable()
    print("writable")
except StorageError as e:
    print("not writable")
for args in (["players", "show", "--json"], ["play", "--piles", "1"]):
    r = subprocess.run([sys.executable, "-m", "nimlab", *args, "--db", path], input="1 1\\n",
                       capture_output=True, text=True)
    print(args[0], r.returncode, "Traceback" in r.stderr, "wins" in r.stdout,
          "read-only" in r.stderr, r.stdout.strip()[:40])
"""


def test_a_database_on_a_read_only_file_system(tmp_path: Path) -> None:
    """Reading works (SQLite cannot make its WAL index there: the file is opened immutable);
    writing is refused, and play stops before the game with status 1."""
    import subprocess

    folder = tmp_path / "ro"
    folder.mkdir()
    if not _read_only_mount_works(folder):
        pytest.skip("no user namespaces for a read-only mount here")
    path = folder / "nimlab.db"
    with Store.open(path) as store:
        store.add_player("ann", given="Ann", family="A")
    assert sorted(p.name for p in folder.iterdir()) == ["nimlab.db"]  # closed cleanly
    script = _MOUNT_RO.format(folder=folder) + ' && "$0" -c "$1" "$2"'
    r = subprocess.run(
        ["unshare", "-rm", "sh", "-c", script, sys.executable, _ON_READ_ONLY_FS, str(path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "players ['ann']" and lines[1] == "not writable"
    assert lines[2].startswith("players 0 False False False [{")
    assert lines[3].startswith("play 1 False False True")  # refused before the game, no board


# -- the web app on the store ---------------------------------------------------------------------


def _two_humans(client: Any) -> tuple[str, dict[int, str]]:
    body = {"players": [{"name": "Ann"}, {"name": "Bob"}], "piles": [5, 5]}
    r = client.post("/api/games", json=body)
    assert r.status_code == 201, r.text
    data = r.json()
    return data["state"]["id"], {s["seat"]: s["token"] for s in data["seats"]}


def test_web_bounds_on_games_and_moves(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from fastapi.testclient import TestClient

    from nimlab.web import create_app

    monkeypatch.setenv("NIMLAB_MAX_GAMES_IN_PLAY", "1")
    monkeypatch.setenv("NIMLAB_MAX_MOVES_PER_GAME", "2")
    with TestClient(create_app(str(db), bot_pace=0)) as c:
        key, tokens = _two_humans(c)
        r = c.post("/api/games", json={"players": [{"name": "A"}, {"name": "B"}], "piles": [3]})
        assert r.status_code == 429 and "games are in play" in r.json()["detail"]
        for seat in (0, 1):
            body = {"seat": seat, "token": tokens[seat], "pile": 1, "take": 1, "turn": seat + 1}
            assert c.post(f"/api/games/{key}/moves", json=body).status_code == 200
        body = {"seat": 0, "token": tokens[0], "pile": 1, "take": 1, "turn": 3}
        r = c.post(f"/api/games/{key}/moves", json=body)
        assert r.status_code == 422 and "at most 2 moves" in r.json()["detail"]
        assert c.get(f"/api/games/{key}").json()["move_count"] == 2  # nothing changed
    with Store.open(db) as store:
        entry = store.live_game(key)
        assert entry is not None and len(entry[1]["moves"]) == 2


def test_web_startup_deletes_expired_games_and_finishes_atomically(db: Path) -> None:
    from fastapi.testclient import TestClient

    from nimlab.web import create_app

    with Store.open(db) as store:
        store.add_live_game("stale", started().to_record(), {"tokens": {}, "usernames": []})
        _set_touched(store, "stale", datetime.now(UTC) - timedelta(days=30))
    with TestClient(create_app(str(db), bot_pace=0)) as c:
        assert c.get("/api/games/stale").status_code == 404
        key, tokens = _two_humans(c)
        for seat, take in ((0, 5), (1, 5)):
            body = {
                "seat": seat,
                "token": tokens[seat],
                "pile": seat + 1,
                "take": take,
                "turn": seat + 1,
            }
            assert c.post(f"/api/games/{key}/moves", json=body).status_code == 200
        assert c.get(f"/api/games/{key}").json()["over"]
    with Store.open(db) as store:
        assert store.live_games() == [] and store.game_count() == 1
        assert store.game(1).summary.move_count == 2
