"""The web app under load: 50 simultaneous games, each a person against the perfect bot on plain
Nim (issue 4 target: p99 latency of a move request, the bot's reply included, under 50 ms).

A real ``nimlab serve`` (its own process, a fresh database, every move saved before the answer)
on 127.0.0.1; 50 clients, one per game, each sending a random legal move, waiting for the answer
(which carries the bot's reply), "thinking" a moment (``--think``, seconds, uniform), and playing
on; a finished game is replaced by a new one. Only loopback addresses are used, the run is bounded
in time, and the server is stopped at the end.

The baseline, measured in the same run: the bare core, ``Game.push`` + ``Game.play_bot`` on the
same kind of positions, in this process. Also printed: the same load with no thinking time at all
(every client sends its next move as soon as it has the answer), a stress figure.

Run: ``python bench/bench_web.py`` (``--games 50 --seconds 20 --think 0.1-0.5``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from nimlab.core.game import Game


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1))))
    return ordered[k]


def deal(rng: random.Random) -> list[int]:
    return [rng.randint(3, 15) for _ in range(rng.randint(3, 5))]


def random_move(rng: random.Random, piles: list[int]) -> tuple[int, int]:
    choices = [i for i, n in enumerate(piles, 1) if n]
    pile = rng.choice(choices)
    return pile, rng.randint(1, piles[pile - 1])


def core_baseline(samples: int, seed: int = 1) -> list[float]:
    """Seconds per push + play_bot in the bare core, on positions like the ones served."""
    rng = random.Random(seed)
    times: list[float] = []
    while len(times) < samples:
        game = Game("nim", deal(rng), ["human:Ann", "bot:perfect:Hal"], seed=rng.randrange(1 << 30))
        while not game.is_over and len(times) < samples:
            pile, take = random_move(rng, list(game.board.heaps))
            t = time.perf_counter()
            game.push(f"{pile} {take}")
            if not game.is_over:
                game.play_bot()
            times.append(time.perf_counter() - t)
    return times


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(db: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen(
        [sys.executable, "-m", "nimlab", "serve", "--port", str(port), "--db", str(db)],
        stdout=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 30
    while True:
        try:
            with urllib.request.urlopen(url + "/api/games", timeout=2):
                return proc, url
        except OSError:
            if time.monotonic() > deadline or proc.poll() is not None:
                proc.kill()
                raise SystemExit("the server did not start") from None
            time.sleep(0.1)


class Connection:
    """A minimal HTTP/1.1 keep-alive client on one loopback connection (the load generator must
    cost the server's two cores as little as possible; a full client library costs more than the
    server it measures)."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def post(self, path: str, body: Any) -> tuple[int, Any]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        assert self.reader is not None
        data = json.dumps(body).encode()
        self.writer.write(
            f"POST {path} HTTP/1.1\r\nHost: {self.host}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(data)}\r\n\r\n".encode()
            + data
        )
        head = await self.reader.readuntil(b"\r\n\r\n")
        status = int(head.split(b" ", 2)[1])
        length = int(re.search(rb"(?i)content-length: *(\d+)", head).group(1))  # type: ignore[union-attr]
        return status, json.loads(await self.reader.readexactly(length))

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


async def player(
    url: str,
    seed: int,
    stop_at: float,
    think: tuple[float, float],
    latencies: list[float],
    errors: list[str],
) -> None:
    rng = random.Random(seed)
    host, port = url.removeprefix("http://").split(":")
    conn = Connection(host, int(port))
    try:
        while time.monotonic() < stop_at:
            status, created = await conn.post(
                "/api/games",
                {
                    "players": [{"name": "Ann"}, {"name": "Hal", "kind": "perfect"}],
                    "piles": deal(rng),
                    "seed": rng.randrange(1 << 30),
                },
            )
            if status != 201:
                errors.append(f"{status} {created}")
                return
            key, token = created["state"]["id"], created["seats"][0]["token"]
            state: dict[str, Any] = created["state"]
            while not state["over"] and time.monotonic() < stop_at:
                if think[1] > 0:
                    await asyncio.sleep(rng.uniform(*think))
                pile, take = random_move(rng, state["board"]["piles"])
                t = time.perf_counter()
                status, state = await conn.post(
                    f"/api/games/{key}/moves",
                    {"seat": 0, "token": token, "pile": pile, "take": take},
                )
                latencies.append(time.perf_counter() - t)
                if status != 200:
                    errors.append(f"{status} {state}")
                    return
                if not state["over"] and state["to_move"] != 0:
                    errors.append("the answer came before the bot's reply")
    finally:
        conn.close()


async def load(url: str, games: int, seconds: float, think: tuple[float, float]) -> Any:
    latencies: list[float] = []
    errors: list[str] = []
    stop_at = time.monotonic() + seconds
    await asyncio.gather(*(player(url, i, stop_at, think, latencies, errors) for i in range(games)))
    return latencies, errors


def report(name: str, values: list[float]) -> tuple[float, float]:
    med, p99 = statistics.median(values), percentile(values, 99)
    print(
        f"  {name:<52} n={len(values):>6}  median {med * 1000:7.2f} ms  "
        f"p95 {percentile(values, 95) * 1000:7.2f} ms  p99 {p99 * 1000:7.2f} ms  "
        f"max {max(values) * 1000:7.2f} ms"
    )
    return med, p99


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--think", default="0.1-0.5", help="seconds between moves, LOW-HIGH")
    parser.add_argument("--warmup", type=float, default=5.0, help="seconds of load not measured")
    args = parser.parse_args()
    low, _, high = args.think.partition("-")
    think = (float(low), float(high or low))

    core = core_baseline(3000)
    with tempfile.TemporaryDirectory() as tmp:
        proc, url = start_server(Path(tmp) / "bench.db")
        try:
            asyncio.run(load(url, args.games, args.warmup, think))  # warm caches: not measured
            paced, errors = asyncio.run(load(url, args.games, args.seconds, think))
            flat, errors2 = asyncio.run(load(url, args.games, args.seconds / 2, (0.0, 0.0)))
        finally:
            proc.terminate()
            proc.wait(20)
    print(
        f"{args.games} simultaneous games, a person against the perfect bot on plain Nim "
        f"(3-5 piles of 3-15); target: p99 of a move request under 50 ms"
    )
    core_med, core_p99 = report("baseline: core Game.push + play_bot (in process)", core)
    med, p99 = report(f"web: move request + bot reply, thinking {args.think} s", paced)
    report("web, stress: no thinking time (closed loop)", flat)
    rate = len(paced) / args.seconds
    print(f"  move requests per second (paced run): {rate:.0f}")
    print(
        f"  ratio web / core: median {med / core_med:.0f}x, p99 {p99 / core_p99:.0f}x "
        f"(HTTP, JSON, seat checks, the move saved to SQLite before the answer)"
    )
    print(f"  p99 target (50 ms): {'met' if p99 < 0.050 else 'NOT met'}")
    for e in (errors + errors2)[:5]:
        print("  error:", e)
    if errors or errors2:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
