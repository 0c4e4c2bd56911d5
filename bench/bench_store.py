"""CPU per write in the server's database writer: the Python time (it holds the GIL the event
loop needs) that :class:`~nimlab.storage.writer.StoreWriter` spends per job, for the two jobs of
the web app:

- ``add_moves``: one ``StoreWriter.add_moves`` job of 1 or 2 moves to a game in play;
- ``finish``: one ``Store.finish_live_game`` job, a 10-move, 2-player Nim game record, submitted
  with ``StoreWriter.finish_game`` (``finish_game``; the old writer has no such method: there,
  as a function) or as a function with ``StoreWriter.submit`` (``finish via submit``).

Jobs are submitted ``--games`` at a time while the writer is held, so each group transaction holds
that many jobs (as under load: 50 games against the perfect bot). Two figures per job, both CPU
time of the writer thread (``time.thread_time`` read on it before and after the jobs), not wall
time (disk flushes, ``synchronous = FULL``, wait and do not count):

- ``cpu``: all of it, SQLite's own work included;
- ``py``: the part outside the calls into SQLite (``execute``/``executemany``, timed by a thin
  wrapper around the connection on a second store of each kind, its own cost measured and taken
  off), i.e. the time the thread surely holds the GIL (``sqlite3`` releases it while SQLite runs
  a statement). A lower bound of the GIL time: binding parameters and making cursors, inside the
  calls, hold it too.

``add_moves`` is measured for games last touched in an earlier second (the usual case: the
move's time stamp changes ``touched_at``) and in the same second (a fast game: no update).

The baseline is the storage package as it was before this work (commit ``--base``, default
:data:`BASE`), loaded from git under another name and run in the same process on its own
database; each shape is measured alternately ``--rounds`` times, the minimum is kept, and the
ratio old / new is printed (> 1: the new code is faster).

With ``--postgres URL`` the new code is measured on that PostgreSQL database too (its games are
added there under keys of their own, and left), and a second table gives its figures beside
SQLite's: the writer thread's CPU on PostgreSQL counts the client's work only (the server's is
another process), i.e. what a PostgreSQL server's writer costs the interpreter lock.

Run: ``python bench/bench_store.py`` (``--games 50 --rounds 7 --base REF --postgres URL``).
"""

from __future__ import annotations

import argparse
import importlib
import re
import secrets
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


class TimedConnection:
    """A connection that adds up the writer-thread CPU spent inside ``execute`` and
    ``executemany`` (everything else is passed through)."""

    def __init__(self, conn: Any) -> None:
        self._conn = conn
        self.inside = 0.0
        self.calls = 0

    def execute(self, sql: str, params: Any = ()) -> Any:
        start = time.thread_time()
        try:
            return self._conn.execute(sql, params)
        finally:
            self.inside += time.thread_time() - start
            self.calls += 1

    def executemany(self, sql: str, params: Any) -> Any:
        start = time.thread_time()
        try:
            return self._conn.executemany(sql, params)
        finally:
            self.inside += time.thread_time() - start
            self.calls += 1

    @property
    def in_transaction(self) -> bool:
        return bool(self._conn.in_transaction)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)


def wrapper_cost(calls: int = 200_000) -> float:
    """CPU seconds per call that :class:`TimedConnection` adds outside its timed part."""

    class Nothing:
        def execute(self, sql: str, params: Any = ()) -> None:
            return None

    plain = Nothing()
    timed = TimedConnection(plain)
    start = time.thread_time()
    for _ in range(calls):
        plain.execute("")
    direct = time.thread_time() - start
    start = time.thread_time()
    for _ in range(calls):
        timed.execute("")
    wrapped = time.thread_time() - start
    return max(0.0, (wrapped - timed.inside - direct) / calls)


Cost = tuple[float, float]
"""CPU seconds per job: all of it, and the part outside SQLite's calls."""


class Rig:
    """A store on a fresh database with its writer, from one storage package (new or old)."""

    def __init__(
        self,
        package: ModuleType,
        path: Path | str,
        record: dict[str, Any],
        *,
        timed: bool,
        prefix: str = "g",
    ) -> None:
        self.store = package.Store.open(path)
        self.prefix = prefix
        self.timed = TimedConnection(self.store.db.conn)
        if timed:  # else the counts stay 0
            self.store.db.conn = self.timed
        self.writer = package.StoreWriter(self.store)
        self.record = record
        self.serial = 0

    def close(self) -> None:
        self.writer.close()

    def _now(self) -> tuple[float, float, int]:
        return time.thread_time(), self.timed.inside, self.timed.calls

    def _held(self, submit: Callable[[], list[Any]], jobs: int, wrapper: float) -> Cost:
        """Writer-thread CPU seconds per job for the ``jobs`` jobs ``submit`` queues while the
        writer is held: all, and outside SQLite's calls."""
        gate = threading.Event()

        def hold(_store: Any) -> tuple[float, float, int]:
            gate.wait()
            return self._now()

        before = self.writer.submit(hold)
        futures = submit()
        after = self.writer.submit(lambda _store: self._now())
        gate.set()
        for f in futures:
            f.result()
        (cpu0, in0, calls0), (cpu1, in1, calls1) = before.result(), after.result()
        cpu = cpu1 - cpu0
        python = cpu - (in1 - in0) - (calls1 - calls0) * wrapper
        return cpu / jobs, python / jobs

    def age(self, keys: list[str]) -> None:
        """Mark the games as last touched long ago (outside any measurement)."""
        conn = self.timed._conn
        conn.executemany(
            "UPDATE live_games SET touched_at = '2000-01-01T00:00:00+00:00' WHERE key = ?",
            [(k,) for k in keys],
        )

    def start_games(self, games: int) -> list[str]:
        keys = []
        begun = {**self.record, "moves": [], "over": False, "winner": None}
        for _ in range(games):
            self.serial += 1
            key = f"{self.prefix}{self.serial}"
            self.store.add_live_game(key, begun, {"tokens": ["a", "b"]})
            keys.append(key)
        return keys

    def add_moves(self, keys: list[str], per_job: int, wrapper: float, *, aged: bool) -> Cost:
        """CPU per job for 10 moves to each game, ``per_job`` moves a job; ``aged``: each
        game last touched long ago."""
        moves = self.record["moves"]
        cpu = python = 0.0
        rounds = 0
        for first in range(1, 11, per_job):
            chunk = moves[first - 1 : first - 1 + per_job]

            def submit(first: int = first, chunk: list[Any] = chunk) -> list[Any]:
                return [self.writer.add_moves(key, first, chunk) for key in keys]

            if aged:
                self.writer.submit(lambda _store: self.age(keys)).result()
            c, p = self._held(submit, len(keys), wrapper)
            cpu, python, rounds = cpu + c, python + p, rounds + 1
        return cpu / rounds, python / rounds

    def finish(self, keys: list[str], wrapper: float, *, method: bool) -> Cost:
        """CPU per ``finish_live_game`` job of each game: submitted as a function, or with
        ``StoreWriter.finish_game`` (``method``, when the package has it)."""
        record = self.record
        writer = self.writer

        def submit() -> list[Any]:
            if method and hasattr(writer, "finish_game"):
                return [writer.finish_game(key, record, [None, None]) for key in keys]
            return [
                writer.submit(
                    lambda store, key=key: store.finish_live_game(key, record, [None, None])
                )
                for key in keys
            ]

        return self._held(submit, len(keys), wrapper)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=50, help="jobs per group transaction")
    parser.add_argument("--rounds", type=int, default=7, help="measurements of each shape")
    parser.add_argument("--base", default=BASE, help="the git commit of the baseline")
    parser.add_argument(
        "--postgres", metavar="URL", help="also measure the new code on this PostgreSQL database"
    )
    args = parser.parse_args()
    record = ten_move_record()
    wrapper = min(wrapper_cost() for _ in range(3))
    new_package = importlib.import_module("nimlab.storage")
    shapes = {
        "add_moves 1 move": (1, True),
        "add_moves 2 moves": (2, True),
        "add_moves 1, same second": (1, False),
    }
    best: dict[tuple[str, str, bool], float] = {}

    def keep(shape: str, name: str, seconds: float, timed: bool) -> None:
        best[shape, name, timed] = min(best.get((shape, name, timed), 1e9), seconds)

    with tempfile.TemporaryDirectory() as tmp:
        old_package = load_old(args.base, Path(tmp))
        places: list[tuple[str, ModuleType, Path | str]] = [
            ("old", old_package, Path(tmp) / "old"),
            ("new", new_package, Path(tmp) / "new"),
        ]
        if args.postgres:
            places.append(("pg", new_package, args.postgres))
        run = secrets.token_hex(4)
        rigs = {
            (name, timed): Rig(
                package,
                where if isinstance(where, str) else where.with_suffix(f".{timed}.db"),
                record,
                timed=timed,
                prefix=f"b{run}{name}{int(timed)}-",
            )
            for name, package, where in places
            for timed in (False, True)
        }
        try:
            for round_ in range(args.rounds + 1):  # the first round warms up
                for (name, timed), rig in rigs.items():
                    for shape, (per_job, aged) in shapes.items():
                        keys = rig.start_games(args.games)
                        moves = rig.add_moves(keys, per_job, wrapper, aged=aged)
                        method = per_job == 1  # the other shapes finish with submit(fn)
                        finish = rig.finish(keys, wrapper, method=method)
                        if round_:
                            keep(shape, name, moves[1] if timed else moves[0], timed)
                            last = "finish_game" if method else "finish via submit"
                            keep(last, name, finish[1] if timed else finish[0], timed)
        finally:
            for rig in rigs.values():
                rig.close()
    print(
        f"writer-thread CPU per job in µs, {args.games} jobs per group, best of {args.rounds} "
        f"(wrapper cost {wrapper * 1e6:.2f} µs per SQLite call taken off)"
    )
    print(
        f"{'job':<26}{'cpu old':>9}{'cpu new':>9}{'old/new':>9}"
        f"{'py old':>9}{'py new':>9}{'old/new':>9}"
    )
    for shape in [*shapes, "finish_game", "finish via submit"]:
        c_old, c_new = best[shape, "old", False], best[shape, "new", False]
        p_old, p_new = best[shape, "old", True], best[shape, "new", True]
        print(
            f"{shape:<26}{c_old * 1e6:>9.1f}{c_new * 1e6:>9.1f}{c_old / c_new:>9.2f}"
            f"{p_old * 1e6:>9.1f}{p_new * 1e6:>9.1f}{p_old / p_new:>9.2f}"
        )
    if not args.postgres:
        return
    print("\nthe new code on PostgreSQL beside SQLite (pg/sqlite > 1: PostgreSQL costs more)")
    print(
        f"{'job':<26}{'cpu sql':>9}{'cpu pg':>9}{'pg/sql':>9}{'py sql':>9}{'py pg':>9}{'pg/sql':>9}"
    )
    for shape in [*shapes, "finish_game", "finish via submit"]:
        c_sql, c_pg = best[shape, "new", False], best[shape, "pg", False]
        p_sql, p_pg = best[shape, "new", True], best[shape, "pg", True]
        print(
            f"{shape:<26}{c_sql * 1e6:>9.1f}{c_pg * 1e6:>9.1f}{c_pg / c_sql:>9.2f}"
            f"{p_sql * 1e6:>9.1f}{p_pg * 1e6:>9.1f}{p_pg / p_sql:>9.2f}"
        )


if __name__ == "__main__":
    main()
