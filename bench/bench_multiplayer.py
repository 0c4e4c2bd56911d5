"""Benchmark: four perfect paranoid players, the compiled ParanoidSolver against the reference
pure-Python search, in one run.

    python bench/bench_multiplayer.py                  # piles 7 8 9 10 11, one game each
    python bench/bench_multiplayer.py --piles 3 4 5    # a smaller game
    python bench/bench_multiplayer.py --no-reference   # the new solver only

Game: misère Nim with the classic end positions [2,2,2], [1,2,3], [1,1,2,2], four players in
seat order; whoever moves into an end position is eliminated and a new round starts from the
original piles; the last player left wins. Each player is a perfect player in the paranoid model,
driven the way the perfect bot does it: the value of every move (every distinct position one move
away) for the player to move, then the fastest win, else the longest resistance (ties: the first
such move, so both solvers play the same game). Every game uses a fresh solver, so the times
include building tables (Numba's compile time is excluded: one warm-up game on tiny piles runs
first). Prints the time of each move and of the whole game for both solvers and their ratio.
"""

from __future__ import annotations

import argparse
import time
from typing import Protocol

from nimlab.theory._paranoid_reference import ReferenceParanoidSolver
from nimlab.theory.octal import TakeAndBreak
from nimlab.theory.paranoid import ParanoidSolver, ParanoidValue
from nimlab.theory.positions import Canon, canonical, children, is_terminal

RULE = TakeAndBreak.nim()
ENDS: frozenset[Canon] = frozenset({(2, 2, 2), (1, 2, 3), (1, 1, 2, 2)})


class Solver(Protocol):
    def move_value(
        self, child: Canon, players: tuple[int, ...], mover: int, hero: int
    ) -> ParanoidValue: ...


def choose(solver: Solver, position: Canon, players: tuple[int, ...], mover: int) -> Canon:
    """The perfect paranoid choice of ``players[mover]`` at ``position``."""
    hero = players[mover]
    scored = []
    for child in sorted(set(children(RULE, position))):
        v = solver.move_value(child, players, mover, hero)
        scored.append((v.hero_wins, v.remoteness, child))
    wins = [s for s in scored if s[0]]
    if wins:
        return min(wins, key=lambda s: s[1])[2]
    return max(scored, key=lambda s: s[1])[2]


def play(solver: Solver, piles: Canon, seats: int) -> tuple[list[float], list[int], int]:
    """One whole game: the time of each move, the eliminated seats in order, and the winner."""
    players = tuple(range(seats))
    position, mover = piles, 0
    times: list[float] = []
    out: list[int] = []
    while len(players) > 1:
        t0 = time.perf_counter()
        position = choose(solver, position, players, mover)
        times.append(time.perf_counter() - t0)
        if is_terminal(RULE, position, ENDS):
            out.append(players[mover])
            players = players[:mover] + players[mover + 1 :]
            position, mover = piles, 0
        else:
            mover = (mover + 1) % len(players)
    return times, out, players[0]


def report(name: str, times: list[float], out: list[int], winner: int) -> float:
    total = sum(times)
    print(
        f"{name:>10}: {len(times)} moves, game {total:8.3f} s, slowest move {max(times):7.3f} s, "
        f"mean move {total / len(times):7.4f} s; eliminated {out}, winner seat {winner}"
    )
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--piles", type=int, nargs="+", default=[7, 8, 9, 10, 11])
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--no-reference", action="store_true")
    args = parser.parse_args()
    piles = canonical(args.piles)
    print(f"misère Nim, classic end positions, {args.players} paranoid players, piles {piles}")

    def fresh() -> ParanoidSolver:
        return ParanoidSolver(RULE, piles, misere=True, end_positions=ENDS)

    play(ParanoidSolver(RULE, (1, 2), misere=True, end_positions=ENDS), (1, 2), args.players)
    new_times, new_out, new_winner = play(fresh(), piles, args.players)
    new_total = report("compiled", new_times, new_out, new_winner)
    if args.no_reference:
        return
    ref = ReferenceParanoidSolver(RULE, piles, misere=True, end_positions=ENDS)
    ref_times, ref_out, ref_winner = play(ref, piles, args.players)
    ref_total = report("reference", ref_times, ref_out, ref_winner)
    assert (ref_out, ref_winner) == (new_out, new_winner), "the two solvers played differently"
    print(
        f"ratio (reference / compiled): game {ref_total / new_total:.1f}x, "
        f"slowest move {max(ref_times) / max(new_times):.1f}x"
    )
    per_move = [f"{a:.3f}/{b:.3f}" for a, b in zip(new_times, ref_times, strict=True)]
    print("per move, compiled/reference seconds:", " ".join(per_move))


if __name__ == "__main__":
    main()
