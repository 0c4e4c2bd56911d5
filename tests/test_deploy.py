"""Running the server as a service: behind a reverse proxy (whose X-Forwarded-For is believed only
when the request comes from it), on every network (the machine's own addresses let in, other
names refused with how to allow them)."""

from __future__ import annotations

import asyncio
import http.client
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from nimlab.cli.serve import _own_addresses
from webtools import ServerProcess, free_port, wait_for

GAME = {"players": [{"name": "Ann"}, {"name": "Bob"}], "piles": [1, 2]}


def post(
    address: str, port: int, path: str, body: Any, headers: dict[str, str] | None = None
) -> tuple[int, dict[str, Any]]:
    """POST ``body`` as JSON to ``address:port`` (connecting to that address, so the server sees
    the request come from this machine's address on that network)."""
    conn = http.client.HTTPConnection(address, port, timeout=120)
    try:
        data = json.dumps(body).encode()
        conn.request("POST", path, data, {"content-type": "application/json", **(headers or {})})
        r = conn.getresponse()
        return r.status, json.loads(r.read() or b"{}")
    finally:
        conn.close()


def test_forwarded_for_is_believed_only_from_a_trusted_proxy(tmp_path: Path) -> None:
    own = sorted(a for a in _own_addresses() if ":" not in a and not a.startswith("127."))
    server = ServerProcess(
        tmp_path / "p.db",
        args=["--host", "0.0.0.0", "--trusted-proxies", "127.0.0.1"]
        + ["--create-rate", "0.001", "--create-burst", "1"],
    ).start()
    try:
        port = server.port
        # from the trusted proxy (loopback): each forwarded client has its own bucket
        status, _ = post("127.0.0.1", port, "/api/games", GAME, {"X-Forwarded-For": "10.1.1.1"})
        assert status == 201
        status, _ = post("127.0.0.1", port, "/api/games", GAME, {"X-Forwarded-For": "10.2.2.2"})
        assert status == 201
        status, body = post(
            "127.0.0.1", port, "/api/games", GAME, {"X-Forwarded-For": "10.9.9.9, 10.2.2.2"}
        )
        assert status == 429 and "from 10.2.2.2" in body["detail"]  # the proxy's own entry
        if own:  # from this machine's network address: not a proxy, the header is ignored
            address = own[0]
            status, _ = post(address, port, "/api/games", GAME, {"X-Forwarded-For": "10.3.3.3"})
            assert status == 201  # the machine's own address is an allowed host
            status, body = post(address, port, "/api/games", GAME, {"X-Forwarded-For": "10.4.4.4"})
            assert status == 429 and f"from {address}" in body["detail"], body
        status, body = post(
            "127.0.0.1", port, "/api/players/reset", {"username": "x"}, {"Host": "club.example"}
        )
        assert status == 421 and "--allow-host club.example" in body["detail"]
    finally:
        server.stop()


NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
NGINX_CONF = """
daemon off;
pid {dir}/nginx.pid;
error_log {dir}/error.log;
events {{ worker_connections 64; }}
http {{
    access_log {dir}/access.log;
    client_body_temp_path {dir}/body;
    proxy_temp_path {dir}/proxy;
    fastcgi_temp_path {dir}/fastcgi;
    uwsgi_temp_path {dir}/uwsgi;
    scgi_temp_path {dir}/scgi;
    map $http_upgrade $connection_upgrade {{
        default upgrade;
        ''      close;
    }}
    server {{
        listen 127.0.0.1:{port};
        client_max_body_size 1m;
        location / {{
            proxy_pass http://127.0.0.1:{upstream};
            proxy_bind 127.0.0.2;
            proxy_http_version 1.1;
            proxy_set_header Host $host;
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            proxy_set_header X-Forwarded-Proto $scheme;
            proxy_set_header Upgrade $http_upgrade;
            proxy_set_header Connection $connection_upgrade;
            proxy_read_timeout 1h;
            proxy_send_timeout 1h;
        }}
    }}
}}
"""
"""docs/deploy.md's configuration, in a folder of its own; nginx connects to the server from
127.0.0.2, so that the test's own requests (from 127.0.0.1) are not from the trusted proxy."""


def _nginx_available() -> bool:
    if Path(NGINX).exists():
        return True
    if os.environ.get("CI") or os.getuid() == 0:
        return False  # scripts/test installs it: its absence is a failure here
    pytest.skip("nginx is not installed (scripts/test installs Debian's when run as root)")


def test_nginx_in_front_as_the_deployment_guide_says(tmp_path: Path) -> None:
    assert _nginx_available(), "nginx is missing: scripts/test installs Debian's package"
    server = ServerProcess(
        tmp_path / "n.db",
        args=["--trusted-proxies", "127.0.0.2", "--create-rate", "0.001", "--create-burst", "1"],
    ).start()
    port = free_port()
    conf = tmp_path / "nginx.conf"
    conf.write_text(NGINX_CONF.format(dir=tmp_path, port=port, upstream=server.port))
    for sub in ("body", "proxy", "fastcgi", "uwsgi", "scgi"):
        (tmp_path / sub).mkdir()
    nginx = subprocess.Popen(
        [NGINX, "-c", str(conf), "-p", str(tmp_path), "-e", str(tmp_path / "error.log")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_for(f"http://127.0.0.1:{port}/healthz")
        status, created = post(
            "127.0.0.1", port, "/api/games", GAME, {"X-Forwarded-For": "10.6.6.6"}
        )
        assert status == 201, created
        status, body = post("127.0.0.1", port, "/api/games", GAME, {"X-Forwarded-For": "10.7.7.7"})
        assert status == 429 and "from 127.0.0.1" in body["detail"], body  # forged: ignored
        key = created["state"]["id"]
        seat = created["seats"][0]
        state = asyncio.run(_first_message(f"ws://127.0.0.1:{port}/api/games/{key}/live"))
        assert state["type"] == "state" and state["state"]["id"] == key  # WebSockets pass
        link = seat["link"]
        urllib.request.urlopen(f"http://127.0.0.1:{port}{link}", timeout=60).read()
        status, _ = post(
            "127.0.0.1",
            port,
            f"/api/games/{key}/moves",
            {"seat": 0, "token": seat["token"], "turn": 1, "pile": 1, "take": 1},
        )
        assert status == 200
    finally:
        nginx.terminate()
        nginx.wait(30)
        server.stop()
    log = (tmp_path / "access.log").read_text()
    assert f"GET /game/{key} " in log and f"POST /api/games/{key}/moves" in log
    assert seat["token"] not in log  # seat links carry their token after "#": never logged


async def _first_message(url: str) -> Any:
    import websockets

    async with websockets.connect(url, open_timeout=120) as ws:
        return json.loads(await asyncio.wait_for(ws.recv(), 120))


# -- the systemd unit and the container recipe, run as docs/deploy.md writes them -----------------
# Neither systemd nor a container engine runs here, so the test runs what they would run: the
# unit's Environment= lines and ExecStart=, the recipe's ENV, CMD and HEALTHCHECK, with the
# guide's folders moved into the test's own folder and its fixed port replaced by a free one.

DEPLOY = Path(__file__).resolve().parent.parent / "docs" / "deploy.md"


def _block(kind: str) -> list[str]:
    """The lines of the first ```kind block of docs/deploy.md."""
    text = DEPLOY.read_text(encoding="utf-8")
    body = text.split(f"```{kind}\n", 1)[1].split("```", 1)[0]
    return body.splitlines()


def _moved(text: str, folders: dict[str, Path]) -> str:
    for old, new in folders.items():
        text = text.replace(old, str(new))
    return text


def _run_until_healthy(
    command: list[str], env: dict[str, str], port: int
) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        command, env=dict(os.environ) | env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        wait_for(f"http://127.0.0.1:{port}/healthz")
    except OSError:
        proc.kill()
        raise AssertionError(proc.communicate()[1].decode()) from None
    return proc


def _stop(proc: subprocess.Popen[bytes], within: float) -> None:
    proc.terminate()  # SIGTERM, as KillSignal= and STOPSIGNAL say
    try:
        # after its graceful stop Uvicorn ends by the signal it caught, which systemd and
        # container engines count as a clean stop
        assert proc.wait(within) in (0, -signal.SIGTERM)
    finally:
        if proc.poll() is None:
            proc.kill()


def test_the_systemd_unit_runs_as_written(tmp_path: Path) -> None:
    unit = _block("ini")
    bin_dir = Path(sys.executable).parent
    folders = {
        "/var/lib/nimlab": tmp_path / "state",
        "/etc/nimlab": tmp_path / "etc",
        "/opt/nimlab/.venv/bin": bin_dir,
    }
    for folder in folders.values():
        folder.mkdir(exist_ok=True)
    port = free_port()
    (tmp_path / "etc" / "nimlab.toml").write_text(f"port = {port}\n", encoding="utf-8")
    (tmp_path / "etc" / "admin-token").write_text("s3cret-token\n", encoding="utf-8")
    env: dict[str, str] = {}
    command: list[str] = []
    stop_within = 90.0
    for line in unit:
        key, _, value = line.partition("=")
        if key == "Environment":
            name, _, setting = value.partition("=")
            env[name] = _moved(setting, folders)
        elif key == "ExecStart":
            command = _moved(value, folders).split()
        elif key == "TimeoutStopSec":
            stop_within = float(value)
    assert command and Path(command[0]).exists(), command
    proc = _run_until_healthy(command, env, port)
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=60) as r:
            assert r.status == 200
        request = urllib.request.Request(f"http://127.0.0.1:{port}/api/history/1", method="DELETE")
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=60)  # the token file is in force
        assert refused.value.code == 401
    finally:
        _stop(proc, stop_within)
    assert (tmp_path / "state" / "nimlab.db").exists()


def test_the_container_recipe_runs_as_written(tmp_path: Path) -> None:
    recipe = _block("dockerfile")
    port = free_port()
    folders = {"/data": tmp_path / "data", "8000": str(port)}
    (tmp_path / "data").mkdir()
    env: dict[str, str] = {}
    command: list[str] = []
    health: list[str] = []
    for line in recipe:
        instruction, _, rest = line.partition(" ")
        if instruction == "ENV":
            for pair in rest.split():
                name, _, value = pair.partition("=")
                env[name] = _moved(value, folders)
        elif instruction == "CMD":
            command = json.loads(rest)
        elif instruction == "HEALTHCHECK":
            health = shlex.split(_moved(rest.removeprefix("CMD "), folders))
    assert command[0] == "nimlab" and health[0] == "python", (command, health)
    bin_dir = Path(sys.executable).parent
    proc = _run_until_healthy([str(bin_dir / command[0]), *command[1:]], env, port)
    try:
        check = subprocess.run([sys.executable, *health[1:]], capture_output=True, timeout=120)
        assert check.returncode == 0, check.stderr.decode()
    finally:
        _stop(proc, 60)
    assert (tmp_path / "data" / "nimlab.db").exists()
