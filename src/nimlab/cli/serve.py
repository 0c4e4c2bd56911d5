"""``nimlab serve``: the web app on http://127.0.0.1:8000 (FastAPI + Uvicorn).

Ready for ``--host 0.0.0.0``: the port is bound before "serving on" is printed (a busy port or
an address that is not this machine's is reported, exit 2); requests must name one of this
machine's host names (against DNS rebinding; ``--allow-host`` adds more); a connection that
does not complete a request's headers within ``--request-timeout`` seconds is closed (half-open
and slowloris connections), idle keep-alive connections after ``--keep-alive`` s;
``$NIMLAB_ADMIN_TOKEN`` or ``--admin-token-file`` guards
registry changes. Every setting comes from :class:`nimlab.web.settings.ServerSettings`: the
options of this command are made from its fields, one per setting, named as the setting.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import math
import os
import socket
import typing
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer

from nimlab.cli.app import UsageError, app
from nimlab.cli.database import open_store
from nimlab.storage import StorageError

if TYPE_CHECKING:
    from nimlab.web.guard import Holdings
    from nimlab.web.proxies import TrustedProxies
    from nimlab.web.settings import ServerSettings

__all__ = ["allowed_hosts", "bind", "serve", "timed_protocol", "unfinished_bounds"]

LOCAL_NAMES = ("localhost", "127.0.0.1", "::1")


def _url_host(host: str) -> str:
    """The host to print in the URL: where a browser on this machine reaches the server."""
    if host in ("", "0.0.0.0", "::"):
        return "127.0.0.1"
    return f"[{host}]" if ":" in host else host


def allowed_hosts(host: str, extra: list[str]) -> tuple[str, ...] | None:
    """The host names requests may name: this machine's loopback names, the address listened
    on, and for every network (``0.0.0.0``, ``::``) the machine's names and addresses; plus
    ``extra``. ``None`` (no check) when ``extra`` has ``*``."""
    if "*" in extra:
        return None
    names = {*LOCAL_NAMES, host, *extra}
    if host in ("", "0.0.0.0", "::"):
        for name in {socket.gethostname(), socket.getfqdn()}:
            names.add(name)
            with contextlib.suppress(OSError):
                names |= {str(info[4][0]) for info in socket.getaddrinfo(name, None)}
        names |= _own_addresses()
    return tuple(sorted(n for n in names if n))


def _own_addresses() -> set[str]:
    """The addresses this machine's outgoing traffic leaves from (IPv4 and IPv6): those a
    browser on the network reaches it at, even when the host name does not resolve to them.
    Nothing is sent (a UDP socket is connected, not written to)."""
    found = set()
    for family, probe in ((socket.AF_INET, "192.0.2.1"), (socket.AF_INET6, "2001:db8::1")):
        with contextlib.suppress(OSError), socket.socket(family, socket.SOCK_DGRAM) as s:
            s.connect((probe, 9))
            found.add(str(s.getsockname()[0]).split("%")[0])
    return found


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port``; raises OSError when it cannot be had."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        sock.bind((host, port))
        sock.listen(2048)
        sock.set_inheritable(True)
    except OSError:
        sock.close()
        raise
    return sock


def _bind_error(host: str, port: int, error: OSError) -> str:
    """Why ``bind(host, port)`` failed, naming the option to change: a busy port (``--port``),
    else an address this machine cannot listen on (``--host``)."""
    if error.errno in (98, 48, 10048):  # EADDRINUSE on Linux, macOS, Windows
        return f"cannot listen on {host} port {port}: it is in use. Choose another with --port."
    if error.errno == 13:  # EACCES: a privileged port
        return (
            f"cannot listen on port {port}: permission denied (ports below 1024 need "
            "privileges). Choose another with --port."
        )
    why = error.strerror or str(error)
    return (
        f"--host {host!r}: cannot listen on it ({why}). Give an address of this machine, e.g. "
        "127.0.0.1 (this machine only) or 0.0.0.0 (every network)."
    )


class Corked:
    """A transport whose writes leave together: those of one response in one write at its end
    (Uvicorn writes a response's head and body separately, and each write to a socket is a
    system call and, on loopback, the reader's wake-up), any others at the loop's next turn.
    Everything else is the transport's own."""

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._buffer: list[bytes] = []
        self._scheduled = False

    def write(self, data: bytes) -> None:
        self._buffer.append(bytes(data))
        if not self._scheduled:
            self._scheduled = True
            self._loop.call_soon(self._flush_soon)

    def writelines(self, lines: Iterable[bytes]) -> None:
        for data in lines:
            self.write(data)

    def flush(self) -> None:
        """Write what is waiting, in one write."""
        if self._buffer:
            data = b"".join(self._buffer)
            self._buffer.clear()
            if not self._transport.is_closing():
                self._transport.write(data)

    def _flush_soon(self) -> None:
        self._scheduled = False
        self.flush()

    def get_write_buffer_size(self) -> int:
        return self._transport.get_write_buffer_size() + sum(map(len, self._buffer))

    def write_eof(self) -> None:
        self.flush()
        self._transport.write_eof()

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def abort(self) -> None:
        self._buffer.clear()
        self._transport.abort()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


def unfinished_bounds(settings: ServerSettings) -> Holdings:
    """The bounds on connections that have not sent a whole request head yet (slow headers):
    an eighth of ``max_connections_per_client`` per address (at least 4), by network and in all
    as for every connection (:meth:`nimlab.web.guard.Holdings.of`)."""
    from nimlab.web.guard import Holdings

    return Holdings(
        per_address=max(4, settings.max_connections_per_client // 8),
        network_allowance=settings.network_allowance,
        capacity=settings.max_concurrency,
        network_share=settings.network_share,
        reserve_share=settings.reserve_share,
    )


def timed_protocol(
    base: type[Any],
    seconds: float,
    *,
    held: Holdings,
    proxies: TrustedProxies | None = None,
    unfinished: Holdings | None = None,
) -> type[Any]:
    """Uvicorn's HTTP protocol ``base``, closing a connection that has no request in progress
    (headers not complete, or idle) for ``seconds``, and answering 429 and closing a connection
    that ``held`` refuses (:meth:`nimlab.web.guard.Holdings.of` ``("connections", settings)``):
    from an address that holds ``max_connections_per_client`` already, so one client cannot
    take every connection the server has. A refused connection is answered before Uvicorn
    counts it or reads from it: a crowd reconnecting as fast as it is refused neither costs a
    request's work nor fills Uvicorn's bound on connections (``max_concurrency``, beyond which
    everyone is answered 503). With ``unfinished`` (:func:`unfinished_bounds`), the connections
    that have not sent a whole request head yet are bounded too, by address and by network,
    so a crowd sending headers byte by byte holds a few of them, not all it may hold (with a
    protocol that does not say when a head is complete, no such bound). A connection from a
    trusted proxy (``proxies``) is not counted here: it carries many clients, whom the app
    counts once their requests name them (:class:`nimlab.web.proxies.ForwardedClient`).

    Connections are also counted by network: a network holds at most
    ``network_allowance`` times one address's and ``network_share`` of ``max_concurrency``, and
    the last ``reserve_share`` of it is kept for networks holding little, so a crowd of
    addresses (slow headers, open WebSockets) leaves room for new clients before the server's
    own bound answers everyone 503."""

    from nimlab.web import metrics
    from nimlab.web.guard import holding_limit

    if not hasattr(base, "on_headers_complete"):
        unfinished = None

    def admitted(transport: asyncio.Transport) -> str | None:
        """The address the connection was counted under (in ``held`` and ``unfinished``), or
        None when it is refused (counted in the metrics); "" for a trusted proxy's (not
        counted)."""
        peer = transport.get_extra_info("peername")
        host = str(peer[0]) if isinstance(peer, tuple) and peer else ""
        if proxies is not None and proxies.trusts(host):
            return ""
        why = held.take(host)
        if why is None and unfinished is not None:
            why = unfinished.take(host)
            if why is not None:
                held.give_back(host)
        if why is None:
            return host
        metrics.refused(holding_limit(why, "max_connections_per_client", "max_concurrency"))
        return None

    class Timed(base):  # type: ignore[misc]
        _nimlab_refused = False
        _nimlab_unfinished: str | None = None
        """The address its unfinished head is counted under, until the head is complete."""

        def _nimlab_finished(self) -> None:
            if self._nimlab_unfinished and unfinished is not None:
                unfinished.give_back(self._nimlab_unfinished)
            self._nimlab_unfinished = None

        def connection_made(self, transport: asyncio.Transport) -> None:
            self._nimlab_host = admitted(transport)
            if self._nimlab_host is None:  # refused before Uvicorn counts or reads it
                self._nimlab_refused = True
                transport.write(TOO_MANY_CONNECTIONS)
                transport.close()
                return
            self._nimlab_unfinished = self._nimlab_host or None
            super().connection_made(Corked(transport, self.loop))
            self._nimlab_since = self.loop.time()
            self._nimlab_timer = self.loop.call_later(seconds, self._nimlab_check)

        def data_received(self, data: bytes) -> None:
            if not self._nimlab_refused:
                super().data_received(data)

        def on_headers_complete(self) -> None:
            self._nimlab_finished()
            super().on_headers_complete()

        def eof_received(self) -> Any:
            if not self._nimlab_refused:
                return super().eof_received()
            return None

        def pause_writing(self) -> None:
            if not self._nimlab_refused:
                super().pause_writing()

        def resume_writing(self) -> None:
            if not self._nimlab_refused:
                super().resume_writing()

        def on_response_complete(self) -> None:
            self.transport.flush()  # the response's head and body leave in one write
            super().on_response_complete()
            self._nimlab_since = self.loop.time()

        def _nimlab_check(self) -> None:
            transport = self.transport
            if transport.is_closing() or transport.get_protocol() is not self:
                return  # closed, or upgraded to a WebSocket
            cycle = self.cycle
            busy = cycle is not None and not cycle.response_complete
            left = self._nimlab_since + seconds - self.loop.time()
            if not busy and left <= 0:
                transport.close()
                return
            self._nimlab_timer = self.loop.call_later(max(left, seconds / 4), self._nimlab_check)

        def connection_lost(self, exc: Exception | None) -> None:
            if self._nimlab_refused:
                return  # Uvicorn never had it
            self._nimlab_finished()
            self._nimlab_timer.cancel()
            if self._nimlab_host:
                held.give_back(self._nimlab_host)
                self._nimlab_host = None
            super().connection_lost(exc)

        def handle_websocket_upgrade(self, *args: Any) -> None:
            self._nimlab_timer.cancel()  # the WebSocket's own protocol takes the connection
            super().handle_websocket_upgrade(*args)
            host, self._nimlab_host = self._nimlab_host, None
            protocol = self.transport.get_protocol()
            if host and protocol is not self:  # its end gives the connection back
                lost = protocol.connection_lost

                def connection_lost(exc: Exception | None) -> None:
                    held.give_back(host)
                    lost(exc)

                protocol.connection_lost = connection_lost

    return Timed


TOO_MANY_CONNECTIONS = (
    b"HTTP/1.1 429 Too Many Requests\r\ncontent-type: application/json\r\n"
    b"retry-after: 5\r\nconnection: close\r\ncontent-length: 78\r\n\r\n"
    b'{"detail": "too many connections from your address: close some and try again"}'
)
"""The answer to a connection beyond the bound per client (before its request is read)."""


def _http_protocol() -> type[Any]:
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

        return HttpToolsProtocol
    except ImportError:  # pragma: no cover - httptools is part of uvicorn[standard]
        from uvicorn.protocols.http.h11_impl import H11Protocol

        return H11Protocol


def _option_type(annotation: Any) -> Any:
    """The command-line type of a setting: lists repeat the flag; everything else is given as
    it is written and checked by the settings class (so every bad value is reported alike)."""
    text = str(annotation)
    if "tuple" in text:
        return list[str] | None
    return str | None


def _metavar(name: str, annotation: Any) -> str:
    """How a setting's value is written, for ``--help``."""
    choices = typing.get_args(annotation) if typing.get_origin(annotation) is Literal else ()
    if choices:
        return "|".join(map(str, choices))
    text = str(annotation)
    kinds = (("tuple", "NAME"), ("Path", "PATH"), ("float", "NUMBER"), ("int", "INTEGER"))
    for word, shown in kinds:
        if word in text:
            return shown
    return "PATH" if name == "db" else "TEXT"


def _setting_options() -> list[inspect.Parameter]:
    """One option per setting of :class:`~nimlab.web.settings.ServerSettings`, named as the
    setting (``create_rate``: ``--create-rate``); the admin token has none (a flag would show
    it in the process list)."""
    from nimlab.web.settings import env_name, flag_name, settings_fields

    params = []
    for name, info in settings_fields():
        if name == "admin_token":
            continue
        default = info.default
        shown = "none" if default in (None, ()) else default
        option = typer.Option(
            flag_name(name),
            help=f"{info.description} [default: {shown}; ${env_name(name)}]",
            show_default=False,
            metavar=_metavar(name, info.annotation),
        )
        params.append(
            inspect.Parameter(
                name,
                inspect.Parameter.KEYWORD_ONLY,
                default=None,
                annotation=Annotated[_option_type(info.annotation), option],
            )
        )
    return params


def _command_options() -> list[inspect.Parameter]:
    return [
        inspect.Parameter(
            "config",
            inspect.Parameter.KEYWORD_ONLY,
            default=None,
            annotation=Annotated[
                Path | None,
                typer.Option(
                    "--config",
                    help="A TOML file of settings (name = value); flags and NIMLAB_* variables "
                    "win over it.",
                    metavar="PATH",
                    show_default=False,
                ),
            ],
        ),
        inspect.Parameter(
            "print_config",
            inspect.Parameter.KEYWORD_ONLY,
            default=False,
            annotation=Annotated[
                bool,
                typer.Option(
                    "--print-config",
                    help="Print every setting's value and where it came from, and stop.",
                ),
            ],
        ),
        inspect.Parameter(
            "admin_token",
            inspect.Parameter.KEYWORD_ONLY,
            default=None,
            annotation=Annotated[str | None, typer.Option("--admin-token", hidden=True)],
        ),
    ]


def _print_config(settings: ServerSettings, sources: dict[str, str]) -> None:
    """The effective settings as a TOML file would hold them, each with where it came from."""
    from nimlab.web.settings import settings_fields

    for name, _ in settings_fields():
        value = getattr(settings, name)
        if name == "admin_token":
            text = '"(hidden)"' if settings.admin_secret() else None
        elif value is None:
            text = None
        elif name == "db":  # a URL's password is never shown
            from nimlab.storage.connection import shown_db

            text = json.dumps(shown_db(str(value)))
        elif isinstance(value, bool):
            text = str(value).lower()
        elif isinstance(value, int | float):
            text = str(value)
        elif isinstance(value, tuple):
            text = "[" + ", ".join(json.dumps(v) for v in value) + "]"
        else:
            text = json.dumps(str(value))
        line = f"{name} = {text}" if text is not None else f"# {name} = (not set)"
        typer.echo(f"{line:<44} # {sources[name]}")


def serve(**options: Any) -> None:
    """The web app: set up, play, analyse and keep games in the browser (Ctrl+C stops it).

    Every setting can be given as a flag, as a NIMLAB_* environment variable, or in the TOML
    file of --config, in that order of precedence (docs/configuration.md lists them)."""
    from nimlab.web.settings import ServerSettings, SettingsError

    config: Path | None = options.pop("config")
    print_config: bool = options.pop("print_config")
    if options.pop("admin_token") is not None:
        raise UsageError(
            "--admin-token would show the token in the process list: put it in a file "
            "(--admin-token-file PATH) or in $NIMLAB_ADMIN_TOKEN"
        )
    flags = {k: v for k, v in options.items() if v is not None}
    try:
        settings, sources = ServerSettings.load(flags, config)
    except SettingsError as e:
        raise UsageError(str(e)) from None
    if print_config:
        _print_config(settings, sources)
        return
    from nimlab.web import create_app, logs

    host, db = settings.host, settings.db
    if settings.workers > 1 and not _shared_database(db):
        raise UsageError(
            f"--workers {settings.workers} needs a PostgreSQL database: SQLite lets one "
            "process write at a time, so more processes on one file make moves slower, not "
            "faster. Give --db postgresql://USER@HOST/DB, or serve with one process (the engine's "
            "threads are --engine-threads)."
        )
    _check_database(db)  # a database that cannot be used is reported now, not at startup
    secret = settings.admin_secret()
    logs.configure(settings.log_level, settings.log_format, (secret,) if secret else ())
    import logging

    from nimlab.web.settings import unknown_variables

    log = logging.getLogger("nimlab.serve")
    for warning in unknown_variables():
        log.warning(warning)
    try:
        sock = bind(host, settings.port)
    except OSError as e:
        raise UsageError(_bind_error(host, settings.port, e)) from None
    settings = settings.model_copy(
        update={"allowed_hosts": allowed_hosts(host, list(settings.allow_host))}
    )
    port = int(sock.getsockname()[1])
    from nimlab.cli.prepare import check_executable_memory

    check_executable_memory()  # (the solvers are prepared while the server answers)
    shown = f"  ({settings.workers} processes)" if settings.workers > 1 else ""
    url = f"http://{_url_host(host)}:{port}"
    typer.echo(f"nimlab is serving on {url}{shown}  (Ctrl+C stops it)")
    from nimlab import __version__
    from nimlab.storage.connection import resolve_db_path, shown_db

    log.info(
        "started: nimlab %s serving on %s with the database %s (process %d%s)",
        __version__,
        url,
        shown_db(resolve_db_path(db)),
        os.getpid(),
        f", {settings.workers} server processes" if settings.workers > 1 else "",
    )
    if settings.workers > 1:  # each server process logs its own stop, the supervisor its own
        make = lambda: create_app(db, settings=settings)  # noqa: E731
        serve_processes(settings.workers, make, sock, settings)
        log.info("stopped: every server process has ended (supervisor %d)", os.getpid())
    else:  # (the stop is logged by the server: see _stopping_server)
        _prepare_in_background()
        run_server(create_app(db, settings=settings), sock, settings=settings)


def _prepare_if_cached() -> None:
    """Load every solver now when all of them are in the kernel cache (about a second), so
    that the server processes forked next share them; else leave them to each server process,
    which prepares them in the background (the kernel cache's lock lets one process compile
    each while the others wait for it, then load it)."""
    from nimlab.theory import kernels

    if not kernels.cold():
        from nimlab.cli.prepare import prepare_solvers

        prepare_solvers()


def _prepare_in_background() -> None:
    """Prepare the solvers in a thread of this server process, logged (see
    :func:`nimlab.cli.prepare.prepare_in_background`): the page and every answer that needs no
    compiled solver (Nim's, the relatives') come at once."""
    import logging

    from nimlab.cli.prepare import prepare_in_background

    log = logging.getLogger("nimlab.serve")
    prepare_in_background(log.info, log.error)


def _stop_with_parent() -> None:
    """Ask Linux to send this process SIGTERM when its parent dies (a supervisor killed with
    SIGKILL leaves no server process behind); elsewhere nothing."""
    import ctypes
    import signal

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGTERM))  # PR_SET_PDEATHSIG


def _shared_database(db: str | None) -> bool:
    """Whether the database named is one that several server processes share well (a URL of a
    database server, not an SQLite file)."""
    from nimlab.storage import DatabaseChoiceError, resolve_db_path

    try:
        where = resolve_db_path(db)
    except DatabaseChoiceError:
        return True  # a URL: its own check says what is wrong with it
    return isinstance(where, str) and where != ":memory:"


def serve_processes(
    count: int, make_app: Callable[[], Any], sock: socket.socket, settings: ServerSettings
) -> None:
    """Serve with ``count`` processes on the one listening socket ``sock`` (the kernel shares the
    connections among them). The solvers are loaded here first when all of them are in the
    kernel cache, so that the processes share them; else each prepares them in the background.
    This process supervises them: a stop signal (SIGTERM, Ctrl+C) is passed on to each and
    waited for; a process that dies otherwise (a crash, SIGKILL) is started again. Returns once
    every process has stopped."""
    import logging
    import os
    import signal
    import sys
    import time

    from nimlab.web import metrics

    children: dict[int, int] = {}  # pid -> slot
    stopping = False
    log = logging.getLogger("nimlab.serve")  # (in the log's format: JSON lines with json)

    def spawn(slot: int) -> None:
        pid = os.fork()
        if pid == 0:  # the child: serve until stopped, then leave without the parent's cleanup
            status = 0
            try:
                for sig in (signal.SIGTERM, signal.SIGINT):
                    signal.signal(sig, signal.SIG_DFL)
                _stop_with_parent()
                _prepare_in_background()
                run_server(make_app(), sock, settings=settings)
            except BaseException:  # reported by the logging of the server itself
                status = 1
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(status)
        children[pid] = slot

    def stop(sig: int, _frame: Any) -> None:
        nonlocal stopping
        stopping = True
        for pid in list(children):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, stop)
    metrics.forget_dead_processes()  # the gauges of an earlier run on the same folder
    _prepare_if_cached()
    for slot in range(count):
        spawn(slot)
    while children:
        try:
            pid, status = os.wait()
        except ChildProcessError:
            break
        except InterruptedError:
            continue
        metrics.process_dead(pid)  # its gauges leave /metrics (PROMETHEUS_MULTIPROC_DIR)
        slot = children.pop(pid, -1)
        if slot < 0 or stopping:
            continue
        code = os.waitstatus_to_exitcode(status)
        log.warning("server process %d ended (%d): starting another", pid, code)
        time.sleep(0.5)  # a process that cannot start is not restarted in a busy loop
        if not stopping:
            spawn(slot)


def _check_database(db: str | None) -> None:
    """Open the database and look for damage (a missing table or index; SQLite's quick_check
    where the file is small enough for it to be cheap); raises :class:`StorageError` saying what
    is wrong (the CLI's exit status 1)."""
    store = open_store(db)
    try:
        problems = store.problems()
        path = store.db.name
    finally:
        store.close()
    if problems:
        shown = "; ".join(problems[:5]) + (
            f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""
        )
        raise StorageError(
            f"the database {path} is damaged: {shown}. Restore it from a backup "
            "(nimlab db backup makes one), or start with another --db."
        )


serve.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
    [*_setting_options(), *_command_options()]
)
serve.__annotations__ = {p.name: p.annotation for p in serve.__signature__.parameters.values()}  # type: ignore[attr-defined]
app.command("serve")(serve)


GC_THRESHOLDS = (20_000, 2, 200)
"""The garbage collector's thresholds in the server (:func:`gc.set_threshold`): allocations
between two young-generation collections (Python's default, 700, makes the collector run every
few requests; the server's objects are short-lived), young collections between two of the middle
generation, and middle ones between two full ones (when the objects waiting for one are a
quarter of the old ones: Python's own rule). A middle collection holds the interpreter, so the
event loop waits for all of it; it examines what survived the young ones since the last, and a
bot's search in Python (a crowd's perfect bots) leaves many survivors: at (20,000, 20, 20) a
middle collection took 78 ms (loop stalled 74 ms, twice in 12 s beside 30 games of three perfect
bots), after 2 young ones 8-11 ms at most (no stall from the collector over 30 ms). Full
collections keep the pace they had at (20,000, 20, 20): at most one every 400 young ones."""


SWITCH_INTERVAL = 0.0001
"""Seconds a thread running Python code keeps the interpreter lock while another thread waits
for it (Python's default is 0.005). The event loop gives the lock up at each of its system calls
and then waits this long for it whenever an engine thread runs Python code (a bot's paranoid
search): several times per request. With the default, two people's moves beside 20 heavy games
of bots had a 99th percentile about 2.7 times as high as with 1 ms (median of five runs of
``bench/bench_abuse.py --only heavy-bots``). Beside 30 games of a crowd's perfect bots (three
players: a search in Python for every move, on one engine thread), 1 ms was still too long: the
event loop's timers were late by 1.2 ms at the median (0.4 ms at 0.2 ms), a move request took
8-11 ms inside the server (1.3-3.5 ms at 0.2 ms), and an honest player's moves against a bot
p50 14-19 ms (5 ms at 0.1 ms; 100 moves a run, on two cores shared with other work at load 2-3).
Threads that all run Python lose no measurable speed to the shorter turns."""


def run_server(app: Any, sock: socket.socket, *, settings: ServerSettings | None = None) -> None:
    """Serve ``app`` on a bound socket until stopped, the way ``nimlab serve`` does: timed
    connections, bounded request heads and WebSocket messages, no server header; the objects
    made while starting are frozen out of garbage collection, which then runs less often, and
    threads take turns with the event loop every :data:`SWITCH_INTERVAL` seconds."""
    import gc
    import sys

    import uvicorn

    from nimlab.web.guard import Holdings
    from nimlab.web.proxies import TrustedProxies
    from nimlab.web.settings import ServerSettings

    s = settings or ServerSettings()
    held = Holdings.of("connections", s)
    live = getattr(getattr(app, "state", None), "live", None)
    if live is not None:  # counted with the other processes serving its database
        live.held["connections"] = held
    config = uvicorn.Config(
        app,
        log_level="warning",
        log_config=None,  # nimlab's logging is set up by nimlab serve
        access_log=False,  # at "warning" nothing is logged, but each request still formats it
        http=timed_protocol(
            _http_protocol(),
            s.request_timeout,
            held=held,
            proxies=TrustedProxies(s.trusted_proxies),
            unfinished=unfinished_bounds(s),
        ),
        timeout_keep_alive=math.ceil(s.keep_alive),
        h11_max_incomplete_event_size=16 * 1024,
        ws_max_size=s.ws_max_size,
        limit_concurrency=s.max_concurrency,
        # requests in flight get most of the stop's time, the app's own stop the rest
        # (Uvicorn waits with asyncio, which takes a float)
        timeout_graceful_shutdown=typing.cast(int, s.shutdown_timeout * 0.6),
        server_header=False,
        proxy_headers=False,  # X-Forwarded-For only from --trusted-proxies (create_app)
    )
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)
    sys.setswitchinterval(SWITCH_INTERVAL)
    _stopping_server(config, s.shutdown_timeout).run(sockets=[sock])


def _stopping_server(config: Any, shutdown_timeout: float) -> Any:
    """Uvicorn's server, which on a stop signal (SIGTERM, Ctrl+C) stops accepting, lets the
    requests in flight finish, asks open pages to reconnect (WebSocket close 1012), stores what
    is pending, and exits within ``shutdown_timeout`` seconds whatever happens (a locked
    database): past it, the process ends at once. Nothing acknowledged is lost then: every
    answer is sent only once its change is committed."""
    import logging
    import os
    import threading

    import uvicorn

    class Server(uvicorn.Server):
        _watchdog: threading.Timer | None = None

        def handle_exit(self, sig: int, frame: Any) -> None:
            super().handle_exit(sig, frame)
            if self._watchdog is None:  # (no logging here: this runs in a signal handler)
                self._watchdog = threading.Timer(shutdown_timeout, self._give_up)
                self._watchdog.daemon = True
                self._watchdog.start()

        async def _serve(self, sockets: Any = None) -> None:
            try:
                await super()._serve(sockets)
            finally:  # here, not after run(): Uvicorn then ends by the signal it caught
                logging.getLogger("nimlab.serve").info("stopped (process %d)", os.getpid())

        @staticmethod
        def _give_up() -> None:
            log = logging.getLogger("nimlab.web")
            log.error(
                "stopped after %g s without finishing (the database may be locked): the "
                "writes not yet committed were never acknowledged",
                shutdown_timeout,
            )
            for handler in logging.getLogger().handlers:
                handler.flush()
            os._exit(1)

    return Server(config)
