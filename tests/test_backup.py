"""``nimlab db backup PATH``: a copy of the database made while the server uses it (SQLite's
online backup), with the server answering meanwhile."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

from nimlab.storage import Store
from processes import PATIENCE
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
