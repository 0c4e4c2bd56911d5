"""The start of the ``nimlab`` command (the console script and ``python -m nimlab``): no garbage
collection while the command line and the command's module are imported.

Those imports only make objects that live as long as the process (modules, classes, functions),
yet Python's collector walks them over and over as they pile up: 5-7 ms of a closed-form answer's
85 ms. :func:`main` pauses collections before importing :mod:`nimlab.cli`; once the command's
module is loaded, :func:`resume` freezes what exists (:func:`gc.freeze`: never walked again) and
collections resume for the command's own work. Only this entry point pauses anything: calling
:func:`nimlab.cli.main` from Python changes nothing of the caller's collector.
"""

from __future__ import annotations

import gc

__all__ = ["main", "resume"]

_paused = False


def main() -> None:
    """Entry point of the ``nimlab`` console script: :func:`nimlab.cli.main` with collections
    paused until the command's module is loaded (or the command ends, whichever comes first)."""
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True
    try:
        from nimlab.cli import main as run_command_line

        run_command_line()
    finally:
        resume()


def resume() -> None:
    """Freeze every object alive and resume collections, when :func:`main` paused them (else
    nothing). O(objects alive), once."""
    global _paused
    if _paused:
        _paused = False
        gc.freeze()
        gc.enable()
