"""The web API: games, moves and who may make them, setup checks, the registry, stored games,
live updates, and resuming games after a restart. Every illegal request gets a 4xx answer with a
message and changes nothing."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nimlab.storage import RecordError, Store
from nimlab.web import create_app
from nimlab.web.app import STATIC_DIR
from processes import until
from webtools import PATIENT, end_test, free_port, shared_app, wait_for


@pytest.fixture
def db(tmp_path: Path) -> str:
    return str(tmp_path / "web.db")


LOOPBACK = ("127.0.0.1", 50000)
"""Requests from this machine (the admin actions are allowed from it without a token)."""


@pytest.fixture(scope="module")
def app_client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    db = str(tmp_path_factory.mktemp("web") / "web.db")
    with shared_app(db, PATIENT, client=LOOPBACK) as c:
        yield c


@pytest.fixture
def client(app_client: TestClient) -> Iterator[TestClient]:
    """The module's app (see :func:`webtools.shared_app`): a test here plays its own games
    and does not count what the database holds."""
    yield app_client
    end_test(app_client)


@pytest.fixture
def fresh_client(db: str) -> Iterator[TestClient]:
    """An app of its own on a new database: for a test that counts what the database holds."""
    with TestClient(create_app(db, settings=PATIENT), client=LOOPBACK) as c:
        yield c


def new_game(client: TestClient, **setup: Any) -> tuple[dict[str, Any], dict[int, str]]:
    body = {
        "players": [{"name": "Ann"}, {"name": "Hal", "kind": "perfect"}],
        "piles": [3, 4, 5],
    } | setup
    r = client.post("/api/games", json=body)
    assert r.status_code == 201, r.text
    data = r.json()
    return data["state"], {s["seat"]: s["token"] for s in data["seats"]}


def move(client: TestClient, key: str, **body: Any) -> Any:
    """Post a move; ``turn`` is the next move's number unless given (``turn=None``: left out)."""
    if "turn" not in body:
        r = client.get(f"/api/games/{key}")
        body["turn"] = r.json()["move_count"] + 1 if r.status_code == 200 else 1
    elif body["turn"] is None:
        del body["turn"]
    return client.post(f"/api/games/{key}/moves", json=body)


# -- playing ------------------------------------------------------------------------------------


def test_a_move_gets_the_bots_reply_in_the_same_answer(client: TestClient) -> None:
    state, tokens = new_game(client)
    assert state["status"] == "Ann's turn!" and state["to_move"] == 0
    assert list(tokens) == [0]  # only the human seat has a token
    r = move(client, state["id"], seat=0, token=tokens[0], pile=1, take=2)
    assert r.status_code == 200
    after = r.json()
    assert after["turns"][0]["text"] == "Ann took 2 from pile 1"
    assert after["turns"][1]["name"] == "Hal" and after["turns"][1]["claim"]
    assert after["move_count"] == 2 and after["to_move"] == 0


def test_moves_as_text_use_the_cores_notation(client: TestClient) -> None:
    state, tokens = new_game(client)
    r = move(client, state["id"], seat=0, token=tokens[0], text="b3")
    assert r.status_code == 200
    assert r.json()["turns"][0]["text"] == "Ann took 3 from pile 2"


def test_share_links_carry_the_seat_token(client: TestClient) -> None:
    r = client.post(
        "/api/games", json={"players": [{"name": "Ann"}, {"name": "Bob"}], "piles": [3, 4]}
    )
    seats = r.json()["seats"]
    assert [s["name"] for s in seats] == ["Ann", "Bob"]
    for s in seats:
        assert s["link"] == f"/game/{r.json()['state']['id']}#seat={s['seat']}&token={s['token']}"
    assert seats[0]["token"] != seats[1]["token"]
    # the state everyone sees never contains a token
    assert seats[0]["token"] not in client.get(f"/api/games/{r.json()['state']['id']}").text


# -- every illegal request: a 4xx with a message, and nothing changed ---------------------------


@pytest.fixture
def two_humans(client: TestClient) -> tuple[str, dict[int, str]]:
    state, tokens = new_game(
        client,
        players=[{"name": "Ann"}, {"name": "Bob"}, {"name": "Hal", "kind": "random"}],
        piles=[3, 4, 5],
    )
    return state["id"], tokens


ILLEGAL = [
    # (name, body builder, status, message pattern)
    (
        "wrong token",
        lambda t: {"seat": 0, "token": "nope", "pile": 1, "take": 1},
        403,
        r"wrong token for seat 0 \(Ann\)",
    ),
    (
        "another seat's token",
        lambda t: {"seat": 0, "token": t[1], "pile": 1, "take": 1},
        403,
        r"wrong token for seat 0",
    ),
    (
        "a bot's seat",
        lambda t: {"seat": 2, "token": t[0], "pile": 1, "take": 1},
        403,
        r"seat 2 is Hal, a bot",
    ),
    (
        "no such seat",
        lambda t: {"seat": 7, "token": t[0], "pile": 1, "take": 1},
        422,
        r"seat 7 does not exist: seats are 0 to 2",
    ),
    (
        "negative seat",
        lambda t: {"seat": -1, "token": t[0], "pile": 1, "take": 1},
        422,
        r"seat: Input should be greater than or equal to 0",
    ),
    (
        "out of turn",
        lambda t: {"seat": 1, "token": t[1], "pile": 1, "take": 1},
        409,
        r"it is Ann's turn, not Bob's",
    ),
    (
        "bad pile",
        lambda t: {"seat": 0, "token": t[0], "pile": 9, "take": 1},
        422,
        r"pile 9 does not exist: piles are 1-3",
    ),
    (
        "pile 0",
        lambda t: {"seat": 0, "token": t[0], "pile": 0, "take": 1},
        422,
        r"pile: Input should be greater than or equal to 1",
    ),
    (
        "huge pile number",
        lambda t: {"seat": 0, "token": t[0], "pile": 10**40, "take": 1},
        422,
        r"pile: Input should be less than or equal to 100",
    ),
    (
        "bad amount",
        lambda t: {"seat": 0, "token": t[0], "pile": 2, "take": 9},
        422,
        r"cannot take 9 from pile 2: take 1 to 4 from pile 2 \(it has 4\)",
    ),
    (
        "take 0",
        lambda t: {"seat": 0, "token": t[0], "pile": 2, "take": 0},
        422,
        r"cannot take 0 from pile 2: take 1 to 4",
    ),
    (
        "negative amount",
        lambda t: {"seat": 0, "token": t[0], "pile": 2, "take": -3},
        422,
        r"take: Input should be greater than or equal to 0",
    ),
    (
        "huge amount",
        lambda t: {"seat": 0, "token": t[0], "pile": 2, "take": 10**30},
        422,
        r"cannot take",
    ),
    (
        "stone position on piles",
        lambda t: {"seat": 0, "token": t[0], "pile": 2, "take": 1, "at": 1},
        422,
        r"piles take no stone position",
    ),
    (
        "move text that is not a move",
        lambda t: {"seat": 0, "token": t[0], "text": "lots"},
        422,
        r"'lots' is not a move",
    ),
    (
        "no move at all",
        lambda t: {"seat": 0, "token": t[0]},
        422,
        r"give the move as pile and take",
    ),
    (
        "stale turn number",
        lambda t: {"seat": 0, "token": t[0], "pile": 1, "take": 1, "turn": 5},
        409,
        r"the next move is move 1",
    ),
    (
        "a string for a number",
        lambda t: {"seat": 0, "token": t[0], "pile": "x", "take": 1},
        422,
        r"pile",
    ),
    ("a missing token", lambda t: {"seat": 0, "pile": 1, "take": 1}, 422, r"token"),
    (
        "a missing turn",
        lambda t: {"seat": 0, "token": t[0], "pile": 1, "take": 1, "turn": None},
        422,
        r"turn: Field required",
    ),
    (
        "a string for a seat",
        lambda t: {"seat": "0", "token": t[0], "pile": 1, "take": 1},
        422,
        r"seat: Input should be a valid integer",
    ),
    (
        "false for a seat",
        lambda t: {"seat": False, "token": t[0], "pile": 1, "take": 1},
        422,
        r"seat: Input should be a valid integer",
    ),
    (
        "a fraction for a seat",
        lambda t: {"seat": 0.5, "token": t[0], "pile": 1, "take": 1},
        422,
        r"seat: Input should be a valid integer",
    ),
    (
        "a string for a pile",
        lambda t: {"seat": 0, "token": t[0], "pile": "1", "take": 1},
        422,
        r"pile: Input should be a valid integer",
    ),
    (
        "an unknown field",
        lambda t: {"seat": 0, "token": t[0], "pile": 1, "take": 1, "as": 1},
        422,
        r"as: Extra inputs",
    ),
]


@pytest.mark.parametrize(
    ("body", "status", "pattern"),
    [pytest.param(b, s, p, id=n) for n, b, s, p in ILLEGAL],
)
def test_illegal_move_requests_change_nothing(
    client: TestClient,
    two_humans: tuple[str, dict[int, str]],
    body: Any,
    status: int,
    pattern: str,
) -> None:
    key, tokens = two_humans
    before = client.get(f"/api/games/{key}").json()
    r = move(client, key, **body(tokens))
    assert r.status_code == status, r.text
    assert re.search(pattern, r.json()["detail"]), r.json()["detail"]
    assert client.get(f"/api/games/{key}").json() == before


def test_malformed_json_is_a_400(client: TestClient, two_humans: tuple[str, Any]) -> None:
    key, _ = two_humans
    before = client.get(f"/api/games/{key}").json()
    for raw in (b"{bad", b"", b"[1, 2", b"\xff\xfe"):
        r = client.post(
            f"/api/games/{key}/moves", content=raw, headers={"content-type": "application/json"}
        )
        assert r.status_code in (400, 422), r.text
        assert r.json()["detail"]
    r = client.post(
        f"/api/games/{key}/moves", content=b"{bad", headers={"content-type": "application/json"}
    )
    assert r.status_code == 400
    assert r.json()["detail"].startswith("the request body is not valid JSON")
    r = client.post(f"/api/games/{key}/moves", json=[1, 2, 3])
    assert r.status_code == 422
    assert client.get(f"/api/games/{key}").json() == before


def test_starts_and_moves_answered_without_the_framework_are_the_routes_answers(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A well-formed request to start a game or play a move is answered by nimlab.web.direct
    (plain JSON); one the route reads alike but the direct path leaves to it (a charset in its
    content type) gets the same answer, byte for byte but the game's id and tokens, for every
    request of two games started and played alike: the start, a refused start, moves, a retry,
    the bot's reply, each refusal, the end, and after it."""
    import nimlab.web.direct as direct
    from nimlab.web.api import answer_create, answer_move

    answered: list[str] = []

    def counted(real: Any) -> Any:
        async def answer(*args: Any) -> Any:
            answered.append(real.__name__)
            return await real(*args)

        return answer

    monkeypatch.setattr(direct, "answer_move", counted(answer_move))
    monkeypatch.setattr(direct, "answer_create", counted(answer_create))
    kinds = ["application/json", "application/json; charset=utf-8"]

    def same(answers: list[Any], words: list[list[str]]) -> None:
        texts = []
        for r, secrets in zip(answers, words, strict=True):
            headers = {k: v for k, v in r.headers.items() if k != "x-request-id"}
            text = r.text
            for word in secrets:
                text = text.replace(word, "SECRET")
            text = re.sub(r'"(request_id|saved_as)":("[0-9a-f]+"|\d+)', "", text)
            texts.append((r.status_code, headers, text))
        assert texts[0] == texts[1]

    setup = {
        "players": [{"name": "Ann"}, {"name": "Bob"}, {"name": "Hal", "kind": "perfect"}],
        "piles": [2, 3],
        "seed": 7,
    }
    statuses = []
    for body in (
        {**setup, "players": [{"name": "Ann", "username": "nobody"}, {"name": "Bob"}]},
        setup,
    ):
        answers = [
            client.post("/api/games", content=json.dumps(body), headers={"content-type": kind})
            for kind in kinds
        ]
        created = [r.json() for r in answers]
        same(
            answers,
            [
                [c["state"]["id"], *(s["token"] for s in c["seats"])] if "state" in c else []
                for c in created
            ],
        )
        statuses.append(answers[0].status_code)
    assert statuses == [404, 201]
    games = [(c["state"]["id"], {s["seat"]: s["token"] for s in c["seats"]}) for c in created]
    requests: list[tuple[str, dict[str, Any]]] = [
        ("", {"seat": 0, "token": "x", "turn": 1, "pile": 1, "take": 1}),  # wrong token
        ("", {"seat": 2, "token": "x", "turn": 1, "pile": 1, "take": 1}),  # a bot's seat
        ("", {"seat": 5, "token": "x", "turn": 1, "pile": 1, "take": 1}),  # no such seat
        ("", {"seat": 1, "token": 1, "turn": 1, "pile": 1, "take": 1}),  # does not validate
        ("", {"seat": 0, "token": 0, "turn": 2, "pile": 1, "take": 1}),  # not yet move 2
        ("", {"seat": 0, "token": 0, "turn": 1, "pile": 1, "take": 5}),  # illegal
        ("", {"seat": 1, "token": 1, "turn": 1, "pile": 1, "take": 1}),  # not Bob's turn
        ("", {"seat": 0, "token": 0, "turn": 1, "pile": 1, "take": 1}),
        ("", {"seat": 0, "token": 0, "turn": 1, "pile": 1, "take": 1}),  # a retry
        ("", {"seat": 0, "token": 0, "turn": 1, "pile": 1, "take": 2}),  # played already
        ("", {"seat": 1, "token": 1, "turn": 2, "text": "2 3"}),  # and the bot replies
        ("", {"seat": 0, "token": 0, "turn": 4, "pile": 1, "take": 1}),
        ("", {"seat": 1, "token": 1, "turn": 5, "pile": 1, "take": 1}),  # over
        ("?x=1", {"seat": 0, "token": 0, "turn": 1, "pile": 1, "take": 1}),
        ("/nope", {"seat": 0, "token": 0, "turn": 1, "pile": 1, "take": 1}),
    ]
    for tail, body in requests:
        answers = []
        for (key, tokens), kind in zip(games, kinds, strict=True):
            sent = {
                k: tokens[v] if k == "token" and isinstance(v, int) else v for k, v in body.items()
            }
            path = f"/api/games/{key}/moves{tail}" if tail != "/nope" else "/api/games/n/moves"
            r = client.post(path, content=json.dumps(sent), headers={"content-type": kind})
            answers.append(r)
        same(answers, [[key, *tokens.values()] for key, tokens in games])
    assert answered.count("answer_create") == 2  # the refused start too
    assert 0 < answered.count("answer_move") < len(requests)


def test_unknown_game_ids_are_404(client: TestClient) -> None:
    for method, path in [
        ("GET", "/api/games/nope"),
        ("GET", "/api/games/nope/analysis"),
        ("GET", "/api/games/nope/hint"),
        ("POST", "/api/games/nope/moves"),
    ]:
        body = {"seat": 0, "token": "x", "pile": 1, "take": 1, "turn": 1}
        r = client.request(method, path, json=body)
        assert r.status_code == 404, path
        assert "there is no game 'nope' in play" in r.json()["detail"]
    with client.websocket_connect("/api/games/nope/live") as ws:
        assert ws.receive_json() == {"type": "error", "detail": "there is no game 'nope' in play"}


def test_a_page_opened_while_the_database_cannot_be_read_is_told_to_try_again(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not that its game is gone (a page told so stops, and notes the game as gone): close code
    1013, try again later, with the reason; the same page is served once it can be read."""
    from starlette.websockets import WebSocketDisconnect

    from nimlab.web.errors import Unavailable
    from nimlab.web.live import LiveGames

    state, _ = new_game(client)
    lookup = LiveGames.lookup

    async def down(self: LiveGames, key: str, *, fresh: bool = True) -> Any:
        raise Unavailable("the database cannot be used now")

    monkeypatch.setattr(LiveGames, "lookup", down)
    with client.websocket_connect(f"/api/games/{state['id']}/live") as ws:
        assert ws.receive_json() == {
            "type": "unavailable",
            "detail": "the database cannot be used now",
        }
        with pytest.raises(WebSocketDisconnect) as closed:
            ws.receive_json()
        assert closed.value.code == 1013
    monkeypatch.setattr(LiveGames, "lookup", lookup)
    with client.websocket_connect(f"/api/games/{state['id']}/live") as ws:
        assert ws.receive_json()["type"] == "state"


def test_moves_after_the_end_are_refused(client: TestClient) -> None:
    state, tokens = new_game(client, piles=[2])
    r = move(client, state["id"], seat=0, token=tokens[0], pile=1, take=2)
    final = r.json()
    assert final["over"] and final["status"] == "Ann wins!" and final["winner"] == 0
    r = move(client, state["id"], seat=0, token=tokens[0], pile=1, take=1)
    assert r.status_code == 409 and "the game is over" in r.json()["detail"]
    assert client.get(f"/api/games/{state['id']}/hint").status_code == 409


def test_illegal_moves_on_rows_of_stones(client: TestClient) -> None:
    state, tokens = new_game(client, game="kayles", piles=[5, 3])
    assert state["rows"] and state["board"]["rows"] == [[5], [3]]
    key = state["id"]
    for body, pattern in [
        ({"pile": 1, "take": 3, "at": 1}, r"cannot take 3"),
        ({"pile": 1, "take": 1, "at": 6}, r"stone position 6 does not exist"),
        ({"pile": 3, "take": 1, "at": 1}, r"row 3 does not exist"),
        ({"pile": 1, "take": 1}, r"stone|position|at"),
    ]:
        r = move(client, key, seat=0, token=tokens[0], **body)
        assert r.status_code == 422 and re.search(pattern, r.json()["detail"]), r.text
    r = move(client, key, seat=0, token=tokens[0], pile=1, take=1, at=3)
    assert r.status_code == 200
    assert r.json()["turns"][0]["after"]["rows"][0] == [2, 1, 2]
    taken = r.json()["board"]["rows"]
    assert taken != [[5], [3]]


# -- setting up ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        ({"players": [{"name": "Ann"}]}, "players: List should have at least 2 items"),
        ({"piles": []}, "piles: List should have at least 1 item"),
        ({"piles": [10**100 + 1]}, "piles.0: Input should be less than or equal to"),
        ({"players": [{"name": "A"}, {"username": "x" * 41}]}, "at most 40 characters"),
        ({"players": [{"name": "A"}, {"username": ""}]}, "at least 1 character"),
        ({"misere": 0}, "misere: Input should be a valid boolean"),
        ({"piles": [3, -1]}, "piles.1: Input should be greater than or equal to 0"),
        ({"game": "chess"}, "unknown game 'chess'"),
        ({"game": "octal:0.9"}, "octal"),
        ({"end_positions": ["two"]}, "end position 'two': write heap sizes"),
        ({"players": [{"name": "A:B"}, {"name": "C"}]}, "no colon"),
        (
            {"players": [{"name": "A"}, {"name": "B", "kind": "perfect", "error": 120}]},
            "players.1.error: Input should be less than or equal to 100",
        ),
        (
            {"players": [{"name": "A"}, {"name": "B", "kind": "lookahead", "depth": 99}]},
            "players.1.depth: Input should be less than or equal to",
        ),
        (
            {"players": [{"name": "A"}, {"name": "B"}], "first": 5},
            "seat 5 cannot start: seats are 0 to 1",
        ),
        ({"game": "kayles", "piles": [800, 800]}, "at most 1,000 stones"),
        ({"players": [{"name": "A"}, {"username": "ghost"}]}, "no player 'ghost' is registered"),
        ({"players": [{"name": "A"}, {"kind": "wizard"}]}, "players.1.kind"),
        ({"piles": list(range(1, 102))}, "piles: List should have at most 100 items"),
        ({"piles": [5], "end_positions": ["5"]}, "already an end position"),
        ({"piles": [0, 0]}, "already an end position"),
    ],
)
def test_bad_setups_get_the_cores_message(
    client: TestClient, setup: dict[str, Any], message: str
) -> None:
    body = {"players": [{"name": "Ann"}, {"name": "Hal", "kind": "perfect"}], "piles": [3]} | setup
    live = client.app.state.live  # type: ignore[attr-defined]
    in_play = set(live.games)
    for path in ("/api/setup/check", "/api/games"):
        r = client.post(path, json=body)
        assert r.status_code in (404, 422), r.text
        assert message in r.json()["detail"]
    assert set(live.games) == in_play  # no game was started


def test_a_good_setup_is_described(client: TestClient) -> None:
    r = client.post(
        "/api/setup/check",
        json={
            "players": [{"name": "Ann"}, {"name": "Cy", "kind": "classic", "error": 20}],
            "piles": [3, 4, 5],
            "misere": True,
            "end_positions": ["2, 2,2", "[1,2,3]"],
            "first": "auto",
        },
    )
    assert r.status_code == 200
    assert r.json() == {
        "ok": True,
        "description": "Nim, misère play (whoever moves into an end position loses); "
        "extra end positions [1,2,3], [2,2,2]",
        "players": ["Ann", "Cy (classic bot, 20% errors)"],
    }


# -- learning -----------------------------------------------------------------------------------


def test_analysis_values_every_move_and_keeps_a_value_history(client: TestClient) -> None:
    state, tokens = new_game(client)
    a = client.get(f"/api/games/{state['id']}/analysis").json()
    assert a["outcome"] == "N" and a["nim_sum"] == 2 and a["complete"]
    assert len(a["moves"]) == 12
    assert [(m["pile"], m["take"]) for m in a["moves"] if m["winning"]] == [(1, 2)]
    assert any("nim-sum" in line for line in a["binary"])
    assert a["history"][0]["winner"] == 0
    move(client, state["id"], seat=0, token=tokens[0], pile=3, take=5)  # a mistake
    a = client.get(f"/api/games/{state['id']}/analysis").json()
    assert a["history"][1]["mistake"] and a["history"][1]["winner"] == 1
    hint = client.get(f"/api/games/{state['id']}/hint").json()
    assert hint["text"].startswith("Take ") and hint["claim"]
    # a past position, looked back at: its own moves and explanation, the whole history
    start = client.get(f"/api/games/{state['id']}/analysis?at=0").json()
    assert start["move_count"] == 0 and start["outcome"] == "N" and len(start["moves"]) == 12
    assert start["history"] == a["history"]
    assert client.get(f"/api/games/{state['id']}/analysis?at=9").json() == a
    assert client.get(f"/api/games/{state['id']}/analysis?at=-1").status_code == 422


def test_rows_list_every_amount_a_move_may_take(client: TestClient) -> None:
    """Octal 0.137 on a row of 12: take 2 at either end and take 3 anywhere, each valued."""
    state, _ = new_game(client, game="octal:0.137", piles=[12])
    a = client.get(f"/api/games/{state['id']}/analysis").json()
    assert sorted((m["take"], m["at"]) for m in a["moves"]) == [(2, 1), (2, 11)] + [
        (3, at) for at in range(1, 11)
    ]
    assert sum(m["winning"] for m in a["moves"]) == 2
    assert any("Grundy value" in line for line in a["explanation"])
    # a move that empties a row is valued too (its result keeps the row, as 0)
    state, _ = new_game(client, game="octal:0.137", piles=[12, 3])
    a = client.get(f"/api/games/{state['id']}/analysis").json()
    assert (2, 3, 1) in {(m["pile"], m["take"], m["at"]) for m in a["moves"]}


def test_misere_octal_games_show_their_quotient(client: TestClient) -> None:
    state, _ = new_game(client, game="kayles", piles=[8, 5], misere=True)
    a = client.get(f"/api/games/{state['id']}/analysis").json()
    q = a["quotient"]
    assert q["code"] == "0.77" and len(q["elements"]) == q["order"] == len(q["table"])
    assert q["heap_images"][:3] == ["1", "a", "b"] and set(q["p_elements"]) <= set(q["elements"])
    assert any(line.startswith("  product  ") for line in a["explanation"])
    plain, _ = new_game(client, piles=[3, 4, 5])
    assert client.get(f"/api/games/{plain['id']}/analysis").json()["quotient"] is None


def test_rows_get_a_value_for_every_stone(client: TestClient) -> None:
    state, _ = new_game(client, game="kayles", piles=[6])
    a = client.get(f"/api/games/{state['id']}/analysis").json()
    singles = {m["at"] for m in a["moves"] if m["take"] == 1}
    pairs = {m["at"] for m in a["moves"] if m["take"] == 2}
    assert singles == {1, 2, 3, 4, 5, 6} and pairs == {1, 2, 3, 4, 5}


def test_analysis_with_three_players_names_its_model(client: TestClient) -> None:
    state, _ = new_game(
        client,
        players=[{"name": "A"}, {"name": "B"}, {"name": "C"}],
        piles=[2, 2],
        misere=True,
    )
    a = client.get(f"/api/games/{state['id']}/analysis").json()
    assert a["model"] == "paranoid (3 players)"
    assert "paranoid model" in a["verdict"]
    assert a["moves"] and all(m["winning"] is not None for m in a["moves"])


# -- huge piles ---------------------------------------------------------------------------------


def test_huge_piles(client: TestClient) -> None:
    state, tokens = new_game(client, piles=[10**6, 10**30, 3])
    assert state["board"]["piles"] == [10**6, 10**30, 3]
    assert state["takes"] == [None, None, [1, 2, 3]]
    r = move(client, state["id"], seat=0, token=tokens[0], pile=2, take=10**30 - 5)
    assert r.status_code == 200
    a = client.get(f"/api/games/{state['id']}/analysis").json()
    assert a["available"]


@pytest.mark.parametrize("piles", [[10**8, 1], [2**70, 3]])
@pytest.mark.parametrize("misere", [False, True])
def test_moore_on_huge_piles_is_answered_without_listing_moves(
    client: TestClient, piles: list[int], misere: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Creating moore:2 on [10**8, 1] took 13 s and 4 GB (the end-of-game check listed every
    move), [10**9, 1] answered 500 (MemoryError), piles above 2**63 500 (OverflowError): now
    the start, the hint and the bot's reply never list a move."""
    from nimlab.core.position import Piles
    from nimlab.core.rules import MooreRules
    from nimlab.theory import moore
    from nimlab.theory.outcome import Outcome

    def small_only(real: Any) -> Any:
        def listing(first: Any, *rest: Any) -> Any:
            board = rest[0] if isinstance(first, MooreRules) else first
            heaps = board.heaps if isinstance(board, Piles) else board
            assert max(heaps, default=0) <= 1000, "the moves of a huge pile were listed"
            return real(first, *rest)

        return listing

    monkeypatch.setattr(MooreRules, "successors", small_only(MooreRules.successors))
    monkeypatch.setattr(moore, "moore_takes", small_only(moore.moore_takes))
    monkeypatch.setattr(moore, "moore_moves", small_only(moore.moore_moves))
    state, tokens = new_game(client, piles=piles, game="moore:2", misere=misere)
    assert state["board"]["piles"] == piles and state["status"] == "Ann's turn!"
    hint = client.get(f"/api/games/{state['id']}/hint").json()
    assert hint["proven"] and hint["move"]["pile"] == 1
    r = move(client, state["id"], seat=0, token=tokens[0], pile=2, take=1)  # leaves an N-position
    assert r.status_code == 200, r.text
    after = r.json()
    assert after["move_count"] == 2 and after["turns"][1]["name"] == "Hal"
    left = after["board"]["piles"]
    assert moore.moore_outcome(left, 2, misere=misere) is Outcome.P  # the bot's winning reply
    a = client.get(f"/api/games/{state['id']}/analysis").json()
    if any(left):
        assert a["proven"] and a["outcome"] == "P" and a["to_move"] == 0
    else:  # normal play: the bot took the last objects
        assert a["verdict"] == "Hal wins!" and not misere


# -- three players: elimination rounds ----------------------------------------------------------


def test_three_player_misere_game_with_elimination(client: TestClient) -> None:
    state, tokens = new_game(
        client,
        players=[{"name": "Ann"}, {"name": "Bob"}, {"name": "Cy"}],
        piles=[1, 1],
        misere=True,
    )
    key = state["id"]
    move(client, key, seat=0, token=tokens[0], pile=1, take=1)
    s = move(client, key, seat=1, token=tokens[1], pile=2, take=1).json()
    last = s["turns"][-1]
    assert last["eliminated"] and last["new_round"]
    assert last["messages"] == [
        "Bob was eliminated!",
        "Round 2: Ann and Cy play on from the start position.",
    ]
    assert s["board"]["piles"] == [1, 1] and s["to_move"] == 0
    assert [p["eliminated"] for p in s["players"]] == [False, True, False]
    r = move(client, key, seat=1, token=tokens[1], pile=1, take=1)
    assert r.status_code == 409  # Bob is out
    move(client, key, seat=0, token=tokens[0], pile=1, take=1)
    s = move(client, key, seat=2, token=tokens[2], pile=2, take=1).json()
    assert s["over"] and s["status"] == "Ann wins!"
    assert s["turns"][-1]["messages"] == ["Cy was eliminated!", "Ann wins!"]


# -- keeping games ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("game", "piles", "words", "shape"),
    [
        ("wythoff", [4, 6], ["pile", "match", "matches"], "several-piles"),
        ("staircase", [3, 1, 2], ["step", "coin", "coins"], "one-pile"),
        ("kayles", [3], ["row", "stone", "stones"], "stones"),
    ],
)
def test_a_replay_says_what_its_piles_are_and_what_a_move_is_as_the_game_did(
    client: TestClient, game: str, piles: list[int], words: list[str], shape: str
) -> None:
    state, tokens = new_game(client, game=game, piles=piles, players=[{"name": "A"}, {"name": "B"}])
    assert state["words"] == words and state["move_shape"] == shape
    r = client.post(f"/api/games/{state['id']}/resign", json={"seat": 1, "token": tokens[1]})
    assert r.status_code == 200, r.text
    saved = client.get(f"/api/games/{state['id']}").json()["saved_as"]
    replay = client.get(f"/api/history/{saved}?key={state['id']}").json()
    assert (replay["words"], replay["move_shape"]) == (words, shape)


def test_finished_games_are_stored_with_statistics_and_replay(fresh_client: TestClient) -> None:
    client = fresh_client
    r = client.post("/api/players", json={"username": "ann", "given": "Ann", "family": "Lee"})
    assert r.status_code == 201
    assert (
        client.post(
            "/api/players", json={"username": "ann", "given": "A", "family": "B"}
        ).status_code
        == 409
    )
    state, tokens = new_game(
        client,
        players=[{"username": "ann"}, {"name": "Hal", "kind": "random"}],
        piles=[1],
        public=True,
    )
    assert state["players"][0]["name"] == "Ann Lee"
    final = move(client, state["id"], seat=0, token=tokens[0], pile=1, take=1).json()
    assert final["over"] and final["saved_as"]
    ranking = client.get("/api/rankings").json()
    assert ranking[0]["username"] == "ann" and ranking[0]["games_won"] == 1
    history = client.get("/api/history").json()["games"]
    assert history[0]["id"] == final["saved_as"] and history[0]["winner"] == "Ann Lee"
    assert history[0]["source"] == "web"
    replay = client.get(f"/api/history/{final['saved_as']}").json()
    assert [f["text"] for f in replay["frames"]] == ["Start", "Ann Lee took 1 from pile 1"]
    assert replay["frames"][1]["note"] == "Ann Lee wins!"
    assert client.get("/api/history/999").status_code == 404
    assert client.get(f"/api/history/{10**30}").status_code == 422
    assert client.get("/api/games").json()["games"] == []  # no longer in play
    # the registry's other calls
    assert (
        client.post("/api/players/reset", json={"username": "ann"}).json()[0]["games_played"] == 0
    )
    assert client.post("/api/players/remove", json={"username": "ann"}).json() == []
    r = client.post("/api/players/remove", json={"username": "ann"})
    assert r.status_code == 404 and "no player 'ann'" in r.json()["detail"]


def test_a_restart_resumes_every_unfinished_game(db: str) -> None:
    with TestClient(create_app(db, settings=PATIENT)) as c:
        s1, t1 = new_game(c)
        s2, t2 = new_game(
            c, players=[{"name": "Ann"}, {"name": "Bob"}], piles=[2, 5, 7], game="subtraction:1-3"
        )
        k = new_game(c, game="kayles", piles=[7])
        after1 = move(c, s1["id"], seat=0, token=t1[0], pile=1, take=1).json()
        after2 = move(c, s2["id"], seat=0, token=t2[0], pile=3, take=2).json()
        after3 = move(c, k[0]["id"], seat=0, token=k[1][0], pile=1, take=2, at=3).json()
    with TestClient(create_app(db, settings=PATIENT)) as c:
        for key in (s1["id"], s2["id"], k[0]["id"]):
            assert c.get(f"/api/games/{key}").json()["over"] is False
        for after in (after1, after2, after3):
            again = c.get(f"/api/games/{after['id']}").json()
            assert again["board"] == after["board"]
            assert [t["text"] for t in again["turns"]] == [t["text"] for t in after["turns"]]
        r = move(c, s2["id"], seat=1, token=t2[1], pile=3, take=3)
        assert r.status_code == 200 and r.json()["move_count"] == 2
        r = move(c, s1["id"], seat=0, token="stolen", pile=1, take=1)
        assert r.status_code == 403


def test_a_game_finished_before_a_crash_is_stored_at_restart(db: str) -> None:
    from nimlab.core.game import Game

    game = Game("nim", [1], ["human:Ann", "bot:random:Hal"])
    with Store.open(db) as store:
        meta = {"tokens": {}, "usernames": [None, None], "public": True}
        store.add_live_game("gone", game.to_record(), meta)
        game.push("1 1")
        store.add_live_moves([("gone", 1, game.to_record()["moves"])])
    with TestClient(create_app(db, settings=PATIENT)) as c:
        assert c.get("/api/games").json()["games"] == []
        assert c.get("/api/history").json()["games"][0]["winner"] == "Ann"


def test_bots_alone_play_on_by_themselves(client: TestClient) -> None:
    state, tokens = new_game(
        client, players=[{"name": "A", "kind": "perfect"}, {"name": "B", "kind": "random"}]
    )
    assert tokens == {}
    until(lambda: client.get(f"/api/games/{state['id']}").json()["over"], "the game to end")


# -- watching -----------------------------------------------------------------------------------


def test_spectators_receive_every_move_live(client: TestClient) -> None:
    state, tokens = new_game(client, players=[{"name": "Ann"}, {"name": "Bob"}], piles=[3, 4])
    key = state["id"]
    with client.websocket_connect(f"/api/games/{key}/live") as ws:
        first = ws.receive_json()
        assert first["type"] == "state" and first["state"]["move_count"] == 0
        move(client, key, seat=0, token=tokens[0], pile=1, take=1)
        got = ws.receive_json()["state"]
        assert got["move_count"] == 1 and got["turns"][0]["text"] == "Ann took 1 from pile 1"
        move(client, key, seat=1, token=tokens[1], pile=2, take=4)
        assert ws.receive_json()["state"]["move_count"] == 2


# -- the page -----------------------------------------------------------------------------------


def test_the_page_and_its_assets_are_served_locally(client: TestClient) -> None:
    for path in ("/", "/game/abc", "/players", "/rankings", "/history", "/history/3"):
        r = client.get(path)
        assert r.status_code == 200 and '<script type="module"' in r.text
    assert "javascript" in client.get("/static/js/main.js").headers["content-type"]
    for f in STATIC_DIR.rglob("*"):
        if f.is_file():
            text = f.read_text()
            # no external network: every URL is on this server (the SVG namespace is a name)
            urls = set(re.findall(r"https?://[^\s\"'`)]+", text)) - {"http://www.w3.org/2000/svg"}
            assert not urls, f"{f.name} refers to {urls}"
    schema = client.get("/api/openapi.json").json()
    assert "/api/games/{key}/moves" in schema["paths"]


# -- storage of games in progress -----------------------------------------------------------------


def test_store_keeps_games_in_progress(tmp_path: Path) -> None:
    from nimlab.core.game import Game

    game = Game("kayles", [5], ["human:Ann", "human:Bob"])
    with Store.open(tmp_path / "s.db") as store:
        store.add_live_game("k1", game.to_record(), {"x": 1})
        with pytest.raises(RecordError):
            store.add_live_game("k1", game.to_record(), {})
        game.push("1 2 2")
        game.push("1 5 1")
        store.add_live_moves([("k1", 1, game.to_record()["moves"])])
        with pytest.raises(RecordError):
            store.add_live_moves([("k1", 2, game.to_record()["moves"][1:])])
        with pytest.raises(RecordError):
            store.add_live_moves([("nope", 1, game.to_record()["moves"])])
        [(key, record, meta)] = store.live_games()
        assert key == "k1" and meta == {"x": 1}
        again = Game.from_record(record)
        assert again.board == game.board and again.to_move_seat == game.to_move_seat
        assert store.remove_live_game("k1") and not store.remove_live_game("k1")
        assert store.live_games() == []


# -- any request at all -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def shared_client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    db = str(tmp_path_factory.mktemp("fuzz") / "fuzz.db")
    # every request counts against the client's move limit, refused ones too: no limit here
    with TestClient(create_app(db, settings=PATIENT.model_copy(update={"move_rate": 0}))) as c:
        yield c


numbers = st.one_of(st.integers(-3, 8), st.integers(), st.just(10**40))


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_any_move_request_is_played_or_refused_without_change(
    shared_client: TestClient, data: st.DataObject
) -> None:
    c = shared_client
    misere = data.draw(st.booleans())  # drawn every time: the draws must not depend on state
    if not hasattr(shared_client, "tokens"):  # the first example, or the last game is over
        state, tokens = new_game(
            c,
            players=[{"name": "Ann"}, {"name": "Bob"}, {"name": "Cy", "kind": "random"}],
            piles=[3, 4, 5],
            misere=misere,
            public=True,
        )
        shared_client.tokens = (state["id"], tokens)  # type: ignore[attr-defined]
    key, tokens = shared_client.tokens  # type: ignore[attr-defined]
    before = c.get(f"/api/games/{key}").json()
    body: dict[str, Any] = {
        "seat": data.draw(st.one_of(st.integers(-1, 3), st.integers())),
        "token": data.draw(st.sampled_from([tokens[0], tokens[1], "", "x" * 30])),
    }
    if data.draw(st.booleans()):
        body |= {"pile": data.draw(numbers), "take": data.draw(numbers)}
        if data.draw(st.booleans()):
            body["at"] = data.draw(numbers)
    else:
        body["text"] = data.draw(st.text(max_size=12))
    r = move(c, key, turn=before["move_count"] + 1, **body)
    assert r.status_code in (200, 403, 409, 422), r.text
    after = c.get(f"/api/games/{key}").json()
    if r.status_code == 200:
        assert after["move_count"] > before["move_count"]
        assert after["turns"][: before["move_count"]] == before["turns"]
        assert after["turns"][before["move_count"]]["seat"] == body["seat"]
        if after["over"]:
            del shared_client.tokens  # type: ignore[attr-defined]
    else:
        assert r.json()["detail"]
        assert after == before


# -- the command ----------------------------------------------------------------------------------


def test_serve_reports_a_database_it_cannot_use(tmp_path: Path) -> None:
    from processes import nimlab

    r = nimlab("serve", "--db", str(tmp_path))
    assert r.returncode == 2  # a folder named as the database: a wrong request
    assert "is a directory" in r.stderr and "Traceback" not in r.stderr


def test_serve_on_a_busy_port_says_so(tmp_path: Path) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        from processes import nimlab

        r = nimlab("serve", "--port", str(port), "--db", str(tmp_path / "s.db"))
    assert r.returncode == 2, r.stdout + r.stderr
    assert "it is in use" in r.stderr and "--port" in r.stderr and "serving on" not in r.stdout
    assert "Traceback" not in r.stderr


def test_serve_on_an_address_that_is_not_this_machines_names_host(tmp_path: Path) -> None:
    from processes import nimlab

    for host in ("999.1.1.1", "no-such-host.invalid"):
        r = nimlab("serve", "--host", host, "--port", "0", "--db", str(tmp_path / "s.db"))
        assert r.returncode == 2, r.stdout + r.stderr
        assert f"--host '{host}'" in r.stderr and "serving on" not in r.stdout
        assert "Traceback" not in r.stderr


def test_serve_prints_its_address_serves_and_guards_its_host(tmp_path: Path) -> None:
    """The real command (one process for the checks that need it): its address, a half-open
    connection closed after --request-timeout, a foreign host refused, the admin token."""
    import socket

    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "nimlab", "serve", "--port", str(port)]
        + ["--db", str(tmp_path / "s.db"), "--request-timeout", "0.5"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=dict(os.environ, PYTHONUNBUFFERED="1", NIMLAB_ADMIN_TOKEN="tok"),
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().decode()
        assert f"http://127.0.0.1:{port}" in line
        wait_for(f"http://127.0.0.1:{port}/")
        with socket.create_connection(("127.0.0.1", port), timeout=60) as slow:
            slow.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")  # never finished
            assert slow.recv(1024) == b""  # the server closed it
        import urllib.error
        import urllib.request

        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/api/games", headers={"Host": "rebound.example"}
        )
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=30)
        assert refused.value.code == 421
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/api/players/reset",
            data=b'{"username": "nobody"}',
            headers={"content-type": "application/json"},
        )
        with pytest.raises(urllib.error.HTTPError) as denied:
            urllib.request.urlopen(request, timeout=30)
        assert denied.value.code == 401
    finally:
        proc.terminate()
        proc.wait(20)


def test_a_page_that_starts_listening_late_is_sent_what_was_found(client: TestClient) -> None:
    """An analysis found before the page listens (between its request and its WebSocket) is
    not lost: a new listener gets it after the state."""
    state, _ = new_game(client, players=[{"name": "Ann"}, {"name": "Bob"}])
    found = client.get(f"/api/games/{state['id']}/analysis").json()
    assert found["available"]
    with client.websocket_connect(f"/api/games/{state['id']}/live") as ws:
        assert ws.receive_json()["type"] == "state"
        message = ws.receive_json()
    assert message == {"type": "analysis", "analysis": found}


def test_a_stored_games_id_is_digits_only(client: TestClient) -> None:
    """Found by schemathesis: ``/api/history/%0C2`` (a form feed before 2) was read as game 2."""
    for bad in ("%0C2", "%202", "+2", "%D9%A2", "2%20"):
        r = client.get(f"/api/history/{bad}")
        assert r.status_code == 422, (bad, r.text)
        assert "digits 0-9 only" in r.text


def test_a_responses_writes_leave_together() -> None:
    """The server's transport holds a response's writes (Uvicorn writes head and body apart)
    until the response is complete, or the loop's next turn; close writes what waits first,
    abort drops it."""
    import asyncio

    from nimlab.cli.serve import Corked

    class Recording:
        def __init__(self) -> None:
            self.writes: list[bytes] = []
            self.closed = self.aborted = False

        def write(self, data: bytes) -> None:
            self.writes.append(data)

        def is_closing(self) -> bool:
            return self.closed or self.aborted

        def close(self) -> None:
            self.closed = True

        def abort(self) -> None:
            self.aborted = True

        def get_write_buffer_size(self) -> int:
            return 7

        def get_extra_info(self, name: str) -> str:
            return f"info:{name}"

    async def main() -> None:
        loop = asyncio.get_running_loop()
        real = Recording()
        corked = Corked(real, loop)  # type: ignore[arg-type]
        corked.write(b"HTTP/1.1 200 OK\r\n\r\n")
        corked.write(memoryview(b"{}"))  # type: ignore[arg-type]
        assert real.writes == [] and corked.get_write_buffer_size() == 7 + 21
        corked.flush()  # the response is complete
        assert real.writes == [b"HTTP/1.1 200 OK\r\n\r\n{}"]
        corked.writelines([b"a", b"b"])
        await asyncio.sleep(0)  # the loop's next turn
        assert real.writes[1:] == [b"ab"]
        corked.write(b"last")
        corked.close()
        assert real.writes[2:] == [b"last"] and real.closed
        assert corked.get_extra_info("peername") == "info:peername"
        other = Recording()
        dropped = Corked(other, loop)  # type: ignore[arg-type]
        dropped.write(b"never")
        dropped.abort()
        await asyncio.sleep(0)
        assert other.writes == [] and other.aborted

    asyncio.run(main())


def test_the_settings_database_is_the_one_used(tmp_path: Path) -> None:
    """``create_app(settings=ServerSettings(db=...))`` keeps its games in that database (it
    opened the default file instead)."""
    from nimlab.web import ServerSettings

    db = tmp_path / "club.db"
    with TestClient(create_app(settings=ServerSettings(db=str(db)))) as c:
        r = c.post("/api/games", json={"players": [{"name": "Ann"}, {"name": "Bob"}], "piles": [3]})
        assert r.status_code == 201, r.text
        key = r.json()["state"]["id"]
    with Store.open(str(db)) as store:
        assert key in {k for (k, _record, _meta), _v in store.live_games_with_versions(limit=10)}


@pytest.mark.parametrize(
    ("players", "replies"),
    [
        ([{"name": "Ann"}, {"name": "Bob"}], 0),
        ([{"name": "Ann"}, {"name": "Hal", "kind": "perfect"}], 1),
    ],
)
def test_two_pages_of_one_seat_the_move_that_lost_is_refused_with_why(
    client: TestClient, players: list[dict[str, Any]], replies: int
) -> None:
    """Two pages (tabs) of Ann send move 1: the first is played; the other, another move (as
    text or as pile and take), is refused (409) saying which move was played and that its own
    was not (a move as text was answered 200 as a retry, and dropped without a word); the
    same move again is a retry (200, nothing played twice)."""
    state, tokens = new_game(client, players=players, piles=[3, 4, 5])
    key = state["id"]
    seat = {"seat": 0, "token": tokens[0], "turn": 1}
    first = client.post(f"/api/games/{key}/moves", json=seat | {"text": "3 5"})
    assert first.status_code == 200, first.text
    for other in ({"text": "1 1"}, {"pile": 1, "take": 1}, {"text": "no move"}):
        r = client.post(f"/api/games/{key}/moves", json=seat | other)
        assert r.status_code == 409, r.text
        detail = r.json()["detail"]
        assert "move 1 was already played, from another page of Ann" in detail
        assert "take 5 from pile 3" in detail and "this move was not played" in detail
    for same in ({"text": "3 5"}, {"text": "c5"}, {"pile": 3, "take": 5}):
        again = client.post(f"/api/games/{key}/moves", json=seat | same)
        assert again.status_code == 200, again.text
        assert again.json()["move_count"] == 1 + replies
    assert client.get(f"/api/games/{key}").json()["move_count"] == 1 + replies
