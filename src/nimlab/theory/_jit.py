"""Numba's ``njit`` for the kernel modules, with a place for their compiled cache that always
exists.

Every kernel is compiled with ``cache=True``, and Numba refuses to even define such a function
(``RuntimeError: cannot cache function ...: no locator available``) when it can write neither
``NUMBA_CACHE_DIR``, nor the ``__pycache__`` beside the sources, nor the user's own cache folder:
a service whose install is read-only and whose user has no writable home (systemd's
``ProtectSystem=strict`` and ``ProtectHome=true``). Importing this module checks, once, that
Numba finds a place; when it does not, the cache goes to a private folder of this user in the
temporary folder (made with mode 0700, and used only when this user owns it and nobody else may
write it: a cache is code this process loads), else kernels are compiled without a cache. Either
way one warning says so, with the setting that avoids it (``NUMBA_CACHE_DIR``).

Loading the first kernel makes Numba import its array functions, which probe for BLAS by
importing SciPy's linear algebra (0.15 to 0.25 s, a fifth of ``nimlab grundy``'s whole start):
no kernel uses BLAS, so this module imports them first with that probe answered "no BLAS"
(:func:`_skip_blas_probe`). Numba then sums products of floats in ``np.convolve`` and
``np.correlate`` by a loop instead of BLAS (same results); ``np.dot`` still finds BLAS.
"""

from __future__ import annotations

import logging
import os
import stat
import sys
import tempfile
from pathlib import Path
from typing import Any

import numba
from numba import njit as _numba_njit

__all__ = ["CACHE", "cache_folder", "njit"]

log = logging.getLogger("nimlab.kernels")


def _probe() -> None:
    """A function of this folder: where Numba would cache it, it caches every kernel."""


def _numba_finds_a_place() -> bool:
    from numba.core.caching import FunctionCache

    try:
        FunctionCache(_probe)  # type: ignore[no-untyped-call]
    except RuntimeError:
        return False
    return True


def cache_folder() -> str:
    """The folder Numba caches this package's kernels in (when :data:`CACHE` is not "")."""
    from numba.core.caching import FunctionCache

    return str(FunctionCache(_probe).cache_path)  # type: ignore[no-untyped-call]


def _private_folder() -> Path | None:
    """This user's folder in the temporary folder, when it is (or can be made) this user's own
    and writable by nobody else; else None."""
    uid = os.getuid() if hasattr(os, "getuid") else 0
    folder = Path(tempfile.gettempdir()) / f"nimlab-kernels-{uid}"
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
        info = folder.lstat()
        if not stat.S_ISDIR(info.st_mode) or info.st_mode & 0o022:
            return None
        if hasattr(os, "getuid") and info.st_uid != uid:
            return None
        tempfile.TemporaryFile(dir=folder).close()
    except OSError:
        return None
    return folder


def _choose() -> str:
    """Where the kernels' compiled cache lives: "numba" (wherever Numba finds, see its
    documentation), a folder, or "" (nowhere: compiled at every start)."""
    if getattr(numba.config, "DISABLE_JIT", False) or _numba_finds_a_place():
        return "numba"
    folder = _private_folder()
    if folder is not None:
        numba.config.CACHE_DIR = str(folder)  # type: ignore[attr-defined]
        if _numba_finds_a_place():
            log.warning(
                "the compiled solvers cannot be cached beside nimlab or in this user's home: "
                "caching them in %s (set NUMBA_CACHE_DIR to a writable folder to keep them "
                "across restarts)",
                folder,
            )
            return str(folder)
        numba.config.CACHE_DIR = ""  # type: ignore[attr-defined]
    log.warning(
        "no writable folder for the compiled solvers: compiling them at every start "
        "(set NUMBA_CACHE_DIR to a writable folder)"
    )
    return ""


def _skip_blas_probe() -> None:
    """Import Numba's array functions with their BLAS probe answered "no BLAS" at once, unless
    they or SciPy's linear algebra are imported already (then nothing is saved)."""
    probe = "scipy.linalg.cython_blas"
    if "numba.np.arraymath" in sys.modules or "scipy.linalg" in sys.modules:
        return
    sys.modules[probe] = None  # type: ignore[assignment]  # importing it raises ImportError
    try:
        import numba.np.arraymath  # noqa: F401
    finally:
        if sys.modules.get(probe, 0) is None:
            del sys.modules[probe]  # SciPy imports normally afterwards


_skip_blas_probe()

CACHE = _choose()
"""Where the compiled kernels are cached: "numba" (Numba's own choice: ``NUMBA_CACHE_DIR``,
beside the sources or the user's cache folder), the private folder chosen instead, or "" (not
cached)."""


def _uncached(*args: Any, **kwargs: Any) -> Any:
    """:func:`numba.njit` without ``cache=True`` (nothing can be cached)."""
    kwargs.pop("cache", None)
    return _numba_njit(*args, **kwargs)


njit = _numba_njit  # (typed as Numba's: the kernels stay untyped for mypy, as with Numba's)
""":func:`numba.njit`, with ``cache=True`` dropped when nothing can be cached."""
if not CACHE:
    njit = _uncached
