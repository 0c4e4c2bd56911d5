"""Every assert of seed 002's notebook, unchanged, after ``from nimlab.lab import *``."""

from __future__ import annotations

from nimlab.lab import *  # noqa: F403
from nimlab.lab import play_nim


def test_present_board() -> None:
    board = [4, 3, 1, 2]
    assert present_board(board) == "Nim:\n1: X X X X\n2: X X X\n3: X\n4: X X"  # noqa: F405
    assert present_board([0, 2]) == "Nim:\n1:\n2: X X"  # noqa: F405


def test_make_move() -> None:
    board = [1, 2, 3]
    assert make_move(board, 1, 1) == ([0, 2, 3], True)  # noqa: F405
    assert board == [1, 2, 3]
    assert make_move(board, 4, 1) == ([1, 2, 3], False)  # noqa: F405
    assert make_move(board, -1, 1) == ([1, 2, 3], False)  # noqa: F405
    assert make_move(board, 0, 1) == ([1, 2, 3], False)  # noqa: F405
    assert make_move(board, 2, 3) == ([1, 2, 3], False)  # noqa: F405
    assert make_move(board, 2, 1) == ([1, 1, 3], True)  # noqa: F405
    assert board == [1, 2, 3]


def test_exclusive_or() -> None:
    assert exclusive_or(0, 0) == 0 and exclusive_or(0, 0) is exclusive_or(1, 1)  # noqa: F405
    assert exclusive_or(0, 1) == 1 and type(exclusive_or(0, 1)) is int  # noqa: F405
    assert exclusive_or(1, 0) == 1  # noqa: F405
    assert exclusive_or(1, 1) == 0  # noqa: F405


def test_binary_conversions() -> None:
    assert numeral_binary(6) == [1, 1, 0]  # noqa: F405
    assert numeral_binary(1) == [1]  # noqa: F405
    assert numeral_binary(0) == []  # noqa: F405
    assert binary_numeral([1, 1, 0]) == 6  # noqa: F405
    assert binary_numeral([1]) == 1  # noqa: F405
    assert binary_numeral([]) == 0  # noqa: F405
    assert numeral_binary(1789) == [1, 1, 0, 1, 1, 1, 1, 1, 1, 0, 1]  # noqa: F405
    assert binary_numeral([1, 1, 0, 1, 0, 1, 1, 1, 1]) == 431  # noqa: F405
    assert binary_numeral(numeral_binary(9183742)) == 9183742  # noqa: F405


def test_bitwise_exclusive_or() -> None:
    assert bitwise_exclusive_or(3, 5) == 3 ^ 5  # noqa: F405
    assert bitwise_exclusive_or(0, 4) == 4  # noqa: F405
    assert bitwise_exclusive_or(5, 5) == 0  # noqa: F405
    assert bitwise_exclusive_or(17, 18) == 17 ^ 18  # noqa: F405
    assert bitwise_exclusive_or(1234567890, 121212121212) == 1234567890 ^ 121212121212  # noqa: F405


def test_nim_sum_and_the_notebooks_swapped_names() -> None:
    assert nim_sum([5, 4, 3, 2]) == 0  # noqa: F405
    assert nim_sum([]) == 0  # noqa: F405
    assert nim_sum([1, 1, 1, 1, 1, 1, 1]) == 1  # noqa: F405
    assert nim_sum([4, 4, 4, 4, 2, 2, 1, 1, 7]) == 7  # noqa: F405
    assert (
        nim_sum([1, 2, 5, 8, 11, 3, 2, 1, 4, 32, 7, 9])  # noqa: F405
        == 1 ^ 2 ^ 5 ^ 8 ^ 11 ^ 3 ^ 2 ^ 1 ^ 4 ^ 32 ^ 7 ^ 9
    )
    assert is_n_position([5, 4, 3, 2])  # noqa: F405
    assert not is_n_position([1, 2, 5, 8, 11, 3, 2, 1, 4, 32, 7, 9])  # noqa: F405
    assert is_p_position([5, 4, 3, 1])  # noqa: F405
    assert not is_p_position([5, 5])  # noqa: F405
    assert standard_outcome([5, 4, 3, 2]) == "P"  # noqa: F405


def test_optimal_move() -> None:
    for _ in range(50):
        row, elements = optimal_move([5, 4, 3, 2, 1])  # noqa: F405
        assert (row, elements) in {(1, 1), (3, 1), (5, 1)}
        row, elements = optimal_move([5, 4, 3, 2])  # noqa: F405  (nim-sum 0: any legal move)
        assert make_move([5, 4, 3, 2], row, elements)[1]  # noqa: F405


def test_is_human_and_empty_board() -> None:
    assert not is_human("Computer 1")  # noqa: F405
    assert not is_human("Human is not a ComPuTer")  # noqa: F405
    assert is_human("I think therefore I am")  # noqa: F405
    assert not is_board_empty([3, 0, 0])  # noqa: F405
    assert is_board_empty([0, 0, 0])  # noqa: F405
    assert is_board_empty([0, 0, 0, 0])  # noqa: F405
    assert is_board_empty([])  # noqa: F405
    assert not is_board_empty([3, 3, 1])  # noqa: F405


def test_play_nim_survives_bad_input_and_announces_the_winner() -> None:
    typed = iter(["no comma", "1", "x, y", "9, 1", "1, 0", "1, 2", "1,1"])
    out: list[str] = []
    winner = play_nim("Ann", "Bob", [3], read=lambda _: next(typed), write=out.append)
    assert winner == "Bob"  # Ann takes 2, Bob takes the last one
    text = "\n".join(out)
    assert text.count("Please type the row") == 3 and text.count("Illegal move") == 2
    assert out[-1] == "Bob wins"


def test_play_nim_end_of_input_and_computers() -> None:
    def eof(_: str) -> str:
        raise EOFError

    out: list[str] = []
    assert play_nim("Ann", "Computer", [2, 2], read=eof, write=out.append) is None
    assert "abandoned" in out[-1]
    assert (
        play_nim("Computer 1", "Computer 2", [5, 4, 3, 2, 1], write=lambda _: None) == "Computer 1"
    )
