"""The engine through the product, as users feel it (whole `nimlab` processes where the target is
about a command). Each row prints its time, its target, and a ratio against a baseline measured
in the same run: Python's own start-up for whole commands, the reference pure-Python solver for
in-process questions.

Run: ``python bench/bench_engine.py`` (``--quick`` skips the slowest rows).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

PYTHON = sys.executable


def wall(f: Callable[[], object], repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t)
    return best


def command(*args: str, stdin: str | None = None) -> Callable[[], object]:
    def run() -> object:
        return subprocess.run(
            [PYTHON, "-m", "nimlab", *args],
            input=stdin,
            capture_output=True,
            text=True,
            check=True,
        )

    return run


def row(name: str, seconds: float, target: float, base: float, base_name: str) -> None:
    mark = "ok " if seconds <= target else "SLOW"
    print(
        f"  {mark} {name:<58} {seconds:7.3f} s  (target < {target:g} s; "
        f"{seconds / base:6.1f}x {base_name})"
    )


def main() -> None:
    quick = "--quick" in sys.argv
    startup = wall(lambda: subprocess.run([PYTHON, "-c", "pass"], check=True), 5)
    print(f"baseline: Python start-up {startup:.3f} s (whole-process rows are ratios to it)")
    # warm the compiled kernels' caches once, as a second run by a user would find them
    command("analyze", "20", "20", "20", "20", "--misere", "--defaults")()
    command("analyze", "30", "40", "--game", "kayles", "--misere")()

    print("Whole commands:")
    t = wall(command("analyze", "20", "20", "20", "20", "--misere", "--defaults", "--json"))
    row("analyze 20 20 20 20 --misere --defaults", t, 0.5, startup, "start-up")
    rows = "\n".join(json.dumps([n]) for n in range(1, 61)) + "\n"
    t = wall(command("analyze", "--batch", "-", "--game", "kayles", "--misere", stdin=rows))
    row("misère Kayles rows 1..60 as one --batch", t, 2.0, startup, "start-up")
    t = wall(command("quotient", "0.77", "--json"), 1)
    row("quotient 0.77", t, 10.0, startup, "start-up")
    rng = random.Random(1)
    with tempfile.TemporaryDirectory() as tmp:
        for count, target in ((10**5, 2.0), (10**6, 5.0)):
            if quick and count > 10**5:
                continue
            path = Path(tmp) / f"heaps{count}.jsonl"
            path.write_text(json.dumps([rng.randrange(1, 10**9) for _ in range(count)]) + "\n")
            t = wall(command("analyze", "--batch", str(path)), 1)
            row(f"analyze --batch: {count:,} heaps of up to 10^9", t, target, startup, "start-up")

    print("In-process:")
    from nimlab.core.analysis import analyze
    from nimlab.core.game import Game
    from nimlab.core.position import board_for
    from nimlab.core.ruleset import Ruleset
    from nimlab.theory.budget import Budget
    from nimlab.theory.solver import ExactSolver

    kayles = Ruleset.parse("kayles misere")
    small = (3, 4, 5, 6)
    base = wall(lambda: ExactSolver(kayles.rule, misere=True).value(small), 1)
    positions = [tuple(sorted(rng.randrange(1, 60) for _ in range(4))) for _ in range(20)]
    positions = [p for p in positions if sum(p) <= 200]
    t = wall(lambda: [kayles.engine.evaluate(p, remoteness=False) for p in positions], 1)
    worst = max(
        wall(lambda p=p: kayles.engine.evaluate(p, remoteness=False, budget=Budget()), 1)
        for p in positions
    )
    row(
        f"misère Kayles, {len(positions)} positions up to 200 stones (worst one)",
        worst,
        0.5,
        base,
        f"exact search of {list(small)}",
    )
    ruleset = Ruleset.parse("nim misere defaults")
    players = [f"bot:perfect:P{i}" for i in range(4)]
    game = Game(ruleset, [7, 8, 9, 10, 11], players, seed=1)
    slowest = 0.0
    start = time.perf_counter()
    while not game.is_over:
        t0 = time.perf_counter()
        game.play_bot()
        slowest = max(slowest, time.perf_counter() - t0)
    whole = time.perf_counter() - start
    row("four perfect bots, misère + classic ends, 7 8 9 10 11: game", whole, 10.0, base, "")
    row("  ... slowest single move", slowest, 1.0, base, "")
    textbook = Ruleset.parse("nim end=3.601")
    a = analyze(textbook, board_for(textbook.rule, [601, 700]))
    assert [(m.move.pile, m.move.take) for m in a.winning_moves] == [(2, 697)]
    print("  ok  perfect play under extra end positions: the one winning move of 601 700")
    os.environ.pop("NIMLAB_BENCH", None)


if __name__ == "__main__":
    main()
