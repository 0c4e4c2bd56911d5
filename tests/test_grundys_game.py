"""Grundy's game (split one heap into two unequal heaps) by the octal games' kernels, against
the plain mex in pure Python; the 'no equal halves' variant of any code against its twin."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from nimlab.cli.app import app
from nimlab.theory.grundy import (
    GRUNDYS_GAME,
    GrundyRun,
    GrundyStateError,
    grundys_game_sequence,
    naive_grundys_game,
)
from nimlab.theory.octal import TakeAndBreak

runner = CliRunner()

# OEIS A002188, Grundy's game, n = 0..47
OEIS = [
    0, 0, 0, 1, 0, 2, 1, 0, 2, 1, 0, 2, 1, 3, 2, 1, 3, 2, 4, 3, 0, 4, 3, 0, 4, 3, 0, 4, 1, 2, 3, 1,
    2, 4, 1, 2, 4, 1, 2, 4, 1, 5, 4, 1, 5, 4, 1, 5,
]  # fmt: skip


def test_published_values_and_every_method() -> None:
    assert naive_grundys_game(len(OEIS)) == OEIS
    expected = naive_grundys_game(3000)  # past the switch to the rare/common method
    for method in ("auto", "sparse", "quadratic"):
        seq = grundys_game_sequence(3000, method=method)  # type: ignore[arg-type]
        assert seq.values.tolist() == expected, method
        assert seq.period is None and not seq.proven


def _naive_unequal(rule: TakeAndBreak, n: int) -> list[int]:
    """The plain mex over the rule's options without the splits into two equal heaps."""
    g: list[int] = []
    for m in range(n):
        options = {
            g[parts[0]] ^ g[parts[1]] if len(parts) == 2 else (g[parts[0]] if parts else 0)
            for _take, parts in rule.options(m)
            if len(parts) != 2 or parts[0] != parts[1]
        }
        v = 0
        while v in options:
            v += 1
        g.append(v)
    return g


@settings(max_examples=80, deadline=None)
@given(
    digits=st.lists(st.integers(0, 7), min_size=0, max_size=4),
    d0=st.sampled_from([0, 4]),
    n=st.integers(0, 120),
    method=st.sampled_from(["auto", "sparse", "quadratic"]),
)
def test_no_equal_halves_equals_its_twin_for_any_code(
    digits: list[int], d0: int, n: int, method: str
) -> None:
    rule = TakeAndBreak(tuple(digits), d0=d0)
    run = GrundyRun(rule, n, method=method, unequal=True)  # type: ignore[arg-type]
    assert run.run().values.tolist() == _naive_unequal(rule, n)


def test_grundys_game_is_a_take_and_break_rule_that_forbids_equal_halves() -> None:
    assert GRUNDYS_GAME.unequal and GRUNDYS_GAME.splits
    assert [parts for _, parts in GRUNDYS_GAME.options(6)] == [(1, 5), (2, 4)]
    assert not GRUNDYS_GAME.can_leave(0, 3, 3) and GRUNDYS_GAME.can_leave(0, 2, 4)
    assert GrundyRun(GRUNDYS_GAME, 48).run().values.tolist() == OEIS


def test_kept_and_resumed_and_never_mixed_with_4_0() -> None:
    run = GrundyRun(GRUNDYS_GAME, 2500, unequal=True)
    run.run()
    data = run.to_bytes()
    resumed = GrundyRun.from_bytes(data, GRUNDYS_GAME, limit=4000, want_unequal=True)
    assert resumed.run().values.tolist() == grundys_game_sequence(4000).values.tolist()
    try:
        GrundyRun.from_bytes(data, TakeAndBreak((), d0=4))  # 4.0 allows equal halves
    except GrundyStateError as exc:
        assert "Grundy's game, not of 4.0" in str(exc)
    else:  # pragma: no cover
        raise AssertionError("a run of Grundy's game resumed as 4.0")


def test_cli() -> None:
    result = runner.invoke(app, ["grundy", "grundys-game", "--max", "48", "--json", "--values"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["game"] == "grundys-game" and out["values"] == OEIS and out["proven"] is False
    refused = runner.invoke(app, ["grundy", "grundys-game", "--prove"])
    assert refused.exit_code == 2 and "no periodicity theorem" in refused.stderr
