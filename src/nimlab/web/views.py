"""Core objects as the web API's models (:mod:`nimlab.web.schemas_out`): boards, moves, turns,
a game's state (and its JSON, written without building the models), a new game's answer and a
finished game's replay frames. The analysis panel and hints are :mod:`nimlab.web.analysis_views`.

Rendering only: every value comes from the core (boards, turns, narration in
:mod:`nimlab.core.narrate`, the legal moves of the rules).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from pydantic_core import PydanticSerializationError, to_json

from nimlab.core.analysis import count_moves
from nimlab.core.game import Game, Player, Turn
from nimlab.core.narrate import (
    YOU,
    eliminated_text,
    player_label,
    round_text,
    turn_messages,
    turn_text,
    wins_text,
)
from nimlab.core.position import Board, Move, Piles, Position, Rows
from nimlab.core.ruleset import Ruleset
from nimlab.theory.octal import TakeAndBreak
from nimlab.web.schemas_out import (
    LEGAL_LIMIT,
    BoardOut,
    GameStateOut,
    MoveOut,
    ReplayFrame,
    TurnOut,
)

__all__ = [
    "DRAW_LIMIT",
    "board_out",
    "created_json",
    "legal_moves_json",
    "move_out",
    "moves_for_json",
    "replay_frames",
    "state_data",
    "state_json",
    "status_text",
    "turns_out",
]

DRAW_LIMIT = 60
"""Piles up to this size are drawn match by match (and get their list of allowed takes); larger
ones are drawn compactly as a number."""


@lru_cache(maxsize=64)
def _takes_table(rule: TakeAndBreak) -> tuple[tuple[int, ...], ...]:
    """For each heap size up to :data:`DRAW_LIMIT`, the amounts one may take from a pile of
    that size: remembered per rule (at most 64 rules; 1,830 numbers for Nim's)."""
    return tuple(tuple(rule.takes(heap)) for heap in range(DRAW_LIMIT + 1))


def _board_data(board: Board) -> dict[str, Any]:
    heaps = list(board.heaps)
    if isinstance(board, Rows):
        return {"kind": "rows", "piles": [], "rows": [list(r) for r in board.rows], "heaps": heaps}
    return {"kind": "piles", "piles": heaps, "rows": [], "heaps": heaps}


def board_out(board: Board) -> BoardOut:
    """A board as the API shows it."""
    return BoardOut.model_validate(_board_data(board))


@lru_cache(maxsize=4096)
def move_out(move: Move) -> MoveOut:
    """A move as the API shows it: one (frozen) model per move, shared by every answer that shows
    it (every answer to a move lists the legal moves: made and validated once, not each time)."""
    return MoveOut(
        pile=move.pile, take=move.take, at=move.at, also=[list(p) for p in move.also], words=None
    )


def _move_data(move: Move) -> dict[str, Any]:
    return {
        "pile": move.pile,
        "take": move.take,
        "at": move.at,
        "also": [list(p) for p in move.also],
        "words": None,
    }


def _turn_data(turn: Turn, players: Sequence[Player], messages: list[str]) -> dict[str, Any]:
    """A turn as :class:`TurnOut` holds it, in plain data (validated once with its state)."""
    move = turn.move
    return {
        "number": turn.number,
        "round": turn.round,
        "seat": turn.seat,
        "name": turn.player.name,
        "text": turn_text(turn),
        "move": _move_data(move),
        "before": _board_data(turn.before),
        "after": _board_data(turn.after),
        "claim": turn.claim,
        "eliminated": turn.eliminated,
        "new_round": turn.new_round,
        "winner": None if turn.winner is None else players.index(turn.winner),
        "messages": messages,
    }


def turn_prompt(player: Player) -> str:
    """Seed 000's ``"Ann's turn!"`` (``"Your turn!"`` for the default human, You)."""
    return "Your turn!" if player.name == YOU else f"{player.name}'s turn!"


def _ends(ruleset: Ruleset) -> list[list[int]]:
    return [list(e) for e in sorted(ruleset.end_positions, key=lambda e: (len(e), e))]


def status_text(game: Game, *, thinking: bool = False, problem: str | None = None) -> str:
    """The one-line status of a game ("Ann's turn!", "Hal is thinking…", "Ann wins!"). O(1)."""
    if game.is_over:
        assert game.winner is not None
        return wins_text(game.winner)
    if problem:
        return f"The game cannot go on: {problem}"
    if thinking:
        return f"{game.to_move.name} is thinking…"
    return turn_prompt(game.to_move)


def _turns_data(game: Game, since: int, limit: int) -> list[dict[str, Any]]:
    history = game.history
    since = max(0, min(since, len(history)))
    end = min(len(history), since + max(0, limit))
    if since >= end:
        return []
    messages = turn_messages(game, since, end)
    return [_turn_data(history[i], game.players, messages[i - since]) for i in range(since, end)]


def turns_out(game: Game, since: int, limit: int) -> list[TurnOut]:
    """Turns ``since + 1`` to ``since + limit`` of the game (at most ``limit``). The narration
    of a turn depends on the turns before it only through the game's rounds, so only the turns
    sent are rendered. O(limit × piles)."""
    return [TurnOut.model_validate(t) for t in _turns_data(game, since, limit)]


def state_data(
    key: str,
    game: Game,
    usernames: Sequence[str | None],
    *,
    thinking: bool = False,
    saved_as: int | None = None,
    problem: str | None = None,
    since: int | None = None,
    limit: int = 100,
    legal: list[MoveOut] | None,
) -> dict[str, Any]:
    """A game's state as plain data, in :class:`GameStateOut`'s order (what the model
    validates, and what :func:`state_json` writes without validating); ``legal`` is
    :func:`legal_moves_out`'s list (used for ``takes`` on piles with their own limits, and as
    ``moves``; :func:`state_json` writes the moves itself). O(piles + limit × piles)."""
    ruleset = game.ruleset
    board = game.board
    count = len(game.history)
    first = max(0, count - limit) if since is None else max(0, min(since, count))
    turns = _turns_data(game, first, limit)
    takes: list[list[int] | None] = []
    digits: list[int] = []
    max_take: int | None = None
    if isinstance(board, Position):
        rule = ruleset.rule
        table = _takes_table(rule)
        takes = [list(table[h]) if h <= DRAW_LIMIT else None for h in board.heaps]
        max_take = rule.max_take
    elif isinstance(board, Piles):
        takes = [
            list(range(1, min(h, board.limit or h) + 1)) if h <= DRAW_LIMIT else None
            for h in board.heaps
        ]
        if legal is not None:  # exactly the amounts of the moves on one pile
            single: list[set[int]] = [set() for _ in board.heaps]
            for m in legal:
                if not m.also:
                    single[m.pile - 1].add(m.take)
            takes = [
                sorted(t) if h <= DRAW_LIMIT else None
                for t, h in zip(single, board.heaps, strict=True)
            ]
        max_take = board.limit
    else:
        takes = [None] * board.pile_count
        longest = max((h for h in board.heaps), default=0)
        if ruleset.game.is_heap_game:
            digits = [ruleset.rule.digit(k) for k in range(longest + 1)]
    status = status_text(game, thinking=thinking, problem=problem)
    opening: list[str] = []
    if game.opening_eliminations or (game.is_over and not game.history):
        opening.append("The start position is already an end position.")
        opening += [eliminated_text(game.players[s]) for s in game.opening_eliminations]
        if game.round > 1 and not game.is_over and not game.history:
            opening.append(round_text(game))
    active = game.active
    return {
        "id": key,
        "ruleset": str(ruleset),
        "description": ruleset.describe(),
        "title": ruleset.game.title,
        "rows": isinstance(board, Rows),
        "misere": ruleset.misere,
        "end_positions": _ends(ruleset),
        "start": _board_data(game.start),
        "board": _board_data(board),
        "players": [
            {
                "seat": seat,
                "name": p.name,
                "label": player_label(p),
                "bot": None if p.bot is None else str(p.bot),
                "username": usernames[seat] if seat < len(usernames) else None,
                "active": seat in active,
                "eliminated": seat not in active,
            }
            for seat, p in enumerate(game.players)
        ],
        "first": game.first_seat,
        "to_move": None if game.is_over else game.to_move_seat,
        "round": game.round,
        "over": game.is_over,
        "winner": game.winner_seat,
        "move_count": count,
        "turns_from": first,
        "turns": turns,
        "takes": takes,
        "max_take": max_take,
        "thinking": thinking and not game.is_over,
        "status": status,
        "opening": opening,
        "saved_as": saved_as,
        "problem": problem,
        "ended": None,
        "takebacks": 0,
        "analysis_allowed": True,
        "digits": digits,
        "words": list(ruleset.rules.piece_words),
        "moves": legal,
        "move_shape": ruleset.rules.move_shape,
        "limit": board.limit if isinstance(board, Piles) else None,
    }


_LAST = ("moves", "move_shape", "limit")
"""The state's last fields, in order (written after the others by :func:`state_json`)."""


def state_json(data: dict[str, Any], game: Game) -> bytes:
    """``GameStateOut.model_validate(data).model_dump_json()`` for :func:`state_data`'s
    ``data`` of ``game`` (with any lifecycle fields changed), written by pydantic's own JSON
    writer without building the model: the server made every value itself, from a game it
    checked move by move. The legal moves are written from ``game`` (``data["moves"]`` is
    read only when the board is not a :class:`Position`, see :func:`moves_for_json`). The same
    bytes (``tests/test_web_views.py``); whatever the writer does not take is written by the
    model. O(the answer's length)."""
    try:
        head = {k: v for k, v in data.items() if k not in _LAST}
        return b"".join(
            (
                to_json(head)[:-1],
                b',"moves":',
                legal_moves_json(game, data["moves"]),
                b',"move_shape":',
                to_json(data["move_shape"]),
                b',"limit":',
                to_json(data["limit"]),
                b"}",
            )
        )
    except (PydanticSerializationError, ValueError, TypeError):
        data = {**data, "moves": legal_moves_out(game)}
        return GameStateOut.model_validate(data).model_dump_json().encode()


def created_json(
    state: bytes, seats: list[dict[str, Any]], watch: str, owner_token: str | None
) -> bytes:
    """``CreatedOut(state=..., seats=..., watch=watch, owner_token=owner_token)``'s
    ``model_dump_json()`` for the game's state as :func:`state_json` writes it and its seats'
    links as :class:`SeatLinkOut`'s fields (in its order), written without the models (the
    same bytes: ``tests/test_web_views.py``)."""
    return b"".join(
        (
            b'{"state":',
            state,
            b',"seats":',
            to_json(seats),
            b',"watch":',
            to_json(watch),
            b',"owner_token":',
            to_json(owner_token),
            b"}",
        )
    )


@lru_cache(maxsize=4096)
def _pile_move_out(pile: int, take: int) -> MoveOut:
    """:func:`move_out` of taking ``take`` from pile ``pile``, shared in the same way."""
    return move_out(Move(pile, take))


@lru_cache(maxsize=2048)
def _pile_moves_json(rule: TakeAndBreak, pile: int, heap: int) -> bytes:
    """The JSON of :func:`_pile_move_out` for every legal move on pile ``pile`` of ``heap``
    objects (``heap <= DRAW_LIMIT``), comma-separated, remembered per (rule, pile, heap): at
    most 2,048 of a few kilobytes."""
    moves = [_pile_move_out(pile, take) for take in _takes_table(rule)[heap]]
    return b",".join([m.model_dump_json().encode() for m in moves])


def moves_for_json(game: Game) -> list[MoveOut] | None:
    """What :func:`state_data` takes as ``legal`` when its data is for :func:`state_json`:
    :func:`legal_moves_out`, but ``None`` on a :class:`Position` (whose moves
    :func:`state_json` writes straight from the board, and whose ``takes`` do not need them)."""
    return None if isinstance(game.board, Position) else legal_moves_out(game)


def legal_moves_json(game: Game, legal: list[MoveOut] | None = None) -> bytes:
    """:func:`legal_moves_out` of the game as its models write it in JSON (a list, or
    ``null``); ``legal`` is that list when the caller has it (it is computed otherwise, except
    on a :class:`Position`, whose moves are written straight from the board). O(moves)."""
    board = game.board
    if isinstance(board, Position) and not game.is_over:
        if count_moves(game.ruleset, board) > LEGAL_LIMIT:
            return b"null"
        rule = game.ruleset.rule
        piles = [
            _pile_moves_json(rule, pile, heap)
            if heap <= DRAW_LIMIT
            else b",".join([to_json(_pile_move_out(pile, take)) for take in rule.takes(heap)])
            for pile, heap in enumerate(board.heaps, 1)
        ]
        return b"[" + b",".join([p for p in piles if p]) + b"]"
    if legal is None:
        legal = legal_moves_out(game)
    if legal is None:
        return b"null"
    return b"[" + b",".join([to_json(m) for m in legal]) + b"]"


def legal_moves_out(game: Game) -> list[MoveOut] | None:
    """Every legal move of the game now, when there are at most :data:`LEGAL_LIMIT` (``None``
    beyond, and ``[]`` once the game is over): what a page may offer, so that no page needs a
    copy of a rule. O(moves)."""
    if game.is_over:
        return []
    if count_moves(game.ruleset, game.board) > LEGAL_LIMIT:
        return None
    rules, board = game.ruleset.rules, game.board
    if isinstance(board, Position):  # the common case, without a Move per move (5 times faster)
        return [_pile_move_out(pile, take) for pile, take in board.takes(game.ruleset.rule)]
    if rules.own_words:
        return [
            move_out(move).model_copy(update={"words": rules.move_phrase(move, board)})
            for move in game.legal_moves
        ]
    return [move_out(move) for move in game.legal_moves]


def replay_frames(game: Game) -> list[ReplayFrame]:
    """A finished game's frames for replay."""
    start = board_out(game.start)
    frames = [ReplayFrame(number=0, text="Start", before=start, board=start, taken=None, note="")]
    for turn in game.history:
        notes = []
        if turn.eliminated:
            notes.append(eliminated_text(turn.player))
        if turn.winner is not None:
            notes.append(wins_text(turn.winner))
        elif turn.new_round:
            notes.append("A new round starts from the start position.")
        frames.append(
            ReplayFrame(
                number=turn.number,
                text=turn_text(turn),
                before=board_out(turn.before),
                board=board_out(turn.after),
                taken=move_out(turn.move),
                note=" ".join(notes),
            )
        )
    return frames
