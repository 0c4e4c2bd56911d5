"""Helpers for tests that run nimlab in a child process."""

from __future__ import annotations

import signal


def restore_sigint() -> None:
    """``preexec_fn`` for children that must react to Ctrl-C: a shell that starts the test run in
    the background (as CI may) hands its children SIGINT ignored, and Python then installs no
    KeyboardInterrupt handler."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
