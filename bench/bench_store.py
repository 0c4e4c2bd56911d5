"""CPU per write in the server's database writer: the Python time (it holds the GIL the event
loop needs) that :class:`~nimlab.storage.writer.StoreWriter` spends per job, for the two jobs of
the web app:

- ``add_moves``: one ``StoreWriter.add_moves`` job of 1 or 2 moves to a game in play;
- ``finish``: one ``Store.finish_live_game`` job, a 10-move, 2-player Nim game record.

Jobs are submitted ``--games`` at a time while the writer is held, so each group transaction holds
that many jobs (as under load: 50 games against the perfect bot). The CPU is the writer thread's
own (``time.thread_time`` read on the writer thread before and after the jobs), not wall time:
disk flushes (``synchronous = FULL``) wait, they do not count.

The baseline is the storage package as it was before this work (commit ``--base``, default
:data:`BASE`), loaded from git under another name and run in the same process on its own
database; each shape is measured alternately ``--rounds`` times, the minimum is kept, and the
ratio old / new is printed (> 1: the new code is faster).

Run: ``python bench/bench_store.py`` (``--games 50 --rounds 7 --base REF``).
"""

from __future__ import annotations

import argparse
import importlib
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from nimlab.core.game import Game

BASE = "a0c71b8"
"""The commit before the writer's speed-up (main when the work began)."""

OLD = "nimlab_oldstorage"
_MODULES = (
    "errors",
    "schema",
    "connection",
    "registry",
    "archive",
    "inplay",
    "store",
    "transfer",
    "writer",
    "__init__",
)


def load_old(base: str, into: Path) -> ModuleType:
    """The package ``nimlab.storage`` of commit ``base`` as the package :data:`OLD`."""
    root = Path(__file__).resolve().parent.parent
    package = into / OLD
    package.mkdir()
    for name in _MODULES:
        text = subprocess.run(
            ["git", "-C", str(root), "show", f"{base}:src/nimlab/storage/{name}.py"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        text = re.sub(r"\bnimlab\.storage\b", OLD, text)
        (package / f"{name}.py").write_text(text)
    sys.path.insert(0, str(into))
    return importlib.import_module(OLD)


def ten_move_record() -> dict[str, Any]:
    """A finished 2-player Nim game of 10 moves, as ``Game.to_record()`` writes it."""
    game = Game("nim", [3, 3, 4], ["human:Ann", "bot:perfect:Hal"], seed=1)
    while not game.is_over:
        game.push(sorted(game.legal_moves, key=str)[0])
    record = game.to_record()
    assert len(record["moves"]) == 10
    return record


class Rig:
    """A store on a fresh database with its writer, from one storage package (new or old)."""

    def __init__(self, package: ModuleType, path: Path, record: dict[str, Any]) -> None:
        self.store = package.Store.open(path)
        self.writer = package.StoreWriter(self.store)
        self.record = record
        self.serial = 0

    def close(self) -> None:
        self.writer.close()

    def _held(self, submit: Callable[[], list[Any]]) -> float:
        """Writer-thread CPU seconds for the jobs ``submit`` queues while the writer is held."""
        gate = threading.Event()

        def hold(_store: Any) -> float:
            gate.wait()
            return time.thread_time()

        before = self.writer.submit(hold)
        futures = submit()
        after = self.writer.submit(lambda _store: time.thread_time())
        gate.set()
        for f in futures:
            f.result()
        return float(after.result() - before.result())

    def start_games(self, games: int) -> list[str]:
        keys = []
        begun = {**self.record, "moves": [], "over": False, "winner": None}
        for _ in range(games):
            self.serial += 1
            key = f"g{self.serial}"
            self.store.add_live_game(key, begun, {"tokens": ["a", "b"]})
            keys.append(key)
        return keys

    def add_moves(self, keys: list[str], per_job: int) -> float:
        """CPU per job for 10 moves to each game, ``per_job`` moves a job."""
        moves = self.record["moves"]
        cpu = 0.0
        jobs = 0
        for first in range(1, 11, per_job):
            chunk = moves[first - 1 : first - 1 + per_job]

            def submit(first: int = first, chunk: list[Any] = chunk) -> list[Any]:
                return [self.writer.add_moves(key, first, chunk) for key in keys]

            cpu += self._held(submit)
            jobs += len(keys)
        return cpu / jobs

    def finish(self, keys: list[str]) -> float:
        """CPU per ``finish_live_game`` job of each game."""
        record = self.record

        def submit() -> list[Any]:
            return [
                self.writer.submit(
                    lambda store, key=key: store.finish_live_game(key, record, [None, None])
                )
                for key in keys
            ]

        return self._held(submit) / len(keys)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=50, help="jobs per group transaction")
    parser.add_argument("--rounds", type=int, default=7, help="measurements of each shape")
    parser.add_argument("--base", default=BASE, help="the git commit of the baseline")
    args = parser.parse_args()
    record = ten_move_record()
    new_package = importlib.import_module("nimlab.storage")
    with tempfile.TemporaryDirectory() as tmp:
        old_package = load_old(args.base, Path(tmp))
        rigs = {
            "old": Rig(old_package, Path(tmp) / "old.db", record),
            "new": Rig(new_package, Path(tmp) / "new.db", record),
        }
        best: dict[tuple[str, str], float] = {}
        try:
            for _ in range(args.rounds):
                for name, rig in rigs.items():
                    for per_job in (1, 2):
                        keys = rig.start_games(args.games)
                        shape = f"add_moves ({per_job} move{'s' if per_job > 1 else ''})"
                        cpu = rig.add_moves(keys, per_job)
                        best[shape, name] = min(best.get((shape, name), 1e9), cpu)
                        cpu = rig.finish(keys)
                        best["finish (10 moves)", name] = min(
                            best.get(("finish (10 moves)", name), 1e9), cpu
                        )
        finally:
            for rig in rigs.values():
                rig.close()
    print(f"writer-thread CPU per job, {args.games} jobs per group, best of {args.rounds}")
    print(f"{'job':<22}{'old µs':>10}{'new µs':>10}{'old/new':>10}")
    for shape in sorted({s for s, _ in best}):
        old, new = best[shape, "old"], best[shape, "new"]
        print(f"{shape:<22}{old * 1e6:>10.1f}{new * 1e6:>10.1f}{old / new:>10.2f}")


if __name__ == "__main__":
    main()
