"""SIGKILL under load (issue 18): two ``nimlab serve`` processes on one database, ``--games``
people each playing the perfect bot and sending each move to either process; every ``--every``
seconds one process is killed with SIGKILL and started again. A client whose request fails (the
connection broke, 503) sends the same move to the other process: a move already played answers
as a retry, so nothing is played twice. At the end every acknowledged move must be in the
database, at its number, as it was acknowledged; the figures: moves acknowledged, kills, retries,
and acknowledged moves missing (0).

Run: ``python bench/bench_kill.py`` (SQLite; ``--postgres URL`` or ``--postgres start`` for
PostgreSQL; ``--games 100 --seconds 30 --every 5``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import signal
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_web as web


class Club:
    """The two servers: their URLs as they are now (a restarted one listens elsewhere)."""

    def __init__(self, db: Path | str) -> None:
        self.db = db
        self.servers = [web.start_server(db, 1) for _ in range(2)]
        self.kills = 0

    def url(self, i: int) -> str:
        return self.servers[i % 2][1]

    def kill_and_restart(self, i: int) -> None:
        proc, _ = self.servers[i]
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(30)
        self.kills += 1
        self.servers[i] = web.start_server(self.db, 1)

    def stop(self) -> None:
        for proc, _ in self.servers:
            proc.terminate()
        for proc, _ in self.servers:
            proc.wait(60)


async def person(
    club: Club, seed: int, stop_at: float, acked: dict[str, list[tuple[int, int, int]]], out: Any
) -> None:
    rng = random.Random(seed)
    side = rng.randrange(2)
    conns: dict[str, web.Connection] = {}

    async def post(path: str, body: Any) -> tuple[int, Any]:
        nonlocal side
        for _ in range(200):
            url = club.url(side)
            host, port = url.removeprefix("http://").split(":")
            conn = conns.setdefault(url, web.Connection(host, int(port)))
            try:
                status, answer = await conn.post(path, body)
            except (OSError, asyncio.IncompleteReadError):
                status, answer = 0, None
                conns.pop(url).close()
            if status not in (0, 503):
                return status, answer
            out["retries"] += 1
            side += 1  # the other process
            await asyncio.sleep(0.05)
        raise RuntimeError("no process answered")

    while time.monotonic() < stop_at:
        game = {
            "players": [{"name": "Ann"}, {"name": "Hal", "kind": "perfect"}],
            "piles": web.deal(rng),
            "seed": rng.randrange(1 << 30),
        }
        status, created = await post("/api/games", game)
        if status != 201:
            out["errors"].append(f"{status} {created}")
            return
        key, token = created["state"]["id"], created["seats"][0]["token"]
        state = created["state"]
        acked[key] = []
        while not state["over"] and time.monotonic() < stop_at:
            pile, take = web.random_move(rng, state["board"]["piles"])
            turn = state["move_count"] + 1
            body = {"seat": 0, "token": token, "turn": turn, "pile": pile, "take": take}
            side = rng.randrange(2)
            status, answer = await post(f"/api/games/{key}/moves", body)
            if status != 200:
                out["errors"].append(f"{status} {answer}")
                return
            acked[key].append((turn, pile, take))
            state = answer
            out["moves"] += 1
            await asyncio.sleep(rng.uniform(0, 0.2))
    for conn in conns.values():
        conn.close()


async def killer(club: Club, stop_at: float, every: float) -> None:
    i = 0
    loop = asyncio.get_running_loop()
    while time.monotonic() + every < stop_at:
        await asyncio.sleep(every)
        await loop.run_in_executor(None, club.kill_and_restart, i % 2)
        i += 1


def check(club: Club, acked: dict[str, list[tuple[int, int, int]]]) -> list[str]:
    """The acknowledged moves missing from the database (or stored otherwise)."""
    missing = []
    for key, moves in acked.items():
        url = f"{club.url(0)}/api/games/{key}?since=0"
        with urllib.request.urlopen(url, timeout=60) as r:
            state = json.loads(r.read())
        turns = {t["number"]: t for t in state["turns"]}
        for turn, pile, take in moves:
            stored = turns.get(turn)
            if stored is None or (stored["move"]["pile"], stored["move"]["take"]) != (pile, take):
                missing.append(f"{key} move {turn}")
    return missing


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--every", type=float, default=5.0)
    parser.add_argument("--postgres", help="a cluster's URL, or 'start' for a throwaway one")
    args = parser.parse_args()
    acked: dict[str, list[tuple[int, int, int]]] = {}
    out: dict[str, Any] = {"moves": 0, "retries": 0, "errors": []}
    with contextlib.ExitStack() as stack:
        tmp = stack.enter_context(tempfile.TemporaryDirectory())
        cluster = None
        if args.postgres:
            given = None if args.postgres == "start" else args.postgres
            cluster = stack.enter_context(web.postgres_cluster(given))
        db: Path | str = Path(tmp) / "kill.db"
        if cluster is not None:
            db = web.new_postgres_database(cluster)
        club = Club(db)
        try:
            stop_at = time.monotonic() + args.seconds

            async def run() -> None:
                people = [person(club, i, stop_at, acked, out) for i in range(args.games)]
                await asyncio.gather(killer(club, stop_at, args.every), *people)

            web.run(run())
            missing = check(club, acked)
        finally:
            club.stop()
    kind = "SQLite" if cluster is None else "PostgreSQL"
    print(f"Two processes on one {kind} database, one killed (SIGKILL) every {args.every:g} s")
    print(
        f"  moves acknowledged {out['moves']:,} in {len(acked):,} games; kills {club.kills}; "
        f"requests retried on the other process {out['retries']:,}"
    )
    print(f"  acknowledged moves missing or changed: {len(missing)} (must be 0)")
    for e in (missing + out["errors"])[:5]:
        print("  error:", e)
    if missing or out["errors"]:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
