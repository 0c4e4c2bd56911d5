"""Two processes answer as one (issue 32): two ``nimlab serve`` processes on one database, and on
PostgreSQL the first of them itself two processes on one port (``--workers 2``).

- A take-back, a resignation or an abandon racing a move sent to the other process (against a
  person, a bot that replies at once or one that thinks): one wins, the other is told (a 409 in
  a single process's words; never a silent drop, never a 5xx), and what both processes show and
  the database holds is what the requests answered 200 made, one after the other.
- A move sent again to a process whose copy of the game is older than the database's is judged
  on the game as stored.
- A hypothesis state machine sends moves (legal, retried, for a turn played, for a later turn,
  illegal, out of turn), take-backs, resignations, abandons, new games and races of two of them
  to either process at random, kills a process with SIGKILL (or stops it) while a move is sent
  to it and starts it again, and checks every answer against one reference: the games played
  with :class:`nimlab.core.game.Game` as a single process plays them (status, the words of a
  refusal, board, turns, whose turn, the end, take-backs). Every acknowledged change survives
  the kills; a move cut off by one is stored wholly or not at all.

The servers start once per backend (each start costs seconds); no test here measures time: each
waits for a condition.
"""

from __future__ import annotations

import contextlib
import http.client
import itertools
import os
import signal
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    precondition,
    rule,
    run_state_machine_as_test,
)

import postgres
from nimlab.core.errors import NimlabError
from nimlab.core.game import Game
from nimlab.core.position import Move
from nimlab.storage import Store
from processes import PATIENCE, until
from webtools import LivePage, ServerProcess, call

pytestmark = pytest.mark.reliability

ARGS = [
    *("--bot-pace", "0", "--move-rate", "0", "--create-burst", "1000"),
    *("--takeover-grace", "0.2", "--max-games-per-client", "100000", "--read-rate", "0"),
    *("--reply-wait", "600"),  # a bot's reply is always in its move's answer
]

ENDED = {"resign": "resigned", "abandon": "abandoned"}
"""A lifecycle route and the ending it stores."""

PROCESSES = st.sampled_from((0, 1))
"""Which process a request goes to: the first (on PostgreSQL, either of its two) or the second."""

GAMES = st.integers(0, 5)
"""A game of the machine's (modulo how many it has)."""

BOTS = st.sampled_from(("perfect", "lookahead"))
"""Hal: replies at once (from the engine's memory), or thinks (on the engine's workers)."""

PILES = st.lists(st.integers(1, 7), min_size=2, max_size=3)
"""The piles of a game: a few moves long."""


@dataclass
class Club:
    """Two servers on one database; on PostgreSQL the first is two processes on one port."""

    servers: list[ServerProcess]
    database: str
    workers: bool
    store: Store | None = None

    def url(self, at: int) -> str:
        return self.servers[at].url

    def kill_worker(self) -> None:
        """SIGKILL one of the first server's two processes; back when it is replaced."""
        first = self.servers[0].children()
        assert len(first) == 2, first
        os.kill(first[0], signal.SIGKILL)
        until(
            lambda: len(now := self.servers[0].children()) == 2 and first[0] not in now,
            "the process killed is replaced",
        )

    def spawn(self, at: int) -> None:
        """Start server ``at`` (on its port)."""
        self.servers[at].spawn()


@contextlib.contextmanager
def _log_shown_on_failure(club: Club) -> Iterator[None]:
    """The servers' last lines of log printed (shown by pytest) when the block fails."""
    try:
        yield
    except BaseException:
        for server in club.servers:
            print(b"".join(list(server.log)[-200:]).decode(errors="replace"))
        raise


def _unless_cut_off(send: Callable[[], tuple[int, Any]]) -> tuple[int, Any] | None:
    """A request's answer, or ``None`` when its connection was cut off (its server killed)."""
    try:
        return send()
    except (OSError, http.client.HTTPException):
        return None


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def club(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Club]:
    """Two servers on one new database, for this module's tests (started once per backend)."""
    cluster: str | None = None
    if request.param == "sqlite":
        database = str(tmp_path_factory.mktemp("club") / "nimlab.db")
    else:
        cluster = request.getfixturevalue("postgres_cluster")
        database = postgres.new_database(cluster)
    workers = cluster is not None
    servers = [
        ServerProcess(database, args=ARGS + (["--workers", "2"] if workers else [])),
        ServerProcess(database, args=ARGS),
    ]
    club = Club(servers, database, workers)
    try:
        for at in (0, 1):
            club.spawn(at)
        for s in servers:
            s.wait()
        with Store.open(database) as club.store:
            yield club
    finally:
        for s in servers:
            s.stop()
        if cluster is not None:
            postgres.drop_database(cluster, database)


# -- the reference: the games as one process plays them ------------------------------------------


@dataclass
class Played:
    """A game of the reference: ``game`` has the same start and seats as the server's, every seat
    a human's (a bot's moves are those the server answered, checked legal here); ``solo``: Ann
    against the bot Hal (take-backs allowed), else Ann against Bob."""

    key: str
    tokens: dict[int, str]
    solo: bool
    game: Game
    ended: str | None = None
    by: int | None = None
    takebacks: int = 0

    @property
    def over(self) -> bool:
        return self.game.is_over or self.ended is not None

    def clone(self) -> Played:
        g = self.game
        copy = Game(g.ruleset, g.start, [f"human:{p.name}" for p in g.players])
        for turn in g.history:
            copy.push(turn.move)
        return Played(self.key, self.tokens, self.solo, copy, self.ended, self.by, self.takebacks)

    # Each request as a single process judges it: (status, words its answer says) and, when
    # it is 200, the change made. The checks come in the server's order.

    def move(self, seat: int, turn: int, pile: int, take: int) -> tuple[int, str]:
        g = self.game
        if self.solo and seat == 1:
            return 403, "a bot"
        number = len(g.history) + 1
        if turn < number:
            done = g.history[turn - 1]
            if done.seat == seat and (done.move.pile, done.move.take) == (pile, take):
                return 200, ""  # a retry: answered again, nothing played twice
            return 409, "was already played"
        if self.over:
            return 409, "the game is over"
        if seat != g.to_move_seat:
            return 409, "'s turn, not "
        if turn != number:
            return 409, "this request is for move"
        try:
            g.push(Move(pile, take))
        except NimlabError:
            return 422, ""
        return 200, ""

    def undo(self, seat: int) -> tuple[int, str]:
        if self.solo and seat == 1:
            return 403, "a bot"
        if not self.solo:
            return 409, "take-backs are only for games against bots"
        if self.over:
            return 409, "the game is over"
        if not any(t.seat == seat for t in self.game.history):
            return 409, "has no move to take back"
        self.game.undo_for(seat)
        self.takebacks += 1
        return 200, ""

    def end(self, seat: int, how: str) -> tuple[int, str]:
        if self.solo and seat == 1:
            return 403, "a bot"
        if self.over:
            return 409, "the game is over"
        self.ended, self.by = how, seat
        return 200, ""

    def replies(self, answer: dict[str, Any]) -> None:
        """The bot's replies in a move's answer, played here (each checked: Hal's, legal)."""
        g = self.game
        for turn in answer["turns"][len(g.history) - answer["turns_from"] :]:
            assert self.solo and turn["seat"] == 1 and turn["number"] == len(g.history) + 1, turn
            g.push(Move(turn["move"]["pile"], turn["move"]["take"]))

    def expected(self) -> dict[str, Any]:
        """The essential fields of the game's state as a single process answers them."""
        g = self.game
        winner: int | None = None
        if self.ended == "resigned":
            assert self.by is not None
            winner = 1 - self.by
        elif self.ended is None and g.is_over:
            winner = g.winner_seat
        return {
            "over": self.over,
            "to_move": None if self.over else g.to_move_seat,
            "winner": winner,
            "move_count": len(g.history),
            "piles": list(g.position),
            "stored": self.over,
            "ended": None if self.ended is None else (self.ended, self.by),
            "takebacks": self.takebacks,
        }

    def turns(self, start: int, count: int) -> list[tuple[int, int, int, int]]:
        return [
            (t.number, t.seat, t.move.pile, t.move.take)
            for t in self.game.history[start : start + count]
        ]


def essentials(state: dict[str, Any]) -> dict[str, Any]:
    """A server's state of a game, as :meth:`Played.expected` says it."""
    ended = state["ended"]
    if ended is not None:
        names = [p["name"] for p in state["players"]]
        how = "abandoned" if ended.startswith("Abandoned by") else "resigned"
        who = next(i for i, n in enumerate(names) if n in ended.split(":")[0].split(".")[0])
        ended = (how, who)
    return {
        "over": state["over"],
        "to_move": state["to_move"],
        "winner": state["winner"],
        "move_count": state["move_count"],
        "piles": state["board"]["piles"],
        "stored": state["saved_as"] is not None,
        "ended": ended,
        "takebacks": state["takebacks"],
    }


def same_state(p: Played, state: dict[str, Any]) -> None:
    """The server's state of ``p`` (an answer or a read) is the reference's."""
    assert state["id"] == p.key
    assert essentials(state) == p.expected(), (state, p.game.history)
    turns = [(t["number"], t["seat"], t["move"]["pile"], t["move"]["take"]) for t in state["turns"]]
    assert turns == p.turns(state["turns_from"], len(turns)), (turns, state)


def same_answer(p: Played, expected: tuple[int, str], status: int, answer: Any) -> None:
    """An answer is the one a single process gives: its status, the words of a refusal, the
    state answered."""
    assert status == expected[0], (status, answer, expected)
    if status == 200:
        same_state(p, answer)
    else:
        detail = answer["detail"]
        assert isinstance(detail, str) and expected[1] in detail, (detail, expected)


def stored_as_played(club: Club, p: Played) -> None:
    """What the database holds of ``p``: its moves (replayed) and its end are the reference's."""
    store = club.store
    assert store is not None
    if p.over:
        found = store.finished_game(p.key)
        assert found is not None, p.key
        record = store.game(found[0]).record
        assert (record.get("ended") or {}).get("how") == p.ended, record
    else:
        playing = store.live_game_with_version(p.key)
        assert playing is not None, p.key
        record = playing[0][1]
    stored = Game.from_record(record)
    assert [(t.seat, t.move) for t in stored.history] == [
        (t.seat, t.move) for t in p.game.history
    ], (record, p.game.history)


def create(club: Club, at: int, solo: bool, piles: list[int], *, bot: str = "perfect") -> Played:
    """A new game started on process ``at``: Ann against Hal (a bot: ``perfect`` replies at once,
    ``lookahead`` thinks on the engine's workers) or Bob."""
    second = {"kind": bot, "name": "Hal"} if solo else {"name": "Bob"}
    body = {"players": [{"name": "Ann"}, second], "piles": piles}
    status, created = call(f"{club.url(at)}/api/games", "POST", body)
    assert status == 201, created
    tokens = {s["seat"]: s["token"] for s in created["seats"] if s.get("token")}
    game = Game("nim", piles, ["human:Ann", "human:Hal" if solo else "human:Bob"])
    p = Played(created["state"]["id"], tokens, solo, game)
    same_state(p, created["state"])
    return p


def read(club: Club, at: int, p: Played) -> dict[str, Any]:
    status, state = call(f"{club.url(at)}/api/games/{p.key}")
    assert status == 200, state
    return dict(state)


def request_move(
    club: Club, at: int, p: Played, seat: int, turn: int, pile: int, take: int
) -> tuple[int, Any]:
    body = {
        "seat": seat,
        "token": p.tokens.get(seat, "x"),
        "turn": turn,
        "pile": pile,
        "take": take,
    }
    return call(f"{club.url(at)}/api/games/{p.key}/moves", "POST", body)


def request_change(club: Club, at: int, p: Played, seat: int, how: str) -> tuple[int, Any]:
    """``how``: undo, resign or abandon."""
    body = {"seat": seat, "token": p.tokens.get(seat, "x")}
    return call(f"{club.url(at)}/api/games/{p.key}/{how}", "POST", body)


# -- a change racing a move ----------------------------------------------------------------------


def test_a_change_racing_a_move_on_the_other_process_has_one_outcome(club: Club) -> None:
    """Ann's move sent to one process while, on the other, Ann sends another move for the same
    turn (from another page), takes her last move back (a game against a bot), or Ann or Bob (or
    Ann against a bot) resigns or abandons: both answers are 200 or a 409 that says why (never a
    5xx: a move whose bot's reply was refused because the game had been resigned elsewhere was
    answered 503 "could not be saved"), at least one is 200, both processes then show the same
    game, and it is the reference's after the requests answered 200, made one after the other in
    some order; the database holds it, and a page open on each process shows it (the page of the
    process whose move lost kept showing that move)."""
    seen: set[tuple[str, str | None, int, int]] = set()
    races = [("move", None), ("move", "lookahead"), ("undo", "perfect"), ("undo", "lookahead")]
    races += [("resign", None), ("abandon", None), ("resign", "lookahead")]
    races += [("abandon", "lookahead")]
    with _log_shown_on_failure(club):
        for how, bot in races:
            for round_ in range(2):
                seen.add((how, bot, *_race(club, how, bot, round_)))
    # (what happened is up to the scheduler: no outcome is required, each one is checked)
    assert {(how, bot) for how, bot, _, _ in seen} == set(races)


def _race(club: Club, how: str, bot: str | None, round_: int) -> tuple[int, int]:
    solo = bot is not None
    p = create(club, round_ % 2, solo, [3, 3, 3], bot=bot or "perfect")
    status, answer = request_move(club, 0, p, 0, 1, 1, 1)
    assert p.move(0, 1, 1, 1) == (status, ""), answer
    p.replies(answer)
    if not solo:
        status, answer = request_move(club, 1, p, 1, 2, 2, 1)
        assert p.move(1, 2, 2, 1) == (status, ""), answer
    for at in (0, 1):  # both processes hold the game as it is now
        same_state(p, read(club, at, p))
    pages = [Page(club, at, p.key) for at in (0, 1)]
    piles = [i for i, h in enumerate(p.game.position, 1) if h]
    mover, turn = round_ % 2, len(p.game.history) + 1
    seat = 0 if solo else round_ % 2  # who changes the game: Ann, or Bob once in two
    ops = [Op.move(mover, 0, turn, piles[0], 1)]
    if how == "move":
        ops.append(Op.move(1 - mover, 0, turn, piles[1], 1))
    else:
        ops.append(Op.change(1 - mover, how, seat))
    answers = race(club, p, ops)
    assert 200 in (answers[0][0], answers[1][0]), answers
    as_made_in_turn(club, p, ops, answers)
    for page in pages:
        page.shows(p)
        page.close()
    return answers[0][0], answers[1][0]


@dataclass(frozen=True)
class Op:
    """A request of a race: sent to process ``at``; ``made`` makes it in the reference (with the
    bots' replies, taken from its answer or from the game read after the race)."""

    at: int
    send: Callable[[Club, Played], tuple[int, Any]]
    made: Callable[[Played, list[dict[str, Any]]], tuple[int, str]]

    @staticmethod
    def move(at: int, seat: int, turn: int, pile: int, take: int) -> Op:
        def made(q: Played, states: list[dict[str, Any]]) -> tuple[int, str]:
            result = q.move(seat, turn, pile, take)
            if result[0] == 200 and q.solo and not q.over and q.game.to_move_seat == 1:
                _reply(q, states)
            return result

        return Op(at, lambda club, p: request_move(club, at, p, seat, turn, pile, take), made)

    @staticmethod
    def change(at: int, how: str, seat: int) -> Op:
        def made(q: Played, states: list[dict[str, Any]]) -> tuple[int, str]:
            return q.undo(seat) if how == "undo" else q.end(seat, ENDED[how])

        return Op(at, lambda club, p: request_change(club, at, p, seat, how), made)


def _reply(q: Played, states: list[dict[str, Any]]) -> None:
    """Hal's reply to Ann's move: as answered or as read after, else any (taken back since)."""
    number = len(q.game.history) + 1
    for state in states:
        for t in state.get("turns", []):
            if t["number"] == number and t["seat"] == 1:
                q.game.push(Move(t["move"]["pile"], t["move"]["take"]))
                return
    q.game.push(q.game.legal_moves[0])


def race(club: Club, p: Played, ops: list[Op]) -> list[tuple[int, Any]]:
    """The answers to ``ops`` sent at once (each on a thread of its own): each 200, or a 409
    that says why in words (:data:`REFUSED`; never a 5xx)."""
    answers: list[tuple[int, Any]] = [(0, None)] * len(ops)
    ready = threading.Barrier(len(ops))

    def send(i: int) -> None:
        ready.wait(PATIENCE)
        answers[i] = ops[i].send(club, p)

    threads = [threading.Thread(target=send, args=(i,)) for i in range(len(ops))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(PATIENCE)
    for status, answer in answers:
        assert status in (200, 409), answers
        assert status == 200 or any(why in answer["detail"] for why in REFUSED), answers
    return answers


REFUSED = (
    "the game is over",
    "was already played",
    "this request is for move",
    "'s turn, not ",
    "take-backs are only for games against bots",
    "has no move to take back",
    "the game changed meanwhile, from another page",
)
"""Why a request that lost a race was refused, in the words a single process uses (and the one
for a change refused twice because the game changed elsewhere)."""


def as_made_in_turn(club: Club, p: Played, ops: list[Op], answers: list[tuple[int, Any]]) -> None:
    """Both processes show the same game after a race, and it is the reference's after the
    requests answered 200, made one after the other in some order (each one's answer then a
    200); the database holds it. ``p`` becomes that game."""
    states = [read(club, at, p) for at in (0, 1)]
    assert essentials(states[0]) == essentials(states[1]), states
    final = states[0]
    for order in itertools.permutations(range(len(ops))):
        q = p.clone()
        made = all(
            answers[i][0] != 200 or ops[i].made(q, [answers[i][1], final]) == (200, "")
            for i in order
        )
        if made and essentials(final) == q.expected():
            same_state(q, final)
            stored_as_played(club, q)
            p.game, p.ended, p.by, p.takebacks = q.game, q.ended, q.by, q.takebacks
            return
    raise AssertionError(f"no order of the changes answered 200 gives {final} ({answers})")


def test_a_retry_is_judged_on_the_game_as_stored(club: Club) -> None:
    """Ann's first move, taken back on the other process, sent again to the first one: it is
    played again (a single process finds no such move any more). It was answered 200 as a
    retry from the first process's copy, which still had it: nothing was stored, and the
    answer showed the game as it had been."""
    with _log_shown_on_failure(club):
        for round_ in range(3):
            p = create(club, round_ % 2, True, [3, 4, 5])
            first = (0, 1, 3, 1)  # Ann, move 1, pile 3, take 1
            status, answer = request_move(club, 0, p, *first)
            assert p.move(*first) == (status, ""), answer
            p.replies(answer)
            same_state(p, read(club, 0, p))
            status, answer = request_change(club, 1, p, 0, "undo")
            same_answer(p, p.undo(0), status, answer)
            status, answer = request_move(club, 0, p, *first)
            expected = p.move(*first)
            p.replies(answer)
            same_answer(p, expected, status, answer)
            stored_as_played(club, p)


# -- the state machine ---------------------------------------------------------------------------


PAGE_PATIENCE = PATIENCE / 10
"""Seconds a page may take to show a change (a safety net: it takes milliseconds; reached only
when the test fails, and then again at each example hypothesis tries while shrinking)."""


class Page(LivePage):
    """An open page of a game on one process: the turns it was sent, in order (none skipped: each
    message's turns follow those it had, after a take-back from where the moves were taken
    back), whether the game is over, its take-backs; ``gone`` once its connection closed (its
    process killed or stopped)."""

    def __init__(self, club: Club, at: int, key: str) -> None:
        self.turns: list[tuple[int, int, int, int]] = []
        self.over = False
        self.takebacks = 0
        self.skipped: list[dict[str, Any]] = []
        super().__init__(f"ws://127.0.0.1:{club.servers[at].port}/api/games/{key}/live")

    def seen(self, state: dict[str, Any]) -> None:
        if state["turns_from"] > len(self.turns):
            self.skipped.append(state)
        del self.turns[state["turns_from"] :]
        self.turns += [
            (t["number"], t["seat"], t["move"]["pile"], t["move"]["take"]) for t in state["turns"]
        ]
        self.over, self.takebacks = state["over"], state["takebacks"]

    def shows(self, p: Played) -> None:
        """The page shows the reference's game (once the last change has reached it)."""
        history = len(p.game.history)
        with self.cond:

            def caught_up() -> bool:
                shown = (self.turns, self.over, self.takebacks)
                return self.gone or shown == (p.turns(0, history), p.over, p.takebacks)

            assert self.cond.wait_for(caught_up, PAGE_PATIENCE), (
                (self.turns, self.over, self.takebacks),
                (p.turns(0, history), p.over, p.takebacks),
            )
            assert not self.skipped, self.skipped


class TwoProcessesAnswerAsOne(RuleBasedStateMachine):
    """Requests to either process at random, processes killed and restarted; every answer is
    the reference's, and so is every game read from either process and from the database."""

    club: Club

    def __init__(self) -> None:
        super().__init__()
        self.games: list[Played] = []
        self.pages: list[tuple[Played, Page]] = []
        self.restarts = 0
        self.steps = 0

    def _start(self, at: int, solo: bool, piles: list[int], bot: str = "perfect") -> None:
        """A new game started on process ``at``, with a page open on the other."""
        p = create(self.club, at, solo, piles, bot=bot)
        self.games.append(p)
        self.pages.append((p, Page(self.club, 1 - at, p.key)))

    @initialize(at=PROCESSES, piles=PILES, bot=BOTS, other=PROCESSES, more=PILES)
    def two_games(self, at: int, piles: list[int], bot: str, other: int, more: list[int]) -> None:
        """Ann against a bot, and Ann against Bob."""
        self._start(at, True, piles, bot)
        self._start(other, False, more)

    # What a rule draws never depends on the games' states (the bot's replies are the server's
    # choice): a game, a pile, a take or a turn are drawn as numbers and mapped onto the state.

    def _game(self, i: int, *, solo: bool = False) -> Played:
        """Game ``i``: most often one still in play (``solo``: against a bot, if any)."""
        self.steps += 1
        playing = [p for p in self.games if not p.over and (p.solo or not solo)]
        if playing and i % 3:
            return playing[i % len(playing)]
        return self.games[i % len(self.games)]

    @rule(at=PROCESSES, solo=st.booleans(), piles=PILES, bot=BOTS)
    def new_game(self, at: int, solo: bool, piles: list[int], bot: str) -> None:
        """A new game, when none of its kind (against a bot, or between people) is in play."""
        if not any(not p.over and p.solo == solo for p in self.games):
            self._start(at, solo, piles, bot)

    @staticmethod
    def _legal(p: Played, pile: int, take: int) -> tuple[int, int, int, int]:
        """A legal move's seat, turn, pile and take (the ``pile``-th pile not empty, at most
        ``take``); in a game over, such a move all the same."""
        g = p.game
        heaps = g.position
        filled = [n for n, h in enumerate(heaps, 1) if h] or [1]
        pile = filled[pile % len(filled)]
        take = min(take, max(1, heaps[pile - 1]))
        return 0 if p.over else g.to_move_seat, len(g.history) + 1, pile, take

    @rule(
        i=GAMES,
        at=PROCESSES,
        kind=st.sampled_from(["legal"] * 4 + ["retry", "played", "early", "illegal", "other"]),
        pile=st.integers(0, 2),
        take=st.integers(1, 3),
        back=st.integers(1, 8),
    )
    def move(self, i: int, at: int, kind: str, pile: int, take: int, back: int) -> None:
        """A move: legal (the seat to move, the next move, a pile not empty), or a retry of a
        move played (``back`` moves ago, by a human), another move for a turn played, a move for
        a later turn, an illegal move, the other seat's."""
        p = self._game(i)
        g = p.game
        heaps = g.position
        seat, turn, pile, take = self._legal(p, pile, take)
        people = [t for t in g.history if t.seat in p.tokens]
        if kind in ("retry", "played") and people:
            done = people[-min(back, len(people))]
            seat, turn, pile, take = done.seat, done.number, done.move.pile, done.move.take
            if kind == "played":
                take += 1
        elif kind == "early":
            turn += 1
        elif kind == "illegal":
            take = heaps[pile - 1] + 1
        elif kind == "other":
            seat = 1 - seat
        status, answer = request_move(self.club, at, p, seat, turn, pile, take)
        expected = p.move(seat, turn, pile, take)
        if status == 200 and expected[0] == 200:
            p.replies(answer)
        same_answer(p, expected, status, answer)

    @rule(
        i=GAMES,
        at=PROCESSES,
        seat=st.sampled_from((0, 0, 1)),
        how=st.sampled_from(("undo",) * 4 + ("resign", "abandon")),
    )
    def change(self, i: int, at: int, seat: int, how: str) -> None:
        """A take-back (most often), a resignation or an abandon, by Ann (most often) or the
        other seat."""
        p = self._game(i, solo=how == "undo")
        status, answer = request_change(self.club, at, p, seat, how)
        expected = p.undo(seat) if how == "undo" else p.end(seat, ENDED[how])
        same_answer(p, expected, status, answer)

    @rule(
        i=GAMES,
        at=PROCESSES,
        back=PROCESSES,
        pile=st.integers(0, 2),
        take=st.integers(1, 3),
        piles=PILES,
        bot=BOTS,
    )
    def move_and_take_back(
        self, i: int, at: int, back: int, pile: int, take: int, piles: list[int], bot: str
    ) -> None:
        """Against a bot (a new game if none is in play): Ann's move on one process, taken back
        on one (the same or the other)."""
        self.new_game(at, True, piles, bot)
        p = self._game(i, solo=True)
        seat, turn, pile, take = self._legal(p, pile, take)
        status, answer = request_move(self.club, at, p, seat, turn, pile, take)
        expected = p.move(seat, turn, pile, take)
        if status == 200 and expected[0] == 200:
            p.replies(answer)
        same_answer(p, expected, status, answer)
        status, answer = request_change(self.club, back, p, 0, "undo")
        same_answer(p, p.undo(0), status, answer)

    @rule(
        i=GAMES,
        at=PROCESSES,
        how=st.sampled_from(("move", "undo", "resign", "abandon")),
        pile=st.integers(0, 2),
        other=st.integers(0, 2),
    )
    def race(self, i: int, at: int, how: str, pile: int, other: int) -> None:
        """Two requests at once, one to each process: a move, and another move for the same
        turn (another page of the same seat; perhaps the same move), a take-back, a resignation
        or an abandon (by the seat to move or the other)."""
        p = self._game(i, solo=how == "undo")
        seat, turn, pile, take = self._legal(p, pile, 1)
        ops = [Op.move(at, seat, turn, pile, take)]
        if how == "move":
            _, _, pile, take = self._legal(p, other, 2)
            ops.append(Op.move(1 - at, seat, turn, pile, take))
        else:
            ops.append(Op.change(1 - at, how, 0 if p.solo else other % 2))
        as_made_in_turn(self.club, p, ops, race(self.club, p, ops))

    @rule(i=GAMES, at=PROCESSES)
    def look(self, i: int, at: int) -> None:
        p = self._game(i)
        same_state(p, read(self.club, at, p))

    @precondition(lambda self: self.restarts < 1 and self.steps >= 15)
    @rule(how=st.sampled_from(("worker", "kill", "stop")), i=GAMES, pile=st.integers(0, 2))
    def restart(self, how: str, i: int, pile: int) -> None:
        """A process killed (SIGKILL: one of the first server's two on PostgreSQL, else the
        second server) or stopped while a move is sent to it, and started again: the move was
        answered and is stored, or it was cut off and is stored wholly (with the bot's reply)
        or not at all; nothing acknowledged is lost, and the other process serves every game
        meanwhile. Once per run, after a few requests (each costs about a second)."""
        self.restarts += 1
        p = self._game(i)
        seat, turn, pile, take = self._legal(p, pile, 1)
        worker = how == "worker" and self.club.workers
        at, other = (0, 1) if worker else (1, 0)
        sent: list[tuple[int, Any] | None] = []
        sender = threading.Thread(
            target=lambda: sent.append(
                _unless_cut_off(lambda: request_move(self.club, at, p, seat, turn, pile, take))
            )
        )
        sender.start()
        second = self.club.servers[1]
        if worker:
            self.club.kill_worker()
        elif how == "kill":
            second.kill()
        else:
            second.stop()
        sender.join(PATIENCE)
        if sent[0] is None:  # cut off: played wholly, or not at all
            state = self._settled(p, other)
            if state["move_count"] > len(p.game.history):
                assert p.move(seat, turn, pile, take) == (200, ""), state
                p.replies(state)
            same_state(p, state)
        else:
            status, answer = sent[0]
            expected = p.move(seat, turn, pile, take)
            if status == 200 and expected[0] == 200:
                p.replies(answer)
            same_answer(p, expected, status, answer)
        if not worker:
            for q in self.games:  # the first serves on
                same_state(q, read(self.club, 0, q))
            self.club.spawn(1)
            second.wait()
        self.everything_as_played()

    def _settled(self, p: Played, at: int) -> dict[str, Any]:
        """The game read from process ``at`` once no bot is to move in it (a move cut off may
        be stored without the reply its bot was thinking of: another process then plays it)."""
        found: list[dict[str, Any]] = []

        def settled() -> bool:
            found[:] = [read(self.club, at, p)]
            return not p.solo or found[0]["over"] or found[0]["to_move"] != 1

        until(settled, "the bot replied")
        return found[0]

    def everything_as_played(self) -> None:
        """Every game as the reference's: read from either process, stored, and shown by its
        open page (unless its process was killed)."""
        for p in self.games:
            for at in (0, 1):
                same_state(p, read(self.club, at, p))
            stored_as_played(self.club, p)
        for p, page in self.pages:
            page.shows(p)

    def teardown(self) -> None:
        try:
            self.everything_as_played()
        finally:
            for _, page in self.pages:
                page.close()


def test_two_processes_answer_as_one(club: Club) -> None:
    """A few runs of the machine (``NIMLAB_TEST_MACHINE_EXAMPLES``, default 4: a few seconds;
    set it higher to look further)."""
    TwoProcessesAnswerAsOne.club = club
    with _log_shown_on_failure(club):
        run_state_machine_as_test(
            TwoProcessesAnswerAsOne,
            settings=settings(
                max_examples=int(os.environ.get("NIMLAB_TEST_MACHINE_EXAMPLES", "4")),
                stateful_step_count=40,
                deadline=None,
                suppress_health_check=list(HealthCheck),
            ),
        )
