"""The same question gets the same answer: the command line, started with an empty kernel cache
(the first run after an install) and given half of the time it asks for (as on a machine busy on
both cores), proves exactly what it proves with its kernels prepared and the machine idle.
Budgets count work, never compiling; no check here depends on how long anything takes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import OrderedDict
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from nimlab.core.analysis import analyze
from nimlab.core.position import board_for
from nimlab.core.ruleset import Ruleset
from nimlab.theory import budget as budget_module
from nimlab.theory import engine as engine_module
from nimlab.theory import kernels, quotient
from nimlab.theory.budget import Budget, BudgetExceeded
from nimlab.theory.engine import Engine
from nimlab.theory.octal import TakeAndBreak
from processes import run_starved

QUESTIONS: dict[str, tuple[str, int, list[list[int]], bool]] = {
    # misère Kayles rows 1..60, and positions only its misère quotient answers
    "kayles": ("kayles misere", 2, [[n] for n in range(1, 61)] + [[30, 40], [200, 300]], False),
    "subtraction": ("subtraction:1,3,4", 2, [[1, 2, 3], [4, 5], [7], [10, 13, 25, 6]], True),
    "subtraction misère": ("subtraction:1,3,4 misere", 2, [[10, 13, 25, 6], [1, 2, 3]], False),
    "three players": ("nim misere", 3, [[1, 1], [2, 3], [1, 2, 3]], True),
    "four players": ("nim misere", 4, [[1, 2, 3], [2, 2, 3]], True),
}
"""Name: (ruleset, players, positions, cold): one command line each (``analyze --batch``),
started with an empty kernel cache when ``cold``. Compiling the kernels of misère Kayles (the
compiled search, the quotient) takes a minute on a loaded two-core machine, too long for the
suite: they start from the kernel cache, still starved of time, unless ``NIMLAB_TEST_COLD=all``
(then every question starts cold, beside two busy loops: ``NIMLAB_TEST_COLD=all
.venv/bin/pytest -n 0 tests/test_same_answers.py``)."""

ALL_COLD = os.environ.get("NIMLAB_TEST_COLD") == "all"


def _command(ruleset: str, players: int) -> list[str]:
    game, *rest = ruleset.split()
    args = [sys.executable, "-m", "nimlab", "analyze", "--game", game, "--json", "--batch", "-"]
    if "misere" in rest:
        args.append("--misere")
    return [*args, "--players", str(players)]


@pytest.fixture(scope="module")
def cold_answers(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[dict[str, Any]]]:
    """Every question asked of the command line while it gets only half of the time that passes
    (stopped and let go on in turns, as other processes on busy cores would make it wait: see
    :func:`~processes.run_starved`), the ``cold`` ones with an empty kernel cache. The command
    lines run at the same time and share that cache: one of them compiles a kernel module while
    the others that need it wait for it and load it (time that no budget counts). With
    ``NIMLAB_TEST_COLD=all``, two busy loops also keep both cores loaded (stopped whatever
    happens)."""
    cache: Path = tmp_path_factory.mktemp("kernel-cache")
    cold_env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    hogs = [subprocess.Popen([sys.executable, "-c", "while 1: pass"]) for _ in range(2 * ALL_COLD)]

    def ask(name: str) -> list[dict[str, Any]]:
        ruleset, players, positions, cold = QUESTIONS[name]
        done = run_starved(
            _command(ruleset, players),
            stdin="".join(json.dumps(p) + "\n" for p in positions),
            env=cold_env if cold or ALL_COLD else None,
            timeout=900,
        )
        return [json.loads(line) for line in done.stdout.splitlines()]

    try:
        with ThreadPoolExecutor(len(QUESTIONS)) as pool:
            return dict(zip(QUESTIONS, pool.map(ask, QUESTIONS), strict=True))
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()


def _warm(name: str) -> Iterator[dict[str, Any]]:
    """The same questions answered in this process (kernels prepared), with no time limit."""
    ruleset_text, players, positions, _cold = QUESTIONS[name]
    ruleset = Ruleset.parse(ruleset_text)
    for heaps in positions:
        board = board_for(ruleset.rule, heaps)
        yield analyze(ruleset, board, budget=Budget(), players=players).to_json()


@pytest.mark.slow
@pytest.mark.parametrize("name", list(QUESTIONS))
def test_a_cold_start_under_load_proves_what_a_warm_run_proves(
    cold_answers: dict[str, list[dict[str, Any]]], name: str
) -> None:
    cold = cold_answers[name]
    warm = list(_warm(name))
    assert all(a["proven"] for a in warm)
    assert cold == warm


@pytest.mark.slow
def test_the_answers_are_the_known_ones(cold_answers: dict[str, list[dict[str, Any]]]) -> None:
    kayles = cold_answers["kayles"]
    # misère Kayles: one row of n is a P-position exactly for n in {1, 4, 9, 12, 20, ...}
    assert [a["position"][0] for a in kayles[:20] if a["outcome"] == "P"] == [1, 4, 9, 12, 20]
    assert kayles[-1]["method"] == "misere-quotient"
    row123 = cold_answers["subtraction"][0]
    assert row123["remoteness"] == 6 and row123["outcome"] == "P"
    misere = cold_answers["subtraction misère"][0]
    assert misere["proven"] and all(m["winning"] is not None for m in misere["moves"])


def test_preparing_kernels_is_not_counted_by_any_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [1000.0]
    monkeypatch.setattr(budget_module.time, "monotonic", lambda: clock[0])
    budget = Budget(seconds=2)
    with budget_module.not_counted():
        clock[0] += 50  # compiling, importing
        assert budget.remaining_seconds() == 2  # also while it goes on (another thread asks)
    clock[0] += 1.5  # work
    budget.check()
    assert budget.remaining_seconds() == pytest.approx(0.5)
    clock[0] += 1
    with pytest.raises(BudgetExceeded):
        budget.check()


def test_a_question_that_ran_out_spoils_no_later_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(quotient, "_cache", OrderedDict())  # nothing computed before counts
    monkeypatch.setattr(quotient, "_progress", OrderedDict())
    engine = Engine(TakeAndBreak.octal("0.77"), misere=True)
    spent = Budget()
    spent.cancel()
    first = engine.evaluate((200, 300), budget=spent)
    assert not first.proven and first.shortfall is not None
    again = engine.evaluate((200, 300), budget=Budget())
    assert again.proven and again.method == "misere-quotient"


def test_a_quotient_that_ran_out_goes_on_from_what_it_verified(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(quotient, "_cache", OrderedDict())
    monkeypatch.setattr(quotient, "_progress", OrderedDict())
    rule = TakeAndBreak.octal("0.77")
    with pytest.raises(BudgetExceeded):
        quotient.misere_quotient(rule, 30, budget=Budget(positions=30_000))
    partial = quotient.quotient_progress(rule)
    assert partial is not None and 0 < partial.heap_bound < 30
    whole = quotient.misere_quotient(rule, 30)
    assert quotient.quotient_progress(rule) is None
    assert whole == quotient.misere_quotient(rule, 30)  # the same as from scratch
    n = partial.heap_bound
    pairs = [(a, b) for a in range(n + 1) for b in range(a, n + 1)]
    assert [partial.outcome(p) for p in pairs] == [whole.outcome(p) for p in pairs]


def test_not_proven_says_which_step_ran_out_and_what_to_pass(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from nimlab.cli.analyze import _shortfall_text

    monkeypatch.setattr(quotient, "_cache", OrderedDict())
    monkeypatch.setattr(quotient, "_progress", OrderedDict())
    monkeypatch.setattr(engine_module, "_ENGINES", OrderedDict())  # no answer remembered
    ruleset = Ruleset.parse("kayles misere")
    kernels.prepare(kernels.groups_for(ruleset.rule, misere=True))  # as the command line does
    clock = [0.0]

    def monotonic() -> float:
        clock[0] += 0.001  # time passes a little with every look at the clock
        return clock[0]

    monkeypatch.setattr(budget_module.time, "monotonic", monotonic)
    budget = Budget(seconds=30)
    clock[0] = 10_000.0  # the deadline has passed long before any work
    a = analyze(ruleset, board_for(ruleset.rule, [200, 300]), budget=budget)
    assert a.outcome is None and a.shortfall is not None and a.shortfall.more_time_helps
    text = _shortfall_text(a, 30)
    assert text.startswith("the ") and "ran out of time" in text and "--seconds 120" in text
