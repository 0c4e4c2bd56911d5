"""The perfect bot's choice on plain Nim positions like the web server's (3 to 5 piles of 3 to 15,
the human moving at random): microseconds per choice with the winning-moves fast path against
the full ranking of every legal move, measured in the same run on the same positions, as a ratio.
Every choice is also checked to be identical (move, claim, and the random draws it consumed).

Run: ``python bench/bench_perfect.py`` (``--quick`` for fewer positions).
"""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Callable

from nimlab import Game, Ruleset
from nimlab.core import bots
from nimlab.core.bots import Choice, perfect_choice
from nimlab.core.state import GameState
from nimlab.theory.outcome import Outcome


def full_ranking(state: GameState, rng: random.Random) -> Choice:
    """The baseline: :func:`perfect_choice` with the fast path switched off, so that it ranks
    every legal move as it did before."""
    fast = bots._winning_scores
    bots._winning_scores = lambda *args: None  # type: ignore[assignment]
    try:
        return perfect_choice(state, rng)
    finally:
        bots._winning_scores = fast


def server_states(ruleset: Ruleset, games: int, seed: int) -> list[GameState]:
    """Every position where the bot is to move in ``games`` games like the server's: 3 to 5
    piles of 3 to 15, a human who moves at random against the perfect bot."""
    rng = random.Random(seed)
    states: list[GameState] = []
    for n in range(games):
        heaps = [rng.randint(3, 15) for _ in range(rng.randint(3, 5))]
        first = rng.choice(["bot", "human"])
        players = ["bot:perfect:B", "human:H"] if first == "bot" else ["human:H", "bot:perfect:B"]
        g = Game(ruleset, heaps, players, seed=n)
        while not g.is_over:
            if g.to_move.name == "B":
                states.append(g.state)
                g.play_bot()
            else:
                g.push(rng.choice(g.legal_moves))
    return states


def per_choice(
    choose: Callable[[GameState, random.Random], Choice], states: list[GameState], repeat: int
) -> tuple[float, list[tuple[Choice, float]]]:
    """Best-of-``repeat`` microseconds per choice over ``states``, and the choices made (with the
    next draw of each rng, to see that the same random numbers were consumed)."""
    best = float("inf")
    made: list[tuple[Choice, float]] = []
    for _ in range(repeat):
        rngs = [random.Random(i) for i in range(len(states))]
        t = time.perf_counter()
        out = [choose(s, r) for s, r in zip(states, rngs, strict=True)]
        best = min(best, time.perf_counter() - t)
        made = [(c, r.random()) for c, r in zip(out, rngs, strict=True)]
    return best / len(states) * 1e6, made


def main() -> None:
    quick = "--quick" in sys.argv
    ruleset = Ruleset()
    states = server_states(ruleset, 100 if quick else 400, seed=7)
    engine = ruleset.engine
    n_states = [s for s in states if engine.outcome(s.board.canonical) is Outcome.N]
    p_states = [s for s in states if engine.outcome(s.board.canonical) is Outcome.P]
    for s in states:  # warm the engine's answers, as a running server finds them
        full_ranking(s, random.Random(0))
    repeat = 3 if quick else 7
    print(f"plain Nim, 3-5 piles of 3-15: {len(n_states)} N-positions, {len(p_states)} P-positions")
    first = [s for s in n_states if s.board == s.start]
    groups = (
        ("N-positions, every bot move", n_states, 3.0),
        ("N-positions, a game's first move", first, 3.0),
        ("P-positions (ranked in full either way)", p_states, None),
    )
    for name, group, target in groups:
        if not group:
            continue
        base, expected = per_choice(full_ranking, group, repeat)
        fast, got = per_choice(perfect_choice, group, repeat)
        if got != expected:
            raise SystemExit(f"{name}: the fast path chose differently from the full ranking")
        ratio = base / fast
        mark = "" if target is None else ("ok   " if ratio >= target else "SLOW ")
        goal = "" if target is None else f" (target >= {target:g}x)"
        print(
            f"  {mark}{name} ({len(group)}): full ranking {base:6.1f} us/choice, "
            f"perfect_choice {fast:6.1f} us/choice: {ratio:4.1f}x faster{goal}; same choices"
        )


if __name__ == "__main__":
    main()
