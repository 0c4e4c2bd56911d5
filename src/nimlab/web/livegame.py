"""A game in play as one process holds it (:class:`LiveGame`), and what is built or said from
it: the game a setup describes (:func:`build_game`), how a game stopped (:func:`ended_text`), its
state as answered and pushed (:func:`state_json_of`, :func:`state_text`).

Every change of a :class:`LiveGame` is made by :class:`~nimlab.web.owner.GameOwner` (see
docs/architecture.md); the other parts of the server read it.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import logging
import math
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from nimlab.core.errors import NimlabError
from nimlab.core.game import Game
from nimlab.core.narrate import wins_text
from nimlab.core.players import Player, player_from
from nimlab.core.setup import GameSetup
from nimlab.storage import Ending, PlayerRecord, takebacks_of
from nimlab.web import metrics
from nimlab.web.errors import Conflict, Unavailable
from nimlab.web.schemas_in import MAX_STONES, PlayerIn, SetupIn
from nimlab.web.schemas_out import TURN_PAGE, MoveOut
from nimlab.web.views import moves_for_json, state_data, state_json, status_text

if TYPE_CHECKING:
    from nimlab.web.learning import Learning
    from nimlab.web.watchers import Subscriber

__all__ = [
    "CHANGED_ELSEWHERE",
    "LiveGame",
    "Stale",
    "Superseded",
    "build_game",
    "ended_text",
    "engine_waits",
    "resumed_game",
    "state_data_of",
    "state_json_of",
    "state_text",
    "status_of",
    "token_hash",
]

log = logging.getLogger("nimlab.web")


def token_hash(token: str) -> str:
    """The hash kept of a seat's (or an owner's) token: only it is stored."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


# -- building a game from a setup ---------------------------------------------------------------


def _player(spec: PlayerIn, registered: dict[str, PlayerRecord]) -> tuple[Player, str | None]:
    if spec.username is not None:
        record = registered[spec.username]
        return record.as_player(), record.username
    return player_from(spec.kind, spec.name, depth=spec.depth, error=spec.error), None


def build_game(
    setup: SetupIn, registered: dict[str, PlayerRecord]
) -> tuple[Game, list[str | None]]:
    """The game a setup describes and the registered username at each seat. Every check is the
    core's (:class:`~nimlab.core.setup.GameSetup`, typed errors with its messages), with the web
    app's limit of :data:`MAX_STONES` stones on rows. ``registered`` maps each username in the
    setup to its registry record."""
    seats = [_player(p, registered) for p in setup.players]
    game = GameSetup.from_options(
        game=setup.game,
        misere=setup.misere,
        end_positions=setup.end_positions,
        piles=setup.piles,
        players=[p for p, _ in seats],
        first=setup.first,
        seed=setup.seed,
        max_stones=MAX_STONES,
    ).build()
    return game, [u for _, u in seats]


def engine_waits() -> str:
    """Why an answer of the engine is late, as a sentence's start: the solvers are still being
    prepared (the first start after an install), else the engine is busy with other games."""
    from nimlab.theory import kernels

    if kernels.preparing():
        return "The solvers are being prepared (the server has just started)"
    return "The engine is busy with other games"


def ended_text(players: list[Player], ending: Ending) -> str:
    """How a game stopped, in words: "Bob resigned. Ann wins!", "Cy resigned: Ann and Bob win.",
    "Abandoned by Ann: nobody wins." O(players)."""
    name = players[ending.seat].name
    if ending.how == "abandoned":
        return f"Abandoned by {name}: nobody wins."
    winners = [players[s] for s in ending.winners]
    if len(winners) == 1:
        return f"{name} resigned. {wins_text(winners[0])}"
    names = ", ".join(p.name for p in winners[:-1]) + f" and {winners[-1].name}"
    return f"{name} resigned: {names} win."


# -- games in play ------------------------------------------------------------------------------


def database_down(public: str, error: BaseException) -> Unavailable:
    """The 503 answer to a database error: ``public`` alone for the client, the error itself
    (which may name the database's user, host, port and name) in the log, where the request's
    id ties it to the answer; counted in ``nimlab_db_errors_total``."""
    metrics.database_error()
    log.warning("%s: %s", public, error)
    return Unavailable(public)


class Superseded(RuntimeError):
    """The answer is no longer wanted: the game moved on, ended or went away."""


CHANGED_ELSEWHERE = "the game changed meanwhile, from another page: look at the game again"
"""The 409 of a change refused twice because the game changed first elsewhere (its storage's
message names versions)."""


class Stale(Conflict):
    """This process's copy of a game was older than the database's: the change was not written
    (read the game again and judge the change afresh; a 409 if it reaches a client)."""


@dataclass(eq=False)
class LiveGame:
    """A game in play and what the server knows around it."""

    key: str
    game: Game
    usernames: list[str | None]
    token_hashes: dict[int, str]
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    subscribers: set[Subscriber] = field(default_factory=set)
    saved: int = 0
    saved_as: int | None = None
    finishing: bool = False
    thinking: bool = False
    driver: asyncio.Task[None] | None = None
    learning: dict[str, Learning] = field(default_factory=dict)
    problem: str | None = None
    """Why the game cannot go on (a bot failed to move); shown to everyone watching."""
    client: str | None = None
    """Who started it (a network address), for the engine's fair share."""
    version: int = 0
    rendered: dict[tuple[int, int | None], str] = field(default_factory=dict)
    ended: str | None = None
    """Why the game stopped before its end (resigned, abandoned): it is no longer in play."""
    ended_winner: int | None = None
    takebacks: int = 0
    analysis_allowed: bool = True
    """The setup's choice: hints and values during play in a game between people."""
    public: bool = False
    """The setup's choice: listed among the games in play for anyone to watch."""
    owner_hash: str | None = None
    """A game of bots only: the hash of the token that stops it (given to its creator)."""
    seen: float = field(default_factory=time.monotonic)
    """When someone last asked for the game (a request for its state, an open page)."""
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    """Set when someone looks at a paused game of bots only."""
    paused: bool = False
    writing: set[asyncio.Future[Any]] = field(default_factory=set)
    """Writes of this game handed to the writer and not done yet (a change fenced by the version
    waits for them: each one moves the version on when it commits)."""
    stored: int = 0
    """The game's version in the database that this copy reflects (see the module docstring)."""
    refreshing: bool = False
    """A read of the game from the database is under way (changes announced meanwhile wait)."""
    refresh_again: bool = False

    @property
    def bots_only(self) -> bool:
        """Whether every seat is a bot's (such a game plays only while someone watches it)."""
        return all(p.is_bot for p in self.game.players)

    @property
    def analysis_open(self) -> bool:
        """Whether hints and move values may be asked now: always after the game and in games
        with at most one human; during a game between people only if the setup allows it."""
        humans = sum(1 for p in self.game.players if not p.is_bot)
        return self.analysis_allowed or humans < 2 or self.game.is_over or self.ended is not None

    def check_token(self, seat: int, token: str) -> bool:
        expected = self.token_hashes.get(seat)
        return expected is not None and hmac.compare_digest(expected, token_hash(token))

    @property
    def human_active(self) -> bool:
        """Whether a human still plays (bots then answer at once; else they play paced)."""
        return any(not self.game.players[s].is_bot for s in self.game.active)


def resumed_game(
    key: str, record: dict[str, Any], meta: dict[str, Any], version: int
) -> LiveGame | None:
    """A game in play as read from the database at ``version`` (``None``, logged, when it
    does not replay), with the setup's choices and the creating client kept in its stored
    data."""
    try:
        game = Game.from_record(record)
    except NimlabError as e:
        log.warning("game %s cannot be resumed: %s", key, e)
        return None
    players = len(game.players)
    usernames = list(meta.get("usernames") or [None] * players)[:players]
    hashes = {int(k): str(v) for k, v in (meta.get("tokens") or {}).items()}
    lg = LiveGame(
        key,
        game,
        usernames,
        hashes,
        saved=len(record["moves"]),
        stored=version,
        takebacks=takebacks_of(meta),
    )
    lg.analysis_allowed = bool(meta.get("analysis", True))
    lg.public = bool(meta.get("public", False))
    owner = meta.get("owner")
    lg.owner_hash = str(owner) if owner is not None else None
    lg.seen = -math.inf  # a game of bots only waits for someone to look at it
    client = meta.get("client")
    lg.client = str(client) if client is not None else None
    return lg


# -- the state answered and pushed --------------------------------------------------------------


def state_json_of(lg: LiveGame, since: int | None = None) -> bytes:
    """The game's state as the API answers it (a :class:`GameStateOut` in JSON, written
    without building the model: :func:`~nimlab.web.views.state_json`), with at most
    :data:`TURN_PAGE` turns: those after move ``since``, else the last ones; with the game's
    lifecycle (stopped, take-backs, analysis allowed). The one way the server makes a game's
    state: every route and every page's live message uses it. O(piles + TURN_PAGE × piles)."""
    game = lg.game
    return state_json(state_data_of(lg, since, moves_for_json(game)), game)


def state_data_of(lg: LiveGame, since: int | None, legal: list[MoveOut] | None) -> dict[str, Any]:
    """:func:`~nimlab.web.views.state_data` of the live game, with its lifecycle."""
    data = state_data(
        lg.key,
        lg.game,
        lg.usernames,
        thinking=lg.thinking,
        saved_as=lg.saved_as,
        problem=lg.problem,
        since=since,
        limit=TURN_PAGE,
        legal=legal,
    )
    data["takebacks"] = lg.takebacks
    data["analysis_allowed"] = lg.analysis_open
    if lg.ended is not None:
        data["ended"] = lg.ended
        data["status"] = lg.ended
        data["over"] = True
        data["to_move"] = None
        data["thinking"] = False
        data["winner"] = lg.ended_winner
    return data


def status_of(lg: LiveGame) -> str:
    """The game's one-line status. O(1)."""
    return status_text(lg.game, thinking=lg.thinking, problem=lg.problem)


def state_text(lg: LiveGame, since: int | None) -> str:
    """The live message for a page that has seen ``since`` moves (``None``: a page just
    opened), ``{"type": "state", "state": ...}`` around :func:`state_json_of`; made once per
    change for all pages at the same move."""
    key = (lg.version, since)
    text = lg.rendered.get(key)
    if text is None:
        if len(lg.rendered) > 16 or any(v != lg.version for v, _ in lg.rendered):
            lg.rendered = {}
        text = '{"type":"state","state":' + state_json_of(lg, since).decode() + "}"
        lg.rendered[key] = text
    return text
