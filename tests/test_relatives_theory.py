"""The classic relatives of Nim: every formula and winning move against the exact search
(:class:`~nimlab.theory.solver.MoveSolver` over the game's move generator), plus known values."""

from __future__ import annotations

from decimal import Decimal, getcontext
from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nimlab.theory.budget import Budget, BudgetExceeded
from nimlab.theory.fibonacci import (
    fibonacci_moves,
    fibonacci_outcome,
    fibonacci_position,
    fibonacci_start,
    fibonacci_winning_move,
    fibonacci_winning_moves,
    fibonacci_working,
    zeckendorf,
)
from nimlab.theory.grundy import naive_grundy, naive_grundys_game
from nimlab.theory.loopy import loopy_outcomes
from nimlab.theory.moore import (
    moore_is_move,
    moore_moves,
    moore_outcome,
    moore_takes,
    moore_winning_move,
    moore_working,
)
from nimlab.theory.northcott import (
    northcott_gaps,
    northcott_moves,
    northcott_outcome,
    northcott_state_moves,
    northcott_winning_moves,
    northcott_working,
)
from nimlab.theory.octal import TakeAndBreak
from nimlab.theory.outcome import Outcome
from nimlab.theory.positions import canonical
from nimlab.theory.solver import ExactSolver, MoveSolver
from nimlab.theory.splitting import (
    LASKERS_NIM,
    grundys_game_moves,
    grundys_game_winning_moves,
    grundys_game_working,
    lasker_grundy,
    lasker_misere_outcome,
    lasker_options_of_value,
    lasker_outcome,
    lasker_working,
)
from nimlab.theory.staircase import (
    StaircaseMove,
    staircase_apply,
    staircase_moves,
    staircase_outcome,
    staircase_winning_moves,
    staircase_working,
)
from nimlab.theory.wythoff import (
    TABLE_BYTES,
    beatty_pair,
    lower_index,
    table_cells,
    upper_index,
    wythoff_grundy,
    wythoff_grundy_known,
    wythoff_grundy_table,
    wythoff_grundy_values,
    wythoff_moves,
    wythoff_outcome,
    wythoff_winning_moves,
    wythoff_working,
)

P, N = Outcome.P, Outcome.N
plays = st.booleans()

# -- the solver ----------------------------------------------------------------------------------


def test_move_solver_remoteness_and_budget() -> None:
    # a subtraction game {1, 2} on one heap, as a bare move generator
    solver: MoveSolver[int] = MoveSolver(lambda n: [n - t for t in (1, 2) if t <= n])
    assert [solver.value(n).outcome for n in range(7)] == [P, N, N, P, N, N, P]
    assert solver.value(6).remoteness == 4  # the loser delays: 6 -> 5 -> 3 -> 2 -> 0
    assert solver.value(5).remoteness == 3
    assert solver.winning_moves(5) == [3]
    misere: MoveSolver[int] = MoveSolver(lambda n: [n - t for t in (1, 2) if t <= n], misere=True)
    assert [misere.value(n).outcome for n in range(5)] == [N, P, N, N, P]
    small: MoveSolver[int] = MoveSolver(lambda n: [n - 1] if n else [], budget=10)
    with pytest.raises(BudgetExceeded):
        small.value(50)
    assert small.value(5).outcome is N  # the next query starts afresh
    with pytest.raises(BudgetExceeded):
        MoveSolver(lambda n: [n - 1] if n else []).value(100, Budget(positions=20))


def test_is_end_makes_a_position_terminal() -> None:
    solver: MoveSolver[int] = MoveSolver(lambda n: [n - 1] if n else [], is_end=lambda n: n == 3)
    assert solver.value(3).remoteness == 0
    assert [solver.value(n).outcome for n in (3, 4, 5)] == [P, N, P]
    assert solver.winning_moves(3) == []


# -- Wythoff's game ------------------------------------------------------------------------------

WYTHOFF = {False: MoveSolver(wythoff_moves), True: MoveSolver(wythoff_moves, misere=True)}
wythoff_piles = st.tuples(st.integers(0, 30), st.integers(0, 30))


def test_wythoff_first_pairs() -> None:
    assert [beatty_pair(k) for k in range(7)] == [
        (0, 0), (1, 2), (3, 5), (4, 7), (6, 10), (8, 13), (9, 15)
    ]  # fmt: skip
    p_positions = [(x, y) for x in range(11) for y in range(x, 11) if wythoff_outcome((x, y)) is P]
    assert p_positions == [(0, 0), (1, 2), (3, 5), (4, 7), (6, 10)]
    misere = [(x, y) for x in range(8) for y in range(x, 8) if wythoff_outcome((x, y), misere=True)
              is P]  # fmt: skip
    assert misere == [(0, 1), (2, 2), (3, 5), (4, 7)]


def test_beatty_pairs_are_exact_for_huge_indices() -> None:
    # ⌊kφ⌋ for k = 10**40, from the decimal expansion of φ
    k = 10**40
    phi_digits = 16180339887498948482045868343656381177203  # ⌊φ · 10**40⌋
    assert beatty_pair(k)[0] == phi_digits
    assert lower_index(phi_digits) == k and upper_index(phi_digits + k) == k


@given(st.integers(1, 5000))
def test_every_positive_integer_is_lower_or_upper_once(n: int) -> None:
    k, j = lower_index(n), upper_index(n)
    assert (k is None) != (j is None)
    assert beatty_pair(k)[0] == n if k is not None else beatty_pair(j or 0)[1] == n


@given(wythoff_piles, plays)
def test_wythoff_formula_and_winning_moves_match_the_search(
    piles: tuple[int, int], misere: bool
) -> None:
    solver = WYTHOFF[misere]
    assert wythoff_outcome(piles, misere=misere) == solver.outcome(piles)
    assert wythoff_winning_moves(piles, misere=misere) == solver.winning_moves(piles)


@given(st.integers(0, 10**30), st.integers(0, 10**30))
def test_wythoff_winning_moves_on_huge_piles(x: int, y: int) -> None:
    moves = wythoff_winning_moves((x, y))
    assert bool(moves) == (wythoff_outcome((x, y)) is N)
    for a, b in moves:
        assert wythoff_outcome((a, b)) is P
        assert (a == x and b < y) or (b == y and a < x) or (0 < x - a == y - b)


def test_wythoff_misere_theorem_for_every_small_position() -> None:
    solver = WYTHOFF[True]
    for x in range(41):
        for y in range(41):
            assert wythoff_outcome((x, y), misere=True) == solver.outcome((x, y)), (x, y)


def test_wythoff_working() -> None:
    w = wythoff_working((9, 4))
    assert (w.k, w.pair, w.smaller, w.p_position) == (5, (8, 13), 4, False)
    assert wythoff_winning_moves((9, 4)) == [(7, 4)]
    assert wythoff_winning_moves((12, 9)) == [(7, 4)]  # the same from both piles
    assert wythoff_winning_moves((3, 9)) == [(3, 5)]
    with pytest.raises(ValueError, match="two piles"):
        wythoff_outcome((1, 2, 3))  # type: ignore[arg-type]


@cache
def brute_wythoff_grundy(x: int, y: int) -> int:
    """The mex over the options, from the rules: take any from one pile, or the same from both."""
    options = {brute_wythoff_grundy(x - t, y) for t in range(1, x + 1)}
    options |= {brute_wythoff_grundy(x, y - t) for t in range(1, y + 1)}
    options |= {brute_wythoff_grundy(x - t, y - t) for t in range(1, min(x, y) + 1)}
    g = 0
    while g in options:
        g += 1
    return g


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 24), st.integers(0, 24))
def test_wythoff_grundy_table_is_the_mex_of_the_rules(rows: int, cols: int) -> None:
    table = wythoff_grundy_table(rows, cols)
    assert table.shape == (rows, cols)
    assert table.tolist() == [
        [brute_wythoff_grundy(x, y) for y in range(cols)] for x in range(rows)
    ]


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 40), st.integers(0, 40))
def test_wythoff_grundy_of_a_position_is_the_mex(x: int, y: int) -> None:
    assert wythoff_grundy((x, y)) == brute_wythoff_grundy(x, y)
    known = wythoff_grundy_known((x, y))
    assert known is None or known == brute_wythoff_grundy(x, y)
    moves = [(x, y), *wythoff_moves((x, y))]
    assert wythoff_grundy_values(moves) == [brute_wythoff_grundy(a, b) for a, b in moves]


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 60), st.integers(0, 60)), min_size=1, max_size=4))
def test_wythoff_grundy_values_of_small_tables_need_no_numpy_table(
    positions: list[tuple[int, int]],
) -> None:
    """Without a kept table, positions whose table is small are read from its columns as lists
    (no NumPy); larger ones from the table: both are the mex of the rules."""
    import nimlab.theory.wythoff as w

    with w._KEPT_LOCK:
        w._KEPT.clear()
    got = wythoff_grundy_values(positions)
    assert got == [brute_wythoff_grundy(a, b) for a, b in positions]
    rest = [p for p in positions if wythoff_grundy_known(p) is None]
    small = (
        bool(rest)
        and w.table_cells(max(min(p) for p in rest) + 1, max(max(p) for p in rest) + 1)
        <= w.SMALL_CELLS
    )
    with w._KEPT_LOCK:
        assert not small or w._KEPT  # (a small table is kept too, as lists)


def test_wythoff_grundy_table_known_facts() -> None:
    n = 120
    table = wythoff_grundy_table(n)
    assert (table == table.T).all()  # symmetric
    assert table[0].tolist() == list(range(n))  # G(0, n) = n
    getcontext().prec = 50
    phi = (1 + Decimal(5).sqrt()) / 2
    pairs = {(0, 0)}
    for k in range(1, n):  # the Wythoff pairs (⌊kφ⌋, ⌊kφ²⌋) from φ's decimal expansion
        a, b = int(k * phi), int(k * phi * phi)
        pairs |= {(a, b), (b, a)}
    zeros = {(x, y) for x in range(n) for y in range(n) if table[x, y] == 0}
    assert zeros == {(a, b) for a, b in pairs if a < n and b < n}
    # each value at most once in a row, a column and a diagonal (cells of a line are options)
    for x in range(n):
        assert len(set(table[x].tolist())) == n
        assert len(set(table.diagonal(x).tolist())) == n - x
    assert table[1, :9].tolist() == [1, 2, 0, 4, 5, 3, 7, 8, 6]


def test_wythoff_grundy_values_keep_the_last_table() -> None:
    moves = [(30, 41), *wythoff_moves((30, 41))]
    assert wythoff_grundy_values(moves) == [brute_wythoff_grundy(a, b) for a, b in moves]
    later = [(17, 12), *wythoff_moves((17, 12))]  # a later position of the same game
    expected = [brute_wythoff_grundy(a, b) for a, b in later]
    assert wythoff_grundy_values(later, budget=Budget(positions=0)) == expected  # no new table
    with pytest.raises(BudgetExceeded):
        wythoff_grundy_values([(31, 90)], budget=Budget(positions=0))  # not covered: a table


def test_wythoff_grundy_respects_its_budget_at_once() -> None:
    huge = (10**12, 10**12 + 1)
    for budget in (None, Budget(seconds=1), Budget(positions=3_000_000)):
        with pytest.raises(BudgetExceeded):  # refused before any work: never a hang
            wythoff_grundy(huge, budget=budget)
    with pytest.raises(BudgetExceeded) as positions:
        wythoff_grundy_table(100, budget=Budget(positions=table_cells(100, 100) - 1))
    assert positions.value.reason == "positions"
    spent = Budget(positions=table_cells(30, 50))
    wythoff_grundy_table(30, 50, budget=spent)
    assert spent.spent == table_cells(30, 50) == 30 * 50 - 30 * 29 // 2
    with pytest.raises(BudgetExceeded) as late:
        wythoff_grundy_table(2000, budget=Budget(seconds=0))
    assert late.value.reason == "time"
    with pytest.raises(BudgetExceeded) as memory:
        wythoff_grundy_table(100, budget=Budget(nbytes=100))
    assert memory.value.reason == "memory" and TABLE_BYTES >= 1 << 30
    # what theorems give costs nothing, however large
    assert wythoff_grundy((0, 10**40), budget=Budget(positions=0)) == 10**40
    assert wythoff_grundy(beatty_pair(10**30)[::-1], budget=Budget(positions=0)) == 0
    assert wythoff_grundy_known(huge) is None
    assert wythoff_grundy_table(0, 10**15).shape == (0, 10**15)
    with pytest.raises(ValueError, match="two piles"):
        wythoff_grundy((1, 2, 3))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="at least 0"):
        wythoff_grundy((-1, 2))


# -- Staircase Nim -------------------------------------------------------------------------------

STAIRCASE = {False: MoveSolver(staircase_moves), True: MoveSolver(staircase_moves, misere=True)}
staircases = st.lists(st.integers(0, 4), max_size=4).map(tuple)


@given(staircases, plays)
def test_staircase_formula_and_winning_moves_match_the_search(
    steps: tuple[int, ...], misere: bool
) -> None:
    solver = STAIRCASE[misere]
    assert staircase_outcome(steps, misere=misere) == solver.outcome(steps)
    moves = staircase_winning_moves(steps, misere=misere)
    assert [staircase_apply(steps, m) for m in moves] == solver.winning_moves(steps)


def test_staircase_known_values() -> None:
    # the odd steps 1 and 3 hold 3 and 3: nim-sum 0 whatever step 2 holds
    assert staircase_outcome((3, 7, 3)) is P
    w = staircase_working((1, 9, 2, 4, 3))
    assert (w.odd_steps, w.odd_coins, w.nim_sum) == ((1, 3, 5), (1, 2, 3), 0)
    assert staircase_winning_moves((1, 5)) == [StaircaseMove(1, 1)]
    # from step 2, moving 1 coin onto step 1 makes it 2 and the nim-sum 2 ^ 2 = 0
    assert StaircaseMove(2, 1) in staircase_winning_moves((1, 5, 2))
    assert staircase_outcome((), misere=True) is N
    assert staircase_winning_moves((0, 3), misere=True) == [StaircaseMove(2, 1)]
    with pytest.raises(ValueError, match="step 2 has 0 coins"):
        staircase_apply((1, 0), StaircaseMove(2, 1))


# -- Moore's Nim_k -------------------------------------------------------------------------------


def _moore_solver(k: int, misere: bool) -> MoveSolver[tuple[int, ...]]:
    return MoveSolver(lambda p: {tuple(sorted(c)) for c in moore_moves(p, k)}, misere=misere)


MOORE = {(k, m): _moore_solver(k, m) for k in (1, 2, 3) for m in (False, True)}
MISERE_NIM = ExactSolver(TakeAndBreak.nim(), misere=True)
moore_heaps = st.lists(st.integers(0, 6), max_size=4).map(tuple)


@given(moore_heaps, st.integers(1, 3), plays)
def test_moore_formula_and_winning_move_match_the_search(
    heaps: tuple[int, ...], k: int, misere: bool
) -> None:
    solver = MOORE[k, misere]
    outcome = solver.outcome(tuple(sorted(heaps)))
    assert moore_outcome(heaps, k, misere=misere) == outcome
    move = moore_winning_move(heaps, k, misere=misere)
    if outcome is P or not any(heaps):
        assert move is None
        return
    assert move is not None
    assert moore_is_move(heaps, move, k)
    assert solver.outcome(tuple(sorted(move))) is P
    assert tuple(sorted(move)) in solver.winning_moves(tuple(sorted(heaps)))


@given(moore_heaps)
def test_misere_moore_with_k_1_is_misere_nim_by_the_take_and_break_search(
    heaps: tuple[int, ...],
) -> None:
    """An independent solver: Moore's Nim_1 is Nim, and nimlab's take-and-break search of
    misère Nim agrees with the misère theorem."""
    assert moore_outcome(heaps, 1, misere=True) == MISERE_NIM.value(canonical(heaps)).outcome


huge_or_small = st.one_of(st.integers(0, 3), st.integers(2, 10**30))


@given(st.lists(huge_or_small, min_size=1, max_size=7).map(tuple), st.integers(1, 4))
def test_misere_moore_winning_move_on_huge_heaps(heaps: tuple[int, ...], k: int) -> None:
    """Beyond the search: the misère move is legal and leaves what the theorem calls a
    P-position, and exists exactly in its N-positions (0 to 7 heaps above 1, so every branch
    of the proof: none, 1 to k, more than k)."""
    outcome = moore_outcome(heaps, k, misere=True)
    if any(h > 1 for h in heaps):
        assert outcome == moore_outcome(heaps, k)
    move = moore_winning_move(heaps, k, misere=True)
    assert (move is None) == (outcome is P or not any(heaps))
    if move is not None:
        assert moore_is_move(heaps, move, k) and moore_outcome(move, k, misere=True) is P


@given(st.lists(st.integers(0, 4), max_size=4).map(tuple), st.integers(1, 3))
def test_moore_takes_lists_every_move_lazily_in_product_order(
    heaps: tuple[int, ...], k: int
) -> None:
    from itertools import combinations, product

    live = [i for i, h in enumerate(heaps) if h]
    expected = [
        (chosen, takes)
        for size in range(1, min(k, len(live)) + 1)
        for chosen in combinations(live, size)
        for takes in product(*(range(1, heaps[i] + 1) for i in chosen))
    ]
    assert list(moore_takes(heaps, k)) == expected
    children = []  # the positions left, new sizes ascending (moore_moves's order)
    for size in range(1, min(k, len(live)) + 1):
        for chosen in combinations(live, size):
            for sizes in product(*(range(heaps[i]) for i in chosen)):
                child = list(heaps)
                for i, after in zip(chosen, sizes, strict=True):
                    child[i] = after
                children.append(tuple(child))
    assert list(moore_moves(heaps, k)) == children


def test_moore_moves_of_huge_heaps_are_listed_lazily() -> None:
    """``itertools.product`` lists its ranges first: 4 GB for a heap of 10**8, OverflowError
    above 2**63; the generators start at once."""
    assert next(moore_takes((2**70, 10**100), 2)) == ((0,), (1,))
    assert next(moore_moves((2**70, 10**100), 2)) == (0, 10**100)
    assert next(moore_moves((10**8, 1), 2)) == (0, 1)


@given(moore_heaps, moore_heaps, st.integers(1, 3))
def test_moore_is_move_agrees_with_the_generator(
    heaps: tuple[int, ...], after: tuple[int, ...], k: int
) -> None:
    after = (after + heaps)[: len(heaps)]
    assert moore_is_move(heaps, after, k) == (after in set(moore_moves(heaps, k)))


@given(st.lists(st.integers(0, 10**30), min_size=1, max_size=8).map(tuple), st.integers(1, 5))
def test_moore_winning_move_on_huge_heaps(heaps: tuple[int, ...], k: int) -> None:
    move = moore_winning_move(heaps, k)
    assert (move is None) == (moore_outcome(heaps, k) is P)
    if move is not None:
        assert moore_is_move(heaps, move, k) and moore_outcome(move, k) is P


def test_moore_known_values() -> None:
    w = moore_working((5, 5, 5, 6), 2)
    # binary 101, 101, 101, 110: columns (ones, twos, fours) = (3, 1, 4), mod 3 = (0, 1, 1)
    assert (w.columns, w.residues, w.p_position) == ((3, 1, 4), (0, 1, 1), False)
    assert moore_outcome((5, 5, 5), 2) is P and moore_outcome((5, 5, 5), 3) is N
    assert moore_winning_move((5, 5, 5), 3) == (0, 0, 0)
    assert moore_outcome((1, 1, 1, 1), 2, misere=True) is P
    with pytest.raises(ValueError, match="k >= 1"):
        moore_outcome((1, 2), 0)


# -- Fibonacci Nim -------------------------------------------------------------------------------

FIBONACCI = MoveSolver(fibonacci_moves)
fibonacci_positions = st.integers(0, 90).flatmap(
    lambda h: st.tuples(st.just(h), st.integers(0, h + 3))
)


@given(fibonacci_positions)
def test_fibonacci_formula_and_winning_moves_match_the_search(position: tuple[int, int]) -> None:
    canon = fibonacci_position(*position)
    assert fibonacci_outcome(position) == FIBONACCI.outcome(canon)
    takes = fibonacci_winning_moves(position)
    heap = canon[0]
    assert [fibonacci_position(heap - t, 2 * t) for t in takes] == FIBONACCI.winning_moves(canon)
    classic = fibonacci_winning_move(position)
    assert (classic is None) == (not takes) and (classic is None or classic in takes)


def test_fibonacci_known_values() -> None:
    starts = [n for n in range(1, 100) if FIBONACCI.outcome(fibonacci_start(n)) is P]
    assert starts == [1, 2, 3, 5, 8, 13, 21, 34, 55, 89]
    assert [n for n in range(1, 100) if fibonacci_outcome(fibonacci_start(n)) is P] == starts
    assert zeckendorf(0) == () and zeckendorf(20) == (13, 5, 2)
    w = fibonacci_working((20, 3))
    assert (w.terms, w.smallest, w.p_position) == ((13, 5, 2), 2, False)
    assert fibonacci_winning_move((20, 3)) == 2
    assert fibonacci_outcome((20, 1)) is P
    assert fibonacci_start(1) == (1, 0) and fibonacci_position(4, 10) == (4, 4)


# -- Grundy's game and Lasker's Nim --------------------------------------------------------------

GRUNDYS_GAME = MoveSolver(grundys_game_moves)
LASKER = ExactSolver(LASKERS_NIM)
# splitting fills the search with every partition of the total: keep totals small
split_heaps = st.lists(st.integers(0, 10), max_size=3)


@given(split_heaps)
def test_grundys_game_values_and_winning_moves_match_the_search(heaps: list[int]) -> None:
    position = canonical(heaps)
    outcome = GRUNDYS_GAME.outcome(position)
    assert grundys_game_working(heaps).p_position == (outcome is P)
    assert grundys_game_winning_moves(heaps) == GRUNDYS_GAME.winning_moves(position)


def test_grundys_game_known_values() -> None:
    assert naive_grundys_game(10) == [0, 0, 0, 1, 0, 2, 1, 0, 2, 1]
    assert list(grundys_game_moves((7,))) == [(1, 6), (2, 5), (3, 4)]
    assert list(grundys_game_moves((1, 2))) == []
    w = grundys_game_working((5, 6, 8))
    assert (w.values, w.nim_sum) == ((2, 1, 2), 1)
    assert grundys_game_winning_moves((5, 6, 8)) == GRUNDYS_GAME.winning_moves((5, 6, 8))


def test_lasker_formula_is_the_mex() -> None:
    assert naive_grundy(LASKERS_NIM, 120) == [lasker_grundy(n) for n in range(120)]
    assert LASKERS_NIM.code == "4.333..."
    assert lasker_working((3, 4)).values == (4, 3)


LASKER_MISERE = ExactSolver(LASKERS_NIM, misere=True)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(0, 9), max_size=4))
def test_misere_laskers_nim_is_tame(heaps: list[int]) -> None:
    """The tame rule's outcome and its winning moves (the engine's misère-tame strategy) are
    the exact search's, heap sizes up to 9."""
    from nimlab.theory.budget import Budget
    from nimlab.theory.engine import TameMisere, apply_move, engine_for

    position = canonical(heaps)
    truth = LASKER_MISERE.value(position)
    assert lasker_misere_outcome(heaps) is truth.outcome
    engine = engine_for(LASKERS_NIM, misere=True)
    moves = TameMisere().winning_moves(engine, position, None, Budget())
    assert moves is not None
    wins = {apply_move(position, m) for m in moves}
    children = {
        apply_move(position, (h, t, p)) for h in set(position) for t, p in LASKERS_NIM.options(h)
    }
    assert wins == {c for c in children if LASKER_MISERE.value(c).outcome is Outcome.P}
    assert len(wins) == len(moves)  # each winning move once
    assert engine.evaluate(position, remoteness=False).method == (
        "misere-tame" if position else "terminal"
    )


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 200), st.integers(0, 260))
def test_lasker_options_of_a_value_are_the_options_with_that_value(heap: int, value: int) -> None:
    def value_of(parts: tuple[int, ...]) -> int:
        out = 0
        for p in parts:
            out ^= lasker_grundy(p)
        return out

    want = [(t, p) for t, p in LASKERS_NIM.options(heap) if value_of(p) == value]
    assert sorted(lasker_options_of_value(heap, value)) == sorted(want)


def test_misere_laskers_nim_answers_huge_heaps_by_the_theorem() -> None:
    """Heaps of 10^6 and 10^40: the outcome at once, and the winning moves of a heap of a
    million from the NumPy listing of its options of one value."""
    from nimlab.theory.engine import engine_for

    engine = engine_for(LASKERS_NIM, misere=True)
    big = 10**40
    assert engine.evaluate((big, big), remoteness=False).outcome is Outcome.P
    assert engine.evaluate((1, big, big), remoteness=False).outcome is Outcome.N
    moves = engine.winning_moves((3, 10**6))
    assert moves is not None and moves
    for heap, take, parts in moves:
        rest = [h for h in (3, 10**6) if h != heap]
        assert take + sum(parts) == heap
        assert lasker_misere_outcome([*rest, *parts]) is Outcome.P, (heap, take, parts)


def test_lasker_arithmetic_period_is_proven_by_the_theorem_and_matches_the_mex() -> None:
    """``grundy lasker`` reports period 4, saltus 4 from heap 1, proven by Lasker's theorem:
    the values it extends to (from 40 computed) are the mex computation's and the formula's."""
    from nimlab.theory.grundy import arithmetic_period

    mex = naive_grundy(LASKERS_NIM, 120)
    a = arithmetic_period(LASKERS_NIM, mex[:40])
    assert a is not None and (a.period, a.saltus, a.preperiod) == (4, 4, 1) and a.proven
    assert "Lasker's theorem" in (a.proof or "")
    assert [a.value(n, mex[:40]) for n in range(120)] == mex
    assert all(a.value(n, mex[:40]) == lasker_grundy(n) for n in range(0, 10**6, 997))


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 7), st.sampled_from([0, 4]), st.lists(st.integers(0, 7), max_size=2))
def test_arithmetic_periods_hold_on_the_values_and_are_proven_only_by_a_theorem(
    tail: int, d0: int, digits: list[int]
) -> None:
    from nimlab.theory.grundy import arithmetic_period
    from nimlab.theory.octal import OctalCodeError, TakeAndBreak

    try:
        rule = TakeAndBreak(tuple(digits), tail=tail, d0=d0)
    except OctalCodeError:
        return
    values = naive_grundy(rule, 48)
    a = arithmetic_period(rule, values)
    if a is None:
        return
    p, s = a.period, a.saltus
    assert s > 0 and all(values[n + p] == values[n] + s for n in range(a.preperiod, 48 - p))
    assert a.proven == (rule in (LASKERS_NIM, TakeAndBreak.nim()))


def test_finite_codes_are_not_looked_at_for_arithmetic_periods() -> None:
    from typer.testing import CliRunner

    from nimlab.cli.app import app
    from nimlab.theory.grundy import arithmetic_period
    from nimlab.theory.octal import TakeAndBreak

    assert arithmetic_period(TakeAndBreak.octal("0.6"), list(range(50))) is None
    seen = arithmetic_period(
        TakeAndBreak((), tail=2, d0=4), naive_grundy(TakeAndBreak((), tail=2, d0=4), 60)
    )
    assert seen is not None and (seen.period, seen.saltus) == (1, 1) and not seen.proven
    runner = CliRunner()
    r = runner.invoke(app, ["grundy", "lasker", "--max", "30", "--json"])
    assert (
        r.exit_code == 0 and '"arithmetic": {"period": 4, "saltus": 4, "preperiod": 1' in r.output
    )
    r = runner.invoke(app, ["grundy", "lasker", "--max", "30"])
    assert "Arithmetic period 4  saltus 4" in r.output and "Proven for every heap" in r.output
    r = runner.invoke(app, ["grundy", "kayles", "--max", "30", "--json"])
    assert r.exit_code == 0 and "arithmetic" not in r.output


@given(st.lists(st.integers(0, 6), max_size=3))
def test_lasker_outcome_matches_the_search(heaps: list[int]) -> None:
    assert lasker_outcome(heaps) == LASKER.outcome(canonical(heaps))


# -- Northcott's game (loopy: checkers may move back) --------------------------------------------


def test_loopy_outcomes_win_loss_and_draw() -> None:
    # 0 -> 1 -> 2 (no move); 3 <-> 4, 4 -> 1: from 4, moving to 1 loses (1 wins for the mover)
    graph = {0: [1], 1: [2], 2: [], 3: [4], 4: [3, 1], 5: [6], 6: [5]}
    result = loopy_outcomes(0, graph.__getitem__)
    assert result == {0: P, 1: N, 2: P}
    assert loopy_outcomes(3, graph.__getitem__) == {3: None, 4: None, 1: N, 2: P}
    assert loopy_outcomes(5, graph.__getitem__) == {5: None, 6: None}
    assert loopy_outcomes(0, graph.__getitem__, misere=True) == {0: N, 1: P, 2: N}
    with pytest.raises(BudgetExceeded):
        loopy_outcomes(0, lambda n: [n + 1], budget=Budget(positions=100))


@pytest.mark.parametrize(
    ("width", "start"),
    [(5, ((0, 4), (3, 1))), (4, ((0, 3), (3, 0), (1, 2)))],
)
def test_northcott_is_nim_on_the_gaps_by_retrograde_analysis(
    width: int, start: tuple[tuple[int, int], ...]
) -> None:
    results = loopy_outcomes((start, 0), lambda state: northcott_state_moves(state, width))
    assert len(results) > 100
    for (rows, side), outcome in results.items():
        assert outcome == northcott_outcome(rows), rows  # never a draw
        won = [
            (i, column)
            for i, column, after in northcott_moves(rows, width, side)
            if results[after, 1 - side] is P
        ]
        assert northcott_winning_moves(rows, width, side) == won


def test_northcott_known_values() -> None:
    rows = ((0, 6), (5, 1), (2, 3))
    assert northcott_gaps(rows) == (5, 3, 0)
    w = northcott_working(rows)
    assert (w.gaps, w.nim_sum, w.p_position) == ((5, 3, 0), 6, False)
    # White: row 0's gap 5 -> 5 ^ 6 = 3 by moving from 0 to 2; row 1's gap 3 -> 5 by retreating
    assert northcott_winning_moves(rows, 8, 0) == [(0, 2), (1, 7)]
    assert northcott_winning_moves(rows, 7, 0) == [(0, 2)]  # no room to retreat to column 7
    assert list(northcott_moves(((0, 1),), 3, 1)) == [(0, 2, ((0, 2),))]
    with pytest.raises(ValueError, match="different squares"):
        northcott_outcome(((2, 2),))
    with pytest.raises(ValueError, match="columns are 0 to 2"):
        list(northcott_moves(((0, 3),), 3, 0))
