"""nimlab's command line: ``nimlab COMMAND``. Each command lives in its own module."""

from __future__ import annotations

from nimlab.cli import analyze as _analyze  # noqa: F401  (registers the command)
from nimlab.cli import grundy as _grundy  # noqa: F401
from nimlab.cli import play as _play  # noqa: F401
from nimlab.cli import players as _players  # noqa: F401
from nimlab.cli import quotient as _quotient  # noqa: F401
from nimlab.cli import records as _records  # noqa: F401
from nimlab.cli import serve as _serve  # noqa: F401
from nimlab.cli import shell as _shell  # noqa: F401
from nimlab.cli import simulate as _simulate  # noqa: F401
from nimlab.cli.app import app
from nimlab.cli.common import run

__all__ = ["app", "main"]


def main() -> None:
    """Entry point of the ``nimlab`` console script."""
    run(app)
