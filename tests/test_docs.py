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
    nbclient.NotebookClient(nb, timeout=600, kernel_name="python3", cwd=str(ROOT)).execute()
    kinds = {
        k for c in nb.cells if c.cell_type == "code" for o in c.outputs for k in o.get("data", {})
    }
    assert {"text/html", "image/svg+xml"} <= kinds


def test_the_api_reference_builds_without_a_warning(tmp_path: Path) -> None:
    pytest.importorskip("sphinx")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "sphinx",
            "-W",
            "--keep-going",
            "-q",
            "-b",
            "html",
            "-d",
            str(tmp_path / "doctrees"),
            str(ROOT / "docs" / "api"),
            str(tmp_path / "html"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    page = (tmp_path / "html" / "nimlab.html").read_text()
    assert "The Grundy values of one heap of" in page  # nimlab.grundy's docstring
    assert "The misère quotient of" in page  # nimlab.quotient's
