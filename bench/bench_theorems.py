"""Misère play answered by a theorem, against normal play of the same positions, in one run.

    python bench/bench_theorems.py            # every case
    python bench/bench_theorems.py --quick    # fewer repetitions

Each case times one question asked of the same positions in both plays: the outcome and a
winning move (Moore's Nim_k: ``moore_outcome`` and ``moore_winning_move``; Lasker's Nim: the
engine's formulas, Sprague–Grundy in normal play and the tame rule in misère play, with every
winning move; the analysis a user gets: ``nimlab.analyze``). The baseline is normal play,
measured in the same run; the ratio is misère time / normal time (about 1: the misère rule
costs one count of the heaps above 1 more). Positions: heaps of about 10**6, some with 1 to k
heaps above 1 among heaps of 1 (the misère endgame, where the misère move differs from the
normal one). Machines are noisy: read the
ratios; each time is the best of a few repetitions.
"""

from __future__ import annotations

import argparse
import random
import timeit
from collections.abc import Callable
from dataclasses import dataclass

from nimlab import analyze
from nimlab.theory.moore import moore_outcome, moore_winning_move

Heaps = tuple[int, ...]


@dataclass(frozen=True)
class Case:
    """One row: the same question in misère and in normal play (the baseline)."""

    label: str
    misere: Callable[[], object]
    normal: Callable[[], object]


def best_time(f: Callable[[], object], repeat: int) -> float:
    """The best of ``repeat`` single runs of ``f``, in seconds."""
    return min(timeit.repeat(f, number=1, repeat=repeat))


def positions(rng: random.Random, k: int) -> dict[str, list[Heaps]]:
    """The positions of Moore's Nim_k each case asks about, by name (100 of each)."""
    million = 10**6
    return {
        "8 heaps of about 10**6": [
            tuple(rng.randrange(million // 2, million + 1) for _ in range(8)) for _ in range(100)
        ],
        "64 heaps of about 10**6": [
            tuple(rng.randrange(million // 2, million + 1) for _ in range(64)) for _ in range(100)
        ],
        f"1..{k} heaps of 10**6, 20 heaps of 1": [
            tuple([rng.randrange(million // 2, million + 1)] * rng.randrange(1, k + 1) + [1] * 20)
            for _ in range(100)
        ],
    }


def moore_question(k: int, batch: list[Heaps], misere: bool) -> Callable[[], object]:
    def ask() -> object:
        return [
            (moore_outcome(h, k, misere=misere), moore_winning_move(h, k, misere=misere))
            for h in batch
        ]

    return ask


def analysis_question(k: int, batch: list[Heaps], misere: bool) -> Callable[[], object]:
    ruleset = f"moore:{k} misere" if misere else f"moore:{k}"

    def ask() -> object:
        return [analyze(ruleset, h).winning_moves for h in batch[:10]]

    return ask


def cases() -> list[Case]:
    rng = random.Random(1)
    out: list[Case] = []
    for k in (2, 3):
        for name, batch in positions(rng, k).items():
            out.append(
                Case(
                    f"Moore's Nim_{k}, {name}: outcome + move (x100)",
                    moore_question(k, batch, True),
                    moore_question(k, batch, False),
                )
            )
        batch = positions(rng, k)["8 heaps of about 10**6"]
        out.append(
            Case(
                f"Moore's Nim_{k}, 8 heaps of about 10**6: nimlab.analyze (x10)",
                analysis_question(k, batch, True),
                analysis_question(k, batch, False),
            )
        )
    lasker = [tuple(rng.randrange(10**6 // 2, 10**6 + 1) for _ in range(3)) for _ in range(10)] + [
        (1, 1, rng.randrange(10**6 // 2, 10**6 + 1)) for _ in range(10)
    ]
    out.append(
        Case(
            "Lasker's Nim, 3 heaps of about 10**6 or 1 1 h: winning moves (x20)",
            lasker_question(lasker, True),
            lasker_question(lasker, False),
        )
    )
    out.append(
        Case(
            "Lasker's Nim, the same: nimlab.analyze (x20)",
            lasker_analysis(lasker, True),
            lasker_analysis(lasker, False),
        )
    )
    return out


def lasker_question(batch: list[Heaps], misere: bool) -> Callable[[], object]:
    """Outcome and every winning move by the engine's formula (misère: the tame rule)."""
    from nimlab.theory.engine import engine_for
    from nimlab.theory.splitting import LASKERS_NIM

    engine = engine_for(LASKERS_NIM, misere=misere)

    def ask() -> object:
        engine._answers.clear()  # (each repetition answers afresh)
        return [
            (engine.outcome(tuple(sorted(h))), engine.winning_moves(tuple(sorted(h))))
            for h in batch
        ]

    return ask


def lasker_analysis(batch: list[Heaps], misere: bool) -> Callable[[], object]:
    ruleset = "lasker misere" if misere else "lasker"

    def ask() -> object:
        return [analyze(ruleset, h).winning_moves for h in batch]

    return ask


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    repeat = 3 if parser.parse_args().quick else 11
    print("Misère play by its theorem against normal play (the baseline), same positions")
    print(f"  {'case':<74} {'misère':>9} {'normal':>9}  ratio")
    for case in cases():
        case.misere(), case.normal()  # warm: imports, engines
        m = best_time(case.misere, repeat)
        n = best_time(case.normal, repeat)
        print(f"  {case.label:<74} {m * 1000:7.2f}ms {n * 1000:7.2f}ms  {m / n:5.2f}x")


if __name__ == "__main__":
    main()
