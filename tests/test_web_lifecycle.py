"""A game's life beyond its moves in the web API: resign, abandon, take back, delete, the
analysis of stored games for replay, the analysis option of games between people, the app's
"no such page", and the value history with more than two players."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from nimlab.storage import Store
from nimlab.web import ServerSettings, create_app
from processes import until
from webtools import PATIENT, end_test, shared_app


@pytest.fixture
def db(tmp_path: Path) -> str:
    return str(tmp_path / "web.db")


@pytest.fixture(scope="module")
def shared_db(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.mktemp("web") / "web.db")


@pytest.fixture(scope="module")
def app_client(shared_db: str) -> Iterator[TestClient]:
    # from this machine: the admin actions need no token
    with shared_app(shared_db, PATIENT, client=("127.0.0.1", 50000)) as c:
        yield c


@pytest.fixture
def client(app_client: TestClient) -> Iterator[TestClient]:
    """The module's app (see :func:`webtools.shared_app`), on the database ``shared_db``: a
    test here plays its own games and does not count what the database holds."""
    yield app_client
    end_test(app_client)


@pytest.fixture
def fresh_client(db: str) -> Iterator[TestClient]:
    """An app of its own on a new database ``db``: for a test that counts what it holds."""
    with TestClient(create_app(db, bot_pace=0), client=("127.0.0.1", 50000)) as c:
        yield c


def new_game(client: TestClient, **setup: Any) -> tuple[dict[str, Any], dict[int, str]]:
    body = {"players": [{"name": "Ann"}, {"name": "Hal", "kind": "perfect"}], "piles": [3, 4, 5]}
    r = client.post("/api/games", json=body | setup)
    assert r.status_code == 201, r.text
    data = r.json()
    return data["state"], {s["seat"]: s["token"] for s in data["seats"]}


def two_people(client: TestClient, **setup: Any) -> tuple[dict[str, Any], dict[int, str]]:
    return new_game(client, players=[{"name": "Ann"}, {"name": "Bob"}], **setup)


def live_keys(db: str) -> list[str]:
    with Store.open(db) as store:
        return [key for key, _, _ in store.live_games()]


def test_resign_gives_the_game_to_the_other_player_and_stops_it(
    client: TestClient, shared_db: str
) -> None:
    state, tokens = two_people(client)
    key = state["id"]
    r = client.post(f"/api/games/{key}/resign", json={"seat": 0, "token": tokens[1]})
    assert r.status_code == 403 and "wrong token" in r.json()["detail"]
    r = client.post(f"/api/games/{key}/resign", json={"seat": 1, "token": tokens[1]})
    assert r.status_code == 200, r.text
    out = r.json()
    assert out["over"] and out["winner"] == 0 and out["to_move"] is None
    assert out["ended"] == out["status"] == "Bob resigned. Ann wins!"
    assert key not in live_keys(shared_db)
    assert key not in [g["id"] for g in client.get("/api/games").json()["games"]]
    r = client.post(
        f"/api/games/{key}/moves", json={"seat": 0, "token": tokens[0], "text": "1 1", "turn": 1}
    )
    assert r.status_code == 409
    r = client.post(f"/api/games/{key}/abandon", json={"seat": 0, "token": tokens[0]})
    assert r.status_code == 409
    # it is in the history with its ending, and its link still answers after it left play
    saved = out["saved_as"]
    game = client.get(f"/api/history/{saved}").json()
    assert game["game"]["ending"] == "resigned" and game["game"]["winners"] == ["Ann"]
    assert game["frames"][-1]["note"] == "Bob resigned. Ann wins!"


def test_resign_needs_two_players_left_and_abandon_stops_any_game(client: TestClient) -> None:
    state, tokens = new_game(
        client, players=[{"name": "Ann"}, {"name": "Bob"}, {"name": "Cy"}], piles=[2, 2]
    )
    key = state["id"]
    r = client.post(f"/api/games/{key}/resign", json={"seat": 2, "token": tokens[2]})
    assert r.status_code == 200 and r.json()["winner"] is None
    state, tokens = two_people(client)
    r = client.post(f"/api/games/{state['id']}/abandon", json={"seat": 0, "token": tokens[0]})
    out = r.json()
    assert out["over"] and out["winner"] is None
    assert out["status"] == "Abandoned by Ann: nobody wins."


def test_a_bot_seat_and_a_missing_game_cannot_resign(client: TestClient) -> None:
    state, _ = new_game(client)
    r = client.post(f"/api/games/{state['id']}/resign", json={"seat": 1, "token": "x"})
    assert r.status_code == 403 and "bot" in r.json()["detail"]
    r = client.post("/api/games/nope/resign", json={"seat": 0, "token": "x"})
    assert r.status_code == 404


def test_undo_takes_back_the_move_and_the_bots_reply_and_the_store_follows(
    client: TestClient, shared_db: str
) -> None:
    state, tokens = new_game(client)
    key = state["id"]
    r = client.post(f"/api/games/{key}/undo", json={"seat": 0, "token": tokens[0]})
    assert r.status_code == 409 and "no move to take back" in r.json()["detail"]
    moved = client.post(
        f"/api/games/{key}/moves",
        json={"seat": 0, "token": tokens[0], "pile": 3, "take": 5, "turn": 1},
    ).json()
    assert moved["move_count"] == 2
    r = client.post(f"/api/games/{key}/undo", json={"seat": 0, "token": tokens[0]})
    assert r.status_code == 200, r.text
    out = r.json()
    assert out["move_count"] == 0 and out["board"]["piles"] == [3, 4, 5]
    assert out["takebacks"] == 1 and out["to_move"] == 0
    with Store.open(shared_db) as store:
        entry = store.live_game(key)
    assert entry is not None and entry[1]["moves"] == []
    assert "tokens" in entry[2]  # the seats' tokens are kept
    # the game goes on from there, and its analysis is the new position's
    again = client.post(
        f"/api/games/{key}/moves",
        json={"seat": 0, "token": tokens[0], "pile": 1, "take": 2, "turn": 1},
    )
    assert again.status_code == 200 and again.json()["move_count"] == 2
    analysis = client.get(f"/api/games/{key}/analysis").json()
    assert analysis["move_count"] == 2


def test_undo_is_only_for_games_against_bots(client: TestClient) -> None:
    state, tokens = two_people(client)
    key = state["id"]
    client.post(
        f"/api/games/{key}/moves", json={"seat": 0, "token": tokens[0], "text": "1 1", "turn": 1}
    )
    r = client.post(f"/api/games/{key}/undo", json={"seat": 0, "token": tokens[0]})
    assert r.status_code == 409 and "only for games against bots" in r.json()["detail"]


def test_delete_a_finished_game_and_a_stored_one(client: TestClient) -> None:
    state, tokens = new_game(client, piles=[1])
    key = state["id"]
    me = {"seat": 0, "token": tokens[0]}
    r = client.request("DELETE", f"/api/games/{key}", json=me)
    assert r.status_code == 409  # still in play
    done = client.post(
        f"/api/games/{key}/moves", json={**me, "pile": 1, "take": 1, "turn": 1}
    ).json()
    saved = done["saved_as"]
    assert done["over"] and saved is not None
    assert client.get(f"/api/history/{saved}").status_code == 200
    # only a seat of the game may delete it
    r = client.request("DELETE", f"/api/games/{key}", json={"seat": 0, "token": "forged"})
    assert r.status_code == 403
    assert client.request("DELETE", f"/api/games/{key}").status_code == 422
    assert client.request("DELETE", f"/api/games/{key}", json=me).json()["deleted"]
    assert client.get(f"/api/history/{saved}").status_code == 404
    assert client.get(f"/api/games/{key}").status_code == 404
    state, tokens = new_game(client, piles=[1])
    done = client.post(
        f"/api/games/{state['id']}/moves",
        json={"seat": 0, "token": tokens[0], "pile": 1, "take": 1, "turn": 1},
    ).json()
    assert client.delete(f"/api/history/{done['saved_as']}").status_code == 200
    assert client.delete(f"/api/history/{done['saved_as']}").status_code == 404
    ids = [g["id"] for g in client.get("/api/history").json()["games"]]
    assert done["saved_as"] not in ids


def test_a_stored_game_is_analysed_move_by_move_with_its_mistakes(client: TestClient) -> None:
    state, tokens = new_game(client)
    key = state["id"]
    client.post(
        f"/api/games/{key}/moves", json={"seat": 0, "token": tokens[0], "text": "3 5", "turn": 1}
    )
    while True:
        s = client.get(f"/api/games/{key}").json()
        if s["over"]:
            break
        pile = next(i for i, n in enumerate(s["board"]["piles"], 1) if n)
        client.post(
            f"/api/games/{key}/moves",
            json={
                "seat": 0,
                "token": tokens[0],
                "pile": pile,
                "take": 1,
                "turn": s["move_count"] + 1,
            },
        )
    saved = client.get(f"/api/games/{key}").json()["saved_as"]
    start = client.get(f"/api/history/{saved}/analysis?at=0").json()
    assert start["move_count"] == 0
    assert [m for m in start["moves"] if m["winning"]] == [
        {
            "pile": 1,
            "take": 2,
            "at": None,
            "also": [],
            "result": [1, 4, 5],
            "outcome": "P",
            "remoteness": start["moves"][1]["remoteness"],
            "winning": True,
        }
    ]
    history = start["history"]
    assert len(history) == s["move_count"] + 1  # the whole game's history, not only move 0
    assert history[1]["mistake"] and "Ann took 5 from pile 3" in history[1]["text"]
    last = client.get(f"/api/history/{saved}/analysis").json()
    assert last["history"] == history and last["move_count"] == s["move_count"]
    assert client.get("/api/history/999/analysis").status_code == 404


def test_analysis_during_play_between_people_follows_the_setup(client: TestClient) -> None:
    state, tokens = two_people(client, analysis=False, piles=[1, 2])
    key = state["id"]
    assert state["analysis_allowed"] is False
    assert client.get(f"/api/games/{key}/analysis").status_code == 403
    assert client.get(f"/api/games/{key}/hint").status_code == 403
    client.post(
        f"/api/games/{key}/moves", json={"seat": 0, "token": tokens[0], "text": "2 2", "turn": 1}
    )
    done = client.post(
        f"/api/games/{key}/moves", json={"seat": 1, "token": tokens[1], "text": "1 1", "turn": 2}
    ).json()
    assert done["over"] and done["analysis_allowed"] is True
    assert client.get(f"/api/games/{key}/analysis").status_code == 200
    # against a bot the option does not apply
    state, _ = new_game(client, analysis=False)
    assert state["analysis_allowed"] is True


def test_the_analysis_option_survives_a_restart(db: str) -> None:
    with TestClient(create_app(db, bot_pace=0)) as c:
        state, _ = two_people(c, analysis=False)
    with TestClient(create_app(db, bot_pace=0)) as c:
        again = c.get(f"/api/games/{state['id']}").json()
        assert again["analysis_allowed"] is False


def test_games_in_play_are_listed_newest_first(fresh_client: TestClient) -> None:
    client = fresh_client
    keys = [two_people(client, public=True)[0]["id"] for _ in range(3)]
    two_people(client)  # private: watched only by those given its link
    listed = [g["id"] for g in client.get("/api/games").json()["games"]]
    assert listed == keys[::-1]
    assert [g["id"] for g in client.get("/api/games?limit=2&offset=1").json()["games"]] == [
        keys[1],
        keys[0],
    ]


def test_a_game_whose_end_is_being_stored_leaves_its_place_in_the_list_to_the_next(
    fresh_client: TestClient,
) -> None:
    client = fresh_client
    keys = [two_people(client, public=True)[0]["id"] for _ in range(4)]
    live = client.app.state.live  # type: ignore[attr-defined]
    # the newest game's end is on its way to the database: this process holds it as ended, while
    # the database still lists it among the games in play
    live.games[keys[3]].ended = "resigned"
    listed = [g["id"] for g in client.get("/api/games?limit=2").json()["games"]]
    assert listed == [keys[2], keys[1]]


def test_unknown_pages_get_the_app_with_404_and_the_api_stays_json(client: TestClient) -> None:
    r = client.get("/nope")
    assert r.status_code == 404 and "<html" in r.text
    r = client.get("/api/nope")
    assert r.status_code == 404 and r.json()["detail"] == "Not Found"
    assert r.json()["request_id"] == r.headers["x-request-id"]


def test_rows_send_the_rules_digits(client: TestClient) -> None:
    state, _ = new_game(client, game="kayles", piles=[5])
    # Kayles (0.77): take 1 or 2 stones, leaving 0, 1 or 2 parts
    assert state["digits"] == [0, 7, 7, 0, 0, 0]
    assert new_game(client)[0]["digits"] == []


def test_three_players_get_a_paranoid_value_history(client: TestClient) -> None:
    state, tokens = new_game(
        client,
        players=[{"name": "Ann"}, {"name": "Bob"}, {"name": "Cy"}],
        piles=[1, 2, 3],
    )
    key = state["id"]
    client.post(
        f"/api/games/{key}/moves", json={"seat": 0, "token": tokens[0], "text": "3 3", "turn": 1}
    )
    # an engine busy with other games answers "pending" (the analysis follows by itself): ask
    # again until it is worked out, as the page does when it is pushed
    analysis = until(
        lambda: (a := client.get(f"/api/games/{key}/analysis").json())["pending"] is False and a,
        "the analysis is worked out",
    )
    history = analysis["history"]
    assert [s["paranoid"] for s in history] == [True, True]
    assert all(s["mover_wins"] is not None for s in history)
    assert all(s["remoteness"] is not None for s in history)
    assert "no single value" not in " ".join(s["text"] for s in history)


# -- with the server's guards and the archive -------------------------------------------------


def play(client: TestClient, key: str, seat: int, token: str, turn: int, **move: Any) -> Any:
    return client.post(
        f"/api/games/{key}/moves", json={"seat": seat, "token": token, "turn": turn} | move
    )


def test_a_finished_or_stopped_games_link_answers_after_a_restart(db: str) -> None:
    with TestClient(create_app(db, bot_pace=0)) as c:
        done, done_tokens = two_people(c, piles=[1])
        assert play(c, done["id"], 0, done_tokens[0], 1, pile=1, take=1).json()["over"]
        resigned, tokens = two_people(c)
        out = c.post(
            f"/api/games/{resigned['id']}/resign", json={"seat": 0, "token": tokens[0]}
        ).json()
        saved = out["saved_as"]
        assert saved is not None
    with TestClient(create_app(db, bot_pace=0)) as c:
        state = c.get(f"/api/games/{done['id']}").json()
        assert state["over"] and state["winner"] == 0 and state["saved_as"] is not None
        assert state["move_count"] == 1 and state["turns"][0]["number"] == 1
        state = c.get(f"/api/games/{resigned['id']}").json()
        assert state["over"] and state["saved_as"] == saved and state["winner"] == 1
        assert state["status"] == state["ended"] == "Ann resigned. Bob wins!"
        with c.websocket_connect(f"/api/games/{resigned['id']}/live") as ws:
            assert ws.receive_json()["state"]["saved_as"] == saved
        assert c.get(f"/api/games/{resigned['id']}/analysis").status_code == 200
        r = c.post(f"/api/games/{resigned['id']}/abandon", json={"seat": 0, "token": tokens[0]})
        assert r.status_code == 409  # over already
        # the seats' tokens survive the restart: a player may still delete the game
        r = c.request("DELETE", f"/api/games/{resigned['id']}", json={"seat": 1, "token": "x"})
        assert r.status_code == 403
        me = {"seat": 1, "token": tokens[1]}
        r = c.request("DELETE", f"/api/games/{resigned['id']}", json=me)
        assert r.status_code == 200 and not r.json()["deleted"]  # the other player has not asked
        link = {"key": resigned["id"]}  # a private game: read with its key
        assert c.get(f"/api/history/{saved}", params=link).status_code == 200
        r = c.request("DELETE", f"/api/games/{resigned['id']}", json={**me, "seat": 0})
        assert r.status_code == 403  # seat 1's token is not seat 0's
        r = c.request(
            "DELETE", f"/api/games/{resigned['id']}", json={"seat": 0, "token": tokens[0]}
        )
        assert r.status_code == 200 and r.json()["deleted"]
        assert c.get(f"/api/games/{resigned['id']}").status_code == 404
        assert c.get(f"/api/history/{saved}", params=link).status_code == 404


def test_abandoned_games_change_no_statistics_and_resigned_ones_do(
    fresh_client: TestClient,
) -> None:
    client = fresh_client
    for name in ("ann", "bob"):
        body = {"username": name, "given": name.title(), "family": "X"}
        assert client.post("/api/players", json=body).status_code == 201
    players = [{"username": "ann"}, {"username": "bob"}]
    state, tokens = new_game(client, players=players, public=True)
    r = client.post(f"/api/games/{state['id']}/abandon", json={"seat": 1, "token": tokens[1]})
    assert r.status_code == 200
    stats = {p["username"]: p for p in client.get("/api/players").json()}
    assert stats["ann"]["games_played"] == stats["bob"]["games_played"] == 0
    history = client.get("/api/history").json()["games"]
    assert history[0]["ending"] == "abandoned" and history[0]["winners"] == []
    state, tokens = new_game(client, players=players)
    client.post(f"/api/games/{state['id']}/resign", json={"seat": 1, "token": tokens[1]})
    stats = {p["username"]: p for p in client.get("/api/players").json()}
    assert (stats["ann"]["games_played"], stats["ann"]["games_won"]) == (1, 1)
    assert (stats["bob"]["games_played"], stats["bob"]["games_won"]) == (1, 0)


def test_resign_with_three_players_gives_the_others_a_shared_win(client: TestClient) -> None:
    state, tokens = new_game(
        client, players=[{"name": "Ann"}, {"name": "Bob"}, {"name": "Cy"}], piles=[2, 2]
    )
    out = client.post(
        f"/api/games/{state['id']}/resign", json={"seat": 0, "token": tokens[0]}
    ).json()
    assert out["status"] == "Ann resigned: Bob and Cy win." and out["winner"] is None
    game = client.get(f"/api/history/{out['saved_as']}").json()["game"]
    assert game["winners"] == ["Bob", "Cy"] and game["winner"] is None


def test_lifecycle_requests_are_rate_limited_and_strict(db: str) -> None:
    settings = ServerSettings(bot_pace=0, move_rate=0.001, move_burst=2)
    with TestClient(create_app(db, settings=settings)) as c:
        state, tokens = two_people(c)
        key = state["id"]
        r = c.post(f"/api/games/{key}/resign", json={"seat": "0", "token": tokens[0]})
        assert r.status_code == 422  # no "0" for 0
        r = c.post(f"/api/games/{key}/resign", json={"seat": 0, "token": tokens[0], "x": 1})
        assert r.status_code == 422  # no unknown fields
        assert c.post(f"/api/games/{key}/undo", json={"seat": 0, "token": "x"}).status_code == 403
        r = c.post(f"/api/games/{key}/undo", json={"seat": 0, "token": tokens[0]})
        assert r.status_code == 409
        r = c.post(f"/api/games/{key}/resign", json={"seat": 0, "token": tokens[0]})
        assert r.status_code == 429 and "too many moves" in r.json()["detail"]
        assert c.get(f"/api/games/{key}").json()["over"] is False  # nothing changed


def test_resign_and_undo_stop_the_engine_work_first(
    db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bot that would think forever stops when its opponent resigns; an analysis that would
    never end stops when its position is taken back (one nobody waits for stops sooner: see
    tests/test_abuse.py)."""
    from nimlab.core.game import Game
    from nimlab.theory.budget import current_scope
    from nimlab.web import learning as learning_module

    def endless(*args: Any, **kwargs: Any) -> Any:
        scope = current_scope()
        assert scope is not None
        while True:
            scope.check()
            time.sleep(0.001)

    monkeypatch.setattr(Game, "bot_choice", endless)
    monkeypatch.setattr(Game, "bot_choice_is_instant", lambda self: False)  # on a worker
    monkeypatch.setattr(learning_module, "analysis_out", endless)
    settings = ServerSettings(
        bot_pace=0,
        reply_wait=0.05,
        compute_wait=0.05,
        move_seconds=3600,
        deep_seconds=7200,
    )
    with TestClient(create_app(db, settings=settings)) as c:
        workers = c.app.state.live.workers  # type: ignore[attr-defined]
        state, tokens = new_game(c, first=1)  # the bot starts, and thinks forever
        until(lambda: workers.running() == 1, "the bot to think")
        r = c.post(f"/api/games/{state['id']}/resign", json={"seat": 0, "token": tokens[0]})
        assert r.status_code == 200 and r.json()["status"] == "Ann resigned. Hal wins!"
        until(lambda: workers.running() == 0, "the bot to stop")
        assert workers.stats.cancelled >= 1
        monkeypatch.undo()
        monkeypatch.setattr(learning_module, "analysis_out", endless)
        state, tokens = new_game(c)
        key = state["id"]
        assert play(c, key, 0, tokens[0], 1, pile=3, take=5).json()["move_count"] == 2
        # a page of the game is open: the analysis is still wanted once its request answered
        with c.websocket_connect(f"/api/games/{key}/live") as page:
            assert page.receive_json()["type"] == "state"
            assert c.get(f"/api/games/{key}/analysis").json()["pending"]
            until(lambda: workers.running() == 1, "the analysis to run")
            cancelled = workers.stats.cancelled
            r = c.post(f"/api/games/{key}/undo", json={"seat": 0, "token": tokens[0]})
            assert r.status_code == 200 and r.json()["move_count"] == 0
            until(lambda: workers.running() == 0, "the analysis to stop")
            assert workers.stats.cancelled > cancelled


@pytest.mark.parametrize("ending", ["human", "bot"])
def test_a_last_move_that_cannot_be_stored_is_not_played_and_a_retry_finishes(
    db: str, monkeypatch: pytest.MonkeyPatch, ending: str
) -> None:
    """The last moves and the finish are one transaction: when it fails, the game is still in
    play with the moves it had (in memory and in the database), and the same move again ends
    it."""
    from nimlab.storage import StorageError

    players = [{"name": "Ann"}, {"name": "Hal", "kind": "perfect"}]
    # human: Ann empties the only pile and wins; bot: Ann takes one, Hal empties the pile.
    piles = [1] if ending == "human" else [3]
    take = 1
    with TestClient(create_app(db, bot_pace=0)) as client:
        state, tokens = new_game(client, players=players, piles=piles, first=0)
        key = state["id"]
        real = Store.finish_live_game

        def failing(self: Store, *args: Any, **kwargs: Any) -> int:
            raise StorageError("injected: the disk is full")

        monkeypatch.setattr(Store, "finish_live_game", failing)
        body = {"seat": 0, "token": tokens[0], "turn": 1, "pile": 1, "take": take}
        r = client.post(f"/api/games/{key}/moves", json=body)
        assert r.status_code == 503 and "not played" in r.json()["detail"]
        after = client.get(f"/api/games/{key}").json()
        assert after["move_count"] == 0 and not after["over"] and after["to_move"] == 0
        assert live_keys(db) == [key]
        with Store.open(db) as store:
            entry = store.live_game(key)
            assert entry is not None and entry[1]["moves"] == []

        monkeypatch.setattr(Store, "finish_live_game", real)
        r = client.post(f"/api/games/{key}/moves", json=body)
        assert r.status_code == 200, r.text
        done = r.json()
        assert done["over"] and done["saved_as"] is not None
        assert done["move_count"] == (1 if ending == "human" else 2)
    assert live_keys(db) == []
    with Store.open(db) as store:
        assert store.game(done["saved_as"]).summary.move_count == done["move_count"]


def test_a_bots_move_being_stored_is_not_shown_as_thinking(
    db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once a bot has chosen, no state says it is still thinking: a state read while its move
    was being stored (the human's move answered once ``reply_wait`` ran out, on a busy machine)
    showed the move with "thinking", and a page that got that answer after the next state kept
    Take back disabled."""
    from nimlab.web import owner as owner_module

    stored: list[tuple[int, bool]] = []
    save, bot_turn = owner_module.Ledger.save, owner_module.GameOwner.bot_turn

    async def saving(self: Any, lg: Any) -> None:
        stored.append((len(lg.game.history), lg.thinking))
        await save(self, lg)

    async def long_thought(self: Any, lg: Any, count: int, choice: Any) -> bool | None:
        lg.thinking = True  # (as after a search of more than a moment)
        return await bot_turn(self, lg, count, choice)

    monkeypatch.setattr(owner_module.Ledger, "save", saving)
    monkeypatch.setattr(owner_module.GameOwner, "bot_turn", long_thought)
    setup = {"players": [{"name": "Ann"}, {"kind": "perfect"}], "piles": [5, 6, 7]}
    with TestClient(create_app(db, bot_pace=0)) as c:
        # (an extra end position: the bot's choice is a search, not a lookup)
        created = c.post("/api/games", json=setup | {"end_positions": ["2 2 2"]}).json()
        key, token = created["state"]["id"], created["seats"][0]["token"]
        move = {"seat": 0, "token": token, "turn": 1, "pile": 1, "take": 1}
        assert c.post(f"/api/games/{key}/moves", json=move).status_code == 200
        until(lambda: any(count == 2 for count, _ in stored), "the bot's move to be stored")
        state = c.get(f"/api/games/{key}").json()
    assert state["move_count"] == 2 and not state["thinking"]
    assert not any(thinking for count, thinking in stored if count == 2)
