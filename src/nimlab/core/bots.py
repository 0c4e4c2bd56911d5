"""Bots: ``random``, ``classic``, ``lookahead:D``, ``perfect``, and an error rate on any of them.

A bot looks at a :class:`~nimlab.core.state.GameState` and returns a :class:`Choice`: the move
plus what it claims about it. Every value comes from the ruleset's engine, within the interactive
budget (about 2 s). A bot never claims a result it has not proven: beyond its search
budget it says so and plays its best guess.

Specs are strings, as on the command line: ``"perfect"``, ``"lookahead:3"``,
``"classic:error=20"`` (see :func:`parse_bot`).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import reduce
from itertools import islice
from operator import xor
from typing import TYPE_CHECKING, Protocol

from nimlab.core.analysis import board_move, count_moves, paranoid_move_values
from nimlab.core.arguments import check_count, check_seconds
from nimlab.core.errors import ArgumentError, PlayerError
from nimlab.core.players import BOT_KINDS, MAX_LOOKAHEAD, BotSpec, parse_bot
from nimlab.core.position import Board, Move, Piles, Position, Rows
from nimlab.core.ruleset import Ruleset
from nimlab.theory.budget import Budget, BudgetExceeded, budget_scope
from nimlab.theory.engine import CanonMove, Engine, apply_move, interactive_budget
from nimlab.theory.outcome import Outcome
from nimlab.theory.positions import Canon, children

if TYPE_CHECKING:
    from nimlab.core.state import GameState

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

    def choose(self, state: GameState) -> Choice: ...

    def instant(self, state: GameState) -> bool: ...


def make_bot(
    spec: BotSpec | str,
    rng: random.Random | None = None,
    *,
    seed: int | None = None,
    seconds: float | None = None,
) -> Bot:
    """A bot for a spec (``"perfect"``, ``"lookahead:3"``, ``"bot:classic:error=20"``),
    drawing its random choices from ``rng``, or from a fresh ``random.Random(seed)`` (``seed``
    ``None``: unseeded). ``seconds`` bounds each choice's work (default: the interactive
    budget, about 2 s; see :func:`~nimlab.core.analysis.seconds_budget`): beyond it the bot
    says its move is not proven. Raises :class:`~nimlab.core.errors.PlayerError` for a spec
    that cannot be read and :class:`~nimlab.core.errors.ArgumentError` for a bad ``seconds``
    or ``seed``, or both ``rng`` and ``seed``."""
    if isinstance(spec, str):
        spec = parse_bot(spec.strip().removeprefix("bot:"))
    elif not isinstance(spec, BotSpec):
        raise PlayerError(
            f"a bot is a BotSpec or text like 'perfect' or 'lookahead:3', not {type(spec).__name__}"
        )
    if rng is not None and seed is not None:
        raise ArgumentError("give rng or seed, not both")
    if rng is None:
        if seed is not None:
            check_count(seed, "seed", -(1 << 63), 1 << 63)
        rng = random.Random(seed)
    elif not isinstance(rng, random.Random):
        raise ArgumentError(f"rng is a random.Random, not {type(rng).__name__}")
    return _Bot(spec, rng, None if seconds is None else check_seconds(seconds))


def _random_move(ruleset: Ruleset, board: Board, rng: random.Random) -> Move:
    """A uniformly random legal move, without listing every move of the board: a pile is drawn
    with weight its number of moves, then one of its moves. O(piles + moves of that pile)
    (the relatives: their rules' :meth:`~nimlab.core.rules.PileRules.random_move`)."""
    if isinstance(board, Piles):
        return ruleset.relative_rules.random_move(board, rng)
    if isinstance(board, Position) and ruleset.rule.is_nim:
        total = sum(board.heaps)
        pick = rng.randrange(total)
        for i, h in enumerate(board.heaps, 1):
            if pick < h:
                return Move(i, pick + 1)
            pick -= h
    if isinstance(board, Position):
        weights = [sum(1 for _ in ruleset.rule.takes(h)) if h else 0 for h in board.heaps]
        pick = rng.randrange(sum(weights))
        for i, w in enumerate(weights):
            if pick < w:
                return Move(i + 1, next(islice(ruleset.rule.takes(board.heaps[i]), pick, None)))
            pick -= w
    if isinstance(board, Rows):
        return board.random_move(ruleset.rule, rng)
    return rng.choice(list(board.legal_moves(ruleset.rule)))


def _random_choice(ruleset: Ruleset, board: Board, rng: random.Random, claim: str) -> Choice:
    return Choice(_random_move(ruleset, board, rng), claim)


class _Bot:
    def __init__(self, spec: BotSpec, rng: random.Random, seconds: float | None = None) -> None:
        self.spec = spec
        self.rng = rng
        self.seconds = seconds

    def __repr__(self) -> str:
        within = "" if self.seconds is None else f", {self.seconds:g} s a move"
        return f"<bot {self.spec}{within}>"

    def instant(self, state: GameState) -> bool:
        """Whether :meth:`choose` needs no search here: a perfect bot between two players on a
        position the engine has solved already (its choice is then a few lookups per move, so
        a server may ask it without handing it to a worker). O(1)."""
        return (
            self.spec.kind == "perfect"
            and len(state.active) == 2
            and state.ruleset.game.is_heap_game
            and state.ruleset.engine.settled(state.board.canonical)
        )

    def choose(self, state: GameState) -> Choice:
        if self.seconds is None:
            return self._choose(state)
        from nimlab.core.analysis import seconds_budget

        with budget_scope(seconds_budget(self.seconds)):
            return self._choose(state)

    def _choose(self, state: GameState) -> Choice:
        ruleset, board = state.ruleset, state.board
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
        return perfect_choice(state, self.rng)


# -- classic: the textbook strategy --------------------------------------------------------------

_THEORY_NAMES = {
    "nim-formula": "the textbook nim-sum move",
    "grundy": "the textbook (Sprague–Grundy) winning move",
    "misere-quotient": "the textbook (misère quotient) winning move",
    "misere-tame": "the textbook (Bouton's misère rule, the game being tame) winning move",
}


def classic_choice(ruleset: Ruleset, board: Board, rng: random.Random) -> Choice:
    """The textbook strategy, ignoring extra end positions and extra players: the nim-sum move
    (with the misère endgame rule) for Nim, the Sprague–Grundy move (normal play) or the misère
    quotient's move otherwise, else a random move. The claim names the theory it used and, when
    the game has extra end positions, that the theory ignores them."""
    if isinstance(board, Piles):
        return _classic_relative(ruleset, board, rng)
    textbook = ruleset.textbook()
    engine = textbook.engine
    c = board.canonical
    strategy = engine.formula_strategy(c)
    ignores = " (which ignores the extra end positions)" if ruleset.end_positions else ""
    if strategy is None or not strategy.formula:
        return _random_choice(ruleset, board, rng, "a random move (no textbook formula here)")
    # the winning moves found within the budget (each proven), even when it ran out before 64
    wins = engine.winning_moves(c, limit=64, budget=interactive_budget())
    if wins:
        move = board_move(board, rng.choice(wins))
        return Choice(move, _THEORY_NAMES.get(strategy.name, "the textbook move") + ignores)
    return _random_choice(ruleset, board, rng, "a random move (no textbook winning move)")


# -- lookahead: exact search a few plies deep ----------------------------------------------------


def lookahead_choice(ruleset: Ruleset, board: Board, depth: int, rng: random.Random) -> Choice:
    """Negamax ``depth`` plies deep under the real rules (two players); positions at the horizon
    are judged by the textbook outcome (ignoring extra end positions). Bounded by the
    interactive budget: beyond it, the classic move."""
    if isinstance(board, Piles):
        return _lookahead_relative(ruleset, board, depth, rng)
    textbook = ruleset.textbook().engine
    budget = interactive_budget()

    def horizon(c: Canon) -> bool:
        """True when the player to move at ``c`` is judged to win."""
        o = textbook.outcome(c, budget)
        return o is Outcome.N if o is not None else False

    memo: dict[tuple[Canon, int], bool] = {}

    def to_move_wins(c: Canon, d: int) -> bool:
        if ruleset.is_terminal(c):
            return ruleset.misere
        if d == 0:
            return horizon(c)
        key = (c, d)
        if key not in memo:
            budget.charge()
            memo[key] = any(not to_move_wins(k, d - 1) for k in set(children(ruleset.rule, c)))
        return memo[key]

    if count_moves(ruleset, board) > 5000:
        return classic_choice(ruleset, board, rng)
    good: list[Move] = []
    moves = list(board.legal_moves(ruleset.rule))
    try:
        for move in moves:
            c = board.play(ruleset.rule, move).canonical
            if not to_move_wins(c, depth - 1):
                good.append(move)
    except BudgetExceeded:
        return classic_choice(ruleset, board, rng)
    if good:
        return Choice(rng.choice(good), f"a move that wins within a {depth}-ply look-ahead")
    return Choice(rng.choice(moves), f"a random move (every move loses within {depth} plies)")


# -- perfect -------------------------------------------------------------------------------------

RANK_LIMIT = 100_000
"""Up to this many legal moves the perfect bot ranks every one (fastest win, longest
resistance); beyond, it plays a winning move from the engine's theory."""
RANK_WORK = 20_000_000
"""Ranking costs about (legal moves) x (heaps) steps (each child is put in canonical form): past
this many the perfect bot plays from the engine's theory too (10,000 piles would take minutes)."""


def _moves(n: int) -> str:
    return "1 move" if n == 1 else f"{n} moves"


def perfect_choice(state: GameState, rng: random.Random) -> Choice:
    """A provably winning move whenever one exists under the real rules, the fastest one; when
    losing, the move that resists longest; ties broken at random. Beyond the interactive budget
    it says so and plays its best guess under the real rules.

    Up to :data:`RANK_LIMIT` moves the candidates are ranked by the children's values. In an
    N-position whose winning moves the engine's theory lists completely under the real rules
    (see :func:`_winning_scores`) only the winning children are evaluated: O(piles + winning
    moves) for plain Nim instead of O(moves x piles); the choice, its claim and the draws from
    ``rng`` are exactly those of ranking every child (:func:`_ranked_scores`)."""
    if len(state.active) > 2:
        return _paranoid_choice(state, rng)
    ruleset, board = state.ruleset, state.board
    if isinstance(board, Piles):
        return _perfect_relative(ruleset, board, rng)
    engine = ruleset.engine
    budget = interactive_budget()
    c = board.canonical
    moves = count_moves(ruleset, board)
    if moves <= RANK_LIMIT and moves * max(len(c), 1) <= RANK_WORK:
        scored = _winning_scores(engine, board, c, budget)
        if scored is None:
            scored = _ranked_scores(ruleset, board, budget)
        if scored is not None:
            return _ranked_choice(scored, rng)
    wins_found = engine.winning_moves(c, limit=64, budget=interactive_budget())
    if wins_found:
        move = board_move(board, rng.choice(wins_found))
        return Choice(move, "a proven winning move (it leaves a P-position)", True)
    if wins_found is not None and engine.outcome(c) is Outcome.P:
        return _random_choice(
            ruleset, board, rng, "every move loses (a P-position); too many moves to rank them"
        )
    return _unproven_guess(ruleset, board, rng)


Scored = tuple[bool, int | None, Move]
"""``(wins, moves until the end of the game when played, move)``: one ranked candidate."""

_COMPLETE_WINNING = frozenset({"nim-formula", "grundy"})
"""The engine's formulas whose :meth:`~nimlab.theory.engine.Strategy.winning_moves` lists every
winning move of a position (under the engine's own, real rules) when asked with no limit, for
games that never split a heap: Bouton's nim-sum move (normal and misère, at most one per pile)
and the Sprague–Grundy moves (every option of every distinct heap is checked)."""


def _ranked_choice(scored: list[Scored], rng: random.Random) -> Choice:
    """The perfect player's pick among the ranked candidates, with its claim (one
    ``rng.choice``)."""
    wins, length, move = _perfect_pick(scored, rng)
    if wins:
        when = f" in {_moves(length)}" if length is not None else ""
        return Choice(move, f"a proven winning move (wins{when})", True)
    count = "" if length is None else f" ({_moves(length)})"
    return Choice(move, f"every move loses; this one resists longest{count}", True)


def _perfect_relative(ruleset: Ruleset, board: Piles, rng: random.Random) -> Choice:
    """:func:`perfect_choice` for the relatives: every move ranked by its child's value (the
    rules' theorem where it holds, else the exact search), up to :data:`RANK_LIMIT` moves;
    beyond, or beyond the budget, an honest guess."""
    budget = interactive_budget()
    rules = ruleset.relative_rules
    if rules.count_moves(board) <= RANK_LIMIT:
        scored = _ranked_scores(ruleset, board, budget)
        if scored is not None:
            return _ranked_choice(scored, rng)
    wins = None if ruleset.end_positions else rules.theorem_wins(board, ruleset.misere)
    if wins:
        return Choice(
            rng.choice(wins), f"a proven winning move ({rules.theory_name}): too many to rank", True
        )
    if wins == []:
        return _random_choice(
            ruleset, board, rng, "every move loses (a P-position); too many moves to rank them"
        )
    return _unproven_guess(ruleset, board, rng)


def _classic_relative(ruleset: Ruleset, board: Piles, rng: random.Random) -> Choice:
    """The textbook move of a relative: a move to a position the rules' theorem (normal or
    misère, as the rules know it, ignoring extra end positions) calls a P-position."""
    rules = ruleset.relative_rules
    ignores = " (which ignores the extra end positions)" if ruleset.end_positions else ""
    wins = rules.theorem_wins(board, ruleset.misere)
    if wins:
        return Choice(rng.choice(wins), f"the textbook move ({rules.theory_name}){ignores}")
    if wins is None and rules.count_moves(board) <= RANK_LIMIT:
        wins = [
            move
            for move, after in rules.successors(board)
            if rules.formula(after.canonical, ruleset.misere) is Outcome.P
        ]
        if wins:
            return Choice(rng.choice(wins), f"the textbook move ({rules.theory_name}){ignores}")
    return _random_choice(ruleset, board, rng, "a random move (no textbook winning move)")


def _lookahead_relative(ruleset: Ruleset, board: Piles, depth: int, rng: random.Random) -> Choice:
    """:func:`lookahead_choice` for the relatives: negamax under the real rules, the horizon
    judged by the rules' theorem (a loss where it says nothing)."""
    rules = ruleset.relative_rules
    budget = interactive_budget()
    memo: dict[tuple[Canon, int], bool] = {}

    def to_move_wins(b: Piles, d: int) -> bool:
        if ruleset.is_over(b):
            return ruleset.misere
        key = (b.canonical, d)
        if key not in memo:
            budget.charge()
            if d == 0:
                memo[key] = rules.formula(key[0], ruleset.misere) is Outcome.N
            else:
                memo[key] = any(
                    isinstance(after, Piles) and not to_move_wins(after, d - 1)
                    for _, after in rules.successors(b)
                )
        return memo[key]

    if rules.count_moves(board) > 5000:
        return classic_choice(ruleset, board, rng)
    good: list[Move] = []
    moves = list(rules.successors(board))
    try:
        for move, after in moves:
            if isinstance(after, Piles) and not to_move_wins(after, depth - 1):
                good.append(move)
    except BudgetExceeded:
        return classic_choice(ruleset, board, rng)
    if good:
        return Choice(rng.choice(good), f"a move that wins within a {depth}-ply look-ahead")
    return Choice(rng.choice(moves)[0], f"a random move (every move loses within {depth} plies)")


def _ranked_scores(ruleset: Ruleset, board: Board, budget: Budget) -> list[Scored] | None:
    """Every legal move in successor order with its child's value (the full ranking), or
    ``None`` when some child could not be proven within the budget. O(moves x piles) plus the
    children's evaluations (each distinct child is evaluated once: the engine remembers)."""
    engine = ruleset.solver
    scored: list[Scored] = []
    for move, after in ruleset.rules.successors(board):
        ev = engine.evaluate(after.canonical, budget=budget)
        if ev.outcome is None:
            return None  # not within the budget
        length = None if ev.remoteness is None else ev.remoteness + 1
        scored.append((ev.outcome is Outcome.P, length, move))
    return scored


def _winning_scores(engine: Engine, board: Board, c: Canon, budget: Budget) -> list[Scored] | None:
    """Only the winning moves of an N-position, in successor order, with their children's
    values: the candidates :func:`_perfect_pick` would keep from the full ranking, whenever the
    engine's first formula for ``c`` is one that lists *every* winning move under the real
    rules (:data:`_COMPLETE_WINNING`) on a board of piles. ``None`` (rank every move instead)
    for a P-position, rows of stones, any other theory, a theory beyond the budget, or a child
    the engine does not find to be a P-position. O(piles + winning moves) for Nim, plus the
    winning children's evaluations.

    The choice is the full ranking's whenever that ranking is proven within the budget; where
    it would run out of the budget on some losing child (and the bot would fall back to the
    theory's move), this asks less and may still rank the winning moves."""
    if not isinstance(board, Position):
        return None
    strategy = engine.formula_strategy(c)
    if strategy is None or strategy.name not in _COMPLETE_WINNING:
        return None
    scored: list[Scored] = []
    if strategy.name == "nim-formula" and not engine.misere:
        # Bouton: the winning moves take pile h to h ^ s, once per pile where that is smaller
        s = reduce(xor, c, 0)
        if not s:
            return None
        high = 1 << (s.bit_length() - 1)
        for i, heap in enumerate(board.heaps, 1):
            if heap & high:
                take = heap - (heap ^ s)
                after = apply_move(c, (heap, take, (heap ^ s,) if heap ^ s else ()))
                if not _add_win(scored, engine, after, Move(i, take), budget):
                    return None
        return scored
    try:
        wins = strategy.winning_moves(engine, c, None, budget)
    except (BudgetExceeded, ValueError, OverflowError):
        return None
    if not wins:
        return None
    takes: dict[int, list[CanonMove]] = {}
    for win in wins:
        takes.setdefault(win[0], []).append(win)
    for options in takes.values():
        options.sort(key=lambda m: m[1])  # successor order: smallest take first
    for i, heap in enumerate(board.heaps, 1):
        for win in takes.get(heap, ()):
            if not _add_win(scored, engine, apply_move(c, win), Move(i, win[1]), budget):
                return None
    return scored


def _add_win(
    scored: list[Scored], engine: Engine, after: Canon, move: Move, budget: Budget
) -> bool:
    """Append a winning move with the length of its win; ``False`` (and nothing appended) when
    the engine does not find the child to be a P-position (never expected: then the full
    ranking decides). O(1) for a remembered child."""
    ev = engine.evaluate(after, budget=budget)
    if ev.outcome is not Outcome.P:
        return False
    scored.append((True, None if ev.remoteness is None else ev.remoteness + 1, move))
    return True


def _perfect_pick(scored: list[Scored], rng: random.Random) -> Scored:
    """A perfect player's choice among ``(wins, moves until the end, move)``: the fastest win,
    else the longest resistance; ties at random. An unknown length counts as the longest."""
    winning = [s for s in scored if s[0]]
    if winning:
        best = min(s[1] if s[1] is not None else 1 << 60 for s in winning)
        pool = [s for s in winning if (s[1] if s[1] is not None else 1 << 60) == best]
    else:
        best = max(s[1] if s[1] is not None else 1 << 60 for s in scored)
        pool = [s for s in scored if (s[1] if s[1] is not None else 1 << 60) == best]
    return rng.choice(pool)


def _unproven_guess(ruleset: Ruleset, board: Board, rng: random.Random) -> Choice:
    """Beyond the budget: a guess under the real rules, and the honest claim that it is one.

    A move that ends the game and wins it (normal play) is taken; in misère play a move into an
    end position is avoided when another exists; among the rest the textbook move is preferred
    (named as a guess, since the textbook ignores the real rules' extra end positions)."""
    prefix = "not proven (beyond the search budget), a guess: "
    if isinstance(board, Piles):
        guess = _classic_relative(ruleset, board, rng)
        return Choice(guess.move, prefix + guess.claim, False)
    rule = ruleset.rule
    if count_moves(ruleset, board) <= 5000:
        moves = list(board.successors(rule))
        ending = [m for m, after in moves if ruleset.is_terminal(after.canonical)]
        if ending and not ruleset.misere:
            return Choice(rng.choice(ending), prefix + "a move that ends the game and wins it")
        safe = [m for m, after in moves if not ruleset.is_terminal(after.canonical)]
        if ruleset.misere and safe and ending:
            guess = classic_choice(ruleset, board, rng)
            if guess.move in safe:
                return Choice(guess.move, prefix + guess.claim)
            return Choice(rng.choice(safe), prefix + "a move that does not end the game")
    guess = classic_choice(ruleset, board, rng)
    return Choice(guess.move, prefix + guess.claim, False)


def _paranoid_choice(state: GameState, rng: random.Random) -> Choice:
    ruleset, board = state.ruleset, state.board
    found = paranoid_move_values(
        ruleset, board, state.start, state.active, state.to_move, max_moves=RANK_LIMIT
    )
    if found is None:
        return _unproven_guess(ruleset, board, rng)
    values, _ = found
    scored = [(bool(v.hero_wins), v.remoteness, v.move) for v in values]
    wins, _, move = _perfect_pick(scored, rng)
    model = f"paranoid model, {len(state.active)} players"
    if wins:
        return Choice(move, f"a move that wins against all other players together ({model})", True)
    return Choice(
        move, f"no move wins against all others together; resisting longest ({model})", True
    )
