"""Starting and stopping as a service: a damaged database is refused at start; SIGTERM stops
accepting, finishes the requests in flight (a request that cannot finish, because the database
is locked, is answered JSON 503), asks open pages to reconnect (WebSocket close 1012), loses
nothing acknowledged, and the process exits. No test here measures time: each waits for a
condition (the bench measures how long a stop takes)."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from nimlab.storage import Store
from processes import PATIENCE, nimlab
from webtools import ServerProcess, call


def serve(db: Path) -> subprocess.CompletedProcess[str]:
    """``nimlab serve`` in this process: it must stop before it serves."""
    return nimlab("serve", "--db", str(db), "--port", "0")


def test_a_damaged_database_is_refused_at_start(tmp_path: Path) -> None:
    dropped = tmp_path / "dropped.db"
    Store.open(dropped).close()
    with sqlite3.connect(dropped) as conn:
        conn.execute("DROP TABLE live_moves")
    r = serve(dropped)
    assert r.returncode == 1 and "serving" not in r.stdout
    assert "damaged" in r.stderr and "live_moves is missing" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr
    scrambled = tmp_path / "scrambled.db"
    with Store.open(scrambled) as store:
        for i in range(300):
            store.add_player(f"p{i}", given="Given", family="Family")
    data = bytearray(scrambled.read_bytes())
    page = 4096
    for at in range(2 * page, min(len(data), 6 * page)):
        data[at] = (at * 131 + 7) % 256
    scrambled.write_bytes(bytes(data))
    r = serve(scrambled)
    assert r.returncode == 1 and "serving" not in r.stdout
    assert "error:" in r.stderr and "Traceback" not in r.stderr, r.stderr


def in_flight(url: str) -> float:
    with urllib.request.urlopen(url + "/metrics", timeout=PATIENCE) as r:
        for line in r.read().decode().splitlines():
            if line.startswith("nimlab_requests_in_flight "):
                return float(line.split()[-1])
    return 0.0


def wait_until(condition: Any) -> None:
    deadline = time.monotonic() + PATIENCE
    while not condition():
        assert time.monotonic() < deadline, "the condition was never met"
        time.sleep(0.05)


def test_sigterm_during_a_locked_write_answers_json_503_and_exits(tmp_path: Path) -> None:
    db = tmp_path / "locked.db"
    server = ServerProcess(db, args=["--shutdown-timeout", "2"]).start()
    assert server.proc is not None
    game = {"players": [{"name": "Ann"}, {"name": "Bob"}], "piles": [3, 3]}
    status, created = call(server.url + "/api/games", "POST", game)
    assert status == 201
    key, token = created["state"]["id"], created["seats"][0]["token"]
    locker = sqlite3.connect(db, isolation_level=None)
    answers: list[tuple[int, Any]] = []
    try:
        locker.execute("BEGIN EXCLUSIVE")
        move = {"seat": 0, "token": token, "turn": 1, "pile": 1, "take": 1}
        mover = threading.Thread(
            target=lambda: answers.append(call(f"{server.url}/api/games/{key}/moves", "POST", move))
        )
        mover.start()
        wait_until(lambda: in_flight(server.url) >= 2)  # the move waits (and this request)
        server.proc.send_signal(signal.SIGTERM)
        mover.join(PATIENCE)
        server.proc.wait(PATIENCE)
    finally:
        locker.execute("ROLLBACK")
        locker.close()
        server.stop()
    assert answers and answers[0][0] == 503, answers
    assert "stopping" in answers[0][1]["detail"] and answers[0][1]["request_id"]
    server = ServerProcess(db).start()  # nothing was acknowledged, nothing was played
    try:
        assert call(f"{server.url}/api/games/{key}")[1]["move_count"] == 0
    finally:
        server.stop()


def test_sigterm_during_moves_loses_nothing_acknowledged(tmp_path: Path) -> None:
    db = tmp_path / "moves.db"
    server = ServerProcess(db, args=["--move-rate", "0"]).start()
    assert server.proc is not None
    game = {"players": [{"name": "Ann"}, {"name": "Bob"}], "piles": [200, 200]}
    _, created = call(server.url + "/api/games", "POST", game)
    key, tokens = created["state"]["id"], [s["token"] for s in created["seats"]]
    acknowledged: list[int] = []
    closed: list[int] = []
    listening = threading.Event()

    async def watch() -> None:
        import websockets

        async with websockets.connect(
            f"ws://127.0.0.1:{server.port}/api/games/{key}/live", open_timeout=PATIENCE
        ) as ws:
            listening.set()
            try:
                while True:
                    await ws.recv()
            except websockets.ConnectionClosed as e:
                closed.append(e.rcvd.code if e.rcvd else -1)

    watcher = threading.Thread(target=lambda: asyncio.run(watch()))
    watcher.start()
    assert listening.wait(PATIENCE)

    def play() -> None:
        for turn in range(1, 400):
            seat = (turn - 1) % 2
            move = {"seat": seat, "token": tokens[seat], "turn": turn, "pile": 1 + seat, "take": 1}
            try:
                status, _ = call(f"{server.url}/api/games/{key}/moves", "POST", move)
            except OSError:
                return
            if status != 200:
                return
            acknowledged.append(turn)

    mover = threading.Thread(target=play)
    mover.start()
    wait_until(lambda: len(acknowledged) >= 5)
    os.kill(server.proc.pid, signal.SIGTERM)
    mover.join(PATIENCE)
    watcher.join(PATIENCE)
    server.proc.wait(PATIENCE)
    server.stop()
    assert closed == [1012]  # the page is told to reconnect
    server = ServerProcess(db).start()
    try:
        stored = call(f"{server.url}/api/games/{key}")[1]["move_count"]
    finally:
        server.stop()
    assert stored >= acknowledged[-1], (stored, acknowledged[-1])
