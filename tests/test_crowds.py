"""A crowd of addresses against the limits of the whole server (issue 23): limits per client
count by network too (the /24 of IPv4, the /64 of IPv6), the last part of every capacity (games
in play, WebSockets, connections) is kept for clients holding little, reads of the API are rate
limited, and engine work is shared by network and client, bounded per client, and cancelled
when nobody waits for it. Counts, never clocks: each test checks who was admitted and refused."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import socket
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from fastapi.testclient import TestClient

from nimlab.theory.budget import current_scope
from nimlab.web import create_app
from nimlab.web import learning as learning_module
from nimlab.web import work as work_module
from nimlab.web.guard import Holdings, RateLimiter, little, network_of
from nimlab.web.work import EngineBusy, EngineWorkers
from processes import PATIENCE, until
from test_reliability import Served
from webtools import FAST

ANN, BOB = {"name": "Ann"}, {"name": "Bob"}


@pytest.fixture
def db(tmp_path: Path) -> str:
    return str(tmp_path / "crowds.db")


@pytest.mark.parametrize(
    ("client", "network"),
    [
        ("127.4.5.6", "127.4.5.0/24"),
        ("10.0.0.255", "10.0.0.0/24"),
        ("2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"),
        ("::ffff:10.1.2.3", "10.1.2.0/24"),  # an IPv4 address written as IPv6
        ("testclient", "testclient"),  # not an address: its own network
    ],
)
def test_the_network_of_a_client(client: str, network: str) -> None:
    assert network_of(client) == network


def test_holdings_bound_addresses_networks_and_keep_a_reserve() -> None:
    held = Holdings(
        per_address=4, network_allowance=2, capacity=40, network_share=0.5, reserve_share=0.25
    )
    assert (held.per_network, held.open_until, held.little) == (8, 30, little(4)) == (8, 30, 1)

    def fill(client: str) -> int:
        taken = 0
        while held.take(client) is None:
            taken += 1
        return taken

    assert fill("10.0.0.1") == 4 and held.refusal("10.0.0.1") == "address"
    assert fill("10.0.0.2") == 4 and held.refusal("10.0.0.3") == "network"
    crowd = [f"10.1.{n}.1" for n in range(6)]  # an address in each of several networks
    assert [fill(c) for c in crowd] == [4, 4, 4, 4, 4, 2]  # up to the reserve
    assert [held.refusal(c) for c in crowd] == ["address"] * 5 + ["reserve"]
    assert held.refusal("10.1.0.2") == "reserve"  # its network holds more than a little
    # (a network holding nothing yet is a newcomer: a crowd of fresh networks takes one each)
    newcomers = [f"10.2.{n}.1" for n in range(20)]
    assert [held.take(c) for c in newcomers[:10]] == [None] * 10  # the reserve is theirs
    assert held.take(newcomers[10]) == "capacity" and held.total == 40
    held.give_back(newcomers[0])
    assert held.take(newcomers[0]) is None and held.take(newcomers[1]) == "capacity"
    assert held.by_network["10.0.0.0/24"] == 8


def test_rates_count_by_network_too() -> None:
    limiter = RateLimiter()
    rate, burst = 1e-6, 2  # no refill while the test runs

    def allowed(client: str) -> int:
        return sum(limiter.take_both("read", client, rate, burst, 3) == 0 for _ in range(5))

    assert [allowed(f"10.0.0.{i}") for i in range(1, 6)] == [2, 2, 2, 0, 0]  # 3 x 2 for the /24
    assert allowed("10.0.1.1") == 2  # another network has its own
    assert allowed("2001:db8::1") == 2 and allowed("2001:db8::2") == 2
    assert allowed("2001:db8::3") == 2 and allowed("2001:db8::4") == 0  # one /64


# -- the engine's work ---------------------------------------------------------------------------


def _blocked(workers: EngineWorkers, client: str, started: list[str]) -> threading.Event:
    """A job of ``client`` that holds a worker until the returned event is set."""
    release, running = threading.Event(), threading.Event()

    def hold() -> None:
        started.append("hold")
        running.set()
        assert release.wait(PATIENCE)

    workers.submit(f"g-hold-{client}", "bot", hold, seconds=60, positions=None, client=client)
    assert running.wait(PATIENCE)
    return release


def _job(started: list[str], name: str) -> Callable[[], None]:
    return lambda: started.append(name)


def _submit(workers: EngineWorkers, started: list[str], key: str, name: str, client: str) -> Any:
    """A bot move of game ``key`` for ``client`` that records its start in ``started`` as
    ``name`` (a minute's budget)."""
    return workers.submit(
        key, "bot", _job(started, name), seconds=60, positions=None, client=client
    )


def test_the_engine_serves_networks_in_turn_then_their_clients() -> None:
    """Three addresses of one network get one turn in the round, as one client would (each
    address was one client: the network got three turns for each of the others' one)."""
    workers = EngineWorkers(1)
    started: list[str] = []
    try:
        release = _blocked(workers, "192.168.0.1", started)
        jobs = []
        for name, client in [
            ("a1", "10.0.0.1"),
            ("a1-again", "10.0.0.1"),
            ("a2", "10.0.0.2"),
            ("a3", "10.0.0.3"),
            ("b", "10.0.1.1"),
            ("c", "10.0.2.1"),
        ]:
            jobs.append(
                workers.submit(
                    f"g-{name}",
                    "bot",
                    _job(started, name),
                    seconds=60,
                    positions=None,
                    client=client,
                )
            )
        release.set()
        for j in jobs:
            j.future.result(PATIENCE)
        assert started == ["hold", "a1", "b", "c", "a2", "a3", "a1-again"]
    finally:
        workers.stop()
        workers.join(PATIENCE)


def test_jobs_waiting_are_bounded_per_client_and_network() -> None:
    """Hints and analyses a client asks for again and again are bounded (they queued minutes of
    work); bot moves are not (one per game, and the games per client are bounded)."""
    workers = EngineWorkers(1, per_client=2, network_allowance=2)
    started: list[str] = []
    try:
        release = _blocked(workers, "192.168.0.1", started)
        common: dict[str, Any] = {"seconds": 60, "positions": None}
        jobs = []
        for i, client in enumerate(["10.0.0.1", "10.0.0.1", "10.0.0.2", "10.0.0.2"]):
            jobs.append(
                workers.submit(f"g{i}", "hint", _job(started, str(i)), **common, client=client)
            )
        with pytest.raises(EngineBusy):
            workers.submit("g-more", "analysis", _job(started, "more"), **common, client="10.0.0.1")
        with pytest.raises(EngineBusy):  # the network has 2 x 2 waiting
            workers.submit("g-net", "hint", _job(started, "net"), **common, client="10.0.0.3")
        jobs.append(
            workers.submit("g-other", "hint", _job(started, "other"), **common, client="10.0.1.1")
        )
        for i in range(3):  # bot moves of the client's games are not bounded here
            jobs.append(
                workers.submit(f"b{i}", "bot", _job(started, f"b{i}"), **common, client="10.0.0.1")
            )
        assert workers.stats.refused == 2 and workers.waiting() == 8
        release.set()
        for j in jobs:
            j.future.result(PATIENCE)
        assert sorted(started) == sorted(["hold", "0", "1", "2", "3", "other", "b0", "b1", "b2"])
    finally:
        workers.stop()
        workers.join(PATIENCE)


def test_the_last_free_worker_is_kept_for_light_work() -> None:
    """A client with a job running does not take the last free worker: another client's move
    takes it, and the first client's next job waits for a worker to free."""
    workers = EngineWorkers(2)
    started: list[str] = []
    try:
        release = _blocked(workers, "10.0.0.1", started)
        common: dict[str, Any] = {"seconds": 60, "positions": None}
        heavy = workers.submit("g-h2", "bot", _job(started, "h2"), **common, client="10.0.0.1")
        light = workers.submit("g-l", "bot", _job(started, "light"), **common, client="10.0.9.1")
        light.future.result(PATIENCE)
        assert started == ["hold", "light"] and not heavy.future.done()
        release.set()
        heavy.future.result(PATIENCE)
        assert started == ["hold", "light", "h2"]
    finally:
        workers.stop()
        workers.join(PATIENCE)


def test_a_game_that_kept_the_engine_busy_does_not_take_the_last_free_worker() -> None:
    """Even asked for from a fresh network (a crowd of networks each took it once: an honest
    bot reply waited for a whole heavy move)."""
    workers = EngineWorkers(2, heavy=0.0)  # any engine time at all is heavy here
    started: list[str] = []
    try:
        common: dict[str, Any] = {"seconds": 60, "positions": None}
        workers.submit("g-busy", "bot", _job(started, "busy"), **common).future.result(PATIENCE)
        release = _blocked(workers, "10.0.0.1", started)
        again = workers.submit(
            "g-busy", "bot", _job(started, "busy again"), **common, client="10.0.7.1"
        )
        light = workers.submit("g-new", "bot", _job(started, "light"), **common, client="10.0.8.1")
        light.future.result(PATIENCE)
        assert started == ["busy", "hold", "light"] and not again.future.done()
        release.set()
        again.future.result(PATIENCE)
        assert started[-1] == "busy again"
    finally:
        workers.stop()
        workers.join(PATIENCE)


def test_a_newcomer_joins_the_end_of_the_round() -> None:
    """A network that never ran a job is served after the networks already served once (it
    counted as served longest ago: a crowd of fresh networks went ahead of a player whose
    bot reply had come long before)."""
    workers = EngineWorkers(1)
    started: list[str] = []
    release = threading.Event()
    try:
        _submit(workers, started, "g-k", "k1", "10.9.0.1").future.result(PATIENCE)
        release = _blocked(workers, "10.0.0.1", started)
        fresh = [_submit(workers, started, f"g-n{i}", f"n{i}", f"10.{i}.0.1") for i in (1, 2)]
        known = _submit(workers, started, "g-k", "k2", "10.9.0.1")
        release.set()
        for job in [*fresh, known]:
            job.future.result(PATIENCE)
        assert started == ["k1", "hold", "k2", "n1", "n2"]
    finally:
        release.set()
        workers.stop()
        workers.join(PATIENCE)


def test_newcomers_that_used_the_engine_do_not_take_the_last_free_worker(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Newcomers are judged heavy together: once a fresh network's job used more than
    ``heavy`` engine seconds, the next fresh network waits for a worker other than the last,
    while a light client that played before takes it (each fresh network of a crowd of perfect
    bots took the last free worker once: an honest bot reply waited 4.4 s). The engine's clock
    moves only when a job says so (never timed)."""
    clock = [1000.0]
    monkeypatch.setattr(work_module, "time", SimpleNamespace(monotonic=lambda: clock[0]))

    def heavy_job() -> None:
        started.append("n1")
        clock[0] += 5.0  # five engine seconds

    workers = EngineWorkers(2, heavy=1.0)
    started: list[str] = []
    common: dict[str, Any] = {"seconds": 60, "positions": None}
    release = threading.Event()
    try:
        _submit(workers, started, "g-k", "k1", "10.9.0.1").future.result(PATIENCE)
        release = _blocked(workers, "10.0.0.1", started)
        heavy = workers.submit("g-n1", "bot", heavy_job, **common, client="10.1.0.1")
        heavy.future.result(PATIENCE)
        fresh = _submit(workers, started, "g-n2", "n2", "10.2.0.1")
        known = _submit(workers, started, "g-k", "k2", "10.9.0.1")
        known.future.result(PATIENCE)
        assert started == ["k1", "hold", "n1", "k2"] and not fresh.future.done()
        release.set()
        fresh.future.result(PATIENCE)
        assert started[-1] == "n2"
    finally:
        release.set()
        workers.stop()
        workers.join(PATIENCE)


def test_a_crowd_of_newcomers_arriving_leaves_the_last_free_worker() -> None:
    """Two newcomers' jobs running at once are a crowd arriving: a third fresh network waits
    for a worker other than the last, which a light client that played before takes (the
    first jobs of a crowd of fresh networks took every worker, the last included, before any
    of them had shown it was heavy)."""
    workers = EngineWorkers(3)
    started: list[str] = []
    releases: list[threading.Event] = []
    try:
        _submit(workers, started, "g-k", "k1", "10.9.0.1").future.result(PATIENCE)
        releases += [_blocked(workers, f"10.{i}.0.1", started) for i in (1, 2)]
        fresh = _submit(workers, started, "g-n3", "n3", "10.3.0.1")
        known = _submit(workers, started, "g-k", "k2", "10.9.0.1")
        known.future.result(PATIENCE)
        assert started == ["k1", "hold", "hold", "k2"] and not fresh.future.done()
        releases[0].set()
        fresh.future.result(PATIENCE)
        assert started[-1] == "n3"
    finally:
        for release in releases:
            release.set()
        workers.stop()
        workers.join(PATIENCE)


@pytest.mark.skipif(not hasattr(os, "getpriority"), reason="no thread priorities here")
def test_the_engine_runs_below_the_event_loop() -> None:
    """Engine threads are scheduled after the threads that answer requests (on two busy
    cores, the searches of a crowd's perfect bots kept honest answers waiting for a core)."""
    workers = EngineWorkers(1)
    try:
        mine = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
        job = workers.submit(
            "g",
            "bot",
            lambda: os.getpriority(os.PRIO_PROCESS, threading.get_native_id()),
            seconds=60,
            positions=None,
        )
        assert job.future.result(PATIENCE) == min(19, mine + work_module.ENGINE_NICE)
        assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == mine
    finally:
        workers.stop()
        workers.join(PATIENCE)


def test_a_job_nobody_waits_for_is_cancelled_and_heavy_work_gives_memory_back() -> None:
    workers = EngineWorkers(1, trim_positions=100)
    started: list[str] = []
    try:
        release = _blocked(workers, "10.0.0.1", started)
        waiting = workers.submit("g-w", "bot", _job(started, "w"), seconds=60, positions=None)
        assert workers.cancel_job(waiting) and waiting.future.cancelled()
        assert not workers.cancel_job(waiting)  # once

        def spend() -> None:
            scope = current_scope()
            assert scope is not None
            scope.charge(1000)  # positions stored, as a search stores them

        heavy = workers.submit("g-s", "analysis", spend, seconds=60, positions=None)
        release.set()
        heavy.future.result(PATIENCE)
        assert started == ["hold"] and workers.stats.cancelled == 1
        assert workers.stats.trimmed == 1  # the job over 100 positions; the others not
    finally:
        workers.stop()
        workers.join(PATIENCE)


def test_games_of_bots_only_share_the_workers_they_are_given() -> None:
    """At most ``bots_only`` moves of games of bots only run at once, whoever started them: a
    later move of a game people play takes a free worker before them (30 games of a crowd's
    perfect bots kept every engine thread searching in Python, and an honest player's replies
    waited for the interpreter)."""
    workers = EngineWorkers(3, bots_only=1)
    started: list[str] = []
    common: dict[str, Any] = {"seconds": 60, "positions": None}
    release, running = threading.Event(), threading.Event()

    def show1() -> None:
        started.append("show1")
        running.set()
        assert release.wait(PATIENCE)

    try:
        first = workers.submit("g-s1", "bot", show1, **common, client="10.1.0.1", bots_only=True)
        assert running.wait(PATIENCE)
        second = workers.submit(
            "g-s2", "bot", _job(started, "show2"), **common, client="10.2.0.1", bots_only=True
        )
        played = workers.submit("g-p", "bot", _job(started, "people"), **common, client="10.3.0.1")
        played.future.result(PATIENCE)
        # two workers were free, and the second show came first: it waits for the first
        assert started == ["show1", "people"] and workers.waiting() == 1
        assert not second.future.done()
        release.set()
        first.future.result(PATIENCE)
        second.future.result(PATIENCE)
        assert started == ["show1", "people", "show2"]
    finally:
        release.set()
        workers.stop()
        workers.join(PATIENCE)


def test_the_server_never_keeps_the_event_loop_from_the_interpreter_long(
    db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``nimlab serve`` lets a thread running Python code keep the interpreter's lock at most
    0.1 ms while another waits for it: the event loop waits that long after each of its system
    calls while an engine thread searches in Python (at 1 ms, an honest player's moves beside
    a crowd's perfect bots were several times slower). And the collector's middle generation,
    which holds the interpreter while it examines what the young collections left, runs after
    at most 2 of them (after 20, beside a crowd's perfect bots searching in Python, it stalled
    the event loop 74 ms). Nothing is served here."""
    from nimlab.cli import serve

    seen: list[float] = []
    thresholds: list[tuple[int, ...]] = []

    class Uvicorn:
        def run(self, sockets: list[socket.socket]) -> None:
            seen.append(sys.getswitchinterval())

    monkeypatch.setattr(serve, "_stopping_server", lambda config, timeout: Uvicorn())
    for name in ("collect", "freeze"):  # the test process's collector stays as it is
        monkeypatch.setattr(gc, name, lambda *args: None)
    monkeypatch.setattr(gc, "set_threshold", lambda *args: thresholds.append(args))
    before = sys.getswitchinterval()
    try:
        with socket.socket() as sock:
            serve.run_server(create_app(db, settings=FAST), sock, settings=FAST)
    finally:
        sys.setswitchinterval(before)
    assert seen == [pytest.approx(serve.SWITCH_INTERVAL)] and serve.SWITCH_INTERVAL <= 0.0001
    assert thresholds == [serve.GC_THRESHOLDS]
    young, middle, full = serve.GC_THRESHOLDS
    assert young >= 10_000 and middle <= 2 and young * middle * full >= 20_000 * 20 * 20


def test_a_game_of_bots_only_asks_the_engine_as_one(db: str) -> None:
    """The moves of a game of bots only are marked for the engine (which gives those games
    ``bots_only_threads`` workers together); a bot's reply to a person is not."""
    heavy = {"piles": [30, 30], "game": "kayles", "misere": True}
    perfect = {"kind": "perfect"}
    with TestClient(create_app(db, settings=FAST.model_copy(update={"bot_pace": 0.01}))) as c:
        live = c.app.state.live  # type: ignore[attr-defined]
        workers = live.workers
        assert workers.bots_only == live.settings.bots_only_threads == 1
        show = c.post("/api/games", json=heavy | {"players": [perfect] * 3}).json()
        people = c.post("/api/games", json=heavy | {"players": [perfect, ANN, BOB]}).json()
        keys = {show["state"]["id"]: True, people["state"]["id"]: False}
        until(
            lambda: {j.owner for j in workers.started if j.kind == "bot"} >= set(keys),
            "a bot move of each game on the engine",
        )
        marks = {(j.owner, j.bots_only) for j in workers.started if j.owner in keys}
        assert marks == set(keys.items())


def test_a_game_of_bots_plays_on_for_the_pause_after_its_last_page_closes(db: str) -> None:
    """``unwatched_pause`` counts from when the last page closed, not from when it opened: a
    page open for longer than the pause and then closed (a reload) leaves the game playing."""
    settings = FAST.model_copy(update={"unwatched_pause": 3600.0})
    with TestClient(create_app(db, settings=settings)) as c:
        live = c.app.state.live  # type: ignore[attr-defined]
        setup = {"players": [{"kind": "random"}] * 2, "piles": [10**6] * 3}
        key = c.post("/api/games", json=setup).json()["state"]["id"]
        lg = live.games[key]
        with c.websocket_connect(f"/api/games/{key}/live") as ws:
            assert ws.receive_json()["type"] == "state"
            lg.seen -= 7200.0  # (the page opened two hours ago)
        until(lambda: not lg.subscribers, "the page to close")
        assert live.bots._watched(lg)


def test_a_move_of_a_game_nobody_watches_any_more_is_not_searched(db: str) -> None:
    """A game of bots only whose move waited for the engine while its page was open, and
    whose page closed meanwhile, is not searched when its turn comes: it pauses (a crowd's
    games queued a move each on the shared thread, searched for minutes after they left)."""
    settings = FAST.model_copy(
        update={"engine_threads": 1, "bots_only_threads": 1, "unwatched_pause": 0.0}
    )
    started: list[str] = []
    release = threading.Event()
    with TestClient(create_app(db, settings=settings)) as c:
        live = c.app.state.live  # type: ignore[attr-defined]
        workers = live.workers
        try:
            release = _blocked(workers, "10.0.0.1", started)
            setup = {"players": [{"kind": "random"}] * 2, "piles": [10**6] * 3}
            key = c.post("/api/games", json=setup).json()["state"]["id"]
            lg = live.games[key]
            until(lambda: lg.paused, "the game to pause: nobody watches it")
            with c.websocket_connect(f"/api/games/{key}/live") as ws:
                assert ws.receive_json()["type"] == "state"
                until(lambda: workers.waiting() == 1, "its move to wait for the engine")
                moves = len(lg.game.history)
            until(lambda: not lg.subscribers, "the page to close")
            release.set()
            until(lambda: lg.paused and workers.waiting() == 0, "the game to pause again")
            assert len(lg.game.history) == moves and started == ["hold"]
        finally:
            release.set()


# -- the server ------------------------------------------------------------------------------------


CROWD = FAST.model_copy(
    update={
        "create_rate": 0,
        "max_games_in_play": 24,
        "max_games_per_client": 3,
        "network_allowance": 2.0,
        "network_share": 0.25,
        "reserve_share": 0.25,
    }
)
"""Small bounds: 24 games in play, 3 per address, 6 per network, the last 6 kept for
newcomers."""


def test_a_crowd_of_addresses_leaves_games_in_play_for_newcomers(db: str) -> None:
    game = {"players": [ANN, BOB], "piles": [3]}
    with Served(create_app(db, settings=CROWD)) as server:

        def started(source: str, tries: int = 4) -> int:
            codes = [server.post("/api/games", game, source).status_code for _ in range(tries)]
            assert set(codes) <= {201, 429}, codes
            return codes.count(201)

        # four addresses of one network: 6 games in all, not 4 x 3
        assert [started(f"127.1.0.{i}") for i in range(1, 5)] == [3, 3, 0, 0]
        # an address in each of several networks: up to the reserve (18 games in play)
        assert [started(f"127.2.{n}.1") for n in range(4)] == [3, 3, 3, 3]
        assert started("127.2.0.2") == 0  # its network holds more than a little
        # the newcomers still start games, one each, until the whole bound
        assert [started(f"127.3.{n}.1", 1) for n in range(5)] == [1] * 5
        again = server.post("/api/games", game, "127.3.0.1")
        assert again.status_code == 429
        assert again.json()["detail"].startswith("this server keeps its last games in play")
        assert [started(f"127.3.{n}.1", 1) for n in range(5, 7)] == [1, 0]


def test_reads_of_the_api_are_rate_limited(db: str) -> None:
    settings = FAST.model_copy(update={"read_rate": 1e-6, "read_burst": 3})
    with TestClient(create_app(db, settings=settings)) as c:
        assert [c.get("/api/games").status_code for _ in range(4)] == [200, 200, 200, 429]
        r = c.get("/api/options")
        assert r.status_code == 429 and "too many requests" in r.json()["detail"]
        assert int(r.headers["retry-after"]) >= 1
        assert c.get("/").status_code == 200  # pages and files are not counted
        assert c.post("/api/games", json={"players": [ANN, BOB], "piles": [3]}).status_code == 201


def test_the_schema_documents_the_read_limit_on_every_read(db: str) -> None:
    """Every read of the API may be refused by the guard (429) before its route runs: each
    such operation of the published schema says so."""
    paths = create_app(db, settings=FAST).openapi()["paths"]
    reads = {p: item["get"]["responses"] for p, item in paths.items() if "get" in item}
    assert "/api/games/{key}" in reads and "/api/history/{game_id}/analysis" in reads
    assert [p for p, responses in reads.items() if "429" not in responses] == []


def _status(sock: socket.socket) -> bytes:
    """The status line of the answer to a request on ``sock`` (b"" when it was closed)."""
    with contextlib.suppress(OSError):
        sock.sendall(b"GET /api/options HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n")
    try:
        return sock.recv(65536).split(b"\r\n", 1)[0]
    except OSError:
        return b""


def test_a_crowd_of_connections_leaves_room_for_newcomers(db: str) -> None:
    """Connections (slow headers, open pages) count by network and leave the last part of the
    server's connections to newcomers (a crowd took them all: everyone else got 503)."""
    settings = FAST.model_copy(
        update={
            "max_concurrency": 16,
            "max_connections_per_client": 3,
            "network_allowance": 2.0,
            "network_share": 0.25,
            "reserve_share": 0.25,
        }
    )
    with Served(create_app(db, settings=settings)) as server, contextlib.ExitStack() as stack:

        def held(source: str, count: int) -> int:
            socks = [stack.enter_context(server.connect(source)) for _ in range(count)]
            return sum(_status(s) == b"HTTP/1.1 200 OK" for s in socks)

        assert [held(f"127.5.0.{i}", 3) for i in (1, 2, 3)] == [3, 1, 0]  # a network: 4
        assert [held(f"127.6.{n}.1", 3) for n in range(3)] == [3, 3, 2]  # up to the reserve
        assert held("127.6.0.2", 1) == 0
        assert [held(f"127.7.{n}.1", 1) for n in range(5)] == [1, 1, 1, 1, 0]  # newcomers


class _Transport:
    """A connection as the server's protocol sees it: its peer, what was written, closed."""

    def __init__(self, peer: str) -> None:
        self.peer = (peer, 40000)
        self.written = b""
        self.closed = False

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"peername": self.peer, "sockname": ("127.0.0.1", 8000)}.get(name, default)

    def write(self, data: bytes) -> None:
        self.written += bytes(data)

    def close(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed

    def get_write_buffer_size(self) -> int:
        return 0

    def get_protocol(self) -> Any:
        return None


def test_a_refused_connection_is_answered_before_uvicorn_counts_it(db: str) -> None:
    """A connection beyond its address's or network's bound gets its 429 and is closed without
    Uvicorn counting it among its connections or reading it (a crowd reconnecting as fast as
    it was refused filled Uvicorn's bound on connections: 227 of 274 honest moves got 503), and
    the refusal is counted under its setting."""
    import uvicorn
    from uvicorn.server import ServerState

    from nimlab.cli.serve import TOO_MANY_CONNECTIONS, _http_protocol, timed_protocol
    from nimlab.web import metrics

    settings = FAST.model_copy(
        update={"max_connections_per_client": 2, "network_allowance": 1.5, "max_concurrency": 64}
    )
    held = Holdings.of("connections", settings)
    config = uvicorn.Config(
        create_app(db, settings=settings),
        limit_concurrency=settings.max_concurrency,
        http=timed_protocol(_http_protocol(), 10.0, held=held),
    )
    config.load()
    state = ServerState()
    loop = asyncio.new_event_loop()

    def refused() -> float:
        return metrics.REFUSED.labels("network_share")._value.get()  # type: ignore[no-any-return]

    try:
        before = refused()
        opened = []
        for source in ["127.8.0.1", "127.8.0.1", "127.8.0.2", "127.8.0.2", "127.8.0.3"]:
            protocol = config.http_protocol_class(
                config=config, server_state=state, app_state={}, _loop=loop
            )
            transport = _Transport(source)
            protocol.connection_made(transport)
            opened.append((protocol, transport))
        assert [t.written == TOO_MANY_CONNECTIONS and t.closed for _, t in opened] == [
            False,
            False,
            False,
            True,  # the network (a /24) holds 1.5 x 2 = 3
            True,
        ]
        assert len(state.connections) == 3 and held.total == 3
        assert refused() == before + 2
        for protocol, transport in opened[3:]:
            protocol.data_received(b"GET /api/options HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n")
            protocol.connection_lost(None)
            assert transport.written == TOO_MANY_CONNECTIONS  # nothing read, nothing answered
        assert len(state.connections) == 3 and held.total == 3 and not state.tasks
        opened[0][0].connection_lost(None)
        assert len(state.connections) == 2 and held.total == 2
    finally:
        loop.close()


def test_connections_that_have_not_sent_a_whole_head_are_bounded(db: str) -> None:
    """Slow headers from a crowd hold only a few connections per address and network: a
    connection counts as unfinished until its request head is complete (20 addresses of two
    networks, sending their heads byte by byte and reconnecting when cut, held 820
    connections at a time)."""
    import uvicorn
    from uvicorn.server import ServerState

    from nimlab.cli.serve import (
        TOO_MANY_CONNECTIONS,
        _http_protocol,
        timed_protocol,
        unfinished_bounds,
    )

    settings = FAST.model_copy(
        update={"max_connections_per_client": 16, "network_allowance": 1.5, "max_concurrency": 64}
    )
    unfinished = unfinished_bounds(settings)
    assert (unfinished.per_address, unfinished.per_network) == (4, 6)
    config = uvicorn.Config(
        create_app(db, settings=settings),
        http=timed_protocol(
            _http_protocol(),
            10.0,
            held=Holdings.of("connections", settings),
            unfinished=unfinished,
        ),
    )
    config.load()
    state = ServerState()
    loop = asyncio.new_event_loop()

    def connect(source: str) -> tuple[Any, _Transport]:
        protocol = config.http_protocol_class(
            config=config, server_state=state, app_state={}, _loop=loop
        )
        transport = _Transport(source)
        protocol.connection_made(transport)
        return protocol, transport

    def admitted(source: str, count: int) -> list[tuple[Any, _Transport]]:
        made = [connect(source) for _ in range(count)]
        return [(p, t) for p, t in made if t.written != TOO_MANY_CONNECTIONS]

    try:
        first = admitted("127.8.0.1", 5)
        assert len(first) == 4  # an address: 4 unfinished
        assert len(admitted("127.8.0.2", 5)) == 2  # the network: 6
        assert len(admitted("127.8.1.1", 1)) == 1  # another network
        protocol, transport = first[0]
        protocol.data_received(b"GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n")
        loop.run_until_complete(asyncio.gather(*state.tasks))
        loop.run_until_complete(asyncio.sleep(0))  # (the answer's writes leave together)
        assert transport.written.startswith(b"HTTP/1.1 200 ")
        assert len(admitted("127.8.0.1", 2)) == 1  # its head came: one more may start
        for protocol, _ in first[1:]:  # cut (or gone) before their heads came
            protocol.connection_lost(None)
        assert len(admitted("127.8.0.1", 4)) == 3
        assert unfinished.by_address["127.8.0.1"] == 4 and unfinished.total == 7
    finally:
        loop.close()


def test_an_analysis_stops_when_its_asker_goes_away(
    db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The request went away before the answer (an attacker's heavy analyses, each given up
    after half a second, kept the engine busy for minutes): its engine job is cancelled at
    once, not when the request would have stopped waiting."""

    def endless(game: Any) -> Any:
        scope = current_scope()
        assert scope is not None
        while True:
            scope.check()
            time.sleep(0.001)

    monkeypatch.setattr(learning_module, "analysis_out", endless)
    settings = FAST.model_copy(update={"compute_wait": 3600, "move_seconds": 3600})
    with Served(create_app(db, settings=settings)) as server:
        r = server.post("/api/games", {"players": [ANN, BOB], "piles": [3, 4, 5]})
        key = r.json()["state"]["id"]
        workers = server.app.state.live.workers
        with server.connect() as asker:
            asker.sendall(f"GET /api/games/{key}/analysis HTTP/1.1\r\nhost: x\r\n\r\n".encode())
            until(lambda: workers.running() == 1, "the analysis to run")
        until(lambda: workers.running() == 0, "the analysis to stop once its asker left")
        assert workers.stats.cancelled == 1 and workers.stats.submitted == 1
        assert server.get(f"/api/games/{key}")[0] == 200
