"""Core objects as the web API's JSON (the shapes are the models in :mod:`nimlab.web.schemas`).

Rendering only: every value comes from the core (boards, turns, narration, analysis, bots).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from nimlab.core.analysis import Analysis, MoveValue, analyze, binary_table, describe_move
from nimlab.core.bots import BotSpec, make_bot
from nimlab.core.game import Game, Player, Turn
from nimlab.core.narrate import (
    YOU,
    eliminated_text,
    player_label,
    round_text,
    turn_text,
    wins_text,
)
from nimlab.core.position import Board, Move, Position, Rows
from nimlab.core.ruleset import Ruleset
from nimlab.theory.nim import nim_sum
from nimlab.theory.outcome import Outcome
from nimlab.theory.solver import BudgetExceeded

__all__ = [
    "DRAW_LIMIT",
    "analysis_json",
    "board_json",
    "game_state",
    "hint_json",
    "move_json",
    "replay_frames",
]

DRAW_LIMIT = 60
"""Piles up to this size are drawn match by match (and get their list of allowed takes); larger
ones are drawn compactly as a number."""

ANALYSIS_MAX_MOVES = 2000


def board_json(board: Board) -> dict[str, Any]:
    """A board as :class:`~nimlab.web.schemas.BoardOut`."""
    if isinstance(board, Rows):
        return {
            "kind": "rows",
            "piles": [],
            "rows": [list(r) for r in board.rows],
            "heaps": list(board.heaps),
        }
    return {"kind": "piles", "piles": list(board.heaps), "rows": [], "heaps": list(board.heaps)}


def move_json(move: Move) -> dict[str, Any]:
    return {"pile": move.pile, "take": move.take, "at": move.at}


def _turn_json(turn: Turn, players: Sequence[Player]) -> dict[str, Any]:
    return {
        "number": turn.number,
        "round": turn.round,
        "seat": turn.seat,
        "name": turn.player.name,
        "text": turn_text(turn),
        "move": move_json(turn.move),
        "before": board_json(turn.before),
        "after": board_json(turn.after),
        "claim": turn.claim,
        "eliminated": turn.eliminated,
        "new_round": turn.new_round,
        "winner": None if turn.winner is None else players.index(turn.winner),
    }


def turn_prompt(player: Player) -> str:
    """Seed 000's ``"Ann's turn!"`` (``"Your turn!"`` for the default human, You)."""
    return "Your turn!" if player.name == YOU else f"{player.name}'s turn!"


def _names(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _turns_json(game: Game) -> list[dict[str, Any]]:
    """Every turn with what it caused, in the seeds' words (eliminations, rounds, the winner)."""
    out_seats = set(game.opening_eliminations)
    turns = []
    for turn in game.history:
        entry = _turn_json(turn, game.players)
        messages = []
        if turn.eliminated:
            out_seats.add(turn.seat)
            messages.append(eliminated_text(turn.player))
        if turn.new_round and turn.winner is None:
            names = [p.name for s, p in enumerate(game.players) if s not in out_seats]
            messages.append(
                f"Round {turn.round + 1}: {_names(names)} play on from the start position."
            )
        if turn.winner is not None:
            messages.append(wins_text(turn.winner))
        entry["messages"] = messages
        turns.append(entry)
    return turns


def _ends(ruleset: Ruleset) -> list[list[int]]:
    return [list(e) for e in sorted(ruleset.end_positions, key=lambda e: (len(e), e))]


def game_state(
    key: str,
    game: Game,
    usernames: Sequence[str | None],
    *,
    thinking: bool = False,
    saved_as: int | None = None,
) -> dict[str, Any]:
    """The state everyone sees (:class:`~nimlab.web.schemas.GameStateOut`)."""
    rule = game.ruleset.rule
    board = game.board
    turns = _turns_json(game)
    takes: list[list[int] | None] = []
    if isinstance(board, Position):
        takes = [list(rule.takes(h)) if h <= DRAW_LIMIT else None for h in board.heaps]
    else:
        takes = [None] * board.pile_count
    if game.is_over:
        assert game.winner is not None
        status = wins_text(game.winner)
    elif thinking:
        status = f"{game.to_move.name} is thinking…"
    else:
        status = turn_prompt(game.to_move)
    opening: list[str] = []
    if game.opening_eliminations or (game.is_over and not game.history):
        opening.append("The start position is already an end position.")
        opening += [eliminated_text(game.players[s]) for s in game.opening_eliminations]
        if game.round > 1 and not game.is_over and not game.history:
            opening.append(round_text(game))
    return {
        "id": key,
        "ruleset": str(game.ruleset),
        "description": game.ruleset.describe(),
        "title": game.ruleset.game.title,
        "rows": isinstance(board, Rows),
        "misere": game.ruleset.misere,
        "end_positions": _ends(game.ruleset),
        "start": board_json(game.start),
        "board": board_json(board),
        "players": [
            {
                "seat": seat,
                "name": p.name,
                "label": player_label(p),
                "bot": None if p.bot is None else str(p.bot),
                "username": usernames[seat] if seat < len(usernames) else None,
                "active": seat in game.active,
                "eliminated": seat not in game.active,
            }
            for seat, p in enumerate(game.players)
        ],
        "first": game.first_seat,
        "to_move": None if game.is_over else game.to_move_seat,
        "round": game.round,
        "over": game.is_over,
        "winner": game.winner_seat,
        "move_count": len(turns),
        "turns": turns,
        "takes": takes,
        "max_take": rule.max_take,
        "thinking": thinking and not game.is_over,
        "status": status,
        "opening": opening,
        "saved_as": saved_as,
    }


# -- analysis -----------------------------------------------------------------------------------


def _value(ruleset: Ruleset, board: Board) -> tuple[Outcome | None, int | None]:
    """Outcome and remoteness of a position for the player to move (remoteness only where the
    core finds it cheaply enough)."""
    c = board.canonical
    ev = ruleset.engine.evaluate(c)
    return ev.outcome, ev.remoteness


def _value_history(game: Game) -> list[dict[str, Any]]:
    """Who was winning (perfect play, two players) after each move; ``winner`` is ``None``
    where more than two players are left (there is no single value) or nothing was proven."""
    ruleset = game.ruleset
    players = game.players
    out_seats = set(game.opening_eliminations)
    history = game.history
    steps: list[dict[str, Any]] = []

    def step(number: int, text: str, board: Board, to_move: int | None) -> dict[str, Any]:
        active = [s for s in range(len(players)) if s not in out_seats]
        entry: dict[str, Any] = {
            "number": number,
            "text": text,
            "to_move": to_move,
            "winner": None,
            "remoteness": None,
            "mistake": False,
        }
        if to_move is None or len(active) != 2:
            if to_move is not None:
                entry["text"] += f" ({len(active)} players: no single value)"
            return entry
        outcome, remoteness = _value(ruleset, board)
        if outcome is not None:
            other = active[1] if active[0] == to_move else active[0]
            entry["winner"] = to_move if outcome is Outcome.N else other
            entry["remoteness"] = remoteness
        return entry

    first = history[0].seat if history else (None if game.is_over else game.to_move_seat)
    steps.append(step(0, "Start", game.start, first))
    for i, turn in enumerate(history):
        text = turn_text(turn)
        if turn.eliminated:
            out_seats.add(turn.seat)
        if turn.winner is not None:
            entry = {
                "number": turn.number,
                "text": f"{text}: {wins_text(turn.winner)}",
                "to_move": None,
                "winner": players.index(turn.winner),
                "remoteness": 0,
                "mistake": False,
            }
        else:
            nxt = history[i + 1].seat if i + 1 < len(history) else game.to_move_seat
            board = game.start if turn.new_round else turn.after
            if turn.eliminated:
                text += f": {eliminated_text(turn.player)}"
            entry = step(turn.number, text, board, nxt)
        before = steps[-1]["winner"]
        entry["mistake"] = (
            before == turn.seat
            and entry["winner"] is not None
            and entry["winner"] != turn.seat
            and not turn.new_round
        )
        steps.append(entry)
    return steps


def blank_analysis(move_count: int, *, available: bool = True, note: str = "") -> dict[str, Any]:
    """An analysis panel with nothing worked out yet (the shape of
    :class:`~nimlab.web.schemas.AnalysisOut`)."""
    return {
        "move_count": move_count,
        "available": available,
        "note": note,
        "model": "",
        "to_move": None,
        "outcome": None,
        "remoteness": None,
        "grundy": None,
        "nim_sum": None,
        "binary": [],
        "explanation": [],
        "verdict": "",
        "moves": [],
        "complete": available,
        "history": [],
    }


def analysis_json(game: Game) -> dict[str, Any]:
    """The analysis panel (:class:`~nimlab.web.schemas.AnalysisOut`) for the position in play:
    two players get the core's analysis; more than two get each move's value in the paranoid
    model (can the mover force a win against all the others together?)."""
    ruleset = game.ruleset
    board = game.board
    out = blank_analysis(len(game.history))
    out.update(
        model="two players",
        to_move=None if game.is_over else game.to_move_seat,
        history=_value_history(game),
    )
    heaps = tuple(h for h in board.heaps if h)
    if ruleset.rule.is_nim:
        out["binary"] = binary_table(heaps) if heaps else []
        out["nim_sum"] = nim_sum(heaps)
    if game.is_over:
        assert game.winner is not None
        out["verdict"] = wins_text(game.winner)
        return out
    mover = game.to_move
    active = game.active
    if len(active) > 2:
        out["model"] = f"paranoid ({len(active)} players)"
        _paranoid_moves(game, out)
        return out
    other = game.players[active[1] if active[0] == game.to_move_seat else active[0]]
    a = analyze(ruleset, board, max_moves=ANALYSIS_MAX_MOVES)
    out.update(
        outcome=None if a.outcome is None else str(a.outcome),
        remoteness=a.remoteness,
        grundy=a.grundy,
        explanation=list(a.explanation),
        moves=[_move_value(m.to_json()) for m in _every_move(a)],
        complete=a.moves_complete,
    )
    within = f" within {a.remoteness} moves" if a.remoteness is not None else ""
    if a.outcome is Outcome.N:
        out["verdict"] = (
            f"N-position: {mover.name} (to move) wins with perfect play{within}; "
            "winning moves are green."
        )
    elif a.outcome is Outcome.P:
        out["verdict"] = (
            f"P-position: every move of {mover.name} loses against perfect play; "
            f"{other.name} wins{within}."
        )
    else:
        out["verdict"] = "Not proven: this position is beyond the exact search's budget."
    return out


def _every_move(a: Analysis) -> list[MoveValue]:
    """The analysis' moves, one per legal move: on rows of stones the core lists one move per
    distinct result, and the board colours every stone, so each legal move gets the value of
    the listed move with the same result."""
    if not isinstance(a.board, Rows) or not a.moves_complete:
        return a.moves
    listed = {(m.move.pile, m.result): m for m in a.moves}
    rule = a.ruleset.rule
    out = []
    for move in a.board.legal_moves(rule):
        after = a.board.play(rule, move).heaps
        known = listed.get((move.pile, after))
        if known is not None:
            out.append(MoveValue(move, after, known.outcome, known.remoteness))
    return out


def _move_value(raw: dict[str, Any]) -> dict[str, Any]:
    return {
        "pile": raw["pile"],
        "take": raw["take"],
        "at": raw.get("at"),
        "result": raw["result"],
        "outcome": raw["outcome"],
        "remoteness": raw["remoteness"],
        "winning": raw["winning"] if raw["outcome"] is not None else None,
    }


def _paranoid_moves(game: Game, out: dict[str, Any]) -> None:
    ruleset, board = game.ruleset, game.board
    players = game.active
    hero = game.to_move_seat
    mover = players.index(hero)
    if board.count_moves(ruleset.rule) > ANALYSIS_MAX_MOVES:
        out.update(available=False, complete=False, note="Too many moves to value them all.")
        return
    solver = game.paranoid_solver()
    moves = []
    seen: set[tuple[int, tuple[int, ...]]] = set()
    try:
        for move in board.legal_moves(ruleset.rule):
            after = board.play(ruleset.rule, move)
            if (move.pile, after.heaps) in seen:
                continue
            seen.add((move.pile, after.heaps))
            value = solver.move_value(after.canonical, players, mover, hero)
            moves.append(
                {
                    **move_json(move),
                    "result": list(after.heaps),
                    "outcome": None,
                    "remoteness": value.remoteness,
                    "winning": value.hero_wins,
                }
            )
    except BudgetExceeded:
        out.update(
            available=False,
            complete=False,
            note="Beyond the paranoid search's budget: no move values.",
        )
        return
    out["moves"] = moves
    name = game.to_move.name
    if any(m["winning"] for m in moves):
        out["verdict"] = (
            f"{name} can force a win against all the others together (paranoid model); "
            "such moves are green."
        )
    else:
        out["verdict"] = (
            f"{name} cannot force a win if all the others play together against them "
            "(paranoid model); they might still win if the others do not."
        )
    out["explanation"] = [
        f"With {len(players)} players there is no single value of a position. nimlab uses the "
        "paranoid model: a move is green when the player to move can then win whatever the "
        "others do together; remoteness counts the moves until this round ends."
    ]


def hint_json(game: Game) -> dict[str, Any]:
    """The perfect bot's advice for the player to move (:class:`~nimlab.web.schemas.HintOut`)."""
    choice = make_bot(BotSpec("perfect"), random.Random()).choose(game.state)
    return {
        "move": move_json(choice.move),
        "text": describe_move(choice.move, game.board).capitalize(),
        "claim": choice.claim,
    }


def replay_frames(game: Game) -> list[dict[str, Any]]:
    """A finished game's frames for replay (:class:`~nimlab.web.schemas.ReplayFrame`)."""
    start = board_json(game.start)
    frames: list[dict[str, Any]] = [
        {"number": 0, "text": "Start", "before": start, "board": start, "taken": None, "note": ""}
    ]
    for turn in game.history:
        notes = []
        if turn.eliminated:
            notes.append(eliminated_text(turn.player))
        if turn.winner is not None:
            notes.append(wins_text(turn.winner))
        elif turn.new_round:
            notes.append("A new round starts from the start position.")
        frames.append(
            {
                "number": turn.number,
                "text": turn_text(turn),
                "before": board_json(turn.before),
                "board": board_json(turn.after),
                "taken": move_json(turn.move),
                "note": " ".join(notes),
            }
        )
    return frames
