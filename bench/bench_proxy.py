"""What a proxy that keeps each game on one process buys (issue 18, docs/deploy.md): two
``nimlab serve`` processes on one PostgreSQL database behind nginx, the same load as
``bench_web.py`` (a person against the perfect bot on plain Nim) sent through nginx, which passes
each request on (a) round robin, request by request, or (b) by the hash of the game's key
(``hash $game_key consistent``, docs/deploy.md's setup). Both in the same run, one after the
other, each on a new database: moves per second flat-out, p50/p99 with each person moving once a
second, and PostgreSQL's statements and WAL bytes per move.

Run: ``python bench/bench_proxy.py`` (``--fast-games 50 --fast-seconds 15 --games 300 --seconds
30``; ``--postgres URL`` for a cluster of your own, else a throwaway one is started).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_web as web

NGINX = shutil.which("nginx") or "/usr/sbin/nginx"

CONF = """
daemon off;
worker_processes 1;
pid {dir}/nginx.pid;
error_log {dir}/error.log;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    client_body_temp_path {dir}/body;
    proxy_temp_path {dir}/proxy;
    fastcgi_temp_path {dir}/fastcgi;
    uwsgi_temp_path {dir}/uwsgi;
    scgi_temp_path {dir}/scgi;
    map $uri $game_key {{
        ~^/api/games/(?<key>[A-Za-z0-9_-]+)  $key;
        ~^/game/(?<key>[A-Za-z0-9_-]+)       $key;
        default                              "";
    }}
    upstream nimlab {{
        {balance}
        server 127.0.0.1:{a};
        server 127.0.0.1:{b};
        keepalive 64;
    }}
    server {{
        listen 127.0.0.1:{port};
        location / {{
            proxy_pass http://nimlab;
            proxy_http_version 1.1;
            proxy_set_header Host 127.0.0.1;
            proxy_set_header Connection "";
        }}
    }}
}}
"""


def measure(name: str, balance: str, db: str, args: argparse.Namespace) -> web.Figures:
    servers = [web.start_server(db, 1) for _ in range(2)]
    ports = [int(url.rsplit(":", 1)[1]) for _, url in servers]
    folder = Path(tempfile.mkdtemp(prefix="nimlab-nginx-"))
    for sub in ("body", "proxy", "fastcgi", "uwsgi", "scgi"):
        (folder / sub).mkdir()
    port = web.free_port()
    conf = folder / "nginx.conf"
    text = CONF.format(dir=folder, balance=balance, a=ports[0], b=ports[1], port=port)
    conf.write_text(text)
    nginx = subprocess.Popen([NGINX, "-c", str(conf), "-p", str(folder), "-e", "stderr"])
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(url + "/api/games", timeout=2):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise SystemExit("nginx did not start") from None
                time.sleep(0.1)
        web.run(web.load(url, args.fast_games, args.warmup, 0.0))  # warm up: not measured
        before = web.database_counters(db)
        t = time.monotonic()
        cpu = sum(web.cpu_seconds(p.pid) for p, _ in servers)
        fast, errors, _ = web.run(web.load(url, args.fast_games, args.fast_seconds, 0.0))
        fast_time = time.monotonic() - t
        fast_cpu = sum(web.cpu_seconds(p.pid) for p, _ in servers) - cpu
        after = web.database_counters(db)
        costs = {k: (after[k] - before[k]) / max(1, len(fast)) for k in after if k in before}
        paced, errors2, _ = web.run(
            web.load(url, args.games, args.seconds, 1.0, None, warmup=args.warmup)
        )
    finally:
        nginx.terminate()
        nginx.wait(20)
        for proc, _ in servers:
            proc.terminate()
        for proc, _ in servers:
            proc.wait(60)
        shutil.rmtree(folder, ignore_errors=True)
    return web.Figures(name, fast, fast_time, fast_cpu, paced, [], errors + errors2, costs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fast-games", type=int, default=50)
    parser.add_argument("--fast-seconds", type=float, default=15.0)
    parser.add_argument("--games", type=int, default=300)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--warmup", type=float, default=5.0)
    parser.add_argument("--postgres", help="a PostgreSQL cluster's URL (default: start one)")
    args = parser.parse_args()
    results = []
    with web.postgres_cluster(args.postgres) as cluster:
        for name, balance in (
            ("round robin, request by request", ""),
            ("hash $game_key consistent", "hash $game_key consistent;"),
        ):
            results.append(measure(name, balance, web.new_postgres_database(cluster), args))
    print("Two nimlab serve processes on one PostgreSQL database behind nginx")
    print(f"(a) as fast as possible, {args.fast_games} games (closed loop):")
    for r in results:
        web.report(r.name, r.fast)
        print(
            f"    moves per second: {len(r.fast) / r.fast_time:.0f}; server CPU per move "
            f"{r.fast_cpu / max(1, len(r.fast)) * 1e3:.2f} ms"
        )
        if r.database:
            shown = ", ".join(f"{k} {v:,.1f}" for k, v in r.database.items())
            print(f"    PostgreSQL per move: {shown}")
    print(f"(b) {args.games} games, each person moving once a second, {args.seconds:g} s:")
    for r in results:
        _, p99 = web.report(r.name, r.paced)
        print(f"    p99 target (100 ms): {'met' if p99 < 0.100 else 'NOT met'}")
    errors = [e for r in results for e in r.errors]
    for e in errors[:5]:
        print("  error:", e)
    if errors:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
