"""Running nimlab in tests: in this process through Typer's ``CliRunner`` (fast; the way most
tests see the command line), or in a child process for the few smoke tests that need a real one
(console script, ``python -m nimlab``, Ctrl-C, a terminal)."""

from __future__ import annotations

import os
import platform
import signal
import subprocess
import termios
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO, Any

from typer.testing import CliRunner

from nimlab.cli import app

PATIENCE = 600.0
"""Seconds to wait for a child process, a server or a browser: reached only when a test fails (a
busy machine may need a minute just to start Python and load the solver). No test waits for a
fixed time."""


def read_until(stream: IO[str], text: str) -> str:
    """Read ``stream`` until ``text`` appears or the stream ends; returns what was read."""
    seen = ""
    deadline = time.monotonic() + PATIENCE
    while text not in seen and time.monotonic() < deadline:
        char = stream.read(1)
        if not char:
            break
        seen += char
    return seen


_READ_SYSCALLS = {
    "x86_64": {"0", "7", "23", "270", "271"},  # read, poll, select, pselect6, ppoll
    "aarch64": {"63", "72", "73"},  # read, pselect6, ppoll
}.get(platform.machine(), set())


def wait_until_reading(pid: int, tty: int) -> None:
    """Wait until process ``pid`` is blocked waiting for input from its terminal (master side
    ``tty``): in a read, poll or select system call.

    Only then does Ctrl-C interrupt that call and become a ``KeyboardInterrupt`` at once, and
    Ctrl-D reach readline as a key: a signal that arrives after the prompt is printed but before
    the call starts is noticed only after the next key press. Where ``/proc/PID/syscall`` cannot
    be read, readline's non-canonical terminal mode is taken as the sign instead."""
    syscall = Path(f"/proc/{pid}/syscall")
    deadline = time.monotonic() + PATIENCE
    while True:
        assert time.monotonic() < deadline, "the child never started reading its terminal"
        try:
            number: str | None = syscall.read_text().split()[0]
        except (OSError, IndexError):
            number = None
        if number is None or not _READ_SYSCALLS:  # cannot tell: readline's mode at least
            if not termios.tcgetattr(tty)[3] & termios.ICANON:
                return
        elif number in _READ_SYSCALLS:
            return
        time.sleep(0.01)


def restore_sigint() -> None:
    """``preexec_fn`` for children that must react to Ctrl-C: a shell that starts the test run in
    the background (as CI may) hands its children SIGINT ignored, and Python then installs no
    KeyboardInterrupt handler."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def nimlab(
    *args: str, stdin: str | None = None, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``nimlab ARGS`` run in this process, with ``stdin`` as its input and ``env`` as its
    environment variables (added to this process's while it runs). Returns what a child process
    would: exit status, stdout and stderr (no colour, 80 columns unless ``COLUMNS`` says
    otherwise). An unexpected exception propagates with its traceback."""
    changes: dict[str, str | None] = {"COLUMNS": None, "LINES": None, "NO_COLOR": None}
    if env is not None:
        changes.update({k: v for k, v in env.items() if os.environ.get(k) != v})
    result = CliRunner().invoke(app, list(args), input=stdin, env=changes, catch_exceptions=False)
    return subprocess.CompletedProcess(
        ["nimlab", *args], result.exit_code, result.stdout, result.stderr
    )


def until(check: Callable[[], Any], what: str, bound: float = PATIENCE) -> Any:
    """Wait until ``check()`` is truthy (polling) and return it; fail after ``bound`` seconds
    (reached only when the test fails)."""
    end = time.monotonic() + bound
    while True:
        got = check()
        if got:
            return got
        assert time.monotonic() < end, f"never happened: {what}"
        time.sleep(0.02)


def run_starved(
    args: list[str],
    *,
    stdin: str,
    env: Mapping[str, str] | None = None,
    share: float = 0.5,
    timeout: float = PATIENCE,
) -> subprocess.CompletedProcess[str]:
    """Run ``args`` to the end as on a machine busy on every core, without making it busy: a
    thread of this process stops the child (``SIGSTOP``) and lets it go on (``SIGCONT``) in turns
    of a few milliseconds, so that it gets at most ``share`` of the wall time that passes, as
    when other processes take the rest. Its clock runs on while it waits, as under real load;
    the other tests keep both cores. Raises ``CalledProcessError`` when it fails."""
    run, pause = 0.02 * share, 0.02 * (1 - share)
    proc = subprocess.Popen(
        args,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    pidfd = os.pidfd_open(proc.pid)  # names this child even after it is gone (no pid reuse)
    done = threading.Event()

    def pace() -> None:
        try:
            while not done.wait(run):
                signal.pidfd_send_signal(pidfd, signal.SIGSTOP)
                done.wait(pause)
                signal.pidfd_send_signal(pidfd, signal.SIGCONT)
        except ProcessLookupError:  # it has ended
            pass

    pacer = threading.Thread(target=pace, daemon=True)
    pacer.start()
    try:
        out, err = proc.communicate(stdin, timeout=timeout)
    finally:
        done.set()
        pacer.join()
        proc.kill()
        proc.wait()
        os.close(pidfd)
    if proc.returncode:
        raise subprocess.CalledProcessError(proc.returncode, args, out, err)
    return subprocess.CompletedProcess(args, proc.returncode, out, err)
