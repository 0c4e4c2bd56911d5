"""Limits per client counted once by every process serving one database (issues 32 and 33): the
token buckets in the database (:mod:`nimlab.storage.buckets`) take what an exact bucket would and
never give one token twice; two servers on one database (two apps here, each with its own state
as a process has) give a client its limit once, and a network of clients its allowance once,
within 10 %. Counts, never clocks: time stands still for the buckets (a rate of one token in
years) or is the test's own."""

from __future__ import annotations

import asyncio
import json
import math
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import given, settings
from hypothesis import strategies as st

from nimlab.core.game import Game
from nimlab.storage import InPlayLimits, Store, TooManyGamesInPlayError
from nimlab.storage import held as held_module
from nimlab.storage.buckets import RateBuckets
from nimlab.storage.held import HeldCounts
from nimlab.web import create_app
from nimlab.web.limits import SharedLimits
from processes import PATIENCE, until
from test_reliability import Served
from webtools import FAST

STILL = 1e-9
"""A rate at which no token comes back while a test runs."""


def test_a_bucket_takes_what_an_exact_bucket_would(tmp_path: Any) -> None:
    """On SQLite, whose clock is the process's (set by the test): each take refills the bucket
    for the time passed, up to the burst, and takes the whole tokens asked for that it holds;
    the wait when it has none is the time to its next token."""
    db = tmp_path / "buckets.db"
    clock = [1000.0]
    original = time.time
    time.time = lambda: clock[0]  # type: ignore[assignment]
    store = RateBuckets.open(db)
    try:
        run = [0]

        @settings(max_examples=40, deadline=None)
        @given(
            rate=st.sampled_from([0.5, 3.0]),
            burst=st.integers(1, 30),
            steps=st.lists(st.tuples(st.sampled_from([0, 0.25, 1, 4, 30]), st.integers(1, 35))),
        )
        def check(rate: float, burst: int, steps: list[tuple[float, int]]) -> None:
            run[0] += 1
            client = f"c{run[0]}"
            tokens, at = float(burst), clock[0]
            for dt, want in steps:
                clock[0] += dt
                now = clock[0]
                tokens = min(float(burst), tokens + max(0.0, now - at) * rate)
                at = now
                expected = min(want, burst, math.floor(tokens))
                if expected == 0:  # a new bucket is full: only an old one can be empty
                    expected_wait = (1.0 - tokens) / rate
                tokens -= expected
                taken, wait = store.take("create", client, rate, burst, want)
                assert taken == expected
                if taken == 0:
                    assert wait == pytest.approx(expected_wait)
                else:
                    assert wait == 0.0

        check()
        store.take("move", "full soon", 1.0, 3, 3)
        store.take("move", "empty long", STILL, 3, 3)
        clock[0] += 3.0  # the first bucket is full again: deleted
        assert store.prune() >= 1
        assert store.take("move", "full soon", 1.0, 3, 5) == (3, 0.0)
        assert store.take("move", "empty long", STILL, 3, 1)[0] == 0  # kept: still empty
    finally:
        store.close()
        time.time = original  # type: ignore[assignment]


def test_two_connections_never_spend_one_token_twice(database: str) -> None:
    """Two threads, each with a connection of its own, take one token at a time as fast as
    they can: together they take the burst, no more."""
    burst = 200
    RateBuckets.open(database).close()  # the schema, before two threads race to make it
    taken = [0, 0]

    def take(i: int) -> None:
        store = RateBuckets.open(database)
        try:
            while store.take("move", "1.2.3.4", STILL, burst)[0]:
                taken[i] += 1
        finally:
            store.close()

    threads = [threading.Thread(target=take, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(taken) == burst
    store = RateBuckets.open(database)
    try:
        assert store.take("move", "1.2.3.4", STILL, burst, 5)[0] == 0
        assert store.take("move", "1.2.3.5", STILL, burst, 5) == (5, 0.0)  # another client
        store.prune()  # (a bucket with tokens taken stays)
        assert store.take("move", "1.2.3.5", STILL, burst, burst)[0] == burst - 5
    finally:
        store.close()


def _alternate(
    database: str, requests: list[tuple[str, int]], burst: int, allowance: float = 0.0
) -> int:
    """How many of ``requests`` (client, process) two :class:`SharedLimits` on ``database``
    allow, each its client's token and its network's (``allowance``; 0: none)."""

    async def run() -> int:
        processes = [SharedLimits(database), SharedLimits(database)]
        try:
            allowed = 0
            for client, i in requests:
                wait = await processes[i].take_both("create", client, STILL, burst, allowance)
                allowed += wait == 0
            return allowed
        finally:
            for p in processes:
                p.close()

    return asyncio.run(run())


def test_two_processes_give_a_client_its_limit_once(database: str) -> None:
    """Taken one at a time (a burst of 20: 5 % of it is less than one token), a client gets
    exactly its burst through two processes; taken a few at a time (5 of a burst of 100), within
    10 % of it (tokens one process took stay with it)."""
    assert _alternate(database, [("10.0.0.1", i % 2) for i in range(25)], 20) == 20
    allowed = _alternate(database, [("10.0.0.2", i % 2) for i in range(150)], 100)
    assert 90 <= allowed <= 110
    uneven = [("10.0.0.3", int(i % 3 == 0)) for i in range(150)]
    assert 90 <= _alternate(database, uneven, 100) <= 110


def test_requests_at_once_wait_for_one_database_take(database: str) -> None:
    """Thirty requests of one client at once on one process: while one takes tokens from the
    database the others wait for it (one take for as many as wait), and 20 of 30 pass."""

    async def run() -> list[float]:
        limits = SharedLimits(database)
        try:
            return list(
                await asyncio.gather(
                    *(limits.take_both("create", "10.0.9.1", STILL, 20, 4.0) for _ in range(30))
                )
            )
        finally:
            limits.close()

    assert sum(w == 0 for w in asyncio.run(run())) == 20


def test_two_processes_give_a_network_its_allowance_once(database: str) -> None:
    """Thirty addresses of one /24, each within its own limit (2 requests, a burst of 5), through
    two processes: their network's bucket (4 times 5) lets 20 through, not 20 per process."""
    requests = [(f"10.1.0.{c}", (c + r) % 2) for c in range(1, 31) for r in range(2)]
    assert _alternate(database, requests, 5, allowance=4.0) == 20
    other = [(f"10.2.0.{c}", c % 2) for c in range(1, 11)]  # another network: its own
    assert _alternate(database, other, 5, allowance=4.0) == 10


def test_without_the_database_each_process_keeps_its_share(tmp_path: Any) -> None:
    """When the database cannot be used, each of the ``workers`` processes limits a client to
    its share of the burst on its own, and says so in the log; nothing fails."""
    unreachable = f"postgresql://nobody@/nimlab?host={tmp_path / 'no-server'}"

    async def run() -> list[float]:
        limits = SharedLimits(unreachable, workers=2)
        try:
            return [await limits.take_both("create", "10.3.0.1", STILL, 20, 4.0) for _ in range(25)]
        finally:
            limits.close()

    waits = asyncio.run(run())
    assert sum(w == 0 for w in waits) == 10
    assert all(w > 0 for w in waits[10:])


@contextmanager
def two_servers(database: str, **changes: Any) -> Iterator[list[TestClient]]:
    """Two apps on one database (as two processes: each its own games, limits and threads),
    behind a proxy at 127.0.0.1 that names each request's client in X-Forwarded-For; the
    settings :data:`~webtools.FAST` changed by ``changes``."""
    settings = FAST.model_copy(update={"trusted_proxies": ("127.0.0.1",), **changes})
    with ExitStack() as stack:
        yield [
            stack.enter_context(
                TestClient(create_app(database, settings=settings), client=("127.0.0.1", 1))
            )
            for _ in range(2)
        ]


def _create(server: TestClient, client: str) -> int:
    r = server.post(
        "/api/games",
        json={"players": [{"name": "Ann"}, {"name": "Bob"}], "piles": [1, 2]},
        headers={"x-forwarded-for": client},
    )
    assert r.status_code in (201, 429), r.text
    if r.status_code == 429:
        assert "too many new games" in r.json()["detail"] or "network" in r.json()["detail"]
    return r.status_code


def test_25_quick_new_games_through_two_servers_are_refused_past_one_limit(database: str) -> None:
    """Issue 32: 25 quick POST /api/games from one client, alternately on two servers of one
    database: 20 are accepted (the default burst, as one server alone gives; none comes back
    while the test runs), then 429."""
    with two_servers(database, create_rate=1e-6) as servers:
        statuses = [_create(servers[i % 2], "10.4.0.1") for i in range(25)]
    assert statuses == [201] * 20 + [429] * 5


def test_the_games_in_play_of_a_network_are_counted_once_by_two_servers(database: str) -> None:
    """Issue 33: four addresses of one /24 start two games each, alternately on two servers:
    their network may hold 4 (2 per address, twice that per network), counted by the database,
    not 4 per server; another network still starts its own."""
    with two_servers(database, max_games_per_client=2, network_allowance=2.0) as servers:
        statuses = [_create(servers[g % 2], f"10.5.0.{c}") for c in range(1, 5) for g in range(2)]
        assert statuses.count(201) == 4
        assert _create(servers[1], "10.6.0.1") == 201


def test_the_store_bounds_the_games_in_play_of_a_network(database: str) -> None:
    """Two stores on one database (as two processes): a network holds at most
    ``max_per_network`` games in play, counted over both; from ``reserved_from`` games in play
    on, only a network holding less than ``little`` starts one; a game without a network (an
    interface that names none) is bound by its client alone."""
    limits = InPlayLimits(max_games=5, max_per_client=3, max_per_network=2, reserved_from=3)
    begun = Game("nim", [3], ["human:Ann", "human:Bob"]).to_record()
    with Store.open(database, limits=limits) as a, Store.open(database, limits=limits) as b:
        a.add_live_game("a1", begun, {}, client="10.7.0.1", network="10.7.0.0/24")
        b.add_live_game("b1", begun, {}, client="10.7.0.2", network="10.7.0.0/24")
        with pytest.raises(TooManyGamesInPlayError, match="your network") as refused:
            a.add_live_game("a2", begun, {}, client="10.7.0.3", network="10.7.0.0/24")
        assert refused.value.limit == "network_share"
        b.add_live_game("b2", begun, {}, client="10.8.0.1", network="10.8.0.0/24")  # 3 in play
        with pytest.raises(TooManyGamesInPlayError, match="new players") as refused:
            a.add_live_game("a3", begun, {}, client="10.8.0.2", network="10.8.0.0/24")
        assert refused.value.limit == "reserve_share"
        a.add_live_game("a4", begun, {}, client="10.9.0.1", network="10.9.0.0/24")  # a newcomer
        b.add_live_game("b3", begun, {}, client="10.7.0.9")  # no network named: 5 in play
        with pytest.raises(TooManyGamesInPlayError, match="5 games are in play") as refused:
            b.add_live_game("b4", begun, {}, client="10.10.0.1", network="10.10.0.0/24")
        assert refused.value.limit == "max_games_in_play"
        assert a.count_games_in_play() == 5


def test_what_other_processes_hold_is_summed_while_they_live(tmp_path: Any) -> None:
    """Each process publishes what its clients hold (only what changed); a process reads the
    sum of the others', without those not seen for ``alive`` seconds; one not seen for
    FORGET_AFTER seconds is deleted by the next that publishes, one that stops deletes its own."""
    clock = [5000.0]
    original = time.time
    time.time = lambda: clock[0]  # type: ignore[assignment]
    store = RateBuckets.open(tmp_path / "held.db")
    try:
        counts = HeldCounts(store.db)
        counts.publish("p1", {("sockets", "10.0.0.1"): 2, ("connections", "10.0.0.1"): 1})
        counts.publish("p2", {("sockets", "10.0.0.1"): 3, ("sockets", "10.0.0.2"): 1})
        counts.publish("p3", {("sockets", "10.0.0.1"): 4})
        assert counts.others("p1", alive=10) == {
            ("sockets", "10.0.0.1"): 7,
            ("sockets", "10.0.0.2"): 1,
        }
        clock[0] += 20
        counts.publish("p2", {("sockets", "10.0.0.2"): 0})  # p2 alive again; p1, p3 are not
        assert counts.others("p1", alive=10) == {("sockets", "10.0.0.1"): 3}
        assert counts.others("p2", alive=30) == {
            ("sockets", "10.0.0.1"): 6,
            ("connections", "10.0.0.1"): 1,
        }
        clock[0] += held_module.FORGET_AFTER
        counts.publish("p2", {})  # p1 and p3 were not seen for a minute: deleted
        assert counts.others("p2", alive=1e9) == {}
        counts.leave("p2")
        assert counts.others("p4", alive=1e9) == {}
    finally:
        store.close()
        time.time = original  # type: ignore[assignment]


def test_two_processes_share_what_their_clients_hold(database: str) -> None:
    """Two processes, each with its count of WebSockets (4 per address, 8 per network): once
    both have published, each refuses a client what it holds on the other, and an address of
    the same network what the network holds; what one gives back the other gives again."""
    from nimlab.web.guard import Holdings

    def sockets() -> Holdings:
        return Holdings(
            per_address=4, network_allowance=2, capacity=100, network_share=1, reserve_share=0
        )

    async def run() -> None:
        a, b = SharedLimits(database), SharedLimits(database)
        held_a, held_b = sockets(), sockets()
        a.share("sockets", held_a)
        b.share("sockets", held_b)
        try:
            for _ in range(3):
                assert held_a.take("10.0.0.1") is None
            for _ in range(4):
                assert held_b.take("10.0.0.2") is None
            await a.sync()
            await b.sync()
            await a.sync()
            assert held_b.holds("10.0.0.1") == 3
            assert held_b.take("10.0.0.1") is None  # its fourth
            assert held_b.take("10.0.0.1") == "address"
            await b.sync()
            await a.sync()
            assert held_a.take("10.0.0.3") == "network"  # 8 in 10.0.0.0/24 already
            assert held_a.take("10.1.0.1") is None  # another network
            held_a.give_back("10.0.0.1")
            await a.sync()
            await b.sync()
            assert held_b.take("10.0.0.1") is None
        finally:
            a.close()
            b.close()

    asyncio.run(run())


def test_the_pages_a_client_opens_are_counted_once_by_two_servers(database: str) -> None:
    """Two pages open on one server (the bound per client): the other server refuses a third
    once it has read the first's counts (each publishes its own every second), and admits one
    again once one of the two closed."""
    settings = FAST.model_copy(update={"max_sockets_per_client": 2})
    with (
        Served(create_app(database, settings=settings)) as a,
        Served(create_app(database, settings=settings)) as b,
        ExitStack() as stack,
    ):
        key = a.post("/api/games", {"players": [{"name": "Ann"}, {"name": "Bob"}], "piles": [3]})
        key = key.json()["state"]["id"]
        mine = [stack.enter_context(a.watch(key)) for _ in range(2)]
        for ws in mine:
            assert json.loads(ws.recv(PATIENCE))["type"] == "state"

        def refused_on_b() -> bool:
            with b.watch(key) as ws:
                return "2 game pages open" in json.loads(ws.recv(PATIENCE)).get("detail", "")

        until(refused_on_b, "the second server to count the pages open on the first")
        mine[0].close()
        until(lambda: not refused_on_b(), "a page admitted again once one closed")
