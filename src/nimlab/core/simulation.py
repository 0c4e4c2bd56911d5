"""Many bot-against-bot games (self-play), on every core, with win rates and 95 %
confidence intervals.

Game ``i`` of a simulation depends only on the simulation's seed and ``i``, so the results are the
same whatever the number of worker processes.

>>> from nimlab.core.ruleset import Ruleset
>>> config = SimulationConfig(Ruleset(), ("bot:classic:A", "bot:random:B"), start=(3, 4, 5), seed=1)
>>> result = simulate(config, 20, jobs=1)
>>> sum(result.wins)
20
"""

from __future__ import annotations

import math
import os
import random
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Any, Literal

from nimlab.core.errors import PlayerError, PositionError
from nimlab.core.game import Game, Player, unique_players
from nimlab.core.ruleset import Ruleset
from nimlab.core.setup import start_over_message

__all__ = [
    "SIM_FIRST_CHOICES",
    "SimFirst",
    "SimulationConfig",
    "SimulationResult",
    "deal",
    "deal_start",
    "default_jobs",
    "parse_range",
    "play_games",
    "simulate",
    "wilson_interval",
]

SimFirst = Literal["alternate", "first", "random", "auto"]
SIM_FIRST_CHOICES: tuple[str, ...] = ("alternate", "first", "random", "auto")
CHUNK = 100
"""Games per task handed to a worker process."""
_MAX_DEAL = 10_000
_DEALS = 1000
"""Deals tried for one game before random piles that are always end positions are refused."""


def parse_range(text: str, what: str) -> tuple[int, int]:
    """``"5"`` -> (5, 5); ``"3-5"`` -> (3, 5). Raises :class:`PositionError`."""
    parts = text.replace(" ", "").split("-")
    if not 1 <= len(parts) <= 2 or not all(p.isdigit() for p in parts):
        raise PositionError(f"{what} {text!r}: write a number like 5 or a range like 3-5")
    lo, hi = int(parts[0]), int(parts[-1])
    if lo > hi:
        raise PositionError(f"{what} {text!r}: write the low end first")
    return lo, hi


def deal(
    rng: random.Random, count: tuple[int, int] = (3, 5), size: tuple[int, int] = (1, 9)
) -> tuple[int, ...]:
    """Random heaps: a number of heaps drawn from ``count``, each of a size drawn from
    ``size`` (both inclusive ranges)."""
    if count[0] < 1 or count[1] > _MAX_DEAL:
        raise PositionError(f"deal 1 to {_MAX_DEAL:,} piles")
    if size[0] < 0:
        raise PositionError("pile sizes cannot be negative")
    return tuple(rng.randint(*size) for _ in range(rng.randint(*count)))


def deal_start(
    ruleset: Ruleset,
    rng: random.Random,
    count: tuple[int, int] = (3, 5),
    size: tuple[int, int] = (1, 9),
) -> tuple[int, ...]:
    """Random piles (see :func:`deal`) from which a move can be made: a deal that is already an
    end position of ``ruleset`` (an extra end position, or empty piles only) is dealt again, at
    most :data:`_DEALS` times, then :class:`PositionError`."""
    for _ in range(_DEALS):
        start = deal(rng, count, size)
        if not ruleset.is_terminal(start):
            return start
    raise PositionError(
        f"{_DEALS} deals in a row were already end positions: widen --pile-size or --pile-count"
    )


def wilson_interval(successes: int, trials: int, z: float = 1.959964) -> tuple[float, float]:
    """The Wilson score interval for a proportion (95 % by default); (0, 1) for no trials."""
    if trials <= 0:
        return (0.0, 1.0)
    p = successes / trials
    denom = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denom
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


@dataclass(frozen=True)
class SimulationConfig:
    """What to simulate: the ruleset, the bots (two or more, in seat order), the start position
    (``None``: deal random piles for every game, ``pile_count`` heaps of ``pile_size``), who moves
    first (``alternate`` rotates the first seat game by game), and the seed."""

    ruleset: Ruleset
    players: tuple[Player | str, ...]
    start: tuple[int, ...] | None = None
    pile_count: tuple[int, int] = (3, 5)
    pile_size: tuple[int, int] = (1, 9)
    first: SimFirst = "alternate"
    seed: int = 0
    seats: tuple[Player, ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        seats = unique_players(self.players)
        if len(seats) < 2:
            raise PlayerError("a simulation needs at least two bots")
        humans = [p.name for p in seats if not p.is_bot]
        if humans:
            raise PlayerError(
                f"simulations are between bots; {', '.join(humans)} is human: use bot:KIND[:NAME]"
            )
        if self.first not in SIM_FIRST_CHOICES:
            raise PlayerError(f"first player {self.first!r}: choose {', '.join(SIM_FIRST_CHOICES)}")
        object.__setattr__(self, "seats", seats)
        # Fail early on a start position or deal the ruleset cannot use.
        self.new_game(0)

    def new_game(self, index: int) -> Game:
        """Game number ``index`` of the simulation (deterministic)."""
        rng = random.Random(self.seed * 1_000_003 + index)
        if self.start is not None:
            start = self.start
            if self.ruleset.is_terminal(start):
                raise PositionError(start_over_message(self.ruleset.rules.start(start)))
        else:
            start = deal_start(self.ruleset, rng, self.pile_count, self.pile_size)
        first: Any = self.first
        if first == "alternate":
            first = index % len(self.seats)
        return Game(self.ruleset, start, self.seats, first=first, seed=rng.randrange(1 << 31))


@dataclass
class SimulationResult:
    """Wins per seat, games played, moves made."""

    players: tuple[Player, ...]
    games: int = 0
    wins: list[int] = field(default_factory=list)
    moves: int = 0
    first_wins: int = 0

    def __post_init__(self) -> None:
        if not self.wins:
            self.wins = [0] * len(self.players)

    def add(self, other: SimulationResult) -> None:
        self.games += other.games
        self.moves += other.moves
        self.first_wins += other.first_wins
        self.wins = [a + b for a, b in zip(self.wins, other.wins, strict=True)]

    def win_rate(self, seat: int) -> float:
        return self.wins[seat] / self.games if self.games else 0.0

    def interval(self, seat: int) -> tuple[float, float]:
        """The 95 % Wilson interval of seat's win rate."""
        return wilson_interval(self.wins[seat], self.games)

    def to_json(self) -> dict[str, Any]:
        return {
            "games": self.games,
            "mean_moves": self.moves / self.games if self.games else None,
            "first_player_wins": self.first_wins,
            "players": [
                {
                    "seat": i + 1,
                    "player": str(p),
                    "name": p.name,
                    "wins": self.wins[i],
                    "win_rate": self.win_rate(i),
                    "ci95": list(self.interval(i)),
                }
                for i, p in enumerate(self.players)
            ],
        }


def play_games(config: SimulationConfig, start: int, count: int) -> SimulationResult:
    """Play games ``start`` .. ``start + count - 1`` to the end, in this process."""
    result = SimulationResult(config.seats)
    for index in range(start, start + count):
        game = config.new_game(index)
        while not game.is_over:
            game.play_bot()
        winner = game.winner_seat
        assert winner is not None
        result.games += 1
        result.wins[winner] += 1
        result.moves += len(game.history)
        result.first_wins += winner == game.first_seat
    return result


def default_jobs() -> int:
    """Worker processes to use: the cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def simulate(
    config: SimulationConfig,
    games: int,
    *,
    jobs: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> SimulationResult:
    """Play ``games`` games on ``jobs`` worker processes (default: every core; 1 plays in this
    process) and add up the results. ``progress(n)`` is called as each batch of ``n`` games ends."""
    if games < 0:
        raise PositionError("the number of games cannot be negative")
    jobs = default_jobs() if jobs is None else max(1, jobs)
    total = SimulationResult(config.seats)
    chunks = [(s, min(CHUNK, games - s)) for s in range(0, games, CHUNK)]
    if jobs == 1 or len(chunks) <= 1:
        for start, count in chunks:
            total.add(play_games(config, start, count))
            if progress:
                progress(count)
        return total
    with ProcessPoolExecutor(max_workers=min(jobs, len(chunks))) as pool:
        futures: Sequence[Future[SimulationResult]] = [
            pool.submit(play_games, config, start, count) for start, count in chunks
        ]
        try:
            for future in as_completed(futures):
                part = future.result()
                total.add(part)
                if progress:
                    progress(part.games)
        except BaseException:
            for f in futures:
                f.cancel()
            raise
    return total
