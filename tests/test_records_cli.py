"""``nimlab players``, ``rankings``, ``history``, ``replay``, ``export`` and ``import`` from the
outside (in this process, through Typer's runner); ``--db`` and ``NIMLAB_DB``. Every test uses its
own database, on SQLite and on PostgreSQL."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from nimlab.storage import Store
from processes import nimlab


@pytest.fixture
def env(database: str) -> dict[str, str]:
    """The environment with ``NIMLAB_DB`` naming a new database: an SQLite file, or a
    PostgreSQL URL."""
    e = dict(os.environ)
    e["NIMLAB_DB"] = database
    return e


def run(env: dict[str, str], *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """``nimlab ARGS`` in this process with ``env``'s database."""
    return nimlab(*args, stdin=stdin, env=env)


def test_players_lifecycle(env: dict[str, str]) -> None:
    assert (
        run(env, "players", "add", "lee", "--given", "Bruce", "--family", "Lee").stdout
        == "Added lee (Bruce Lee).\n"
    )
    r = run(
        env,
        "players",
        "add-ai",
        "deep",
        "--given",
        "Deep",
        "--family",
        "Blue",
        "--bot",
        "classic:error=10",
    )
    assert r.returncode == 0 and "classic:error=10" in r.stdout
    r = run(env, "players", "add", "lee", "--given", "X", "--family", "Y")
    assert r.returncode == 2 and "player 'lee' already exists" in r.stderr
    r = run(env, "players", "add", "x")
    assert r.returncode == 2  # --given and --family are required
    shown = json.loads(run(env, "players", "show", "--json").stdout)
    assert (
        [p["username"] for p in shown] == ["deep", "lee"]
        and shown[0]["ai"]
        and shown[0]["bot"] == "classic:error=10"
    )
    assert "Bruce Lee" in run(env, "players", "show", "lee").stdout
    assert (
        run(env, "players", "edit", "lee", "--given", "Brucie").stdout == "lee is now Brucie Lee.\n"
    )
    assert run(env, "players", "edit", "lee").returncode == 2
    r = run(env, "players", "show", "ghost")
    assert r.returncode == 2 and "no player 'ghost'" in r.stderr
    assert run(env, "players", "remove", "ghost").returncode == 2
    assert run(env, "players", "remove").returncode == 2
    r = run(env, "players", "remove", "--all", stdin="n\n")
    assert r.returncode == 1 and "Are you sure you want to remove all players? (y/n)" in r.stdout
    assert "Nothing was changed." in r.stderr
    assert run(env, "players", "remove", "deep").stdout == "Removed deep.\n"
    assert run(env, "players", "remove", "--all", stdin="y\n").returncode == 0
    assert json.loads(run(env, "players", "show", "--json").stdout) == []


def test_reset_stats_and_rankings(env: dict[str, str]) -> None:
    with Store.open(env["NIMLAB_DB"]) as store:
        for name in ("amy", "bob", "cat"):
            store.add_player(name, given=name.title(), family="X")
    for _ in range(2):
        r = run(env, "play", "--piles", "1", "--player", "@amy", "--player", "@bob", stdin="1 1\n")
        assert r.returncode == 0 and "Amy X wins!" in r.stdout
    ranks = json.loads(run(env, "rankings", "--json").stdout)
    assert [(p["username"], p["games_played"], p["games_won"]) for p in ranks] == [
        ("amy", 2, 2),
        ("bob", 2, 0),
        ("cat", 0, 0),
    ]
    assert [p["username"] for p in json.loads(run(env, "rankings", "--asc", "--json").stdout)] == [
        "bob",
        "cat",
        "amy",
    ]
    assert len(json.loads(run(env, "rankings", "--limit", "1", "--json").stdout)) == 1
    table = run(env, "rankings").stdout
    assert "Rankings by win rate" in table and "100%" in table
    assert run(env, "players", "reset-stats", "amy").returncode == 0
    assert json.loads(run(env, "players", "show", "amy", "--json").stdout)[0]["games_played"] == 0
    assert run(env, "players", "reset-stats", "--all", "--yes").stdout == "All statistics reset.\n"
    assert json.loads(run(env, "players", "show", "bob", "--json").stdout)[0]["games_played"] == 0


def test_history_replay_export_import(env: dict[str, str], tmp_path: Path) -> None:
    assert "No games are stored yet" in run(env, "history").stdout
    r = run(
        env,
        "play",
        "--piles",
        "1",
        "1",
        "--player",
        "human:Ann",
        "--player",
        "bot:perfect:Hal",
        stdin="1 1\n",
    )
    assert "Saved as game #1 (nimlab replay 1)." in r.stdout
    r = run(
        env,
        "play",
        "--game",
        "kayles",
        "--piles",
        "3",
        "--player",
        "human:Ann",
        "--player",
        "human:Bob",
        stdin="2 1\n1 1\n3 1\n",
    )
    assert "Ann wins!" in r.stdout
    history = json.loads(run(env, "history", "--json").stdout)
    assert [g["id"] for g in history] == [2, 1]
    assert (
        history[1]["winner"] == "Hal"
        and history[0]["ruleset"] == "kayles"
        and history[0]["moves"] == 3
    )
    assert (
        "Ann, Hal" in run(env, "history").stdout.replace("\n", " ")
        or "Hal" in run(env, "history").stdout
    )
    replay = run(env, "replay", "2").stdout
    assert "Game #2" in replay and "Kayles" in replay
    assert "1. Ann took stone 2   (move 1 of 3)\n<1,*> <2,x> <3,*>" in replay
    assert "3. Ann took stone 3   (move 3 of 3)\n<1,x> <2,x> <3,x>\nAnn wins!" in replay
    r = run(env, "replay", "9")
    assert r.returncode == 2 and "there is no game #9" in r.stderr
    out_file = tmp_path / "games.json"
    assert run(env, "export", "-o", str(out_file)).stdout == f"Exported 2 games to {out_file}.\n"
    document = json.loads(out_file.read_text())
    assert document["format"] == "nimlab-games/1" and len(document["games"]) == 2
    assert json.loads(run(env, "export", "1").stdout)["games"][0]["id"] == 1
    other = dict(env, NIMLAB_DB=str(tmp_path / "other.db"))
    assert run(other, "import", str(out_file)).stdout == "Imported 2 games as #1-#2.\n"
    assert len(json.loads(run(other, "history", "--json").stdout)) == 2
    assert "Ann wins!" in run(other, "replay", "2").stdout
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    r = run(other, "import", str(bad))
    assert r.returncode == 2 and "not JSON" in r.stderr
    document["games"][1]["record"]["moves"][0]["move"] = "1 9 9"
    bad.write_text(json.dumps(document))
    r = run(other, "import", str(bad))
    assert r.returncode == 2 and "game 2 of the file does not replay" in r.stderr
    assert len(json.loads(run(other, "history", "--json").stdout)) == 2  # nothing was imported
    assert (
        run(other, "import", "-", stdin=out_file.read_text()).stdout
        == "2 games were stored already (not added again).\n"
    )
    assert len(json.loads(run(other, "history", "--json").stdout)) == 2  # imports are idempotent


def test_db_option_beats_the_environment(env: dict[str, str], tmp_path: Path) -> None:
    explicit = tmp_path / "explicit.db"
    assert (
        run(
            env, "players", "add", "a", "--given", "A", "--family", "A", "--db", str(explicit)
        ).returncode
        == 0
    )
    assert json.loads(run(env, "players", "show", "--json").stdout) == []
    assert len(json.loads(run(env, "players", "show", "--json", "--db", str(explicit)).stdout)) == 1


def test_an_unusable_database_is_reported_without_a_traceback(
    env: dict[str, str], tmp_path: Path
) -> None:
    r = run(env, "players", "show", "--db", str(tmp_path))  # a folder: a wrong request
    assert r.returncode == 2 and "is a directory" in r.stderr and "Traceback" not in r.stderr


def test_export_to_a_file_that_cannot_be_written_is_refused_before_any_work(
    tmp_path: Path,
) -> None:
    """A folder is a wrong request (2); a place that cannot be written could not be done (1)."""
    db = str(tmp_path / "x.db")
    Store.open(db).close()
    for output, message, status in [
        (str(tmp_path / "missing" / "x.json"), "does not exist", 1),
        (str(tmp_path), "is a folder", 2),
    ]:
        r = nimlab("export", "-o", output, "--db", db)
        assert r.returncode == status, r.stdout + r.stderr
        assert "--output" in r.stderr and message in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "missing").exists()


def test_reading_a_database_that_does_not_exist_is_bad_usage(tmp_path: Path) -> None:
    r = nimlab("history", "--db", str(tmp_path / "missing" / "x.db"))
    assert r.returncode == 2 and "no database at" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "missing").exists()
