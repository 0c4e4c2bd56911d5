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
"""

from __future__ import annotations

import importlib.util
import logging
import os
import stat
import sys
import tempfile
from pathlib import Path
from typing import Any

import numba
from numba import njit as _numba_njit
from numba.extending import overload

__all__ = ["CACHE", "cache_folder", "lowest_bit", "njit"]

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


def _numpy_support_without_scipy_blas() -> None:
    """Import Numba's implementations of NumPy's functions (``numba.np.arraymath``, which Numba
    imports when a process first loads or compiles a kernel) without its look-up of SciPy's BLAS.

    That module imports SciPy's BLAS, when SciPy is installed, only to learn whether ``np.dot``
    may be used inside its ``np.correlate`` and ``np.convolve``: 0.15 s of CPU (``scipy.linalg``
    and NumPy's f2py, which it imports), a third of loading a kernel, for functions no kernel
    of nimlab calls. Its look-up (Numba's ``ensure_blas``) answers "no BLAS" while the module is
    imported; the answer is then set as SciPy's presence says, and the look-up put back (BLAS
    itself is imported when a function that needs it is compiled, as before), so other compiled
    code of the same process behaves as without nimlab. Nothing changes when ``scipy.linalg`` or
    that module is imported already, or when Numba has no such look-up."""
    if "scipy.linalg" in sys.modules or "numba.np.arraymath" in sys.modules:
        return
    from numba.np import linalg

    look_up = getattr(linalg, "ensure_blas", None)
    if look_up is None:
        return

    def no_blas() -> None:
        raise ImportError("BLAS is not looked up while nimlab loads its kernels")

    linalg.ensure_blas = no_blas
    try:
        from numba.np import arraymath
    finally:
        linalg.ensure_blas = look_up
    if getattr(arraymath, "ensure_blas", None) is no_blas:
        arraymath.ensure_blas = look_up  # type: ignore[attr-defined]  # (its own name for it)
    if hasattr(arraymath, "_HAVE_BLAS"):
        arraymath._HAVE_BLAS = importlib.util.find_spec("scipy") is not None


_numpy_support_without_scipy_blas()

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


def lowest_bit(word: Any) -> int:
    """The index of the lowest set bit of a nonzero unsigned ``word`` (compiled: one
    instruction, ``tzcnt``; also plain Python, for kernels run without the compiler)."""
    value = int(word)
    return (value & -value).bit_length() - 1


@overload(lowest_bit)
def _lowest_bit_compiled(word: Any) -> Any:
    import numpy as np
    from numba.cpython.unsafe.numbers import trailing_zeros

    def lowest(word: Any) -> Any:
        return np.int64(trailing_zeros(word))  # type: ignore[call-arg]

    return lowest
