"""One client against everyone else (issue 20): the heavy versions of tests/test_reliability.py.

Each attack runs from one loopback address (127.0.0.2) against ``nimlab serve`` in a process of
its own with a fresh database and its default settings, while a victim on another network
(127.9.0.3) plays a game between two people, move after move; the victim's move latency
(p50/p99) is printed beside a quiet baseline measured in the same run, with the ratio.

The crowd attacks (issue 23) each run on a fresh server, with an honest client (127.9.0.3)
measured before, during and ``--after`` seconds (default 60) after the attack, as ratios of its
p50/p99 to the quiet run, with its 5xx answers, the slowest ``/healthz`` of a probe asking every
0.1 s beside it, the server's RSS and the CPU it used during the attack and in the after
window. The crowd runs in a process of its own, below the others for the operating system (its
event loop is not the honest client's, and its processor would be another machine's: a busy
attacker would otherwise delay the reading of the honest answers), and the measuring starts
once the server has prepared its solvers (``/readyz``; the seconds that took are printed):

- ``crowd-creates``: ``--crowd`` (default 260) addresses, 10 per /24, each starting 20 games;
- ``crowd-sockets``: ``--socket-clients`` (default 80) addresses, 10 per /24, 55 WebSockets each;
- ``slow-headers``: 20 addresses x ``--slow-headers`` (default 250) connections that send half a
  request head, and reconnect when cut (from ``--crowd-processes`` processes, default 1);
- ``pipelined-reads``: ``--readers`` (default 20) connections pipelining ``GET /api/games/KEY``;
- ``heavy-analyses``: analyses and hints of heavy games (Kayles of 1,000 stones, misère games of
  3-5 players, Grundy's game), each request given up after 0.5 s (the asker leaves);
- ``perfect-bots``: ``--bot-games`` (default 100) games of perfect bots from 10 addresses, each
  watched by a page; the honest client plays against a perfect bot here and in heavy-analyses.

``--quick`` makes the crowds smaller (and the server's bounds with them: 1,000 games in play,
1,024 connections), ``--after 10`` and ``--restart-games`` at most 300.

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
  one per network, each within its own bounds; fewer when the bound on games in play refuses
  more), the server restarted: how many answer after it, and how long it took to start.

``registrations`` counts as ``cut`` the requests whose connection the server closed unanswered:
100 at once from one address are more unfinished request heads than an address may hold.

Only loopback addresses are used. Run: ``python bench/bench_abuse.py`` (``--only heavy-bots``
for one attack; ``--moves 60`` victim moves per measurement).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import multiprocessing
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
from websockets.asyncio.client import connect as ws_connect

ATTACKER = "127.0.0.2"
VICTIM = "127.9.0.3"
PROBE = "127.9.0.4"
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
        """Start and wait until it answers; returns the seconds that took (the solvers may still
        be prepared: see :meth:`until_ready`)."""
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

    def until_ready(self) -> float:
        """Wait until ``/readyz`` says the solvers are prepared; returns the seconds waited."""
        began = time.monotonic()
        while time.monotonic() - began < 600:
            with contextlib.suppress(httpx.HTTPError, ValueError):
                if httpx.get(self.url + "/readyz", timeout=5).json().get("solvers") == "ready":
                    break
            time.sleep(0.2)
        return time.monotonic() - began

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


async def registrations(server: Server, count: int) -> dict[int | str, int]:
    async with server.client(ATTACKER) as c:

        async def one(i: int) -> int | str:
            body = {"username": f"flood{i}", "given": "F", "family": str(i)}
            try:
                return (await c.post("/api/players", json=body)).status_code
            except httpx.HTTPError:  # beyond the unfinished heads an address may hold: cut
                return "cut"

        codes: list[int | str] = []
        for start in range(0, count, 100):
            codes += await asyncio.gather(*(one(i) for i in range(start, start + 100)))
    return {code: codes.count(code) for code in set(codes)}


async def fill(server: Server, games: int) -> list[str]:
    """Up to ``games`` games in play, 20 from each of as many loopback addresses as it takes,
    one per network (a network's bounds would refuse more); an address refused (429: the last
    games in play are kept for networks holding little) gives way to the next, and the filling
    stops when 20 addresses in a row were refused."""
    keys: list[str] = []
    address, refused = 0, 0
    while len(keys) < games and refused < 20 and address < 254 * 254:
        address += 1
        async with server.client(f"127.{2 + address // 254}.{address % 254}.1") as c:
            for _ in range(min(20, games - len(keys))):
                r = await c.post("/api/games", json={"players": [ANN, BOB], "piles": [3, 4]})
                if r.status_code == 429:
                    refused += 1
                    break
                r.raise_for_status()
                keys.append(r.json()["state"]["id"])
                refused = 0
    return keys


async def answering(server: Server, keys: list[str]) -> int:
    """How many of the games ``keys`` answer as in play, asked 25 at a time (an address may
    hold 32 connections that have not sent a whole request head), each 25 from an address of
    its own (one address would meet the bound on reads)."""
    found = 0
    for start in range(0, len(keys), 25):
        async with server.client(f"127.4.{start // 25 % 254}.{1 + start // 6350}") as c:
            rs = await asyncio.gather(*(c.get(f"/api/games/{k}") for k in keys[start : start + 25]))
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


# -- the crowd attacks (issue 23) ---------------------------------------------------------------

CROWDS = [
    "crowd-creates",
    "crowd-sockets",
    "slow-headers",
    "pipelined-reads",
    "heavy-analyses",
    "perfect-bots",
]


def crowd_address(kind: int, i: int) -> str:
    """The ``i``-th address of a crowd: 10 per /24 (127.KIND.NET.HOST)."""
    return f"127.{kind}.{i // 10}.{1 + i % 10}"


async def honest(server: Server, moves: int, bot: bool) -> tuple[list[float], str]:
    """The honest client: a game between two people (or against a perfect bot, whose replies
    come in the move's answer), ``moves`` moves; latencies, and what was refused ("" if none:
    else the last refusal, with the number of 5xx answers)."""
    second = {"kind": "perfect"} if bot else BOB
    out: list[float] = []
    async with server.client(VICTIM) as c:
        try:
            r = await c.post("/api/games", json={"players": [ANN, second], "piles": [500] * 3})
        except httpx.HTTPError as e:
            return out, f"start: {type(e).__name__}"
        if r.status_code != 201:
            return out, f"start: {r.status_code}"
        errors = 0
        created = r.json()
        key = created["state"]["id"]
        tokens = {s["seat"]: s["token"] for s in created["seats"]}
        turn, refused, piles = 1, "", [500] * 3
        for _ in range(moves):
            seat = 0 if bot else (turn - 1) % 2
            pile = 1 + seat if not bot else 1 + next(i for i, p in enumerate(piles) if p)
            body = {"seat": seat, "token": tokens[seat], "turn": turn, "pile": pile, "take": 1}
            began = time.perf_counter()
            try:
                r = await c.post(f"/api/games/{key}/moves", json=body)
            except httpx.HTTPError as e:
                refused = f"move: {type(e).__name__}"
                continue
            out.append(time.perf_counter() - began)
            if r.status_code == 200:
                turn, piles = r.json()["move_count"] + 1, r.json()["board"]["piles"]
                if r.json()["over"]:
                    break
            elif r.status_code == 429:
                await asyncio.sleep(float(r.headers.get("retry-after", "1")))
            else:
                refused = f"move: {r.status_code}"
                errors += r.status_code >= 500
            await asyncio.sleep(0.05)
        return out, f"{refused} ({errors} answers 5xx)" if errors else refused


async def probe_health(server: Server, stop: asyncio.Event) -> tuple[float, int]:
    """Ask ``/healthz`` every 0.1 s until ``stop``: the slowest answer (s) and the failures."""
    worst, failed = 0.0, 0
    async with server.client(PROBE) as c:
        while not stop.is_set():
            began = time.perf_counter()
            try:
                ok = (await c.get("/healthz", timeout=10)).status_code == 200
            except httpx.HTTPError:
                ok = False
            worst = max(worst, time.perf_counter() - began)
            failed += not ok
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), 0.1)
    return worst, failed


async def measured(server: Server, moves: int, bot: bool) -> tuple[list[float], str, str]:
    """:func:`honest` with :func:`probe_health` beside it; the probe's result as text."""
    stop = asyncio.Event()
    probe = asyncio.ensure_future(probe_health(server, stop))
    try:
        lat, refused = await honest(server, moves, bot)
    finally:
        stop.set()
    worst, failed = await probe
    health = f"  /healthz worst {worst * 1000:.0f} ms" + (f" ({failed} failed)" if failed else "")
    return lat, refused, health


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Crowd:
    """What an attack does in the background (``run``) until ``stop`` is set; ``counts``."""

    def __init__(self) -> None:
        self.stop = asyncio.Event()
        self.counts: dict[str, int] = {}
        self.held: list[Any] = []

    def count(self, what: str, n: int = 1) -> None:
        self.counts[what] = self.counts.get(what, 0) + n


async def crowd_creates(server: Server, crowd: Crowd, addresses: int) -> None:
    async def one(i: int) -> None:
        async with server.client(crowd_address(10, i)) as c:
            for _ in range(20):
                if crowd.stop.is_set():
                    return
                try:
                    r = await c.post("/api/games", json={"players": [ANN, BOB], "piles": [3]})
                    crowd.count(str(r.status_code))
                except httpx.HTTPError:
                    crowd.count("error")

    for start in range(0, addresses, 40):
        await asyncio.gather(*(one(i) for i in range(start, min(addresses, start + 40))))


async def open_page(server: Server, key: str, source: str) -> Any:
    sock = socket.create_connection(("127.0.0.1", server.port), 10, (source, 0))
    sock.setblocking(False)
    ws = await ws_connect(f"ws://127.0.0.1:{server.port}/api/games/{key}/live", sock=sock)
    first = await asyncio.wait_for(ws.recv(), 10)
    if '"error"' in str(first) or '"detail"' in str(first):
        await ws.close()
        return None
    return ws


async def crowd_sockets(server: Server, crowd: Crowd, addresses: int) -> None:
    keys = []
    async with server.client("127.11.255.1") as c:
        for _ in range(12):
            r = await c.post("/api/games", json={"players": [ANN, BOB], "piles": [3]})
            if r.status_code == 201:
                keys.append(r.json()["state"]["id"])
    for i in range(addresses):
        source = crowd_address(11, i)
        for j in range(55):
            if crowd.stop.is_set():
                return
            try:
                ws = await open_page(server, keys[(i * 55 + j) % len(keys)], source)
            except Exception:
                ws = None
            crowd.count("admitted" if ws is not None else "refused")
            if ws is not None:
                crowd.held.append(ws)


async def slow_headers(server: Server, crowd: Crowd, per_address: int) -> None:
    async def one(source: str) -> None:
        while not crowd.stop.is_set():
            try:
                reader, writer = await asyncio.open_connection(
                    "127.0.0.1", server.port, local_addr=(source, 0)
                )
            except OSError:
                crowd.count("connect failed")
                await asyncio.sleep(0.5)
                continue
            writer.write(b"GET /api/options HTTP/1.1\r\nhost: 127.0.0.1\r\n")
            head = b""
            with contextlib.suppress(TimeoutError, ConnectionError):
                head = await asyncio.wait_for(reader.read(64), 30)
            crowd.count("refused (429)" if b" 429 " in head else "held, then cut")
            writer.close()

    await asyncio.gather(
        *(one(crowd_address(12, a)) for a in range(20) for _ in range(per_address))
    )


async def pipelined_reads(server: Server, crowd: Crowd, readers: int) -> None:
    async with server.client("127.13.255.1") as c:
        r = await c.post("/api/games", json={"players": [ANN, BOB], "piles": [3]})
        key = r.json()["state"]["id"]
    request = f"GET /api/games/{key} HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n".encode()

    async def one(source: str) -> None:
        while not crowd.stop.is_set():
            try:
                reader, writer = await asyncio.open_connection(
                    "127.0.0.1", server.port, local_addr=(source, 0)
                )
                writer.write(request * 50)
                data = b""
                with contextlib.suppress(TimeoutError):
                    while data.count(b"HTTP/1.1 ") < 50:
                        chunk = await asyncio.wait_for(reader.read(1 << 16), 10)
                        if not chunk:
                            break
                        data += chunk
                crowd.count("200", data.count(b"HTTP/1.1 200"))
                crowd.count("429", data.count(b"HTTP/1.1 429"))
                writer.close()
            except OSError:
                crowd.count("error")
                await asyncio.sleep(0.1)

    await asyncio.gather(*(one(crowd_address(13, i)) for i in range(readers)))


HEAVY_SETUPS = [
    {"players": [ANN, BOB], "piles": [1000], "game": "kayles"},
    {
        "players": [ANN, BOB, {"name": "Cy"}],
        "piles": [40, 50, 60],
        "game": "kayles",
        "misere": True,
    },
    {
        "players": [ANN, BOB, {"name": "Cy"}, {"name": "Di"}, {"name": "Ed"}],
        "piles": [60] * 4,
        "game": "dawson",
        "misere": True,
    },
    {"players": [ANN, BOB], "piles": [400, 300], "game": "grundys-game"},
]


async def heavy_analyses(server: Server, crowd: Crowd, addresses: int) -> None:
    async def one(i: int) -> None:
        async with server.client(crowd_address(14, i)) as c:
            keys = []
            for setup in HEAVY_SETUPS:
                r = await c.post("/api/games", json=setup | {"analysis": True})
                crowd.count(f"start {r.status_code}")
                if r.status_code == 201:
                    keys.append(r.json()["state"]["id"])
            while not crowd.stop.is_set() and keys:
                for key in keys:
                    for what in ("analysis", "hint"):
                        try:
                            r = await c.get(f"/api/games/{key}/{what}", timeout=0.5)
                            crowd.count(str(r.status_code))
                        except httpx.HTTPError:
                            crowd.count("given up")

    await asyncio.gather(*(one(i) for i in range(addresses)))


async def perfect_bots(server: Server, crowd: Crowd, games: int) -> None:
    setup = {
        "players": [{"kind": "perfect"}] * 3,
        "piles": [90] * 10,
        "game": "kayles",
        "misere": True,
    }
    for i in range(games):
        source = f"127.15.{i % 10}.1"
        async with server.client(source) as c:
            r = await c.post("/api/games", json=setup | {"seed": i})
        crowd.count(str(r.status_code))
        if r.status_code == 201:
            ws = None
            with contextlib.suppress(Exception):
                ws = await open_page(server, r.json()["state"]["id"], source)
            if ws is not None:
                crowd.held.append(ws)
    await crowd.stop.wait()


def _crowd_runner(
    name: str, server: Server, args: argparse.Namespace
) -> Callable[[Crowd], Awaitable[None]]:
    return {
        "crowd-creates": lambda crowd: crowd_creates(server, crowd, args.crowd),
        "crowd-sockets": lambda crowd: crowd_sockets(server, crowd, args.socket_clients),
        "slow-headers": lambda crowd: slow_headers(server, crowd, args.slow_headers),
        "pipelined-reads": lambda crowd: pipelined_reads(server, crowd, args.readers),
        "heavy-analyses": lambda crowd: heavy_analyses(server, crowd, 10),
        "perfect-bots": lambda crowd: perfect_bots(server, crowd, args.bot_games),
    }[name]


def crowd_process(name: str, server: Server, args: argparse.Namespace, stop: Any, out: Any) -> None:
    """The crowd of attack ``name``, in a process of its own, until ``stop`` (an event) is set;
    puts its counts on ``out``. It runs below the server and the honest client for the
    operating system (nice +10): an attacker's processor is not the server's, and on a machine
    of two cores the crowd's processes would otherwise make the honest client wait for a core
    to read its answers."""
    os.nice(10)

    async def run() -> dict[str, int]:
        crowd = Crowd()
        task = asyncio.ensure_future(_crowd_runner(name, server, args)(crowd))
        await asyncio.to_thread(stop.wait)
        crowd.stop.set()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(task, 60)
        task.cancel()
        for ws in crowd.held:
            with contextlib.suppress(Exception):
                await ws.close()
        return crowd.counts

    out.put(asyncio.run(run()))


async def crowd_attack(name: str, server: Server, args: argparse.Namespace) -> None:
    """Before, during and after one crowd attack: the honest client's p50/p99 and the RSS."""
    bot = name in ("heavy-analyses", "perfect-bots")
    quiet = args.quiet_bot if bot else args.quiet
    pid = server.pid

    def report(phase: str, lat: list[float], refused: str, extra: str = "") -> None:
        if lat:
            p50, p99 = percentile(lat, 50) * 1000, percentile(lat, 99) * 1000
            shown = (
                f"p50 {p50:7.1f} ms (x{p50 / quiet[0]:5.1f})  p99 {p99:7.1f} ms "
                f"(x{p99 / quiet[1]:5.1f})"
            )
        else:
            shown = "no answer"
        rss = rss_mb(pid)
        print(
            f"  {phase:<7} {shown}  RSS {rss:6.0f} MB (x{rss / args.quiet_rss:4.2f})"
            f"{'  refused ' + refused if refused else ''}{extra}",
            flush=True,
        )

    lat, refused, health = await measured(server, args.moves, bot)
    report("before", lat, refused, health)
    context = multiprocessing.get_context("spawn")
    stop, out = context.Event(), context.Queue()
    remote = Server(server.db, server.port)  # (its process stays here)
    shares = args.crowd_processes if name == "slow-headers" else 1
    share = argparse.Namespace(**vars(args))
    share.slow_headers = max(1, args.slow_headers // shares)
    crowds = [
        context.Process(target=crowd_process, args=(name, remote, share, stop, out))
        for _ in range(shares)
    ]
    for crowd in crowds:
        crowd.start()
    try:
        await asyncio.sleep(args.ramp)
        cpu = cpu_seconds(pid)
        began = time.monotonic()
        lat, refused, health = await measured(server, args.moves, bot)
        health += f"  server CPU {(cpu_seconds(pid) - cpu) / (time.monotonic() - began):.0%}"
    finally:
        stop.set()
    counts: dict[str, int] = {}
    for _ in crowds:
        for what, n in (await asyncio.to_thread(out.get, True, 120)).items():
            counts[what] = counts.get(what, 0) + n
    for crowd in crowds:
        await asyncio.to_thread(crowd.join, 30)
    report("during", lat, refused, f"{health}  attack: {dict(sorted(counts.items()))}")
    cpu = cpu_seconds(pid)
    await asyncio.sleep(args.after)
    busy = (cpu_seconds(pid) - cpu) / args.after * 100
    lat, refused, health = await measured(server, args.moves, bot)
    report(f"+{args.after:g} s", lat, refused, f"{health}  server CPU {busy:.0f}% in the wait")


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
    parser.add_argument("--crowd", type=int, default=260, help="addresses starting games")
    parser.add_argument("--socket-clients", type=int, default=80)
    parser.add_argument("--slow-headers", type=int, default=250, help="per address (20)")
    parser.add_argument(
        "--crowd-processes",
        type=int,
        default=1,
        help="processes sharing the slow-headers crowd (an attacker with more cores)",
    )
    parser.add_argument("--readers", type=int, default=20)
    parser.add_argument("--bot-games", type=int, default=100)
    parser.add_argument("--after", type=float, default=60.0, help="seconds after an attack")
    parser.add_argument("--ramp", type=float, default=5.0, help="seconds before 'during'")
    parser.add_argument("--quick", action="store_true", help="smaller crowds, --after 10")
    attacks = ["connections", "many-pages", "slow-bodies", "heavy-bots", "registrations", "restart"]
    parser.add_argument("--only", choices=attacks + CROWDS, action="append")
    args = parser.parse_args()
    todo = args.only or attacks + CROWDS
    if args.quick:
        args.crowd, args.socket_clients, args.slow_headers = 60, 20, 60
        args.readers, args.bot_games, args.moves = 10, 30, min(args.moves, 30)
        args.restart_games = min(args.restart_games, 300)
        args.after = min(args.after, 10.0)
        os.environ.setdefault("NIMLAB_MAX_GAMES_IN_PLAY", "1000")
        os.environ.setdefault("NIMLAB_MAX_CONCURRENCY", "1024")
    os.environ.setdefault("NIMLAB_MAX_GAMES_IN_PLAY", "5000")
    crowds = [n for n in todo if n in CROWDS]
    todo = [n for n in todo if n not in CROWDS]
    if crowds:
        with tempfile.TemporaryDirectory() as tmp:
            server = Server(Path(tmp) / "quiet.db", free_port())
            server.start()
            print(f"  solvers prepared {server.until_ready():.1f} s after the start", flush=True)
            try:
                args.quiet_rss = rss_mb(server.pid)
                args.quiet = line("quiet", asyncio.run(honest(server, args.moves, False))[0], None)
                lat = asyncio.run(honest(server, args.moves, True))[0]
                args.quiet_bot = line("quiet vs bot", lat, None)
                print(f"  RSS {args.quiet_rss:.0f} MB", flush=True)
            finally:
                server.stop()
            for name in crowds:
                print(f"{name}:", flush=True)
                server = Server(Path(tmp) / f"{name}.db", free_port())
                server.start()
                server.until_ready()
                try:
                    asyncio.run(crowd_attack(name, server, args))
                finally:
                    server.stop()
    if not todo:
        return
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
