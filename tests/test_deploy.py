"""Running the server as a service: behind a reverse proxy (whose X-Forwarded-For is believed only
when the request comes from it), on every network (the machine's own addresses let in, other
names refused with how to allow them)."""

from __future__ import annotations

import asyncio
import http.client
import json
import logging
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import nimlab
import nimlab.theory
from nimlab.cli.serve import _own_addresses
from processes import PATIENCE
from processes import nimlab as nimlab_cli
from webtools import ServerProcess, free_port, seed_kernel_cache, wait_for

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
        ''      "";
    }}
    upstream nimlab {{
        server 127.0.0.1:{upstream};
        keepalive 8;
    }}
    server {{
        listen 127.0.0.1:{port};
        client_max_body_size 1m;
        location / {{
            proxy_pass http://nimlab;
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
    text = DEPLOY.read_text(encoding="utf-8")
    blocks = [part.split("```", 1)[0] for part in text.split("```nginx\n")[1:]]
    # one Connection header for both keep-alive and WebSockets: the map's (two in one location
    # clash, and nginx sends only one of them)
    assert "''      \"\";" in blocks[0] and "default upgrade;" in blocks[0]
    assert not any('Connection ""' in block for block in blocks)
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
    """``command`` run until it answers /healthz on ``port``; started again while it finds the
    port in use (taken for a moment by another test's connection after it was chosen free)."""
    for _ in range(40):
        proc = subprocess.Popen(
            command, env=dict(os.environ) | env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        try:
            _until_healthy(proc, port)
            return proc
        except AssertionError as e:
            if "is in use" not in str(e):
                raise
        time.sleep(0.25)
    raise AssertionError(f"port {port} stayed in use")


def _stop(proc: subprocess.Popen[bytes], within: float) -> None:
    proc.terminate()  # SIGTERM, as KillSignal= and STOPSIGNAL say
    try:
        # after its graceful stop Uvicorn ends by the signal it caught, which systemd and
        # container engines count as a clean stop
        assert proc.wait(within) in (0, -signal.SIGTERM)
    finally:
        if proc.poll() is None:
            proc.kill()


UNIT = DEPLOY.parent.parent / "deploy" / "nimlab.service"
"""The unit shipped with nimlab, which docs/deploy.md quotes."""

SERVICE_USER = "nimlab-test"
"""The unprivileged user the unit's command runs as (made by the test when missing)."""


def test_the_guide_quotes_the_unit_shipped() -> None:
    assert _block("ini") == UNIT.read_text(encoding="utf-8").splitlines()


def _service(
    folders: dict[str, Path], port: int
) -> tuple[list[str], dict[str, str], dict[str, Path], float]:
    """What systemd would run for the unit: its command, its environment (its Environment=
    lines, and $CREDENTIALS_DIRECTORY holding a copy of each LoadCredential= file), and the time
    it gives a stop, with the unit's folders moved into the test's (``folders``, which also
    names %C, the cache folder). Writes the configuration file and the admin token."""
    (folders["/etc/nimlab"] / "nimlab.toml").write_text(f"port = {port}\n", encoding="utf-8")
    (folders["/etc/nimlab"] / "admin-token").write_text("s3cret-token\n", encoding="utf-8")
    env: dict[str, str] = {}
    credentials: dict[str, Path] = {}
    command: list[str] = []
    stop_within = 90.0
    for line in UNIT.read_text(encoding="utf-8").splitlines():
        key, _, value = line.partition("=")
        value = _moved(value, folders)
        if key == "Environment":
            name, _, setting = value.partition("=")
            env[name] = setting
        elif key == "LoadCredential":
            name, _, source = value.partition(":")
            credentials[name] = Path(source)
        elif key == "ExecStart":
            command = value.split()
        elif key == "TimeoutStopSec":
            stop_within = float(value)
    assert command and Path(command[0]).exists(), command
    assert "NUMBA_CACHE_DIR" in env, "the compiled solvers need a writable cache"
    return command, env, credentials, stop_within


def _credentials(folder: Path, credentials: dict[str, Path]) -> str:
    folder.mkdir(mode=0o700)
    for name, source in credentials.items():
        shutil.copyfile(source, folder / name)
    return str(folder)


def _until_healthy(proc: subprocess.Popen[bytes], port: int) -> None:
    """Wait until the server answers /healthz; fail with its stderr when it ends first."""
    deadline = time.monotonic() + PATIENCE
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2):
                return
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise AssertionError(proc.communicate()[1].decode()) from None
            time.sleep(0.05)


def test_the_systemd_unit_runs_as_written(tmp_path: Path) -> None:
    bin_dir = Path(sys.executable).parent
    folders = {
        "/var/lib/nimlab": tmp_path / "state",
        "/etc/nimlab": tmp_path / "etc",
        "%C": tmp_path / "cache",
        "/opt/nimlab/.venv/bin": bin_dir,
    }
    for folder in folders.values():
        folder.mkdir(exist_ok=True)
    port = free_port()
    command, env, credentials, stop_within = _service(folders, port)
    seed_kernel_cache(Path(nimlab.theory.__file__).parent, Path(env["NUMBA_CACHE_DIR"]))
    env["CREDENTIALS_DIRECTORY"] = _credentials(tmp_path / "credentials", credentials)
    proc = _run_until_healthy(command, env, port)
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=60) as r:
            assert r.status == 200
        request = urllib.request.Request(f"http://127.0.0.1:{port}/api/history/1", method="DELETE")
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=60)  # the token credential is in force
        assert refused.value.code == 401
    finally:
        _stop(proc, stop_within)
    assert (tmp_path / "state" / "nimlab.db").exists()


def test_the_unit_is_verified_and_hardened() -> None:
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze is not installed (Debian's systemd package has it)")
    unit = UNIT.read_text(encoding="utf-8")
    folder = Path(tempfile.mkdtemp())
    try:
        copy = folder / UNIT.name  # with a command that exists on this machine
        bin_dir = Path(sys.executable).parent
        copy.write_text(unit.replace("/opt/nimlab/.venv/bin", str(bin_dir)), encoding="utf-8")
        verify = subprocess.run(
            [analyze, "verify", str(copy)], capture_output=True, text=True, timeout=120
        )
        assert verify.returncode == 0, verify.stderr
        security = subprocess.run(
            [analyze, "security", "--offline=true", "--threshold=40", str(copy)],
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        shutil.rmtree(folder)
    assert security.returncode == 0, security.stdout[-2000:]  # exposure 4.0 at most
    exposure = float(security.stdout.rsplit("exposure level for", 1)[1].split(":")[1].split()[0])
    assert exposure <= 4.0, security.stdout[-2000:]


def _service_user() -> tuple[int, int]:
    """The uid and gid of :data:`SERVICE_USER`, a system user without a home, made if missing
    (as root only)."""
    import pwd

    try:
        entry = pwd.getpwnam(SERVICE_USER)
    except KeyError:
        subprocess.run(
            ["useradd", "--system", "--user-group", "--no-create-home"]
            + ["--home-dir", "/nonexistent", "--shell", "/usr/sbin/nologin", SERVICE_USER],
            check=True,
            capture_output=True,
            timeout=60,
        )
        entry = pwd.getpwnam(SERVICE_USER)
    return entry.pw_uid, entry.pw_gid


def _sandboxed(
    command: list[str], env: dict[str, str], writable: list[Path], staging: Path
) -> list[str]:
    """``command`` as systemd runs it for the unit: as :data:`SERVICE_USER`, with only the
    environment given, in a mount namespace of its own where the whole file system is read-only
    but ``writable`` (ProtectSystem=strict, StateDirectory=, CacheDirectory=), /root and /home
    are empty (ProtectHome=true; the Python interpreter, when it lives there, is bound back
    read-only) and /tmp is a new, empty one (PrivateTmp=true)."""
    steps = ["set -e", "mount --make-rprivate /"]
    steps += [f"mount --bind {shlex.quote(str(p))} {shlex.quote(str(p))}" for p in writable]
    # the interpreter and its packages (a virtual environment may live in a checkout under /tmp
    # or a home) are bound aside before /root, /home and /tmp are hidden, then back, read-only
    hidden_roots = (Path("/root"), Path("/home"), Path("/tmp"))
    prefixes = {Path(sys.base_prefix).resolve(), Path(sys.prefix).resolve()}
    kept = sorted(p for p in prefixes if any(p.is_relative_to(h) for h in hidden_roots))
    for i, prefix in enumerate(kept):
        aside = shlex.quote(str(staging / str(i)))
        steps += [f"mkdir -p {aside}", f"mount --bind {shlex.quote(str(prefix))} {aside}"]
    steps += ["mount -t tmpfs -o mode=0755 tmpfs /root", "mount -t tmpfs -o mode=0755 tmpfs /home"]
    steps += ["mount -t tmpfs -o mode=1777 tmpfs /tmp"]
    for i, prefix in enumerate(kept):
        aside, q_prefix = shlex.quote(str(staging / str(i))), shlex.quote(str(prefix))
        steps += [f"mkdir -p {q_prefix}", f"mount --bind {aside} {q_prefix}"]
        steps += [f"mount -o remount,bind,ro {q_prefix}"]
    steps += ["mount -o remount,bind,ro /"]
    setpriv = ["setpriv", f"--reuid={SERVICE_USER}", f"--regid={SERVICE_USER}"]
    setpriv += ["--clear-groups", "--no-new-privs", "--inh-caps=-all", "--bounding-set=-all"]
    environment = [f"{k}={v}" for k, v in env.items()]
    steps.append(shlex.join(["exec", *setpriv, "--", "env", "-i", *environment, *command]))
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c", "\n".join(steps)]


def _as_service_user_ready() -> None:
    if os.getuid() != 0:
        pytest.skip("running the unit as an unprivileged user needs root (to make the user)")
    for tool in ("unshare", "setpriv", "useradd"):
        assert shutil.which(tool), f"{tool} (util-linux, passwd) is missing"


def _read_only_install(root: Path) -> Path:
    """A copy of this nimlab's package under ``root``/install (without compiled files), as a
    package manager installs it: owned by root, read-only for the service."""
    install = root / "install"
    source = Path(nimlab.__file__).parent
    shutil.copytree(source, install / "nimlab", ignore=shutil.ignore_patterns("__pycache__"))
    return install


def _owned(folder: Path, uid: int, gid: int) -> Path:
    """``folder`` (made) and everything in it owned by the service user, as systemd makes a
    StateDirectory= or CacheDirectory=."""
    folder.mkdir(exist_ok=True)
    for path in [folder, *folder.rglob("*")]:
        os.chown(path, uid, gid)
    return folder


@pytest.fixture
def service_root() -> Iterator[Path]:
    """A folder every user may enter, outside /tmp (the sandbox mounts a new /tmp)."""
    root = Path(tempfile.mkdtemp(prefix="nimlab-unit-", dir="/var/tmp"))
    root.chmod(0o755)
    yield root
    shutil.rmtree(root, ignore_errors=True)


def test_the_unit_serves_as_its_user_from_a_read_only_install(service_root: Path) -> None:
    """The unit as systemd runs it: an unprivileged user without a home, a read-only install,
    the compiled solvers in the unit's cache folder. It serves, answers a question that needs
    the compiled solvers (misère Kayles), writes nothing but its state and cache folders, and
    stops cleanly on SIGTERM (without NUMBA_CACHE_DIR Numba had found no place for its cache:
    "RuntimeError: cannot cache function 'plain_extend': no locator available", exit 1)."""
    _as_service_user_ready()
    uid, gid = _service_user()
    install = _read_only_install(service_root)
    folders = {
        "/var/lib/nimlab": service_root / "state",
        "/etc/nimlab": service_root / "etc",
        "%C": service_root / "cache",
        "/opt/nimlab/.venv/bin": Path(sys.executable).parent,
    }
    for name in ("/etc/nimlab", "%C"):
        folders[name].mkdir()
    port = free_port()
    command, env, credentials, stop_within = _service(folders, port)
    cache = Path(env["NUMBA_CACHE_DIR"])
    seed_kernel_cache(install / "nimlab" / "theory", cache)
    state, cache = _owned(folders["/var/lib/nimlab"], uid, gid), _owned(cache, uid, gid)
    creds = _owned(Path(_credentials(service_root / "credentials", credentials)), uid, gid)
    env |= {
        "PATH": "/usr/bin:/bin",
        "HOME": "/nonexistent",
        "LANG": "C.UTF-8",
        "PYTHONPATH": str(install),  # (the install's site-packages)
        "CREDENTIALS_DIRECTORY": str(creds),
    }
    installed = sorted(install.rglob("*"))
    proc = subprocess.Popen(
        _sandboxed(command, env, [state, cache], service_root / "python"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        _until_healthy(proc, port)
        game = {
            "players": [{"name": "Ann"}, {"name": "Hal", "kind": "perfect"}],
            "game": "kayles",
            "piles": [8, 5],
            "misere": True,
        }
        status, created = post("127.0.0.1", port, "/api/games", game)
        assert status == 201, created
        key = created["state"]["id"]
        url = f"http://127.0.0.1:{port}/api/games/{key}/analysis"
        with urllib.request.urlopen(url, timeout=PATIENCE) as r:
            analysis = json.loads(r.read())
        assert analysis["quotient"]["code"] == "0.77" and analysis["moves"], analysis
        request = urllib.request.Request(f"http://127.0.0.1:{port}/api/history/1", method="DELETE")
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=60)  # the token credential is in force
        assert refused.value.code == 401
    finally:
        proc.terminate()
        try:
            code = proc.wait(stop_within)
        finally:
            if proc.poll() is None:
                proc.kill()
        stderr = proc.communicate()[1].decode()
    assert code in (0, -signal.SIGTERM), stderr
    assert "cannot cache" not in stderr and "Traceback" not in stderr, stderr
    assert sorted(install.rglob("*")) == installed  # the install is only read
    assert (state / "nimlab.db").exists()
    assert all(p.stat().st_uid == uid for p in state.iterdir())


def test_no_writable_cache_folder_is_no_error(service_root: Path) -> None:
    """Without NUMBA_CACHE_DIR, a read-only install and no home, nimlab caches its compiled
    solvers in a private folder of the temporary folder and says so in one line (it died with
    Numba's RuntimeError "no locator available")."""
    _as_service_user_ready()
    uid, gid = _service_user()
    install = _read_only_install(service_root)
    tmp = service_root / "tmp"  # the sandbox's /tmp is empty: this stands for it
    private = tmp / f"nimlab-kernels-{uid}"
    seed_kernel_cache(install / "nimlab" / "theory", private)
    _owned(tmp, uid, gid).chmod(0o1777)
    private.chmod(0o700)
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": "/nonexistent",
        "PYTHONPATH": str(install),
        "TMPDIR": str(tmp),
    }
    command = [sys.executable, "-m", "nimlab", "analyze", "--game", "kayles", "--misere", "8", "5"]
    done = subprocess.run(
        _sandboxed(command, env, [tmp], service_root / "python"),
        capture_output=True,
        text=True,
        timeout=PATIENCE,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("cannot be cached beside nimlab") == 1, done.stderr
    assert str(private) in done.stderr and "NUMBA_CACHE_DIR" in done.stderr


def test_prepare_compiles_the_solvers_into_their_cache_and_says_where() -> None:
    from nimlab.theory import kernels

    done = nimlab_cli("prepare")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("The solvers are prepared: cached in "), done.stdout
    folder = Path(done.stdout.split("cached in ", 1)[1].strip().rstrip("."))
    assert folder.is_dir() and any(folder.glob("_grundy_kernels.*.nbi"))
    assert kernels.cold() == []


MDWE = """
import ctypes, sys
if ctypes.CDLL(None, use_errno=True).prctl(65, 1, 0, 0, 0) != 0:  # PR_SET_MDWE, REFUSE_EXEC_GAIN
    sys.exit(99)
from nimlab.cli import main
sys.argv = ["nimlab", *sys.argv[1:]]
main()
"""
"""``nimlab ARGS`` with writable memory never made executable (Linux 6.3's PR_SET_MDWE, the
kernel's own MemoryDenyWriteExecute=), or exit status 99 when the kernel cannot."""


@pytest.mark.parametrize("command", [["prepare"], ["serve", "--port", "0", "--db", "{db}"]])
def test_no_executable_memory_is_one_line_not_a_traceback(
    command: list[str], tmp_path: Path
) -> None:
    """Why the unit has no MemoryDenyWriteExecute=true: Numba's compiled solvers need memory
    that was written and is then executed, also when they are loaded from the cache."""
    args = [a.format(db=tmp_path / "x.db") for a in command]
    done = subprocess.run(
        [sys.executable, "-c", MDWE, *args], capture_output=True, text=True, timeout=PATIENCE
    )
    if done.returncode == 99:
        pytest.skip("this kernel cannot refuse executable memory (PR_SET_MDWE: Linux 6.3)")
    assert done.returncode == 1, done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith("error: the solvers cannot run here: the system refuses executable")
    assert "MemoryDenyWriteExecute" in line


def test_nothing_writable_compiles_the_solvers_without_a_cache(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from nimlab.theory import _jit

    monkeypatch.setattr(_jit, "_numba_finds_a_place", lambda: False)
    monkeypatch.setattr(_jit, "_private_folder", lambda: None)
    with caplog.at_level(logging.WARNING, "nimlab.kernels"):
        assert _jit._choose() == ""
    [line] = [r.getMessage() for r in caplog.records if r.name == "nimlab.kernels"]
    assert "compiling them at every start" in line and "NUMBA_CACHE_DIR" in line

    @_jit._uncached(cache=True)  # type: ignore[misc]  # (njit when nothing can be cached)
    def add(a: int, b: int) -> int:
        return a + b

    assert add(1, 2) == 3 and type(add._cache).__name__ == "NullCache"


def test_the_private_cache_folder_is_used_only_when_it_is_private(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cache is code the process loads: a folder another user owns, or may write, is not
    used (someone could have planted compiled code there)."""
    from nimlab.theory import _jit

    monkeypatch.setattr(tempfile, "gettempdir", lambda: str(tmp_path))
    folder = tmp_path / f"nimlab-kernels-{os.getuid()}"
    assert _jit._private_folder() == folder and folder.stat().st_mode & 0o777 == 0o700
    folder.chmod(0o777)
    assert _jit._private_folder() is None
    folder.chmod(0o700)
    if os.getuid() == 0:
        os.chown(folder, 65534, 65534)
        assert _jit._private_folder() is None


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
            options, _, check = rest.partition("CMD ")
            health = shlex.split(_moved(check, folders))
            start_period = options.split("--start-period=", 1)[1].split()[0]
            # the first start prepares the solvers, 30-60 s, before it answers
            assert start_period.endswith("s") and float(start_period[:-1]) >= 60, options
    assert command[0] == "nimlab" and health[0] == "python", (command, health)
    bin_dir = Path(sys.executable).parent
    proc = _run_until_healthy([str(bin_dir / command[0]), *command[1:]], env, port)
    try:
        check = subprocess.run([sys.executable, *health[1:]], capture_output=True, timeout=120)
        assert check.returncode == 0, check.stderr.decode()
    finally:
        _stop(proc, 60)
    assert (tmp_path / "data" / "nimlab.db").exists()
