"""Helpers for the web app's tests: a real Uvicorn server on a loopback port (in a thread or in a
process of its own), and the options for Debian's Chromium."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import uvicorn
from fastapi.testclient import TestClient

import zygote
from nimlab.web import ServerSettings, create_app
from processes import PATIENCE


def call(url: str, method: str = "GET", body: Any = None) -> tuple[int, Any]:
    """A JSON request to a server started by a test: its status and decoded answer (an error
    status is returned, not raised)."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data, {"content-type": "application/json"}, method=method)
    try:
        with urllib.request.urlopen(request, timeout=PATIENCE) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


FAST = ServerSettings(
    bot_pace=0,
    reply_wait=30.0,
    compute_wait=30.0,
    engine_threads=2,
    move_seconds=0.3,
    deep_seconds=0.6,
    job_positions=50_000,
    read_rate=0,
)
"""Server settings for tests: bots move at once, short engine budgets, long waits, no bound on
reads (tests poll)."""

PATIENT = ServerSettings(bot_pace=0, compute_wait=PATIENCE, reply_wait=PATIENCE, read_rate=0)
"""Server settings for tests: bots move at once, and requests wait for the bots' replies and
the engine's answers as long as a test may take (on a busy machine they can take seconds): no
answer depends on timing."""

SHARED = {"create_rate": 0, "move_rate": 0, "read_rate": 0, "max_games_per_client": 100_000}
"""The changes to a module's settings for an app its tests share: their requests all come from
one client, so no bound per client (tests/test_abuse.py and tests/test_reliability.py test
those bounds, each on an app of its own)."""


@contextmanager
def shared_app(db: str, settings: ServerSettings, **client: Any) -> Iterator[TestClient]:
    """An app for the tests of a module that each play their own games (an app costs about
    47 ms of CPU to create, start and serve its first request, most of it FastAPI building
    its routes' state), with ``settings`` changed by :data:`SHARED`; ``client``: TestClient's
    keywords. A test on it must not count what the database holds (lists, rankings, history
    order): such a test gets an app of its own. Each test ends with :func:`end_test`."""
    with TestClient(create_app(db, settings=settings.model_copy(update=SHARED)), **client) as c:
        yield c


def end_test(client: TestClient) -> None:
    """After a test on a shared app: cancel the engine work its games left (a deeper search
    may go on for seconds), as stopping an app of its own would."""
    live = client.app.state.live  # type: ignore[attr-defined]
    for key in list(live.games):
        live.workers.cancel(key)


CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ROOT = Path(__file__).resolve().parent.parent
SCREENSHOTS = ROOT / "test-output" / "screenshots"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(url: str, timeout: float = PATIENCE) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def seed_kernel_cache(theory: Path, cache: Path) -> None:
    """Copy this process's compiled kernels into the Numba cache folder ``cache`` for the
    nimlab whose ``theory`` package is there, as an earlier start of the service leaves them
    (Numba files them by the sources' folder and content): without it the service compiles
    every solver (30-60 s) before it serves."""
    from numba.core.caching import UserProvidedCacheLocator

    from nimlab.theory import _grundy_kernels, kernels

    kernels.prepare()
    here = Path(_grundy_kernels.plain_extend._cache._cache_path)
    sub = UserProvidedCacheLocator.get_suitable_cache_subpath(str(theory / "_grundy_kernels.py"))
    (cache / sub).mkdir(parents=True, exist_ok=True)
    for compiled in here.glob("_*_kernels.*.nb[ic]"):
        shutil.copy2(compiled, cache / sub / compiled.name)


class ServerThread:
    """An app served by Uvicorn on 127.0.0.1 in a background thread."""

    def __init__(self, app: Any, port: int | None = None) -> None:
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> ServerThread:
        self.thread.start()
        deadline = time.monotonic() + PATIENCE
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the test server did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(20)


class ServerProcess:
    """``nimlab serve`` in a process of its own (so a test can kill and restart it)."""

    def __init__(
        self,
        db: Path | str,
        port: int | None = None,
        args: list[str] | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        self.db = db
        self._chose_port = port is None
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | zygote.Forked | None = None
        self.args = list(args or [])
        self.env = dict(env or {})
        self.log: deque[bytes] = deque(maxlen=100_000)
        """What the server wrote to its standard error so far, line by line (read as it comes:
        a pipe nobody reads fills up after 64 KiB, and the server then waits to log)."""
        self._reading: threading.Thread | None = None

    def start(self) -> ServerProcess:
        """Start the server and wait until it answers."""
        return self.spawn().wait()

    def spawn(self) -> ServerProcess:
        """Start the server without waiting for it (see :meth:`wait`): a test can do something
        else meanwhile, such as starting a browser."""
        env = dict(os.environ) | self.env
        argv = ["serve", "--port", str(self.port), "--db", str(self.db), *self.args]
        self.proc = zygote.start(argv, env)
        stream = self.proc.stderr
        assert stream is not None
        self._reading = threading.Thread(target=self.log.extend, args=(stream,), daemon=True)
        self._reading.start()
        return self

    def logged(self) -> str:
        """Everything the server wrote to its standard error (whole once it has stopped)."""
        if self.proc is None and self._reading is not None:
            self._reading.join(PATIENCE)
        return b"".join(self.log).decode()

    def wait(self) -> ServerProcess:
        """Until the server answers. A server that ends first fails the test with its log,
        unless it found the port it was given taken (another test's server took it after
        :func:`free_port` chose it): then it starts again on another port, up to twice."""
        deadline = time.monotonic() + PATIENCE
        tries = 0
        while True:
            try:
                with urllib.request.urlopen(self.url + "/api/games", timeout=2):
                    return self
            except OSError:
                pass
            assert self.proc is not None
            if self.proc.poll() is not None:
                self.proc = None
                log = self.logged()
                if self._chose_port and "is in use" in log and tries < 2:
                    tries += 1
                    self.port = free_port()
                    self.url = f"http://127.0.0.1:{self.port}"
                    self.log.clear()
                    self.spawn()
                    continue
                raise AssertionError(f"the server ended before it answered:\n{log}")
            if time.monotonic() > deadline:
                self.stop()
                raise AssertionError(f"the server never answered:\n{self.logged()}")
            time.sleep(0.05)

    def children(self) -> list[int]:
        """The process ids of the server's children (``--workers N``: its N processes)."""
        assert self.proc is not None
        pid = self.proc.pid
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]

    def kill(self) -> None:
        """Stop at once, as a crash would (no clean shutdown)."""
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait(10)
            self.proc = None

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
            self.proc = None


def validated_state(game: Any, usernames: list[str | None], key: str = "k") -> Any:
    """A game's state as the validated model: the reference the server's JSON writer is
    compared with (the server itself never builds the model)."""
    from nimlab.web.schemas_out import GameStateOut
    from nimlab.web.views import legal_moves_out, state_data

    return GameStateOut.model_validate(
        state_data(key, game, usernames, legal=legal_moves_out(game))
    )


def validated_live_state(lg: Any, since: int | None = None) -> Any:
    """:func:`validated_state` of a live game, with its lifecycle (what its JSON must equal)."""
    from nimlab.web.livegame import state_data_of
    from nimlab.web.schemas_out import GameStateOut
    from nimlab.web.views import legal_moves_out

    return GameStateOut.model_validate(state_data_of(lg, since, legal_moves_out(lg.game)))


class LivePage:
    """A game's page open on a server: its WebSocket (``ws://...``, ``url``) read on a thread of
    its own. Each state message is handed to :meth:`seen` with ``cond`` held (then waiters are
    woken); ``gone`` once the connection closed (its process killed or stopped). A subclass
    sets its own fields before calling this ``__init__``, which starts the reading."""

    def __init__(self, url: str) -> None:
        from websockets.sync.client import connect as ws_connect

        self.exits = contextlib.ExitStack()  # the connection is a context manager
        self.ws = self.exits.enter_context(ws_connect(url, open_timeout=PATIENCE))
        self.gone = False
        self.cond = threading.Condition()
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def seen(self, state: dict[str, Any]) -> None:
        """Take in one state the page was sent (``cond`` is held)."""
        raise NotImplementedError

    def _read(self) -> None:
        try:
            for text in self.ws:
                message = json.loads(text)
                if message["type"] != "state":
                    continue
                with self.cond:
                    self.seen(message["state"])
                    self.cond.notify_all()
        except Exception:  # closed
            pass
        with self.cond:
            self.gone = True
            self.cond.notify_all()

    def close(self) -> None:
        self.exits.close()
        self.thread.join(PATIENCE)
