"""A human's move request (:class:`MoveRequests`), judged against the game: who may move (the
seat's token), whose turn and which move number it is, a retry of a move played already (the same
answer, nothing played twice). The move itself is played and stored by the game's owner
(:meth:`nimlab.web.owner.GameOwner.apply`); when the database refuses it because another process
changed the game first, the game is read again and the request judged afresh.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from nimlab.core.errors import GameOverError, InvalidMoveError, NimlabError
from nimlab.core.game import Game, Turn
from nimlab.core.position import Move
from nimlab.web.errors import ApiError, Conflict, Unavailable
from nimlab.web.livegame import LiveGame, Stale
from nimlab.web.schemas_in import MoveIn

if TYPE_CHECKING:
    from nimlab.web.live import LiveGames

__all__ = ["MoveRequests"]


def _same_move(game: Game, done: Turn, req: MoveIn) -> bool:
    """Whether a request for move ``done.number`` of ``done.seat`` names the move that was played
    (a retry), its text read in the position that move was played in."""
    if done.seat != req.seat:
        return False
    move = done.move
    if req.text is not None:
        try:
            wanted = game.ruleset.rules.parse_move(req.text, done.before)
        except NimlabError:
            return False
        return (wanted.pile, wanted.take, wanted.at, wanted.also) == (
            move.pile,
            move.take,
            move.at,
            move.also,
        )
    also = tuple(tuple(p) for p in req.also or ())
    return (move.pile, move.take, move.at, move.also) == (req.pile, req.take, req.at, also)


def _played_first(game: Game, done: Turn, req: MoveIn, number: int) -> Conflict:
    """The 409 for a request whose move ``done.number`` another request played first: from the
    same seat (another page of the same player: two tabs), it says which move was played and
    that this one was not."""
    what = game.ruleset.rules.describe_move(done.move, done.before)
    if done.seat == req.seat:
        return Conflict(
            f"move {done.number} was already played, from another page of {done.player.name} "
            f"({what}): this move was not played; the next move is move {number}: reload the "
            "game"
        )
    return Conflict(
        f"move {done.number} was already played ({done.player.name}: {what}); the next move is "
        f"move {number}: reload the game"
    )


class MoveRequests:
    """The move requests of the games a process holds (``live``: its registry)."""

    def __init__(self, live: LiveGames) -> None:
        self.live = live

    async def play(self, key: str, req: MoveIn) -> tuple[LiveGame, int]:
        """Play a human's move; returns the game and the number of the move before it (the
        answer sends the turns after it). Checks, in order: the game exists (404), the seat
        exists and is a human's (422, 403), the token is the seat's (403); a request for a move
        already played by that seat with the same move is a retry: answered again, nothing
        played; else the game is not over and it is that seat's turn, and ``turn`` is the next
        move's number (409), the move is legal (422, the core's message). Nothing changes when a
        check fails. Then the bots reply (waited for up to ``reply_wait`` seconds).

        The checks are made against this process's copy of the game; when one fails, when the
        request is a retry (nothing is written, so no version fences it), or when the database
        refuses the move (or the bots' replies stored with it) because another process changed
        the game first, the game is read again and the move judged afresh against its current
        turn (see :mod:`nimlab.web.live`)."""
        lg = await self.live.lookup(key, fresh=False)
        self.live.owner.check_seat(lg, req.seat, req.token, acting="move")
        synced = not self.live.has_feed  # nobody else changes the game: its copy is the truth
        for _ in range(8):
            try:
                async with lg.lock:
                    number, replies, retry = await self._play(lg, req)
            except Stale:
                await self.live.follower.sync_if_stale(lg)
                synced = True
                continue
            except Unavailable:  # the database cannot be used: said as it is
                raise
            except (ApiError, NimlabError):
                if synced or not await self.live.follower.changed_elsewhere(lg):
                    raise
                synced = True
                continue
            if retry and not synced and await self.live.follower.changed_elsewhere(lg):
                # nothing was written, so no fence saw the copy: judged again on the game as
                # stored (the move may have been taken back, or the game gone on, elsewhere)
                synced = True
                continue
            if retry and lg.saved >= number:
                return lg, number - 1
            if not replies and not retry:
                await self.live.owner.changed(lg)
                return lg, number - 1
            done = await self._with_replies(lg, req, number)
            if done is not None:
                return lg, done
            synced = True  # the game changed elsewhere: the move was not stored
        raise Unavailable("the game changes too fast here to play this move: try again")

    async def _with_replies(self, lg: LiveGame, req: MoveIn, number: int) -> int | None:
        """The bots' replies to move ``number`` (played, not stored yet) waited for and stored
        with it (one disk flush): the number of the move before it, for the answer, or
        ``None`` when another process changed the game first (the move was taken back with the
        copy: judge the request again). Nothing is answered before every move played is
        saved."""
        game = lg.game
        version = lg.stored
        self.live.bots.ensure(lg)
        await self.live.bots.await_replies(lg)
        try:
            async with lg.lock:
                unsaved = len(game.history) > lg.saved
                await self.live.owner.ledger.save(lg)  # when the bots are still thinking
        except Stale:
            await self.live.follower.sync_if_stale(lg)
            unsaved = False
        history = game.history
        if len(history) < number:
            if lg.stored != version or lg.saved_as is not None:
                return None  # read afresh from the database meanwhile (by a bot's turn, or here)
            raise Unavailable("the move could not be saved, so it was not played")
        done = history[number - 1]
        if not _same_move(game, done, req):
            raise _played_first(game, done, req, len(history) + 1)
        if unsaved:
            self.live.watchers.broadcast(lg)
        return number - 1

    async def _play(self, lg: LiveGame, req: MoveIn) -> tuple[int, bool, bool]:
        """The checks of :meth:`play` against this copy of the game, then the move played (and
        saved, unless bots reply that need thinking): the move's number, whether bots reply,
        whether it was a retry of a move played already. Call with ``lg.lock`` held."""
        game = lg.game
        player = game.players[req.seat]
        number = len(game.history) + 1
        if req.turn < number:
            done = game.history[req.turn - 1]
            if _same_move(game, done, req):
                return req.turn, False, True  # a retry: the same answer, nothing played twice
            raise _played_first(game, done, req, number)
        if game.is_over or lg.ended is not None or lg.saved_as is not None:
            raise GameOverError("the game is over: start a new one")
        if req.seat != game.to_move_seat:
            raise Conflict(f"it is {game.to_move.name}'s turn, not {player.name}'s")
        if req.turn != number:
            raise Conflict(
                f"this request is for move {req.turn}, but the next move is move {number}: "
                "reload the game"
            )
        if req.text is not None:
            move = game.parse_move(req.text)
        elif req.pile is None or req.take is None:
            raise InvalidMoveError(
                "give the move as pile and take (and at, in rows of stones), or as text"
            )
        else:
            also = tuple((pile, take) for pile, take in req.also or ())
            move = Move(req.pile, req.take, req.at, also)
        replies = await self.live.owner.apply(lg, move)
        return number, replies, False
