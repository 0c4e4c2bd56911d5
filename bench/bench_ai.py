"""nimlab's engine against OpenSpiel's minimax, and the learning environments' step time.

1. The outcome of a position: OpenSpiel's alpha-beta search
   (``open_spiel.python.algorithms.minimax.alpha_beta_search``) against nimlab's engine
   (``nimlab.analyze``), in the same run, as a ratio: on Nim (OpenSpiel's own C++ ``nim`` game,
   and nimlab's Python game ``nimlab``) and on misère Kayles (the ``nimlab`` game: OpenSpiel has
   no Kayles). Times are CPU seconds of this process (the machine may be shared). nimlab is
   timed once, cold for the position (its compiled kernels loaded by a warm-up on another
   position); alpha-beta has no table, so its one run is all it does.
   Nim 5 6 7 takes alpha-beta about 3 CPU minutes on the C++ game, so the default is 3 4 5
   (``--full``: 4 5 6 too).
2. A step of the PettingZoo environment (``nimlab.ai.zoo``) in microseconds beside a step of
   OpenSpiel's own C++ ``nim`` game (``state.apply_action``) and of the ``nimlab`` OpenSpiel
   game, random legal moves on Nim 5 6 7.

Run: ``python bench/bench_ai.py`` (needs the ``rl`` extra).
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable

import numpy as np
import pyspiel
from open_spiel.python.algorithms.minimax import alpha_beta_search

import nimlab
import nimlab.ai.spiel  # registers the game "nimlab"
from nimlab.ai.zoo import NimlabEnv


def timed(work: Callable[[], object]) -> tuple[float, object]:
    """CPU seconds of ``work`` (this process: the machine may be shared) and its result."""
    t = time.process_time()
    result = work()
    return time.process_time() - t, result


def outcome_row(label: str, game: pyspiel.Game, ruleset: str, heaps: list[int]) -> None:
    spent, (value, _) = timed(lambda: alpha_beta_search(game, maximum_depth=1000))  # type: ignore[misc]
    ours, analysis = timed(lambda: nimlab.analyze(ruleset, heaps))
    outcome = analysis.outcome  # type: ignore[attr-defined]
    agree = (value == 1.0) == (outcome is nimlab.Outcome.N)
    print(
        f"{label:<36} alpha-beta {spent:9.3f} s   nimlab {ours * 1e3:8.3f} ms   "
        f"ratio {spent / ours:12,.0f}x   {outcome.name}-position, agree: {agree}"
    )


def step_time(step: Callable[[random.Random], int]) -> float:
    """CPU microseconds per step over whole random games (at least 20,000 steps)."""
    rng = random.Random(1)
    steps = 0
    t = time.process_time()
    while steps < 20_000:
        steps += step(rng)
    return (time.process_time() - t) / steps * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="also Nim 4 5 6 (alpha-beta: ~10 s)")
    args = parser.parse_args()

    nimlab.analyze("kayles misere", [1, 2])  # loads the compiled search (not timed)
    nimlab.analyze("nim", [1, 2])
    print("outcome of a position: OpenSpiel alpha-beta vs nimlab.analyze")
    nims = [[3, 4, 5], [4, 5, 6]] if args.full else [[3, 4, 5]]
    for heaps in nims:
        text = ";".join(map(str, heaps))
        cpp = pyspiel.load_game("nim", {"pile_sizes": text, "is_misere": False})
        outcome_row(f"Nim {text} (C++ nim)", cpp, "nim", heaps)
    ours = pyspiel.load_game("nimlab", {"game": "nim", "piles": "3 4 5"})
    outcome_row("Nim 3;4;5 (Python nimlab game)", ours, "nim", [3, 4, 5])
    for heaps in ([3, 4], [4, 5]):
        kayles = pyspiel.load_game(
            "nimlab", {"game": "kayles", "piles": " ".join(map(str, heaps)), "misere": True}
        )
        text = ";".join(map(str, heaps))
        outcome_row(f"misère Kayles {text} (nimlab game)", kayles, "kayles misere", heaps)

    print("\none step of a random game on Nim 5 6 7, microseconds")
    cpp = pyspiel.load_game("nim", {"pile_sizes": "5;6;7", "is_misere": False})
    game = pyspiel.load_game("nimlab", {"game": "nim", "piles": "5 6 7"})

    def spiel_game(g: pyspiel.Game) -> Callable[[random.Random], int]:
        def play(rng: random.Random) -> int:
            state, n = g.new_initial_state(), 0
            while not state.is_terminal():
                state.apply_action(rng.choice(state.legal_actions()))
                n += 1
            return n

        return play

    env = NimlabEnv("nim", [5, 6, 7])

    def zoo(rng: random.Random) -> int:
        env.reset()
        n = 0
        for _agent in env.agent_iter():
            observation, _, terminated, _, _ = env.last()
            if terminated:
                env.step(None)
                continue
            env.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
            n += 1
        return n

    base = step_time(spiel_game(cpp))
    for label, step in (
        ("OpenSpiel C++ nim (apply_action + legal_actions)", spiel_game(cpp)),
        ("OpenSpiel Python nimlab game", spiel_game(game)),
        ("PettingZoo nimlab env (last + step)", zoo),
    ):
        us = step_time(step)
        print(f"{label:<50} {us:8.1f} µs   {us / base:6.1f}x the C++ nim step")


if __name__ == "__main__":
    main()
