"""One client cannot take the server from the others (issue 20), the small versions: restarts
resume every game the bounds allow, expiry runs while serving, stored shared games are deleted
only when every player asked, old links survive schema upgrades, lists are paged, caps per
client and per game answer 429 (or close a WebSocket with a reason), and the engine's time is
shared per client. The heavy versions are in ``bench/bench_abuse.py``. No test here depends on
timing: each waits (with a generous bound) for what must happen, and checks counts and order."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import os
import socket
import sqlite3
import ssl
import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from fastapi.testclient import TestClient
from websockets.asyncio.client import connect as ws_async_connect
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import ClientConnection
from websockets.sync.client import connect as ws_connect

from nimlab.storage import SCHEMA_VERSION, upgrade_database
from nimlab.web import create_app
from nimlab.web.errors import Unavailable
from nimlab.web.live import LiveGames
from nimlab.web.work import EngineWorkers
from processes import PATIENCE, until
from schemas import back_to_version
from webtools import FAST as SETTINGS
from webtools import free_port

pytestmark = pytest.mark.reliability

FAST = SETTINGS.model_copy(update={"create_burst": 1000})

ANN, BOB = {"name": "Ann"}, {"name": "Bob"}


@pytest.fixture
def db(tmp_path: Path) -> str:
    return str(tmp_path / "reliability.db")


def app_client(db: str, **changes: Any) -> TestClient:
    return TestClient(create_app(db, settings=FAST.model_copy(update=changes)))


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
    with app_client(db, max_games_per_client=100) as c:
        games = [create(c, [ANN, BOB], [3, 4]) for _ in range(30)]
    lowered = app_client(db, max_games_per_client=100, max_games_in_play=25)  # below what is stored
    with caplog.at_level(logging.INFO, "nimlab.web"), lowered as c:
        live = manager(c)
        assert len(live.games) == 25
        assert "resumed 25 of 30 games in play" in caplog.text
        assert "stay stored (not resumed)" in caplog.text
    with app_client(db, max_games_in_play=40, max_games_per_client=30) as c:
        live = manager(c)
        assert set(live.games) == {g["state"]["id"] for g in games}
        for g in games:  # every one answers, and is played, with its owner still counted
            key = g["state"]["id"]
            assert play(c, key, 0, tokens(g)[0], 1, pile=1, take=1).status_code == 200
            assert live.games[key].client == "testclient"
        r = c.post("/api/games", json={"players": [ANN, BOB], "piles": [3]})
        assert r.status_code == 429 and "30 games in play" in r.json()["detail"]


def test_expiry_runs_while_serving(db: str, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, "nimlab.web"), app_client(db, expiry_interval=0.05) as c:
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


def test_games_no_person_moved_in_expire_in_hours(db: str) -> None:
    """Left before anyone moved, or with only a bot's move: gone after idle_game_expiry_hours
    untouched (they held places of games in play for game_expiry_days); a game a person
    moved in stays for days."""
    with app_client(db, expiry_interval=0.05, idle_game_expiry_hours=2) as c:
        left = create(c, [ANN, BOB], [3, 4])
        bot_moved = create(c, [ANN, {"kind": "perfect"}], [3, 4], first=1)
        played = create(c, [ANN, BOB], [3, 4])
        fresh = create(c, [ANN, BOB], [3, 4])["state"]["id"]
        assert bot_moved["state"]["move_count"] == 1
        assert (
            play(c, played["state"]["id"], 0, tokens(played)[0], 1, pile=1, take=1).status_code
            == 200
        )
        quiet = [g["state"]["id"] for g in (left, bot_moved, played)]
        hours_ago = (datetime.now(UTC) - timedelta(hours=3)).isoformat(timespec="seconds")
        with sqlite3.connect(db) as conn:
            conn.executemany(
                "UPDATE live_games SET touched_at = ? WHERE key = ?",
                [(hours_ago, key) for key in quiet],
            )
        live = manager(c)
        until(lambda: quiet[0] not in live.games, "the sweep to expire the game left")
        assert quiet[1] not in live.games and c.get(f"/api/games/{quiet[1]}").status_code == 404
        assert quiet[2] in live.games and fresh in live.games


def test_a_game_another_process_moved_is_read_again_until_the_database_answers(
    db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Told that another process moved a game its pages watch, a process whose read of it fails
    (the database down, or a connection the database ended) reads it again until it can: its
    pages see the move, which nothing would announce again."""
    with app_client(db) as a, app_client(db) as b:
        created = create(b, [ANN, BOB], [3, 4])
        key = created["state"]["id"]
        with a.websocket_connect(f"/api/games/{key}/live") as page:
            first = page.receive_json()
            assert first["type"] == "state" and first["state"]["move_count"] == 0
            live = manager(a)
            read, failed = live.read, []

            async def unreadable_once(fn: Callable[[Any], Any]) -> Any:
                if not failed:
                    failed.append(fn)
                    raise Unavailable("the database cannot be used: the connection was ended")
                return await read(fn)

            monkeypatch.setattr(live, "read", unreadable_once)
            assert play(b, key, 0, tokens(created)[0], 1, pile=1, take=2).status_code == 200
            until(lambda: len(live.games[key].game.history) == 1, "the move read again")
            assert failed  # the first read failed
            told = page.receive_json()
            assert told["state"]["move_count"] == 1
            assert told["state"]["turns"][-1]["text"].startswith("Ann took 2")


# -- deleting a shared game, old links -------------------------------------------------------------


def finished_between(
    c: TestClient, players: list[dict[str, Any]], public: bool = True
) -> tuple[str, int, Any]:
    """A game between ``players`` on one heap of 1, won by seat 0: its key, stored id, tokens
    (a public game: listed in the history)."""
    created = create(c, players, [1], public=public)
    key, seats = created["state"]["id"], tokens(created)
    done = play(c, key, 0, seats[0], 1, pile=1, take=1).json()
    assert done["over"] and done["saved_as"] is not None
    return key, done["saved_as"], seats


def test_a_shared_game_is_deleted_only_when_every_player_asked(db: str) -> None:
    with app_client(db, admin_token="sesame") as c:
        for name in ("ann", "bob"):
            r = c.post("/api/players", json={"username": name, "given": name, "family": "X"})
            assert r.status_code == 201, r.text
        ann, bob = {"username": "ann"}, {"username": "bob"}
        key, saved, seats = finished_between(c, [ann, bob])

        def history(player: str | None = None) -> list[int]:
            query = "" if player is None else f"?player={player}"
            return [g["id"] for g in c.get(f"/api/history{query}").json()["games"]]

        r = c.request("DELETE", f"/api/games/{key}", json={"seat": 1, "token": seats[1]})
        assert r.status_code == 200 and r.json()["deleted"] is False
        assert "left bob X's history" in r.json()["detail"]
        assert history("bob") == [] and history("ann") == [saved] and history() == [saved]
        assert c.get(f"/api/history/{saved}").status_code == 200  # the winner's replay stays
        assert c.get(f"/api/games/{key}").json()["saved_as"] == saved
        r = c.request("DELETE", f"/api/games/{key}", json={"seat": 1, "token": seats[1]})
        assert r.json()["deleted"] is False  # asking twice is still one seat
        r = c.request("DELETE", f"/api/games/{key}", json={"seat": 0, "token": seats[0]})
        assert r.json()["deleted"] is True
        assert history() == [] and c.get(f"/api/history/{saved}").status_code == 404
        # the admin deletes at once, and a game with one human is that human's alone
        key, saved, seats = finished_between(c, [ann, bob])
        admin = {"authorization": "Bearer sesame"}
        r = c.request(
            "DELETE", f"/api/games/{key}", json={"seat": 1, "token": seats[1]}, headers=admin
        )
        assert r.json()["deleted"] is True and history() == []
        key, saved, seats = finished_between(c, [ANN, {"kind": "random"}])
        r = c.request("DELETE", f"/api/games/{key}", json={"seat": 0, "token": seats[0]})
        assert r.json()["deleted"] is True and history() == []


def _back_to_version_4(db: str, *, early: bool) -> None:
    """Make the database what version 4 was: no delete requests; ``early``: the first version
    4, whose keys of finished games had no data column."""
    with sqlite3.connect(db) as conn:
        back_to_version(conn, 4)
        if early:
            conn.execute("ALTER TABLE finished_keys DROP COLUMN meta")


@pytest.mark.parametrize("early", [False, True])
def test_an_old_link_leads_to_the_replay_after_a_schema_upgrade(db: str, early: bool) -> None:
    with app_client(db) as c:
        key, saved, _ = finished_between(c, [ANN, BOB])
    _back_to_version_4(db, early=early)
    upgrade_database(db, backup=False)  # (nimlab db migrate)
    with app_client(db) as c:
        state = c.get(f"/api/games/{key}").json()
        assert state["over"] and state["saved_as"] == saved and state["winner"] == 0
        replay = c.get(f"/api/history/{saved}").json()
        assert replay["game"]["id"] == saved and len(replay["frames"]) == 2
        with c.websocket_connect(f"/api/games/{key}/live") as ws:
            assert ws.receive_json()["state"]["saved_as"] == saved
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT version FROM schema_version").fetchone()[0] == SCHEMA_VERSION


# -- lists are paged, private games are not listed -------------------------------------------------


def test_lists_are_paged_and_private_games_unlisted(db: str) -> None:
    with app_client(db, page_size=3, max_page=4) as c:
        for i in range(6):
            body = {"username": f"p{i}", "given": "P", "family": str(i)}
            assert c.post("/api/players", json=body).status_code == 201
        names = [p["username"] for p in c.get("/api/players").json()]
        assert names == ["p0", "p1", "p2"]
        names = [p["username"] for p in c.get("/api/players?limit=100&offset=2").json()]
        assert names == ["p2", "p3", "p4", "p5"]
        assert c.get("/api/players?offset=-1").status_code == 422
        public = [create(c, [ANN, BOB], [3], public=True)["state"]["id"] for _ in range(5)]
        private = create(c, [ANN, BOB], [3])["state"]["id"]
        listed = [g["id"] for g in c.get("/api/games").json()["games"]]
        assert listed == public[::-1][:3] and private not in listed
        listed = [g["id"] for g in c.get("/api/games?offset=3").json()["games"]]
        assert listed == public[::-1][3:]
        for _ in range(6):
            finished_between(c, [ANN, BOB])
        assert len(c.get("/api/history?limit=1000").json()["games"]) == 4
        assert len(c.get("/api/history?limit=1000&offset=4").json()["games"]) == 2


# -- caps per client and per game ------------------------------------------------------------------


@functools.cache
def tls() -> ssl.SSLContext:
    """One TLS context for every client below (the requests are plain HTTP; httpx would build
    a context with the system's certificates for each client: 30 ms of CPU)."""
    return ssl.create_default_context()


def client_from(source: str) -> httpx.Client:
    """An HTTP client whose connections come from the loopback address ``source``."""
    return httpx.Client(transport=httpx.HTTPTransport(local_address=source, verify=tls()))


class Served:
    """The app served the way ``nimlab serve`` serves it (timed connections, the bound on
    connections per client) on 127.0.0.1, in a thread."""

    def __init__(self, app: Any) -> None:
        from nimlab.cli.serve import _http_protocol, timed_protocol
        from nimlab.web.guard import Holdings
        from nimlab.web.proxies import TrustedProxies

        settings = app.state.live.settings
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(
            app,
            host="127.0.0.1",
            port=self.port,
            log_level="warning",
            http=timed_protocol(
                _http_protocol(),
                10.0,
                held=Holdings.of("connections", settings),
                proxies=TrustedProxies(settings.trusted_proxies),
            ),
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    @property
    def app(self) -> Any:
        return self.server.config.app

    def __enter__(self) -> Served:
        self.thread.start()
        until(lambda: self.server.started, "the server to start")
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(30)

    def connect(self, source: str = "127.0.0.1") -> socket.socket:
        return socket.create_connection(("127.0.0.1", self.port), PATIENCE, (source, 0))

    def get(self, path: str, source: str = "127.0.0.1") -> tuple[int, bytes]:
        """A GET from the loopback address ``source``: its status and body."""
        with client_from(source) as h:
            r = h.get(self.url + path, timeout=PATIENCE)
            return r.status_code, r.content

    def post(self, path: str, body: Any, source: str = "127.0.0.1") -> httpx.Response:
        with client_from(source) as h:
            return h.post(self.url + path, json=body, timeout=PATIENCE)

    def watch(
        self, key: str, source: str = "127.0.0.1", forwarded_for: str | None = None
    ) -> ClientConnection:
        """A WebSocket on game ``key`` from the loopback address ``source`` (a proxy's, with
        ``forwarded_for`` as its ``X-Forwarded-For``)."""
        url = f"ws://127.0.0.1:{self.port}/api/games/{key}/live"
        headers = {"X-Forwarded-For": forwarded_for} if forwarded_for else None
        return ws_connect(
            url, sock=self.connect(source), open_timeout=PATIENCE, additional_headers=headers
        )


def manager_of(server: Served) -> LiveGames:
    live: LiveGames = server.app.state.live
    return live


def read_answer(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection."""
    out = b""
    while chunk := sock.recv(65536):
        out += chunk
    return out


def test_connections_per_client_are_capped_with_a_429(db: str) -> None:
    settings = FAST.model_copy(update={"max_connections_per_client": 5})
    with Served(create_app(db, settings=settings)) as server:
        held = [server.connect() for _ in range(5)]
        for s in held:  # each is served (and kept open)
            s.sendall(b"GET /api/games HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n")
            assert s.recv(65536).startswith(b"HTTP/1.1 200")
        with server.connect() as sixth:
            answer = read_answer(sixth)
        assert answer.startswith(b"HTTP/1.1 429") and b"too many connections" in answer
        assert server.get("/api/options", source="127.0.0.2")[0] == 200  # others are served
        for s in held:
            s.close()
        until(lambda: server.get("/api/games")[0] == 200, "the address to be served again")


@pytest.mark.parametrize(
    ("peer", "forwarded", "client"),
    [
        ("127.0.0.2", "6.6.6.6, 10.0.0.1", "10.0.0.1"),  # the last entry nobody forged
        ("127.0.0.2", "10.0.0.1, 10.8.0.3", "10.0.0.1"),  # 10.8.0.3: a trusted inner proxy
        ("127.0.0.2", "[2001:db8::1]:4711", "2001:db8::1"),
        ("127.0.0.2", "10.0.0.1:4711", "10.0.0.1"),
        ("127.0.0.2", "10.8.0.1, 10.8.0.2", "10.8.0.1"),  # every entry trusted: the first
        ("127.0.0.2", None, "127.0.0.2"),
        ("127.0.0.3", "10.0.0.1", "127.0.0.3"),  # not a proxy: the header is not read
    ],
)
def test_the_client_behind_trusted_proxies(peer: str, forwarded: str | None, client: str) -> None:
    from nimlab.web.proxies import TrustedProxies

    proxies = TrustedProxies(("127.0.0.2", "10.8.0.0/16"))
    assert proxies.client(peer, forwarded) == client


def test_behind_a_trusted_proxy_connections_are_counted_per_real_client(db: str) -> None:
    """The proxy (127.0.0.2) connects for everyone: its connections are not capped as one
    client's (9 WebSockets of 3 people beyond the cap of 3 were 429 once the proxy held 3);
    each person behind it is capped by their forwarded address."""
    settings = SETTINGS.model_copy(
        update={"max_connections_per_client": 3, "trusted_proxies": ("127.0.0.2",)}
    )
    proxy = "127.0.0.2"
    with Served(create_app(db, settings=settings)) as server, contextlib.ExitStack() as stack:
        r = server.post("/api/games", {"players": [ANN, BOB], "piles": [3]})
        key = r.json()["state"]["id"]
        people = ("10.0.0.1", "10.0.0.2", "2001:db8::3")
        for person in people:
            for _ in range(3):
                ws = stack.enter_context(server.watch(key, proxy, f"6.6.6.6, {person}"))
                assert json.loads(ws.recv(PATIENCE))["type"] == "state"
        assert manager_of(server).watchers.sockets_open() == 9
        with pytest.raises(InvalidStatus) as refused:
            server.watch(key, proxy, "10.0.0.1")
        assert refused.value.response.status_code == 429
        assert b"too many connections" in refused.value.response.body
        with client_from(proxy) as h:  # someone else behind the proxy is served
            got = h.get(server.url + "/api/games", headers={"X-Forwarded-For": "10.0.0.4"})
            assert got.status_code == 200


def test_a_slow_body_is_cut(db: str) -> None:
    settings = FAST.model_copy(update={"body_timeout": 0.5})
    with Served(create_app(db, settings=settings)) as server, server.connect() as s:
        s.sendall(
            b"POST /api/players HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json"
            b"\r\ncontent-length: 100000\r\n\r\n{"
        )
        answer = read_answer(s)  # no more bytes are sent: the server answers and closes
        assert answer.startswith(b"HTTP/1.1 408") and b"did not arrive within 0.5 s" in answer


def test_websockets_per_client_and_watchers_per_game_are_capped(db: str) -> None:
    settings = FAST.model_copy(update={"max_sockets_per_client": 2, "max_watchers_per_game": 3})
    with Served(create_app(db, settings=settings)) as server, contextlib.ExitStack() as stack:
        r = server.post("/api/games", {"players": [ANN, BOB], "piles": [3]})
        key = r.json()["state"]["id"]
        mine = [stack.enter_context(server.watch(key)) for _ in range(2)]
        for ws in mine:
            assert json.loads(ws.recv(PATIENCE))["type"] == "state"
        third = stack.enter_context(server.watch(key))
        assert "2 game pages open" in json.loads(third.recv(PATIENCE))["detail"]
        with pytest.raises(ConnectionClosed) as closed:
            third.recv(PATIENCE)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1013
        other = stack.enter_context(server.watch(key, source="127.0.0.2"))
        assert json.loads(other.recv(PATIENCE))["type"] == "state"  # the game's third page
        fourth = stack.enter_context(server.watch(key, source="127.0.0.3"))
        assert "3 open pages" in json.loads(fourth.recv(PATIENCE))["detail"]
        mine[0].close()

        def admitted() -> bool:
            with server.watch(key) as ws:
                return bool(json.loads(ws.recv(PATIENCE))["type"] == "state")

        until(admitted, "a page to be admitted again once one closed")


def test_registrations_per_client_are_capped(db: str) -> None:
    with app_client(db, register_per_hour=3) as c:
        for i in range(3):
            body = {"username": f"p{i}", "given": "P", "family": str(i)}
            assert c.post("/api/players", json=body).status_code == 201
        r = c.post("/api/players", json={"username": "p9", "given": "P", "family": "9"})
        assert r.status_code == 429 and "too many new players" in r.json()["detail"]
        assert int(r.headers["retry-after"]) >= 1
        assert [p["username"] for p in c.get("/api/players").json()] == ["p0", "p1", "p2"]


def rss_mib(pid: int) -> float:
    """The resident memory of process ``pid`` in MiB (Linux)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


async def open_and_close(port: int, key: str, count: int) -> None:
    """Open ``count`` pages of game ``key`` at once (60 per loopback address, below the bound
    per client), wait for each one's first message, then close them all."""
    opened = []
    try:
        for i in range(count):
            sock = socket.create_connection(
                ("127.0.0.1", port), PATIENCE, (f"127.0.1.{i // 60}", 0)
            )
            sock.setblocking(False)
            url = f"ws://127.0.0.1:{port}/api/games/{key}/live"
            ws = await ws_async_connect(url, sock=sock, open_timeout=PATIENCE)
            opened.append(ws)
            assert json.loads(await ws.recv())["type"] == "state"
    finally:
        for ws in opened:
            await ws.close()


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc (Linux)")
def test_memory_returns_when_websockets_close(db: str) -> None:
    with Served(create_app(db, settings=FAST)) as server:
        r = server.post("/api/games", {"players": [ANN, BOB], "piles": [3]})
        key = r.json()["state"]["id"]
        asyncio.run(open_and_close(server.port, key, 200))  # the first use grows the heap
        until(lambda: not manager_of(server).watchers.sockets_open(), "every page to be closed")
        baseline = rss_mib(os.getpid())
        for _ in range(2):
            asyncio.run(open_and_close(server.port, key, 200))
        # 400 pages opened and closed: the memory comes back near the baseline (each page
        # kept about 40 KiB after it closed: +16 MiB here)
        until(lambda: rss_mib(os.getpid()) < baseline + 8, "the memory to come back")


# -- engine time shared per client; games of bots only --------------------------------------------


def test_the_engine_serves_clients_in_turn() -> None:
    workers = EngineWorkers(1)
    started: list[str] = []
    first_runs = threading.Event()
    release = threading.Event()

    def job(name: str) -> Callable[[], None]:
        def run() -> None:
            started.append(name)
            if name == "a0":
                first_runs.set()
                assert release.wait(PATIENCE)

        return run

    try:
        common: dict[str, Any] = {"seconds": 60.0, "positions": None}
        jobs = [workers.submit("g-a0", "bot", job("a0"), **common, client="A")]
        assert first_runs.wait(PATIENCE)
        for i in range(1, 5):  # one client's many games, then two others' one each
            jobs.append(
                workers.submit(
                    f"g-a{i}", "bot", job(f"a{i}"), seconds=60, positions=None, client="A"
                )
            )
        for who in ("B", "C"):
            jobs.append(
                workers.submit(f"g-{who}", "bot", job(who), seconds=60, positions=None, client=who)
            )
        release.set()
        for j in jobs:
            j.future.result(PATIENCE)
        assert started == ["a0", "B", "C", "a1", "a2", "a3", "a4"]
    finally:
        workers.stop()
        workers.join(PATIENCE)


def test_a_game_of_bots_only_has_an_owner_who_stops_it(db: str) -> None:
    with app_client(db, admin_token="sesame", bot_pace=0.05) as c:
        bots = [{"kind": "random"}, {"kind": "random"}]
        created = create(c, bots, [10**6] * 3)
        key, owner = created["state"]["id"], created["owner_token"]
        assert owner and created["seats"] == []
        assert create(c, [ANN, {"kind": "random"}], [3])["owner_token"] is None
        r = c.post(f"/api/games/{key}/stop", json={"token": "forged"})
        assert r.status_code == 403 and "owner" in r.json()["detail"]
        r = c.post(f"/api/games/{key}/stop", json={"token": owner})
        assert r.status_code == 200 and r.json()["ended"] == "Stopped by its owner: nobody wins."
        assert r.json()["saved_as"] is not None
        assert c.post(f"/api/games/{key}/stop", json={"token": owner}).status_code == 409
        # the admin ends any game in play
        people = create(c, [ANN, BOB], [3, 4])["state"]["id"]
        assert c.post(f"/api/games/{people}/stop", json={}).status_code == 403
        r = c.post(f"/api/games/{people}/stop", json={}, headers={"authorization": "Bearer sesame"})
        assert r.status_code == 200 and r.json()["ended"] == "Stopped by the admin: nobody wins."


def test_a_game_of_bots_only_pauses_while_nobody_watches(db: str) -> None:
    with app_client(db, bot_pace=0.01, unwatched_pause=0.0) as c:  # open pages only
        key = create(c, [{"kind": "random"}] * 2, [10**6] * 3)["state"]["id"]
        lg = manager(c).games[key]
        until(lambda: lg.paused, "the game to pause")
        moves = len(lg.game.history)
        assert c.get(f"/api/games/{key}").json()["move_count"] == moves
        with c.websocket_connect(f"/api/games/{key}/live") as ws:
            assert ws.receive_json()["type"] == "state"
            more = until(
                lambda: ws.receive_json()["state"]["move_count"] > moves, "a move while watched"
            )
            assert more
        until(lambda: lg.paused, "the game to pause again once the page closed")


def test_heavy_bot_games_of_one_client_leave_its_turns_to_others(db: str) -> None:
    settings = FAST.model_copy(
        update={"bot_pace": 0, "engine_threads": 2, "move_seconds": 0.3, "create_burst": 100}
    )
    with Served(create_app(db, settings=settings)) as server:
        heavy = {
            "players": [{"kind": "perfect"}] * 3,
            "piles": [90] * 10,
            "game": "kayles",
            "misere": True,
        }
        for i in range(3):  # one client: three games of perfect bots thinking hard
            r = server.post("/api/games", heavy | {"seed": i}, source="127.0.0.2")
            assert r.status_code == 201, r.text
        workers = manager_of(server).workers
        assert workers is not None
        until(lambda: workers.stats.submitted >= 3, "the heavy games to keep the engine busy")
        # meanwhile another client plays people against people, and a game against a bot
        people = server.post("/api/games", {"players": [ANN, BOB], "piles": [5, 5]}, "127.0.0.3")
        key, seats = people.json()["state"]["id"], tokens(people.json())
        for turn in range(1, 5):
            r = server.post(
                f"/api/games/{key}/moves",
                {
                    "seat": (turn - 1) % 2,
                    "token": seats[(turn - 1) % 2],
                    "turn": turn,
                    "pile": 1,
                    "take": 1,
                },
                "127.0.0.3",
            )
            assert r.status_code == 200, r.text
        versus = server.post(
            "/api/games", {"players": [ANN, {"kind": "perfect"}], "piles": [3, 4, 5]}, "127.0.0.3"
        ).json()
        vkey, vtoken = versus["state"]["id"], tokens(versus)[0]
        for turn in (1, 3, 5):
            state = server.post(
                f"/api/games/{vkey}/moves",
                {"seat": 0, "token": vtoken, "turn": turn, "text": "1 1"},
                "127.0.0.3",
            )
            assert state.status_code in (200, 409, 422), state.text
            if state.status_code != 200 or state.json()["over"]:
                break
            assert state.json()["move_count"] == turn + 1  # the bot replied before the answer
        # the order: once the other client's job waited, at most one heavy job per worker
        # started before it (the heavy client had had its turn)
        started = list(workers.started)
        for job in (j for j in started if j.client == "127.0.0.3"):
            assert job.started is not None
            ahead = [
                j
                for j in started
                if j.client == "127.0.0.2"
                and j.started is not None
                and job.submitted < j.started < job.started
            ]
            assert len(ahead) <= workers.workers, (len(ahead), job.kind)
