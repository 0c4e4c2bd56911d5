"""Long Grundy runs: stopping by time or on request, keeping the state, going on from it.

A resumed run must compute exactly the values (and the period) of one uninterrupted run, and a
damaged or foreign state must be refused, by the library and by ``nimlab grundy --resume``."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import nimlab.theory.grundy as grundy_module
from nimlab.cli.app import app
from nimlab.theory.grundy import GrundyRun, GrundyStateError, grundy_sequence
from nimlab.theory.octal import TakeAndBreak
from processes import PATIENCE, restore_sigint, until

runner = CliRunner()

octal_rules = st.builds(
    lambda digits, d0: TakeAndBreak(tuple(digits), d0=d0),
    st.lists(st.integers(0, 7), min_size=1, max_size=4).filter(any),
    st.sampled_from([0, 0, 0, 4]),
)


@settings(max_examples=60, deadline=None)
@given(rule=octal_rules, n=st.integers(0, 6000), cut=st.floats(0, 1), prove=st.booleans())
def test_a_resumed_run_equals_one_uninterrupted_run(
    rule: TakeAndBreak, n: int, cut: float, prove: bool
) -> None:
    whole = grundy_sequence(rule, n, prove=prove)
    first = GrundyRun(rule, int(n * cut), prove=prove)
    first.run()
    again = GrundyRun.from_bytes(first.to_bytes(), rule, limit=n).run()
    assert again.stopped is None and again.proven == whole.proven
    if again.proven or not prove:
        assert (again.period, again.preperiod) == (whole.period, whole.preperiod)
    if prove:  # a proof may come at another length: the values agree as far as both go
        assert again.values.tolist() == grundy_sequence(rule, len(again)).values.tolist()
    else:
        assert again.values.tolist() == whole.values.tolist()


def test_a_run_stopped_on_request_goes_on_to_the_published_period() -> None:
    """0.16 (period 149,459, preperiod 105,351) stopped after its first chunks, kept, resumed."""
    rule = TakeAndBreak.octal("0.16")
    run = GrundyRun(rule, 1 << 20, prove=True)
    calls: list[object] = []
    stopped = run.run(stop=lambda: len(calls) > 2, status=calls.append)
    assert stopped.stopped == "stop" and not stopped.proven and 0 < len(stopped) < 100_000
    resumed = GrundyRun.from_bytes(run.to_bytes(), rule)
    assert resumed.seconds == pytest.approx(run.seconds, abs=1e-3)
    done = resumed.run()
    assert done.stopped is None
    assert (done.period, done.preperiod, done.proven) == (149_459, 105_351, True)
    assert done.values.tolist() == grundy_sequence(rule, len(done)).values.tolist()


def test_no_time_stops_at_once_and_says_so() -> None:
    run = GrundyRun(TakeAndBreak.octal("0.16"), 1 << 16)
    first = run.run(seconds=0)
    assert first.stopped == "time" and len(first) <= 1
    assert run.run(seconds=None).stopped is None and run.computed == 1 << 16


def test_damaged_or_foreign_states_are_refused() -> None:
    rule = TakeAndBreak.octal("0.77")
    run = GrundyRun(rule, 500)
    run.run()
    data = run.to_bytes()
    assert GrundyRun.from_bytes(data).rule == rule
    for where in (0, 25, len(data) // 2, len(data) - 10):
        damaged = bytearray(data)
        damaged[where] ^= 0x20
        with pytest.raises(GrundyStateError):
            GrundyRun.from_bytes(bytes(damaged), rule)
    with pytest.raises(GrundyStateError, match="cut short"):
        GrundyRun.from_bytes(data[:30], rule)
    with pytest.raises(GrundyStateError, match="checksum"):
        GrundyRun.from_bytes(data[:-200] + data[-65:], rule)
    with pytest.raises(GrundyStateError, match="not a saved"):
        GrundyRun.from_bytes(b"hello", rule)
    with pytest.raises(GrundyStateError, match=r"of 0\.77, not of 0\.07"):
        GrundyRun.from_bytes(data, TakeAndBreak.octal("0.07"))
    with pytest.raises(GrundyStateError, match="too small"):
        GrundyRun.from_bytes(data, rule, limit=100)


def test_wide_values_keep_their_width() -> None:
    """Values past 2**16 (a game without moves beyond 'take all': Nim-like growth) survive."""
    rule = TakeAndBreak((7, 7, 7, 7, 7, 7, 7, 7))
    run = GrundyRun(rule, 300)
    run.run()
    resumed = GrundyRun.from_bytes(run.to_bytes(), rule, limit=600)
    assert resumed.run().values.tolist() == grundy_sequence(rule, 600).values.tolist()
    nim = GrundyRun(TakeAndBreak.nim(), 70_000)
    nim.run()
    assert GrundyRun.from_bytes(nim.to_bytes()).run().values.tolist() == list(range(70_000))


def test_cli_saves_on_time_out_and_resumes(tmp_path: Path) -> None:
    state = tmp_path / "run.ngr"
    first = runner.invoke(app, ["grundy", "0.16", "--seconds", "0", "--save", str(state), "--json"])
    assert first.exit_code == 0, first.output
    out = json.loads(first.stdout)
    assert out["stopped"] == "time" and state.exists()
    assert f"--resume {state}" in first.stderr
    more = runner.invoke(app, ["grundy", "0.16", "--resume", str(state), "--max", "3000", "--json"])
    assert more.exit_code == 0, more.output
    resumed = json.loads(more.stdout)
    assert "stopped" not in resumed and resumed["max"] == 3000
    direct = runner.invoke(app, ["grundy", "0.16", "--max", "3000", "--json", "--values"])
    again = runner.invoke(
        app, ["grundy", "0.16", "--resume", str(state), "--json", "--values", "--max", "3000"]
    )
    assert json.loads(again.stdout)["values"] == json.loads(direct.stdout)["values"]


def test_cli_refuses_damaged_missing_and_foreign_states(tmp_path: Path) -> None:
    state = tmp_path / "run.ngr"
    assert (
        runner.invoke(app, ["grundy", "0.77", "--max", "300", "--save", str(state)]).exit_code == 0
    )
    foreign = runner.invoke(app, ["grundy", "0.07", "--resume", str(state)])
    assert foreign.exit_code == 2 and "of 0.77, not of 0.07" in foreign.stderr
    data = bytearray(state.read_bytes())
    data[100] ^= 1
    state.write_bytes(bytes(data))
    damaged = runner.invoke(app, ["grundy", "0.77", "--resume", str(state)])
    assert damaged.exit_code == 2 and "damaged" in damaged.stderr
    assert "Traceback" not in damaged.stderr
    missing = runner.invoke(app, ["grundy", "0.77", "--resume", str(tmp_path / "none")])
    assert missing.exit_code == 2 and "does not exist" in missing.stderr


@settings(max_examples=80, deadline=None)
@given(rule=octal_rules, n=st.integers(0, 3000), start=st.integers(8, 600))
def test_values_filled_from_a_proven_period_equal_computed_ones(
    rule: TakeAndBreak, n: int, start: int
) -> None:
    """Once the period is proven the rest of the values follow from it; they equal what the
    plain mex computation gives (proofs are looked for from ``start`` values on)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(grundy_module, "_PROVE_START", start)
        filled = grundy_sequence(rule, n)
    plain = grundy_sequence(rule, n, method="quadratic")
    assert filled.values.tolist() == plain.values.tolist()
    assert (filled.period, filled.preperiod, filled.proven) == (
        plain.period,
        plain.preperiod,
        plain.proven,
    )


def test_a_proven_game_fills_the_values_it_was_asked() -> None:
    rule = TakeAndBreak.octal("0.16")
    seq = grundy_sequence(rule, 1 << 21)
    assert (seq.period, seq.preperiod, seq.proven) == (149_459, 105_351, True)
    assert (seq.rare_count, seq.last_rare) == (53, 13_935)
    computed = grundy_sequence(rule, 1 << 21, method="sparse")  # every value by the kernel
    assert seq.values.tolist() == computed.values.tolist()


def test_cli_says_at_once_when_the_state_cannot_be_saved(tmp_path: Path) -> None:
    # a place that cannot be written: it could not be done (exit status 1), said in one line
    result = runner.invoke(app, ["grundy", "0.77", "--save", str(tmp_path / "no" / "run")])
    assert result.exit_code == 1 and "cannot write --save" in result.stderr
    assert result.stderr.count("\n") == 1 and result.stdout == ""
    census = runner.invoke(app, ["census", "--digits", "1", "--out", str(tmp_path / "no" / "c")])
    assert census.exit_code == 1 and "cannot write" in census.stderr


def test_ctrl_c_saves_and_says_how_to_go_on(tmp_path: Path) -> None:
    """A real process: the first Ctrl-C stops the run at its next chunk, saves, prints the
    command that goes on and exits with 130; the state then resumes."""
    state = tmp_path / "officers.run"
    child = subprocess.Popen(
        [sys.executable, "-m", "nimlab", "grundy", "0.6", "--seconds", "600"]
        + ["--save", str(state), "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=restore_sigint,
    )
    try:
        until(state.exists, "the first save")  # the handler is in place before it
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=PATIENCE)
    finally:
        child.kill()
    assert child.returncode == 130, err
    assert json.loads(out)["stopped"] == "stop"
    assert f"nimlab grundy 0.6 --resume {state}" in " ".join(err.split())
    officers = TakeAndBreak.octal("0.6")
    # how far the run got before the signal depends on the machine's load
    limit = GrundyRun.from_bytes(state.read_bytes(), officers).computed + 1000
    resumed = GrundyRun.from_bytes(state.read_bytes(), officers, limit=limit)
    assert resumed.run().values.tolist() == grundy_sequence(officers, limit).values.tolist()
