"""Another revision of this repository, for a bench to race the code against it in one run."""

from __future__ import annotations

import os
import subprocess


def source_at(rev: str) -> str | None:
    """The ``src`` folder of revision ``rev`` of this repository, unpacked into a temporary
    folder once (its kernels compile there on first use), or None without git or that
    revision. Put it first on ``PYTHONPATH`` to run that revision's nimlab."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    folder = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"nimlab-previous-{rev}")
    if os.path.isdir(os.path.join(folder, "src", "nimlab")):
        return os.path.join(folder, "src")
    archive = subprocess.run(
        ["git", "-C", root, "archive", rev, "src"], capture_output=True, check=False
    )
    if archive.returncode != 0:
        return None
    os.makedirs(folder, exist_ok=True)
    subprocess.run(["tar", "-x", "-C", folder], input=archive.stdout, check=True)
    return os.path.join(folder, "src")
