"""Preparing the Numba kernels: processes that share a kernel cache compile a kernel module one at
a time (the others wait, then load it from the cache)."""

from __future__ import annotations

import fcntl
import os
import tempfile
from pathlib import Path

import pytest

from nimlab.theory import kernels


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
