"""The event loop's database writer (LoopWriter): the jobs submitted in one turn of the loop are
one group (one COMMIT), run on the loop's thread while BEGIN and COMMIT run on another (on
PostgreSQL the whole group runs on that other thread); each job
ends as it would alone; a group that cannot begin or commit fails its jobs and leaves the writer
working; close finishes what was submitted. In-process, no timing."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from nimlab.core.game import Game
from nimlab.storage import LoopWriter, RecordError, Store, StoreWriter, WriterBusyError
from nimlab.storage.errors import StorageError
from storetools import StatementLog


@pytest.fixture
def store(database: str) -> Iterator[Store]:
    """A new store, on SQLite and on PostgreSQL."""
    with Store.open(database) as s:
        yield s


def finished_record() -> dict[str, Any]:
    game = Game("nim", [2, 3], ["human:Ann", "bot:perfect:Hal"], seed=1)
    while not game.is_over:
        game.push(sorted(game.legal_moves, key=str)[0])
    return game.to_record()


def test_one_turns_jobs_are_one_group_run_on_the_loop_and_committed_elsewhere(
    store: Store,
) -> None:
    """On SQLite the jobs run on the loop's thread, BEGIN and COMMIT on another; on PostgreSQL,
    whose every statement is a round trip to the server, the whole group runs on that other
    thread (the loop serves requests meanwhile)."""
    record = finished_record()
    keys = [f"g{i}" for i in range(30)]
    for key in keys:
        store.add_live_game(key, {**record, "moves": []}, {})
    counting = StatementLog(store.db.conn)
    store.db.conn = counting  # type: ignore[assignment]

    async def main() -> tuple[list[Any], int, int]:
        writer = LoopWriter(store)
        loop_thread = threading.get_ident()
        ran_on: list[int] = []
        futures: list[asyncio.Future[Any]] = [
            writer.add_moves(k, 1, record["moves"][:1]) for k in keys
        ]
        futures.append(writer.submit(lambda s: ran_on.append(threading.get_ident())))
        futures += [
            writer.finish_game(k, record, first=2, moves=record["moves"][1:]) for k in keys[:10]
        ]
        results = await asyncio.gather(*futures)
        await writer.close()
        return results, loop_thread, ran_on[0]

    results, loop_thread, ran_on = asyncio.run(main())
    assert results[:31] == [None] * 31 and len(set(results[31:])) == 10
    begins = [t for sql, t in counting.seen if sql == "BEGIN IMMEDIATE"]
    commits = [t for sql, t in counting.seen if sql == "COMMIT"]
    assert len(begins) == 1 and len(commits) == 1  # one group for the whole turn
    assert begins[0] != loop_thread and commits[0] != loop_thread
    jobs_thread = loop_thread if store.db.dialect == "sqlite" else begins[0]
    assert ran_on == jobs_thread
    jobs_threads = {t for sql, t in counting.seen if sql.startswith(("INSERT", "SAVEPOINT"))}
    assert jobs_threads == {jobs_thread}
    with Store.open(store.path) as check:
        live = {k: r for k, r, _ in check.live_games()}
        assert sorted(live) == sorted(keys[10:]) and all(
            len(r["moves"]) == 1 for r in live.values()
        )
        assert check.game_count() == 10


def test_each_job_ends_as_alone_and_results_wait_for_the_commit(store: Store) -> None:
    record = finished_record()
    store.add_live_game("a", {**record, "moves": []}, {})
    seen_before_commit: list[bool] = []

    async def main() -> None:
        writer = LoopWriter(store)
        ok = writer.add_moves("a", 1, record["moves"][:1])
        twice = writer.add_moves("a", 1, record["moves"][:1])  # fails: move 1 is stored
        missing = writer.finish_game("nope", record)

        def broken(s: Store) -> None:
            with s.db.write() as conn:
                conn.execute("DELETE FROM live_games")
            raise RuntimeError("injected after writing")

        fails = writer.submit(broken)
        seen_before_commit.append(ok.done())
        await asyncio.sleep(0)
        seen_before_commit.append(ok.done())
        assert await ok is None
        with pytest.raises(RecordError, match="already has move 1"):
            await twice
        with pytest.raises(RecordError, match="no game in progress"):
            await missing
        with pytest.raises(RuntimeError, match="injected"):
            await fails
        await writer.close()

    asyncio.run(main())
    assert seen_before_commit == [False, False]
    with Store.open(store.path) as check:
        [(key, live, _)] = check.live_games()  # the failing job's delete was undone alone
        assert key == "a" and len(live["moves"]) == 1


def test_a_group_that_cannot_begin_or_commit_fails_its_jobs_and_the_next_one_works(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    record = finished_record()
    store.add_live_game("a", {**record, "moves": []}, {})
    db = store.db
    real_begin, real_end = db.begin_group, db.end_group
    failures = {"begin": 1, "commit": 1}

    def begin() -> None:
        if failures["begin"]:
            failures["begin"] -= 1
            raise StorageError("injected: the database is busy")
        real_begin()

    def end(*, commit: bool) -> None:
        if commit and failures["commit"]:
            failures["commit"] -= 1
            real_end(commit=False)
            raise StorageError("injected: the disk is full")
        real_end(commit=commit)

    monkeypatch.setattr(db, "begin_group", begin)
    monkeypatch.setattr(db, "end_group", end)

    async def main() -> None:
        writer = LoopWriter(store)
        with pytest.raises(StorageError, match="busy"):
            await writer.add_moves("a", 1, record["moves"][:1])
        with pytest.raises(StorageError, match="disk is full"):
            await writer.add_moves("a", 1, record["moves"][:1])
        assert await writer.add_moves("a", 1, record["moves"][:2]) is None
        await writer.close()

    asyncio.run(main())
    with Store.open(store.path) as check:
        [(_, live, _)] = check.live_games()
        assert len(live["moves"]) == 2  # the failed groups kept nothing


def test_cancelled_jobs_are_skipped_close_finishes_and_bounds_hold(store: Store) -> None:
    record = finished_record()
    store.add_live_game("a", {**record, "moves": []}, {})

    async def main() -> None:
        writer = LoopWriter(store, max_pending=3)
        dropped = writer.add_moves("a", 1, record["moves"][:1])
        kept = writer.add_moves("a", 1, record["moves"][:2])
        writer.submit(lambda s: None)
        with pytest.raises(WriterBusyError, match="3 writes waiting"):
            writer.submit(lambda s: None)
        dropped.cancel()
        await writer.close()  # waits for the jobs submitted
        assert kept.done() and kept.result() is None
        with pytest.raises(StorageError, match="closed"):
            writer.submit(lambda s: None)
        await writer.close()  # idempotent

    asyncio.run(main())
    with Store.open(store.path) as check:
        [(_, live, _)] = check.live_games()
        assert len(live["moves"]) == 2


def _vacuums_of_live_games(url: str) -> int:
    """How many times ``live_games`` was vacuumed by hand (not by autovacuum), asked on a
    connection of its own."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT vacuum_count FROM pg_stat_user_tables WHERE relname = 'live_games'"
        ).fetchone()
    return int(row[0]) if row else 0


def test_the_games_in_play_are_vacuumed_between_groups_once_enough_have_left(
    store: Store,
) -> None:
    """Every start counts the games in play; on PostgreSQL the count reads every row a game
    left behind until the table is vacuumed (autovacuum: at most once a minute), so the writer
    vacuums it itself once ``tidy_after`` games have left, after their group is answered and
    outside any transaction; never on SQLite."""
    record = finished_record()
    keys = [f"g{i}" for i in range(9)]
    for key in keys:
        store.add_live_game(key, {**record, "moves": []}, {})
    store.in_play.tidy_after = 5
    pg = store.db.dialect != "sqlite"
    before = _vacuums_of_live_games(str(store.path)) if pg else 0
    counting = StatementLog(store.db.conn)
    store.db.conn = counting  # type: ignore[assignment]

    async def main() -> list[bool]:
        writer = LoopWriter(store)
        first = [writer.finish_game(k, record, first=1, moves=record["moves"]) for k in keys[:6]]
        await asyncio.gather(*first)  # one group: 6 games left, 5 were enough
        due = [store.in_play.tidy_due]
        second = [writer.finish_game(k, record, first=1, moves=record["moves"]) for k in keys[6:]]
        await asyncio.gather(*second)  # 3 more: not enough for another
        due.append(store.in_play.tidy_due)
        await writer.close()
        return due

    due = asyncio.run(main())
    statements = [sql for sql, _ in counting.seen]
    vacuums = [i for i, sql in enumerate(statements) if sql.startswith("VACUUM")]
    if not pg:
        assert vacuums == [] and due == [False, False]
        return
    assert len(vacuums) == 1 and due[1] is False
    commits = [i for i, sql in enumerate(statements) if sql == "COMMIT"]
    begins = [i for i, sql in enumerate(statements) if sql == "BEGIN IMMEDIATE"]
    assert commits[0] < vacuums[0] < begins[1]  # between the two groups
    assert _vacuums_of_live_games(str(store.path)) == before + 1
    with Store.open(store.path) as check:
        assert check.live_games() == [] and check.game_count() == 9


def test_the_thread_writer_vacuums_between_groups_too(postgres_url: str) -> None:
    """:class:`StoreWriter` (the writer on a thread of its own) tidies as the loop's writer
    does: after the group in which enough games left, outside any transaction."""
    record = finished_record()
    with Store.open(postgres_url) as store:
        for key in ("a", "b", "c"):
            store.add_live_game(key, {**record, "moves": []}, {})
        store.in_play.tidy_after = 2
        before = _vacuums_of_live_games(postgres_url)
        counting = StatementLog(store.db.conn)
        store.db.conn = counting  # type: ignore[assignment]
        writer = StoreWriter(store)
        writer.finish_game("a", record, moves=record["moves"]).result(10)
        assert not any(sql.startswith("VACUUM") for sql, _ in counting.seen)  # 1 of 2
        writer.finish_game("b", record, moves=record["moves"]).result(10)
        writer.flush(10)
        writer.close()
        statements = [sql for sql, _ in counting.seen]
        vacuum = statements.index("VACUUM (SKIP_LOCKED, TRUNCATE false) live_games")
        assert statements[vacuum - 1] == "COMMIT" and statements.count(statements[vacuum]) == 1
        assert _vacuums_of_live_games(postgres_url) == before + 1


def test_a_vacuum_that_fails_is_not_the_writers_failure(postgres_url: str) -> None:
    """``tidy`` never raises: a vacuum refused by the database leaves the writer writing, and
    is tried again once ``tidy_after`` more games have left (here each game)."""
    from nimlab.storage.backend import BackendError

    store = Store.open(postgres_url)
    record = finished_record()
    for key in ("a", "b", "c"):
        store.add_live_game(key, {**record, "moves": []}, {})
    store.in_play.tidy_after, store.in_play.tidy_interval = 1, 0.0
    real = store.db.conn

    class Refusing(StatementLog):
        def execute(self, sql: str, *args: Any) -> Any:
            if sql.startswith("VACUUM"):
                self.seen.append((sql, threading.get_ident()))
                raise BackendError("injected: must be owner of table live_games")
            return super().execute(sql, *args)

    refusing = Refusing(real)
    store.db.conn = refusing  # type: ignore[assignment]

    async def main() -> None:
        writer = LoopWriter(store)
        assert isinstance(await writer.finish_game("a", record, moves=record["moves"]), int)
        assert isinstance(await writer.finish_game("b", record, moves=record["moves"]), int)
        await writer.close()

    asyncio.run(main())
    assert sum(sql.startswith("VACUUM") for sql, _ in refusing.seen) == 2
    with Store.open(postgres_url) as check:
        assert [k for k, _, _ in check.live_games()] == ["c"]
