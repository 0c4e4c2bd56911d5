"""Engines shared between threads: the compiled kernels run without Python's global interpreter
lock, so two threads may be inside them at once; two threads asking the same engine (or
paranoid solver, or the Grundy and quotient computations) at the same time get exactly the
answers one thread gets alone."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

import pytest

from nimlab.theory.budget import Budget
from nimlab.theory.engine import DenseTable, Engine, MisereQuotientStrategy, SplitSearch, Terminal
from nimlab.theory.grundy import grundy_sequence
from nimlab.theory.octal import TakeAndBreak
from nimlab.theory.outcome import Outcome
from nimlab.theory.paranoid import ParanoidSolver
from nimlab.theory.positions import Canon, canonical, children
from nimlab.theory.quotient import misere_quotient

T = TypeVar("T")

KAYLES = TakeAndBreak.octal("0.77")
SUBTRACTION = TakeAndBreak.subtraction({1, 3, 4})


def _together(ask: Callable[[int], T], threads: int = 2) -> list[T]:
    """``ask(i)`` in ``threads`` threads started at once; their answers, by thread."""
    barrier = threading.Barrier(threads)
    found: dict[int, T] = {}
    errors: list[BaseException] = []

    def run(i: int) -> None:
        try:
            barrier.wait(timeout=120)
            found[i] = ask(i)
        except BaseException as e:  # reported below, in the test's thread
            errors.append(e)

    pool = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join(600)
    assert not any(t.is_alive() for t in pool)
    if errors:
        raise errors[0]
    return [found[i] for i in range(threads)]


def _positions(rule: TakeAndBreak, top: Canon, count: int) -> list[Canon]:
    """``top`` and positions below it under ``rule`` (breadth first), at most ``count``: the
    questions a game from ``top`` asks."""
    out, seen, todo = [top], {top}, [top]
    while todo and len(out) < count:
        nxt = []
        for p in todo:
            for c in children(rule, p):
                c = canonical(c)
                if c and c not in seen:
                    seen.add(c)
                    out.append(c)
                    nxt.append(c)
        todo = nxt
    return out[:count]


ENGINES = {
    "dense-table": (SUBTRACTION, False, (Terminal(), DenseTable(min_cost=0)), (14, 17, 19, 23)),
    "split-search": (KAYLES, False, (Terminal(), SplitSearch(min_cost=0)), (9, 11, 13, 15)),
    "split-search misère": (KAYLES, True, (Terminal(), SplitSearch(min_cost=0)), (8, 10, 12, 15)),
    "misère quotient": (
        KAYLES,
        True,
        (Terminal(), MisereQuotientStrategy(min_cost=0), SplitSearch(min_cost=0)),
        (20, 31, 40, 47),
    ),
}


def _answer(engine: Engine, position: Canon) -> tuple[Outcome | None, int | None]:
    """Outcome and remoteness with no limit in time (which method answers may depend on
    time: the misère quotient is built within a few seconds, else a search answers)."""
    ev = engine.evaluate(position, budget=Budget())
    return ev.outcome, ev.remoteness


@pytest.mark.parametrize("name", list(ENGINES))
def test_two_threads_on_one_engine_get_the_answers_of_one_thread(name: str) -> None:
    rule, misere, strategies, top = ENGINES[name]
    questions = _positions(rule, top, 40)
    alone = Engine(rule, misere=misere, strategies=strategies)
    expected = [_answer(alone, p) for p in questions]
    assert all(outcome is not None for outcome, _ in expected)
    shared = Engine(rule, misere=misere, strategies=strategies)
    # one thread from the largest position down, the other from the smallest up: each finds
    # the tables in whatever state the other left them
    answers = _together(
        lambda i: [_answer(shared, p) for p in (questions if i == 0 else questions[::-1])]
    )
    assert answers[0] == expected
    assert answers[1] == expected[::-1]
    moves = _together(lambda i: shared.winning_moves(top, budget=Budget()))
    assert moves == [alone.winning_moves(top, budget=Budget())] * 2


@pytest.mark.parametrize("misere", [False, True])
def test_two_threads_on_one_paranoid_solver_get_the_answers_of_one_thread(misere: bool) -> None:
    rule, start, players = SUBTRACTION, (5, 7, 9), (0, 1, 2)
    questions = _positions(rule, start, 30)

    def values(solver: ParanoidSolver) -> list[tuple[bool, int]]:
        out = []
        for p in questions:
            for hero in players:
                v = solver.move_value(p, players, 0, hero)
                out.append((v.hero_wins, v.remoteness))
        return out

    expected = values(ParanoidSolver(rule, start, misere=misere))
    shared = ParanoidSolver(rule, start, misere=misere)
    assert _together(lambda i: values(shared)) == [expected, expected]


def test_grundy_values_and_misere_quotients_computed_at_once_in_two_threads_agree() -> None:
    rule = TakeAndBreak.octal("0.137")
    expected = grundy_sequence(rule, 5000, prove=True)
    found = _together(lambda i: grundy_sequence(rule, 5000, prove=True))
    for seq in found:
        assert seq.values.tolist() == expected.values.tolist()
        assert (seq.period, seq.preperiod, seq.proven) == (
            expected.period,
            expected.preperiod,
            expected.proven,
        )
    quotient = misere_quotient(KAYLES, 24)
    assert _together(lambda i: misere_quotient(KAYLES, 24).to_json()) == [quotient.to_json()] * 2
