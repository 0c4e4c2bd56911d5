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


# -- input outside the contracts: refused with a message, never a loop or a memory hog ----------

_BIG = "10**100"  # a legitimate huge number
_TOO_MANY_BITS = "1 << MAX_BITS"  # one binary digit more than the lab works with
_BAD_BOARDS = ["[-1]", "[1.5]", "[True, 2]", "'3 4'", "3", "10**5000", "None"]

CASES: list[tuple[str, str]] = [
    ("numeral_binary(-3)", "ValueError"),
    ("numeral_binary(2.0)", "TypeError"),
    ("numeral_binary(True)", "TypeError"),
    ("numeral_binary('3')", "TypeError"),
    (f"numeral_binary({_TOO_MANY_BITS})", "ValueError"),
    (f"numeral_binary({_BIG}) == [int(c) for c in bin({_BIG})[2:]]", "True"),
    ("binary_numeral([1, 2, 1])", "ValueError"),
    ("binary_numeral([-1])", "ValueError"),
    ("binary_numeral([1.0])", "TypeError"),
    ("binary_numeral([True])", "TypeError"),
    ("binary_numeral('101')", "TypeError"),
    ("binary_numeral(5)", "TypeError"),
    ("binary_numeral([1] * (MAX_BITS + 1))", "ValueError"),
    ("binary_numeral([1] * 400) == 2**400 - 1", "True"),
    ("exclusive_or(2, 1)", "ValueError"),
    ("exclusive_or(-1, 0)", "ValueError"),
    (f"exclusive_or({_BIG}, 1)", "ValueError"),
    ("exclusive_or(1.0, 0)", "TypeError"),
    ("exclusive_or(True, 0)", "TypeError"),
    ("exclusive_or(1, '0')", "TypeError"),
    ("bitwise_exclusive_or(-3, 1)", "ValueError"),
    (f"bitwise_exclusive_or({_TOO_MANY_BITS}, 1)", "ValueError"),
    ("bitwise_exclusive_or(2.5, 1)", "TypeError"),
    ("bitwise_exclusive_or(True, 1)", "TypeError"),
    ("bitwise_exclusive_or('3', 1)", "TypeError"),
    (f"bitwise_exclusive_or({_BIG}, 1) == {_BIG} ^ 1", "True"),
    ("present_board([-2])", "ValueError"),
    ("present_board([10**12])", "ValueError"),
    ("make_move([3, 4], True, 1)", "TypeError"),
    ("make_move([3, 4], 1, True)", "TypeError"),
    ("make_move([3, 4], 1.0, 1)", "TypeError"),
    ("make_move([3, 4], '1', 1)", "TypeError"),
    ("make_move([3, 4], 1, 1.0)", "TypeError"),
    ("make_move([3, -4], 1, 1)", "ValueError"),
    ("make_move([3, 4], -1, 1) == ([3, 4], False)", "True"),
    (f"make_move([3, 4], {_BIG}, 1) == ([3, 4], False)", "True"),
    (f"make_move([3, 4], 1, {_BIG}) == ([3, 4], False)", "True"),
    (f"make_move([3, 4], 1, -{_BIG}) == ([3, 4], False)", "True"),
    (f"make_move([{_BIG}], 1, 1) == ([{_BIG} - 1], True)", "True"),
    ("optimal_move([0, 0])", "ValueError"),
    (f"optimal_move([{_BIG}, 1])[0] == 1", "True"),
    *[(f"is_human({value})", "TypeError") for value in ("-1", _BIG, "1.5", "True", "None")],
    ("is_human('A computer') is False and is_human('Ann') is True", "True"),
    ("play_nim('A', 'B', [-1])", "ValueError"),
    ("play_nim(3, 'B', [1])", "TypeError"),
    ("play_nim('A', True, [1])", "TypeError"),
    ("play_nim('A', 'B', [1.5])", "TypeError"),
    ("play_nim('A', 'B', '3')", "TypeError"),
    ("play_nim('A', 'B', [10**12])", "ValueError"),
    (f"nim_sum([{_BIG}, 1]) == {_BIG} ^ 1", "True"),
    *[
        (f"{function}({board})", "ValueError" if board == "[-1]" else "TypeError")
        for function in (
            "present_board",
            "nim_sum",
            "is_n_position",
            "is_p_position",
            "standard_outcome",
            "is_board_empty",
            "optimal_move",
        )
        for board in _BAD_BOARDS
    ],
]

_CHILD = """
import json, resource, sys

def memory() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[0]) * resource.getpagesize()

from nimlab.lab import *
from nimlab.lab import MAX_BITS, play_nim
# Each call may use at most 512 MiB more than the interpreter holds now, and the whole run at
# most 30 s of CPU: a function that loops or eats memory ends in MemoryError or is killed.
cap = memory() + (512 << 20)
resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
resource.setrlimit(resource.RLIMIT_CPU, (30, 30))
out = []
for expression in json.load(sys.stdin):
    try:
        result = eval(expression)
    except (TypeError, ValueError) as e:
        kind = "TypeError" if isinstance(e, TypeError) else "ValueError"
        out.append([kind, str(e)])
    except BaseException as e:
        out.append([type(e).__name__, str(e)[:200]])
    else:
        out.append([str(result)[:200], ""])
print(json.dumps(out))
"""


def test_every_lab_function_refuses_input_outside_its_contract_under_a_memory_cap() -> None:
    """Negative, huge, float, bool and text arguments for every lab function, in a child process
    whose memory and CPU time are capped, so a regression that loops or allocates without bound
    fails this test instead of taking the machine."""
    import json
    import subprocess
    import sys

    expressions = [expression for expression, _ in CASES]
    child = subprocess.run(
        [sys.executable, "-c", _CHILD],
        input=json.dumps(expressions),
        capture_output=True,
        text=True,
        check=False,
    )
    assert child.returncode == 0, child.stderr[-2000:]
    results = json.loads(child.stdout)
    wrong = [
        f"{expression}: {got} ({message}), expected {expected}"
        for (expression, expected), (got, message) in zip(CASES, results, strict=True)
        if got != expected
    ]
    assert not wrong, "\n".join(wrong)
    for (expression, expected), (_, message) in zip(CASES, results, strict=True):
        if expected in ("TypeError", "ValueError"):  # says what is allowed, briefly
            assert 20 < len(message) < 200, (expression, message)
            assert any(w in message for w in ("must", "are", "is", "at most")), message
