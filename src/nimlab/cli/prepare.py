"""Preparing the solvers (the Numba kernels of :mod:`nimlab.theory.kernels`) before any budget
starts, saying so on stderr when it compiles (the first run after an install), and ``nimlab
prepare``, which does it on its own (an install step)."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import typer
from rich.text import Text

from nimlab.cli.app import app
from nimlab.cli.common import console, err_console
from nimlab.theory import kernels

__all__ = ["prepare_command", "prepare_solvers", "say_when_preparing"]


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
        err_console.print(
            Text.assemble(
                ("error: ", "bold red"),
                "the solvers cannot run here: the system refuses executable memory, which "
                "compiled code needs (a systemd unit's MemoryDenyWriteExecute=true, SELinux's "
                f"deny_execmem, or the like): {e.strerror or e}",
            ),
            highlight=False,
            soft_wrap=True,
        )
        raise typer.Exit(1) from None


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
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TimeElapsedColumn(),
        console=err_console,
        transient=True,
    ) as bar:
        task = bar.add_task("solvers", total=seconds)
        done = 0.0

        def step(group: str, _index: int, _total: int) -> None:
            nonlocal done
            bar.update(task, completed=done, description=f"solvers: {group}" if group else "")
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
