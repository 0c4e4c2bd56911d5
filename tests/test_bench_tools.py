"""The benchmarks' own helpers that decide what is measured (a wrong one measures the wrong
thing in silence)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))

import bench_web  # noqa: E402  # bench/bench_web.py


@pytest.mark.parametrize(
    ("server", "expected"),
    [
        ("postgresql://postgres@/postgres?host=/tmp/x", "postgresql://postgres@/b1?host=/tmp/x"),
        (
            "postgresql://u:p@db.example:5433/club?sslmode=require",
            "postgresql://u:p@db.example:5433/b1?sslmode=require",
        ),
        ("postgresql://u@db.example", "postgresql://u@db.example/b1"),
        ("postgresql:///?host=/run/pg&dbname=club", "postgresql:///b1?host=/run/pg"),
        ("postgres://u@h/club", "postgres://u@h/b1"),
    ],
)
def test_each_postgres_setup_gets_its_own_database(server: str, expected: str) -> None:
    """Whatever database the --postgres URL names (it had been shared by every setup unless the
    URL ended in /postgres?)."""
    assert bench_web.database_url(server, "b1") == expected


def test_every_option_of_the_web_bench_says_what_it_does() -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH / "bench_web.py"), "--help"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    options = done.stdout.split("options:", 1)[1]
    for option in ("--fast-games", "--fast-seconds", "--games", "--seconds", "--warmup"):
        line = options.split(f"  {option} ", 1)[1].split("\n  -", 1)[0]
        assert "(default:" in line, line
    assert "its own" in options.split("--postgres", 1)[1]
