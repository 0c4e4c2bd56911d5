"""Compiling the Numba kernels: processes that share a kernel cache compile a kernel module one at
a time (the others wait, then load it from the cache), and preparing them reaches every kernel."""

from __future__ import annotations

import fcntl
import importlib
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest

from nimlab.theory import kernels
from processes import PATIENCE


def _try_lock(path: Path) -> bool:
    fd = os.open(path, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        os.close(fd)
    return True


def test_one_process_at_a_time_compiles_a_kernel_module(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the lock files go there
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    module = kernels.GROUPS["paranoid"][0]
    path = kernels._lock_path(module)
    assert path != kernels._lock_path(kernels.GROUPS["split"][0])  # one lock per module
    with kernels._compiling(module):
        assert not _try_lock(path)  # another process (another open file) waits
    assert _try_lock(path)  # released
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "other"))
    assert kernels._lock_path(module) != path  # another cache, another lock


def test_a_group_prepared_while_another_is_takes_no_second_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sparse Grundy kernels prepare the quadratic ones on the way (same module): a second
    lock would wait for the first one forever; and a process that holds one lock and waits for
    another could wait for a process doing the reverse."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    grundy, split = kernels.GROUPS["grundy"][0], kernels.GROUPS["split"][0]
    done = threading.Event()

    def nested() -> None:
        with kernels._compiling(grundy), kernels._compiling(grundy), kernels._compiling(split):
            assert not _try_lock(kernels._lock_path(grundy))
            assert _try_lock(kernels._lock_path(split))  # only the outer one is held
        done.set()

    worker = threading.Thread(target=nested, daemon=True)
    worker.start()
    worker.join(PATIENCE)
    assert done.is_set()
    assert _try_lock(kernels._lock_path(grundy))


REACHED = """if True:
    import functools, importlib, inspect
    from nimlab.theory import kernels

    called = set()

    def record(name, function):
        @functools.wraps(function)
        def recorded(*args, **kwargs):
            called.add(name)
            return function(*args, **kwargs)

        return recorded

    for module_name in {module for module, _warm in kernels.GROUPS.values()}:
        module = importlib.import_module(module_name)
        for name, value in list(vars(module).items()):
            if inspect.isfunction(value) and value.__module__ == module_name:
                setattr(module, name, record(f"{module_name}.{name}", value))
    kernels.prepare()
    print("\\n".join(sorted(called)))
"""
"""Prepares every group with the kernels as plain Python (``NUMBA_DISABLE_JIT``), where a kernel
calls another through its module: prints the name of every function of a kernel module that
was called."""


def test_preparing_every_group_reaches_every_kernel() -> None:
    """Each group's small question calls every kernel of its module (also the split search's
    rehash of its directory, which only long searches need), so that no kernel is compiled in
    the middle of a question and a prepared group never reads as cold again (it would say
    "preparing the solvers once" on every run)."""
    from numba.core.dispatcher import Dispatcher

    kernel_names = set()
    for module_name in {module for module, _warm in kernels.GROUPS.values()}:
        module = importlib.import_module(module_name)
        kernel_names |= {
            f"{module_name}.{name}"
            for name, value in vars(module).items()
            if isinstance(value, Dispatcher) and value.__module__ == module_name
        }
    assert "nimlab.theory._split_kernels.rehash_directory" in kernel_names
    done = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", REACHED],
        env={**os.environ, "NUMBA_DISABLE_JIT": "1"},
        capture_output=True,
        text=True,
        timeout=PATIENCE,
    )
    assert done.returncode == 0, done.stderr
    assert kernel_names - set(done.stdout.split()) == set()


_LOADED = """
import importlib.util, sys
from nimlab.theory import kernels
kernels.ensure("retrograde-any")
from numba.np import arraymath, linalg
print("scipy.linalg" in sys.modules, arraymath._HAVE_BLAS == (importlib.util.find_spec("scipy")
      is not None), arraymath.ensure_blas is linalg.ensure_blas)
"""


def test_loading_a_kernel_imports_no_linear_algebra() -> None:
    """Numba's support of NumPy is loaded without looking up SciPy's BLAS (a third of loading a
    kernel, for functions no kernel calls); Numba is then told whether SciPy is there, as it
    would have found out itself, and its look-up is put back."""
    done = subprocess.run(
        [sys.executable, "-c", _LOADED], capture_output=True, text=True, timeout=PATIENCE
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "True", "True"]
