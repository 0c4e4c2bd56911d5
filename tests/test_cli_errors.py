"""The command line's error policy (docs/errors.md), case by case: exit status 2 when the request
was wrong, 1 when it could not be done; exactly one line ``error: ...`` in nimlab's words (no
traceback, no exception's name); nothing changed on disk and no partial file left behind."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest

from nimlab.storage import ReadOnlyError
from processes import nimlab

WRONG, NOT_DONE = 2, 1

CASES: list[tuple[str, list[str], int, str]] = [
    # files to read
    ("import: not UTF-8", ["import", "{d}/bin.json"], WRONG, "is not UTF-8 text"),
    ("import: a folder", ["import", "{d}/dir"], WRONG, "'{d}/dir' is a folder, not a file"),
    ("import: missing", ["import", "{d}/none.json"], WRONG, "does not exist"),
    ("import: not JSON", ["import", "{d}/afile"], WRONG, "not JSON (Expecting value at line 1)"),
    ("import: bad time", ["import", "{d}/yesterday.json"], WRONG, "'yesterday' is not a time"),
    ("batch: a folder", ["analyze", "--batch", "{d}/dir"], WRONG, "is a folder, not a file"),
    ("resume: a folder", ["grundy", "0.07", "--resume", "{d}/dir"], WRONG, "is a directory"),
    ("resume: missing", ["quotient", "0.07", "--resume", "{d}/none.q"], WRONG, "does not exist"),
    # files to write: a folder is a wrong request, a place that cannot be written is not done
    ("backup: a folder", ["db", "backup", "{d}/dir"], WRONG, "is a folder: give a file name"),
    ("backup: under a file", ["db", "backup", "{d}/afile/c.db"], NOT_DONE, "is a file, not a"),
    ("backup: /proc", ["db", "backup", "/proc/nimlab-c.db"], NOT_DONE, "cannot write"),
    ("export: a folder", ["export", "-o", "{d}/dir"], WRONG, "is a folder"),
    ("export: no folder", ["export", "-o", "{d}/none/x.json"], NOT_DONE, "does not exist"),
    ("export: /proc", ["export", "-o", "/proc/nimlab-x.json"], NOT_DONE, "cannot write"),
    ("grundy --save: folder", ["grundy", "0.07", "--save", "{d}/dir"], WRONG, "is a directory"),
    (
        "grundy --save: no folder",
        ["grundy", "0.07", "--prove", "--save", "{d}/none/x.run"],
        NOT_DONE,
        "the folder '{d}/none' does not exist",
    ),
    ("quotient --save", ["quotient", "0.07", "--save", "{d}/none/q"], NOT_DONE, "does not exist"),
    ("census --out", ["census", "--digits", "1", "--out", "{d}/none/c"], NOT_DONE, "cannot write"),
    # the database
    ("db: a folder", ["history", "--db", "{d}/dir"], WRONG, "is a directory, not a file"),
    (
        "db: a folder (write)",
        ["players", "add", "x", "--given", "X", "--family", "Y", "--db", "{d}/dir"],
        WRONG,
        "is a directory",
    ),
    ("db: not a database", ["history", "--db", "{d}/notdb.db"], WRONG, "is not a database"),
    (
        "db: not a db (write)",
        ["players", "add", "x", "--given", "X", "--family", "Y", "--db", "{d}/notdb.db"],
        WRONG,
        "not a datab",
    ),
    ("db: missing", ["history", "--db", "{d}/none/x.db"], WRONG, "no database at"),
    (
        "db: under a file",
        ["players", "add", "x", "--given", "X", "--family", "Y", "--db", "{d}/afile/x.db"],
        NOT_DONE,
        "not a fo",
    ),
    (
        "db: read-only",
        ["players", "add", "x", "--given", "X", "--family", "Y", "--db", "{d}/ro.db"],
        NOT_DONE,
        "read-only",
    ),
    # --seconds: one check everywhere
    ("grundy nan", ["grundy", "0.07", "--prove", "--seconds", "nan"], WRONG, "number of seconds"),
    ("grundy inf", ["grundy", "0.07", "--prove", "--seconds", "inf"], WRONG, "number of seconds"),
    ("quotient nan", ["quotient", "0.07", "--seconds", "nan"], WRONG, "number of seconds"),
    ("quotient -1", ["quotient", "0.07", "--seconds", "-1"], WRONG, "number of seconds"),
    ("quotient --memory nan", ["quotient", "0.07", "--memory", "nan"], WRONG, "memory size in"),
    ("analyze nan", ["analyze", "3", "4", "--seconds", "nan"], WRONG, "number of seconds"),
    ("analyze 0", ["analyze", "3", "4", "--seconds", "0"], WRONG, "from 0.1 to 3600"),
    ("census nan", ["census", "--digits", "1", "--seconds", "nan"], WRONG, "number of seconds"),
    # a cluster that cannot be reached: at once, and no file of rows left behind
    (
        "census: no scheduler",
        ["census", "--digits", "1", "--out", "{d}/c", "--scheduler", "tcp://127.0.0.1:1"],
        NOT_DONE,
        "cannot connect to tcp://127.0.0.1:1",
    ),
    # positions, the same rules for play and simulate
    ("analyze 3,,4", ["analyze", "3,,4"], WRONG, "empty heap size"),
    ("analyze 3 4,", ["analyze", "3", "4,"], WRONG, "empty heap size"),
    ("play 3,,4", ["play", "3,,4"], WRONG, "empty heap size"),
    ("simulate 3,,4", ["simulate", "3,,4"], WRONG, "empty heap size"),
    ("play: rows cap", ["play", "-g", "kayles", "99999999"], WRONG, "at most 1,000,000 stones"),
    ("simulate: rows cap", ["simulate", "-g", "kayles", "99999999"], WRONG, "at most 1,000,000"),
    (
        "play: auto, 3 players",
        ["play", "--first", "auto", "--player", "bot:random", "--player", "bot:random:B"]
        + ["--player", "bot:random:C"],
        WRONG,
        "--first auto is for two players",
    ),
    (
        "simulate: auto, 3 bots",
        ["simulate", "--first", "auto", "--player", "bot:random", "--player", "bot:random:B"]
        + ["--player", "bot:random:C"],
        WRONG,
        "--first auto is for two players",
    ),
]


def _tree(root: Path) -> dict[str, str]:
    """Every file under ``root`` (but SQLite's -wal and -shm files) with a hash of its bytes."""
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.name.endswith(("-wal", "-shm"))
    }


@pytest.fixture(scope="module")
def place(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with a database holding one finished game, its export, an export edited to say
    "finished_at": "yesterday", a file that is not UTF-8, a file, a folder and a file that is
    not a database."""
    d = tmp_path_factory.mktemp("errors")
    db = str(d / "games.db")
    two_humans = ["--player", "human:Ann", "--player", "human:Bob"]
    r = nimlab("play", "-g", "kayles", "1", *two_humans, "--db", db, stdin="1 1\n")
    assert r.returncode == 0 and "Saved as game #1" in r.stdout, r.stdout + r.stderr
    document = json.loads(nimlab("export", "--db", db).stdout)
    document["games"][0]["finished_at"] = "yesterday"
    (d / "yesterday.json").write_text(json.dumps(document))
    (d / "bin.json").write_bytes(b'{"format": "\xff\xfe"}')
    (d / "afile").write_text("a file\n")
    (d / "dir").mkdir()
    (d / "notdb.db").write_text("[]\n" * 1000)
    return d


@pytest.mark.parametrize(
    ("args", "status", "message"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_each_error_is_one_line_with_its_status_and_changes_nothing(
    place: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], status: int, message: str
) -> None:
    d = str(place)
    argv = [a.replace("{d}", d) for a in args]
    if not any(a == "--db" for a in argv) and argv[0] in ("import", "export", "db", "history"):
        argv += ["--db", f"{d}/games.db"]
    if f"{d}/ro.db" in argv:  # a database that cannot be written (as root, chmod would not do)
        from nimlab.storage import connection

        def read_only(*_args: object, **_kwargs: object) -> None:
            raise ReadOnlyError(
                f"the database '{d}/ro.db' is read-only: it can be read, not changed"
            )

        monkeypatch.setattr(connection.Database, "open", read_only)
    monkeypatch.chdir(place)  # a file a command would write by default lands in ``place``
    before = _tree(place)
    r = nimlab(*argv)
    assert r.returncode == status, (r.stdout, r.stderr)
    assert r.stdout == ""
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    assert message.replace("{d}", d) in " ".join(r.stderr.split()), r.stderr
    assert not re.search(r"\b[A-Z]\w*(Error|Exception)\b|Traceback|Errno", r.stderr), r.stderr
    assert _tree(place) == before  # nothing written, nothing left behind


def test_an_import_refused_imports_nothing(place: Path) -> None:
    db = str(place / "games.db")
    assert nimlab("import", str(place / "yesterday.json"), "--db", db).returncode == WRONG
    history = json.loads(nimlab("history", "--json", "--db", db).stdout)
    assert [g["id"] for g in history] == [1] and "yesterday" not in json.dumps(history)


def test_defaults_fit_the_game() -> None:
    """Random piles by default: as many as the game is played on (Wythoff's game: 2)."""
    r = nimlab("simulate", "-g", "wythoff", "-n", "4", "-j", "1", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["start"]["pile_count"] == [2, 2]
    assert (
        nimlab("simulate", "-g", "wythoff", "-n", "2", "-j", "1", "--pile-count", "3").returncode
        == 2
    )


def test_an_end_position_is_analysed_as_a_game_over() -> None:
    """As ``nimlab play`` refuses such a start: the game is over there, no move; never "the first
    player wins at once"."""
    r = nimlab("analyze", "2", "2", "2", "--end", "2,2,2")
    assert r.returncode == 0, r.stderr
    text = " ".join(r.stdout.split())
    assert "the game is over (an end position: no move can be made)" in text
    assert "It cannot be a start position" in text and "at once" not in text
    assert "already an end position" in nimlab("play", "2,2,2", "--end", "2,2,2").stderr
