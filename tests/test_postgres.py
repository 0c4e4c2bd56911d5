"""PostgreSQL as the database: what only it has (URLs, a server that can go away, the copy between
databases), and the web app on it. The storage's behaviour on both databases is checked by the
storage tests themselves (their ``database`` fixture)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from fastapi.testclient import TestClient

import postgres
import test_web_api as web
from nimlab.core.game import Game
from nimlab.storage import (
    SCHEMA_VERSION,
    NoDatabaseError,
    ReadOnlyError,
    StorageError,
    Store,
    resolve_db_path,
)
from nimlab.storage.connection import shown_db
from nimlab.web import create_app
from processes import PATIENCE, nimlab
from schemas import back_to_version


def _finished(players: tuple[str, str] = ("human:Ann", "bot:perfect:Hal")) -> Game:
    game = Game("nim", [1], players, seed=1)
    game.push("1 1")
    return game


def _terminate(cluster: str, store: Store) -> None:
    """End the store's connection from the server's side (as a restart of the server does)."""
    pid = store.db.conn.raw.info.backend_pid  # type: ignore[attr-defined]
    with psycopg.connect(cluster, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (pid,))


# -- URLs and opening -----------------------------------------------------------------------------


def test_a_url_is_a_postgresql_database_shown_without_its_password(postgres_url: str) -> None:
    assert resolve_db_path("postgresql://lee:secret@db.example/club") == (
        "postgresql://lee:secret@db.example/club"
    )
    assert resolve_db_path("postgres://db.example/club") == "postgres://db.example/club"
    assert shown_db("postgresql://lee:secret@db.example:5433/club") == (
        "postgresql://lee:***@db.example:5433/club"
    )
    assert shown_db("postgresql://db.example/club?password=secret&x=1") == (
        "postgresql://db.example/club?password=***&x=1"
    )
    with Store.open(postgres_url) as store:
        assert store.db.dialect == "postgresql" and store.db.url == postgres_url
        assert store.problems() == []
        assert store.db.one("SHOW lock_timeout") == ("30s",)  # SQLite's busy timeout
        version = store.db.one("SELECT version FROM schema_version")
        assert version == (SCHEMA_VERSION,)
    with Store.open(":memory:") as store:
        assert store.db.dialect == "sqlite" and store.db.url is None


@pytest.mark.parametrize(
    ("where", "said"),
    [
        ("postgresql://lee:secret@127.0.0.1:1/club", "Connection refused"),
        ("{cluster}/nosuch", 'database "nosuch" does not exist'),
        ("{cluster_as_nobody}", 'role "nobody" does not exist'),
        ("postgresql://lee:secret@127.0.0.1:99999999/club", "port"),
    ],
)
def test_a_database_that_cannot_be_opened_is_one_line_and_status_2(
    postgres_cluster: str, where: str, said: str
) -> None:
    host = postgres_cluster.split("?", 1)[1]
    url = where.format(
        cluster=postgres_cluster.split("/postgres?")[0],
        cluster_as_nobody=postgres_cluster.replace("postgres@", "nobody:secret@"),
    )
    if "{cluster}" in where:
        url = f"{url}?{host}"
    for command in (["history"], ["players", "add", "a", "--given", "A", "--family", "B"]):
        r = nimlab(*command, "--db", url)
        assert r.returncode == 2, (command, r.stdout, r.stderr)
        assert r.stderr.startswith("error: cannot open the PostgreSQL database"), r.stderr
        assert said in r.stderr and r.stderr.count("\n") == 1, r.stderr
        assert "secret" not in r.stderr and "Traceback" not in r.stderr
    r = nimlab("serve", "--port", "0", "--db", url)
    assert r.returncode == 2 and "cannot open the PostgreSQL database" in r.stderr
    r = nimlab("serve", "--print-config", "--db", url)
    assert r.returncode == 0 and "db = " in r.stdout and "secret" not in r.stdout
    r = nimlab("serve", "--print-config", env={"NIMLAB_DB": url})
    assert "db = " in r.stdout and "NIMLAB_DB" in r.stdout and "secret" not in r.stdout
    r = nimlab("serve", "--port", "0", env={"NIMLAB_DB": url})
    assert r.returncode == 2 and "cannot open the PostgreSQL database" in r.stderr


def test_a_wrong_password_is_one_line_and_status_2(postgres_cluster: str) -> None:
    role = postgres.PASSWORD_ROLE
    right = postgres_cluster.replace("postgres@", f"{role}:{postgres.PASSWORD}@")
    try:
        psycopg.connect(right.replace(postgres.PASSWORD, "a-wrong-one")).close()
    except psycopg.OperationalError:
        pass
    else:  # a cluster of the developer's own that takes any password: nothing to check
        pytest.skip("this cluster does not ask for passwords")
    psycopg.connect(right).close()
    r = nimlab("history", "--db", right.replace(postgres.PASSWORD, "a-wrong-one"))
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "password authentication failed" in r.stderr and "check the user and password" in (
        r.stderr
    )
    assert "a-wrong-one" not in r.stderr and "Traceback" not in r.stderr


def test_read_only_commands_create_nothing_and_refuse_writes(
    empty_postgres_url: str, postgres_url: str
) -> None:
    with pytest.raises(NoDatabaseError, match="no nimlab tables yet"):
        Store.open(empty_postgres_url, read_only=True)
    r = nimlab("history", "--db", empty_postgres_url)
    assert r.returncode == 2 and "no nimlab tables yet" in r.stderr
    assert (
        "made when a game or player is first saved"
        in nimlab("db", "--db", empty_postgres_url).stdout
    )
    with psycopg.connect(empty_postgres_url) as conn:
        assert conn.execute("SELECT to_regclass('schema_version')").fetchone() == (None,)
    with Store.open(postgres_url) as store:
        store.add_player("ann", given="Ann", family="A")
    with Store.open(postgres_url, read_only=True) as ro:
        assert [p.username for p in ro.players()] == ["ann"]
        with pytest.raises(ReadOnlyError):
            ro.add_player("bob", given="Bob", family="B")
        with pytest.raises(ReadOnlyError):
            ro.require_writable()


def test_several_processes_may_make_the_schema_at_once(empty_postgres_url: str) -> None:
    errors: list[BaseException] = []

    def open_it() -> None:
        try:
            Store.open(empty_postgres_url).close()
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=open_it) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    with Store.open(empty_postgres_url) as store:
        assert store.db.one("SELECT COUNT(*), MAX(version) FROM schema_version") == (
            1,
            SCHEMA_VERSION,
        )
        assert store.problems() == []


def test_what_only_sqlite_does_says_what_to_use_instead(postgres_url: str, tmp_path: Path) -> None:
    r = nimlab("db", "backup", str(tmp_path / "copy.db"), "--db", postgres_url)
    assert r.returncode == 2 and "pg_dump" in r.stderr and "nimlab db copy" in r.stderr
    assert not (tmp_path / "copy.db").exists()
    with Store.open(postgres_url) as store:
        with pytest.raises(StorageError, match="pg_dump"):
            store.backup(tmp_path / "copy.db")
        with pytest.raises(StorageError, match="pg_amcheck"):
            store.integrity_check()


# -- a connection lost while serving --------------------------------------------------------------


def test_a_lost_connection_fails_its_transaction_and_the_next_one_reconnects(
    postgres_cluster: str, postgres_url: str
) -> None:
    with Store.open(postgres_url) as store:
        store.add_player("ann", given="Ann", family="A")
        _terminate(postgres_cluster, store)  # while idle: the next read reconnects unseen
        assert [p.username for p in store.players()] == ["ann"]
        _terminate(postgres_cluster, store)  # the next write too (its BEGIN runs again)
        store.add_player("bob", given="Bob", family="B")
        with pytest.raises(StorageError, match="lost"), store.db.group():
            store.add_player("cat", given="Cat", family="C")
            _terminate(postgres_cluster, store)  # inside the transaction: it is gone
            store.add_player("dan", given="Dan", family="D")
        assert not store.db.conn.in_transaction
        store.add_player("eve", given="Eve", family="E")  # and the next one reconnects
        assert [p.username for p in store.players()] == ["ann", "bob", "eve"]


def test_a_lost_connection_fails_the_writers_group_and_the_next_group_works(
    postgres_cluster: str, postgres_url: str
) -> None:
    from storetools import held_writer

    writer, gate = held_writer(Store.open(postgres_url))
    try:

        def lose(s: Store) -> None:
            s.add_player("bob", given="Bob", family="B")
            _terminate(postgres_cluster, s)

        group = [  # one group: the jobs submitted while the writer is held
            writer.submit(lambda s: s.add_player("ann", given="Ann", family="A")),
            writer.submit(lose),
            writer.submit(lambda s: s.add_player("cat", given="Cat", family="C")),
        ]
        gate.set()
        for future in group:
            with pytest.raises(StorageError, match="lost"):
                future.result(60)
        writer.submit(lambda s: s.add_player("dan", given="Dan", family="D")).result(60)
    finally:
        writer.close()
    with Store.open(postgres_url) as check:
        assert [p.username for p in check.players()] == ["dan"]


# -- nimlab db copy -------------------------------------------------------------------------------


def _club(store: Store) -> None:
    """Players, finished games (one resigned, one asked to be deleted by a seat), a game in
    play with moves and a finished one's web link."""
    store.add_player("ann", given="Ann", family="A")
    store.add_player("hal", given="Hal", family="H", bot="perfect")
    store.save_game(_finished().to_record(), ["ann", "hal"])
    resigned = Game("nim", [3, 4], ["human:Ann", "human:Bob"], seed=2)
    resigned.push("1 1")
    record = resigned.to_record() | {"ended": {"how": "resigned", "seat": 1, "winners": [0]}}
    gid = store.save_game(record, ["ann", None])
    store.request_delete(gid, 0, [0, 1])
    playing = Game("nim", [5, 6], ["human:Ann", "human:Bob"], seed=3)
    store.add_live_game("k1", playing.to_record(), {"tokens": {}}, client="1.2.3.4")
    playing.push("1 2")
    playing.push("2 1")
    store.add_live_moves([("k1", 1, playing.to_record()["moves"])])
    store.add_live_game("k2", _finished().to_record() | {"moves": []}, {"x": 1})
    store.finish_live_game("k2", _finished().to_record(), [None, None])
    store.add_live_game("k3", playing.to_record() | {"moves": []}, {}, public=True)


def _contents(store: Store) -> dict[str, Any]:
    return {
        "export": store.export_games(),
        "players": [p.to_json() for p in store.players()],
        "history_ann": [g.id for g in store.games(username="ann")],
        "in_play": store.live_games(),
        "finished_key": store.finished_game("k2"),
        "public": store.public_games_in_play(limit=10),
    }


def test_db_copy_carries_everything_both_ways_and_says_the_counts(
    postgres_url: str, tmp_path: Path
) -> None:
    source = str(tmp_path / "club.db")
    with Store.open(source) as store:
        _club(store)
        before = _contents(store)
    assert before["public"] == [("k3", 0)]
    r = nimlab("db", "copy", "--from", source, "--to", postgres_url)
    assert r.returncode == 0, r.stderr
    assert (
        "Copied 2 players, 3 finished games (6 seats), 2 games in play (2 moves)" in r.stdout
        and "the counts match" in r.stdout
    )
    with Store.open(postgres_url) as store:
        assert json.loads(json.dumps(_contents(store))) == json.loads(json.dumps(before))
        added = store.save_game(_finished().to_record(), update_stats=False)  # ids go on
        assert added == max(g["id"] for g in before["export"]["games"]) + 1
        store.delete_game(added)
    back = str(tmp_path / "back.db")
    r = nimlab("db", "copy", "--from", postgres_url, "--to", back)
    assert r.returncode == 0, r.stderr
    with Store.open(back) as store:
        assert json.loads(json.dumps(_contents(store))) == json.loads(json.dumps(before))
    for target in (postgres_url, back):  # a database that holds anything is refused
        r = nimlab("db", "copy", "--from", source, "--to", target)
        assert r.returncode == 2 and "is not empty (2 players, 3 finished games" in r.stderr
    r = nimlab("db", "copy", "--from", postgres_url, "--to", postgres_url)
    assert r.returncode == 2 and "the same database" in r.stderr


# -- the web app on PostgreSQL --------------------------------------------------------------------


@pytest.fixture
def client(postgres_url: str) -> Iterator[TestClient]:
    with TestClient(create_app(postgres_url, settings=web.PATIENT), client=web.LOOPBACK) as c:
        yield c


def test_web_moves_get_the_bots_reply(client: TestClient) -> None:
    web.test_a_move_gets_the_bots_reply_in_the_same_answer(client)


def test_web_finished_games_statistics_rankings_and_replay(client: TestClient) -> None:
    web.test_finished_games_are_stored_with_statistics_and_replay(client)


def test_web_spectators_receive_every_move(client: TestClient) -> None:
    web.test_spectators_receive_every_move_live(client)


def test_web_a_restart_resumes_every_unfinished_game(postgres_url: str) -> None:
    web.test_a_restart_resumes_every_unfinished_game(postgres_url)


def test_web_a_game_finished_before_a_crash_is_stored_at_restart(postgres_url: str) -> None:
    web.test_a_game_finished_before_a_crash_is_stored_at_restart(postgres_url)


def test_sqlite_users_never_load_psycopg(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from nimlab.storage import Store\n"
        f"Store.open({str(tmp_path / 'x.db')!r}).close()\n"
        "assert 'psycopg' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=PATIENCE)


def test_web_moves_answer_503_while_the_database_is_away_and_play_on_when_it_is_back(
    postgres_cluster: str, postgres_url: str
) -> None:
    name = postgres.database_name(postgres_url)

    def allow(allowed: bool) -> None:
        with psycopg.connect(postgres_cluster, autocommit=True) as admin:
            admin.execute(f"ALTER DATABASE {name} ALLOW_CONNECTIONS {str(allowed).lower()}")
            if not allowed:  # and end the server's connections, as a stopped server does
                admin.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s",
                    (name,),
                )

    with TestClient(create_app(postgres_url, settings=web.PATIENT), client=web.LOOPBACK) as c:
        state, tokens = web.new_game(c, players=[{"name": "Ann"}, {"name": "Bob"}], piles=[3, 4])
        key = state["id"]
        assert web.move(c, key, seat=0, token=tokens[0], pile=1, take=1).status_code == 200
        try:
            allow(False)
            r = web.move(c, key, seat=1, token=tokens[1], pile=2, take=1)
            assert r.status_code == 503 and "could not be saved" in r.json()["detail"]
            assert name not in r.text and "postgres" not in r.text  # only in the log
            assert c.get(f"/api/games/{key}").json()["move_count"] == 1  # not played
        finally:
            allow(True)
        r = web.move(c, key, seat=1, token=tokens[1], pile=2, take=1)  # no restart needed
        assert r.status_code == 200 and r.json()["move_count"] == 2
    with Store.open(postgres_url) as store:
        entry = store.live_game(key)
        assert entry is not None and len(entry[1]["moves"]) == 2


def test_the_storages_statements_are_translated_for_psycopg() -> None:
    from nimlab.storage.postgres import translate

    assert translate("SELECT a FROM t WHERE b = ? AND c = ?") == (
        "SELECT a FROM t WHERE b = %s AND c = %s",
        None,
        False,
    )
    assert translate("SELECT ?2, ?1, ?1 WHERE x LIKE 'a%'") == (
        "SELECT %s, %s, %s WHERE x LIKE 'a%%'",
        (1, 0, 0),
        False,
    )
    assert translate("SELECT ?2, ?") == ("SELECT %s, %s", (1, 2), False)  # as SQLite numbers
    assert translate("BEGIN IMMEDIATE") == ("BEGIN", None, False)
    for verb in ("INSERT INTO t VALUES (?)", " update t SET a = ?", "DELETE FROM t"):
        assert translate(verb)[2] is True


def test_an_old_postgres_schema_is_refused_until_migrated_after_a_dump(
    fresh_postgres_url: str,
) -> None:
    url = fresh_postgres_url
    with Store.open(url) as store:
        store.add_player("ann", given="Ann", family="A")
    with psycopg.connect(url, autocommit=True) as conn:  # back to what schema version 4 was
        back_to_version(conn, 4)
    for command in (("db",), ("players", "show")):
        r = nimlab(*command, "--db", url)
        assert r.returncode == 1, r.stderr
        [line] = r.stderr.splitlines()
        assert "schema version 4" in line and "`nimlab db migrate --db " in line, line
    r = nimlab("db", "migrate", "--db", url)  # a dump first: pg_dump, then --no-backup
    assert r.returncode == 2 and "pg_dump" in r.stderr and "--no-backup" in r.stderr
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT version FROM schema_version").fetchone() == (4,)
    r = nimlab("db", "migrate", "--no-backup", "--db", url)
    assert r.returncode == 0, r.stderr
    assert f"from schema version 4 to {SCHEMA_VERSION} (no copy made)" in r.stdout
    r = nimlab("players", "show", "--db", url)
    assert r.returncode == 0 and "ann" in r.stdout
