"""Looking at a game as a coach does: the hint, who was winning after each move (with the
mistakes marked), and the value of each move when more than two players are in.

Every interface (terminal, shell, web) asks these functions; each question is answered in one
place, by the core's analysis (:func:`~nimlab.core.analysis.analyze`, the ruleset's
evaluator), the perfect bot, and the paranoid solver for more than two players.

>>> from nimlab.core.game import Game
>>> game = Game("nim", [1, 2], ["human:Ann", "bot:perfect:Hal"])
>>> turn = game.push("2 2")                  # Ann leaves [1, 0]: a mistake
>>> [(s.number, s.winner, s.mistake) for s in value_history(game)]
[(0, 0, False), (1, 1, True)]
>>> str(hint(game).move)                      # Hal takes the last object
'1 1'
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from nimlab.core.analysis import analyze
from nimlab.core.bots import make_bot
from nimlab.core.game import Game
from nimlab.core.narrate import eliminated_text, turn_text, wins_text
from nimlab.core.players import BotSpec
from nimlab.core.position import Board, Move
from nimlab.core.ruleset import Ruleset
from nimlab.core.words import count_text
from nimlab.theory.budget import Budget, BudgetExceeded
from nimlab.theory.engine import interactive_budget
from nimlab.theory.outcome import Outcome
from nimlab.theory.positions import is_terminal

__all__ = [
    "ANALYSIS_MAX_MOVES",
    "Hint",
    "ParanoidMoveValue",
    "ValueStep",
    "hint",
    "paranoid_explanation",
    "paranoid_move_values",
    "position_value",
    "value_history",
]

ANALYSIS_MAX_MOVES = 2000
"""Positions with more legal moves than this are not valued move by move."""


def paranoid_explanation(players: int) -> str:
    """Why there is no single value with ``players`` > 2, and what the paranoid values mean."""
    return (
        f"With {players} players there is no single value of a position. nimlab uses the "
        "paranoid model: a move is green when the player to move can then win whatever the "
        "others do together; remoteness counts the moves until this round ends."
    )


@dataclass(frozen=True, slots=True)
class Hint:
    """The perfect bot's advice: its move, its honest claim, and (when asked) the
    explanation of the position."""

    move: Move
    claim: str
    proven: bool
    explanation: tuple[str, ...] = ()


def hint(game: Game, *, explain: bool = False, rng: random.Random | None = None) -> Hint:
    """The perfect move for the player to move (the game does not change), the same one the
    explanation names: with two players the analysis' :attr:`~nimlab.core.analysis.Analysis.best`
    move (the first of the fastest wins, else of the longest resistances), otherwise (more
    players, or nothing proven) the perfect bot's choice with its honest claim. With
    ``explain``, the plain-language explanation. Raises
    :class:`~nimlab.core.errors.GameOverError` when the game is over. Cost: one analysis within
    the interactive budget."""
    from nimlab.core.errors import GameOverError

    if game.is_over:
        raise GameOverError("the game is over: there is nothing to hint")
    if len(game.active) == 2:
        a = analyze(game.ruleset, game.board)
        best = a.best
        if best is not None:
            length = None if best.remoteness is None else best.remoteness + 1
            when = "" if length is None else f" in {count_text(length)}"
            if best.winning:
                claim = f"a proven winning move (wins{when})" if when else "a proven winning move"
            else:
                claim = f"every move loses; this one resists longest{when.replace(' in', ':')}"
            return Hint(best.move, claim, True, tuple(a.explanation) if explain else ())
    choice = make_bot(BotSpec("perfect"), rng or random.Random()).choose(game.state)
    explanation: tuple[str, ...] = ()
    if explain:
        if len(game.active) > 2:
            explanation = (
                f"With {len(game.active)} players there is no single value: the hint uses the "
                "paranoid model (can the player to move win against all the others together?).",
            )
        else:
            explanation = tuple(analyze(game.ruleset, game.board).explanation)
    return Hint(choice.move, choice.claim, choice.proven, explanation)


def position_value(ruleset: Ruleset, board: Board) -> tuple[Outcome | None, int | None]:
    """Outcome and remoteness of a position for the player to move (two players); the
    remoteness only where the exact search finds it within its budget."""
    ev = ruleset.solver.evaluate(board.canonical)
    return ev.outcome, ev.remoteness


@dataclass(frozen=True, slots=True)
class ValueStep:
    """Who wins with perfect play after move ``number`` (0 = the start): ``winner`` is a seat,
    or ``None`` when more than two players are left (no single value) or nothing was proven.
    ``mistake``: the move turned a won position into a lost one for its player.

    With more than two players left the step is valued in the paranoid model: ``mover_wins``
    says whether the player to move can force a win against all the others together
    (``winner`` is then that player, else ``None``) and ``remoteness`` counts the moves until
    the round ends; a mistake throws such a forced win away. ``mover_wins`` is ``None`` with
    two players, and when the paranoid search is beyond its budget."""

    number: int
    text: str
    to_move: int | None
    winner: int | None
    remoteness: int | None
    mistake: bool = False
    mover_wins: bool | None = None
    paranoid: bool = False


def _paranoid_value(
    game: Game, board: Board, active: tuple[int, ...], to_move: int, hero: int, budget: Budget
) -> tuple[bool, int] | None:
    """``hero``'s paranoid value of ``board`` with ``to_move`` (a seat in ``active``) to move:
    (can force a win, moves until the round ends), or ``None`` at a terminal position or beyond
    the budget."""
    ruleset = game.ruleset
    c = board.canonical
    if is_terminal(ruleset.rule, c, ruleset.end_positions):
        return None
    solver = ruleset.engine.paranoid(game.start.canonical)
    try:
        v = solver.value(c, active, active.index(to_move), hero, budget)
    except BudgetExceeded:
        return None
    return v.hero_wins, v.remoteness


def value_history(game: Game) -> list[ValueStep]:
    """The value after each move of the game, with the mistakes marked: two players by the
    exact outcome, more by the paranoid model (see :class:`ValueStep`). Cost: one
    :func:`position_value` per move with two players left, one paranoid search (shared, within
    one interactive budget) with more."""
    ruleset = game.ruleset
    players = game.players
    out_seats = set(game.opening_eliminations)
    history = game.history
    budget = interactive_budget()

    def step(number: int, text: str, board: Board, to_move: int | None) -> ValueStep:
        active = [s for s in range(len(players)) if s not in out_seats]
        if to_move is None:
            return ValueStep(number, text, to_move, None, None)
        if len(active) > 2:
            found = _paranoid_value(game, board, tuple(active), to_move, to_move, budget)
            if found is None:
                return ValueStep(number, text, to_move, None, None, paranoid=True)
            wins, rounds_left = found
            return ValueStep(
                number,
                text,
                to_move,
                to_move if wins else None,
                rounds_left,
                mover_wins=wins,
                paranoid=True,
            )
        outcome, remoteness = position_value(ruleset, board)
        if outcome is None:
            return ValueStep(number, text, to_move, None, None)
        other = active[1] if active[0] == to_move else active[0]
        winner = to_move if outcome is Outcome.N else other
        return ValueStep(number, text, to_move, winner, remoteness)

    first = history[0].seat if history else (None if game.is_over else game.to_move_seat)
    steps = [step(0, "Start", game.start, first)]
    for i, turn in enumerate(history):
        text = turn_text(turn)
        if turn.eliminated:
            out_seats.add(turn.seat)
        if turn.winner is not None:
            entry = ValueStep(
                turn.number,
                f"{text}: {wins_text(turn.winner)}",
                None,
                players.index(turn.winner),
                0,
            )
        else:
            nxt = history[i + 1].seat if i + 1 < len(history) else game.to_move_seat
            board = game.start if turn.new_round else turn.after
            if turn.eliminated:
                text += f": {eliminated_text(turn.player)}"
            entry = step(turn.number, text, board, nxt)
        prev = steps[-1]
        if prev.paranoid:
            mistake = False
            if prev.mover_wins and prev.to_move == turn.seat and turn.winner is None:
                if not turn.eliminated and not turn.new_round and entry.to_move is not None:
                    active = tuple(s for s in range(len(players)) if s not in out_seats)
                    if turn.seat in active:
                        after = _paranoid_value(
                            game, turn.after, active, entry.to_move, turn.seat, budget
                        )
                        mistake = after is not None and not after[0]
                else:
                    mistake = turn.eliminated
        else:
            mistake = (
                prev.winner == turn.seat
                and entry.winner is not None
                and entry.winner != turn.seat
                and not turn.new_round
            )
        steps.append(
            ValueStep(
                entry.number,
                entry.text,
                entry.to_move,
                entry.winner,
                entry.remoteness,
                mistake,
                entry.mover_wins,
                entry.paranoid,
            )
        )
    return steps


@dataclass(frozen=True, slots=True)
class ParanoidMoveValue:
    """A move's value for the player to move among more than two (paranoid model): ``wins``
    when the mover then wins whatever the others do together; ``remoteness`` counts the moves
    until the round ends."""

    move: Move
    result: tuple[int, ...]
    wins: bool
    remoteness: int | None


def paranoid_move_values(
    game: Game, max_moves: int = ANALYSIS_MAX_MOVES
) -> list[ParanoidMoveValue] | None:
    """Each legal move's value in the paranoid model (one per distinct pile and result), or
    ``None`` when the position has more than ``max_moves`` legal moves. Raises
    :class:`~nimlab.theory.budget.BudgetExceeded` beyond the paranoid search's budget."""
    from nimlab.core.analysis import count_moves
    from nimlab.core.analysis import paranoid_move_values as values_of
    from nimlab.theory.budget import BudgetExceeded

    if count_moves(game.ruleset, game.board) > max_moves:
        return None
    found = values_of(
        game.ruleset, game.board, game.start, game.active, game.to_move_seat, max_moves=None
    )
    if found is None:
        raise BudgetExceeded(None, "time")
    return [ParanoidMoveValue(v.move, v.result, bool(v.hero_wins), v.remoteness) for v in found[0]]
