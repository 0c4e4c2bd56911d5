"""Every Numba kernel of the theory layer, in one place: which exist, whether they are cached,
and preparing them (importing, then compiling or loading from Numba's cache) outside every
budget.

A *group* is one kernel module and the solver that drives it:

=============  ==================================  =====================================
group          module                              used by
=============  ==================================  =====================================
grundy         ``_grundy_kernels``                 :mod:`nimlab.theory.grundy`
retrograde     ``_retrograde_kernels``             :mod:`nimlab.theory.retrograde`
split          ``_split_kernels``                  :mod:`nimlab.theory.splitsearch`
paranoid       ``_paranoid_kernels``               :mod:`nimlab.theory.paranoid`
quotient       ``_quotient_kernels``               :mod:`nimlab.theory.quotient`
=============  ==================================  =====================================

Every kernel is compiled with ``cache=True``: the first process compiles it (seconds), the later
ones load it from the cache (next to the sources, or under ``NUMBA_CACHE_DIR``). Each solver calls
:func:`ensure` for its group before its first kernel call; :func:`ensure` runs a small question
through the solver (so each kernel is compiled for the argument types real questions use) inside
:func:`~nimlab.theory.budget.not_counted`: a budget counts work, never compiling or importing.
Interfaces call :func:`prepare` before they start answering (``nimlab serve``, a command's first
run with :func:`cold` groups, which can then say so).
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from types import ModuleType

from nimlab.theory.budget import not_counted
from nimlab.theory.octal import TakeAndBreak

__all__ = ["COLD_SECONDS", "GROUPS", "cold", "ensure", "groups_for", "prepare", "ready"]


def _warm_grundy() -> None:
    from nimlab.theory.grundy import grundy_sequence

    for code in ("0.77", "0.123"):
        for method in ("sparse", "quadratic"):
            grundy_sequence(TakeAndBreak.octal(code), 100, method=method, prove=True)


def _warm_retrograde() -> None:
    from nimlab.theory.retrograde import DenseSolver

    for rule in (TakeAndBreak.nim(), TakeAndBreak.subtraction({1, 2})):
        DenseSolver(rule, max_heap=3, max_piles=2).value((1, 2))
    # scores of 32 bits (remoteness beyond 16 bits' reach)
    DenseSolver(TakeAndBreak.subtraction({1, 2}), max_heap=33_000, max_piles=1).value((5,))


def _warm_split() -> None:
    from nimlab.theory.splitsearch import SplitSolver

    SplitSolver(TakeAndBreak.octal("0.77"), misere=True).value((4, 3))


def _warm_paranoid() -> None:
    from nimlab.theory.paranoid import ParanoidSolver

    ParanoidSolver(TakeAndBreak.nim(), (1, 2, 3)).value((1, 2, 3), (0, 1, 2), 0, 0)


def _warm_quotient() -> None:
    from nimlab.theory.quotient import misere_quotient

    misere_quotient(TakeAndBreak.octal("0.77"), 5)


GROUPS: dict[str, tuple[str, Callable[[], None]]] = {
    "grundy": ("nimlab.theory._grundy_kernels", _warm_grundy),
    "retrograde": ("nimlab.theory._retrograde_kernels", _warm_retrograde),
    "split": ("nimlab.theory._split_kernels", _warm_split),
    "paranoid": ("nimlab.theory._paranoid_kernels", _warm_paranoid),
    "quotient": ("nimlab.theory._quotient_kernels", _warm_quotient),
}
"""Each group: its kernel module and a small question that compiles every kernel of it."""

COLD_SECONDS: dict[str, float] = {
    "grundy": 12.0,
    "retrograde": 9.0,
    "split": 7.0,
    "paranoid": 1.0,
    "quotient": 3.0,
}
"""About how long each group takes to compile on an idle two-core machine (for messages)."""

_ready: set[str] = set()
_busy: set[str] = set()
_lock = threading.RLock()


def ready(group: str) -> bool:
    """Whether ``group`` is prepared in this process. O(1)."""
    return group in _ready


def ensure(group: str) -> None:
    """Prepare ``group`` (import its module, compile or load its kernels) unless it is ready,
    outside every budget; thread safe, and a no-op while the group's own small question runs.
    O(1) once prepared."""
    if group in _ready:
        return
    with _lock:
        if group in _ready or group in _busy:
            return
        module, warm = GROUPS[group]
        _busy.add(group)
        try:
            with not_counted():
                importlib.import_module(module)
                warm()
        finally:
            _busy.discard(group)
        _ready.add(group)


def prepare(
    groups: Iterable[str] | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> None:
    """Prepare ``groups`` (all of them by default), calling ``progress(group, done, total)``
    before each one and once more at the end (``group`` is then ``""``)."""
    wanted = [g for g in (GROUPS if groups is None else groups) if g not in _ready]
    for done, group in enumerate(wanted):
        if progress is not None:
            progress(group, done, len(wanted))
        ensure(group)
    if progress is not None:
        progress("", len(wanted), len(wanted))


def _module_cached(module: ModuleType) -> bool:
    from numba.core.dispatcher import Dispatcher

    for value in vars(module).values():
        if isinstance(value, Dispatcher) and value.__module__ == module.__name__:
            cache = getattr(value, "_cache", None)
            index = getattr(getattr(cache, "_cache_file", None), "_index_path", None)
            if index is not None and not Path(index).exists():
                return False
    return True


def cold(groups: Iterable[str] | None = None) -> list[str]:
    """The groups among ``groups`` (all by default) not prepared in this process whose kernels
    are not in Numba's cache yet: preparing them compiles (seconds, see
    :data:`COLD_SECONDS`). Imports the kernel modules (outside every budget)."""
    out = []
    for group in GROUPS if groups is None else groups:
        if group in _ready:
            continue
        with not_counted():
            module = importlib.import_module(GROUPS[group][0])
        if not _module_cached(module):
            out.append(group)
    return out


def groups_for(rule: TakeAndBreak, *, misere: bool, players: int = 2) -> list[str]:
    """The groups questions about games under ``rule`` use (more may be prepared on demand)."""
    if players > 2:
        return ["paranoid"]
    groups = ["split" if rule.splits else "retrograde"]
    if misere and rule.max_take is not None and not rule.is_nim:
        groups.append("quotient")
    if not misere and not rule.is_nim:
        groups.append("grundy")
    return groups
