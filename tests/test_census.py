"""The census of octal games: which codes, identical games, proven rows against a second
method, the cores and a Dask cluster giving the same table, resuming from the rows done."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nimlab.cli.app import app
from nimlab.core.census import run_census
from nimlab.theory.census import CensusRow, census_codes, census_row, mark_identical
from nimlab.theory.grundy import grundy_sequence, naive_grundy
from nimlab.theory.octal import TakeAndBreak

runner = CliRunner()
SIZE = 3000


def test_every_code_once() -> None:
    for digits, count in ((1, 7), (2, 63), (3, 511)):
        rules = census_codes(digits)
        assert len(rules) == len(set(rules)) == count == 8**digits - 1
        assert all(rule.digits[-1] != 0 and len(rule.digits) <= digits for rule in rules)
    assert [r.code for r in census_codes(1)] == [f"0.{d}" for d in range(1, 8)]
    for bad in (0, 7, True):
        with pytest.raises(ValueError, match="1 to 6"):
            census_codes(bad)


def _columns(row: CensusRow) -> tuple[object, ...]:
    return (row.code, row.period, row.preperiod, row.proven, row.largest, row.values, row.key)


@pytest.fixture(scope="module")
def two_digits() -> list[CensusRow]:
    return run_census(census_codes(2), max_values=SIZE, seconds=None)


def test_proven_rows_agree_with_a_second_method(two_digits: list[CensusRow]) -> None:
    """Every proven row's period and preperiod hold in the values of the plain (quadratic)
    method, computed to the same length, and are the least; the first values are the
    pure-Python twin's."""
    proven = [row for row in two_digits if row.proven]
    assert len(proven) > 40
    for row in proven:
        assert row.period is not None and row.preperiod is not None
        rule = TakeAndBreak.octal(row.code)
        g = grundy_sequence(rule, row.values, method="quadratic").values.tolist()
        assert g[:60] == naive_grundy(rule, 60)
        p, n0 = row.period, row.preperiod
        assert all(g[n] == g[n + p] for n in range(n0, len(g) - p)), row.code
        assert n0 == 0 or g[n0 - 1] != g[n0 - 1 + p], row.code  # n0 is the least
        t = len(rule.digits)
        need = 2 * max(n0, 1) + 2 * p + t if rule.splits else max(n0, 1) + t + p
        assert need <= len(g), row.code
        for q in range(1, p):  # no smaller period repeats that far
            assert any(g[n] != g[n + q] for n in range(n0, len(g) - q)), row.code
        assert row.largest == max(g)


def test_identical_games_are_counted_once(two_digits: list[CensusRow]) -> None:
    by_code = {row.code: row for row in two_digits}
    same = [row for row in two_digits if row.same_as is not None]
    assert ("0.5", "0.3") in {(row.code, row.same_as) for row in same}  # both G(n) = n mod 2
    for row in same:
        first = by_code[row.same_as]
        assert row.proven and first.proven and first.same_as is None
        assert (row.period, row.preperiod) == (first.period, first.preperiod)
        n = row.preperiod + row.period  # type: ignore[operator]
        a = grundy_sequence(TakeAndBreak.octal(row.code), n).values.tolist()
        b = grundy_sequence(TakeAndBreak.octal(first.code), n).values.tolist()
        assert a == b
    # never merged without a proof
    unproven = census_row(TakeAndBreak.octal("0.6"), 100, None)
    assert mark_identical([unproven, unproven])[1].same_as is None


def test_cores_and_a_dask_cluster_give_the_same_table(two_digits: list[CensusRow]) -> None:
    distributed = pytest.importorskip("distributed")
    rules = census_codes(1)
    want = [_columns(r) for r in two_digits[:7]]
    assert [_columns(r) for r in run_census(rules, max_values=SIZE, seconds=None, jobs=2)] == want
    with (
        distributed.LocalCluster(n_workers=2, processes=False, dashboard_address=None) as cluster,
        distributed.Client(cluster) as client,
    ):
        arrived: list[str] = []
        rows = run_census(
            rules,
            max_values=SIZE,
            seconds=None,
            scheduler=client,
            done=lambda row: arrived.append(row.code),
        )
    assert [_columns(r) for r in rows] == want
    assert sorted(arrived) == sorted(r.code for r in rules)


def test_cli_writes_the_table_and_goes_on_from_the_rows_done(tmp_path: Path) -> None:
    out = tmp_path / "c1"
    args = ["census", "--digits", "1", "--max", str(SIZE), "--seconds", "30", "-j", "1"]
    settings = {"format": "nimlab-census/1", "digits": 1, "max": SIZE, "seconds": 30.0}
    done = census_row(TakeAndBreak.octal("0.4"), SIZE, None).as_dict() | {"seconds": 123.5}
    partial = tmp_path / "c1.rows.jsonl"
    partial.write_text(json.dumps(settings) + "\n" + json.dumps(done) + "\n{torn", "utf-8")
    result = runner.invoke(app, [*args, "--out", str(out), "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["games"] == 7 and summary["proven"] == 6 and summary["distinct_proven"] == 4
    table = json.loads((tmp_path / "c1.json").read_text("utf-8"))
    rows = {row["code"]: row for row in table["rows"]}
    assert rows["0.4"]["seconds"] == 123.5  # kept, not computed again
    assert rows["0.6"]["proven"] is False and rows["0.6"]["values"] == SIZE
    with open(tmp_path / "c1.csv", newline="", encoding="utf-8") as f:
        lines = list(csv.DictReader(f))
    assert [line["code"] for line in lines] == [f"0.{d}" for d in range(1, 8)]
    assert lines[4]["same_as"] == "0.3" and not partial.exists()
    partial.write_text(json.dumps(settings | {"max": 10}) + "\n", "utf-8")
    other = runner.invoke(app, [*args, "--out", str(out)])
    assert other.exit_code == 2 and "other settings" in other.stderr
