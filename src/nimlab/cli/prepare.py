"""Preparing the solvers (the Numba kernels of :mod:`nimlab.theory.kernels`) before any budget
starts, saying so on stderr when it compiles (the first run after an install)."""

from __future__ import annotations

from collections.abc import Iterable

from nimlab.cli.common import err_console
from nimlab.theory import kernels

__all__ = ["prepare_solvers", "say_when_preparing"]


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


def prepare_solvers(groups: Iterable[str] | None = None) -> None:
    """Prepare ``groups`` (every kernel by default). When some are not in the kernel cache
    yet, say "preparing the solvers once (about N s)" on stderr first, with a progress bar
    when stderr is a terminal; otherwise nothing is printed (kernels found in the cache are
    loaded when a question first needs them, outside its budget too)."""
    wanted = list(kernels.GROUPS if groups is None else groups)
    cold = kernels.cold(wanted)
    if not cold:
        if groups is None:
            kernels.prepare(wanted)
        return
    seconds = sum(kernels.COLD_SECONDS[g] for g in cold)
    err_console.print(f"preparing the solvers once (about {seconds:.0f} s)", highlight=False)
    if not err_console.is_terminal:
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
