"""The analysis panel, hints and misère quotients as the web API's models
(:class:`~nimlab.web.schemas_out.AnalysisOut`, :class:`~nimlab.web.schemas_out.HintOut`,
:class:`~nimlab.web.schemas_out.QuotientOut`), for a game in play or a stored game's past
position.

Rendering only: every value comes from the core (the analysis and its explanation in
:mod:`nimlab.core.analysis`, the hint and value history in :mod:`nimlab.core.review`, the
paranoid model's move values for more than two players); a move is drawn as
:func:`nimlab.web.views.move_out` draws it.
"""

from __future__ import annotations

from typing import Any

from nimlab.core.analysis import (
    Analysis,
    MoveValue,
    analyze,
    binary_table,
    count_moves,
    count_text,
    describe_move,
    display_heaps,
    paranoid_move_values,
)
from nimlab.core.game import Game
from nimlab.core.narrate import wins_text
from nimlab.core.position import Rows
from nimlab.core.review import ANALYSIS_MAX_MOVES, hint, paranoid_explanation, value_history
from nimlab.theory.engine import interactive_budget
from nimlab.theory.nim import nim_sum
from nimlab.theory.outcome import Outcome
from nimlab.web.schemas_out import AnalysisOut, HintOut, MoveValueOut, QuotientOut, ValueStepOut
from nimlab.web.views import move_out

__all__ = [
    "QUOTIENT_IMAGES",
    "QUOTIENT_TABLE_ORDER",
    "analysis_after",
    "analysis_out",
    "blank_analysis",
    "hint_out",
    "quotient_out",
]


def blank_analysis(
    move_count: int, *, available: bool = True, note: str = "", pending: bool = False
) -> AnalysisOut:
    """An analysis panel with nothing worked out yet."""
    return AnalysisOut(
        move_count=move_count,
        available=available,
        proven=False,
        pending=pending,
        note=note,
        model="",
        to_move=None,
        outcome=None,
        remoteness=None,
        grundy=None,
        nim_sum=None,
        binary=[],
        explanation=[],
        verdict="",
        moves=[],
        complete=available,
        history=[],
        quotient=None,
    )


def analysis_out(game: Game, history: list[ValueStepOut] | None = None) -> AnalysisOut:
    """The analysis panel for the position in play: two players get the core's analysis; more
    than two get each move's value in the paranoid model (can the mover force a win against
    all the others together?). ``history``: the value history to show (by default the game's,
    worked out here)."""
    ruleset = game.ruleset
    board = game.board
    out = blank_analysis(len(game.history))
    out.model = "two players"
    out.to_move = None if game.is_over else game.to_move_seat
    out.history = history if history is not None else _history(game)
    heaps = tuple(h for h in board.heaps if h)
    if ruleset.game.is_heap_game and ruleset.rule.is_nim:
        out.binary = binary_table(heaps) if heaps else []
        out.nim_sum = nim_sum(heaps)
    if game.is_over:
        assert game.winner is not None
        out.verdict = wins_text(game.winner)
        out.proven = True
        return out
    mover = game.to_move
    active = game.active
    if len(active) > 2:
        out.model = f"paranoid ({len(active)} players)"
        _paranoid_moves(game, out)
        return out
    other = game.players[active[1] if active[0] == game.to_move_seat else active[0]]
    a = analyze(ruleset, board, max_moves=ANALYSIS_MAX_MOVES)
    out.outcome = None if a.outcome is None else str(a.outcome)
    out.remoteness = a.remoteness
    out.grundy = a.grundy
    out.explanation = list(a.explanation)
    if a.quotient is not None:
        out.quotient = quotient_out(a.quotient)
    out.moves = [_move_value(m.to_json()) for m in _every_move(a)]
    out.complete = a.moves_complete
    out.proven = a.outcome is not None
    within = f" within {count_text(a.remoteness)}" if a.remoteness is not None else ""
    if a.outcome is Outcome.N:
        out.verdict = (
            f"N-position (Next player wins): {mover.name} (to move) wins with perfect "
            f"play{within}; winning moves are green."
        )
    elif a.outcome is Outcome.P:
        out.verdict = (
            f"P-position (Previous player wins): every move of {mover.name} loses against "
            f"perfect play; {other.name} wins{within}."
        )
    else:
        out.verdict = "Not proven: this position is beyond the exact search's budget."
    return out


def analysis_after(game: Game, at: int | None) -> AnalysisOut:
    """The analysis panel for the position after move ``at`` (0: the start; ``None`` or the
    move count: the position in play) with the whole game's value history, so a page that looks
    back at a past position shows it everywhere. ``game`` is a copy: it is taken back to move
    ``at``. Cost: the game's value history and one analysis."""
    upto = len(game.history) if at is None else min(at, len(game.history))
    if upto == len(game.history):
        return analysis_out(game)
    history = _history(game)
    while len(game.history) > upto:
        game.pop()
    return analysis_out(game, history)


def _history(game: Game) -> list[ValueStepOut]:
    """The game's value history, as the panel shows it."""
    return [ValueStepOut.model_validate(s, from_attributes=True) for s in value_history(game)]


QUOTIENT_TABLE_ORDER = 64
"""A quotient's multiplication table is sent for at most this many elements."""
QUOTIENT_IMAGES = 120
"""Heap images sent: heaps 0 .. this (the period says how they go on)."""


def quotient_out(q: Any) -> QuotientOut:
    """A misère quotient for the Learn panel (see :class:`QuotientOut`)."""
    data = q.to_json()
    data["heap_images"] = data["heap_images"][: QUOTIENT_IMAGES + 1]
    data["table"] = [list(row) for row in q.table] if q.order <= QUOTIENT_TABLE_ORDER else None
    return QuotientOut.model_validate(data)


def _every_move(a: Analysis) -> list[MoveValue]:
    """The analysis' moves, one per legal move: on rows of stones the core lists one move per
    distinct result, and the board colours every stone, so each legal move gets the value of
    the listed move with the same result."""
    if not isinstance(a.board, Rows) or not a.moves_complete:
        return a.moves  # (piles of the relatives: one listed move per legal move)
    listed = {(m.move.pile, m.result): m for m in a.moves}
    rule = a.ruleset.rule
    out = []
    for move in a.board.legal_moves(rule):
        after = display_heaps(a.board.play(rule, move))  # as the listed results are
        known = listed.get((move.pile, after))
        if known is not None:
            out.append(MoveValue(move, after, known.outcome, known.remoteness))
    return out


def _move_value(raw: dict[str, object]) -> MoveValueOut:
    outcome = raw["outcome"]
    return MoveValueOut.model_validate(
        {
            "pile": raw["pile"],
            "take": raw["take"],
            "at": raw.get("at"),
            "also": raw.get("also", []),
            "result": raw["result"],
            "outcome": outcome,
            "remoteness": raw["remoteness"],
            "winning": raw["winning"] if outcome is not None else None,
        }
    )


def _paranoid_moves(game: Game, out: AnalysisOut) -> None:
    """Each move's paranoid value, within the interactive budget (the server's job budget)."""
    if count_moves(game.ruleset, game.board) > ANALYSIS_MAX_MOVES:
        out.available = out.complete = False
        out.note = "Too many moves to value them all."
        return
    found = paranoid_move_values(
        game.ruleset,
        game.board,
        game.start,
        game.active,
        game.to_move_seat,
        max_moves=ANALYSIS_MAX_MOVES,
        budget=interactive_budget(),
    )
    if found is None:
        out.available = out.complete = False
        out.note = "Not proven: beyond the paranoid search's budget, no move values."
        return
    values, _ = found
    out.moves = [
        MoveValueOut(
            pile=v.move.pile,
            take=v.move.take,
            at=v.move.at,
            result=list(v.result),
            outcome=None,
            remoteness=v.remoteness,
            winning=bool(v.hero_wins),
        )
        for v in values
    ]
    out.proven = True
    name = game.to_move.name
    if any(v.hero_wins for v in values):
        out.verdict = (
            f"{name} can force a win against all the others together (paranoid model); "
            "such moves are green."
        )
    else:
        out.verdict = (
            f"{name} cannot force a win if all the others play together against them "
            "(paranoid model); they might still win if the others do not."
        )
    out.explanation = [paranoid_explanation(len(game.active))]


def hint_out(game: Game, *, pending: bool = False) -> HintOut:
    """The perfect bot's advice for the player to move (:func:`nimlab.core.review.hint`)."""
    advice = hint(game)
    return HintOut(
        move_count=len(game.history),
        move=move_out(advice.move),
        text=describe_move(advice.move, game.board).capitalize(),
        claim=advice.claim,
        proven=advice.proven,
        pending=pending and not advice.proven,
    )
