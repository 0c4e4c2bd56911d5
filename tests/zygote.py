"""Server processes for the tests, forked from one process that has imported nimlab already.

A ``nimlab serve`` started with ``python -m nimlab serve`` spends about 0.8 s of CPU importing
FastAPI, Numba and nimlab, and 0.4 s loading its kernels, before it serves; the tests start two
dozen of them. Each pytest worker keeps one *zygote* (as Chromium and Android call theirs): a
process that imports those modules and loads the kernels once, then forks a child per server.
The child is a real process running the same ``nimlab.cli.main`` with the same arguments,
environment and working folder, and its own standard error: it opens its database and serves
exactly as the console script does (its preparing finds the kernels loaded); only the imports
and the loaded kernels are shared. Tests of the start itself (the console
script, its messages, the deployment recipes) keep starting real ``nimlab`` processes.

Nothing here is imported by nimlab. :func:`start` falls back to an ordinary process when the
environment asked for differs from the zygote's in a variable read at import time (``NUMBA_*``,
``PYTHON*``), when no zygote can be started, and always with ``NIMLAB_TEST_ZYGOTE=0``.
"""

from __future__ import annotations

import array
import atexit
import contextlib
import io
import json
import os
import select
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO, Any

__all__ = ["Forked", "start"]

_IMPORT_TIME = ("NUMBA_", "PYTHON", "PROMETHEUS_")
"""Environment variables read when modules are imported: a child whose environment differs
from the zygote's in one of them cannot share the zygote's imports."""


class Forked:
    """A child of the zygote, seen as a :class:`subprocess.Popen`: ``pid``, ``returncode``,
    ``stderr`` (a pipe), :meth:`poll`, :meth:`wait`, :meth:`send_signal`, :meth:`terminate`,
    :meth:`kill`. Its exit status comes from the zygote, which reaps it."""

    def __init__(self, args: list[str], pid: int, status: int, stderr: IO[bytes]) -> None:
        self.args = args
        self.pid = pid
        self.returncode: int | None = None
        self.stdout: IO[bytes] | None = None
        self.stderr: IO[bytes] | None = stderr
        self._status = status

    def poll(self) -> int | None:
        return self._read_status(0)

    def wait(self, timeout: float | None = None) -> int:
        code = self._read_status(timeout)
        if code is None:
            raise subprocess.TimeoutExpired(self.args, timeout or 0)
        return code

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def _read_status(self, timeout: float | None) -> int | None:
        if self.returncode is not None:
            return self.returncode
        if not select.select([self._status], [], [], timeout)[0]:
            return None
        data = b""
        while len(data) < 8:
            chunk = os.read(self._status, 8 - len(data))
            if not chunk:  # the zygote is gone: the child's status is lost
                break
            data += chunk
        os.close(self._status)
        self.returncode = int.from_bytes(data, "little", signed=True) if len(data) == 8 else -1
        return self.returncode


class _Zygote:
    def __init__(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self.env = dict(os.environ)
        self.proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), str(theirs.fileno())],
            pass_fds=[theirs.fileno()],
            stdin=subprocess.DEVNULL,
        )
        theirs.close()
        self.sock = ours
        self.lock = threading.Lock()
        ready = ours.recv(1)  # imports done
        if ready != b"R":
            raise OSError("the zygote did not start")
        atexit.register(self.close)

    def close(self) -> None:
        """End the zygote (it ends when its socket closes) and reap it."""
        self.sock.close()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()

    def fork(self, argv: list[str], env: dict[str, str], stderr_fd: int) -> tuple[int, int]:
        status_r, status_w = os.pipe()
        request = json.dumps({"argv": argv, "env": env, "cwd": os.getcwd()}).encode()
        with self.lock:
            try:
                self.sock.sendmsg(
                    [len(request).to_bytes(4, "little") + request],
                    [
                        (
                            socket.SOL_SOCKET,
                            socket.SCM_RIGHTS,
                            array.array("i", [stderr_fd, status_w]).tobytes(),
                        )
                    ],
                )
            finally:
                os.close(status_w)
            reply = _recv_exactly(self.sock, 8)
        return int.from_bytes(reply, "little", signed=True), status_r


def _recv_exactly(sock: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise OSError("the zygote is gone")
        data += chunk
    return data


_zygote: _Zygote | None = None
_zygote_failed = False
_start_lock = threading.Lock()


def start(argv: list[str], env: dict[str, str]) -> Forked | subprocess.Popen[bytes]:
    """``nimlab`` with arguments ``argv`` (after the program name) and environment ``env``,
    standard output discarded and standard error in a pipe: a child of this worker's zygote,
    or an ordinary process when the zygote cannot serve it."""
    global _zygote, _zygote_failed
    command = [sys.executable, "-m", "nimlab", *argv]
    with _start_lock:
        if _zygote is None and not _zygote_failed and os.environ.get("NIMLAB_TEST_ZYGOTE") != "0":
            try:
                _zygote = _Zygote()
            except OSError:
                _zygote_failed = True
        zygote = _zygote
    same_imports = zygote is not None and all(
        env.get(k) == zygote.env.get(k) for k in {*env, *zygote.env} if k.startswith(_IMPORT_TIME)
    )
    if zygote is None or not same_imports:
        return subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err_r, err_w = os.pipe()
    try:
        pid, status = zygote.fork(["nimlab", *argv], env, err_w)
    finally:
        os.close(err_w)
    return Forked(command, pid, status, os.fdopen(err_r, "rb"))


# -- the zygote itself ------------------------------------------------------------------------


def _serve_requests(sock: socket.socket) -> None:
    children: dict[int, int] = {}  # pid: the pipe its exit status is written to
    while True:
        readable = select.select([sock], [], [], 0.05)[0]
        while children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            fd = children.pop(pid, None)
            if fd is not None:
                code = os.waitstatus_to_exitcode(status)
                with contextlib.suppress(OSError):
                    os.write(fd, code.to_bytes(8, "little", signed=True))
                os.close(fd)
        if not readable:
            continue
        header, fds, _flags, _addr = socket.recv_fds(sock, 4, 2)
        if not header:  # the worker is gone
            return
        size = int.from_bytes(header + _recv_exactly(sock, 4 - len(header)), "little")
        request = json.loads(_recv_exactly(sock, size))
        stderr_fd, status_fd = fds
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            _child(request, stderr_fd, [sock.fileno(), status_fd, *children.values()])
        os.close(stderr_fd)
        children[pid] = status_fd
        sock.sendall(pid.to_bytes(8, "little", signed=True))


def _child(request: dict[str, Any], stderr_fd: int, close: list[int]) -> None:
    code = 1
    try:
        for fd in close:
            os.close(fd)
        devnull = os.open(os.devnull, os.O_RDWR)
        os.dup2(devnull, 0)
        os.dup2(devnull, 1)
        os.dup2(stderr_fd, 2)
        os.close(devnull)
        os.close(stderr_fd)
        os.environ.clear()
        os.environ.update(request["env"])
        _fresh_standard_streams()
        os.chdir(request["cwd"])
        sys.argv = request["argv"]
        from nimlab.cli import main

        try:
            main()
            code = 0
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else 0 if stop.code is None else 1
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def _fresh_standard_streams() -> None:
    """New ``sys.stdin``, ``sys.stdout`` and ``sys.stderr`` over descriptors 0, 1 and 2, made
    as Python makes them at start-up: the zygote's own know what their descriptors were then
    (a file that could seek, say), not the child's pipes."""
    unbuffered = bool(os.environ.get("PYTHONUNBUFFERED"))
    sys.stdin = io.TextIOWrapper(io.BufferedReader(io.FileIO(0, "r", closefd=False)))

    def writer(fd: int, errors: str) -> io.TextIOWrapper:
        raw = io.FileIO(fd, "w", closefd=False)
        return io.TextIOWrapper(
            raw if unbuffered else io.BufferedWriter(raw),
            errors=errors,
            line_buffering=fd == 2 or raw.isatty(),
            write_through=unbuffered,
        )

    sys.stdout = writer(1, "strict")
    sys.stderr = writer(2, "backslashreplace")


def _main(fd: int) -> None:
    sock = socket.socket(fileno=fd)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    # what `nimlab serve` imports and prepares before it serves: the kernels, loaded from
    # Numba's cache (or compiled) once here rather than in every child (about 0.4 s of CPU
    # each); a child's own preparing then finds them ready
    import numba  # noqa: F401

    import nimlab.cli.app
    import nimlab.cli.serve
    import nimlab.web.app  # noqa: F401
    from nimlab.theory import kernels

    kernels.prepare()
    assert threading.active_count() == 1, "a zygote must not fork with threads running"
    sock.sendall(b"R")
    _serve_requests(sock)


if __name__ == "__main__":
    _main(int(sys.argv[1]))
