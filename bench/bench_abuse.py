"""One client against everyone else (issue 20): the heavy versions of tests/test_reliability.py.

Each attack runs from one loopback address (127.0.0.2) against ``nimlab serve`` in a process of
its own with a fresh database and its default settings, while a victim on another address
(127.0.0.3) plays a game between two people, move after move; the victim's move latency
(p50/p99) is printed beside a quiet baseline measured in the same run, with the ratio.

- ``connections``: ``--connections`` (default 4,200) WebSockets on one game from one address:
  how many were admitted and refused (1013 / 429), and the server's memory (RSS) before, while
  held and after they closed;
- ``many-pages``: ``--pages`` (default 3,900: Uvicorn's bound on all connections is 4,096)
  WebSockets from many loopback addresses (60 each, within the bounds per client; 400 per
  game): all admitted, and the memory before, while held and after they closed;
- ``slow-bodies``: ``--slow`` (default 300) requests sending their body one byte every 2 s:
  how many were cut (408) or refused (429);
- ``heavy-bots``: ``--heavy`` (default 20) games of ``--heavy-players`` (default 6) perfect
  bots on misère Kayles, 10 rows of ``--heavy-row`` (default 100) stones, each watched by one
  open page (they would pause unwatched), then stopped by their owner token;
- ``registrations``: ``--registrations`` (default 3,000) players registered as fast as
  possible: how many were accepted (201) and refused (429);
- ``restart``: ``--restart-games`` (default 1,100) games in play (from many loopback addresses,
  each within its own bounds), the server restarted: how many answer after it, and how long it
  took to start.

Only loopback addresses are used. Run: ``python bench/bench_abuse.py`` (``--only heavy-bots``
for one attack; ``--moves 60`` victim moves per measurement).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from websockets.asyncio.client import connect as ws_connect

ATTACKER = "127.0.0.2"
VICTIM = "127.0.0.3"
ANN, BOB = {"name": "Ann"}, {"name": "Bob"}


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1))))]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


class Server:
    """``nimlab serve`` on 127.0.0.1 in a process of its own."""

    def __init__(self, db: Path, port: int) -> None:
        self.db, self.port = db, port
        self.url = f"http://127.0.0.1:{port}"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> float:
        """Start and wait until it answers; returns the seconds that took."""
        began = time.monotonic()
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "nimlab",
                "serve",
                "--port",
                str(self.port),
                "--db",
                str(self.db),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        while True:
            try:
                if httpx.get(self.url + "/api/options", timeout=2).status_code == 200:
                    return time.monotonic() - began
            except httpx.HTTPError:
                pass
            if self.proc.poll() is not None or time.monotonic() - began > 120:
                raise RuntimeError("the server did not start")
            time.sleep(0.1)

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
            self.proc = None

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def client(self, source: str) -> httpx.AsyncClient:
        transport = httpx.AsyncHTTPTransport(local_address=source, retries=0)
        return httpx.AsyncClient(base_url=self.url, transport=transport, timeout=60)


async def victim(server: Server, moves: int) -> list[float]:
    """A game between two people on another address: the latency of each move, in seconds."""
    async with server.client(VICTIM) as c:
        r = await c.post("/api/games", json={"players": [ANN, BOB], "piles": [500, 500]})
        r.raise_for_status()
        created = r.json()
        key = created["state"]["id"]
        tokens = {s["seat"]: s["token"] for s in created["seats"]}
        out = []
        for turn in range(1, moves + 1):
            seat = (turn - 1) % 2
            body = {"seat": seat, "token": tokens[seat], "turn": turn, "pile": 1 + seat, "take": 1}
            began = time.perf_counter()
            r = await c.post(f"/api/games/{key}/moves", json=body)
            out.append(time.perf_counter() - began)
            if r.status_code == 429:  # the victim's own move rate: not what is measured
                await asyncio.sleep(float(r.headers.get("retry-after", "1")))
            await asyncio.sleep(0.05)
        return out


def line(name: str, values: list[float], quiet: tuple[float, float] | None) -> tuple[float, float]:
    p50, p99 = percentile(values, 50) * 1000, percentile(values, 99) * 1000
    ratio = "" if quiet is None else f"   x{p50 / quiet[0]:.1f} / x{p99 / quiet[1]:.1f} of quiet"
    print(f"  victim {name:<14} p50 {p50:7.1f} ms   p99 {p99:7.1f} ms{ratio}", flush=True)
    return p50, p99


async def connections(server: Server, count: int) -> dict[str, Any]:
    async with server.client(ATTACKER) as c:
        key = (await c.post("/api/games", json={"players": [ANN, BOB], "piles": [3]})).json()[
            "state"
        ]["id"]
    before = rss_mb(server.pid)
    opened: list[Any] = []
    refused = 0
    url = f"ws://127.0.0.1:{server.port}/api/games/{key}/live"
    for _ in range(count):
        try:
            sock = socket.create_connection(("127.0.0.1", server.port), 10, (ATTACKER, 0))
            sock.setblocking(False)
            ws = await ws_connect(url, sock=sock, open_timeout=10)
            first = await ws.recv()
            if '"error"' in str(first):
                refused += 1
                await ws.close()
            else:
                opened.append(ws)
        except Exception:
            refused += 1
    held = rss_mb(server.pid)
    return {"key": key, "opened": opened, "refused": refused, "before": before, "held": held}


async def many_pages(server: Server, count: int, moves: int) -> dict[str, Any]:
    """``count`` pages from 60-page clients on games of 400 pages; RSS before, held, after;
    the victim's latencies while they are held."""
    keys = []
    async with server.client("127.0.3.1") as c:
        for _ in range((count + 399) // 400):
            r = await c.post("/api/games", json={"players": [ANN, BOB], "piles": [3]})
            keys.append(r.json()["state"]["id"])
    before = rss_mb(server.pid)
    opened, refused = [], 0
    for i in range(count):
        url = f"ws://127.0.0.1:{server.port}/api/games/{keys[i // 400]}/live"
        try:
            sock = socket.create_connection(
                ("127.0.0.1", server.port), 10, (f"127.0.4.{1 + i // 60}", 0)
            )
            sock.setblocking(False)
            ws = await ws_connect(url, sock=sock, open_timeout=10)
            if '"error"' in str(await ws.recv()):
                refused += 1
            opened.append(ws)
        except Exception:
            refused += 1
    held = rss_mb(server.pid)
    lat = await victim(server, moves)
    for ws in opened:
        await ws.close()
    await asyncio.sleep(8)  # the server gives memory back once the closes are over
    after = rss_mb(server.pid)
    return {
        "admitted": len(opened) - refused,
        "refused": refused,
        "before": before,
        "held": held,
        "after": after,
        "lat": lat,
    }


async def slow_bodies(server: Server, count: int) -> dict[str, int]:
    async def one() -> str:
        try:
            reader, writer = await asyncio.open_connection(
                "127.0.0.1", server.port, local_addr=(ATTACKER, 0)
            )
        except OSError:
            return "refused"
        writer.write(
            b"POST /api/players HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
            b"content-length: 100000\r\n\r\n"
        )
        try:
            for _ in range(30):
                writer.write(b" ")
                await writer.drain()
                with contextlib.suppress(TimeoutError):
                    head = await asyncio.wait_for(reader.read(64), 2.0)
                    return head.split(b" ")[1].decode() if head else "closed"
            return "still open"
        except (ConnectionError, IndexError):
            return "closed"
        finally:
            writer.close()

    results = await asyncio.gather(*(one() for _ in range(count)))
    return {r: results.count(r) for r in set(results)}


async def heavy_bots(
    server: Server, count: int, players: int, row: int
) -> tuple[list[Any], list[tuple[str, str]]]:
    setup = {
        "players": [{"kind": "perfect"}] * players,
        "piles": [row] * 10,
        "game": "kayles",
        "misere": True,
    }
    pages, owned = [], []
    async with server.client(ATTACKER) as c:
        for i in range(count):
            r = await c.post("/api/games", json=setup | {"seed": i})
            if r.status_code != 201:
                print(f"  heavy game {i}: {r.status_code} {r.text[:80]}")
                continue
            key = r.json()["state"]["id"]
            owned.append((key, r.json()["owner_token"]))
            sock = socket.create_connection(("127.0.0.1", server.port), 10, (ATTACKER, 0))
            sock.setblocking(False)
            pages.append(
                await ws_connect(f"ws://127.0.0.1:{server.port}/api/games/{key}/live", sock=sock)
            )
    return pages, owned


async def registrations(server: Server, count: int) -> dict[int, int]:
    async with server.client(ATTACKER) as c:

        async def one(i: int) -> int:
            body = {"username": f"flood{i}", "given": "F", "family": str(i)}
            return (await c.post("/api/players", json=body)).status_code

        codes: list[int] = []
        for start in range(0, count, 100):
            codes += await asyncio.gather(*(one(i) for i in range(start, start + 100)))
    return {code: codes.count(code) for code in set(codes)}


async def fill(server: Server, games: int) -> list[str]:
    """``games`` games in play, 20 from each of as many loopback addresses as it takes."""
    keys: list[str] = []
    address = 0
    while len(keys) < games:
        address += 1
        async with server.client(f"127.0.2.{address}") as c:
            for _ in range(min(20, games - len(keys))):
                r = await c.post("/api/games", json={"players": [ANN, BOB], "piles": [3, 4]})
                r.raise_for_status()
                keys.append(r.json()["state"]["id"])
    return keys


async def answering(server: Server, keys: list[str]) -> int:
    async with server.client("127.0.0.4") as c:
        found = 0
        for start in range(0, len(keys), 50):
            rs = await asyncio.gather(*(c.get(f"/api/games/{k}") for k in keys[start : start + 50]))
            found += sum(1 for r in rs if r.status_code == 200 and not r.json()["over"])
        return found


async def attack(name: str, server: Server, args: argparse.Namespace) -> Any:
    """Run one attack beside the victim; returns the victim's latencies."""
    if name == "connections":
        flood = await connections(server, args.connections)
        lat = await victim(server, args.moves)
        for ws in flood["opened"]:
            await ws.close()
        await asyncio.sleep(3)
        print(
            f"  {len(flood['opened'])} WebSockets admitted, {flood['refused']} refused; RSS "
            f"{flood['before']:.0f} MB before, {flood['held']:.0f} MB held, "
            f"{rss_mb(server.pid):.0f} MB after they closed"
        )
        return lat
    if name == "many-pages":
        m = await many_pages(server, args.pages, args.moves)
        print(
            f"  {m['admitted']:.0f} WebSockets admitted, {m['refused']:.0f} refused; RSS "
            f"{m['before']:.0f} MB before, {m['held']:.0f} MB held, {m['after']:.0f} MB after "
            "they closed"
        )
        return m["lat"]
    if name == "slow-bodies":
        slow = asyncio.ensure_future(slow_bodies(server, args.slow))
        await asyncio.sleep(1)
        lat = await victim(server, args.moves)
        print(f"  slow bodies: {await slow}")
        return lat
    if name == "heavy-bots":
        pages, owned = await heavy_bots(server, args.heavy, args.heavy_players, args.heavy_row)
        await asyncio.sleep(2)
        lat = await victim(server, args.moves)
        async with server.client(ATTACKER) as c:
            stopped = [
                (await c.post(f"/api/games/{k}/stop", json={"token": t})).status_code
                for k, t in owned
            ]
        for ws in pages:
            await ws.close()
        print(f"  {len(owned)} heavy games, stopped by their owner: {stopped.count(200)}")
        return lat
    if name == "registrations":
        flood = asyncio.ensure_future(registrations(server, args.registrations))
        lat = await victim(server, args.moves)
        print(f"  registrations: {await flood}")
        return lat
    raise ValueError(name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--moves", type=int, default=40)
    parser.add_argument("--connections", type=int, default=4200)
    parser.add_argument("--pages", type=int, default=3900)
    parser.add_argument("--slow", type=int, default=300)
    parser.add_argument("--heavy", type=int, default=20)
    parser.add_argument("--heavy-players", type=int, default=6, help="perfect bots per game")
    parser.add_argument("--heavy-row", type=int, default=100, help="stones in each of 10 rows")
    parser.add_argument("--registrations", type=int, default=3000)
    parser.add_argument("--restart-games", type=int, default=1100)
    attacks = ["connections", "many-pages", "slow-bodies", "heavy-bots", "registrations", "restart"]
    parser.add_argument("--only", choices=attacks, action="append")
    args = parser.parse_args()
    todo = args.only or attacks
    os.environ.setdefault("NIMLAB_MAX_GAMES_IN_PLAY", "5000")
    with tempfile.TemporaryDirectory() as tmp:
        server = Server(Path(tmp) / "abuse.db", free_port())
        print(f"server started in {server.start():.1f} s", flush=True)
        try:
            quiet = line("quiet", asyncio.run(victim(server, args.moves)), None)
            for name in todo:
                if name == "restart":
                    continue
                print(f"{name}:", flush=True)
                line(name, asyncio.run(attack(name, server, args)), quiet)
            if "restart" in todo:
                print("restart:", flush=True)
                keys = asyncio.run(fill(server, args.restart_games))
                server.stop()
                took = server.start()
                found = asyncio.run(answering(server, keys))
                print(f"  {found} of {len(keys)} games answer after a restart ({took:.1f} s)")
                line("restart", asyncio.run(victim(server, args.moves)), quiet)
        finally:
            server.stop()


if __name__ == "__main__":
    main()
