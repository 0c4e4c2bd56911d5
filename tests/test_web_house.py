"""The web app fed by the core: options from the game registry, setups built by the core, typed
views, a slow setup answered with a 422, and a failing bot reported to everyone watching."""

from __future__ import annotations

import threading
import time
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from nimlab.core.errors import PositionError
from nimlab.core.game import Game
from nimlab.core.games import GAMES
from nimlab.core.players import BOT_KINDS, BOT_TITLES
from nimlab.core.ruleset import DEFAULT_END_POSITIONS, Ruleset
from nimlab.web import ServerSettings, create_app
from nimlab.web import starts as starts_module
from nimlab.web.analysis_views import analysis_out, hint_out
from nimlab.web.schemas_in import PlayerIn
from nimlab.web.schemas_out import AnalysisOut, GameStateOut, HintOut, ReplayFrame
from nimlab.web.views import legal_moves_out, move_out, replay_frames
from processes import until
from webtools import PATIENT, end_test, shared_app, validated_state


@pytest.fixture(scope="module")
def app_client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    db = str(tmp_path_factory.mktemp("web") / "web.db")
    with shared_app(db, PATIENT) as c:
        yield c


@pytest.fixture
def client(app_client: TestClient) -> Iterator[TestClient]:
    """The module's app (see :func:`webtools.shared_app`): a test here plays its own games."""
    yield app_client
    end_test(app_client)


@settings(max_examples=80, deadline=None)
@given(
    st.sampled_from(["nim", "nim misere", "0.333", "0.3033", "0.12", "0.6", "0.77", "0.137"]),
    st.lists(st.integers(0, 14), min_size=1, max_size=4),
)
def test_a_states_legal_moves_are_the_games(ruleset: str, piles: list[int]) -> None:
    """The legal moves a state lists (on piles: made from each pile's amounts, without a Move
    of each, their models shared) are the game's own legal moves, in the same order."""
    try:
        game = Game(Ruleset.parse(ruleset), piles, ["human:Ann", "human:Bob"])
    except PositionError:  # a start that is already over (no move): refused, as play refuses it
        assume(False)
        return
    assert legal_moves_out(game) == [move_out(m) for m in game.legal_moves]


def test_options_come_from_the_registry(client: TestClient) -> None:
    options = client.get("/api/options").json()
    assert [g["name"] for g in options["games"]] == list(GAMES)
    for g in options["games"]:
        entry = GAMES[g["name"]]
        assert g["title"] == entry.title and g["parameter"] == entry.parameter
        assert g["board"] == entry.board and g["example"] == entry.example
    assert options["bots"] == list(BOT_KINDS)
    assert [b["kind"] for b in options["bot_kinds"]] == list(BOT_TITLES)
    assert set(BOT_TITLES) == set(BOT_KINDS)
    assert options["default_end_positions"] == [list(e) for e in DEFAULT_END_POSITIONS]


def test_the_setup_schema_knows_every_bot_kind() -> None:
    kinds = typing.get_args(PlayerIn.model_fields["kind"].annotation)
    assert set(kinds) == {"human", *BOT_KINDS}


@pytest.mark.parametrize("entry", list(GAMES.values()), ids=list(GAMES))
def test_every_registered_game_can_be_set_up(client: TestClient, entry: Any) -> None:
    name = f"{entry.name}:{entry.example}" if entry.parameter else entry.name
    kind = client.get("/api/game", params={"name": name}).json()
    setup = {
        "players": [{"name": "Ann"}, {"name": "Hal", "kind": "perfect"}],
        "piles": list(entry.start),
        "game": name,
    }
    r = client.post("/api/setup/check", json=setup)
    assert r.status_code == 200, r.text
    r = client.post("/api/games", json=setup)
    assert r.status_code == 201, r.text
    state = r.json()["state"]
    assert state["rows"] == (kind["board"] == "rows")
    assert state["title"] == kind["title"]


def test_a_game_kind_is_read_by_the_core(client: TestClient) -> None:
    assert client.get("/api/game", params={"name": "octal:0.4"}).json()["board"] == "rows"
    got = client.get("/api/game", params={"name": "Octal:.330"}).json()
    assert got["name"] == "octal:0.33" and got["board"] == "piles"
    assert "dense-table" in got["strategies"]
    r = client.get("/api/game", params={"name": "chess"})
    assert r.status_code == 422 and "unknown game 'chess'" in r.json()["detail"]


def test_a_setup_that_takes_too_long_is_a_422(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    release = threading.Event()
    real = starts_module.build_game

    def slow(*args: Any) -> Any:
        release.wait(30)
        return real(*args)

    monkeypatch.setattr(starts_module, "build_game", slow)
    settings = ServerSettings(compute_wait=0.01, move_seconds=0.01)
    with TestClient(create_app(str(tmp_path / "w.db"), settings=settings)) as c:
        try:
            r = c.post(
                "/api/setup/check",
                json={
                    "players": [{"name": "A"}, {"name": "B", "kind": "perfect"}],
                    "piles": [3],
                    "first": "auto",  # who starts needs a search: on the engine's workers
                },
            )
        finally:
            release.set()
    assert r.status_code == 422
    assert "takes too long" in r.json()["detail"]


def test_a_bot_replies_inside_the_move_request_and_a_failing_one_is_reported(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    players = [{"name": "Ann"}, {"name": "Hal", "kind": "perfect"}]
    r = client.post("/api/games", json={"players": players, "piles": [3, 5]})
    key, token = r.json()["state"]["id"], r.json()["seats"][0]["token"]
    body = {"seat": 0, "token": token, "turn": 1, "pile": 2, "take": 1}
    state = client.post(f"/api/games/{key}/moves", json=body).json()
    assert state["move_count"] == 2 and state["to_move"] == 0  # the bot's reply is in the answer

    def broken(self: Game) -> Any:
        raise RuntimeError("out of cheese")

    monkeypatch.setattr(Game, "bot_choice_is_instant", lambda self: True)
    monkeypatch.setattr(Game, "bot_choice", broken)
    body = {**body, "turn": 3, "pile": 1, "take": 1}
    r = client.post(f"/api/games/{key}/moves", json=body)
    assert r.status_code == 200 and r.json()["move_count"] == 3  # the move is kept
    problem = until(lambda: client.get(f"/api/games/{key}").json()["problem"], "the report")
    assert problem == "Hal could not move (RuntimeError)"


def test_a_failing_bot_is_reported_to_watchers(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(self: Game) -> Any:
        raise RuntimeError("out of cheese")

    monkeypatch.setattr(Game, "bot_choice", broken)
    r = client.post(
        "/api/games",
        json={
            "players": [{"name": "A", "kind": "perfect"}, {"name": "B", "kind": "random"}],
            "piles": [3, 4],
        },
    )
    key = r.json()["state"]["id"]
    with client.websocket_connect(f"/api/games/{key}/live") as ws:
        deadline = time.monotonic() + 20
        while True:
            event = ws.receive_json()
            assert event["type"] == "state"
            if event["state"]["problem"]:
                break
            assert time.monotonic() < deadline
    state = client.get(f"/api/games/{key}").json()
    assert state["problem"] == "A could not move (RuntimeError)"
    assert state["status"].startswith("The game cannot go on")
    assert not state["over"] and state["move_count"] == 0


def test_views_return_the_declared_models() -> None:
    game = Game("nim", [1, 2], ["human:Ann", "bot:perfect:Hal"])
    assert isinstance(validated_state(game, [None, None]), GameStateOut)
    assert isinstance(analysis_out(game), AnalysisOut)
    assert isinstance(hint_out(game), HintOut)
    game.push("2 2")
    game.play_bot()
    frames = replay_frames(game)
    assert all(isinstance(f, ReplayFrame) for f in frames) and len(frames) == 3
    history = analysis_out(game).history
    assert [s.mistake for s in history] == [False, True, False]
