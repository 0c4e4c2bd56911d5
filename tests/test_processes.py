"""One club on several processes: two ``nimlab serve`` processes on one database serve the same
games. Whichever process a request reaches: a move is accepted exactly when it is legal for the
game's current turn (two moves for one turn: one wins), every acknowledged move is seen by the
next read, every open page sees every move in order, a bot's move is played once, and a process
killed with SIGKILL loses nothing it acknowledged while the others serve its games on. No test
here measures time: each waits for a condition (the bench measures speed)."""

from __future__ import annotations

import json
import os
import signal
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from processes import PATIENCE, nimlab
from test_reliability import client_from
from webtools import LivePage, ServerProcess, call, wait_for

pytestmark = pytest.mark.reliability

ARGS = ["--bot-pace", "0", "--move-rate", "0", "--create-burst", "1000", "--takeover-grace", "0.2"]


@pytest.fixture
def pair(database: str, tmp_path: Path) -> Iterator[tuple[ServerProcess, ...]]:
    """Two servers on one database (started together). On PostgreSQL the first is itself two
    processes on one port (``--workers 2``, with one ``/metrics`` for both:
    ``PROMETHEUS_MULTIPROC_DIR``)."""
    first = ["--workers", "2"] if "://" in database else []
    env = {"PROMETHEUS_MULTIPROC_DIR": str(tmp_path)} if first else {}
    servers = [
        ServerProcess(database, args=ARGS + first, env=env),
        ServerProcess(database, args=ARGS),
    ]
    for s in servers:
        s.spawn()
    try:
        yield tuple(s.wait() for s in servers)
    finally:
        for s in servers:
            s.stop()


def test_two_processes_serve_one_club(
    pair: tuple[ServerProcess, ...], database: str, request: pytest.FixtureRequest
) -> None:
    """One test, so that its two servers start once (each start costs seconds)."""
    moves_alternate_between_processes_and_every_page_sees_every_move(pair)
    the_public_games_are_listed_by_every_process(pair)
    two_moves_for_one_turn_on_two_processes_have_one_winner(pair)
    a_bots_move_is_played_once_whichever_process_serves_the_game(pair)
    a_game_of_bots_only_is_played_once_by_two_processes(pair)
    a_retry_of_the_last_move_is_a_retry_on_the_process_that_did_not_see_it(pair)
    a_client_and_its_network_get_their_limits_once_through_two_processes(pair)
    if "://" in database:
        cluster: str = request.getfixturevalue("postgres_cluster")
        the_database_down_answers_503_and_everything_resumes(pair, cluster, database)
        a_process_of_several_on_one_port_killed_is_started_again(pair[0])
        the_metrics_count_each_thing_once_and_forget_the_processes_killed(pair[0], database)
    a_process_killed_loses_nothing_acknowledged_and_the_other_serves_its_games(pair)


def a_retry_of_the_last_move_is_a_retry_on_the_process_that_did_not_see_it(
    pair: tuple[ServerProcess, ...],
) -> None:
    """A game made and read on one process, played to its end through the other: the final
    move sent again (same seat, token and turn) to the first is a retry, 200, nothing played
    (it was answered 503 "could not be saved" when the first process's copy was still at the
    move before: the store said the game was no longer in play, and that was not read as a
    change made elsewhere). Three games: the first process may or may not have caught up."""
    a, b = pair
    for _ in range(3):
        key, tokens = _create(a.url, [{"name": "Ann"}, {"name": "Bob"}], [1, 1])
        status, _state = call(f"{a.url}/api/games/{key}")
        assert status == 200
        moves = [
            {"seat": 0, "token": tokens[0], "turn": 1, "pile": 1, "take": 1},
            {"seat": 1, "token": tokens[1], "turn": 2, "pile": 2, "take": 1},
        ]
        for move in moves:
            status, answer = call(f"{b.url}/api/games/{key}/moves", "POST", move)
            assert status == 200, answer
        assert answer["over"]
        for server in (a, b):
            status, again = call(f"{server.url}/api/games/{key}/moves", "POST", moves[-1])
            assert status == 200, again
            assert again["over"] and again["move_count"] == 2, again


def _register(server: ServerProcess, source: str, name: str) -> int:
    """The status of a registration of player ``name`` from the loopback address ``source``."""
    with client_from(source) as h:
        r = h.post(
            f"{server.url}/api/players",
            json={"username": name, "given": "P", "family": name},
            timeout=PATIENCE,
        )
    assert r.status_code in (201, 429), r.text
    return r.status_code


def a_client_and_its_network_get_their_limits_once_through_two_processes(
    pair: tuple[ServerProcess, ...],
) -> None:
    """Issues 32 and 33: requests of one client alternately on the two processes are refused past
    its limit, as one process alone refuses them, within 10 % (each process takes the tokens of
    the database's bucket a few at a time); so are the requests of twenty addresses of one /24,
    each within its own limit, past their network's. Registrations: 60 an hour per client,
    240 per network (the pair lifts the limits on new games and moves for the other steps)."""
    a, b = pair
    statuses = [_register((a, b)[i % 2], "127.0.1.1", f"one{i}") for i in range(70)]
    assert 54 <= statuses.count(201) <= 66, statuses.count(201)
    statuses = [
        _register((a, b)[(c + i) % 2], f"127.0.2.{c}", f"net{c}x{i}")
        for i in range(15)  # 300 in all: 300 were accepted when each process had its own
        for c in range(1, 21)
    ]
    assert 216 <= statuses.count(201) <= 264, statuses.count(201)


def a_process_of_several_on_one_port_killed_is_started_again(server: ServerProcess) -> None:
    """``--workers 2``: a process killed with SIGKILL is replaced; the port serves on."""
    first = server.children()
    assert len(first) == 2
    os.kill(first[0], signal.SIGKILL)
    deadline = time.monotonic() + PATIENCE
    while not (len(now := server.children()) == 2 and first[0] not in now):
        assert time.monotonic() < deadline, now
        time.sleep(0.05)
    key, tokens = _create(server.url, [{"name": "Ann"}, {"name": "Bob"}], [2])
    move = {"seat": 0, "token": tokens[0], "turn": 1, "pile": 1, "take": 2}
    status, answer = call(f"{server.url}/api/games/{key}/moves", "POST", move)
    assert status == 200 and answer["over"], answer


def _metric(server: ServerProcess, name: str) -> float:
    """The value of the sample ``name`` (no labels) on the server's ``/metrics``."""
    import urllib.request

    with urllib.request.urlopen(f"{server.url}/metrics", timeout=PATIENCE) as r:
        text = r.read().decode()
    values = [float(line.split()[1]) for line in text.splitlines() if line.startswith(name + " ")]
    assert len(values) == 1, (name, text)
    return values[0]


def _half_request(server: ServerProcess) -> socket.socket:
    """A request whose body is still on its way: in flight until its connection closes."""
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=PATIENCE)
    sock.sendall(
        b"POST /api/games HTTP/1.1\r\nHost: localhost\r\ncontent-type: application/json\r\n"
        b"content-length: 100\r\n\r\n{"
    )
    return sock


def the_metrics_count_each_thing_once_and_forget_the_processes_killed(
    server: ServerProcess, database: str
) -> None:
    """``--workers 2`` with one ``/metrics`` (``PROMETHEUS_MULTIPROC_DIR``): requests in flight
    in both processes, both killed with SIGKILL; once they are started again, ``/metrics``
    shows no gauge of the processes killed (``nimlab_requests_in_flight`` stayed at what they
    held: 5, not 1), and the games in play as the database counts them, once (it was the sum
    of the copies each process held: each one resumes every game in play)."""
    from nimlab.storage import Store

    hanging = [_half_request(server) for _ in range(4)]
    try:
        deadline = time.monotonic() + PATIENCE
        while _metric(server, "nimlab_requests_in_flight") < 5:  # the 4, and this request
            assert time.monotonic() < deadline
            time.sleep(0.05)
        first = server.children()
        for pid in first:
            os.kill(pid, signal.SIGKILL)
        while not (len(now := server.children()) == 2 and not set(first) & set(now)):
            assert time.monotonic() < deadline, now
            time.sleep(0.05)
    finally:
        for sock in hanging:
            sock.close()
    wait_for(server.url + "/api/games")
    assert _metric(server, "nimlab_requests_in_flight") == 1  # this request only
    assert _metric(server, "nimlab_websockets_open") == 0
    with Store.open(database) as store:
        before = store.count_games_in_play()
        counted = _metric(server, "nimlab_games_in_play")
        after = store.count_games_in_play()
    assert before > 0 and min(before, after) <= counted <= max(before, after)


def _allow_connections(cluster: str, database: str, allowed: bool) -> None:
    """Let the database take connections again, or refuse them and end those it has (the
    database is down for the servers; the cluster's own database still answers)."""
    import psycopg
    from psycopg.conninfo import conninfo_to_dict

    name = str(conninfo_to_dict(database)["dbname"])
    with psycopg.connect(cluster, autocommit=True) as admin:
        admin.execute(f"ALTER DATABASE {name} ALLOW_CONNECTIONS {str(allowed).lower()}")
        if not allowed:
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s",
                (name,),
            )


def the_database_down_answers_503_and_everything_resumes(
    pair: tuple[ServerProcess, ...], cluster: str, database: str
) -> None:
    from websockets.exceptions import ConnectionClosed
    from websockets.sync.client import connect as ws_connect

    a, b = pair
    key, tokens = _create(b.url, [{"name": "Ann"}, {"name": "Bob"}], [5, 5])
    unseen, _ = _create(b.url, [{"name": "Ann"}, {"name": "Bob"}], [5])  # never asked of A
    watcher = Watcher(a, key)
    watcher.wait_for(0)
    move = {"seat": 0, "token": tokens[0], "turn": 1, "pile": 1, "take": 2}
    _allow_connections(cluster, database, False)
    try:
        status, answer = call(f"{b.url}/api/games/{key}/moves", "POST", move)
        assert status == 503, answer
        assert "could not be saved, so it was not played" in answer["detail"]
        assert database not in answer["detail"]  # what failed is only in the log
        # a page opened now is told to try again later, not that its game is gone
        with ws_connect(f"ws://127.0.0.1:{a.port}/api/games/{unseen}/live") as ws:
            said = json.loads(ws.recv(PATIENCE))
            assert said["type"] == "unavailable" and database not in said["detail"], said
            with pytest.raises(ConnectionClosed) as closed:
                ws.recv(PATIENCE)
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 1013
    finally:
        _allow_connections(cluster, database, True)
    # back without a restart: nothing of the refused move was kept, the same move now plays
    # (a retry may still meet a connection the database ended: 503, then it works)
    for _ in range(5):
        status, answer = call(f"{b.url}/api/games/{key}/moves", "POST", move)
        if status != 503:
            break
    assert status == 200 and answer["move_count"] == 1, answer
    assert watcher.wait_for(1)[0].startswith("Ann took 2")  # the other's feed is back too
    watcher.close()


def the_public_games_are_listed_by_every_process(pair: tuple[ServerProcess, ...]) -> None:
    """A game made public on one process is listed by the other, newest first, with its moves
    played on either; a private game is not listed, nor a finished one."""
    a, b = pair
    people = [{"name": "Ann"}, {"name": "Bob"}]
    older, older_tokens = _create(a.url, people, [2, 2], public=True)
    private, _ = _create(a.url, people, [3], public=False)
    newer, newer_tokens = _create(a.url, people, [4], public=True)

    def listed(server: ServerProcess) -> list[tuple[str, int]]:
        status, answer = call(f"{server.url}/api/games?limit=1000")
        assert status == 200, answer
        return [(g["id"], g["move_count"]) for g in answer["games"] if g["id"] in keys]

    keys = {older, private, newer}
    assert listed(b) == listed(a) == [(newer, 0), (older, 0)]
    move = {"seat": 0, "token": older_tokens[0], "turn": 1, "pile": 1, "take": 1}
    status, answer = call(f"{a.url}/api/games/{older}/moves", "POST", move)
    assert status == 200, answer
    assert listed(b) == [(newer, 0), (older, 1)]  # B read the game A changed
    move = {**move, "token": newer_tokens[0], "take": 4}
    status, answer = call(f"{b.url}/api/games/{newer}/moves", "POST", move)
    assert status == 200 and answer["over"], answer  # finished on B: listed by neither
    assert listed(a) == listed(b) == [(older, 1)]


def _create(
    url: str, players: list[dict[str, Any]], piles: list[int], *, public: bool = False
) -> tuple[str, list[str]]:
    body = {"players": players, "piles": piles, "public": public}
    status, created = call(f"{url}/api/games", "POST", body)
    assert status == 201, created
    seats = sorted(created["seats"], key=lambda s: s["seat"])
    return created["state"]["id"], [s["token"] for s in seats]


class Watcher(LivePage):
    """An open page of a game on one server: every turn it was sent, checked to come in order
    (each message's turns follow those already seen: none skipped)."""

    def __init__(self, server: ServerProcess, key: str) -> None:
        self.turns: list[str] = []
        self.over = False
        self.states = 0
        super().__init__(f"ws://127.0.0.1:{server.port}/api/games/{key}/live")

    def seen(self, state: dict[str, Any]) -> None:
        assert state["turns_from"] <= len(self.turns), "a turn was skipped"
        del self.turns[state["turns_from"] :]
        self.turns += [t["text"] for t in state["turns"]]
        self.over = state["over"]
        self.states += 1

    def wait_for(self, count: int, over: bool = False) -> list[str]:
        """The turns, once the page was sent at least ``count`` of them and ``over`` is what
        the last state said (at least one state: the page has the game)."""
        with self.cond:
            assert self.cond.wait_for(
                lambda: (
                    self.gone or (self.states and len(self.turns) >= count and self.over == over)
                ),
                PATIENCE,
            ), (self.turns, count)
            assert not self.gone, ("the page's connection was closed", self.turns, count)
            return list(self.turns)


def _state(server: ServerProcess, key: str) -> dict[str, Any]:
    status, state = call(f"{server.url}/api/games/{key}")
    assert status == 200, state
    return dict(state)


def moves_alternate_between_processes_and_every_page_sees_every_move(
    pair: tuple[ServerProcess, ...],
) -> None:
    a, b = pair
    key, tokens = _create(a.url, [{"name": "Ann"}, {"name": "Bob"}], [4, 4])
    watchers = [Watcher(a, key), Watcher(b, key)]
    try:
        for turn in range(1, 9):
            seat, server, other = (turn - 1) % 2, pair[turn % 2], pair[(turn + 1) % 2]
            move = {"seat": seat, "token": tokens[seat], "turn": turn, "pile": 1 + seat, "take": 1}
            status, answer = call(f"{server.url}/api/games/{key}/moves", "POST", move)
            assert status == 200, answer
            # the other process sees the acknowledged move at once
            assert _state(other, key)["move_count"] == turn
        final = _state(a, key)
        assert final["over"] and final["saved_as"] is not None
        assert _state(b, key)["saved_as"] == final["saved_as"]
        seen = [w.wait_for(8, over=True) for w in watchers]
        assert seen[0] == seen[1] and len(seen[0]) == 8
        assert seen[0][0].startswith("Ann took 1") and seen[0][1].startswith("Bob took 1")
    finally:
        for w in watchers:
            w.close()


def two_moves_for_one_turn_on_two_processes_have_one_winner(
    pair: tuple[ServerProcess, ...],
) -> None:
    a, b = pair
    key, tokens = _create(b.url, [{"name": "Ann"}, {"name": "Bob"}], [9, 9])
    for turn in range(1, 8):
        seat = (turn - 1) % 2
        mine = {"seat": seat, "token": tokens[seat], "turn": turn}
        # two pages of one seat, one on each process; from move 6 the moves are typed (text)
        moves = [mine | {"pile": 1, "take": 1}, mine | {"pile": 2, "take": 1}]
        if turn > 5:
            moves = [mine | {"text": "1 1"}, mine | {"text": "2 1"}]
        answers: list[tuple[int, Any]] = [(0, None), (0, None)]
        ready = threading.Barrier(2)

        def send(i: int, moves: Any = moves, answers: Any = answers, ready: Any = ready) -> None:
            ready.wait(PATIENCE)
            answers[i] = call(f"{pair[i].url}/api/games/{key}/moves", "POST", moves[i])

        threads = [threading.Thread(target=send, args=(i,)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(PATIENCE)
        codes = sorted(code for code, _ in answers)
        assert codes == [200, 409], answers
        winner = 0 if answers[0][0] == 200 else 1
        # the page that lost is told so, with the move that was played
        assert "this move was not played" in answers[1 - winner][1]["detail"], answers
        for server in pair:
            state = _state(server, key)
            assert state["move_count"] == turn
            assert state["turns"][-1]["move"]["pile"] == winner + 1
    # the stored history has exactly one move per turn, and it replays
    state = _state(a, key)
    assert [t["number"] for t in state["turns"]] == [1, 2, 3, 4, 5, 6, 7]


def a_bots_move_is_played_once_whichever_process_serves_the_game(
    pair: tuple[ServerProcess, ...],
) -> None:
    a, b = pair
    players: list[dict[str, Any]] = [
        {"name": "Ann"},
        {"kind": "lookahead", "depth": 2, "name": "Hal"},
    ]
    key, tokens = _create(a.url, players, [3, 4, 5])
    turn = 1
    while True:
        state = _state(pair[turn % 2], key)
        if state["over"]:
            break
        assert state["to_move"] == 0 and state["move_count"] == turn - 1
        pile = next(i for i, n in enumerate(state["board"]["piles"]) if n > 0)
        move = {"seat": 0, "token": tokens[0], "turn": turn, "pile": pile + 1, "take": 1}
        status, answer = call(f"{pair[turn % 2].url}/api/games/{key}/moves", "POST", move)
        assert status == 200, answer
        turn = answer["move_count"] + 1
    seats = [t["seat"] for t in state["turns"]]
    assert seats == [i % 2 for i in range(len(seats))]  # one reply to each move, no more
    assert _state(b, key)["saved_as"] == state["saved_as"]


def a_game_of_bots_only_is_played_once_by_two_processes(
    pair: tuple[ServerProcess, ...],
) -> None:
    a, b = pair
    bots = [{"kind": "random", "name": "R1"}, {"kind": "random", "name": "R2"}]
    key, _ = _create(a.url, bots, [6, 6])
    watchers = [Watcher(a, key), Watcher(b, key)]  # a game of bots only plays while watched
    try:
        seen = [w.wait_for(1, over=True) for w in watchers]
    finally:
        for w in watchers:
            w.close()
    assert seen[0] == seen[1]
    state = _state(b, key)
    assert state["over"] and len(seen[0]) == state["move_count"]
    assert [t["seat"] for t in state["turns"]] == [i % 2 for i in range(state["move_count"])]


def a_process_killed_loses_nothing_acknowledged_and_the_other_serves_its_games(
    pair: tuple[ServerProcess, ...],
) -> None:
    a, doomed = pair
    key, tokens = _create(doomed.url, [{"name": "Ann"}, {"name": "Bob"}], [9, 9])
    watcher = Watcher(a, key)
    for turn in range(1, 6):
        seat = (turn - 1) % 2
        move = {"seat": seat, "token": tokens[seat], "turn": turn, "pile": 1, "take": 1}
        assert call(f"{doomed.url}/api/games/{key}/moves", "POST", move)[0] == 200
    doomed.kill()
    # the other process has every acknowledged move, and plays on
    assert _state(a, key)["move_count"] == 5
    move = {"seat": 1, "token": tokens[1], "turn": 6, "pile": 2, "take": 3}
    status, answer = call(f"{a.url}/api/games/{key}/moves", "POST", move)
    assert status == 200 and answer["move_count"] == 6, answer
    assert len(watcher.wait_for(6)) == 6
    watcher.close()
    record = _state(a, key)
    assert [t["move"]["pile"] for t in record["turns"]] == [1, 1, 1, 1, 1, 2]


def test_several_processes_on_an_sqlite_file_are_refused(tmp_path: Path) -> None:
    done = nimlab("serve", "--workers", "2", "--db", str(tmp_path / "one.db"))
    assert done.returncode == 2
    assert "--workers 2 needs a PostgreSQL database" in done.stderr
    assert "--db postgresql://" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "one.db").exists()


def test_the_supervisor_logs_in_json_and_each_process_its_stop(postgres_url: str) -> None:
    """``--workers 2 --log-format json``: every line is JSON, the supervisor's too (a process
    started again was a plain line), and each process says when it stops."""
    server = ServerProcess(postgres_url, args=["--workers", "2", "--log-format", "json"]).start()
    first = server.children()
    os.kill(first[0], signal.SIGKILL)
    deadline = time.monotonic() + PATIENCE
    while not (len(now := server.children()) == 2 and first[0] not in now):
        assert time.monotonic() < deadline, now
        time.sleep(0.05)
    wait_for(server.url + "/readyz")
    server.stop()
    lines = [json.loads(line) for line in server.logged().splitlines() if line]
    messages = [line["message"] for line in lines]
    assert any(m.startswith(f"server process {first[0]} ended (-9)") for m in messages), messages
    assert sum(m.startswith("started: ") for m in messages) == 1, messages
    stops = [m for m in messages if m.startswith("stopped")]
    # the process that had been serving, then the supervisor (the one started again may still
    # be starting: stopped then, it says nothing)
    assert f"stopped (process {first[1]})" in stops, stops
    assert stops[-1].startswith("stopped: every server process has ended"), stops
