"""What one client can do to everyone else, kept as regression tests (issue 10): games that keep
the engine busy, huge bodies, floods of games and moves, retried moves, long games, foreign host
names, registry changes without the admin token. No test here depends on timing: each waits (with
a generous bound) for something that must happen, and checks counters, not clocks."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from nimlab.theory.budget import current_scope
from nimlab.web import create_app
from nimlab.web import learning as learning_module
from nimlab.web.schemas_out import TURN_PAGE, HintOut, MoveOut
from nimlab.web.work import EngineWorkers
from processes import until
from webtools import FAST, end_test, shared_app


@pytest.fixture
def db(tmp_path: Path) -> str:
    return str(tmp_path / "abuse.db")


def app_client(db: str, **changes: Any) -> TestClient:
    return TestClient(create_app(db, settings=FAST.model_copy(update=changes)))


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    with shared_app(str(tmp_path_factory.mktemp("abuse") / "abuse.db"), FAST) as c:
        yield c


@pytest.fixture
def client(shared: TestClient) -> Iterator[TestClient]:
    """The module's app (see :func:`webtools.shared_app`), for a test that plays its own games
    with the settings ``FAST`` and no bound per client; a test of a bound or of the whole
    server has an app of its own (``app_client``)."""
    yield shared
    end_test(shared)


def create(c: TestClient, players: list[dict[str, Any]], piles: list[int], **more: Any) -> Any:
    r = c.post("/api/games", json={"players": players, "piles": piles} | more)
    assert r.status_code == 201, r.text
    return r.json()


def play(c: TestClient, key: str, seat: int, token: str, turn: int, **move: Any) -> Any:
    return c.post(
        f"/api/games/{key}/moves", json={"seat": seat, "token": token, "turn": turn} | move
    )


def workers(c: TestClient) -> EngineWorkers:
    w = c.app.state.live.workers  # type: ignore[attr-defined]
    assert w is not None
    return w


HUMAN = {"name": "Ann"}
PERFECT = {"kind": "perfect"}


# -- bounded engine work --------------------------------------------------------------------------


def test_eight_engine_hogs_leave_other_games_working(db: str) -> None:
    with app_client(db) as c:
        hogs = []
        for i in range(4):  # three perfect bots on heaps of a googol: they play on and on
            hogs.append(create(c, [PERFECT, PERFECT, PERFECT], [10**100] * 3, seed=i))
        # two perfect bots thinking about 100 piles of 50, bots first: each answer waits for its
        # bots' moves, so the four are asked for at once (asked one by one, each waited for the
        # last one's bots: seconds of both cores)
        with ThreadPoolExecutor(4) as pool:
            hogs += pool.map(
                lambda i: create(c, [HUMAN, PERFECT, PERFECT], [50] * 100, first=1, seed=i),
                range(4),
            )
        w = workers(c)
        until(lambda: w.stats.finished >= 8, "the hogs' bots to start thinking")

        # a new human game can be started, and bots and hints in other games answer
        duel = create(c, [HUMAN, {"name": "Bob"}], [3, 4, 5])
        assert duel["state"]["status"] == "Ann's turn!"
        game = create(c, [HUMAN, PERFECT], [3, 4, 5])
        key, token = game["state"]["id"], game["seats"][0]["token"]
        r = play(c, key, 0, token, 1, pile=3, take=5)
        assert r.status_code == 200, r.text
        assert r.json()["move_count"] == 2  # the perfect bot replied
        assert "proven winning move" in r.json()["turns"][1]["claim"]
        hint = c.get(f"/api/games/{key}/hint")
        assert hint.status_code == 200 and hint.json()["proven"], hint.text
        analysis = c.get(f"/api/games/{key}/analysis").json()
        assert analysis["proven"] and analysis["outcome"] in ("N", "P")

        # the hogs' bots did move, each within its budget, saying when they only guessed
        claims = []
        for h in hogs[:4]:
            state = c.get(f"/api/games/{h['state']['id']}").json()
            claims += [t["claim"] for t in state["turns"]]
        assert claims and all(claim for claim in claims)
        assert any("not proven" in claim for claim in claims)
        assert w.stats.max_positions <= FAST.job_positions + 4096
        assert w.waiting() <= 16
        assert w.stats.failed == 0
    assert w.running() == 0  # stopping the server stopped the work


def test_a_hint_on_huge_heaps_is_bounded(client: TestClient) -> None:
    game = create(client, [HUMAN, {"name": "Bob"}, {"name": "Cy"}], [10**6] * 3)
    r = client.get(f"/api/games/{game['state']['id']}/hint")
    assert r.status_code == 200, r.text
    got = r.json()
    assert got["claim"] and (got["proven"] or "not proven" in got["claim"])
    a = client.get(f"/api/games/{game['state']['id']}/analysis")
    assert a.status_code == 200
    assert workers(client).stats.max_positions <= FAST.job_positions + 4096


def test_work_for_a_game_that_moved_on_is_cancelled(
    db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An analysis that would never end stops when its game moves on (a page of the game is
    open: without one, nobody would wait for it once the request answered)."""

    def endless(game: Any) -> Any:
        scope = current_scope()
        assert scope is not None  # every piece of work runs within a budget
        while True:
            scope.check()  # what every engine search does as it goes
            time.sleep(0.001)

    monkeypatch.setattr(learning_module, "analysis_out", endless)
    with app_client(db, compute_wait=0.05, move_seconds=3600, deep_seconds=7200) as c:
        game = create(c, [HUMAN, {"name": "Bob"}], [3, 4, 5])
        key, tokens = game["state"]["id"], {s["seat"]: s["token"] for s in game["seats"]}
        with c.websocket_connect(f"/api/games/{key}/live") as page:
            assert page.receive_json()["type"] == "state"
            r = c.get(f"/api/games/{key}/analysis")
            assert r.status_code == 200 and r.json()["pending"] and not r.json()["available"]
            w = workers(c)
            until(lambda: w.running() == 1, "the analysis to run")
            assert play(c, key, 0, tokens[0], 1, pile=1, take=1).status_code == 200
            until(lambda: w.running() == 0, "the superseded analysis to stop")
            assert w.stats.cancelled >= 1


def test_work_nobody_waits_for_is_cancelled(db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """An analysis that would never end stops once its request stopped waiting and no page of
    the game is open (it went on for minutes after the asker left), or once the last page
    closes; the next request starts it afresh."""

    def endless(game: Any) -> Any:
        scope = current_scope()
        assert scope is not None
        while True:
            scope.check()
            time.sleep(0.001)

    monkeypatch.setattr(learning_module, "analysis_out", endless)
    with app_client(db, compute_wait=0.05, move_seconds=3600, deep_seconds=7200) as c:
        key = create(c, [HUMAN, {"name": "Bob"}], [3, 4, 5])["state"]["id"]
        w = workers(c)
        for asked in (1, 2):
            r = c.get(f"/api/games/{key}/analysis")
            assert r.status_code == 200 and r.json()["pending"] and not r.json()["available"]
            until(lambda: w.running() == 0, "the analysis nobody waits for to stop")
            assert w.stats.submitted == asked and w.stats.cancelled == asked
        with c.websocket_connect(f"/api/games/{key}/live") as page:
            assert page.receive_json()["type"] == "state"
            assert c.get(f"/api/games/{key}/analysis").json()["pending"]
            until(lambda: w.running() == 1, "the analysis a page waits for to run")
        until(lambda: w.running() == 0, "the analysis to stop once the page closed")
        assert w.stats.submitted == 3 and w.stats.cancelled == 3


def test_a_late_proof_is_pushed_to_the_page(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first answer (within the move budget) is an honest guess; the deeper search's proof
    arrives over the WebSocket, without asking again."""

    answered = threading.Event()

    def hint(game: Any, *, pending: bool = False) -> HintOut:
        scope = current_scope()
        assert scope is not None and scope.seconds is not None
        deep = scope.seconds > FAST.move_seconds
        if deep:  # the proof comes after the first answer was read
            answered.wait(30)
        return HintOut(
            move_count=len(game.history),
            move=MoveOut(pile=1, take=1, at=None),
            text="Take 1 from pile 1",
            claim="a proven winning move" if deep else "not proven, a guess: the textbook move",
            proven=deep,
            pending=False,
        )

    monkeypatch.setattr(learning_module, "hint_out", hint)
    game = create(client, [HUMAN, {"name": "Bob"}], [3, 4, 5])
    key = game["state"]["id"]
    with client.websocket_connect(f"/api/games/{key}/live") as ws:
        assert ws.receive_json()["type"] == "state"
        first = client.get(f"/api/games/{key}/hint").json()
        assert not first["proven"] and first["pending"]
        assert "not proven" in first["claim"]
        answered.set()
        pushed = ws.receive_json()
        assert pushed["type"] == "hint"
        assert pushed["hint"]["proven"] and not pushed["hint"]["pending"]
    again = client.get(f"/api/games/{key}/hint").json()
    assert again["proven"]  # and kept for the next ask


# -- bounded input ----------------------------------------------------------------------------


def test_huge_bodies_are_refused_before_parsing(client: TestClient) -> None:
    in_play = set(client.app.state.live.games)  # type: ignore[attr-defined]
    big = b'{"players": [' + b'{"name": "x"},' * 200_000 + b'{}], "piles": [1]}'
    r = client.post("/api/games", content=big, headers={"content-type": "application/json"})
    assert r.status_code == 413 and "larger than" in r.json()["detail"]

    def chunks() -> Iterator[bytes]:  # no Content-Length: counted as it streams in
        for _ in range(100):
            yield b" " * 65536

    r = client.post("/api/games", content=chunks(), headers={"content-type": "application/json"})
    assert r.status_code == 413
    keys = ("{" + ",".join(f'"k{i}": 0' for i in range(5000)) + "}").encode()
    r = client.post("/api/games", content=keys, headers={"content-type": "application/json"})
    assert r.status_code == 413 and "more than 4,096 fields" in r.json()["detail"]
    assert set(client.app.state.live.games) == in_play  # type: ignore[attr-defined]


def test_games_and_moves_per_client_are_rate_limited(db: str) -> None:
    with app_client(db, create_rate=0.001, create_burst=2, move_rate=0.001, move_burst=3) as c:
        create(c, [HUMAN, {"name": "Bob"}], [5, 5])
        game = create(c, [HUMAN, {"name": "Bob"}], [5, 5])
        r = c.post("/api/games", json={"players": [HUMAN, {"name": "Bob"}], "piles": [5]})
        assert r.status_code == 429 and "too many new games" in r.json()["detail"]
        assert int(r.headers["retry-after"]) >= 1
        key, tokens = game["state"]["id"], {s["seat"]: s["token"] for s in game["seats"]}
        for turn in (1, 2, 3):
            r = play(c, key, (turn - 1) % 2, tokens[(turn - 1) % 2], turn, pile=1, take=1)
            assert r.status_code == 200, r.text
        r = play(c, key, 1, tokens[1], 4, pile=1, take=1)
        assert r.status_code == 429 and "too many moves" in r.json()["detail"]
        assert c.get(f"/api/games/{key}").json()["move_count"] == 3


def test_bodies_that_do_not_parse_are_400_in_one_line_and_rate_limited(
    db: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Nested deeper than the JSON parser goes (it raised RecursionError: 500 and a traceback
    in the log) or not JSON at all: 400 with one line, logged without a traceback; and each
    takes a token of the client's limit, as a well-formed request does."""
    deep = "[" * 1100 + "]" * 1100
    json_body = {"content-type": "application/json"}
    caplog.set_level("INFO", logger="nimlab.web")
    with app_client(db, create_rate=0.001, create_burst=3, move_rate=0.001, move_burst=3) as c:
        game = create(c, [HUMAN, {"name": "Bob"}], [5, 5])
        key = game["state"]["id"]
        for path, bad in (("/api/games", deep), ("/api/games?x=1", '{"players": [')):
            r = c.post(path, content=bad, headers=json_body)
            assert r.status_code == 400, r.text
            assert r.json()["detail"].startswith("the request body is not valid JSON")
            assert "\n" not in r.json()["detail"]
        r = c.post("/api/games", content=deep, headers=json_body)
        assert r.status_code == 429 and "too many new games" in r.json()["detail"]
        moves = f"/api/games/{key}/moves"
        assert c.post(moves, content=deep, headers=json_body).status_code == 400
        assert c.post(moves, json=[1, 2]).status_code == 422  # parses, does not validate
        assert c.post(moves, content=b"\xff", headers=json_body).status_code == 400
        r = play(c, key, 0, game["seats"][0]["token"], 1, pile=1, take=1)
        assert r.status_code == 429 and "too many moves" in r.json()["detail"]
        assert c.get(f"/api/games/{key}").json()["move_count"] == 0
    assert not [r for r in caplog.records if r.levelno >= 40 or r.exc_info or r.exc_text]
    assert all("\n" not in r.getMessage() for r in caplog.records)


def test_games_in_play_per_client_are_capped(db: str) -> None:
    with app_client(db, max_games_per_client=2) as c:
        create(c, [HUMAN, {"name": "Bob"}], [5])
        create(c, [HUMAN, {"name": "Bob"}], [5])
        r = c.post("/api/games", json={"players": [HUMAN, {"name": "Bob"}], "piles": [5]})
        assert r.status_code == 429 and "2 games in play" in r.json()["detail"], r.text
        assert len(c.app.state.live.games) == 2  # type: ignore[attr-defined]


# -- replays and long games --------------------------------------------------------------------


def test_a_retried_move_is_answered_again_and_played_once(client: TestClient) -> None:
    game = create(client, [HUMAN, PERFECT], [3, 4, 5])
    key, token = game["state"]["id"], game["seats"][0]["token"]
    first = play(client, key, 0, token, 1, pile=3, take=5)
    again = play(client, key, 0, token, 1, pile=3, take=5)
    assert first.status_code == again.status_code == 200
    assert again.json() == first.json()
    assert client.get(f"/api/games/{key}").json()["move_count"] == 2
    other = play(client, key, 0, token, 1, pile=1, take=1)  # same turn, another move
    assert other.status_code == 409 and "move 1 was already played" in other.json()["detail"]
    assert play(client, key, 0, "forged", 1, pile=3, take=5).status_code == 403


def test_the_state_sent_per_move_is_bounded(client: TestClient) -> None:
    game = create(client, [HUMAN, {"name": "Bob"}], [10**100] * 100)
    key, tokens = game["state"]["id"], {s["seat"]: s["token"] for s in game["seats"]}
    moves = TURN_PAGE + 30
    with client.websocket_connect(f"/api/games/{key}/live") as ws:
        assert ws.receive_json()["state"]["turns"] == []
        for turn in range(1, moves + 1):
            seat = (turn - 1) % 2
            r = play(client, key, seat, tokens[seat], turn, pile=1 + turn % 100, take=1)
            assert r.status_code == 200, r.text
            got = r.json()
            assert [t["number"] for t in got["turns"]] == [turn]  # the move, not the history
            assert got["turns_from"] == turn - 1 and got["move_count"] == turn
            delta = ws.receive_json()["state"]
            assert [t["number"] for t in delta["turns"]] == [turn]
    last = client.get(f"/api/games/{key}").json()
    assert len(last["turns"]) == TURN_PAGE and last["turns_from"] == moves - TURN_PAGE
    assert last["turns"][-1]["number"] == moves
    page = client.get(f"/api/games/{key}", params={"since": 0}).json()
    assert [t["number"] for t in page["turns"]] == list(range(1, TURN_PAGE + 1))
    rest = client.get(f"/api/games/{key}", params={"since": TURN_PAGE}).json()
    assert [t["number"] for t in rest["turns"]] == list(range(TURN_PAGE + 1, moves + 1))
    assert client.get(f"/api/games/{key}", params={"since": -1}).status_code == 422


# -- strict input -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value"),
    [("seat", "0"), ("seat", False), ("seat", 0.5), ("pile", "1"), ("turn", "1"), ("take", 1.5)],
)
def test_no_lax_coercion(client: TestClient, field: str, value: Any) -> None:
    """No "1" for 1, no false for 0, no fraction for a whole number (0.0 is 0, as in JSON
    Schema, which the API's schema is written in: tests/test_web_schema.py)."""
    game = create(client, [HUMAN, {"name": "Bob"}], [3, 4])
    key, token = game["state"]["id"], game["seats"][0]["token"]
    body = {"seat": 0, "token": token, "turn": 1, "pile": 1, "take": 1, field: value}
    r = client.post(f"/api/games/{key}/moves", json=body)
    assert r.status_code == 422 and field in r.json()["detail"]
    assert client.get(f"/api/games/{key}").json()["move_count"] == 0


# -- private games stay private ------------------------------------------------------------------


def test_a_private_game_stays_private_when_it_ends(db: str) -> None:
    """A private game was listed in /api/history once over and replayable by its sequential
    id; now only its link (the key it had in play) or the admin reads it, and its id answers
    as a missing game's does. A public game is listed and read by anyone."""
    with app_client(db) as c:
        finished = {}
        for public in (False, True):
            game = create(c, [HUMAN, {"name": "Bob"}], [1], public=public)
            key = game["state"]["id"]
            done = play(c, key, 0, game["seats"][0]["token"], 1, pile=1, take=1).json()
            finished[public] = (key, done["saved_as"])
        (key, hidden), (public_key, shown) = finished[False], finished[True]
        assert hidden is not None and shown == hidden + 1
        assert [g["id"] for g in c.get("/api/history").json()["games"]] == [shown]
        assert c.get("/api/history?player=ann").status_code == 404  # (no such player)
        missing = c.get(f"/api/history/{hidden + 100}").json()["detail"]
        for path in (f"/api/history/{hidden}", f"/api/history/{hidden}/analysis"):
            r = c.get(path)
            assert r.status_code == 404
            assert r.json()["detail"] == missing.replace(str(hidden + 100), str(hidden))
            assert c.get(path, params={"key": public_key}).status_code == 404  # another's key
            assert c.get(path, params={"key": key}).status_code == 200
        replay = c.get(f"/api/history/{hidden}", params={"key": key}).json()
        assert replay["game"]["id"] == hidden and len(replay["frames"]) == 2
        assert c.get(f"/api/games/{key}").json()["saved_as"] == hidden  # the link still leads
        assert c.get(f"/api/history/{shown}").status_code == 200
    with TestClient(create_app(db, settings=FAST), client=("::1", 4000)) as local:
        assert local.get(f"/api/history/{hidden}").status_code == 200  # the admin (no token)
        assert [g["id"] for g in local.get("/api/history").json()["games"]] == [shown]


# -- network hardening ----------------------------------------------------------------------------


def test_security_headers_and_allowed_methods(client: TestClient) -> None:
    for path in ("/", "/api/games", "/static/js/main.js"):
        r = client.get(path)
        csp = r.headers["content-security-policy"]
        assert "script-src 'self'" in csp and "frame-ancestors 'none'" in csp
        assert r.headers["x-content-type-options"] == "nosniff"
        assert r.headers["referrer-policy"] == "no-referrer"
    r = client.options("/api/games")
    assert r.status_code == 204
    assert {m.strip() for m in r.headers["allow"].split(",")} >= {"GET", "POST"}
    r = client.delete("/api/games")
    assert r.status_code == 405
    assert {m.strip() for m in r.headers["allow"].split(",")} >= {"GET", "POST"}
    r = client.put("/api/games/abc/moves")
    assert r.status_code == 405 and "POST" in r.headers["allow"]


def test_foreign_host_names_are_refused(db: str) -> None:
    with app_client(db, allowed_hosts=("localhost", "127.0.0.1")) as c:
        r = c.get("/api/games", headers={"host": "evil.example:8000"})
        assert r.status_code == 421 and "evil.example" in r.json()["detail"]
        assert c.get("/api/games", headers={"host": "localhost:8000"}).status_code == 200
        assert c.get("/api/games", headers={"host": "127.0.0.1"}).status_code == 200


def test_registry_changes_need_the_admin_token(db: str) -> None:
    with app_client(db, admin_token="s3cret") as c:
        r = c.post("/api/players", json={"username": "ann", "given": "Ann", "family": "Lee"})
        assert r.status_code == 201
        for path in ("/api/players/reset", "/api/players/remove"):
            r = c.post(path, json={"username": "ann"})
            assert r.status_code == 401 and "admin token" in r.json()["detail"]
            r = c.post(path, json={"username": "ann"}, headers={"authorization": "Bearer nope"})
            assert r.status_code == 401
        assert [p["username"] for p in c.get("/api/players").json()] == ["ann"]
        ok = {"authorization": "Bearer s3cret"}
        assert c.post("/api/players/reset", json={"username": "ann"}, headers=ok).status_code == 200
        r = c.post("/api/players/remove", json={"username": "ann"}, headers=ok)
        assert r.status_code == 200 and r.json() == []


def test_without_an_admin_token_registry_changes_are_only_from_this_machine(db: str) -> None:
    with app_client(db) as c:  # TestClient's requests come from "testclient", not loopback
        body = {"username": "ann", "given": "Ann", "family": "Lee"}
        assert c.post("/api/players", json=body).status_code == 201
        for path in ("/api/players/reset", "/api/players/remove"):
            r = c.post(path, json={"username": "ann"})
            assert r.status_code == 403 and "NIMLAB_ADMIN_TOKEN" in r.json()["detail"]
        assert c.delete("/api/history/1").status_code == 403
    with TestClient(create_app(db, settings=FAST), client=("::1", 4000)) as local:
        r = local.post("/api/players/reset", json={"username": "ann"})
        assert r.status_code == 200


@pytest.mark.parametrize(
    ("proxies", "headers"),
    [
        ((), {"x-forwarded-for": "8.8.8.8"}),  # a visitor through a proxy nobody trusts
        ((), {"x-real-ip": "127.0.0.1"}),
        (("127.0.0.1",), {"x-forwarded-for": "::1"}),  # loopback named by the header
        (("127.0.0.1",), {"x-forwarded-for": "127.0.0.1"}),  # every entry a trusted proxy
        (("127.0.0.1",), {"x-forwarded-for": "8.8.8.8"}),
        (("127.0.0.0/8",), {}),  # from the trusted proxy, which sent no header
    ],
)
def test_without_an_admin_token_a_forwarded_request_is_never_admin(
    db: str, proxies: tuple[str, ...], headers: dict[str, str]
) -> None:
    """Without a token, admin is a request straight from loopback naming no other client: one
    through a proxy on this machine (trusted or not) is a visitor's, whatever its headers say."""
    settings = FAST.model_copy(update={"trusted_proxies": proxies})
    with TestClient(create_app(db, settings=settings), client=("127.0.0.1", 4000)) as local:
        body = {"username": "ann", "given": "Ann", "family": "Lee"}
        assert local.post("/api/players", json=body).status_code == 201
        r = local.post("/api/players/reset", json={"username": "ann"}, headers=headers)
        assert r.status_code == 403 and "not through a proxy" in r.json()["detail"]
        assert local.delete("/api/history/1", headers=headers).status_code == 403
        r = local.post("/api/players/reset", json={"username": "ann"})
        assert r.status_code == (403 if proxies else 200)  # straight from loopback, not a proxy
