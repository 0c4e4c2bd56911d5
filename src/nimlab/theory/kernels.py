"""Every Numba kernel of the theory layer, in one place: which exist, whether they are cached,
and preparing them (importing, then compiling or loading from Numba's cache) outside every
budget.

A *group* is one kernel module and the solver that drives it:

=============  ==================================  =====================================
group          module                              used by
=============  ==================================  =====================================
grundy         ``_grundy_kernels`` (quadratic)     :mod:`nimlab.theory.grundy`
grundy-sparse  ``_grundy_kernels`` (sparse)        :mod:`nimlab.theory.grundy`, games that split
retrograde     ``_retrograde_kernels`` (by digit)  :mod:`nimlab.theory.retrograde`
retrograde-any ``_retrograde_kernels`` (Nim-like)  :mod:`nimlab.theory.retrograde`
retrograde-    ``_retrograde_kernels`` (32-bit     :mod:`nimlab.theory.retrograde`, remoteness
wide           scores)                             beyond 32,767
split          ``_split_kernels``                  :mod:`nimlab.theory.splitsearch`
paranoid       ``_paranoid_kernels``               :mod:`nimlab.theory.paranoid`
quotient       ``_quotient_kernels``               :mod:`nimlab.theory.quotient`
=============  ==================================  =====================================

Every kernel is compiled with ``cache=True``: the first process compiles it (seconds), the later
ones load it from the cache (next to the sources, or under ``NUMBA_CACHE_DIR``). Processes that
share a cache compile a kernel module one at a time (a lock file in the cache or the temporary
folder): one that finds another compiling waits and loads the result instead of compiling it
too.

Each solver calls :func:`ensure` for its group before its first kernel call; :func:`ensure`
runs a small question through the solver (so each kernel is compiled for the argument types
real questions use) inside :func:`~nimlab.theory.budget.not_counted`: a budget counts work,
never compiling or importing. Interfaces call :func:`prepare` before they start answering
(``nimlab prepare``), or :func:`prepare_in_background` (``nimlab serve``, which answers at
once: a question that needs a group meanwhile waits in :func:`ensure` until the background has
prepared it, outside every budget, and :func:`preparing` lets the interface say so).
"""

from __future__ import annotations

import importlib
import os
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from types import ModuleType

from nimlab.theory.budget import not_counted
from nimlab.theory.octal import TakeAndBreak

__all__ = [
    "COLD_SECONDS",
    "GROUPS",
    "cache_place",
    "cold",
    "ensure",
    "groups_for",
    "load",
    "prepare",
    "prepare_in_background",
    "preparing",
    "ready",
]


def _warm_grundy() -> None:
    from nimlab.theory.grundy import grundy_sequence

    grundy_sequence(TakeAndBreak.octal("0.77"), 100, method="quadratic", prove=True)


def _warm_grundy_sparse() -> None:
    import numpy as np

    from nimlab.theory import _grundy_kernels as k
    from nimlab.theory import grundy
    from nimlab.theory.grundy import grundy_sequence

    grundy_sequence(TakeAndBreak.octal("0.77"), 100, method="sparse", prove=True)  # words
    # the kernel of stamps, which takes over once values outgrow a word
    engine = grundy._Engine(TakeAndBreak.octal("0.77"), 100, "sparse")
    engine.extend(2, None, 100)
    engine.narrow = False
    engine.extend(100, None, 100)
    # the second thread's kernel, with the argument types of long runs
    ints = np.zeros(1, np.int64)
    far = np.zeros((1, 2), np.uint8)
    k.sparse_far(np.zeros(4, np.uint16), 2, 3, ints, ints, ints, 0, 1, 0, 0, 0, far)


def _warm_retrograde() -> None:
    from nimlab.theory.retrograde import DenseSolver

    DenseSolver(TakeAndBreak.subtraction({1, 2}), max_heap=3, max_piles=2).value((1, 2))


def _warm_retrograde_any() -> None:
    from nimlab.theory.retrograde import DenseSolver

    DenseSolver(TakeAndBreak.nim(), max_heap=3, max_piles=2).value((1, 2))


def _warm_retrograde_wide() -> None:
    from nimlab.theory.retrograde import DenseSolver

    # scores of 32 bits (remoteness beyond 16 bits' reach), on a small table
    for rule in (TakeAndBreak.nim(), TakeAndBreak.subtraction({1, 2})):
        DenseSolver(rule, max_heap=3, max_piles=2, wide=True).value((1, 2))


def _warm_split() -> None:
    import numpy as np

    from nimlab.theory import _split_kernels as k
    from nimlab.theory.splitsearch import SplitSolver

    SplitSolver(TakeAndBreak.octal("0.77"), misere=True).value((4, 3))
    # the kernel that grows the table's directory (only long searches need it), with the
    # argument types the solver gives it: never compiled in the middle of a question
    k.rehash_directory(np.zeros(4, np.int64), np.zeros(8, np.int64), 61)


def _warm_paranoid() -> None:
    from nimlab.theory.paranoid import ParanoidSolver

    ParanoidSolver(TakeAndBreak.nim(), (1, 2, 3)).value((1, 2, 3), (0, 1, 2), 0, 0)


def _warm_quotient() -> None:
    from nimlab.theory.quotient import misere_quotient

    misere_quotient(TakeAndBreak.octal("0.77"), 5)


GROUPS: dict[str, tuple[str, Callable[[], None]]] = {
    "grundy": ("nimlab.theory._grundy_kernels", _warm_grundy),
    "grundy-sparse": ("nimlab.theory._grundy_kernels", _warm_grundy_sparse),
    "retrograde": ("nimlab.theory._retrograde_kernels", _warm_retrograde),
    "retrograde-any": ("nimlab.theory._retrograde_kernels", _warm_retrograde_any),
    "retrograde-wide": ("nimlab.theory._retrograde_kernels", _warm_retrograde_wide),
    "split": ("nimlab.theory._split_kernels", _warm_split),
    "paranoid": ("nimlab.theory._paranoid_kernels", _warm_paranoid),
    "quotient": ("nimlab.theory._quotient_kernels", _warm_quotient),
}
"""Each group: its kernel module and a small question that compiles every kernel of it."""

_SHARED = {
    "grundy": ("plain_extend", "parity_table", "period_scan"),
    "grundy-sparse": ("sparse_extend", "sparse_extend_narrow", "sparse_far", "collect_rare"),
    "retrograde": ("solve_table",),
    "retrograde-any": ("solve_table_any_take",),
    "retrograde-wide": ("solve_table", "solve_table_any_take"),
}
"""The kernels of groups that share a module (the others have all of their module's)."""

COLD_SECONDS: dict[str, float] = {
    "grundy": 2.0,
    "grundy-sparse": 6.0,
    "retrograde": 3.0,
    "retrograde-any": 3.0,
    "retrograde-wide": 6.0,
    "split": 7.0,
    "paranoid": 2.0,
    "quotient": 5.0,
}
"""About how long each group takes to compile on an idle two-core machine (for messages)."""

_ready: set[str] = set()
_busy: set[str] = set()
_lock = threading.RLock()
_holding = False
"""Whether this process holds a compile lock (see :func:`_compiling`)."""
_background: threading.Thread | None = None
"""The thread of :func:`prepare_in_background`, while it may be running."""
_preparing_here = threading.local()
"""``depth``: how many :func:`ensure` calls this thread is inside, holding :data:`_lock`."""
_progress = threading.Condition()
"""Notified when a group is ready and when the background preparation ends."""


cold_notice: Callable[[str, float], None] | None = None
"""Called as ``cold_notice(group, seconds)`` when :func:`ensure` is about to compile a group
that is not in Numba's cache (``seconds``: about how long it takes): an interface sets it to
tell its user why the first answer that needs a kernel waits (the command line prints
"preparing the solvers once"). Answers that need no kernel never call it, nor import Numba."""


def ready(group: str) -> bool:
    """Whether ``group`` is prepared in this process. O(1)."""
    return group in _ready


def ensure(group: str) -> None:
    """Prepare ``group`` (import its module, compile or load its kernels) unless it is ready,
    outside every budget; thread safe, and a no-op while the group's own small question runs.
    O(1) once prepared. While :func:`prepare_in_background` runs, another thread waits for it
    to prepare ``group`` instead (outside every budget), so nothing is prepared twice."""
    if group in _ready:
        return
    _wait_for_background(group)
    with _lock:
        if group in _ready or group in _busy:
            return
        module, warm = GROUPS[group]
        _busy.add(group)
        _preparing_here.depth = getattr(_preparing_here, "depth", 0) + 1
        try:
            with not_counted():
                if _group_cached(group, importlib.import_module(module)):
                    warm()
                else:
                    if cold_notice is not None:
                        cold_notice(group, COLD_SECONDS.get(group, 5.0))
                    with _compiling(module):  # another process may be compiling it: wait
                        warm()
        finally:
            _busy.discard(group)
            _preparing_here.depth -= 1
        _ready.add(group)
    with _progress:
        _progress.notify_all()


def preparing() -> bool:
    """Whether :func:`prepare_in_background` is still preparing groups. O(1)."""
    return _background is not None


def prepare_in_background(
    groups: Iterable[str] | None = None,
    first: Callable[[], None] | None = None,
    failed: Callable[[BaseException], None] | None = None,
) -> threading.Thread:
    """Prepare ``groups`` (all of them by default) in a daemon thread, which runs ``first``
    before it starts (an interface says there what it prepares) and calls ``failed(error)``
    when preparing raises (the groups left are then prepared when a question needs them, as
    without a background preparation). Until it ends, :func:`preparing` is true and
    :func:`ensure` on another thread waits for the group it needs to be ready. Returns the
    thread, started."""
    global _background

    def run() -> None:
        global _background
        try:
            if first is not None:
                first()
            prepare(groups)
        except BaseException as e:  # (a daemon thread: nothing above it to report it)
            if failed is not None:
                failed(e)
        finally:
            with _progress:
                _background = None
                _progress.notify_all()

    thread = threading.Thread(target=run, name="nimlab-prepare", daemon=True)
    with _progress:
        _background = thread
        thread.start()
    return thread


def _wait_for_background(group: str) -> None:
    """Wait, outside every budget, until ``group`` is ready or the background preparation has
    ended (at once when none runs, or when called from its own thread)."""
    thread = _background
    if thread is None or thread is threading.current_thread() or _lock_held():
        return
    with not_counted(), _progress:
        while group not in _ready and _background is thread:
            _progress.wait()


def _lock_held() -> bool:
    """Whether this thread holds :data:`_lock` (it prepares a group that needs another one:
    waiting for the background, which waits for the lock, would wait forever)."""
    return bool(getattr(_preparing_here, "depth", 0))


def _lock_path(module: str) -> Path:
    """The lock file of kernel module ``module`` for the kernel cache this process uses: in
    Numba's cache folder when one is set (``NUMBA_CACHE_DIR``, or the fallback of
    :mod:`nimlab.theory._jit`), else in the temporary folder (named after this copy of
    nimlab, whose kernels are cached next to their sources)."""
    from numba import config

    cache = os.environ.get("NUMBA_CACHE_DIR") or getattr(config, "CACHE_DIR", "")  # (or _jit's)
    if cache:
        return Path(cache) / f"nimlab-{module}.lock"
    import hashlib  # (here: a command that needs no kernel never imports them)
    import tempfile

    where = f"{Path(__file__).resolve().parent}:{module}"
    digest = hashlib.sha256(where.encode()).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / f"nimlab-kernels-{digest}.lock"


@contextmanager
def _compiling(module: str) -> Iterator[None]:
    """Hold the lock, shared by every process of this machine that uses the same kernel cache,
    that lets one process at a time compile the kernels of ``module``: a process that waited
    then loads what the other one compiled from the cache instead of compiling it again.
    Without a lock file (none can be made, or no ``fcntl``) nothing is shared and nothing
    waits. Called with :data:`_lock` held; a group prepared while another one is (the sparse
    Grundy kernels need the quadratic ones) takes no second lock: a process holds at most one,
    so two processes never wait for each other."""
    global _holding
    if _holding:
        yield
        return
    try:
        import fcntl

        path = _lock_path(module)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    except (ImportError, OSError):
        yield
        return
    _holding = True
    try:
        with suppress(OSError):  # (then compile without the lock)
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        _holding = False
        os.close(fd)  # releases the lock


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


def _group_cached(group: str, module: ModuleType) -> bool:
    from numba.core.dispatcher import Dispatcher

    names = _SHARED.get(group)
    for name, value in vars(module).items():
        if names is not None and name not in names:
            continue
        if isinstance(value, Dispatcher) and value.__module__ == module.__name__:
            cache = getattr(value, "_cache", None)
            index = getattr(getattr(cache, "_cache_file", None), "_index_path", None)
            if index is not None and not Path(index).exists():
                return False
    return True


def load(group: str) -> ModuleType:
    """The kernel module of ``group``, imported outside every budget (its kernels are compiled
    or loaded when :func:`ensure` prepares them)."""
    with not_counted():
        return importlib.import_module(GROUPS[group][0])


def cold(groups: Iterable[str] | None = None) -> list[str]:
    """The groups among ``groups`` (all by default) not prepared in this process whose kernels
    are not in Numba's cache yet: preparing them compiles (seconds, see
    :data:`COLD_SECONDS`). Imports the kernel modules (outside every budget)."""
    out = []
    for group in GROUPS if groups is None else groups:
        if group in _ready:
            continue
        if not _group_cached(group, load(group)):
            out.append(group)
    return out


def groups_for(rule: TakeAndBreak, *, misere: bool, players: int = 2) -> list[str]:
    """The groups questions about games under ``rule`` use (more may be prepared on demand)."""
    if players > 2:
        return ["paranoid"]
    if rule.splits:
        groups = ["split"]
    else:
        groups = ["retrograde" if rule.digits or not rule.tail & 2 else "retrograde-any"]
    if misere and rule.max_take is not None and not rule.is_nim:
        groups.append("quotient")
    if not misere and not rule.is_nim:
        groups.append("grundy")
        if rule.splits:
            groups.append("grundy-sparse")
    return groups


def cache_place() -> str:
    """Where the compiled kernels are kept, in words (Numba's cache folder, or why none)."""
    from nimlab.theory import _jit

    if _jit.CACHE == "numba":
        return f"cached in {_jit.cache_folder()}"
    if _jit.CACHE:
        return f"cached in {_jit.CACHE} (no other writable place: set NUMBA_CACHE_DIR)"
    return "not cached (no writable folder: set NUMBA_CACHE_DIR), compiled at every start"
