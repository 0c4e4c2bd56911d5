#!/usr/bin/env python3
"""The sample sessions of README.md, docs/terminal.md and docs/analysis.md, made by running them.

Each sample is a ```console block whose first line is ``$ nimlab ...``: this script runs that
command in a fresh empty database (after the sample's set-up commands, whose output is not
shown), with the sample's typed lines as input, echoed where they are read as a terminal shows
them, 100 columns wide and without colour, and writes its output under the command line.
Long stretches may be left out: each sample names the line after which ``...`` stands for the
lines up to the next one it names.

    .venv/bin/python scripts/readme_samples.py            # rewrite the blocks
    .venv/bin/python scripts/readme_samples.py --check    # exit 1 and show what is stale

``tests/test_readme_samples.py`` runs every sample and compares it with the documents, so a
change of output that leaves them stale fails the suite. Only what legitimately varies is
tolerated: the time a game was stored, and the time and speed of a simulation.
"""

from __future__ import annotations

import difflib
import functools
import os
import re
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WIDTH = 100

# Runs nimlab with every line it reads echoed to its standard output, where a terminal would
# show what was typed (input() reads through sys.stdin.readline when stdin is not a terminal).
_DRIVER = """
import sys

class _Echo:
    def __init__(self, stream):
        self._stream = stream

    def readline(self, *args):
        line = self._stream.readline(*args)
        sys.stdout.write(line)
        sys.stdout.flush()
        return line

    def __getattr__(self, name):
        return getattr(self._stream, name)

sys.stdin = _Echo(sys.stdin)
from nimlab.cli import main
main()
"""


@dataclass(frozen=True)
class Sample:
    """One sample session: ``command`` as written after ``$ `` (a comment after ``#`` is the
    document's), the lines typed, set-up commands run before it (arguments after ``nimlab``,
    and their typed lines), and ``cuts``: pairs of patterns, the lines after the first line
    matching the first pattern up to (not including) the next line matching the second are
    left out and shown as ``...`` (indented like the line before)."""

    document: str
    command: str
    typed: tuple[str, ...] = ()
    setup: tuple[tuple[str, tuple[str, ...]], ...] = ()
    cuts: tuple[tuple[str, str], ...] = ()
    variable: tuple[tuple[str, str], ...] = field(default=())
    """(pattern, replacement) pairs for what legitimately differs from run to run (times)."""


_REPLAY_GAME = (
    "play --player human:Ann --player human:Bob",
    ("b2", "c4", "a3", "b1", "b1", "c1"),
)
_STORED = (r"finished \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\+00:00", "finished <when>")
_SPEED = (r"\d+(\.\d+)? s on \d+ process(es)? \([\d,]+ games/s\)", "<time and speed>")
_PLAY = ("b2", "?", "values")
# The bots' moves in the samples are forced (a single winning move, or a single move), so they are
# the same however long the bots may think.
_SHELL = (
    "addplayer lee,Lee,Bruce",
    "addaiplayer deep,Blue,Deep",
    "startgame 7,3,lee,deep",
    "3",
    "1",
    "rankings",
    "exit",
)
_SIMULATE = (
    "simulate --games 1000 --player bot:perfect:error=30 --player bot:classic --misere --defaults"
)

SAMPLES: tuple[Sample, ...] = (
    Sample(
        "README.md",
        "nimlab analyze 3 4 5 --misere --defaults",
        cuts=((r"^Every move \(value for the mover\)", r"(?!)"),),
    ),
    Sample("README.md", "nimlab grundy 0.77 --max 300", cuts=((r"^\s+12:", r"^Period"),)),
    Sample("README.md", "nimlab play", ("b2", "quit")),
    Sample(
        "docs/analysis.md",
        "nimlab analyze 7 5 --game kayles",
        cuts=((r"take stone 1 of row 1 ", r"^└"),),
    ),
    Sample("docs/terminal.md", "nimlab play", (*_PLAY, "undo", "quit")),
    Sample(
        "docs/terminal.md",
        "nimlab shell",
        (
            *_SHELL[:2],
            "addplayer lee,Li,Bruce",
            *_SHELL[2:4],
            "5",
            "1",
            "startadvancedgame 4,lee,deep",
            "1 1",
            "2 1",
            "displayplayer",
            *_SHELL[5:],
        ),
    ),
    Sample(
        "docs/terminal.md",
        "nimlab replay 1 --no-pause",
        setup=(_REPLAY_GAME,),
        cuts=((r"^Value: Bob can force a win \(the game ends within 6", r"^6\. Bob took 1"),),
        variable=(_STORED,),
    ),
    Sample("docs/terminal.md", "nimlab " + _SIMULATE, variable=(_SPEED,)),
)


def _nimlab(args: list[str], typed: tuple[str, ...], folder: Path) -> str:
    env = dict(os.environ, NIMLAB_DB=str(folder / "nimlab.db"), COLUMNS=str(WIDTH), NO_COLOR="1")
    env.pop("LINES", None)
    done = subprocess.run(
        [sys.executable, "-c", _DRIVER, *args],
        input="".join(line + "\n" for line in typed),
        capture_output=True,
        text=True,
        env=env,
        cwd=folder,
        check=False,
    )
    if done.returncode not in (0, 1) or "Traceback" in done.stderr:
        raise RuntimeError(f"nimlab {' '.join(args)} failed:\n{done.stderr}")
    return done.stdout


def _cut(lines: list[str], cuts: tuple[tuple[str, str], ...]) -> list[str]:
    out = list(lines)
    for after, until in cuts:
        start = next(i for i, line in enumerate(out) if re.search(after, line))
        end = next((i for i in range(start + 1, len(out)) if re.search(until, out[i])), len(out))
        if end > start + 1:
            indent = re.match(r"\s*", out[start]).group()  # type: ignore[union-attr]
            out[start + 1 : end] = [indent + "..."]
    return out


Session = tuple[str, tuple[str, ...], tuple[tuple[str, tuple[str, ...]], ...]]
"""What a sample runs: its command, typed lines and set-up (samples of the same session in two
documents run it once)."""


def session(sample: Sample) -> Session:
    return (sample.command, sample.typed, sample.setup)


@functools.cache
def output(ran: Session) -> tuple[str, ...]:
    """The lines a session prints, each without trailing spaces."""
    command, typed, setup = ran
    words = shlex.split(command)
    assert words[0] == "nimlab", command
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for args, their_typed in setup:
            _nimlab(shlex.split(args), their_typed, folder)
        text = _nimlab(words[1:], typed, folder)
    return tuple(line.rstrip() for line in text.rstrip("\n").split("\n"))


def run(sample: Sample) -> list[str]:
    """The lines of the sample's block after its command line, as running it gives them."""
    return _cut(list(output(session(sample))), sample.cuts)


def normalized(sample: Sample, lines: list[str]) -> list[str]:
    """``lines`` with what legitimately varies from run to run replaced by a placeholder."""
    out = []
    for line in lines:
        for pattern, replacement in sample.variable:
            line = re.sub(pattern, replacement, line)
        out.append(line)
    return out


def block(sample: Sample, text: str) -> tuple[int, int]:
    """Where the sample's output is in ``text``'s lines: from the line after ``$ COMMAND`` to the
    closing fence (exclusive)."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if line.split("#")[0].strip() == "$ " + sample.command and lines[i - 1] == "```console":
            end = next(j for j in range(i + 1, len(lines)) if lines[j] == "```")
            return i + 1, end
    raise LookupError(f"{sample.document} has no console block starting $ {sample.command}")


def documented(sample: Sample) -> list[str]:
    """The sample's output as the document shows it now."""
    text = (ROOT / sample.document).read_text(encoding="utf-8")
    start, end = block(sample, text)
    return text.split("\n")[start:end]


def write(sample: Sample, lines: list[str]) -> None:
    path = ROOT / sample.document
    text = path.read_text(encoding="utf-8").split("\n")
    start, end = block(sample, "\n".join(text))
    text[start:end] = lines
    path.write_text("\n".join(text), encoding="utf-8")


def main(argv: list[str]) -> int:
    check = "--check" in argv
    stale = 0
    for sample in SAMPLES:
        got = run(sample)
        have = documented(sample)
        if normalized(sample, got) == normalized(sample, have):
            continue
        stale += 1
        if check:
            where = f"{sample.document}: $ {sample.command}"
            sys.stdout.writelines(
                line + "\n"
                for line in difflib.unified_diff(have, got, where, "as it runs now", lineterm="")
            )
        else:
            write(sample, got)
            print(f"rewrote {sample.document}: $ {sample.command}")
    if check and stale:
        print(f"{stale} sample(s) stale: run scripts/readme_samples.py")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
