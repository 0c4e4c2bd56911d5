"""``nimlab db backup PATH``: a copy of the database made while the server uses it (SQLite's
online backup), with the server answering meanwhile."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from nimlab.storage import SCHEMA_VERSION, Store
from processes import PATIENCE, nimlab
from schemas import back_to_version
from webtools import ServerProcess, call


def backup(db: Path, target: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "nimlab", "db", "backup", str(target), "--db", str(db)],
        capture_output=True,
        text=True,
        timeout=PATIENCE,
    )


def test_a_backup_while_the_server_plays(tmp_path: Path) -> None:
    db = tmp_path / "live.db"
    server = ServerProcess(db, args=["--move-rate", "0"]).start()
    statuses: list[int] = []
    try:
        game = {"players": [{"name": "Ann"}, {"name": "Bob"}], "piles": [60, 60]}
        _, created = call(server.url + "/api/games", "POST", game)
        key, tokens = created["state"]["id"], [s["token"] for s in created["seats"]]
        started = threading.Event()

        def play() -> None:
            for turn in range(1, 100):
                seat = (turn - 1) % 2
                move = {"seat": seat, "token": tokens[seat], "turn": turn, "pile": seat + 1}
                statuses.append(
                    call(f"{server.url}/api/games/{key}/moves", "POST", move | {"take": 1})[0]
                )
                started.set()

        mover = threading.Thread(target=play)
        mover.start()
        assert started.wait(PATIENCE)
        r = backup(db, tmp_path / "copy.db")
        mover.join(PATIENCE)
        assert call(server.url + "/readyz")[0] == 200
    finally:
        server.stop()
    assert r.returncode == 0, r.stderr
    assert "Backed up" in r.stdout
    assert statuses and set(statuses) == {200}  # every move answered during the backup
    with Store.open(tmp_path / "copy.db", read_only=True) as copy:
        assert copy.problems() == []
        assert copy.count_games_in_play() == 1


def test_a_backup_never_overwrites_the_database(tmp_path: Path) -> None:
    db = tmp_path / "d.db"
    Store.open(db).close()
    r = backup(db, db)  # a wrong request (docs/errors.md): exit status 2
    assert r.returncode == 2 and "overwrite the database itself" in r.stderr
    r = backup(tmp_path / "missing.db", tmp_path / "copy.db")
    assert r.returncode == 2 and "no database at" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "copy.db").exists()


def test_the_group_s_db_option_names_the_database_backed_up(tmp_path: Path) -> None:
    """``nimlab db --db SRC backup OUT`` backs up SRC (not the default database), as ``nimlab db
    backup --db SRC OUT`` does; two different --db are refused."""
    db = tmp_path / "src.db"
    with Store.open(db) as store:
        store.add_player("ann", given="Ann", family="A")
    env = {"NIMLAB_DB": str(tmp_path / "default.db")}
    r = nimlab("db", "--db", str(db), "backup", str(tmp_path / "out.db"), env=env)
    assert r.returncode == 0, r.stderr
    assert f"Backed up {db} " in r.stdout and "1 player," in r.stdout
    assert not (tmp_path / "default.db").exists()
    with Store.open(tmp_path / "out.db", read_only=True) as copy:
        assert [p.username for p in copy.players()] == ["ann"]
    r = nimlab("db", "--db", str(db), "backup", "--db", "other.db", str(tmp_path / "x.db"))
    assert r.returncode == 2 and "--db is given twice" in r.stderr


def test_a_backup_reports_what_the_copy_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The counts printed are the copy's, not the database's a moment later (a server playing
    on had made "920 finished games" of a copy holding 919)."""
    db = tmp_path / "live.db"
    with Store.open(db) as store:
        store.add_player("ann", given="Ann", family="A")
    made = Store.backup

    def backup_then_played_on(self: Store, target: Path) -> Path:
        written = made(self, target)
        with Store.open(db) as server:  # the server registers a player meanwhile
            server.add_player("bob", given="Bob", family="B")
        return written

    monkeypatch.setattr(Store, "backup", backup_then_played_on)
    r = nimlab("db", "backup", str(tmp_path / "copy.db"), "--db", str(db))
    assert r.returncode == 0, r.stderr
    assert "(1 player, 0 finished games)" in r.stdout


def _old_schema(db: Path) -> None:
    """A database as nimlab's schema version 4 made it, with one player."""
    with Store.open(db) as store:
        store.add_player("ann", given="Ann", family="A")
    conn = sqlite3.connect(db, isolation_level=None)
    back_to_version(conn, 4)
    conn.execute("PRAGMA journal_mode = DELETE")  # the whole database in its one file
    conn.close()


def test_only_db_migrate_upgrades_an_old_database_after_a_backup(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    _old_schema(db)
    before = db.read_bytes()
    for command in (
        ("db",),
        ("players", "show"),
        ("history",),
        ("players", "add", "bob", "--given", "B", "--family", "B"),
    ):
        r = nimlab(*command, "--db", str(db))
        assert r.returncode == 1, (command, r.stdout, r.stderr)
        [line] = r.stderr.splitlines()
        assert "schema version 4" in line and f"`nimlab db migrate --db {db}`" in line, line
        assert db.read_bytes() == before, command  # asked to read: not a byte changed
    r = nimlab("serve", "--db", str(db), "--port", "0")  # refused before it listens
    assert r.returncode == 1 and "`nimlab db migrate --db " in r.stderr, r.stderr
    assert len(r.stderr.splitlines()) == 1 and db.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.db"]
    r = nimlab("db", "--db", str(db), "migrate")
    assert r.returncode == 0, r.stderr
    kept = tmp_path / "old.db.schema-4.backup"
    assert r.stdout.strip() == (
        f"Upgraded {db} from schema version 4 to {SCHEMA_VERSION}; its copy as it was is {kept}."
    )
    conn = sqlite3.connect(kept)  # the copy is the database as it was
    assert conn.execute("SELECT version FROM schema_version").fetchone() == (4,)
    assert conn.execute("SELECT username FROM players").fetchall() == [("ann",)]
    conn.close()
    r = nimlab("players", "show", "--db", str(db))
    assert r.returncode == 0 and "ann" in r.stdout
    r = nimlab("db", "migrate", "--db", str(db))
    assert r.returncode == 0 and "up to date" in r.stdout
    assert sorted(p.name for p in tmp_path.iterdir() if "backup" in p.name) == [kept.name]


def test_a_newer_database_is_refused_by_every_command(tmp_path: Path) -> None:
    db = tmp_path / "new.db"
    Store.open(db).close()
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("UPDATE schema_version SET version = ?", (SCHEMA_VERSION + 1,))
    conn.execute("PRAGMA journal_mode = DELETE")
    conn.close()
    before = db.read_bytes()
    for command in (("db",), ("db", "migrate"), ("players", "show")):
        r = nimlab(*command, "--db", str(db))
        assert r.returncode == 1 and "newer than this nimlab understands" in r.stderr, command
        assert db.read_bytes() == before
