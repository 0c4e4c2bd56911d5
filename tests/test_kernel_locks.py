"""Compiling the Numba kernels: processes that share a kernel cache compile a kernel module one at
a time (the others wait, then load it from the cache)."""

from __future__ import annotations

import fcntl
import os
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
