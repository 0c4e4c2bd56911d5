"""How far a policy is from perfect play, exactly: the share of won positions it throws away.

>>> import nimlab
>>> nimlab.evaluate("perfect", "nim", piles=3, max_heap=3).error
0.0
>>> round(nimlab.evaluate("random", "nim", piles=2, max_heap=3).error, 4)
0.5639

A position counts when the player to move has a win (an N-position: some move leaves a
P-position); there the policy *throws the win away* when its move leaves an N-position (or is
not a legal move). :attr:`PolicyReport.error` is the mean, over those positions, of the
probability that it does: 0 for a perfect player, for a uniformly random one the mean share of
losing moves (:attr:`PolicyReport.random_error`). Every value comes from the game's engine
within a time budget; a position whose value (or a child's) is not proven within it is
skipped and counted in :attr:`PolicyReport.skipped`, never guessed.

A policy is a callable from a :class:`~nimlab.core.state.GameState` (two players, the one to
move is ``state.to_move``) to a :class:`~nimlab.core.position.Move`, move text (``"2 3"``), an
action (an int, in the :class:`~nimlab.ai.encoding.ActionSpace` of the start position) or a
probability distribution over moves (a mapping move -> probability, or a vector of one
probability per action); or a nimlab bot (an object with ``choose(state)``, see
:func:`~nimlab.core.bots.make_bot`); or a bot spec such as ``"perfect"``, ``"classic"`` or
``"random"`` (the uniformly random player, measured exactly).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from itertools import combinations_with_replacement, product
from math import comb
from typing import Any

from nimlab.ai.encoding import ActionSpace, Table, canonical_move
from nimlab.core.bots import make_bot
from nimlab.core.errors import NimlabError, PositionError
from nimlab.core.players import Player
from nimlab.core.position import Board, Move
from nimlab.core.rules import StaircaseRules
from nimlab.core.ruleset import Ruleset, as_ruleset
from nimlab.core.state import GameState
from nimlab.theory.budget import Budget
from nimlab.theory.outcome import Outcome

__all__ = ["PolicyReport", "Slip", "evaluate"]

Policy = Callable[[GameState], Any]

MAX_POSITIONS = 200_000
"""The most positions one evaluation examines (ask for a ``sample`` beyond)."""


@dataclass(frozen=True, slots=True)
class Slip:
    """A won position where the policy may throw the win away: how likely (``loss``), its
    likeliest answer that does not win (``None`` when that is no legal move), a winning move
    it could have played, and in how many moves the position is won with perfect play
    (``None`` when only a formula answered)."""

    position: Board
    loss: float
    move: Move | None
    winning: Move
    wins_in: int | None

    def __str__(self) -> str:
        played = "an illegal move" if self.move is None else str(self.move)
        within = "" if self.wins_in is None else f" (wins in {self.wins_in})"
        return (
            f"{self.position}: plays {played} with probability {self.loss:.2f}; "
            f"{self.winning} wins{within}"
        )


@dataclass(frozen=True, slots=True)
class PolicyReport:
    """What :func:`evaluate` found."""

    game: str
    positions: int
    """Won positions measured (the player to move has a win, proven)."""
    error: float
    """Mean probability of throwing the win away over those positions (0: perfect play)."""
    random_error: float
    """The same for a uniformly random player (the mean share of losing moves)."""
    lost: int
    """Positions measured where the player to move has no win (not counted in ``error``)."""
    skipped: int
    """Positions not proven within the budget (left out, not guessed)."""
    worst: tuple[Slip, ...]
    """The positions where the policy throws the win away most likely (the quickest wins
    first among equals), at most ``worst`` of them."""

    @property
    def proven(self) -> bool:
        """Whether every position asked for was measured."""
        return self.skipped == 0

    def __str__(self) -> str:
        text = (
            f"{self.game}: throws away the win in {self.error:.1%} of {self.positions:,} won "
            f"positions (a random player: {self.random_error:.1%})"
        )
        if self.skipped:
            text += f"; {self.skipped:,} positions not proven within the budget, left out"
        return text


def _distribution(answer: Any, state: GameState) -> dict[Move | None, float]:
    """The policy's answer as probabilities of moves (``None``: an answer that is no move);
    actions are read in the :class:`ActionSpace` of ``state.start``."""
    if isinstance(answer, Move):
        return {canonical_move(answer): 1.0}
    if isinstance(answer, str):
        try:
            return {canonical_move(state.ruleset.rules.parse_move(answer, state.board)): 1.0}
        except NimlabError:
            return {None: 1.0}
    if isinstance(answer, Mapping):
        out: dict[Move | None, float] = {}
        for move, p in answer.items():
            key = canonical_move(move) if isinstance(move, Move) else None
            out[key] = out.get(key, 0.0) + float(p)
        return out
    if hasattr(answer, "move") and isinstance(answer.move, Move):  # a bot's Choice
        return {canonical_move(answer.move): 1.0}
    actions = ActionSpace.of(state.ruleset.rules, state.start)
    if isinstance(answer, int) or (hasattr(answer, "__index__") and not hasattr(answer, "__len__")):
        try:
            return {actions.move(int(answer)): 1.0}
        except NimlabError:
            return {None: 1.0}
    probs = [float(p) for p in answer]
    if len(probs) != actions.size:
        raise ValueError(
            f"a policy's vector has one probability per action: {actions.size}, not {len(probs)}"
        )
    dist: dict[Move | None, float] = {}
    for i, p in enumerate(probs):
        if p:
            dist[actions.moves[i]] = dist.get(actions.moves[i], 0.0) + p
    return dist


def _as_policy(policy: Policy | str | Any) -> tuple[Policy | None, bool]:
    """The callable, or ``(None, True)`` for the uniformly random player."""
    if isinstance(policy, str):
        if policy.strip().lower() == "random":
            return None, True
        bot = make_bot(policy, random.Random(0))
        return bot.choose, False
    if hasattr(policy, "choose"):
        return policy.choose, False
    if not callable(policy):
        raise TypeError("a policy is a callable from a state to a move, a bot, or a bot spec")
    return policy, False


def _positions(
    ruleset: Ruleset, piles: int, max_heap: int, start: Board | None
) -> Iterator[tuple[Board, Board]]:
    """``(start, board)`` of every position to measure: with ``start``, every board reachable
    from it (distinct boards, breadth first); else every position of ``piles`` piles of at most
    ``max_heap`` (distinct in the engine's eyes), each its own start."""
    rules = ruleset.rules
    if start is not None:
        seen = {start}
        frontier = [start]
        while frontier:
            nxt = []
            for board in frontier:
                yield start, board
                if ruleset.is_over(board):
                    continue
                for _, after in rules.successors(board):
                    if after not in seen:
                        seen.add(after)
                        nxt.append(after)
                        if len(seen) > MAX_POSITIONS:
                            raise PositionError(
                                f"more than {MAX_POSITIONS:,} positions: ask for a sample"
                            )
            frontier = nxt
        return
    count = rules.piles if rules.piles is not None else piles
    if isinstance(count, bool) or not isinstance(count, int) or count < 1 or max_heap < 0:
        raise PositionError(
            f"piles {count!r}, max_heap {max_heap!r}: piles 1 or more, heaps 0 or more"
        )
    ordered = isinstance(rules, StaircaseRules)  # steps are not interchangeable; piles are
    tuples = (max_heap + 1) ** count if ordered else comb(max_heap + count, count)
    if tuples > MAX_POSITIONS:
        raise PositionError(
            f"{tuples:,} positions of {count} piles up to {max_heap}: at most {MAX_POSITIONS:,} "
            "(fewer piles or smaller heaps; or a start, to measure the positions reachable from it)"
        )
    every = (
        product(range(max_heap + 1), repeat=count)
        if ordered
        else combinations_with_replacement(range(max_heap + 1), count)
    )
    keys = set()
    for heaps in every:
        try:
            board = rules.start(heaps)
        except NimlabError:
            continue
        if board.canonical not in keys:
            keys.add(board.canonical)
            yield board, board


def evaluate(
    policy: Policy | str | Any,
    game: Ruleset | str = "nim",
    *,
    piles: int = 3,
    max_heap: int = 5,
    start: Iterable[int] | Board | None = None,
    sample: int | None = None,
    seed: int = 0,
    worst: int = 10,
    seconds: float = 60.0,
) -> PolicyReport:
    """How often ``policy`` throws away a win in ``game`` (a ruleset or its text, e.g.
    ``"kayles misere"``), exactly, on every position of ``piles`` piles of at most ``max_heap``
    (a fixed-pile game uses its own count), or with ``start`` on every position reachable from
    it; ``sample`` measures that many of them drawn at random (``seed``) instead. Engine
    answers are bounded by ``seconds`` in all; beyond, positions are skipped and counted.
    See the module for what a policy may be. O(positions x moves) policy calls and engine
    lookups."""
    ruleset = as_ruleset(game)
    call, uniform = _as_policy(policy)
    board0 = None if start is None else Table.of(ruleset, start).start
    todo = list(_positions(ruleset, piles, max_heap, board0))
    if sample is not None and sample < len(todo):
        todo = random.Random(seed).sample(todo, sample)
    if len(todo) > MAX_POSITIONS:
        raise PositionError(f"{len(todo):,} positions: at most {MAX_POSITIONS:,} (or a sample)")
    budget = Budget(seconds=seconds)
    engine = ruleset.solver
    rules = ruleset.rules
    players = (Player("player_0"), Player("player_1"))
    won = lost = skipped = 0
    total = total_random = 0.0
    slips: list[Slip] = []
    for begin, board in todo:
        if ruleset.is_over(board):
            continue
        ev = engine.evaluate(board.canonical, budget=budget)
        if ev.outcome is None:
            skipped += 1
            continue
        if ev.outcome is Outcome.P:
            lost += 1
            continue
        losing: list[Move] = []
        wins: list[Move] = []
        proven = True
        for move, after in rules.successors(board):
            child = engine.evaluate(after.canonical, remoteness=False, budget=budget)
            if child.outcome is None:
                proven = False
                break
            (losing if child.outcome is Outcome.N else wins).append(canonical_move(move))
        if not proven or not wins:
            skipped += 1
            continue
        won += 1
        total_random += len(losing) / (len(losing) + len(wins))
        if uniform:
            loss = len(losing) / (len(losing) + len(wins))
            likeliest: Move | None = losing[0] if losing else None
        else:
            assert call is not None
            state = GameState(ruleset, begin, board, players, (0, 1), 0)
            dist = _distribution(call(state), state)
            winning = set(wins)
            bad = {m: p for m, p in dist.items() if m not in winning}  # losing or illegal
            loss = min(1.0, sum(bad.values()))
            likeliest = max(bad, key=lambda m: bad[m]) if bad else None
            if likeliest is not None and likeliest not in losing:
                likeliest = None  # an answer that is no legal move
        total += loss
        if loss > 0:
            slips.append(Slip(board, loss, likeliest, wins[0], ev.remoteness))
    slips.sort(key=lambda s: (-s.loss, s.wins_in if s.wins_in is not None else 1 << 60))
    return PolicyReport(
        game=str(ruleset),
        positions=won,
        error=total / won if won else 0.0,
        random_error=total_random / won if won else 0.0,
        lost=lost,
        skipped=skipped,
        worst=tuple(slips[:worst]),
    )
