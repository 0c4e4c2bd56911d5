"""``nimlab serve``: the web app on http://127.0.0.1:8000 (FastAPI + Uvicorn).

Ready for ``--host 0.0.0.0``: the port is bound before "serving on" is printed (a busy port is
reported, exit 1); requests must name one of this machine's host names (against DNS rebinding;
``--allow-host`` adds more); a connection that does not complete a request's headers within
``--request-timeout`` seconds is closed (half-open and slowloris connections), idle keep-alive
connections after 5 s; ``--admin-token`` (or ``$NIMLAB_ADMIN_TOKEN``) guards registry changes.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import weakref
from collections.abc import Iterable
from typing import Annotated, Any

import typer

from nimlab.cli.app import app
from nimlab.cli.database import DbOption, open_store

__all__ = ["allowed_hosts", "bind", "serve", "timed_protocol"]

ADMIN_ENV = "NIMLAB_ADMIN_TOKEN"
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
    return tuple(sorted(n for n in names if n))


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


def timed_protocol(base: type[Any], seconds: float) -> type[Any]:
    """Uvicorn's HTTP protocol ``base``, closing a connection that has no request in progress
    (headers not complete, or idle) for ``seconds``, and answering 429 and closing a connection
    from an address that holds ``MAX_CONNECTIONS_PER_CLIENT`` (:mod:`nimlab.web.settings`)
    already, so one client cannot take every connection the server has."""
    from nimlab.web import settings

    # open connections per client address (weak: a closed connection is forgotten with it)
    held: dict[str, weakref.WeakSet[asyncio.BaseTransport]] = {}
    made = [0]

    def admitted(transport: asyncio.Transport) -> bool:
        peer = transport.get_extra_info("peername")
        host = str(peer[0]) if isinstance(peer, tuple) and peer else ""
        mine = held.setdefault(host, weakref.WeakSet())
        if sum(1 for t in mine if not t.is_closing()) >= settings.MAX_CONNECTIONS_PER_CLIENT:
            return False
        mine.add(transport)
        made[0] += 1
        if made[0] % 1024 == 0:  # forget the addresses without open connections
            for other in [h for h, ts in held.items() if not ts]:
                del held[other]
        return True

    class Timed(base):  # type: ignore[misc]
        def connection_made(self, transport: asyncio.Transport) -> None:
            super().connection_made(Corked(transport, self.loop))
            self._nimlab_since = self.loop.time()
            self._nimlab_timer = self.loop.call_later(seconds, self._nimlab_check)
            if not admitted(transport):
                self.transport.write(TOO_MANY_CONNECTIONS)
                self.transport.close()

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
            self._nimlab_timer.cancel()
            super().connection_lost(exc)

        def handle_websocket_upgrade(self, *args: Any) -> None:
            self._nimlab_timer.cancel()  # the WebSocket's own protocol takes the connection
            super().handle_websocket_upgrade(*args)

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


@app.command("serve")
def serve(
    host: Annotated[
        str, typer.Option("--host", help="The address to listen on (0.0.0.0: every network).")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="The port.")] = 8000,
    db: DbOption = None,
    allow_host: Annotated[
        list[str] | None,
        typer.Option(
            "--allow-host",
            help="Another host name requests may use (e.g. a DNS name of this machine); "
            "'*' turns the check off.",
        ),
    ] = None,
    admin_token: Annotated[
        str | None,
        typer.Option(
            "--admin-token",
            envvar=ADMIN_ENV,
            help="Removing players and resetting statistics then needs this token "
            "(Authorization: Bearer TOKEN).",
            show_default=False,
        ),
    ] = None,
    request_timeout: Annotated[
        float,
        typer.Option(
            "--request-timeout",
            min=0.1,
            max=3600,
            help="Seconds a connection may take to send a request's headers.",
        ),
    ] = 10.0,
) -> None:
    """The web app: set up, play, analyse and keep games in the browser (Ctrl+C stops it)."""
    from nimlab.web import ServerSettings, create_app

    open_store(db).close()  # a database that cannot be used is reported now, not at startup
    try:
        sock = bind(host, port)
    except OSError as e:
        why = "it is in use" if e.errno in (98, 48, 10048) else (e.strerror or str(e))
        typer.echo(
            f"error: cannot listen on {host} port {port}: {why}. Choose another with --port.",
            err=True,
        )
        raise typer.Exit(1) from None
    token = admin_token.strip() if admin_token else None
    settings = ServerSettings(
        allowed_hosts=allowed_hosts(host, list(allow_host or [])),
        admin_token=token or None,
    )
    port = int(sock.getsockname()[1])
    typer.echo(f"nimlab is serving on http://{_url_host(host)}:{port}  (Ctrl+C stops it)")
    run_server(create_app(db, settings=settings), sock, request_timeout=request_timeout)


GC_THRESHOLD = 20_000
"""Allocations between two young-generation collections in the server (Python's default, 700,
makes the collector run every few requests; the server's objects are short-lived)."""


SWITCH_INTERVAL = 0.001
"""Seconds a thread running Python code keeps the interpreter lock while another thread waits
for it (Python's default is 0.005). The event loop gives the lock up at each of its system calls
and then waits this long for it whenever an engine thread runs Python code (a bot's paranoid
search). With the default, two people's moves beside 20 heavy games of bots had a 99th
percentile about 2.7 times as high as with this value (median of five runs of
``bench/bench_abuse.py --only heavy-bots``)."""


def run_server(app: Any, sock: socket.socket, *, request_timeout: float = 10.0) -> None:
    """Serve ``app`` on a bound socket until stopped, the way ``nimlab serve`` does: timed
    connections, bounded request heads and WebSocket messages, no server header; the objects
    made while starting are frozen out of garbage collection, which then runs less often, and
    threads take turns with the event loop every :data:`SWITCH_INTERVAL` seconds."""
    import gc
    import sys

    import uvicorn

    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,  # at "warning" nothing is logged, but each request still formats it
        http=timed_protocol(_http_protocol(), request_timeout),
        timeout_keep_alive=5,
        h11_max_incomplete_event_size=16 * 1024,
        ws_max_size=64 * 1024,
        limit_concurrency=4096,
        timeout_graceful_shutdown=5,
        server_header=False,
    )
    gc.collect()
    gc.freeze()
    gc.set_threshold(GC_THRESHOLD, 20, 20)
    sys.setswitchinterval(SWITCH_INTERVAL)
    uvicorn.Server(config).run(sockets=[sock])
