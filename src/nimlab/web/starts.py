"""New games (:class:`GameStarts`): a setup checked (the core's checks, with the web app's
bounds), a game started (stored as in play before it is answered, a fresh token for each human
seat, or for a game of bots only the token that stops it), the registered players a setup
names; the games in play a process resumes as it starts; and the games it comes to hold later,
read from the database (in play on another process, or finished).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from typing import TYPE_CHECKING

from nimlab.core.errors import PlayerError
from nimlab.core.game import Game
from nimlab.storage import (
    PlayerRecord,
    Store,
    TooManyGamesInPlayError,
    check_username,
    ending_of,
    takebacks_of,
)
from nimlab.theory.budget import BudgetExceeded
from nimlab.web import metrics
from nimlab.web.errors import NotFound, TooManyRequests
from nimlab.web.guard import network_of
from nimlab.web.livegame import LiveGame, Stale, build_game, resumed_game, token_hash
from nimlab.web.schemas_in import SetupIn

if TYPE_CHECKING:
    from nimlab.web.live import LiveGames

__all__ = ["GameStarts"]

log = logging.getLogger("nimlab.web")


class GameStarts:
    """The games a process starts (``live``: its registry)."""

    def __init__(self, live: LiveGames) -> None:
        self.live = live

    async def resume(self, cap: int) -> None:
        """Resume the games in play the bound ``cap`` allows (the most recently played first;
        see :class:`nimlab.storage.InPlayLimits`), as the process starts: a game that ended
        while no process held it is stored as finished; the others' bots play on."""
        live = self.live
        held = await live.read(lambda s: s.count_games_in_play())
        entries = await live.read(lambda s: s.live_games_with_versions(limit=cap))
        resumed = 0  # of the games read, the ones that go on (others ended or do not replay)
        for (key, record, meta), version in entries:
            lg = resumed_game(key, record, meta, version)
            if lg is None:
                continue
            live.games[key] = lg
            resumed += not lg.game.is_over
            if lg.game.is_over:
                with contextlib.suppress(Stale):  # finished by another process meanwhile
                    await live.owner.ledger.finish(lg)
            else:
                live.bots.ensure(lg, grace=live.bots.grace)
        if held > cap:
            log.warning(
                "%d games are in play but the bound is %d: the %d played least recently stay "
                "stored (not resumed) until they expire",
                held,
                cap,
                held - cap,
            )
        # the count was read before the games: other processes may have started some in
        # between ("resumed 10 of 7 games in play"); those read are in play too
        log.info("resumed %d of %d games in play", resumed, max(held, len(entries)))

    async def from_elsewhere(self, key: str) -> LiveGame | None:
        """Game ``key`` in play, started or last held by another process, read from the
        database and held here (its bots played on from here after the takeover grace); or
        ``None`` when it is not in play. One read and a replay."""
        live = self.live
        playing = await live.read(lambda s: s.live_game_with_version(key))
        if playing is None:
            return None
        (_, record, meta), version = playing
        lg = live.games.get(key)  # read by another request meanwhile
        if lg is not None:
            return lg
        lg = resumed_game(key, record, meta, version)
        if lg is None:
            raise NotFound(f"game {key!r} cannot be resumed")
        live.games[key] = lg
        live.bots.ensure(lg, grace=live.bots.grace)
        return lg

    async def restored(self, key: str) -> LiveGame:
        """Game ``key``, which finished (or was resigned or abandoned) before the last restart
        or was dropped from memory since, read back from the store as a finished game with its
        seats' tokens, so that its old link still leads to it. Raises :class:`NotFound`. Two
        reads and a replay on the engine's workers."""
        live = self.live
        found = await live.read(lambda s: s.finished_game(key))
        if found is None:
            raise NotFound(f"there is no game {key!r} in play (finished games are in the history)")
        game_id, meta = found
        stored = await live.read(lambda s: s.game(game_id))
        game = await live.compute(
            f"stored:{game_id}", "replay", lambda: Game.from_record(stored.record)
        )
        players = len(game.players)
        usernames = [seat.username for seat in stored.summary.seats][:players]
        usernames += [None] * (players - len(usernames))
        hashes = {int(k): str(v) for k, v in (meta.get("tokens") or {}).items()}
        lg = live.games.get(key)  # restored by another request meanwhile
        if lg is not None:
            return lg
        lg = LiveGame(
            key,
            game,
            usernames,
            hashes,
            saved=len(game.history),
            saved_as=game_id,
            finishing=True,
            takebacks=takebacks_of(meta),
        )
        ending = ending_of(stored.record, players)
        if ending is not None:
            live.owner.ledger.stopped(lg, ending)
        live.games[key] = lg
        live.finished(key)
        return lg

    async def registered(self, setup: SetupIn) -> dict[str, PlayerRecord]:
        """The registry records of the usernames in a setup; raises for unknown ones."""
        wanted = {
            p.username: check_username(p.username) for p in setup.players if p.username is not None
        }
        if not wanted:
            return {}

        def lookup(store: Store) -> dict[str, PlayerRecord]:
            return {given: store.get_player(name) for given, name in wanted.items()}

        return await self.live.read(lookup)

    async def check(self, setup: SetupIn, client: str | None = None) -> Game:
        """The game a setup would start (nothing is kept); raises the core's errors."""
        game, _ = await self._build(setup, client)
        return game

    async def _build(self, setup: SetupIn, client: str | None) -> tuple[Game, list[str | None]]:
        """Build a setup's game (on the engine's workers when who starts needs a search)."""
        if isinstance(setup.first, int) and setup.first >= len(setup.players):
            raise PlayerError(
                f"seat {setup.first} cannot start: seats are 0 to {len(setup.players) - 1}"
            )
        registered = await self.registered(setup)
        if setup.first != "auto":  # who starts needs no search: building the game is O(piles)
            return build_game(setup, registered)
        owner = f"client:{client}"
        wait = self.live.settings.compute_wait + self.live.settings.move_seconds
        try:
            return await asyncio.wait_for(
                self.live.compute(
                    owner, "setup", lambda: build_game(setup, registered), client=client
                ),
                wait,
            )
        except (BudgetExceeded, TimeoutError):
            from nimlab.theory import kernels

            if kernels.preparing():
                raise PlayerError(
                    "working out who is in the winning position waits for the solvers, which "
                    "are being prepared (the server has just started): let the first player or "
                    "a random player start, or try again in a minute"
                ) from None
            raise PlayerError(
                "working out who is in the winning position takes too long here: "
                "let the first player or a random player start"
            ) from None

    async def create(
        self, setup: SetupIn, client: str | None = None
    ) -> tuple[LiveGame, dict[int, str], str | None]:
        """Start a game for ``client`` (at most so many in play per client, per network of
        clients and in all, with a reserve for newcomers, as the database counts them for every
        process serving it: 429 beyond; see :meth:`ServerSettings.in_play_limits
        <nimlab.web.settings.ServerSettings.in_play_limits>`); returns it with a fresh token
        for each human seat, and for a game of bots only the token that stops it (its owner's,
        see :meth:`~nimlab.web.owner.GameOwner.may_stop`)."""
        game, usernames = await self._build(setup, client)
        key = secrets.token_urlsafe(6)
        while key in self.live.games:
            key = secrets.token_urlsafe(6)
        tokens = {s: secrets.token_urlsafe(18) for s, p in enumerate(game.players) if not p.is_bot}
        hashes = {s: token_hash(t) for s, t in tokens.items()}
        owner = secrets.token_urlsafe(18) if not tokens else None
        owner_hash = None if owner is None else token_hash(owner)
        record = game.to_record()
        meta = {
            "tokens": {str(s): h for s, h in hashes.items()},
            "usernames": usernames,
            "analysis": setup.analysis,
            "client": client,
            "public": setup.public,
            "owner": owner_hash,
        }
        try:
            public = setup.public
            network = None if client is None else network_of(client)
            await self.live.storage(
                self.live.queued(
                    lambda: self.live.writer.add_game(
                        key, record, meta, client=client, public=public, network=network
                    )
                )
            )
        except TooManyGamesInPlayError as e:
            raise TooManyRequests(
                str(e), retry_after=60.0, limit=metrics.refusal_limit(e.limit)
            ) from None
        lg = LiveGame(key, game, usernames, hashes, saved=len(record["moves"]), client=client)
        lg.analysis_allowed = setup.analysis
        lg.public = setup.public
        lg.owner_hash = owner_hash
        self.live.remember(lg)
        await self.live.owner.changed(lg)
        await self.live.bots.await_replies(lg)
        return lg, tokens, owner
