"""Benchmark: ``nimlab simulate`` against a single-process loop measured in the same run.

The target (issue 3): 10,000 games of 5-pile Nim between two non-random bots in under 10 s on a
2-core machine. Prints the time of the whole command (interpreter start-up included), the time of
``simulate()`` on every core, the baseline (the same games played one after another in this
process, measured on a sample and scaled), and their ratio. Machines are noisy: read the ratio.

    python bench/bench_simulate.py [--games 10000] [--player bot:classic --player bot:classic]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

from nimlab.core.ruleset import Ruleset
from nimlab.core.simulation import SimulationConfig, default_jobs, play_games, simulate

TARGET_S = 10.0


def _cpu() -> float:
    """CPU seconds used by this process and its finished children (the worker processes)."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + children.ru_utime + children.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--games", type=int, default=10_000)
    parser.add_argument(
        "--sample", type=int, default=2_000, help="games in the single-process baseline"
    )
    parser.add_argument(
        "--player", action="append", help="bot spec (twice or more); default two classic bots"
    )
    args = parser.parse_args()
    players = args.player or ["bot:classic:A", "bot:classic:B"]
    config = SimulationConfig(
        Ruleset(), tuple(players), pile_count=(5, 5), pile_size=(1, 9), seed=0
    )
    jobs = default_jobs()
    print(
        f"{args.games:,} games of 5-pile Nim (piles of 1-9), {' vs '.join(players)}, {jobs} cores"
    )

    command = [
        sys.executable,
        "-m",
        "nimlab",
        "simulate",
        "--games",
        str(args.games),
        "--pile-count",
        "5",
        "--pile-size",
        "1-9",
        "--json",
        "--seed",
        "0",
    ]
    for p in players:
        command += ["--player", p]
    began = time.perf_counter()
    out = subprocess.run(command, capture_output=True, text=True, check=True)
    command_s = time.perf_counter() - began
    reported = json.loads(out.stdout)

    began, cpu = time.perf_counter(), _cpu()
    result = simulate(config, args.games, jobs=jobs)
    parallel_s, parallel_cpu = time.perf_counter() - began, _cpu() - cpu
    assert result.wins == [p["wins"] for p in reported["players"]], (
        "the command and simulate() disagree"
    )

    play_games(config, args.games, 50)  # warm the caches as the workers' first games do
    began, cpu = time.perf_counter(), _cpu()
    play_games(config, 0, args.sample)
    baseline_s = (time.perf_counter() - began) * args.games / args.sample
    baseline_cpu = (_cpu() - cpu) * args.games / args.sample

    print(
        f"  nimlab simulate (whole command):  {command_s:6.2f} s   target < {TARGET_S:.0f} s: "
        f"{'met' if command_s < TARGET_S else 'NOT met'}"
    )
    rate = args.games / parallel_s
    print(f"  simulate() on {jobs} processes:       {parallel_s:6.2f} s   ({rate:,.0f} games/s)")
    print(f"  baseline, one process (scaled):   {baseline_s:6.2f} s   (from {args.sample:,} games)")
    print(f"  ratio baseline / simulate():      {baseline_s / parallel_s:6.2f}x")
    print(
        f"  CPU time: simulate() {parallel_cpu:.2f} s in all, baseline {baseline_cpu:.2f} s; "
        f"on {jobs} idle cores simulate() needs about {parallel_cpu / jobs:.2f} s "
        "(wall times above include other programs' load)"
    )
    wins = ", ".join(
        f"{p.name} {w / result.games:.1%}" for p, w in zip(result.players, result.wins, strict=True)
    )
    print(f"  results: {wins}; {result.moves / result.games:.1f} moves a game")


if __name__ == "__main__":
    main()
