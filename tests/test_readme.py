"""The README stays a short front page: at most 200 lines, the install-and-run and test commands
first, and every relative link in it and in docs/ leads to a file (and a heading) that exists.
Its sample sessions are checked by tests/test_readme_samples.py."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")
FORBIDDEN = ("seeds", "seed's", "seed 0", "spec file")


def test_the_readme_is_at_most_200_lines() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 200, f"README.md has {len(lines)} lines: move details to docs/ and link"


def test_the_readme_starts_with_the_install_and_test_commands() -> None:
    text = README.read_text(encoding="utf-8")
    first = text.split("```bash\n", 1)[1].split("```", 1)[0].splitlines()
    assert [line.split("#")[0].strip() for line in first] == [
        "python3 -m venv .venv && .venv/bin/pip install . && .venv/bin/nimlab serve",
        "scripts/test",
    ]
    before = text[: text.index("```bash")]
    assert "```" not in before and "\n## " not in before  # the first block, before any section


def _anchors(page: Path) -> set[str]:
    """The anchors GitHub gives the headings of a markdown page."""
    anchors = set()
    fenced = False
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            anchors.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return anchors


def test_every_relative_link_resolves() -> None:
    broken = []
    for page in PAGES:
        for target in LINK.findall(page.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+:", target):
                continue  # http(s), mailto: not checked here
            path, _, anchor = target.partition("#")
            linked = (page.parent / path).resolve() if path else page
            if not linked.exists():
                broken.append(f"{page.name}: {target}")
            elif anchor and linked.suffix == ".md" and anchor not in _anchors(linked):
                broken.append(f"{page.name}: {target} (no such heading)")
    assert not broken, broken


def test_the_documentation_speaks_to_users() -> None:
    for page in PAGES:
        lowered = page.read_text(encoding="utf-8").lower()
        for word in FORBIDDEN:
            assert word not in lowered, (page.name, word)
