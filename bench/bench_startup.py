"""The closed-form answers' whole command time, against importing the CLI's own libraries.

Each question of QUESTIONS is answered by a formula or a theorem (no search, no compiled solver),
so its time is nimlab's start: Python, the imports, reading the arguments, printing. It is shown
as a ratio to ``python -c "import typer, rich"`` (the libraries every command needs) measured
in the same run: the least CPU time (user + system) of ``--repeat`` runs each, with bytecode
cached (the first run of each writes it; ``PYTHONDONTWRITEBYTECODE`` is unset for the runs).
The goal: within 2x.

Run: ``python bench/bench_startup.py [--repeat N]``; ``python -X importtime -m nimlab analyze
3 4 5`` shows where a start goes.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys

QUESTIONS: list[tuple[str, list[str]]] = [
    ("analyze 3 4 5", ["analyze", "3", "4", "5"]),
    ("analyze --game wythoff 3 5", ["analyze", "--game", "wythoff", "3", "5"]),
    ("analyze --game lasker --misere 3 4", ["analyze", "--game", "lasker", "--misere", "3", "4"]),
    ("analyze --game kayles 3 4", ["analyze", "--game", "kayles", "3", "4"]),
    ("analyze --game moore:2 3 4 5", ["analyze", "--game", "moore:2", "3", "4", "5"]),
    ("analyze --game staircase 3 4 5", ["analyze", "--game", "staircase", "3", "4", "5"]),
    ("analyze --game fibonacci 20", ["analyze", "--game", "fibonacci", "20"]),
    (
        "analyze --game subtraction:1,3,4 10 12",
        ["analyze", "--game", "subtraction:1,3,4", "10", "12"],
    ),
    ("analyze --game 0.137 5 9", ["analyze", "--game", "0.137", "5", "9"]),
]
SEARCHED: list[tuple[str, list[str], str]] = [
    (
        "analyze --game lasker --misere 3 10 12",
        ["analyze", "--game", "lasker", "--misere", "3", "10", "12"],
        "its outcome is Bouton's misere rule, but the remoteness of each of its 48 moves is a "
        "search of 7,967 positions in pure Python",
    ),
]
"""Answers whose outcome is a closed form but whose remoteness is a search: shown beside the
goal, not held to it."""
BASELINE = ["-c", "import typer, rich"]
GOAL = 2.0


def best_time(argv: list[str], repeat: int, env: dict[str, str]) -> float:
    """The least CPU time (user + system: less sensitive than the wall clock to what else the
    machine runs) of ``repeat`` runs of ``python ARGV``, after one run that writes the
    bytecode; fails when a run fails."""
    times = []
    for i in range(repeat + 1):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        done = subprocess.run(
            [sys.executable, *argv], env=env, capture_output=True, text=True, check=False
        )
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if done.returncode != 0:
            raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr}")
        if i:
            times.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=15, help="runs of each (best taken)")
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["NO_COLOR"] = "1"
    base = best_time(BASELINE, args.repeat, env)
    print(f"Closed-form answers, whole command, CPU time, best of {args.repeat} (goal: {GOAL:g}x)")
    label = "baseline: python -c 'import typer, rich'"
    print(f"  {label:<48} {base * 1000:7.1f} ms")
    worst = 0.0
    for name, argv in QUESTIONS:
        t = best_time(["-m", "nimlab", *argv], args.repeat, env)
        worst = max(worst, t / base)
        print(f"  {'nimlab ' + name:<48} {t * 1000:7.1f} ms  {t / base:5.2f}x")
    print(f"  worst: {worst:.2f}x ({'within' if worst <= GOAL else 'beyond'} {GOAL:g}x)")
    for name, argv, why in SEARCHED:
        t = best_time(["-m", "nimlab", *argv], args.repeat, env)
        print(f"  {'nimlab ' + name:<48} {t * 1000:7.1f} ms  {t / base:5.2f}x  (a search: {why})")


if __name__ == "__main__":
    main()
