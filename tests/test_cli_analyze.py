"""``nimlab analyze`` and ``nimlab grundy`` from the outside: output contracts and errors (in this
process through Typer's runner; a few smoke tests start real processes)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from processes import nimlab


def test_analyze_json_contract() -> None:
    r = nimlab("analyze", "3", "4", "5", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["position"] == [3, 4, 5] and out["game"] == "nim" and out["misere"] is False
    assert out["end_positions"] == [] and out["outcome"] == "N" and out["proven"] is True
    assert out["grundy"] == 2 and isinstance(out["remoteness"], int)
    assert len(out["moves"]) == 12
    winning = [m for m in out["moves"] if m["winning"]]
    assert [(m["pile"], m["take"], m["result"], m["outcome"]) for m in winning] == [
        (1, 2, [1, 4, 5], "P")
    ]
    first = out["moves"][0]
    assert set(first) == {"pile", "take", "result", "outcome", "remoteness", "winning"}
    assert [m["result"] for m in out["moves"] if m["pile"] == 1 and m["take"] == 3] == [[0, 4, 5]]


def test_analyze_seed_000_rules() -> None:
    out = json.loads(nimlab("analyze", "4", "5", "6", "--misere", "--defaults", "--json").stdout)
    assert out["outcome"] == "P" and out["grundy"] is None
    assert out["end_positions"] == [[1, 2, 3], [2, 2, 2], [1, 1, 2, 2]]
    assert not any(m["winning"] for m in out["moves"])


def test_analyze_kayles_rows() -> None:
    out = json.loads(nimlab("analyze", "5", "--game", "kayles", "--json").stdout)
    assert out["game"] == "kayles" and out["grundy"] == 4 and out["outcome"] == "N"
    results = sorted(tuple(m["result"]) for m in out["moves"])
    assert results == sorted([(4,), (1, 3), (2, 2), (3, 1), (3,), (1, 2), (2, 1)])
    assert all("at" in m for m in out["moves"])
    assert [m["result"] for m in out["moves"] if m["winning"]] == [[2, 2]]


def test_batch(tmp_path: Path) -> None:
    f = tmp_path / "positions.jsonl"
    f.write_text('[1, 2]\n[5]\nnot json\n[-1]\n["3"]\n{}\n\n[7, 3]\n')
    r = nimlab("analyze", "--batch", str(f), "--json", "--game", "subtraction:1,3,4")
    assert r.returncode == 1, r.stderr  # some lines failed
    lines = [json.loads(line) for line in r.stdout.splitlines()]
    assert len(lines) == 8  # one line out for every line in, the blank one included
    assert (
        lines[0]["position"] == [1, 2]
        and lines[1]["position"] == [5]
        and lines[7]["position"] == [7, 3]
    )
    assert all("error" in line for line in lines[2:7])
    assert [line["line"] for line in lines[2:7]] == [3, 4, 5, 6, 7]  # the input's line numbers
    assert not any("line" in line for line in lines[:2] + lines[7:])
    r = nimlab("analyze", "--batch", "-", stdin="[3,4,5]\n[1]\n")
    assert r.returncode == 0 and json.loads(r.stdout.splitlines()[0])["grundy"] == 2
    assert "exit status is then 1" in " ".join(nimlab("analyze", "--help").stdout.split())


def test_huge_heap_answers_instantly() -> None:
    r = nimlab("analyze", "1" + "0" * 100, "--json")
    out = json.loads(r.stdout)
    assert out["outcome"] == "N" and out["grundy"] == 10**100 and out["moves_complete"] is False
    assert out["moves"] == [
        {
            "pile": 1,
            "take": 10**100,
            "result": [0],
            "outcome": "P",
            "remoteness": 0,
            "winning": True,
        }
    ]


GOOGOL = "1" + "0" * 100


@pytest.mark.parametrize(
    ("args", "method"),
    [
        (["--game", "moore:2", GOOGOL, "3"], "moore"),
        (["--game", "moore:2", "--misere", GOOGOL, "3"], "moore"),
        (["--game", "moore:1", GOOGOL, "3"], "moore"),
        (["--game", "wythoff", GOOGOL, "3"], "wythoff"),
        (["--game", "wythoff", "--misere", GOOGOL, GOOGOL], "wythoff"),
        (["--game", "staircase", GOOGOL, "3"], "staircase"),
        (["--game", "fibonacci", GOOGOL], "fibonacci"),
        (["--game", "nim", GOOGOL, "3"], "nim-formula"),
        (["--misere", GOOGOL, "3"], "nim-formula"),
    ],
)
def test_pile_games_answer_heaps_of_a_googol_by_their_theorem(args: list[str], method: str) -> None:
    """``nimlab analyze 10**100 3 --game moore:2`` ended with 'error: OverflowError: Python int
    too large to convert to C ssize_t' (exit 1): the end-of-game check listed every move."""
    r = nimlab("analyze", *args, "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["method"] == method and out["proven"] is True and out["outcome"] == "N"
    assert len([m for m in out["moves"] if m["winning"]]) >= 1
    human = nimlab("analyze", *args)
    assert human.returncode == 0 and "Error" not in human.stderr and not human.stderr


def test_heaps_of_4300_digits_and_move_counts_longer_than_that() -> None:
    """The longest heaps nimlab reads (4,300 digits): beyond a float (the search's cost estimate
    raised OverflowError) and, for Moore's Nim, a move count of more digits than Python writes
    in decimal (JSON gives its number of digits instead)."""
    heap = "9" + "7" * 4290
    for game in ("moore:2", "wythoff", "fibonacci"):
        r = nimlab("analyze", "--game", game, heap, *(["3"] if game != "fibonacci" else []))
        assert r.returncode == 0 and not r.stderr, (game, r.stderr)
    r = nimlab("analyze", "--game", "moore:3", "--misere", heap, heap, "3", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["method"] == "moore" and out["proven"] and out["move_count"] is None
    assert out["move_count_digits"] == 8583  # 3 * heap**2 + heap**2 + ...: 8,583 digits
    r = nimlab("analyze", "--game", "moore:3", "--misere", heap, heap, "3")
    assert r.returncode == 0 and "more than 10^8,582 legal moves in all" in " ".join(
        r.stdout.split()
    )


def test_misere_moore_is_proven_by_its_theorem() -> None:
    out = json.loads(
        nimlab("analyze", "--game", "moore:2", "--misere", "3", "4", "5", "--json").stdout
    )
    assert out["method"] == "moore" and out["proven"] is True and out["outcome"] == "N"
    text = " ".join(
        nimlab("analyze", "--game", "moore:2", "--misere", "1", "1", "1", "1").stdout.split()
    )
    assert "P-position exactly when the heaps of 1 number 1 mod 3: there are 4" in text
    assert "not proven" not in text.lower() and "no theorem" not in text.lower()


def test_human_output_explains() -> None:
    r = nimlab("analyze", "3", "4", "5")
    assert r.returncode == 0
    assert "nim-sum" in r.stdout and "011" in r.stdout and "take 2 from pile 1" in r.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["analyze"], "heap sizes"),
        (["analyze", "3", "-4"], "negative"),
        (["analyze", "3", "x"], "not a whole number"),
        (["analyze", "3", "--game", "chess"], "unknown game"),
        (["analyze", "3", "--game", "octal:0.9"], "octal"),
        (["analyze", "3", "--end", "x"], "heap sizes"),
        (["analyze", "3", "--end", "2,a"], "heap sizes"),
        (["analyze", "--batch", "/nonexistent"], "does not exist"),
        (["grundy", "0.8"], "octal"),
        (["grundy", "0.77", "--max", "0"], ""),
        (["nonsense"], ""),
    ],
)
def test_errors_exit_2_without_traceback(args: list[str], message: str) -> None:
    r = nimlab(*args)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "Traceback" not in r.stderr and "Traceback" not in r.stdout
    assert message in r.stderr


def test_grundy_json_kayles() -> None:
    r = nimlab("grundy", "0.77", "--max", "300", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    expected = {"game": "0.77", "max": 300, "period": 12, "preperiod": 71, "proven": True}
    assert out == expected | {"proof": "guy-smith"} | (
        {"rare_values": out["rare_values"]} if "rare_values" in out else {}
    )
    out = json.loads(nimlab("grundy", "kayles", "--max", "20", "--json", "--values").stdout)
    assert out["values"][:12] == [0, 1, 2, 3, 1, 4, 3, 2, 1, 4, 2, 6]


def test_grundy_human() -> None:
    r = nimlab("grundy", "0.77", "--max", "300")
    assert r.returncode == 0, r.stderr
    assert "Period 12" in r.stdout and "Proven" in r.stdout


def test_python_dash_m_exits_2_with_the_message_only() -> None:
    """A real child process: an error is one line on stderr, exit status 2, no traceback."""
    r = subprocess.run(
        [sys.executable, "-m", "nimlab", "analyze", "3", "--game", "chess"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.startswith("error: unknown game 'chess'") and "Traceback" not in r.stderr


def test_console_script() -> None:
    script = Path(sys.executable).with_name("nimlab")
    if not script.exists():
        pytest.skip("nimlab is not installed as a console script next to this Python")
    r = subprocess.run(
        [str(script), "analyze", "3", "4", "5", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0 and json.loads(r.stdout)["grundy"] == 2


def test_lab_import() -> None:
    r = subprocess.run(
        [sys.executable, "-c", "from nimlab.lab import *; print(present_board([4,3,1,2]))"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert r.stdout == "Nim:\n1: X X X X\n2: X X X\n3: X\n4: X X\n"


def test_a_model_for_more_players_with_two_says_it_changes_nothing() -> None:
    li = nimlab("analyze", "3", "4", "5", "--model", "li", "--json")
    plain = nimlab("analyze", "3", "4", "5", "--json")
    assert li.returncode == 0 and json.loads(li.stdout) == json.loads(plain.stdout)
    assert "--model li is for more than 2 players" in li.stderr
    assert "changes nothing" in li.stderr and plain.stderr == ""


# -- Wythoff's game: Grundy values of pairs ------------------------------------------------------


def _mex_table(n: int) -> list[list[int]]:
    """G(x, y) for piles below n from the rules (take from one pile, or the same from both)."""
    g = [[0] * n for _ in range(n)]
    for x in range(n):
        for y in range(n):
            seen = {g[x - t][y] for t in range(1, x + 1)} | {g[x][y - t] for t in range(1, y + 1)}
            seen |= {g[x - t][y - t] for t in range(1, min(x, y) + 1)}
            g[x][y] = min(set(range(len(seen) + 1)) - seen)
    return g


def test_grundy_wythoff_prints_the_table_of_pairs() -> None:
    table = _mex_table(15)
    out = json.loads(nimlab("grundy", "wythoff", "--json").stdout)
    assert out == {"game": "wythoff", "max": 15, "values": table}  # 15 by default
    assert json.loads(nimlab("grundy", "wythoff", "--max", "4", "--json").stdout)["values"] == [
        [0, 1, 2, 3], [1, 2, 0, 4], [2, 0, 1, 5], [3, 4, 5, 6]
    ]  # fmt: skip
    r = nimlab("grundy", "wythoff", "--max", "6", env={"COLUMNS": "200"})
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert "Grundy values of Wythoff's game" in lines[0] and "row x, column y" in lines[0]
    assert lines[1].split() == ["x\\y", "0", "1", "2", "3", "4", "5"]
    assert [line.split() for line in lines[2:8]] == [
        [str(x), *map(str, table[x][:6])] for x in range(6)
    ]
    assert "(0, 0), (1, 2), (3, 5)" in r.stdout  # the P-positions named
    wide = nimlab("grundy", "wythoff", "--max", "40", env={"COLUMNS": "300"}).stdout
    assert "piles 0..29 shown of 0..39 (--values prints them all" in wide
    every = nimlab("grundy", "wythoff", "--max", "40", "--values", env={"COLUMNS": "300"})
    assert every.stdout.splitlines()[41].split() == ["39", *map(str, _mex_table(40)[39])]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--max", "2001"], "--max is at most 2,000 for Wythoff's game"),
        (["--prove"], "--prove does not apply"),
        (["--save", "t.run"], "--save does not apply"),
        (["--max", "0"], ""),
    ],
)
def test_grundy_wythoff_refuses_in_one_line(args: list[str], message: str) -> None:
    r = nimlab("grundy", "wythoff", *args)
    assert r.returncode == 2 and message in r.stderr and r.stdout == ""
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr


def test_grundy_keeps_refusing_games_without_a_table() -> None:
    for game in ("moore:2", "staircase", "fibonacci"):
        r = nimlab("grundy", game)
        assert r.returncode == 2 and "no Grundy values" in r.stderr, game


def test_grundy_wythoff_out_of_time_exits_1() -> None:
    r = nimlab("grundy", "wythoff", "--max", "2000", "--seconds", "0")
    assert r.returncode == 1 and "was not done within" in r.stderr and r.stdout == ""


def test_analyze_wythoff_gives_grundy_values_in_normal_play_only() -> None:
    table = _mex_table(12)
    out = json.loads(nimlab("analyze", "--game", "wythoff", "3", "5", "--json").stdout)
    assert out["grundy"] == 0 and out["outcome"] == "P"
    out = json.loads(nimlab("analyze", "--game", "wythoff", "7", "11", "--json").stdout)
    assert out["grundy"] == table[7][11] and len(out["moves"]) == 7 + 11 + 7
    for m in out["moves"]:
        x, y = m["result"]
        assert m["grundy"] == table[x][y], m
        assert (m["grundy"] == 0) == m["winning"]
    text = nimlab("analyze", "--game", "wythoff", "3", "4", env={"COLUMNS": "200"}).stdout
    assert "Grundy value: 2" in text and "Its Grundy value is 2" in text
    assert "┃ Grundy value ┃" in text  # a column of the moves' values
    for rules in (["--misere"], ["--end", "1,1"]):  # Sprague–Grundy does not hold: no values
        out = json.loads(nimlab("analyze", "--game", "wythoff", "3", "4", *rules, "--json").stdout)
        assert out["grundy"] is None and not any("grundy" in m for m in out["moves"]), rules
        text = nimlab("analyze", "--game", "wythoff", "3", "4", *rules).stdout
        assert "Grundy value" not in text, rules
    moore = json.loads(nimlab("analyze", "--game", "moore:2", "1", "2", "--json").stdout)
    assert moore["grundy"] is None and not any("grundy" in m for m in moore["moves"])


def test_analyze_wythoff_on_huge_piles_computes_no_table() -> None:
    huge = str(10**12)
    out = json.loads(nimlab("analyze", "--game", "wythoff", huge, str(10**12 + 1), "--json").stdout)
    assert out["outcome"] == "N" and out["grundy"] is None  # no table of 10**24 pairs
    assert [(m["result"], m["grundy"]) for m in out["moves"]] == [([1, 2], 0)]  # a P-position
    out = json.loads(nimlab("analyze", "--game", "wythoff", "0", huge, "--json").stdout)
    assert out["grundy"] == 10**12  # G(0, n) = n


_NO_KERNELS = """
import sys
from typer.testing import CliRunner
from nimlab.cli.app import app
import nimlab

runner = CliRunner()
for args in [
    ["3", "4", "5"],
    ["3", "4", "5", "--misere"],
    ["3", "4", "5", "--defaults"],
    ["1000000000000", "3", "5", "--json"],
    ["--game", "wythoff", "3", "5"],
    ["--game", "moore:2", "3", "4", "5"],
    ["--game", "staircase", "3", "1", "2"],
    ["--game", "fibonacci", "10"],
    ["--game", "lasker", "3", "4", "5"],
    ["--game", "lasker", "--misere", "3", "10", "12"],
    ["--game", "kayles", "3", "4"],
    ["--game", "subtraction:1-3", "9", "10"],
    ["--game", "grundys-game", "10", "20"],
]:
    r = runner.invoke(app, ["analyze", *args])
    assert r.exit_code == 0, (args, r.output)
nimlab.analyze("nim", [3, 4, 5])
nimlab.analyze("lasker misere", [3, 10**6, 10**6 + 1])
print(sorted(m for m in sys.modules if m.split(".")[0] in ("numba", "llvmlite")) or "none")
"""


def test_closed_form_answers_load_no_compiled_kernel() -> None:
    """Answers that a formula, a theorem or a small search gives (Nim, the relatives, Lasker's
    Nim in both plays, octal and subtraction games with small heaps) import no Numba: the
    command line starts as fast as its own libraries allow."""
    out = subprocess.run(
        [sys.executable, "-c", _NO_KERNELS], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "none"


_NO_NUMPY = """
import sys
from typer.testing import CliRunner
from nimlab.cli.app import app

for args in [
    ["3", "4", "5"],
    ["--game", "wythoff", "3", "5"],
    ["--game", "lasker", "--misere", "3", "4"],
    ["--game", "lasker", "--misere", "3", "10", "12"],
    ["--game", "kayles", "3", "4"],
    ["--game", "moore:2", "3", "4", "5"],
    ["--game", "staircase", "3", "4", "5"],
    ["--game", "fibonacci", "20"],
    ["--game", "subtraction:1,3,4", "10", "12"],
    ["--game", "0.137", "5", "9"],
]:
    r = CliRunner().invoke(app, ["analyze", *args])
    assert r.exit_code == 0, (args, r.output)
print(sorted(m for m in sys.modules if m.split(".")[0] in ("numpy", "json")))
"""


def test_the_closed_form_answers_of_the_start_up_bench_load_no_numpy() -> None:
    """The questions of bench/bench_startup.py load no NumPy (the compiled search is not made
    to estimate a small position, a small Wythoff table is read from lists), nor JSON."""
    out = subprocess.run([sys.executable, "-c", _NO_NUMPY], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def _fake_terminal(monkeypatch: pytest.MonkeyPatch, terminal: bool) -> Any:
    """stderr of the commands as a terminal (or not) writing into a buffer; progress at once."""
    import io

    from rich.console import Console

    from nimlab.cli import common

    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=terminal, width=200)
    monkeypatch.setattr(common, "err_console", console)
    monkeypatch.setattr(common, "PROGRESS_AFTER", 0.0)
    return buffer


@pytest.mark.parametrize("terminal", [True, False])
def test_progress_is_shown_on_a_terminal_only(
    monkeypatch: pytest.MonkeyPatch, terminal: bool
) -> None:
    from nimlab.cli.common import showing_progress

    buffer = _fake_terminal(monkeypatch, terminal)
    asked: list[int] = []

    def describe() -> str:
        asked.append(1)
        return "searching: 42 positions stored"

    with showing_progress(describe):
        pass
    if terminal:
        assert "searching: 42 positions stored" in buffer.getvalue() and asked
    else:
        assert buffer.getvalue() == "" and not asked  # nothing printed, nothing asked


@pytest.mark.parametrize("terminal", [True, False])
def test_a_long_analysis_says_what_it_has_stored_on_a_terminal(
    monkeypatch: pytest.MonkeyPatch, terminal: bool
) -> None:
    """A question answered by a search (misère Kayles, heaps of 7 to 10: thousands of positions)
    shows the positions stored so far on stderr when stderr is a terminal; the answer on
    stdout is the same either way, and off a terminal nothing else is printed."""
    from typer.testing import CliRunner

    from nimlab.cli.app import app

    buffer = _fake_terminal(monkeypatch, terminal)
    args = ["analyze", "--game", "kayles", "--misere", "10", "9", "8", "7"]
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 0, r.output
    assert "Outcome:" in r.output and "analysing" not in r.output
    shown = buffer.getvalue()
    if terminal:
        assert "analysing: " in shown and "positions stored" in shown, shown
    else:
        assert shown == ""


def test_the_progress_of_an_analysis_counts_the_budget_and_the_estimate() -> None:
    from nimlab.cli.analyze import _searching
    from nimlab.core.ruleset import Ruleset
    from nimlab.theory.budget import Budget

    ruleset = Ruleset.parse("nim misere")
    board = ruleset.rules.as_board([20, 20, 20])
    budget = Budget()
    describe = _searching(ruleset, board, budget, 2)
    assert describe() == "analysing: 0 positions stored"
    budget.charge(1234)
    expected = int(ruleset.engine.search_cost(board.canonical))
    assert describe() == f"analysing: 1,234 positions stored of about {expected:,}"
