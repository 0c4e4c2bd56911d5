"""The Numba kernels interpreted as plain Python (``NUMBA_DISABLE_JIT=1``) give the same answers
as their exact twins, on tiny inputs (see ``nojit_kernels.py``, run in a child process because
Numba reads the variable once, when it is imported)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def test_kernels_without_jit_equal_their_twins() -> None:
    script = Path(__file__).with_name("nojit_kernels.py")
    done = subprocess.run(
        [sys.executable, str(script)],
        env=dict(os.environ, NUMBA_DISABLE_JIT="1"),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "retrograde" in done.stdout
