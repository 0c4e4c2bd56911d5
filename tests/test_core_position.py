from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nimlab import IllegalMoveError, InvalidMoveError, Move, Position, PositionError, Rows
from nimlab.theory.octal import TakeAndBreak
from nimlab.theory.positions import canonical, children

NIM = TakeAndBreak.nim()
KAYLES = TakeAndBreak.octal("0.77")


@pytest.mark.parametrize(
    ("text", "move"),
    [
        ("2 3", Move(2, 3)),
        ("2,3", Move(2, 3)),
        ("2:3", Move(2, 3)),
        (" b3 ", Move(2, 3)),
        ("B 3", Move(2, 3)),
        ("a,1", Move(1, 1)),
    ],
)
def test_move_text(text: str, move: Move) -> None:
    assert Move.from_text(text) == move
    assert Move.from_text(str(move)) == move


def test_row_move_text() -> None:
    assert Move.from_text("1 4 2", rows=True) == Move(1, 2, at=4)
    assert Move.from_text("4 2", rows=True, single_row=True) == Move(1, 2, at=4)
    assert Move.from_text(str(Move(3, 1, at=7)), rows=True) == Move(3, 1, at=7)


@pytest.mark.parametrize("text", ["", "x", "2", "2 3 4", "two three", "2.5 1", "?"])
def test_unreadable_moves(text: str) -> None:
    with pytest.raises(InvalidMoveError, match="is not a move"):
        Move.from_text(text)


@pytest.mark.parametrize(
    ("move", "message"),
    [
        (Move(4, 1), "pile 4 does not exist: piles are 1-3"),
        (Move(0, 1), "pile 0 does not exist: piles are 1-3"),
        (Move(2, 0), "take 1 to 4 from pile 2"),
        (Move(2, -1), "take 1 to 4 from pile 2"),
        (Move(2, 5), "take 1 to 4 from pile 2"),
    ],
)
def test_illegal_moves_say_what_is_allowed(move: Move, message: str) -> None:
    p = Position.of([3, 4, 5])
    with pytest.raises(IllegalMoveError, match=message):
        p.play(NIM, move)
    assert p.heaps == (3, 4, 5)


def test_subtraction_message_and_empty_pile() -> None:
    s = TakeAndBreak.parse_subtraction_set("1,3,4")
    with pytest.raises(IllegalMoveError, match="take 1, 3 or 4 from pile 1"):
        Position.of([5]).play(s, Move(1, 2))
    with pytest.raises(IllegalMoveError, match="pile 1 is empty"):
        Position.of([0, 3]).play(NIM, Move(1, 1))


@pytest.mark.parametrize("bad", [[-1], ["x"], [1.5], [True], ["3a"], [None]])
def test_bad_heaps(bad: list[object]) -> None:
    with pytest.raises(PositionError):
        Position.of(bad)


def test_huge_heaps_are_fine() -> None:
    p = Position.of(["1" + "0" * 100])
    assert p.play(NIM, Move(1, 10**100)).heaps == (0,)
    assert p.count_moves(NIM) == 10**100


def test_rows_of_stones() -> None:
    r = Rows.full([5])
    r = r.play(KAYLES, Move(1, 1, at=3))
    assert r.to_strings() == ["**x**"] and r.heaps == (2, 2)
    r = r.play(KAYLES, Move(1, 2, at=4))
    assert r.to_strings() == ["**xxx"] and r.heaps == (2,)
    with pytest.raises(IllegalMoveError, match="not all present"):
        r.play(KAYLES, Move(1, 2, at=2))
    with pytest.raises(IllegalMoveError, match="already gone"):
        r.play(KAYLES, Move(1, 1, at=4))
    with pytest.raises(IllegalMoveError, match="row 2 does not exist"):
        r.play(KAYLES, Move(2, 1, at=1))
    with pytest.raises(IllegalMoveError, match="stones 1-5"):
        r.play(KAYLES, Move(1, 1, at=6))
    assert Rows.from_strings(r.to_strings()) == r


def test_dawson_cannot_take_one() -> None:
    dawson = TakeAndBreak.octal("0.07")
    with pytest.raises(IllegalMoveError, match="cannot take 1"):
        Rows.full([4]).play(dawson, Move(1, 1, at=1))


@given(
    st.sampled_from(["0.77", "0.07", "0.137", "0.4", "0.6", "0.53"]),
    st.lists(st.integers(0, 7), min_size=1, max_size=3),
)
def test_row_moves_give_exactly_the_theory_children(code: str, heaps: list[int]) -> None:
    """The board's legal moves and the theory's canonical children are the same set."""
    rule = TakeAndBreak.octal(code)
    board = Rows.full(heaps)
    from_board = {board.play(rule, m).canonical for m in board.legal_moves(rule)}
    assert from_board == set(children(rule, canonical(heaps)))
    moves = list(board.legal_moves(rule))
    assert len(set(moves)) == len(moves) == board.count_moves(rule)
    assert board.count_moves(rule) == sum(_row_move_count(rule, n) for n in heaps)


def _row_move_count(rule: TakeAndBreak, n: int) -> int:
    """Moves on a full row of ``n`` stones by the octal code's digits: taking the whole row
    (bit 1), from either end (bit 2: two places), or from the middle leaving stones on both
    sides (bit 4: ``n - k - 1`` places)."""
    count = 0
    for k in range(1, n + 1):
        d = rule.digit(k)
        count += (k == n and d & 1 > 0) + 2 * (k < n and d & 2 > 0)
        count += (n - k - 1) if k + 2 <= n and d & 4 else 0
    return count


@given(st.lists(st.integers(0, 6), min_size=1, max_size=4), st.sets(st.integers(1, 4), min_size=1))
def test_pile_moves_give_exactly_the_theory_children(heaps: list[int], takes: set[int]) -> None:
    for rule in (NIM, TakeAndBreak.subtraction(takes), TakeAndBreak.octal("0.12")):
        board = Position.of(heaps)
        from_board = {board.play(rule, m).canonical for m in board.legal_moves(rule)}
        assert from_board == set(children(rule, canonical(heaps)))
        assert board.count_moves(rule) == sum(1 for _ in board.legal_moves(rule))


@given(
    st.sampled_from(["nim", "0.77", "0.137", "0.6", "0.12", "0.3033"]),
    st.lists(st.integers(0, 7), min_size=1, max_size=3),
)
def test_successors_are_legal_moves_played(code: str, heaps: list[int]) -> None:
    rule = NIM if code == "nim" else TakeAndBreak.octal(code)
    board = Rows.full(heaps) if rule.splits else Position.of(heaps)
    expected = [(m, board.play(rule, m)) for m in board.legal_moves(rule)]
    assert list(board.successors(rule)) == expected


_ROW_RULES = st.builds(
    TakeAndBreak,
    st.lists(st.integers(0, 7), max_size=4).map(tuple),
    tail=st.integers(0, 7),
    d0=st.sampled_from([0, 4]),
    unequal=st.booleans(),
)


@given(_ROW_RULES, st.lists(st.lists(st.integers(0, 9), min_size=1, max_size=5), max_size=3))
def test_a_random_row_move_is_the_listed_move_of_the_same_draw(
    rule: TakeAndBreak, rows: list[list[int]]
) -> None:
    """Counted and drawn without listing, on any rule (explicit digits, a tail, splits that take
    nothing, unequal parts) and rows with gaps: the count is the list's length, and each draw
    gives the move ``rng.choice`` gives from the list with the same generator state, so every
    legal move is equally likely."""
    import random

    board = Rows(tuple(tuple(r) for r in rows)) if rows else Rows.full([])
    moves = list(board.legal_moves(rule))
    assert board.count_moves(rule) == len(moves)
    for seed in range(len(moves) + 3 if moves else 1):
        if not moves:
            with pytest.raises(IllegalMoveError):
                board.random_move(rule, random.Random(seed))
            break
        assert board.random_move(rule, random.Random(seed)) == random.Random(seed).choice(moves)


def test_a_random_move_on_a_huge_row_is_drawn_without_listing() -> None:
    import random

    for rule in (TakeAndBreak.octal("0.77"), TakeAndBreak((), tail=7), TakeAndBreak.nim()):
        board = Rows.full([10**100, 3])
        move = board.random_move(rule, random.Random(1))
        board.play(rule, move)  # legal
    # Kayles: one stone from any of n places, two from any of n - 1
    assert Rows.full([10**12]).count_moves(TakeAndBreak.octal("0.77")) == 2 * 10**12 - 1
