"""Bots: ``random``, ``classic``, ``lookahead:D``, ``perfect``, and an error rate on any of them.

A bot looks at a :class:`~nimlab.core.game.Game` (read-only) and returns a :class:`Choice`: the
move plus what it claims about it. A bot never claims a result it has not proven: beyond its search
budget it says so and plays its best guess.

Specs are strings, as on the command line: ``"perfect"``, ``"lookahead:3"``,
``"classic:error=20"`` (see :func:`parse_bot`).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from nimlab.core.analysis import formula_winning_moves, move_values
from nimlab.core.players import BOT_KINDS, MAX_LOOKAHEAD, BotSpec, parse_bot
from nimlab.core.position import Board, Move, Position
from nimlab.core.ruleset import Ruleset
from nimlab.theory.outcome import Outcome
from nimlab.theory.solver import BudgetExceeded

if TYPE_CHECKING:
    from nimlab.core.game import Game

__all__ = [
    "BOT_KINDS",
    "MAX_LOOKAHEAD",
    "Bot",
    "BotSpec",
    "Choice",
    "make_bot",
    "parse_bot",
]


@dataclass(frozen=True, slots=True)
class Choice:
    """A bot's move and its honest claim about it."""

    move: Move
    claim: str
    proven: bool = False


class Bot(Protocol):
    spec: BotSpec

    def choose(self, game: Game) -> Choice: ...


def make_bot(spec: BotSpec | str, rng: random.Random) -> Bot:
    """A bot for a spec, drawing its random choices from ``rng`` (seedable)."""
    if isinstance(spec, str):
        spec = parse_bot(spec)
    return _Bot(spec, rng)


def _random_move(ruleset: Ruleset, board: Board, rng: random.Random) -> Move:
    """A uniformly random legal move (for Nim without listing all moves)."""
    if isinstance(board, Position) and ruleset.rule.is_nim:
        total = sum(board.heaps)
        pick = rng.randrange(total)
        for i, h in enumerate(board.heaps, 1):
            if pick < h:
                return Move(i, pick + 1)
            pick -= h
    return rng.choice(list(board.legal_moves(ruleset.rule)))


def _random_choice(ruleset: Ruleset, board: Board, rng: random.Random, claim: str) -> Choice:
    return Choice(_random_move(ruleset, board, rng), claim)


class _Bot:
    def __init__(self, spec: BotSpec, rng: random.Random) -> None:
        self.spec = spec
        self.rng = rng

    def choose(self, game: Game) -> Choice:
        ruleset, board = game.ruleset, game.board
        if self.spec.error and self.rng.random() * 100 < self.spec.error:
            return _random_choice(
                ruleset, board, self.rng, f"a random move ({self.spec.error:g}% error rate)"
            )
        kind = self.spec.kind
        if kind == "random":
            return _random_choice(ruleset, board, self.rng, "a random move")
        if kind == "classic":
            return classic_choice(ruleset, board, self.rng)
        if kind == "lookahead":
            return lookahead_choice(ruleset, board, self.spec.depth, self.rng)
        return perfect_choice(game, self.rng)


# -- classic: the textbook strategy --------------------------------------------------------------


def classic_choice(ruleset: Ruleset, board: Board, rng: random.Random) -> Choice:
    """The textbook strategy, ignoring extra end positions and extra players: the nim-sum move
    (with the misère endgame rule) for Nim, the Sprague–Grundy move otherwise, else random."""
    textbook = ruleset.textbook()
    shortcut = formula_winning_moves(textbook, board)
    if shortcut is not None:
        if shortcut:
            return Choice(rng.choice(shortcut), "the textbook nim-sum move")
        return _random_choice(ruleset, board, rng, "a random move (no textbook winning move)")
    evaluator = textbook.evaluator
    if not evaluator.has_formula and sum(board.heaps) > 60:
        return _random_choice(ruleset, board, rng, "a random move (no textbook formula here)")
    winning: list[Move] = []
    seen: dict[tuple[int, ...], bool] = {}
    for move in board.legal_moves(ruleset.rule):
        c = board.play(ruleset.rule, move).canonical
        if c not in seen:
            seen[c] = evaluator.outcome(c) is Outcome.P
        if seen[c]:
            winning.append(move)
    if winning:
        return Choice(rng.choice(winning), "the textbook (Sprague–Grundy) winning move")
    return _random_choice(ruleset, board, rng, "a random move (no textbook winning move)")


# -- lookahead: exact search a few plies deep ----------------------------------------------------


def lookahead_choice(ruleset: Ruleset, board: Board, depth: int, rng: random.Random) -> Choice:
    """Negamax ``depth`` plies deep under the real rules (two players); positions at the horizon
    are judged by the textbook outcome (ignoring extra end positions)."""
    textbook = ruleset.textbook().evaluator

    def horizon(c: tuple[int, ...]) -> bool:
        """True when the player to move at ``c`` is judged to win."""
        o = textbook.outcome(c)
        return o is Outcome.N if o is not None else False

    memo: dict[tuple[tuple[int, ...], int], bool] = {}

    def to_move_wins(c: tuple[int, ...], d: int) -> bool:
        if ruleset.is_terminal(c):
            return ruleset.misere
        if d == 0:
            return horizon(c)
        key = (c, d)
        if key not in memo:
            from nimlab.theory.positions import children

            memo[key] = any(not to_move_wins(k, d - 1) for k in set(children(ruleset.rule, c)))
        return memo[key]

    if board.count_moves(ruleset.rule) > 5000:
        return classic_choice(ruleset, board, rng)
    good: list[Move] = []
    moves = list(board.legal_moves(ruleset.rule))
    for move in moves:
        c = board.play(ruleset.rule, move).canonical
        if not to_move_wins(c, depth - 1):
            good.append(move)
    if good:
        return Choice(rng.choice(good), f"a move that wins within a {depth}-ply look-ahead")
    return Choice(rng.choice(moves), f"a random move (every move loses within {depth} plies)")


# -- perfect -------------------------------------------------------------------------------------


def _moves(n: int) -> str:
    return "1 move" if n == 1 else f"{n} moves"


def perfect_choice(game: Game, rng: random.Random) -> Choice:
    """A provably winning move whenever one exists under the real rules, the fastest one; when
    losing, the move that resists longest; ties broken at random."""
    if len(game.active) > 2:
        return _paranoid_choice(game, rng)
    ruleset, board = game.ruleset, game.board
    values, complete = move_values(ruleset, board)
    if not complete:
        if values:
            best = values[0]
            return Choice(best.move, "the winning move by formula (leaves a P-position)", True)
        if ruleset.evaluator.outcome(board.canonical) is Outcome.P:
            return _random_choice(
                ruleset,
                board,
                rng,
                "a random move: every move loses (P-position), too many to rank",
            )
        return classic_choice(ruleset, board, rng)
    if any(v.outcome is None for v in values):
        return _unproven_guess(ruleset, board, rng)
    scored = [
        (v.winning, None if v.remoteness is None else v.remoteness + 1, v.move) for v in values
    ]
    wins, length, move = _perfect_pick(scored, rng)
    if wins:
        when = f" in {_moves(length)}" if length is not None else ""
        return Choice(move, f"a proven winning move (wins{when})", True)
    return Choice(move, f"every move loses; this one resists longest ({_moves(length or 1)})", True)


def _perfect_pick(
    scored: list[tuple[bool, int | None, Move]], rng: random.Random
) -> tuple[bool, int | None, Move]:
    """A perfect player's choice among ``(wins, moves until the end, move)``: the fastest win,
    else the longest resistance; ties at random. An unknown length counts as the longest."""
    winning = [s for s in scored if s[0]]
    if winning:
        best = min(s[1] if s[1] is not None else 1 << 60 for s in winning)
        pool = [s for s in winning if (s[1] if s[1] is not None else 1 << 60) == best]
    else:
        best = max(s[1] if s[1] is not None else 0 for s in scored)
        pool = [s for s in scored if (s[1] if s[1] is not None else 0) == best]
    return rng.choice(pool)


def _unproven_guess(ruleset: Ruleset, board: Board, rng: random.Random) -> Choice:
    """Beyond the search budget: the classic move, and the honest claim that it is a guess."""
    guess = classic_choice(ruleset, board, rng)
    return Choice(guess.move, "beyond the search budget, so not proven: " + guess.claim, False)


def _paranoid_choice(game: Game, rng: random.Random) -> Choice:
    ruleset, board = game.ruleset, game.board
    solver = game.paranoid_solver()
    hero = game.to_move_seat
    players = game.active
    mover = players.index(hero)
    scored: list[tuple[bool, int | None, Move]] = []
    try:
        seen: dict[tuple[int, ...], tuple[bool, int]] = {}
        for move, after in board.successors(ruleset.rule):
            c = after.canonical
            if c not in seen:
                v = solver.move_value(c, players, mover, hero)
                seen[c] = (v.hero_wins, v.remoteness)
            wins, rem = seen[c]
            scored.append((wins, rem, move))
    except BudgetExceeded:
        return _unproven_guess(ruleset, board, rng)
    wins, _, move = _perfect_pick(scored, rng)
    model = f"paranoid model, {len(players)} players"
    if wins:
        return Choice(move, f"a move that wins against all other players together ({model})", True)
    return Choice(
        move, f"no move wins against all others together; resisting longest ({model})", True
    )
