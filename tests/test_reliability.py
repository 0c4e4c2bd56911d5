"""One client cannot take the server from the others (issue 20), the small versions: restarts
resume every game the bounds allow, expiry runs while serving, stored shared games are deleted
only when every player asked, old links survive schema upgrades, lists are paged, caps per
client and per game answer 429 (or close a WebSocket with a reason), and the engine's time is
shared per client. The heavy versions are in ``bench/bench_abuse.py``. No test here depends on
timing: each waits (with a generous bound) for what must happen, and checks counts and order."""

from __future__ import annotations

import logging
import sqlite3
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from nimlab.web import ServerSettings, create_app
from nimlab.web import settings as web_settings
from nimlab.web.live import LiveGames
from processes import until

pytestmark = pytest.mark.reliability

FAST = ServerSettings(
    bot_pace=0,
    reply_wait=30.0,
    compute_wait=30.0,
    workers=2,
    move_seconds=0.3,
    deep_seconds=0.6,
    job_positions=50_000,
    create_burst=1000,
)

ANN, BOB = {"name": "Ann"}, {"name": "Bob"}


@pytest.fixture
def db(tmp_path: Path) -> str:
    return str(tmp_path / "reliability.db")


def app_client(db: str, **changes: Any) -> TestClient:
    return TestClient(create_app(db, settings=replace(FAST, **changes)))


def manager(c: TestClient) -> LiveGames:
    live: LiveGames = c.app.state.live  # type: ignore[attr-defined]
    return live


def create(c: TestClient, players: list[dict[str, Any]], piles: list[int], **more: Any) -> Any:
    r = c.post("/api/games", json={"players": players, "piles": piles} | more)
    assert r.status_code == 201, r.text
    return r.json()


def tokens(created: Any) -> dict[int, str]:
    return {s["seat"]: s["token"] for s in created["seats"]}


def play(c: TestClient, key: str, seat: int, token: str, turn: int, **move: Any) -> Any:
    return c.post(
        f"/api/games/{key}/moves", json={"seat": seat, "token": token, "turn": turn} | move
    )


# -- nothing in play is forgotten -----------------------------------------------------------------


def test_a_restart_resumes_every_game_the_bound_allows(
    db: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("NIMLAB_MAX_GAMES_PER_CLIENT", "100")
    with app_client(db) as c:
        games = [create(c, [ANN, BOB], [3, 4]) for _ in range(30)]
    monkeypatch.setenv("NIMLAB_MAX_GAMES_IN_PLAY", "25")  # lowered below what is stored
    with caplog.at_level(logging.INFO, "nimlab.web"), app_client(db) as c:
        live = manager(c)
        assert len(live.games) == 25
        assert "resumed 25 of 30 games in play" in caplog.text
        assert "stay stored (not resumed)" in caplog.text
    monkeypatch.setenv("NIMLAB_MAX_GAMES_IN_PLAY", "40")
    monkeypatch.setenv("NIMLAB_MAX_GAMES_PER_CLIENT", "30")
    with app_client(db) as c:
        live = manager(c)
        assert set(live.games) == {g["state"]["id"] for g in games}
        for g in games:  # every one answers, and is played, with its owner still counted
            key = g["state"]["id"]
            assert play(c, key, 0, tokens(g)[0], 1, pile=1, take=1).status_code == 200
            assert live.games[key].client == "testclient"
        r = c.post("/api/games", json={"players": [ANN, BOB], "piles": [3]})
        assert r.status_code == 429 and "30 games in play" in r.json()["detail"]


def test_expiry_runs_while_serving(
    db: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(web_settings, "EXPIRY_INTERVAL", 0.05)
    with caplog.at_level(logging.INFO, "nimlab.web"), app_client(db) as c:
        old = create(c, [ANN, BOB], [3, 4])["state"]["id"]
        fresh = create(c, [ANN, BOB], [3, 4])["state"]["id"]
        with sqlite3.connect(db) as conn:  # nobody played it since 2020
            conn.execute(
                "UPDATE live_games SET touched_at = '2020-01-01T00:00:00+00:00' WHERE key = ?",
                (old,),
            )
        live = manager(c)
        until(lambda: old not in live.games, "the sweep to expire the old game")
        assert fresh in live.games
        assert c.get(f"/api/games/{old}").status_code == 404
        assert "1 games in play expired" in caplog.text
