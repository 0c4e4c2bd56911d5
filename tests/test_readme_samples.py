"""The sample sessions of README.md, docs/terminal.md and docs/analysis.md are what the commands
print now: each is run again (``scripts/readme_samples.py``, which also rewrites them) and
compared line by line, tolerating only what varies from run to run (when a game was stored, a
simulation's speed)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest


def _script() -> ModuleType:
    path = Path(__file__).resolve().parent.parent / "scripts" / "readme_samples.py"
    spec = importlib.util.spec_from_file_location("readme_samples", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["readme_samples"] = module
    spec.loader.exec_module(module)
    return module


samples = _script()
SESSIONS = sorted({samples.session(s) for s in samples.SAMPLES})


@pytest.mark.parametrize("session", SESSIONS, ids=[" ".join(s[0].split()[:2]) for s in SESSIONS])
def test_the_documented_sessions_are_what_the_commands_print(session: object) -> None:
    for sample in [s for s in samples.SAMPLES if samples.session(s) == session]:
        got = samples.normalized(sample, samples.run(sample))
        have = samples.normalized(sample, samples.documented(sample))
        assert got == have, (
            f"{sample.document}, $ {sample.command}, is stale: run "
            "scripts/readme_samples.py (and look at the difference)"
        )


def test_a_stale_sample_is_found_and_rewritten(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    document = tmp_path / "doc.md"
    document.write_text("Intro\n\n```console\n$ nimlab rankings   # players\nold\n```\n")
    sample = samples.Sample("doc.md", "nimlab rankings")
    monkeypatch.setattr(samples, "ROOT", tmp_path)
    monkeypatch.setattr(samples, "SAMPLES", (sample,))
    assert samples.main(["--check"]) == 1
    assert samples.main([]) == 0 and samples.main(["--check"]) == 0
    text = document.read_text()
    assert text.startswith("Intro\n\n```console\n$ nimlab rankings   # players\n")
    assert "old" not in text and "No players are registered yet." in text
    assert text.endswith("\n```\n")
