"""nimlab's command line: ``nimlab COMMAND``. Each command lives in its own module, loaded only
when that command runs (see :mod:`nimlab.cli.app`)."""

from __future__ import annotations

from nimlab.cli.app import app, run

__all__ = ["app", "main"]


def main() -> None:
    """Entry point of the ``nimlab`` console script."""
    run(app)
