"""nimlab's command line: ``nimlab COMMAND``. Each command lives in its own module, loaded only
when that command runs (see :mod:`nimlab.cli.app`)."""

from __future__ import annotations

import atexit
import gc

from nimlab.cli.app import app, run

__all__ = ["app", "main"]


def main() -> None:
    """Run the command line on ``sys.argv`` (the ``nimlab`` console script and ``python -m
    nimlab`` run it through :func:`nimlab._start.main`, which pauses collections while it
    starts)."""
    # At exit every object still alive is frozen, so that the interpreter's last garbage
    # collections pass them by (objects are still freed as their references go): a process that
    # loaded the compiled kernels spent 0.12-0.15 s of CPU there, a closed-form answer 10 ms.
    atexit.unregister(gc.freeze)  # (registered once, however often main runs in a process)
    atexit.register(gc.freeze)
    run(app)
