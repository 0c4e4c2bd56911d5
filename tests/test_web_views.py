"""The answers written without building their models (:func:`nimlab.web.views.state_json`,
:func:`~nimlab.web.views.created_json`: the answer to every move and every new game) are, byte
for byte, the validated models' ``model_dump_json()``: for every kind of game, any players'
names, bots, misère play, extra end positions, every position of a random playout to its end,
any page of turns, and the lifecycle a game in play adds (thinking, a problem, stopped,
take-backs)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import given, settings
from hypothesis import strategies as st

from nimlab.core.errors import NimlabError
from nimlab.core.game import Game
from nimlab.core.games import GAMES
from nimlab.core.players import Player, parse_bot
from nimlab.core.setup import GameSetup
from nimlab.web import create_app
from nimlab.web.schemas_in import MAX_STONES
from nimlab.web.schemas_out import CreatedOut, GameStateOut
from nimlab.web.views import (
    created_json,
    legal_moves_out,
    moves_for_json,
    state_data,
    state_json,
)
from webtools import PATIENT, validated_live_state

KINDS = [f"{e.name}:{e.example}" if e.parameter else e.name for e in GAMES.values()] + [
    "octal:0.4",
    "octal:4.07",
    "subtraction:1,3,4",
    "moore:3",
]
"""Every kind of game in the registry, and a few more parameters (rows of stones, splits)."""

NAMES = st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=12)
"""Any text (quotes, backslashes, control characters, every script): more than a name may be,
so that every character the JSON writers escape is written."""

BOTS = st.sampled_from([None, None, "perfect", "random", "classic", "lookahead:3:error=20"])


def _fast_and_slow(game: Game, lifecycle: dict[str, Any], **options: Any) -> tuple[bytes, bytes]:
    fast = state_data("k3y", game, legal=moves_for_json(game), **options) | lifecycle
    slow = state_data("k3y", game, legal=legal_moves_out(game), **options) | lifecycle
    return state_json(fast, game), GameStateOut.model_validate(slow).model_dump_json().encode()


LIFECYCLES = st.one_of(
    st.just({}),
    st.builds(
        lambda takebacks, allowed: {"takebacks": takebacks, "analysis_allowed": allowed},
        st.integers(0, 5),
        st.booleans(),
    ),
    st.builds(
        lambda text, winner: {
            "ended": text,
            "status": text,
            "over": True,
            "to_move": None,
            "thinking": False,
            "winner": winner,
        },
        NAMES,
        st.one_of(st.none(), st.integers(0, 3)),
    ),
)
"""What :meth:`LiveGames.state` sets beyond the game: nothing, take-backs and analysis, or the
game stopped (resigned, abandoned)."""


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=6, deadline=None)
@given(
    misere=st.booleans(),
    ends=st.lists(st.lists(st.integers(1, 4), min_size=1, max_size=3), max_size=2),
    heaps=st.lists(st.integers(0, 9), min_size=1, max_size=4).filter(any),
    players=st.lists(st.tuples(NAMES, BOTS), min_size=2, max_size=4),
    usernames=st.lists(st.one_of(st.none(), NAMES), max_size=4),
    seed=st.integers(0, 10**6),
    since=st.one_of(st.none(), st.integers(0, 40)),
    limit=st.sampled_from([1, 3, 100]),
    thinking=st.booleans(),
    saved_as=st.one_of(st.none(), st.integers(1, 2**62)),
    problem=st.one_of(st.none(), NAMES),
    lifecycle=LIFECYCLES,
)
def test_a_state_written_without_its_model_is_the_models_json(
    kind: str,
    misere: bool,
    ends: list[list[int]],
    heaps: list[int],
    players: list[tuple[str, str | None]],
    usernames: list[str | None],
    seed: int,
    since: int | None,
    limit: int,
    thinking: bool,
    saved_as: int | None,
    problem: str | None,
    lifecycle: dict[str, Any],
) -> None:
    seats = [Player(name, None if bot is None else parse_bot(bot)) for name, bot in players]
    try:
        game = GameSetup.from_options(
            game=kind,
            misere=misere,
            end_positions=[".".join(map(str, e)) for e in ends],
            piles=heaps,
            players=seats,
            first="random",
            seed=seed,
            max_stones=MAX_STONES,
        ).build()
    except NimlabError:  # a setup the core refuses (an end position it does not take)
        return
    rng = random.Random(seed)
    options = {
        "usernames": usernames,
        "since": since,
        "limit": limit,
        "thinking": thinking,
        "saved_as": saved_as,
        "problem": problem,
    }
    for _ in range(40):
        fast, slow = _fast_and_slow(game, lifecycle, **options)
        assert fast == slow
        if game.is_over:
            break
        game.push(rng.choice(list(game.legal_moves)))


def test_huge_heaps_and_more_moves_than_a_state_lists() -> None:
    """Heaps of a googol (exact integers), a board with more legal moves than are listed, and
    piles too large to draw match by match next to small ones."""
    for heaps in ([10**100, 3], [1500, 700, 2], [61, 60, 1], [2000]):
        game = Game("nim", heaps, ["human:Ann", "human:Bob"])
        fast, slow = _fast_and_slow(game, {}, usernames=[None, None])
        assert fast == slow


@given(
    seats=st.lists(
        st.builds(
            lambda seat, name, token: {
                "seat": seat,
                "name": name,
                "token": token,
                "link": f"/game/k#seat={seat}&token={token}",
            },
            st.integers(0, 7),
            NAMES,
            NAMES,
        ),
        max_size=4,
    ),
    owner=st.one_of(st.none(), NAMES),
)
@settings(max_examples=40, deadline=None)
def test_a_new_games_answer_written_without_its_model_is_the_models_json(
    seats: list[dict[str, Any]], owner: str | None
) -> None:
    game = Game("nim", [3, 4, 5], ["human:Ann", "bot:perfect:Hal"])
    data = state_data("k3y", game, [None, None], legal=legal_moves_out(game))
    state = GameStateOut.model_validate(data)
    model = CreatedOut(state=state, seats=seats, watch="/game/k3y", owner_token=owner)
    fast = created_json(state_json(data, game), seats, "/game/k3y", owner)
    assert fast == model.model_dump_json().encode()


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    with TestClient(create_app(str(tmp_path / "views.db"), settings=PATIENT)) as c:
        yield c


def test_the_servers_answers_are_its_models_json(client: TestClient) -> None:
    """Through the app: a new game's answer, each move's, a game's page of turns, and a stopped
    game's state are what :meth:`LiveGames.state` (the validated model) writes."""
    live = client.app.state.live  # type: ignore[attr-defined]
    setup = {
        "players": [{"name": 'Ann "A" \\'}, {"name": "Bö"}, {"name": "Hal", "kind": "perfect"}],
        "piles": [2, 3, 4],
        "seed": 5,
    }
    r = client.post("/api/games", json=setup)
    assert r.status_code == 201, r.text
    created = r.json()
    key = created["state"]["id"]
    tokens = {s["seat"]: s["token"] for s in created["seats"]}
    lg = live.games[key]
    model = CreatedOut(
        state=validated_live_state(lg),
        seats=created["seats"],
        watch=f"/game/{key}",
        owner_token=None,
    )
    assert r.content == model.model_dump_json().encode()
    body = {"seat": 0, "token": tokens[0], "turn": 1, "pile": 1, "take": 1}
    r = client.post(f"/api/games/{key}/moves", json=body)
    assert r.status_code == 200, r.text
    assert r.content == validated_live_state(lg, since=0).model_dump_json().encode()
    for since in ("", "?since=1", "?since=9"):
        r = client.get(f"/api/games/{key}{since}")
        expected = validated_live_state(lg, int(since[7:]) if since else None)
        assert r.content == expected.model_dump_json().encode()
    r = client.post(f"/api/games/{key}/resign", json={"seat": 1, "token": tokens[1]})
    assert r.status_code == 200, r.text
    resigned = r.content
    r = client.get(f"/api/games/{key}")
    assert r.json()["ended"]
    assert r.content == resigned == validated_live_state(lg).model_dump_json().encode()
    with client.websocket_connect(f"/api/games/{key}/live") as ws:
        assert ws.receive_json() == {"type": "state", "state": r.json()}
