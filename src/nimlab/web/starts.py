"""New games (:class:`GameStarts`): a setup checked (the core's checks, with the web app's
bounds), a game started (stored as in play before it is answered, a fresh token for each human
seat, or for a game of bots only the token that stops it), and the registered players a setup
names.
"""

from __future__ import annotations

import asyncio
import secrets
from typing import TYPE_CHECKING

from nimlab.core.errors import PlayerError
from nimlab.core.game import Game
from nimlab.storage import PlayerRecord, Store, TooManyGamesInPlayError, check_username
from nimlab.theory.budget import BudgetExceeded
from nimlab.web.errors import TooManyRequests
from nimlab.web.guard import Holdings, holding_limit
from nimlab.web.livegame import LiveGame, build_game, token_hash
from nimlab.web.schemas import SetupIn

if TYPE_CHECKING:
    from nimlab.web.live import LiveGames

__all__ = ["GameStarts"]


class GameStarts:
    """The games a process starts (``live``: its registry)."""

    def __init__(self, live: LiveGames) -> None:
        self.live = live

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

    def _may_start(self, client: str | None) -> None:
        """Raise :class:`TooManyRequests` when ``client``'s network holds its share of the
        games in play, or the reserve of the bound on games in play is reached and it holds
        more than a little (see :class:`~nimlab.web.guard.Holdings`; the bounds per address
        and in all are the database's). O(games held)."""
        if client is None:
            return
        held = Holdings.of("games", self.live.settings)
        for lg in self.live.games.values():
            if lg.client is not None and lg.saved_as is None and lg.ended is None:
                held.add(lg.client, 1)
        why = held.refusal(client)  # (over its own bound: the database says so)
        if why in ("network", "reserve"):
            raise TooManyRequests(
                "your network has as many games in play as it may have now: finish one first"
                if why == "network"
                else "this server keeps its last games in play for new players: finish one "
                "of yours first",
                retry_after=60.0,
                limit=holding_limit(why, "max_games_per_client", "max_games_in_play"),
            )

    async def create(
        self, setup: SetupIn, client: str | None = None
    ) -> tuple[LiveGame, dict[int, str], str | None]:
        """Start a game for ``client`` (at most so many in play per client: 429 beyond);
        returns it with a fresh token for each human seat, and for a game of bots only the
        token that stops it (its owner's, see :meth:`~nimlab.web.owner.GameOwner.may_stop`)."""
        self._may_start(client)
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
            await self.live.storage(
                self.live.queued(
                    lambda: self.live.writer.add_game(
                        key, record, meta, client=client, public=public
                    )
                )
            )
        except TooManyGamesInPlayError as e:
            raise TooManyRequests(
                str(e), limit="max_games_per_client" if e.per_client else "max_games_in_play"
            ) from None
        lg = LiveGame(key, game, usernames, hashes, saved=len(record["moves"]), client=client)
        lg.analysis_allowed = setup.analysis
        lg.public = setup.public
        lg.owner_hash = owner_hash
        self.live.remember(lg)
        await self.live.owner.changed(lg)
        await self.live.bots.await_replies(lg)
        return lg, tokens, owner
