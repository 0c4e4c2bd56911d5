"""The database writer's fast paths give what the plain ones gave: the record check's fast path
against ``GameRecord.from_json`` (hypothesis), the content hash against its formula, the errors of
appending moves, savepoints inside a group, the clock, and the statements a group runs. In-process,
no timing."""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from nimlab.core import clock as clock_module
from nimlab.core.game import Game
from nimlab.core.position import Rows
from nimlab.core.record import MAX_TEXT, GameRecord
from nimlab.storage import (
    Change,
    ChangeFeed,
    InPlayLimits,
    RecordError,
    StaleGameError,
    Store,
    StoreWriter,
    TooManyMovesError,
    record_hash,
)
from nimlab.storage import archive as archive_module
from nimlab.storage.archive import CheckedRecord, check_record
from nimlab.storage.connection import now_stamp
from nimlab.storage.errors import StorageError
from nimlab.storage.registry import now
from processes import PATIENCE
from storetools import StatementLog, held_writer


@pytest.fixture
def store(database: str) -> Iterator[Store]:
    """A new store, on SQLite and on PostgreSQL."""
    with Store.open(database) as s:
        yield s


def played(ruleset: str, start: Any, players: list[str], seed: int = 1) -> dict[str, Any]:
    """A game played to its end (the first legal move each time), as its record."""
    game = Game(ruleset, start, players, seed=seed)
    while not game.is_over:
        game.push(sorted(game.legal_moves, key=str)[0], claim="P-position" if seed % 2 else None)
    return game.to_record()


def records() -> list[dict[str, Any]]:
    resigned = Game("nim", [3, 4], ["human:Ann", "bot:perfect:Hal"], seed=2)
    resigned.push("1 1")
    stopped = resigned.to_record()
    stopped["ended"] = {"how": "resigned", "seat": 1, "winners": [0]}
    return [
        played("nim", [3, 3, 4], ["human:Ann", "bot:perfect:Hal"]),
        played("nim misere", [2, 5], ["human:Ann", "human:Bob", "bot:random:Rex"], seed=2),
        played("kayles", Rows.full([4, 2]), ["bot:perfect:A", "bot:random:B"], seed=3),
        stopped,
    ]


# -- the content hash ---------------------------------------------------------------------------


def old_record_hash(record: Any) -> str:
    """The formula existing databases were hashed with."""
    text = json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text(st.characters(codec="utf-8") | st.sampled_from('é→\U0001f600"\\\n')),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=20,
)


@given(json_values)
def test_the_content_hash_is_the_old_formula(value: Any) -> None:
    assert record_hash(value) == old_record_hash(value)


def test_the_content_hash_of_a_known_record_is_unchanged() -> None:
    record = {"format": "nimlab-game/1", "ruleset": "nim", "start": [1, 2], "players": ["a", "é"]}
    canonical = '{"format":"nimlab-game/1","players":["a","é"],"ruleset":"nim","start":[1,2]}'
    assert record_hash(record) == hashlib.sha256(canonical.encode()).hexdigest()
    assert record_hash(record) == old_record_hash(record)


# -- the record check's fast path -----------------------------------------------------------------


def slow_check(record: Any) -> CheckedRecord | str:
    """check_record without its fast path: the result, or the error's message."""
    with mock.patch.object(archive_module, "_fast_check", lambda _record: None):
        try:
            return check_record(record)
        except RecordError as e:
            return f"RecordError: {e}"


def fast_check(record: Any) -> CheckedRecord | str:
    try:
        return check_record(record)
    except RecordError as e:
        return f"RecordError: {e}"


def test_the_usual_records_take_the_fast_path() -> None:
    for record in records():
        fast = archive_module._fast_check(record)
        assert fast is not None
        assert fast[-1] == json.dumps(record["start"])
        checked = GameRecord.from_json(record)
        assert fast[:4] == (
            [str(p) for p in checked.players],
            checked.winner,
            checked.over,
            len(checked.moves),
        )


odd_values = (
    st.none()
    | st.booleans()
    | st.integers(-2, 4)
    | st.sampled_from([2**64, -(2**64), 2**63 - 1, 2**70, 1.0, float("inf")])
    | st.text(max_size=4)
    | st.sampled_from(["x" * (MAX_TEXT + 1), "", "human:Zed", "bot:perfect:Q", "nim", "nope"])
    | st.lists(st.integers(-1, 3), max_size=3)
    | st.dictionaries(st.sampled_from(["rows", "seat", "move"]), st.integers(0, 2), max_size=2)
)
top_keys = st.sampled_from(
    ["format", "ruleset", "start", "players", "first", "seed", "started_at", "moves", "winner"]
    + ["eliminated", "over", "ended", "extra"]
)
move_keys = st.sampled_from(["seat", "move", "at", "claim", "extra"])


@st.composite
def mutated_records(draw: st.DrawFn) -> dict[str, Any]:
    record = copy.deepcopy(draw(st.sampled_from(records())))
    for _ in range(draw(st.integers(0, 3))):
        where = draw(st.sampled_from(["top", "move", "player", "heap"]))
        delete = draw(st.booleans()) and draw(st.booleans())
        if where == "top":
            target: Any = record
            key: Any = draw(top_keys)
        elif where == "move" and isinstance(record.get("moves"), list) and record["moves"]:
            target = record["moves"][draw(st.integers(0, len(record["moves"]) - 1))]
            if draw(st.booleans()) and not isinstance(target, dict):
                continue
            key = draw(move_keys)
        elif where == "player" and isinstance(record.get("players"), list) and record["players"]:
            target, key = record["players"], draw(st.integers(0, len(record["players"]) - 1))
            delete = False
        elif where == "heap" and isinstance(record.get("start"), list) and record["start"]:
            target, key = record["start"], draw(st.integers(0, len(record["start"]) - 1))
            delete = False
        else:
            continue
        if not isinstance(target, dict | list):
            continue
        if delete and isinstance(target, dict):
            target.pop(key, None)
        else:
            target[key] = draw(odd_values)
    return record


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_records())
def test_the_fast_record_check_agrees_with_game_record(record: dict[str, Any]) -> None:
    fast, slow = fast_check(record), slow_check(record)
    event("fast path" if archive_module._fast_check(record) is not None else "plain path")
    event("stored" if isinstance(slow, CheckedRecord) else "refused")
    if isinstance(fast, CheckedRecord):
        assert isinstance(slow, CheckedRecord), slow
        if fast.start_text is not None:
            assert fast.start_text == json.dumps(record["start"])
        assert dataclasses.replace(fast, start_text=None) == slow
    else:
        assert fast == slow


def test_a_record_refused_by_game_record_is_never_taken_by_the_fast_path() -> None:
    base = records()[0]
    for field, value in [
        ("first", True),
        ("seed", 2**64),
        ("started_at", "x" * (MAX_TEXT + 1)),
        ("winner", 2),
        ("eliminated", [0, 1, 0]),
        ("eliminated", [2]),
        ("eliminated", [True]),
        ("over", 1),
        ("over", None),
        ("first", 2),
        ("moves", {}),
        ("format", "nimlab-game/2"),
        ("ruleset", "no such game"),
        ("players", ["human:Ann"]),
        ("start", [-1, 2]),
    ]:
        record = {**base, field: value}
        assert archive_module._fast_check(record) is None, field
        assert isinstance(fast_check(record), str), field
    long = "x" * (MAX_TEXT + 1)
    for move_field, value in [
        ("seat", 2),
        ("seat", -1),
        ("seat", False),
        ("move", 3),
        ("move", long),
        ("at", 5),
        ("at", long),
        ("claim", 0),
        ("claim", long),
    ]:
        record = copy.deepcopy(base)
        record["moves"][0][move_field] = value
        assert archive_module._fast_check(record) is None, move_field


def test_the_checked_headers_are_a_bounded_cache() -> None:
    info = archive_module._checked_header.cache_info()
    assert info.maxsize == archive_module.HEADER_CACHE_SIZE
    big = {**records()[0], "start": [1] * 70}
    assert archive_module._header_key(big) is None  # too many heaps to be kept
    assert isinstance(fast_check(big), CheckedRecord)  # still checked, by the plain path


# -- finishing a game -----------------------------------------------------------------------------


def test_finishing_stores_the_same_text_hash_and_data(store: Store) -> None:
    for i, record in enumerate(records()):
        key = f"k{i}"
        store.add_live_game(key, {**record, "moves": []}, {"tokens": [i]})
        store.add_live_moves([(key, 1, record["moves"])])
        game_id = store.finish_live_game(key, record, ["nobody"])
        text, digest, start, moves = store.db.conn.execute(
            "SELECT record, content_hash, start, move_count FROM games WHERE id = ?", (game_id,)
        ).fetchone()
        assert text == json.dumps(record) and digest == old_record_hash(record)
        assert start == json.dumps(record["start"]) and moves == len(record["moves"])
        assert store.finished_game(key) == (game_id, {"tokens": [i]})
        assert store.live_game(key) is None
        seats = store.game(game_id).summary.seats
        assert [s.username for s in seats] == [None] * len(record["players"])
    with pytest.raises(RecordError, match="no game in progress has the key 'k0'"):
        store.finish_live_game("k0", records()[0])


# -- appending moves ------------------------------------------------------------------------------


def _touched(store: Store, key: str) -> str:
    return str(
        store.db.conn.execute("SELECT touched_at FROM live_games WHERE key = ?", (key,)).fetchone()[
            0
        ]
    )


def _stored(store: Store, key: str) -> int:
    entry = store.live_game(key)
    assert entry is not None
    return len(entry[1]["moves"])


def test_appending_moves_says_what_is_wrong_and_writes_nothing(database: str) -> None:
    record = records()[0]
    moves = record["moves"]
    with Store.open(database, limits=InPlayLimits(max_moves=4)) as store:
        store.add_live_game("k", {**record, "moves": []}, {})
        store.add_live_game("other", {**record, "moves": []}, {})
        old = "2000-01-01T00:00:00+00:00"
        store.db.conn.execute("UPDATE live_games SET touched_at = ?", (old,))
        with pytest.raises(RecordError, match=r"^no game in progress has the key 'nope'$"):
            store.add_live_moves([("nope", 1, moves[:1])])
        with pytest.raises(
            RecordError, match=r"^game 'k' has 0 moves stored: the next is move 1, not 3$"
        ):
            store.add_live_moves([("k", 3, moves[:1])])
        bad = [moves[0], {"seat": 1, "at": "now"}]
        with pytest.raises(RecordError, match=r"^move 2 of game 'k' is not a recorded move$"):
            store.add_live_moves([("k", 1, bad)])
        with pytest.raises(RecordError, match=r"^move 1 of game 'k' is not a recorded move$"):
            store.add_live_moves([("k", 1, [{"seat": "x", "move": "1 1", "at": ""}])])
        # one bad item of a batch: nothing of the batch is written
        with pytest.raises(RecordError, match="no game in progress"):
            store.add_live_moves([("other", 1, moves[:2]), ("nope", 1, moves[:1])])
        assert _stored(store, "k") == 0 and _stored(store, "other") == 0
        assert _touched(store, "k") == old and _touched(store, "other") == old
        store.add_live_moves([("k", 1, moves[:2]), ("other", 1, moves[:1])])
        assert _stored(store, "k") == 2 and _stored(store, "other") == 1
        assert _touched(store, "k") != old and _touched(store, "other") != old
        with pytest.raises(RecordError, match=r"^game 'k' already has move 2$"):
            store.add_live_moves([("k", 2, moves[1:3])])
        with pytest.raises(TooManyMovesError, match=r"^a game has at most 4 moves: game 'k' has"):
            store.add_live_moves([("k", 3, moves[2:5])])
        store.add_live_moves([("k", 3, moves[2:4])])
        entry = store.live_game("k")
        assert entry is not None and entry[1]["moves"] == moves[:4]


def test_a_move_in_the_same_second_keeps_the_time_stamp(store: Store) -> None:
    record = records()[0]
    store.add_live_game("k", {**record, "moves": []}, {})
    with mock.patch.object(clock_module.time, "time", lambda: 1_700_000_000.25):
        store.add_live_moves([("k", 1, record["moves"][:1])])
        assert _touched(store, "k") == "2023-11-14T22:13:20+00:00"
        store.add_live_moves([("k", 2, record["moves"][1:2])])
        assert _touched(store, "k") == "2023-11-14T22:13:20+00:00"
    with mock.patch.object(clock_module.time, "time", lambda: 1_700_000_001.0):
        store.add_live_moves([("k", 3, record["moves"][2:3])])
        assert _touched(store, "k") == "2023-11-14T22:13:21+00:00"


def test_the_clock_is_the_registry_clock() -> None:
    for second in (0.0, 1_700_000_000.999, 2_000_000_000.5):
        with mock.patch.object(clock_module.time, "time", lambda s=second: s):
            expected = datetime.fromtimestamp(int(second), UTC).isoformat(timespec="seconds")
            assert now_stamp() == expected
            assert now_stamp() == expected  # remembered
    before, stamp, after = now(), now_stamp(), now()
    assert stamp in (before, after)


# -- the writer -----------------------------------------------------------------------------------


def test_a_big_group_runs_few_distinct_statements_and_the_writer_reports_errors(
    store: Store,
) -> None:
    """Savepoint names repeat (w1, w2, ...), so sqlite3's statement cache keeps every statement
    of a group of 300 jobs prepared; each job still gets its own answer."""
    record = records()[0]
    keys = [f"g{i}" for i in range(150)]
    for key in keys:
        store.add_live_game(key, {**record, "moves": []}, {})
    recording = StatementLog(store.db.conn)
    store.db.conn = recording  # type: ignore[assignment]
    writer = StoreWriter(store)
    gate = threading.Event()
    writer.submit(lambda _s: gate.wait())
    moves = [writer.add_moves(key, 1, record["moves"][:1]) for key in keys]
    again = [writer.add_moves(key, 1, record["moves"][:1]) for key in keys[:5]]
    finished = [
        writer.submit(lambda s, key=key: s.finish_live_game(key, record)) for key in keys[:145]
    ]
    gate.set()
    assert [f.result() for f in moves] == [None] * 150
    for f in again:
        with pytest.raises(RecordError, match="already has move 1"):
            f.result()
    ids = [f.result() for f in finished]
    assert len(set(ids)) == 145
    writer.close()
    assert len(recording.statements) < 30, sorted(recording.statements)


def test_savepoints_inside_a_group_are_undone_alone(store: Store) -> None:
    db = store.db
    with db.group():
        with db.write():
            store.add_player("ann", given="Ann", family="A")
            with pytest.raises(RuntimeError), db.write():
                store.add_player("bob", given="Bob", family="B")
                raise RuntimeError("inner")
            with db.write(), db.write():
                store.add_player("cat", given="Cat", family="C")
        with pytest.raises(StorageError), db.write() as conn:
            store.add_player("dan", given="Dan", family="D")
            conn.execute("INSERT INTO no_such_table VALUES (1)")
        store.add_player("eve", given="Eve", family="E")
    assert [p.username for p in store.players()] == ["ann", "cat", "eve"]
    store.add_player("fay", given="Fay", family="F")  # a transaction of its own again
    assert store.db.conn.in_transaction is False
    assert len(store.players()) == 4


def test_the_writers_own_jobs_share_one_savepoint(store: Store) -> None:
    record = records()[0]
    keys = [f"g{i}" for i in range(40)]
    for key in keys:
        store.add_live_game(key, {**record, "moves": []}, {"n": key})
    counting = StatementLog(store.db.conn)
    store.db.conn = counting  # type: ignore[assignment]
    writer, gate = held_writer(store)
    moves = [writer.add_moves(key, 1, record["moves"][:2]) for key in keys]
    again = writer.add_moves(keys[0], 2, record["moves"][1:2])  # fails, changing nothing
    finished = [writer.finish_game(key, record, ["nobody"]) for key in keys[:20]]
    gate.set()
    assert [f.result() for f in moves] == [None] * 40
    with pytest.raises(RecordError, match="already has move 2"):
        again.result()
    ids = [f.result() for f in finished]
    writer.close()
    savepoints = {sql: n for sql, n in counting.counts.items() if sql.startswith("SAVEPOINT")}
    # the holding job's and the run's; on PostgreSQL a group of the writer's own jobs only
    # has none (its transaction is their savepoint: a savepoint costs two round trips there)
    run = 1 if store.db.dialect == "sqlite" else 0
    assert savepoints == {"SAVEPOINT w1": 1 + run}
    with Store.open(store.path) as check:
        assert [check.finished_game(k) for k in keys[:20]] == [
            (i, {"n": k}) for i, k in zip(ids, keys[:20], strict=True)
        ]
        assert len(check.live_games()) == 20
        assert all(len(r["moves"]) == 2 for _, r, _ in check.live_games())


def refuse(store: Store, name: str, when: str, condition: str, message: str) -> None:
    """A trigger ``name`` that makes a statement fail with ``message`` (``when``: e.g.
    ``BEFORE INSERT ON live_moves``, ``condition`` on its ``NEW`` or ``OLD`` row)."""
    conn = store.db.conn
    if store.db.dialect == "sqlite":
        conn.execute(
            f"CREATE TRIGGER {name} {when} WHEN {condition} "
            f"BEGIN SELECT RAISE(ABORT, '{message}'); END"
        )
        return
    returned = "NEW" if "INSERT" in when else "OLD"
    conn.execute(
        f"CREATE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS "
        f"$$ BEGIN IF {condition} THEN RAISE EXCEPTION '{message}'; END IF; "
        f"RETURN {returned}; END $$"
    )
    conn.execute(f"CREATE TRIGGER {name} {when} FOR EACH ROW EXECUTE FUNCTION {name}()")


def test_a_shared_job_that_fails_after_writing_is_undone_alone(store: Store) -> None:
    """A job fails after changing rows: the shared savepoint is undone and the jobs run again,
    each in its own; every job ends as it would alone."""
    record = records()[0]
    keys = ["a", "b", "c", "d", "e", "f"]
    for key in keys:
        store.add_live_game(key, {**record, "moves": []}, {})
    store.add_live_moves([("f", 1, record["moves"][:1])])
    refuse(store, "boom", "BEFORE INSERT ON live_moves", "NEW.move = 'boom'", "no boom")
    refuse(store, "keep", "BEFORE DELETE ON live_games", "OLD.key = 'e'", "kept")
    boom = [record["moves"][0], {**record["moves"][1], "move": "boom"}]
    writer, gate = held_writer(store)
    jobs = {
        "a": writer.add_moves("a", 1, record["moves"][:2]),
        "b": writer.add_moves("b", 2, record["moves"][:1]),  # fails before writing
        "c": writer.finish_game("c", record),
        "d": writer.add_moves("d", 1, boom),  # fails after writing its first move
        "e": writer.finish_game("e", record),  # fails after storing the finished game
        "x": writer.submit(lambda s: s.add_live_moves([("f", 2, record["moves"][1:2])])),
        "f": writer.add_moves("f", 3, record["moves"][2:3]),  # after the function's move
    }
    gate.set()
    assert jobs["a"].result() is None and jobs["x"].result() is None
    assert jobs["f"].result() is None
    with pytest.raises(RecordError, match="the next is move 1, not 2"):
        jobs["b"].result()
    with pytest.raises(StorageError, match="no boom"):
        jobs["d"].result()
    with pytest.raises(StorageError, match="kept"):
        jobs["e"].result()
    game_id = jobs["c"].result()
    writer.close()
    with Store.open(store.path) as check:
        live = {k: r for k, r, _ in check.live_games()}
        assert sorted(live) == ["a", "b", "d", "e", "f"]
        assert [len(live[k]["moves"]) for k in sorted(live)] == [2, 0, 0, 0, 3]
        assert check.game_count() == 1 and check.game(game_id).record == record
        assert check.finished_game("e") is None


def test_a_group_of_the_writers_own_jobs_undone_and_run_again_announces_what_commits(
    store: Store,
) -> None:
    """A group of the writer's own jobs only (on PostgreSQL run without any savepoint: the
    group's transaction is theirs) where one fails after writing: the group is undone and run
    again, every job ends as it would alone, and only the changes committed are announced."""
    record = records()[0]
    moves = record["moves"]
    for key in ("a", "c", "d", "m", "z"):
        store.add_live_game(key, {**record, "moves": []}, {})
    refuse(store, "boom", "BEFORE INSERT ON live_moves", "NEW.move = 'boom'", "no boom")
    feed = ChangeFeed.open(store.path)
    try:
        writer, gate = held_writer(store)
        jobs = [
            writer.add_moves("a", 1, moves[:2], expect=0),
            writer.add_moves("c", 1, moves[:1], expect=5),  # refused before writing
            writer.add_moves("d", 1, [moves[0], {**moves[1], "move": "boom"}], expect=0),
            writer.finish_game("m", record, first=1, moves=moves, expect=0),
            writer.add_game("n", {**record, "moves": []}, {}, client="c", public=True),
        ]
        gate.set()
        assert jobs[0].result() is None and jobs[4].result() is None
        with pytest.raises(StaleGameError):
            jobs[1].result()
        with pytest.raises(StorageError, match="no boom"):
            jobs[2].result()
        game_id = jobs[3].result()
        writer.close()
        with Store.open(store.path) as check:
            live = {k: r for k, r, _ in check.live_games()}
            assert sorted(live) == ["a", "c", "d", "n", "z"]
            assert [len(live[k]["moves"]) for k in sorted(live)] == [2, 0, 0, 0, 0]
            assert check.game(game_id).record == record
            assert check.public_games_in_play(limit=10) == [("n", 0)]
            assert check.count_games_in_play("c") == 1
            check.take_back_live_moves("z", 0, expect=0)  # the last change to read up to
        seen: list[Change] = []
        while Change("z", 1) not in seen:
            seen += feed.wait(PATIENCE).changes
        assert seen == [Change("a", 1), Change("m", 1), Change("m", 2), Change("z", 1)]
    finally:
        feed.close()


def test_unguarded_writes_need_a_savepoint_of_a_group(store: Store) -> None:
    with pytest.raises(StorageError, match="inside a write block of a group"), store.db.unguarded():
        pass
    with store.db.group(), pytest.raises(StorageError), store.db.unguarded():
        pass


def test_a_finish_with_its_last_moves_is_one_transaction(store: Store) -> None:
    """finish_game with the moves not stored yet: both or neither. Moves that do not follow
    the stored ones leave the game in play as it was, and nothing finished."""
    record = records()[0]
    moves = record["moves"]
    for key in ("ok", "gap", "late"):
        store.add_live_game(key, {**record, "moves": []}, {})
        store.add_live_moves([(key, 1, moves[:1])])
    writer = StoreWriter(store)
    ok = writer.finish_game("ok", record, first=2, moves=moves[1:])
    gap = writer.finish_game("gap", record, first=3, moves=moves[2:])  # move 2 is missing
    store_late = writer.finish_game("late", record, first=1, moves=moves)  # move 1 is stored
    game_id = ok.result()
    with pytest.raises(RecordError, match="the next is move 2, not 3"):
        gap.result()
    with pytest.raises(RecordError, match="already has move 1"):
        store_late.result()
    writer.close()
    with Store.open(store.path) as check:
        live = {k: r for k, r, _ in check.live_games()}
        assert sorted(live) == ["gap", "late"] and all(len(r["moves"]) == 1 for r in live.values())
        assert check.game(game_id).record == record and check.finished_game("gap") is None


def test_no_driver_error_leaves_the_storage(tmp_path: Path) -> None:
    """What the web app asks of a database that went away (its connection closed under it)
    fails with the storage's own StorageError, never sqlite3's: the web app catches only
    those (it caught sqlite3.Error too, in case)."""
    import sqlite3

    from nimlab.storage import ChangeFeed, StorageError

    path = str(tmp_path / "gone.db")
    store = Store.open(path)
    store.add_live_game("k1", {"game": "nim", "piles": [3], "moves": []}, {})
    feed = ChangeFeed.open(path)
    calls = [
        lambda: store.count_games_in_play(),
        lambda: store.live_version("k1"),
        lambda: store.live_game_with_version("k1"),
        lambda: store.finished_game("k1"),
        lambda: store.public_games_in_play(limit=5),
        lambda: store.expire_games_in_play(),
        lambda: store.take_back_live_moves("k1", 0, expect=0),
        lambda: store.add_live_game("k2", {"game": "nim", "piles": [3], "moves": []}, {}),
        lambda: feed.wait(0),
    ]
    store.db.conn.close()
    feed._db.conn.close()  # type: ignore[attr-defined]
    for call in calls:
        with pytest.raises(StorageError) as caught:
            call()
        assert not isinstance(caught.value, sqlite3.Error)
