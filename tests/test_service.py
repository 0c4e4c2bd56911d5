"""What an operator watches: ``/healthz``, ``/readyz`` (503 with what is wrong), ``/metrics``."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

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
    assert r.status_code == 200 and r.json() == {"status": "ready", "problems": []}


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
