"""The documentation runs: the tutorial notebook executes without an error (one kernel), and the
API reference builds from the docstrings with warnings as errors (as scripts/docs builds it)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TUTORIAL = ROOT / "docs" / "tutorial.ipynb"


def test_the_tutorial_is_committed_without_outputs() -> None:
    cells = json.loads(TUTORIAL.read_text())["cells"]
    code = [c for c in cells if c["cell_type"] == "code"]
    assert code and all(not c["outputs"] and c["execution_count"] is None for c in code)


@pytest.mark.slow
def test_the_tutorial_runs_and_draws_its_results() -> None:
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.read(TUTORIAL, as_version=4)
    # an error in any cell raises CellExecutionError, naming the cell
    client = nbclient.NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(ROOT)}}
    )
    client.execute()  # the kernel starts in the project's folder
    kinds = {
        k for c in nb.cells if c.cell_type == "code" for o in c.outputs for k in o.get("data", {})
    }
    assert {"text/html", "image/svg+xml"} <= kinds


def test_the_api_reference_reads_every_docstring_without_a_warning(tmp_path: Path) -> None:
    """scripts/docs writes the HTML; reading the sources is where autodoc and reStructuredText
    warn, so the test stops there (Sphinx's "dummy" builder) to stay fast."""
    pytest.importorskip("sphinx")
    doctrees = tmp_path / "doctrees"
    command = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "dummy"]
    command += ["-d", str(doctrees), str(ROOT / "docs" / "api"), str(tmp_path / "out")]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    page = (doctrees / "nimlab.doctree").read_bytes()
    assert b"The Grundy values of one heap of" in page  # nimlab.grundy's docstring
    assert "The misère quotient of".encode() in page  # nimlab.quotient's
