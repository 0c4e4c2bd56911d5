"""The web app under load: concurrent games, each a person against the perfect bot on plain Nim,
in two shapes (issue 10):

(a) as fast as possible: ``--fast-games`` clients (default 50), each sending its next move as soon
    as it has the answer (closed loop): moves per second, p50/p99 latency (target: >= 1,000
    moves/s, measured before this bench's server work: 242 moves/s, p99 0.65 s), and the CPU
    each move costs the server, the PostgreSQL cluster the bench started and the load
    generator (this process), which share the machine's cores;
(b) realistic: ``--games`` games (default 500), each person moving once a second (open loop),
    for ``--seconds`` (default 60; the issue's figure is for 5 minutes: ``--seconds 300``) after
    ``--warmup`` seconds (default 5) in which every game starts and is not timed: p50/p99
    latency and the server's memory (RSS) sampled every second (target: p99 < 100 ms, flat
    memory).

The server is ``nimlab serve``'s own setup (bound socket, timed connections, engine workers,
every move saved before the answer) in a process of its own with a fresh database, on 127.0.0.1,
with the per-client limits lifted (every bench client shares one address). The baseline, measured
in the same run: the bare core, ``Game.push`` + ``Game.play_bot`` on the same positions, in this
process. The run is bounded in time and the server is stopped at the end.

Setups (``--setups``, issue 18), measured one after the other in the same run and reported side by
side: ``sqlite:1`` (one process, an SQLite file), ``postgresql:1`` (one process, PostgreSQL) and
``postgresql:2`` (``nimlab serve --workers 2`` on one port). PostgreSQL is ``--postgres URL``,
else a throwaway cluster this bench starts (``tests/postgres.py``) with ``fsync`` and
``synchronous_commit`` on, as durable as SQLite's ``synchronous = FULL``; each setup gets a new
database of its own (also on a server given by ``--postgres``, whatever database its URL names).

Run: ``python bench/bench_web.py`` (``--fast-games 50 --fast-seconds 20 --games 500 --seconds 60
--setups sqlite:1``); ``--setups sqlite:1,postgresql:1,postgresql:2 --games 300`` for issue 18.
``--previous REV`` measures the server of revision REV beside this one and prints the ratios;
with ``--rounds N`` both run at once and (a) loads them in turn, N slices each (before, after,
after, before, ...), so that what else the machine runs weighs on both alike.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Coroutine, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from nimlab.core.game import Game
from revisions import source_at

T = TypeVar("T")


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


def serve(port: int, db: str, processes: int = 1) -> None:
    """``nimlab serve``'s setup with the per-client limits lifted (run in the server process);
    ``processes`` > 1: ``nimlab serve --workers N``'s supervisor and processes."""
    from nimlab.cli.serve import bind, run_server, serve_processes
    from nimlab.web import ServerSettings, create_app

    settings = ServerSettings(
        allowed_hosts=("127.0.0.1", "localhost"),
        create_rate=1e9,
        create_burst=10**9,
        move_rate=1e9,
        move_burst=10**9,
        max_connections_per_client=10**6,  # every bench client has the same address
        workers=processes,
    )
    sock = bind("127.0.0.1", port)
    if processes > 1:
        serve_processes(processes, lambda: create_app(db, settings=settings), sock, settings)
    else:
        run_server(create_app(db, settings=settings), sock, settings=settings)


def start_server(
    db: Path | str, processes: int = 1, source: str | None = None
) -> tuple[subprocess.Popen[bytes], str]:
    """The server of :func:`serve` in a process of its own; ``source``: another revision's
    ``src`` folder, whose nimlab serves instead of this one's."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = dict(
        os.environ, NIMLAB_MAX_GAMES_PER_CLIENT="1000000", NIMLAB_MAX_GAMES_IN_PLAY="1000000"
    )
    if source is not None:
        env["PYTHONPATH"] = os.pathsep.join([source, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    proc = subprocess.Popen(
        [sys.executable, __file__, "--serve", str(port), str(db), str(processes)],
        stdout=subprocess.DEVNULL,
        env=env,
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


async def new_game(conn: Connection, rng: random.Random) -> tuple[int, Any]:
    return await conn.post(
        "/api/games",
        {
            "players": [{"name": "Ann"}, {"name": "Hal", "kind": "perfect"}],
            "piles": deal(rng),
            "seed": rng.randrange(1 << 30),
        },
    )


async def player(
    url: str,
    seed: int,
    stop_at: float,
    interval: float,
    latencies: list[float],
    errors: list[str],
    count_from: float = 0.0,
) -> None:
    """One person: a game after another; a move every ``interval`` seconds (0: at once). Only
    the moves sent from ``count_from`` (a ``time.monotonic()``) on are timed."""
    rng = random.Random(seed)
    host, port = url.removeprefix("http://").split(":")
    conn = Connection(host, int(port))
    try:
        if interval > 0:
            await asyncio.sleep(rng.uniform(0, interval))  # spread the clients over a second
        next_at = time.monotonic()
        while time.monotonic() < stop_at:
            status, created = await new_game(conn, rng)
            if status != 201:
                errors.append(f"{status} {created}")
                return
            key, token = created["state"]["id"], created["seats"][0]["token"]
            state: dict[str, Any] = created["state"]
            while not state["over"] and time.monotonic() < stop_at:
                if interval > 0:
                    next_at += interval
                    await asyncio.sleep(max(0.0, next_at - time.monotonic()))
                pile, take = random_move(rng, state["board"]["piles"])
                body = {
                    "seat": 0,
                    "token": token,
                    "turn": state["move_count"] + 1,
                    "pile": pile,
                    "take": take,
                }
                t = time.perf_counter()
                sent = time.monotonic()
                status, state = await conn.post(f"/api/games/{key}/moves", body)
                if sent >= count_from:
                    latencies.append(time.perf_counter() - t)
                if status != 200:
                    errors.append(f"{status} {state}")
                    return
                if not state["over"] and state["to_move"] != 0:
                    errors.append("the answer came before the bot's reply")
    except (OSError, asyncio.IncompleteReadError) as e:
        errors.append(f"connection: {e!r}")
    finally:
        conn.close()


def rss_mb(pid: int) -> float:
    """The resident memory of a process and its children, in MB (Linux /proc)."""
    total = 0.0
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                total += int(line.split()[1]) / 1024
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return float("nan")
    return total + sum(rss_mb(int(child)) for child in children)


def cpu_seconds(pid: int) -> float:
    """CPU seconds (user + system) used by a process and its children so far (Linux /proc)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return 0.0
    own = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return own + sum(cpu_seconds(int(child)) for child in children)


async def load(
    url: str,
    games: int,
    seconds: float,
    interval: float,
    pid: int | None = None,
    warmup: float = 0.0,
) -> tuple[list[float], list[str], list[float]]:
    """``games`` players for ``warmup + seconds``; the moves of the first ``warmup`` seconds
    (while every game starts and the engine meets its first positions) are not timed, and the
    server's memory is sampled every second from then on."""
    latencies: list[float] = []
    errors: list[str] = []
    memory: list[float] = []
    count_from = time.monotonic() + warmup
    stop_at = count_from + seconds

    async def sample() -> None:
        await asyncio.sleep(warmup)
        while pid is not None and time.monotonic() < stop_at:
            memory.append(rss_mb(pid))
            await asyncio.sleep(1.0)

    await asyncio.gather(
        sample(),
        *(player(url, i, stop_at, interval, latencies, errors, count_from) for i in range(games)),
    )
    return latencies, errors, memory


def run(main: Coroutine[Any, Any, T]) -> T:
    """Run the load generator on uvloop (installed with uvicorn[standard]; it costs the
    machine's cores less than asyncio's own loop, which leaves more of them to the server)."""
    try:
        import uvloop
    except ImportError:  # pragma: no cover
        return asyncio.run(main)
    return uvloop.run(main)


def report(name: str, values: list[float]) -> tuple[float, float]:
    med, p99 = statistics.median(values), percentile(values, 99)
    print(
        f"  {name:<52} n={len(values):>6}  median {med * 1000:7.2f} ms  "
        f"p95 {percentile(values, 95) * 1000:7.2f} ms  p99 {p99 * 1000:7.2f} ms  "
        f"max {max(values) * 1000:7.2f} ms"
    )
    return med, p99


@dataclass
class Figures:
    """What one setup measured."""

    name: str
    fast: list[float]
    fast_time: float
    fast_cpu: float
    paced: list[float]
    memory: list[float]
    errors: list[str]
    database: dict[str, float]
    """PostgreSQL's costs during (a), per move: statements, transactions, WAL bytes."""
    fast_client_cpu: float = 0.0
    """CPU seconds of this process (the load generator) during (a)."""
    fast_postgres_cpu: float | None = None
    """CPU seconds of the PostgreSQL cluster during (a) (``None``: not measured)."""


def measure(
    name: str,
    db: Path | str,
    processes: int,
    args: argparse.Namespace,
    source: str | None = None,
) -> Figures:
    proc, url = start_server(db, processes, source)
    costs: dict[str, float] = {}
    try:
        run(load(url, args.fast_games, args.warmup, 0.0))  # warm up: not measured
        before = database_counters(db)
        t, cpu = time.monotonic(), cpu_seconds(proc.pid)
        client, postgres = own_cpu_seconds(), postgres_cpu_seconds(db)
        fast, errors, _ = run(load(url, args.fast_games, args.fast_seconds, 0.0))
        fast_time = time.monotonic() - t
        fast_cpu = cpu_seconds(proc.pid) - cpu
        client = own_cpu_seconds() - client
        if postgres is not None:
            after_postgres = postgres_cpu_seconds(db)
            postgres = None if after_postgres is None else after_postgres - postgres
        after = database_counters(db)
        costs = {k: (after[k] - before[k]) / max(1, len(fast)) for k in after if k in before}
        paced, errors2, memory = run(
            load(url, args.games, args.seconds, 1.0, proc.pid, warmup=args.warmup)
        )
    finally:
        proc.terminate()
        proc.wait(60)
    return Figures(
        name, fast, fast_time, fast_cpu, paced, memory, errors + errors2, costs, client, postgres
    )


def measure_pair(
    names: tuple[str, str],
    dbs: tuple[Path | str, Path | str],
    processes: int,
    args: argparse.Namespace,
    source: str,
) -> tuple[Figures, Figures]:
    """(a) for the server of ``source`` (before) and this one (after), both running at once and
    loaded in turn, ``args.rounds`` slices of ``args.fast_seconds / rounds`` seconds each in the
    order before, after, after, before, ... (what else the machine runs meanwhile weighs on
    both alike); then (b) for each, one after the other."""
    servers = [start_server(dbs[0], processes, source), start_server(dbs[1], processes)]
    sides: list[dict[str, Any]] = [
        {"fast": [], "errors": [], "time": 0.0, "cpu": 0.0, "client": 0.0, "postgres": None}
        for _ in servers
    ]
    costs: list[dict[str, float]] = [{}, {}]
    slice_seconds = args.fast_seconds / args.rounds
    try:
        for _proc, url in servers:  # warm up: not measured
            run(load(url, args.fast_games, args.warmup, 0.0))
        for i in range(args.rounds):
            for side in (0, 1) if i % 2 == 0 else (1, 0):
                proc, url = servers[side]
                db, got = dbs[side], sides[side]
                before = database_counters(db)
                t, cpu = time.monotonic(), cpu_seconds(proc.pid)
                client, postgres = own_cpu_seconds(), postgres_cpu_seconds(db)
                fast, errors, _ = run(load(url, args.fast_games, slice_seconds, 0.0))
                got["time"] += time.monotonic() - t
                got["cpu"] += cpu_seconds(proc.pid) - cpu
                got["client"] += own_cpu_seconds() - client
                after_postgres = postgres_cpu_seconds(db)
                if postgres is not None and after_postgres is not None:
                    got["postgres"] = (got["postgres"] or 0.0) + after_postgres - postgres
                after = database_counters(db)
                for k in after:
                    if k in before:
                        costs[side][k] = costs[side].get(k, 0.0) + after[k] - before[k]
                got["fast"] += fast
                got["errors"] += errors
        figures = []
        for side, (proc, url) in enumerate(servers):
            got = sides[side]
            paced, errors2, memory = run(
                load(url, args.games, args.seconds, 1.0, proc.pid, warmup=args.warmup)
            )
            moves = max(1, len(got["fast"]))
            figures.append(
                Figures(
                    names[side],
                    got["fast"],
                    got["time"],
                    got["cpu"],
                    paced,
                    memory,
                    got["errors"] + errors2,
                    {k: v / moves for k, v in costs[side].items()},
                    got["client"],
                    got["postgres"],
                )
            )
    finally:
        for proc, _url in servers:
            proc.terminate()
            proc.wait(60)
    return figures[0], figures[1]


def own_cpu_seconds() -> float:
    """CPU seconds (user + system) this process used so far: the load generator."""
    times = os.times()
    return times.user + times.system


_CLUSTER_PID: int | None = None
"""The postmaster of the throwaway cluster this bench started (``None``: none, or
``--postgres``, whose processes may be on another machine)."""


def postgres_cpu_seconds(db: Path | str) -> float | None:
    """CPU seconds used so far by the throwaway PostgreSQL cluster (its postmaster and every
    backend), or ``None`` (SQLite, or a cluster this bench did not start)."""
    if not isinstance(db, str) or _CLUSTER_PID is None:
        return None
    return cpu_seconds(_CLUSTER_PID)


def database_counters(db: Path | str) -> dict[str, float]:
    """PostgreSQL's counters of the database ``db`` (none for SQLite): statements run (with
    pg_stat_statements), transactions committed, WAL bytes written, the database's size."""
    if not isinstance(db, str):
        return {}
    import psycopg

    with psycopg.connect(db, autocommit=True) as conn:
        out: dict[str, float] = {}
        row = conn.execute(
            "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()"
        ).fetchone()
        out["transactions"] = float(row[0]) if row else 0.0
        row = conn.execute("SELECT pg_current_wal_lsn() - '0/0'::pg_lsn").fetchone()
        out["WAL bytes"] = float(row[0]) if row else 0.0
        row = conn.execute("SELECT pg_database_size(current_database())").fetchone()
        out["database bytes"] = float(row[0]) if row else 0.0
        with contextlib.suppress(psycopg.Error):
            row = conn.execute(
                "SELECT COALESCE(SUM(calls), 0) FROM pg_stat_statements s JOIN pg_database d "
                "ON d.oid = s.dbid WHERE d.datname = current_database()"
            ).fetchone()
            out["statements"] = float(row[0]) if row else 0.0
        return out


@contextlib.contextmanager
def postgres_cluster(given: str | None) -> Iterator[str]:
    """``given``, else a throwaway cluster as durable as SQLite's ``synchronous = FULL``."""
    if given:
        yield given
        return
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    import postgres  # type: ignore[import-not-found]  # tests/postgres.py

    postgres.SETTINGS = (
        "-c listen_addresses='' -c max_connections=200 -c shared_buffers=128MB "
        "-c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.track=all"
    )
    global _CLUSTER_PID
    root = Path(tempfile.mkdtemp(prefix="nimlab-bench-pg-"))
    try:
        url = postgres.start(root)
        _CLUSTER_PID = int((root / "data" / "postmaster.pid").read_text().split()[0])
        yield url
    finally:
        _CLUSTER_PID = None
        postgres.stop(root)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--fast-games",
        type=int,
        default=50,
        help="shape (a): clients each sending its next move as soon as it has the answer "
        "(default: %(default)s)",
    )
    parser.add_argument(
        "--fast-seconds",
        type=float,
        default=20.0,
        help="shape (a): seconds measured (default: %(default)s)",
    )
    parser.add_argument(
        "--games",
        type=int,
        default=500,
        help="shape (b): games, each person moving once a second (default: %(default)s)",
    )
    parser.add_argument(
        "--seconds",
        type=float,
        default=60.0,
        help="shape (b): seconds measured; 300 = 5 min (default: %(default)s)",
    )
    parser.add_argument(
        "--warmup",
        type=float,
        default=5.0,
        help="shape (b): seconds of load not measured (default: %(default)s)",
    )
    parser.add_argument(
        "--setups",
        default="sqlite:1",
        help="comma-separated DATABASE:PROCESSES, DATABASE sqlite or postgresql, measured one "
        "after the other (default: %(default)s; e.g. sqlite:1,postgresql:1,postgresql:2)",
    )
    parser.add_argument(
        "--postgres",
        metavar="URL",
        help="a PostgreSQL server to use (postgresql://USER@HOST/DB, a role that may create "
        "databases): each postgresql setup gets a new database of its own there, whatever "
        "database the URL names (default: start a throwaway cluster)",
    )
    parser.add_argument(
        "--previous",
        metavar="REV",
        help="also measure each setup with the server of revision REV of this repository "
        "(unpacked from git), just before this code's, and print after/before ratios",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="with --previous: run both servers at once and load them in turn, this many "
        "slices of (a) each, in the order before, after, after, before, ... (default: "
        "%(default)s: (a) of before, then of after)",
    )
    parser.add_argument("--serve", nargs=3, metavar=("PORT", "DB", "N"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(int(args.serve[0]), args.serve[1], int(args.serve[2]))
        return
    setups = [(kind, int(n)) for kind, _, n in (x.partition(":") for x in args.setups.split(","))]

    core = core_baseline(3000)
    old_source = None
    if args.previous:
        old_source = source_at(args.previous)
        if old_source is None:
            raise SystemExit(f"there is no revision {args.previous!r} in this repository")
    results: list[Figures] = []
    pairs: list[tuple[Figures, Figures]] = []
    with contextlib.ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        cluster = None
        for kind, processes in setups:
            name = f"{kind}, {processes} process{'es' if processes > 1 else ''}"
            if kind == "sqlite":
                db: Path | str = tmp / f"bench-{len(results)}.db"
            else:
                if cluster is None:
                    cluster = stack.enter_context(postgres_cluster(args.postgres))
                db = new_postgres_database(cluster)
            if old_source is None:
                results.append(measure(name, db, processes, args))
                continue
            old_db: Path | str = tmp / f"bench-{len(results)}-before.db"
            if cluster is not None and kind != "sqlite":
                old_db = new_postgres_database(cluster)
            name_before = f"{name}, before ({args.previous})"
            if args.rounds > 1:
                pair = measure_pair((name_before, name), (old_db, db), processes, args, old_source)
            else:
                pair = (
                    measure(name_before, old_db, processes, args, old_source),
                    measure(name, db, processes, args),
                )
            results += pair
            pairs.append(pair)
    print("A person against the perfect bot on plain Nim (3-5 piles of 3-15), on this machine")
    core_med, _ = report("baseline: core Game.push + play_bot (in process)", core)
    print(f"(a) as fast as possible, {args.fast_games} games (closed loop):")
    for r in results:
        med, p99 = report(r.name, r.fast)
        rate = len(r.fast) / r.fast_time
        print(
            f"    moves per second: {rate:.0f} (target >= 1,000); server CPU per move "
            f"{r.fast_cpu / max(1, len(r.fast)) * 1e3:.2f} ms; ratio web / core median "
            f"{med / core_med:.0f}x"
        )
        moves = max(1, len(r.fast))
        shares = [f"the load generator {r.fast_client_cpu / moves * 1e3:.2f} ms"]
        if r.fast_postgres_cpu is not None:
            shares.insert(0, f"PostgreSQL {r.fast_postgres_cpu / moves * 1e3:.2f} ms")
        print(f"    the other CPU per move on this machine: {', '.join(shares)}")
        if r.database:
            shown = ", ".join(f"{k} {v:,.1f}" for k, v in r.database.items())
            print(f"    PostgreSQL per move: {shown}")
    shape = f"{args.games} games, each person moving once a second, {args.seconds:g} s"
    print(f"(b) realistic, {shape}:")
    for r in results:
        med, p99 = report(r.name, r.paced)
        print(
            f"    moves per second: {len(r.paced) / args.seconds:.0f}; p99 target (100 ms): "
            f"{'met' if p99 < 0.100 else 'NOT met'}; errors: {len(r.errors)}"
        )
        if r.memory:
            third = max(1, len(r.memory) // 3)
            print(
                f"    server RSS: start {r.memory[0]:.0f} MB, after a third "
                f"{statistics.median(r.memory[:third]):.0f} MB, last third "
                f"{statistics.median(r.memory[-third:]):.0f} MB, max {max(r.memory):.0f} MB"
            )
    if pairs:
        how = f"in turn, {args.rounds} slices each" if args.rounds > 1 else "one after the other"
        print(f"after / before ({args.previous}), measured {how} in this run:")
    for before, after in pairs:
        rates = [len(r.fast) / r.fast_time for r in (before, after)]
        cpus = [r.fast_cpu / max(1, len(r.fast)) for r in (before, after)]
        p99s = [percentile(r.paced, 99) * 1e3 if r.paced else float("nan") for r in (before, after)]
        print(
            f"  {after.name}: flat-out moves/s {rates[1]:.0f} / {rates[0]:.0f} = "
            f"{rates[1] / rates[0]:.2f}x (goal >= 0.95); server CPU per move "
            f"{cpus[1] / cpus[0]:.2f}x; realistic p99 {p99s[1]:.0f} ms (before {p99s[0]:.0f} ms)"
        )
    errors = [e for r in results for e in r.errors]
    for e in errors[:5]:
        print("  error:", e)
    if errors:
        raise SystemExit(1)


def database_url(server: str, name: str) -> str:
    """The URL of database ``name`` on the server of the URL ``server``, whatever database that
    one names (in its path, as ``?dbname=``, or none: every setup had shared it unless the URL
    ended in ``/postgres?``)."""
    import urllib.parse

    parts = urllib.parse.urlsplit(server)
    query = [
        (k, v)
        for k, v in urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
        if k != "dbname"
    ]
    rest = urllib.parse.urlencode(query, safe="/")
    return f"{parts.scheme}://{parts.netloc}/{name}" + (f"?{rest}" if rest else "")


def new_postgres_database(cluster: str) -> str:
    """A new, empty database in the cluster (nimlab makes its schema on first use)."""
    import psycopg

    name = f"bench_{random.randrange(1 << 40):x}"
    with psycopg.connect(cluster, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    url = database_url(cluster, name)
    with psycopg.connect(url, autocommit=True) as conn, contextlib.suppress(psycopg.Error):
        conn.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
    return url


if __name__ == "__main__":
    main()
