"""Hints and analyses are worked out once for the club (issue 32): a process claims each in the
database (:mod:`nimlab.storage.claims`), the others wait for its answer, and a claim given up or
of a process that died is taken over. Counts of engine jobs, never clocks."""

from __future__ import annotations

import threading
from contextlib import ExitStack
from typing import Any

from fastapi.testclient import TestClient

from nimlab.core.game import Game
from nimlab.storage import Store
from nimlab.storage.claims import EngineClaims
from nimlab.storage.held import HeldCounts
from nimlab.web import create_app
from nimlab.web.analysis_views import analysis_out
from processes import PATIENCE, until
from webtools import FAST, SHARED

ALIVE = 10.0


def _store_with_game(database: str, key: str = "g") -> Store:
    store = Store.open(database)
    record = Game("nim", [3, 4, 5], ["human:Ann", "human:Bob"]).to_record()
    store.add_live_game(key, {**record, "moves": []}, {})
    return store


def test_one_process_at_a_time_works_out_a_position_and_the_others_take_its_answers(
    database: str,
) -> None:
    store = _store_with_game(database)
    claims = EngineClaims.open(database)
    counts = HeldCounts(store.db)
    try:
        for process in ("a", "b"):
            counts.publish(process, {})
        first = claims.claim("g", "hint", 0, "a", ALIVE)
        assert (first.process, first.answer, first.final) == ("a", None, False)
        assert claims.claim("g", "hint", 0, "b", ALIVE).process == "a"  # a works it out
        assert claims.claim("g", "analysis", 0, "b", ALIVE).process == "b"  # another kind
        assert claims.answer("g", "hint", 0, "a", '{"quick": 1}', final=False)
        assert not claims.answer("g", "hint", 0, "b", '{"b": 1}', final=True)  # not b's
        seen = claims.claim("g", "hint", 0, "b", ALIVE)
        assert (seen.process, seen.answer, seen.final) == ("a", '{"quick": 1}', False)
        assert claims.answer("g", "hint", 0, "a", '{"deep": 1}', final=True)
        assert claims.claim("g", "hint", 0, "b", ALIVE).answer == '{"deep": 1}'
        # a move played: the next position is claimed by whoever asks first, afresh
        moved = claims.claim("g", "hint", 1, "b", ALIVE)
        assert (moved.process, moved.answer, moved.final) == ("b", None, False)
        assert not claims.answer("g", "hint", 0, "a", '{"late": 1}', final=True)
        # b gives up before any answer: a takes it over at its next ask
        claims.give_up("g", "hint", 1, "b")
        assert claims.claim("g", "hint", 1, "a", ALIVE).process == "a"
        # a gives up after a quick answer: that answer is the last one, kept for everyone
        assert claims.answer("g", "hint", 1, "a", '{"quick": 2}', final=False)
        claims.give_up("g", "hint", 1, "a")
        kept = claims.claim("g", "hint", 1, "b", ALIVE)
        assert (kept.process, kept.answer, kept.final) == ("a", '{"quick": 2}', True)
    finally:
        claims.close()
        store.close()


def test_the_claim_of_a_process_not_seen_is_taken_over_with_its_answer_so_far(
    database: str,
) -> None:
    store = _store_with_game(database)
    claims = EngineClaims.open(database)
    try:
        HeldCounts(store.db).publish("b", {})
        claims.claim("g", "analysis", 3, "dead", ALIVE)  # never seen alive
        assert claims.claim("g", "analysis", 3, "b", ALIVE).process == "b"
        HeldCounts(store.db).publish("a", {})
        assert claims.answer("g", "analysis", 3, "b", '{"quick": 3}', final=False)
        assert claims.claim("g", "analysis", 3, "a", ALIVE).process == "b"  # b is alive
        assert claims.claim("g", "analysis", 3, "a", alive=-1.0).process == "a"  # b "died"
        took = claims.claim("g", "analysis", 3, "b", ALIVE)
        assert (took.process, took.answer) == ("a", '{"quick": 3}')  # the answer stays
    finally:
        claims.close()
        store.close()


def test_a_waiting_process_looks_at_a_claim_without_its_answer_nor_a_lock(database: str) -> None:
    """What a process waiting for another's answer reads between two looks: who holds the claim,
    for which position, how long the answer so far is, whether it is the last, and whether the
    claimant is alive; the answer itself only when asked for, for that position."""
    from nimlab.storage.claims import ClaimState

    store = _store_with_game(database)
    claims = EngineClaims.open(database)
    try:
        HeldCounts(store.db).publish("a", {})
        assert claims.look("g", "hint", ALIVE) is None and claims.answer_of("g", "hint", 0) is None
        claims.claim("g", "hint", 0, "a", ALIVE)
        assert claims.look("g", "hint", ALIVE) == ClaimState("a", 0, None, False, True)
        assert claims.answer("g", "hint", 0, "a", '{"quick": 1}', final=False)
        assert claims.look("g", "hint", ALIVE) == ClaimState("a", 0, 12, False, True)
        assert claims.look("g", "hint", -1.0) == ClaimState("a", 0, 12, False, False)
        got = claims.answer_of("g", "hint", 0)
        assert got is not None and (got.process, got.answer, got.final) == (
            "a",
            '{"quick": 1}',
            False,
        )
        assert claims.answer_of("g", "hint", 1) is None  # another position
        claims.claim("g", "hint", 0, "dead", ALIVE)  # (a holds it: nothing changes)
        assert claims.look("g", "hint", ALIVE) == ClaimState("a", 0, 12, False, True)
    finally:
        claims.close()
        store.close()


def _counting(server: TestClient) -> list[str]:
    """The kinds of the engine work ``server``'s app starts from now on, as it starts them."""
    live = server.app.state.live  # type: ignore[attr-defined]
    started: list[str] = []
    compute = live.compute

    async def counted(owner: str, kind: str, fn: Any, **kw: Any) -> Any:
        started.append(kind)
        return await compute(owner, kind, fn, **kw)

    live.compute = counted
    return started


def test_two_processes_work_out_a_hint_or_an_analysis_once(database: str) -> None:
    """Two apps on one database (as two processes): a hint asked of both is worked out by the
    one asked first, the other answers with its answer; an analysis that a live process has
    claimed is waited for, then answered from the claim; a claim given up is taken over by the
    next process asked. (Requests wait as long as a test may take: no answer depends on
    timing.)"""
    settings = FAST.model_copy(update=SHARED)
    with ExitStack() as stack:
        a, b = (
            stack.enter_context(TestClient(create_app(database, settings=settings)))
            for _ in range(2)
        )
        on_a, on_b = _counting(a), _counting(b)
        created = a.post(
            "/api/games", json={"players": [{"name": "Ann"}, {"name": "Bob"}], "piles": [3, 4, 5]}
        )
        assert created.status_code == 201, created.text
        key = created.json()["state"]["id"]
        first = _ready(a.get(f"/api/games/{key}/hint"))
        process_a = a.app.state.live.limits.process  # type: ignore[attr-defined]
        claims = EngineClaims.open(database)
        stack.callback(claims.close)
        until(lambda: _published(claims, process_a), "a's first heartbeat")  # (else "dead")
        assert _ready(b.get(f"/api/games/{key}/hint")) == first
        assert on_a == ["hint"] and on_b == []

        until(
            lambda: claims.claim(key, "analysis", 0, process_a, ALIVE).process == process_a,
            "a's claim of the analysis while a is alive",
        )
        asked: list[Any] = []
        asking = threading.Thread(target=lambda: asked.append(b.get(f"/api/games/{key}/analysis")))
        asking.start()
        held = b.app.state.live.games  # type: ignore[attr-defined]
        until(lambda: key in held and "analysis" in held[key].learning, "b waiting for a's answer")
        answer = analysis_out(Game("nim", [3, 4, 5], ["human:Ann", "human:Bob"]))
        assert claims.answer(key, "analysis", 0, process_a, answer.model_dump_json(), final=True)
        asking.join(PATIENCE)
        assert _ready(asked[0], "analysis") == answer.model_dump(mode="json") and on_b == []

        claims.claim(key, "hint", 1, process_a, ALIVE)  # the position after a move
        seat = created.json()["seats"][0]
        move = {"seat": 0, "token": seat["token"], "turn": 1, "pile": first["move"]["pile"]}
        move["take"] = first["move"]["take"]
        moved = a.post(f"/api/games/{key}/moves", json=move)
        assert moved.status_code == 200, moved.text
        claims.give_up(key, "hint", 1, process_a)
        assert _ready(b.get(f"/api/games/{key}/hint"))
        assert on_b == ["hint"]

        # a quick answer stored, then its deeper search given up: that answer is the last one
        claims.claim(key, "analysis", 1, process_a, ALIVE)
        quick = analysis_out(Game("nim", [3, 4, 5], ["human:Ann", "human:Bob"]))
        quick = quick.model_copy(update={"pending": True, "note": "quick"})
        claims.answer(key, "analysis", 1, process_a, quick.model_dump_json(), final=False)
        claims.give_up(key, "analysis", 1, process_a)
        last = b.get(f"/api/games/{key}/analysis").json()
        assert last["note"] == "quick" and not last["pending"] and on_b == ["hint"]


def _published(claims: EngineClaims, process: str) -> bool:
    """Whether ``process`` has said it is alive (in ``server_processes``)."""
    sql = "SELECT 1 FROM server_processes WHERE process = ?"
    return bool(claims._db.rows(sql, (process,)))  # (a test's look into the table)


def _ready(answer: Any, kind: str = "hint") -> Any:
    """The answer's body when it is the answer itself (not "on its way": 202 for a hint)."""
    assert answer.status_code in (200, 202), answer.text
    body = answer.json()
    if kind == "hint":
        return body if answer.status_code == 200 else None
    return body if body["available"] and not body["pending"] else None
