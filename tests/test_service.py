"""What an operator watches: ``/healthz``, ``/readyz`` (503 with what is wrong), ``/metrics``."""

from __future__ import annotations

import logging
import os
import sqlite3
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from nimlab.storage import StorageError, Store
from nimlab.web import ServerSettings, create_app
from nimlab.web import app as app_module
from processes import PATIENCE

SETTINGS = ServerSettings(
    bot_pace=0, compute_wait=PATIENCE, reply_wait=PATIENCE, create_rate=0.001, create_burst=1
)


@pytest.fixture
def db(tmp_path: Path) -> str:
    return str(tmp_path / "service.db")


@pytest.fixture
def client(db: str) -> Iterator[TestClient]:
    with TestClient(create_app(db, settings=SETTINGS)) as c:
        yield c


def metric(text: str, name: str) -> float:
    """The value of the sample ``name`` (with its labels as written) in an exposition."""
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[-1])
    return 0.0


def test_health_and_readiness(client: TestClient) -> None:
    assert client.get("/healthz").json() == {"status": "ok"}
    r = client.get("/readyz")
    assert r.status_code == 200
    assert r.json() == {"status": "ready", "problems": [], "solvers": "ready"}


def test_metrics_count_moves_refusals_engine_jobs_and_commits(client: TestClient) -> None:
    before = client.get("/metrics").text
    body = {"players": [{"name": "Ann"}, {"kind": "perfect"}], "piles": [3, 4]}
    created = client.post("/api/games", json=body).json()
    assert client.post("/api/games", json=body).status_code == 429
    token = created["seats"][0]["token"]
    key = created["state"]["id"]
    move = {"seat": 0, "token": token, "turn": 1, "pile": 1, "take": 1}
    assert client.post(f"/api/games/{key}/moves", json=move).status_code == 200
    r = client.get("/metrics")
    assert r.headers["content-type"].startswith("text/plain")
    after = r.text
    for name in (
        "nimlab_moves_total",
        "nimlab_move_seconds_count",
        'nimlab_requests_refused_total{limit="create_rate"}',
        "nimlab_db_commit_seconds_count",
        "nimlab_db_batch_size_count",
    ):
        assert metric(after, name) >= metric(before, name) + 1, name
    assert metric(after, "nimlab_games_in_play") >= 1
    jobs = [line for line in after.splitlines() if line.startswith("nimlab_engine_jobs_total{")]
    assert any('outcome="answered"' in line for line in jobs), jobs


def test_metrics_list_every_refusal_label_in_their_help(client: TestClient) -> None:
    """The labels of the refusals are one list (metrics.REFUSAL_LIMITS): the help of
    /metrics names each with what it refuses, each series is there before any refusal, and a
    refusal counts under the setting that refused it (a client's games in play, not the
    server's)."""
    from nimlab.web.metrics import REFUSAL_LIMITS

    text = client.get("/metrics").text
    (help_line,) = [
        x for x in text.splitlines() if x.startswith("# HELP nimlab_requests_refused_total ")
    ]
    for name, what in REFUSAL_LIMITS.items():
        assert f"{name}: {what}" in help_line
        assert f'nimlab_requests_refused_total{{limit="{name}"}}' in text, name
    assert {"read_rate", "max_games_per_client", "max_concurrency"} <= set(REFUSAL_LIMITS)


def test_readiness_says_when_the_database_is_locked(
    db: str, client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(app_module, "READY_WAIT", 0.2)
    locker = sqlite3.connect(db, isolation_level=None)
    try:
        locker.execute("BEGIN EXCLUSIVE")
        r = client.get("/readyz")
        assert r.status_code == 503
        assert "writer does not commit" in " ".join(r.json()["problems"]), r.json()
    finally:
        locker.execute("ROLLBACK")
        locker.close()
    assert client.get("/healthz").status_code == 200


def test_a_database_outage_answers_a_plain_503_and_logs_what_failed(
    client: TestClient, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The 503 of a database that fails says what it means for the move, never the database's
    user, host, port or name (the driver's message has them): those go to the log."""
    failure = (
        'connection to server at "db.example" (10.0.0.5), port 5432 failed: FATAL: password '
        'authentication failed for user "nimlab" (database "club")'
    )
    before = client.get("/metrics").text
    body = {"players": [{"name": "Ann"}, {"name": "Bob"}], "piles": [3, 4]}
    created = client.post("/api/games", json=body).json()
    key, token = created["state"]["id"], created["seats"][0]["token"]

    def down(*_: object, **__: object) -> None:
        raise StorageError(failure)

    monkeypatch.setattr(Store, "add_live_moves", down)
    move = {"seat": 0, "token": token, "turn": 1, "pile": 1, "take": 1}
    with caplog.at_level(logging.WARNING, "nimlab.web"):
        r = client.post(f"/api/games/{key}/moves", json=move)
    assert r.status_code == 503
    assert r.json()["detail"] == "the move could not be saved, so it was not played"
    for detail in ("db.example", "10.0.0.5", "5432", "nimlab", "club"):
        assert detail not in r.text
    assert any(failure in record.getMessage() for record in caplog.records)
    after = client.get("/metrics").text
    assert metric(after, "nimlab_db_errors_total") == metric(before, "nimlab_db_errors_total") + 1
    route = 'nimlab_http_requests_total{route="/api/games/{key}/moves",status="503"}'
    assert metric(after, route) == metric(before, route) + 1
    created_route = 'nimlab_http_requests_total{route="/api/games",status="201"}'
    assert metric(after, created_route) == metric(before, created_route) + 1
    assert key not in after  # routes by template: no game's key is a label
    client.post(f"/api/games/{key}/resign", json={"seat": 0, "token": "wrong"})
    resigned = client.get("/metrics").text  # the whole path, whichever router serves it
    assert metric(
        resigned, 'nimlab_http_requests_total{route="/api/games/{key}/resign",status="403"}'
    )
    assert metric(after, "nimlab_engine_jobs_waiting") >= 0
    assert metric(after, "process_open_fds") > 0 and metric(after, "process_max_fds") > 0
    assert metric(after, "nimlab_change_feed_up") == 1


def test_running_out_of_file_descriptors_is_one_log_line(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import asyncio
    import errno

    monkeypatch.setattr(app_module, "_descriptors_said", float("-inf"))
    monkeypatch.setattr(app_module, "_descriptors_out", float("-inf"))
    loop = asyncio.new_event_loop()
    try:
        full = OSError(errno.EMFILE, "Too many open files")
        context = {"message": "socket.accept() out of system resource", "exception": full}
        with caplog.at_level(logging.WARNING):
            for _ in range(3):  # asyncio retries the accept: said once
                app_module.out_of_descriptors(loop, context)
            app_module.out_of_descriptors(loop, {"message": "something else"})
    finally:
        loop.close()
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 2, lines
    assert lines[0].startswith("no file descriptors left (Too many open files)")
    assert "LimitNOFILE" in lines[0] and lines[1] == "something else"


def test_readyz_says_when_file_descriptors_ran_out_and_recovers(
    db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Right after a connection could not be accepted for want of descriptors, /readyz says so
    (503); once the moment has passed (connections closed), it is ready again; and a process
    with 95 % of its descriptors open is not ready either."""
    import resource
    import time

    monkeypatch.setattr(app_module, "_descriptors_out", float("-inf"))
    with TestClient(create_app(db, settings=SETTINGS)) as c:
        assert c.get("/readyz").status_code == 200
        monkeypatch.setattr(app_module, "_descriptors_out", time.monotonic())
        r = c.get("/readyz")
        assert r.status_code == 503 and "ran out of file descriptors" in r.json()["problems"][0]
        monkeypatch.setattr(app_module, "_descriptors_out", float("-inf"))
        assert c.get("/readyz").status_code == 200
        soft = len(os.listdir("/proc/self/fd"))  # as if the limit were what is open now
        monkeypatch.setattr(resource, "getrlimit", lambda _which: (soft, soft))
        r = c.get("/readyz")
        assert r.status_code == 503 and "file descriptors" in r.json()["problems"][0], r.json()


def test_the_games_resumed_are_counted_among_those_read(
    db: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The games in play are counted before they are read; other processes may start games in
    between: the log had said "resumed 10 of 7 games in play"."""
    body = {"players": [{"name": "Ann"}, {"name": "Bob"}], "piles": [3, 4]}
    with TestClient(create_app(db, settings=SETTINGS.model_copy(update={"create_rate": 0}))) as c:
        for _ in range(3):
            assert c.post("/api/games", json=body).status_code == 201
    monkeypatch.setattr(Store, "count_games_in_play", lambda self: 1)  # two began since
    with caplog.at_level(logging.INFO, "nimlab.web"), TestClient(create_app(db, settings=SETTINGS)):
        pass
    assert "resumed 3 of 3 games in play" in caplog.text, caplog.text


def test_serve_answers_at_once_while_it_prepares_the_solvers_in_the_background(
    tmp_path: Path,
) -> None:
    """The first ``nimlab serve`` after an install (an empty kernel cache) serves at once and
    prepares the solvers in the background: the page, /readyz and a game of Nim answer while
    no solver is ready; an analysis that needs one (misère Kayles, a quotient) says the solvers
    are being prepared and follows once they are, equal to this process's own. The test holds
    the preparation (the hook NIMLAB_TEST_PREPARE_GATE) until it has seen all that, then fills
    the cache (compiling every solver would take a minute) and lets it go on."""
    import nimlab.theory
    from nimlab.cli.prepare import PREPARE_GATE
    from nimlab.core.game import Game
    from nimlab.web.analysis_views import analysis_out
    from webtools import ServerProcess, call, seed_kernel_cache

    cache, gate = tmp_path / "kernels", tmp_path / "go"
    cache.mkdir()
    env = {
        "NUMBA_CACHE_DIR": str(cache),  # (a process of its own: not the tests' zygote)
        PREPARE_GATE: str(gate),
        "NIMLAB_BOT_PACE": "0",
        "NIMLAB_REPLY_WAIT": str(PATIENCE),
        "NIMLAB_COMPUTE_WAIT": "0.5",
    }
    server = ServerProcess(tmp_path / "s.db", env=env).start()
    try:
        url = server.url
        with urllib.request.urlopen(url + "/", timeout=PATIENCE) as page:
            assert page.status == 200 and b"<html" in page.read().lower()
        status, ready = call(url + "/readyz")
        assert status == 200 and ready["status"] == "ready", ready
        assert ready["solvers"] == "preparing", ready
        # Nim needs no compiled solver: the perfect bot replies now
        body = {
            "players": [{"name": "Ann"}, {"name": "Hal", "kind": "perfect"}],
            "piles": [3, 4, 5],
        }
        status, nim = call(url + "/api/games", "POST", body)
        assert status == 201, nim
        move = {"seat": 0, "token": nim["seats"][0]["token"], "turn": 1, "pile": 1, "take": 1}
        status, moved = call(f"{url}/api/games/{nim['state']['id']}/moves", "POST", move)
        assert status == 200 and moved["move_count"] == 2, moved
        # misère Kayles needs one: its analysis waits for the preparation, and says so
        kayles = {**body, "game": "kayles", "piles": [8, 5], "misere": True}
        status, created = call(url + "/api/games", "POST", kayles)
        assert status == 201, created
        analysis_url = f"{url}/api/games/{created['state']['id']}/analysis"
        status, waiting = call(analysis_url)
        assert status == 200 and waiting["pending"] and not waiting["available"], waiting
        assert waiting["note"].startswith("The solvers are being prepared"), waiting
        # who starts, worked out by a search, is refused saying why (it would wait too long)
        auto = {**kayles, "piles": [30, 29, 28], "first": "auto"}  # (a quotient decides it)
        status, refused = call(url + "/api/games", "POST", auto)
        assert status == 422 and "being prepared" in refused["detail"], refused
        seed_kernel_cache(Path(nimlab.theory.__file__).parent, cache)
        gate.touch()
        answer = waiting
        while answer["pending"] or not answer["available"]:  # (until the answer comes)
            status, answer = call(analysis_url)
            assert status == 200, answer
        expected = analysis_out(Game("kayles misere", (8, 5), ("human:Ann", "bot:perfect:Hal")))
        assert answer["outcome"] == expected.outcome and answer["proven"] == expected.proven
        assert answer["moves"] == [m.model_dump() for m in expected.moves]
        assert answer["quotient"]["code"] == "0.77"
        while ready["solvers"] != "ready":
            status, ready = call(url + "/readyz")
    finally:
        server.stop()
    log = server.logged()
    assert "preparing the solvers in the background (about " in log, log
    assert "Traceback" not in log, log


def test_a_low_descriptor_limit_is_logged_once_said_by_readyz_and_recovered_from(
    tmp_path: Path,
) -> None:
    """A server under ``ulimit -n 64`` held by 100 idle connections: it logs once that it has
    no descriptors left, /readyz says so when a request gets through, and once the connections
    close it serves and is ready again (no timing: each step waits for its condition)."""
    import resource
    import socket
    import subprocess
    import sys
    import time

    from webtools import call, free_port, wait_for

    port = free_port()
    url = f"http://127.0.0.1:{port}"

    def low_limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))

    log = tmp_path / "server.log"
    with log.open("w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "nimlab", "serve", "--port", str(port), "--db",
             str(tmp_path / "d.db"), "--max-connections-per-client", "1000"],
            stdout=out, stderr=subprocess.STDOUT, preexec_fn=low_limit,
        )  # fmt: skip
    held: list[socket.socket] = []
    try:
        wait_for(f"{url}/healthz")
        deadline = time.monotonic() + PATIENCE
        while "no file descriptors left" not in log.read_text():
            assert time.monotonic() < deadline and proc.poll() is None, log.read_text()
            if len(held) < 100:
                s = socket.create_connection(("127.0.0.1", port))
                s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")  # never finished
                held.append(s)
            else:
                time.sleep(0.05)
        for s in held:
            s.close()
        held.clear()
        wait_for(f"{url}/healthz")  # serving again
        status, answer = call(f"{url}/readyz")
        assert status == 503 or status == 200, answer  # 503 while the moment is recent
        if status == 503:
            assert "ran out of file descriptors" in " ".join(answer["problems"])
        while (status := call(f"{url}/readyz")[0]) != 200:
            assert time.monotonic() < deadline
            time.sleep(0.2)
        assert log.read_text().count("no file descriptors left") >= 1
    finally:
        for s in held:
            s.close()
        proc.terminate()
        proc.wait(PATIENCE)


def test_the_gauges_of_processes_that_no_longer_run_are_forgotten(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With ``PROMETHEUS_MULTIPROC_DIR``, a supervisor starting on the folder of an earlier run
    marks its processes dead: their gauges leave ``/metrics``; the counters stay, and so do the
    gauges of a process that runs."""
    from nimlab.web import metrics

    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path))
    gone = 2**22 + 12_345  # above the kernel's pid_max default: no process has it
    me = os.getpid()
    files = [
        f"gauge_livesum_{gone}.db",
        f"gauge_livemin_{gone}.db",
        f"gauge_livemostrecent_{gone}.db",
        f"counter_{gone}.db",
        f"gauge_livesum_{me}.db",
    ]
    for name in files:
        (tmp_path / name).write_bytes(b"")
    assert metrics.forget_dead_processes() == [gone]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [f"counter_{gone}.db", f"gauge_livesum_{me}.db"]
    )
