"""Preparing the solvers (the Numba kernels of :mod:`nimlab.theory.kernels`) before any budget
starts, saying so on stderr when it compiles (the first run after an install), or in the
background of a server that answers meanwhile (:func:`prepare_in_background`), and ``nimlab
prepare``, which does it on its own (an install step)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from pathlib import Path

import typer
from rich.text import Text

from nimlab.cli.app import app
from nimlab.cli.common import console, err_console, progress_bar
from nimlab.theory import kernels

__all__ = [
    "PREPARE_GATE",
    "check_executable_memory",
    "prepare_command",
    "prepare_in_background",
    "prepare_solvers",
    "say_when_preparing",
]

PREPARE_GATE = "NIMLAB_TEST_PREPARE_GATE"
"""A test hook: when this environment variable names a file, :func:`prepare_in_background`
prepares nothing until that file exists (a test holds a server's solvers unprepared for as
long as it likes, with no timing; see docs/testing.md)."""


def say_when_preparing() -> None:
    """Prepare nothing now, but say "preparing the solvers once (about N s)" on stderr when a
    question first needs a kernel that is not compiled yet (the first run after an install).
    Answers that need no kernel (Nim's formulas, the relatives' theorems, small searches) then
    load neither the kernels nor Numba."""
    told: set[str] = set()

    def notice(group: str, seconds: float) -> None:
        if not told:
            err_console.print(
                f"preparing the solvers once (about {seconds:.0f} s)", highlight=False
            )
        told.add(group)

    kernels.cold_notice = notice


def prepare_solvers(
    groups: Iterable[str] | None = None, say: Callable[[str], None] | None = None
) -> None:
    """Prepare ``groups`` (every kernel by default). When some are not in the kernel cache
    yet, say "preparing the solvers once (about N s)" on stderr first, with a progress bar
    when stderr is a terminal, or through ``say`` when given (a server's log, in its format;
    no bar); otherwise nothing is printed (kernels found in the cache are loaded when a
    question first needs them, outside its budget too). Where the system refuses executable
    memory (which compiled code needs), one line says so and the command ends with status 1."""
    try:
        _prepare(groups, say)
    except PermissionError as e:  # Numba's "cannot allocate executable memory"
        _refused(e)


def _refused_text(error: OSError) -> str:
    return (
        "the solvers cannot run here: the system refuses executable memory, which compiled "
        "code needs (a systemd unit's MemoryDenyWriteExecute=true, SELinux's deny_execmem, or "
        f"the like): {error.strerror or error}"
    )


def _refused(error: OSError) -> None:
    err_console.print(
        Text.assemble(("error: ", "bold red"), _refused_text(error)),
        highlight=False,
        soft_wrap=True,
    )
    raise typer.Exit(1) from None


def check_executable_memory() -> None:
    """End the command with status 1 and one line when the system refuses to make written
    memory executable, as the solvers' compiled code needs (checked in microseconds with a page
    of this process's own: a server that prepares its solvers in the background says so before
    it serves, not at its first question). Where it cannot be checked, nothing happens."""
    refused = _executable_memory_refused()
    if refused is not None:
        _refused(refused)


def _executable_memory_refused() -> OSError | None:
    """Why a page written by this process cannot be made executable, or ``None`` when it can
    (or the check itself is not possible here)."""
    try:
        import ctypes
        import mmap

        libc = ctypes.CDLL(None, use_errno=True)
        libc.mmap.restype = ctypes.c_void_p
        libc.mmap.argtypes = [
            ctypes.c_void_p,
            ctypes.c_size_t,
            ctypes.c_int,
            ctypes.c_int,
            ctypes.c_int,
            ctypes.c_long,
        ]
        libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
        size = mmap.PAGESIZE
        flags = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS
        page = libc.mmap(None, size, mmap.PROT_READ | mmap.PROT_WRITE, flags, -1, 0)
        if page is None or page == ctypes.c_void_p(-1).value:
            return None
        try:
            if libc.mprotect(page, size, mmap.PROT_READ | mmap.PROT_EXEC) != 0:
                errno = ctypes.get_errno()
                return PermissionError(errno, os.strerror(errno))
        finally:
            libc.munmap(page, size)
    except (AttributeError, OSError, ImportError):
        return None
    return None


def prepare_in_background(say: Callable[[str], None], error: Callable[[str], None]) -> None:
    """Prepare every solver in a thread of this process while it serves (nothing when they are
    prepared already): ``say`` is told "preparing the solvers in the background (about N s)"
    when some are not in the kernel cache yet, ``error`` why preparing failed (the questions
    that need a solver then prepare it themselves). Meanwhile a question that needs a solver
    waits for it in its own thread (:func:`nimlab.theory.kernels.ensure`), and
    :func:`nimlab.theory.kernels.preparing` is true. See :data:`PREPARE_GATE` for tests."""
    if all(kernels.ready(g) for g in kernels.GROUPS):
        return

    def first() -> None:
        cold = kernels.cold()
        if cold:
            seconds = sum(kernels.COLD_SECONDS[g] for g in cold)
            say(f"preparing the solvers in the background (about {seconds:.0f} s)")
        gate = os.environ.get(PREPARE_GATE)
        while gate and not Path(gate).exists():
            time.sleep(0.02)

    def failed(e: BaseException) -> None:
        if isinstance(e, PermissionError):
            error(_refused_text(e))
        else:
            error(f"preparing the solvers failed ({e}): each is prepared when a question needs it")

    kernels.prepare_in_background(first=first, failed=failed)


def _prepare(groups: Iterable[str] | None, say: Callable[[str], None] | None) -> None:
    wanted = list(kernels.GROUPS if groups is None else groups)
    cold = kernels.cold(wanted)
    if not cold:
        if groups is None:
            kernels.prepare(wanted)
        return
    seconds = sum(kernels.COLD_SECONDS[g] for g in cold)
    message = f"preparing the solvers once (about {seconds:.0f} s)"
    if say is not None:
        say(message)
    else:
        err_console.print(message, highlight=False)
    if say is not None or not err_console.is_terminal:
        kernels.prepare(cold)
        return
    with progress_bar("solvers", "line", "elapsed") as bar:
        task = bar.add_task("solvers", total=seconds, line="")
        done = 0.0

        def step(group: str, _index: int, _total: int) -> None:
            nonlocal done
            bar.update(task, completed=done, line=group)
            done += kernels.COLD_SECONDS.get(group, 0.0)

        kernels.prepare(cold, progress=step)
    if groups is None:
        kernels.prepare(wanted)


@app.command("prepare")
def prepare_command() -> None:
    """Compile the solvers now into their cache, which a first start does otherwise (30-60 s).

    Later processes load them from the cache in about a second. The cache is the folder
    $NUMBA_CACHE_DIR when it is set (the systemd unit of docs/deploy.md sets it; run this as
    the service's user), else beside nimlab's files or in your user cache folder."""
    prepare_solvers()
    place = kernels.cache_place()
    console.print(f"The solvers are prepared: {place}.", highlight=False, soft_wrap=True)
