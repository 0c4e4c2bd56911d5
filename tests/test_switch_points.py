"""Every proven answer right at every size: for every registered game, normal and misère play,
the answer nimlab gives through :func:`~nimlab.core.analysis.analyze` (outcome, remoteness, the
value and remoteness of every legal move, the full list of winning moves) equals an exact search
from the rules' own moves, on positions below, at and above the sizes where the engine changes
method (a formula, a theorem, the pure-Python search, the compiled searches, the misère quotient).

The exact reference is :class:`~nimlab.theory.solver.ExactSolver` for heap games and a plain
search over the rules' own successors for the relatives (``test_every_game._exact``); one is
kept per ruleset for the module, so that every example only adds the positions it needs.
``test_the_range_crosses_every_switch`` proves the positions drawn do cross each switch, so the
comparison cannot pass by staying on one side of it."""

from __future__ import annotations

from functools import cache

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from nimlab.core.analysis import analyze
from nimlab.core.errors import PositionError
from nimlab.core.games import parse_game
from nimlab.core.rules import PileRules
from nimlab.core.ruleset import Ruleset
from nimlab.theory.engine import QUOTIENT_FROM, STRATEGIES, Engine
from nimlab.theory.outcome import Outcome
from nimlab.theory.positions import Canon
from nimlab.theory.solver import ExactSolver, MoveSolver
from test_every_game import _exact, _kinds

_BY_NAME = {s.name: s for s in STRATEGIES}
_DENSE_PILES = 4


def _fresh_engine(game: str, misere: bool) -> Engine:
    """An engine of the game's strategies with nothing built yet (a table an earlier question
    built would make a strategy apply to what it holds)."""
    ruleset = Ruleset(parse_game(game), misere)
    return Engine(ruleset.rule, misere=misere, strategies=ruleset.engine.strategies)


@cache
def _switches(game: str, misere: bool) -> tuple[int, ...]:
    """The least total of one heap at which each search of the game starts to answer: the
    compiled search (from the pure-Python one) and, in misère play, the misère quotient (tried
    first from there); and the least heap of the dense table over four equal heaps."""
    engine = _fresh_engine(game, misere)
    names = {s.name for s in engine.strategies}
    found = []
    if "split-search" in names:
        split = _BY_NAME["split-search"]
        found.append(next(t for t in range(2, 61) if split.applies(engine, (t,))))
    if "misere-quotient" in names and misere:
        # (beyond 42 objects the exact reference costs too much: the quotient's own tests
        # check it there)
        found += [t for t in range(2, 43) if engine.search_cost((t,)) > QUOTIENT_FROM][:1]
    if "dense-table" in names:
        found.append(
            next(m for m in range(2, 61) if _BY_NAME["dense-table"].applies(engine, (m,) * 4))
        )
    return tuple(found)


def _heap_kinds() -> list[str]:
    return [k for k in _kinds() if parse_game(k).is_heap_game]


def _pile_kinds() -> list[str]:
    return [k for k in _kinds() if not parse_game(k).is_heap_game]


@cache
def _reference(game: str, misere: bool) -> ExactSolver | MoveSolver[Canon]:
    return _exact(Ruleset(parse_game(game), misere))


def _check(game: str, misere: bool, heaps: list[int], *, strict: bool = False) -> None:
    """nimlab's whole analysis of ``heaps`` against the exact search. The analysis has its
    default budget (about 2 s): on a loaded machine an answer may be "not proven", which is
    never wrong; every answer it marks proven must be the exact one."""
    ruleset = Ruleset(parse_game(game), misere)
    rules = ruleset.game.rules
    exact = _reference(game, misere)
    a = analyze(ruleset, heaps, max_moves=None)
    truth = exact.value(a.board.canonical)
    assert not strict or a.outcome is not None, (game, misere, heaps)
    assert a.outcome in (None, truth.outcome), (game, misere, heaps, a.method)
    assert a.remoteness in (None, truth.remoteness), (game, misere, heaps, a.method)
    if a.outcome is not None:
        assert a.outcome is truth.outcome
    winning = set()
    proven = True
    for m in a.moves:
        child = exact.value(rules.play(a.board, m.move).canonical)
        assert m.outcome in (None, child.outcome), (game, misere, heaps, m.move)
        assert m.remoteness in (None, child.remoteness), (game, misere, heaps, m.move)
        proven = proven and m.outcome is not None
        if child.outcome is Outcome.P:
            winning.add(m.move)
    marked = {m.move for m in a.moves if m.outcome is Outcome.P}
    assert marked <= winning, (game, misere, heaps)
    if proven and a.moves_complete:
        assert marked == winning, (game, misere, heaps)


@st.composite
def _heap_positions(draw: st.DrawFn, game: str, misere: bool) -> list[int]:
    """A position near one of the game's switches: a total from 6 below to 3 above it, in one
    to three heaps (for the dense table: four heaps up to 2 above it)."""
    rule = parse_game(game).rule
    switch = draw(st.sampled_from(_switches(game, misere)))
    if not rule.splits:
        return draw(st.lists(st.integers(0, switch + 2), min_size=1, max_size=_DENSE_PILES))
    total = draw(st.integers(max(1, switch - 6), switch + 3))
    cuts = sorted(draw(st.lists(st.integers(0, total), max_size=2)))
    heaps = [b - a for a, b in zip([0, *cuts], [*cuts, total], strict=True)]
    return [h for h in heaps if h] or [total]


@pytest.mark.parametrize("game", _heap_kinds())
@pytest.mark.parametrize("misere", [False, True], ids=["normal", "misere"])
@settings(max_examples=4, deadline=None)
@given(data=st.data())
def test_heap_games_at_every_size(game: str, misere: bool, data: st.DataObject) -> None:
    assume(_switches(game, misere))  # (Nim: its formula gives every answer)
    _check(game, misere, data.draw(_heap_positions(game, misere), label="heaps"))


@pytest.mark.parametrize("game", _pile_kinds())
@pytest.mark.parametrize("misere", [False, True], ids=["normal", "misere"])
@settings(max_examples=8, deadline=None)
@given(heaps=st.lists(st.integers(0, 9), min_size=3, max_size=3))
def test_pile_games_at_every_size(game: str, misere: bool, heaps: list[int]) -> None:
    rules = parse_game(game).rules
    assert isinstance(rules, PileRules)
    if rules.piles is not None:
        heaps = heaps[: rules.piles]
    try:
        _check(game, misere, heaps)
    except PositionError:  # a start the rules refuse (Fibonacci Nim on one object)
        assume(False)


@pytest.mark.parametrize("game", _heap_kinds())
@pytest.mark.parametrize("misere", [False, True], ids=["normal", "misere"])
def test_every_switch_is_within_exact_reach(game: str, misere: bool) -> None:
    """Each search the game may use starts to answer at a size the exact search still affords
    (so the comparison above meets both sides of it), and not below."""
    engine = _fresh_engine(game, misere)
    names = {s.name for s in engine.strategies}
    switches = _switches(game, misere)
    expected = ("split-search" in names) + ("dense-table" in names)
    assert expected <= len(switches) <= expected + misere, (game, misere, switches)
    if "split-search" in names:
        t = switches[0]
        assert 4 < t <= 45, (game, t)
        assert not _BY_NAME["split-search"].applies(engine, (t - 1,))


@pytest.mark.parametrize(
    ("misere", "heaps"),
    [
        (True, [2, 11, 14]),
        (True, [2, 12, 14]),
        (True, [6, 10, 11]),
        (True, [8, 11, 12]),
        (True, [1, 16, 17]),
        (True, [2, 25]),
        (False, [3, 24]),
        (False, [10, 18]),
        (False, [27]),
    ],
)
def test_laskers_nim_from_27_objects(misere: bool, heaps: list[int]) -> None:
    """Positions whose proven answers were once wrong (outcome, remoteness, winning moves):
    answered (a few milliseconds of search) and right."""
    _check("lasker", misere, heaps, strict=True)
