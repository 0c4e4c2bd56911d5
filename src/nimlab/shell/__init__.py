"""The Nim Game System shell (the ``nimlab shell`` command), over nimlab's core and storage."""

from nimlab.shell.nimsys import AI_BOT, MAX_STONES, NimShell, run_shell

__all__ = ["AI_BOT", "MAX_STONES", "NimShell", "run_shell"]
