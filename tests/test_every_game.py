"""One generic test over every registered game (in the style of OpenSpiel's), asking only the
game's rules (:class:`~nimlab.core.rules.Rules`): random playouts under normal and misère play
with random extra end positions (where the rules take them) check that the legal moves are the
successors, that every move's text form reads back to it, that a game is over exactly at an end
position or where no move is left, that records replay exactly, and that the perfect bot plays
as an exact solver says (for heap games the take-and-break reference; for the relatives a plain
search over the rules' own moves, which the engine's theorems must agree with). A game added to
the registry is tested here without a line more."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from nimlab.core.analysis import analyze, count_moves
from nimlab.core.bots import perfect_choice
from nimlab.core.errors import PositionError
from nimlab.core.game import Game
from nimlab.core.games import GAMES, GameEntry, parse_game
from nimlab.core.position import Move
from nimlab.core.rules import PileRules, Rules
from nimlab.core.ruleset import Ruleset
from nimlab.theory.outcome import Outcome
from nimlab.theory.positions import Canon, canonical
from nimlab.theory.solver import ExactSolver, MoveSolver
from nimlab.web import ServerSettings, create_app
from processes import PATIENCE

EXTRA = ("octal:0.4", "octal:4.07", "octal:0.54", "subtraction:1,3,4", "moore:1", "moore:3")
"""Parameters of the parametrised games beyond each entry's example."""


def _kinds() -> list[str]:
    names = [f"{e.name}:{e.example}" if e.parameter else e.name for e in GAMES.values()]
    return names + list(EXTRA)


def test_every_entry_is_played() -> None:
    played = {parse_game(name).entry.name for name in _kinds()}
    assert played == {e.name for e in GAMES.values() if isinstance(e, GameEntry)}


@pytest.mark.parametrize("game", _kinds())
@settings(max_examples=15, deadline=None)
@given(
    misere=st.booleans(),
    ends=st.lists(st.lists(st.integers(1, 4), min_size=1, max_size=3), max_size=2),
    heaps=st.lists(st.integers(0, 7), min_size=1, max_size=3).filter(any),
    seed=st.integers(0, 10**6),
)
def test_random_playouts_keep_every_invariant(
    game: str, misere: bool, ends: list[list[int]], heaps: list[int], seed: int
) -> None:
    kind = parse_game(game)
    rules = kind.rules
    heaps = _fit(rules, heaps)
    if not rules.end_positions_allowed:
        ends = []
    ruleset = Ruleset(kind, misere).with_end_positions(*ends)
    rng = random.Random(seed)
    try:
        g = Game(ruleset, heaps, ["bot:random:A", "bot:random:B"], seed=seed)
    except PositionError:  # a start with no move (e.g. Fibonacci Nim on one object)
        assume(False)
        return
    exact = _exact(ruleset)
    while not g.is_over:
        board = g.board
        successors = list(rules.successors(board))
        legal = [m for m, _ in successors]
        assert g.legal_moves == legal
        assert all(rules.play(board, m) == after for m, after in successors)
        assert all(rules.parse_move(str(m), board) == m for m in legal[:50])
        assert count_moves(ruleset, board) == len(legal)
        assert legal and not ruleset.is_over(board)
        if not ruleset.game.is_heap_game:  # the rules' theorems agree with the search
            assert (
                analyze(ruleset, board, max_moves=0).outcome is exact.value(board.canonical).outcome
            )
        if rng.random() < 0.3:  # the perfect bot plays as the exact solver says
            perfect = Game.from_record(g.to_record())
            before = exact.value(board.canonical)
            choice = _perfect(ruleset, g)
            after = exact.value(rules.play(board, choice).canonical)
            if before.outcome is Outcome.N:
                assert after.outcome is Outcome.P
                assert after.remoteness == before.remoteness - 1
            else:
                assert after.remoteness == before.remoteness - 1
            assert perfect.board == board
        g.push(rng.choice(legal))
        if g.is_over:  # over exactly when the last move reached an end or a dead position
            last = g.history[-1].after
            assert ruleset.is_over(last)
            assert canonical(last.heaps) in ruleset.end_positions or not list(
                rules.successors(last)
            )
    replayed = Game.from_record(g.to_record())
    assert replayed.board == g.board
    assert replayed.winner_seat == g.winner_seat
    assert [t.move for t in replayed.history] == [t.move for t in g.history]


def _fit(rules: Rules, heaps: list[int]) -> list[int]:
    """Heaps the rules take: as many piles as they are played on."""
    if isinstance(rules, PileRules) and rules.piles is not None:
        return (heaps + [3, 5])[: rules.piles]
    return heaps


def _exact(ruleset: Ruleset) -> ExactSolver | MoveSolver[Canon]:
    """A reference solver of the ruleset: the take-and-break search for heap games, a plain
    search over the rules' own moves for the relatives (no theorem involved)."""
    if ruleset.game.is_heap_game:
        return ExactSolver(ruleset.rule, misere=ruleset.misere, end_positions=ruleset.end_positions)
    rules = ruleset.relative_rules
    return MoveSolver(
        lambda key: (after.canonical for _, after in rules.successors(rules.board_of(key))),
        misere=ruleset.misere,
        is_end=lambda key: rules.end_key(key) in ruleset.end_positions,
    )


def _perfect(ruleset: Ruleset, game: Game) -> Move:
    return perfect_choice(game.state, random.Random(0)).move


# -- through the API ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    db = str(tmp_path_factory.mktemp("every-game") / "web.db")
    settings = ServerSettings(
        bot_pace=0,
        compute_wait=PATIENCE,
        reply_wait=PATIENCE,
        create_rate=0,
        move_rate=0,
        max_games_per_client=1000,
    )
    with TestClient(create_app(db, settings=settings), client=("127.0.0.1", 50000)) as c:
        yield c


def _move_kind(m: dict[str, Any]) -> str:
    """What kind of move the state lists: on one pile, on several, a cut that removes
    nothing, stones from a row."""
    if m["also"]:
        return "several piles"
    if m["at"] is None:
        return "one pile"
    return "cut" if m["take"] == 0 else "stones"


@pytest.mark.parametrize("game", _kinds())
def test_one_move_of_each_kind_through_the_api(client: TestClient, game: str) -> None:
    kind = parse_game(game)
    start = list(kind.entry.start)
    players = [{"name": "Ann"}, {"name": "Bob"}]
    body = {"players": players, "piles": start, "game": kind.name}
    first = client.post("/api/games", json=body)
    assert first.status_code == 201, first.text
    listed = first.json()["state"]["moves"]
    assert listed, "a game's state lists its legal moves"
    assert first.json()["state"]["move_shape"] == kind.rules.move_shape
    board = kind.rules.start(start)
    expected = [m.to_json() for m, _ in kind.rules.successors(board)]
    # the server's words for each move, where the game words its moves its own way
    assert [m.pop("words") for m in listed] == [
        kind.rules.move_phrase(m, board) if kind.rules.own_words else None
        for m, _ in kind.rules.successors(board)
    ]
    assert [{k: v for k, v in m.items() if v not in (None, [])} for m in listed] == expected
    kinds: dict[str, dict[str, Any]] = {}
    for m in listed:
        kinds.setdefault(_move_kind(m), m)
    for m in kinds.values():  # a new game for each kind of move, as fields and as text
        fields = {k: v for k, v in m.items() if v not in (None, [])}
        for request in (fields, {"text": str(Move.from_json(m))}):
            created = client.post("/api/games", json=body).json()
            key, token = created["state"]["id"], created["seats"][0]["token"]
            r = client.post(
                f"/api/games/{key}/moves", json={"seat": 0, "token": token, "turn": 1} | request
            )
            assert r.status_code == 200, r.text
            played = kind.rules.play(board, Move.from_json(m))
            assert r.json()["board"]["heaps"] == list(played.heaps)
            assert r.json()["turns"][-1]["move"] | {"words": None} == m | {"words": None}
    bad = client.post(
        f"/api/games/{first.json()['state']['id']}/moves",
        json={
            "seat": 0,
            "token": first.json()["seats"][0]["token"],
            "turn": 1,
            "pile": 1,
            "take": 10**6,
        },
    )
    assert bad.status_code == 422 and "take" in bad.json()["detail"]
