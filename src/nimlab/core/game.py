"""Game sessions: players, turns, history, undo, elimination rounds, winner, and a record that
replays exactly.

>>> game = Game(Ruleset(), [3, 4, 5], ["human:Ann", "bot:perfect:Hal"], seed=1)
>>> game.to_move.name
'Ann'
>>> turn = game.push("1 2")       # Ann takes 2 from pile 1
>>> game.board.heaps
(1, 4, 5)
>>> game.play_bot().player.name  # Hal answers
'Hal'
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from nimlab.core.arguments import check_count, shown
from nimlab.core.bots import Bot, Choice, make_bot
from nimlab.core.clock import now_stamp
from nimlab.core.errors import GameOverError, InvalidMoveError, PlayerError, PositionError
from nimlab.core.players import Player, unique_players
from nimlab.core.position import Board, Move, heaps_text
from nimlab.core.record import MAX_PLAYERS, RECORD_FORMAT, GameRecord, RecordedMove
from nimlab.core.ruleset import Ruleset, as_ruleset
from nimlab.core.setup import FIRST_CHOICES, First, check_start
from nimlab.core.state import GameState
from nimlab.core.words import count_text
from nimlab.theory.outcome import Outcome

__all__ = [
    "FIRST_CHOICES",
    "RECORD_FORMAT",
    "First",
    "Game",
    "GameRecord",
    "Player",
    "Turn",
    "unique_players",
]


@dataclass(frozen=True, slots=True)
class Turn:
    """One move made in a game and what it caused."""

    number: int
    round: int
    seat: int
    player: Player
    move: Move
    before: Board
    after: Board
    claim: str | None = None
    eliminated: bool = False
    """The mover was eliminated (misère play, three or more players; with two the other wins)."""
    new_round: bool = False
    winner: Player | None = None


@dataclass
class _Step:
    turn: Turn
    before: GameState
    at: str = field(default_factory=now_stamp)


class Game:
    """A game in play: a ruleset, a start position, two or more players moving in turn.

    ``first`` chooses who moves first: the first listed, a random player, or (``auto``, two
    players) whoever is in the winning position, so a bot opponent starts when it can win.
    In misère play with more than two players, whoever moves into an end position is eliminated
    and a new round starts from the start position.

    A start position that is already an end position (``[0]``, or an extra end position) is
    refused with a :class:`~nimlab.core.errors.PositionError`, as every interface refuses it
    (:func:`~nimlab.core.setup.check_start`): the game would be over before anyone moves.
    """

    def __init__(
        self,
        ruleset: Ruleset | str = Ruleset(),
        start: Iterable[int] | Board = (3, 4, 5),
        players: Sequence[Player | str] = ("human:You", "bot:perfect:Hal"),
        *,
        first: First | int = "first",
        seed: int | None = None,
    ) -> None:
        self.ruleset = as_ruleset(ruleset)
        self.start: Board = self.ruleset.rules.as_board(start)
        check_start(self.ruleset, self.start)
        self.players = unique_players(players)
        if len(self.players) < 2:
            raise PlayerError("a game needs at least two players")
        if len(self.players) > MAX_PLAYERS:
            raise PlayerError(f"at most {MAX_PLAYERS} players")
        most = self.ruleset.rules.max_players
        if most is not None and len(self.players) > most:
            raise PlayerError(f"{self.ruleset.game.title} is played by at most {most} players")
        if seed is not None:
            check_count(seed, "seed", -(1 << 63), 1 << 63)
        self.seed = seed if seed is not None else random.randrange(1 << 31)
        self.rng = random.Random(self.seed)
        self.bots: dict[int, Bot] = {
            i: make_bot(p.bot, random.Random(self.seed * 1_000_003 + i))
            for i, p in enumerate(self.players)
            if p.bot is not None
        }
        self.first_seat = self._resolve_first(first)
        self._state = GameState(
            ruleset=self.ruleset,
            start=self.start,
            board=self.start,
            players=self.players,
            active=tuple(range(len(self.players))),
            to_move=self.first_seat,
        )
        self._steps: list[_Step] = []
        self._turns: list[Turn] = []  # the turns of _steps, so that history is O(1)
        self.started_at = now_stamp()
        self._state = self._settle(self._state)
        self.opening_eliminations = self._state.eliminated if len(self.players) > 2 else ()
        """Seats eliminated before the first move (the start is an end position): games of
        three or more players only; a two-player game is then simply over."""

    def _resolve_first(self, first: First | int) -> int:
        if isinstance(first, int) and not isinstance(first, bool):
            if not 0 <= first < len(self.players):
                raise PlayerError(
                    f"first player {shown(first + 1)} does not exist: players are "
                    f"1-{len(self.players)}"
                )
            return first
        if first == "first":
            return 0
        if first == "random":
            return self.rng.randrange(len(self.players))
        if first == "auto":
            if len(self.players) != 2:
                return 0
            bots = [i for i, p in enumerate(self.players) if p.is_bot]
            outcome = self.ruleset.evaluator.outcome(self.start.canonical)
            if len(bots) != 1 or outcome is None:
                return 0
            bot = bots[0]
            return bot if outcome is Outcome.N else 1 - bot
        raise PlayerError(f"first player {shown(first)}: choose first, random or auto")

    # -- state --------------------------------------------------------------------------------

    @property
    def board(self) -> Board:
        return self._state.board

    @property
    def position(self) -> tuple[int, ...]:
        """The heaps in display order."""
        return self._state.board.heaps

    @property
    def active(self) -> tuple[int, ...]:
        """Seats still in the game, in seat order."""
        return self._state.active

    @property
    def round(self) -> int:
        return self._state.round

    @property
    def eliminated(self) -> tuple[Player, ...]:
        return tuple(self.players[s] for s in self._state.eliminated)

    @property
    def is_over(self) -> bool:
        return self._state.winner is not None

    @property
    def winner(self) -> Player | None:
        return None if self._state.winner is None else self.players[self._state.winner]

    @property
    def winner_seat(self) -> int | None:
        return self._state.winner

    @property
    def to_move_seat(self) -> int:
        return self._state.to_move

    @property
    def to_move(self) -> Player:
        return self.players[self._state.to_move]

    def __repr__(self) -> str:
        """``<Game nim misere: 3 4 5; Ann (human), Hal (perfect bot); move 1, Ann to move>``,
        or once over ``...; over after 7 moves, Hal won>``."""
        from nimlab.core.narrate import player_label

        players = ", ".join(player_label(p) for p in self.players)
        moves = len(self._turns)
        if self.is_over:
            winner = self.winner.name if self.winner is not None else "nobody"
            now = f"over after {count_text(moves)}, {winner} won"
        else:
            now = f"move {moves + 1}, {self.to_move.name} to move"
            if self.round > 1:
                now = f"round {self.round}, {now}"
        return f"<Game {self.ruleset}: {heaps_text(self.board.heaps)}; {players}; {now}>"

    def _repr_html_(self) -> str:
        """The board and whose turn it is (Jupyter shows this)."""
        from nimlab.core.render import game_html

        return game_html(self)

    @property
    def state(self) -> GameState:
        """The current moment of the game as an immutable :class:`GameState` (the session
        keeps one per move, so this is O(1))."""
        return self._state

    @property
    def history(self) -> Sequence[Turn]:
        """The moves played so far, in order (read-only; O(1): len, indexing and slices cost
        what they return)."""
        return self._turns

    def state_before(self, number: int) -> GameState:
        """The moment of the game just before move ``number`` (1-based) was played. O(1)."""
        if not 1 <= number <= len(self._steps):
            raise IndexError(f"the game has moves 1 to {len(self._steps)}, not {number}")
        return self._steps[number - 1].before

    @property
    def legal_moves(self) -> list[Move]:
        """Every legal move now, in the order of the rules' successors (``[]`` once the game is
        over). O(moves)."""
        if self.is_over:
            return []
        return list(self.ruleset.rules.legal_moves(self.board))

    # -- moves --------------------------------------------------------------------------------

    def parse_move(self, text: str) -> Move:
        """Read move text in this game's notation (piles: ``PILE AMOUNT`` or ``b3``, or just the
        amount when there is one pile; rows: ``ROW POSITION COUNT``, or ``POSITION COUNT`` when
        there is one row)."""
        return self.ruleset.rules.parse_move(text, self.board)

    def push(self, move: Move | str, *, claim: str | None = None) -> Turn:
        """Play a move for the player to move. Raises :class:`GameOverError` when the game is
        over and :class:`IllegalMoveError` for an illegal move; nothing changes then."""
        if self.is_over:
            raise GameOverError("the game is over: start a new one")
        if isinstance(move, str):
            move = self.parse_move(move)
        elif not isinstance(move, Move):
            raise InvalidMoveError(
                f"a move is a Move or move text like '2 3', not {type(move).__name__}"
            )
        state = self._state
        after = self.ruleset.rules.play(state.board, move)
        next_state = state.advance(after)
        seat = state.to_move
        player = self.players[seat]
        # Elimination is a thing of games of three or more; with two, the other player just wins.
        eliminated = seat in next_state.eliminated and len(self.players) > 2
        new_round = next_state.round > state.round
        winner = next_state.winner
        turn = Turn(
            number=len(self._steps) + 1,
            round=state.round,
            seat=seat,
            player=player,
            move=move,
            before=state.board,
            after=after,
            claim=claim,
            eliminated=eliminated,
            new_round=new_round,
            winner=None if winner is None else self.players[winner],
        )
        self._steps.append(_Step(turn, state))
        self._turns.append(turn)
        self._state = next_state
        return turn

    def _end_round(self, state: GameState, seat: int) -> GameState:
        """:meth:`GameState.end_round` (kept for callers of the session)."""
        return state.end_round(seat)

    def _settle(self, state: GameState) -> GameState:
        """:meth:`GameState.settled`: resolve rounds whose start is already an end position."""
        return state.settled()

    def bot_choice(self) -> Choice:
        """What the bot to move would play (does not play it). Raises :class:`GameOverError`
        when the game is over and :class:`PlayerError` when a human is to move."""
        if self.is_over:
            raise GameOverError("the game is over: start a new one")
        bot = self.bots.get(self.to_move_seat)
        if bot is None:
            raise PlayerError(f"{self.to_move.name} is not a bot: a human moves by themselves")
        return bot.choose(self.state)

    def bot_choice_is_instant(self) -> bool:
        """Whether :meth:`bot_choice` would answer with no search (see ``Bot.instant``). O(1)."""
        bot = None if self.is_over else self.bots.get(self.to_move_seat)
        return bot is not None and bot.instant(self.state)

    def play_bot(self) -> Turn:
        """Let the bot to move choose and play its move."""
        choice = self.bot_choice()
        return self.push(choice.move, claim=choice.claim)

    def pop(self) -> Turn:
        """Take back the last move (any elimination or win it caused is undone too)."""
        if not self._steps:
            raise GameOverError("there is no move to take back")
        step = self._steps.pop()
        self._turns.pop()
        self._state = step.before
        return step.turn

    def undo_for(self, seat: int) -> list[Turn]:
        """Take back moves until it is ``seat``'s turn before their last move (their last move
        and the bots' replies). Raises :class:`GameOverError` if that player has not moved."""
        if not any(s.turn.seat == seat for s in self._steps):
            raise GameOverError("you have no move to take back")
        undone = []
        while True:
            turn = self.pop()
            undone.append(turn)
            if turn.seat == seat:
                return undone

    # -- records ------------------------------------------------------------------------------

    def record(self) -> GameRecord:
        """The typed record from which :meth:`from_record` replays the game exactly."""
        return GameRecord(
            ruleset=self.ruleset,
            start=self.start,
            players=self.players,
            first=self.first_seat,
            seed=self.seed,
            started_at=self.started_at,
            moves=tuple(self.recorded_moves()),
            winner=self._state.winner,
            eliminated=self._state.eliminated,
            over=self.is_over,
        )

    def recorded_moves(self, since: int = 0) -> list[RecordedMove]:
        """The moves after the first ``since``, as :meth:`record` keeps them (for appending a
        game's new moves to its stored record). O(number of moves after ``since``)."""
        return [
            RecordedMove(s.turn.seat, str(s.turn.move), s.at, s.turn.claim or None)
            for s in self._steps[since:]
        ]

    def to_record(self) -> dict[str, Any]:
        """:meth:`record` as JSON-ready values (format ``nimlab-game/1``)."""
        return self.record().to_json()

    @classmethod
    def from_record(cls, record: GameRecord | Mapping[str, Any]) -> Game:
        """Replay a record (a :class:`GameRecord`, or its JSON); every move is checked again.
        Raises a :class:`~nimlab.core.errors.NimlabError` for a record that does not replay:
        :class:`PositionError`, :class:`PlayerError` or :class:`RulesetError` for a malformed
        one (see :meth:`GameRecord.from_json`), :class:`IllegalMoveError` or
        :class:`InvalidMoveError` for a move that cannot be played."""
        rec = GameRecord.from_json(record)
        game = cls(rec.ruleset, rec.start, rec.players, first=rec.first, seed=rec.seed)
        game.play_recorded(rec.moves)
        game.started_at = rec.started_at or game.started_at
        return game

    def play_recorded(self, moves: Sequence[RecordedMove]) -> None:
        """Play recorded moves (as :meth:`recorded_moves` gives them) after the moves made so
        far, keeping their times and claims; every move is checked as :meth:`push` checks it,
        and its seat must be the one to move. Raises :class:`PositionError`,
        :class:`IllegalMoveError` or :class:`InvalidMoveError` at the first move that does not
        replay (the moves before it stay played). O(moves)."""
        for entry in moves:
            number = len(self._steps) + 1
            if self.is_over:
                raise PositionError(f"the game record has moves after the end (move {number})")
            if entry.seat != self.to_move_seat:
                raise PositionError(
                    f"record says seat {entry.seat} moved, "
                    f"but it was seat {self.to_move_seat}'s turn"
                )
            self.push(self.parse_move(entry.move), claim=entry.claim)
            self._steps[-1].at = entry.at or self._steps[-1].at
