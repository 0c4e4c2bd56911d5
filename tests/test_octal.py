"""Octal codes in full: the digit bits (4 = two non-empty heaps left), the digit before the point
(4.07: splits that take nothing), moves on rows of stones, exact play, Grundy values and the
periodicity proofs for such games, and ``nimlab grundy`` in-process."""

from __future__ import annotations

import json
from functools import cache, reduce
from itertools import combinations_with_replacement
from operator import xor

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import nimlab.cli  # noqa: F401  (registers the commands)
import nimlab.cli.grundy as grundy_cli
import nimlab.theory.grundy as grundy_module
from nimlab.cli.app import app
from nimlab.core.errors import IllegalMoveError
from nimlab.core.position import Move, Rows
from nimlab.core.ruleset import parse_game
from nimlab.theory.grundy import grundy_sequence, grundy_value, naive_grundy
from nimlab.theory.octal import OctalCodeError, TakeAndBreak
from nimlab.theory.outcome import Outcome
from nimlab.theory.positions import Canon, canonical, children, is_terminal
from nimlab.theory.solver import ExactSolver

runner = CliRunner()

# -- strategies: every digit 0-7, with or without 4 before the point -------------------------------

digits_0_7 = st.lists(st.integers(0, 7), min_size=0, max_size=5)
full_rules = st.builds(
    lambda digits, d0: TakeAndBreak(tuple(digits), d0=d0),
    digits_0_7,
    st.sampled_from([0, 4]),
).filter(lambda r: r.digits or r.d0)
tail_rules = st.builds(
    lambda digits, tail, d0: TakeAndBreak(tuple(digits), tail, d0=d0),
    st.lists(st.integers(0, 7), max_size=3),
    st.integers(1, 7),
    st.sampled_from([0, 4]),
)
CODES_WITH_4_AND_5 = ["0.4", "0.15", "0.056", "0.45", "0.54", "4.07", "4.0", "4.4", "4.1"]


def brute_options(rule: TakeAndBreak, n: int) -> set[tuple[int, tuple[int, ...]]]:
    """The options of a heap of ``n`` straight from the definition of the digit bits."""
    out: set[tuple[int, tuple[int, ...]]] = set()
    for k in range(n + 1):
        d = rule.d0 if k == 0 else (rule.digits[k - 1] if k <= len(rule.digits) else rule.tail)
        rest = n - k
        if rest == 0 and d & 1 and k >= 1:
            out.add((k, ()))
        if rest >= 1 and d & 2 and k >= 1:
            out.add((k, (rest,)))
        if rest >= 2 and d & 4:
            for a in range(1, rest // 2 + 1):
                out.add((k, (a, rest - a)))
    return out


# -- the move rule -------------------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(rule=st.one_of(full_rules, tail_rules, st.just(TakeAndBreak((), 3))), n=st.integers(0, 14))
def test_takes_and_options_follow_the_digit_bits(rule: TakeAndBreak, n: int) -> None:
    options = list(rule.options(n))
    assert len(options) == len(set(options))  # each distinct move once
    expected = brute_options(rule, n)
    assert set(options) == expected
    assert list(rule.takes(n)) == sorted({k for k, _ in expected})
    terminal = not expected
    assert is_terminal(rule, (n,) if n else ()) == (terminal or n == 0)
    # on a row of stones: the same results, and no legal move exactly when the heap has none
    board = Rows.full([n])
    results = {m_board.canonical for _m, m_board in board.successors(rule)}
    assert results == {parts for _k, parts in expected}
    assert board.count_moves(rule) == sum(1 for _ in board.legal_moves(rule))
    assert (board.count_moves(rule) == 0) == terminal


@pytest.mark.parametrize("code", CODES_WITH_4_AND_5)
def test_a_heap_without_moves_is_terminal_everywhere(code: str) -> None:
    """Bit 4 needs two non-empty heaps: with 0.4 a heap of 2 has no move (taking 1 leaves 1)."""
    rule = TakeAndBreak.octal(code)
    for n in range(12):
        has_move = bool(brute_options(rule, n))
        assert (next(rule.takes(n), None) is not None) == has_move
        assert is_terminal(rule, canonical([n])) == (not has_move)
        assert (Rows.full([n]).count_moves(rule) > 0) == has_move
    assert list(TakeAndBreak.octal("0.4").takes(2)) == []
    assert list(TakeAndBreak.octal("0.4").takes(3)) == [1]
    assert ExactSolver(TakeAndBreak.octal("0.4")).value((2,)).remoteness == 0


def test_can_leave_needs_non_empty_sides() -> None:
    rule = TakeAndBreak.octal("4.45")
    assert rule.can_leave(0, 1, 1) and not rule.can_leave(0, 0, 2) and not rule.can_leave(0, 0, 0)
    assert rule.can_leave(1, 1, 1) and not rule.can_leave(1, 0, 1)
    assert rule.can_leave(2, 0, 0) and rule.can_leave(2, 1, 1) and not rule.can_leave(2, 0, 3)
    assert not TakeAndBreak.octal("0.45").can_leave(0, 1, 1)
    assert not rule.can_leave(-1, 1, 1)


# -- the digit before the point ------------------------------------------------------------------


def test_full_notation() -> None:
    rule = TakeAndBreak.octal("4.07")
    assert (rule.d0, rule.digits, rule.tail) == (4, (0, 7), 0)
    assert rule.code == "4.07" and str(rule) == "4.07"
    assert TakeAndBreak.octal("0.07").code == "0.07" == TakeAndBreak.octal(".07").code
    assert rule == TakeAndBreak((0, 7), d0=4) and hash(rule) == hash(TakeAndBreak((0, 7), d0=4))
    assert rule != TakeAndBreak.octal("0.07")
    assert rule.splits and TakeAndBreak.octal("4.3").splits and not TakeAndBreak.octal("0.3").splits
    assert rule.max_take == 2 and rule.digit(0) == 4 and rule.digit(-1) == 0
    assert list(rule.options(4)) == [(0, (1, 3)), (0, (2, 2)), (2, (2,)), (2, (1, 1))]
    assert list(rule.takes(1)) == [] and list(rule.takes(2)) == [0, 2]
    assert not TakeAndBreak((), tail=3, d0=4).is_nim
    only_splits = TakeAndBreak.octal("4.0")
    assert only_splits.code == "4.0" and TakeAndBreak.octal(only_splits.code) == only_splits
    assert TakeAndBreak(()).code == "0.0"


@settings(max_examples=200, deadline=None)
@given(rule=full_rules)
def test_codes_round_trip(rule: TakeAndBreak) -> None:
    assert TakeAndBreak.octal(rule.code) == rule
    assert parse_game(f"octal:{rule.code}").rule == rule


@pytest.mark.parametrize("code", ["1.07", "2.07", "3.7", "5.1", "7.0", "8.07"])
def test_meaningless_digits_before_the_point_are_rejected(code: str) -> None:
    with pytest.raises(OctalCodeError, match="before the point must be 0 or 4"):
        TakeAndBreak.octal(code)


def test_bad_codes() -> None:
    with pytest.raises(OctalCodeError, match="no move at all"):
        TakeAndBreak.octal("0.00")
    with pytest.raises(OctalCodeError, match="not an octal code"):
        TakeAndBreak.octal("44.07")
    with pytest.raises(OctalCodeError, match="must be 0 or 4"):
        TakeAndBreak((7,), d0=2)


def test_parse_game_reads_the_full_notation() -> None:
    kind = parse_game("octal:4.07")
    assert kind.rule == TakeAndBreak.octal("4.07") and kind.name == "octal:4.07"
    assert parse_game("4.07").rule == kind.rule
    assert parse_game("octal:0.07").name == "dawson"


# -- take-0 cuts on rows of stones ---------------------------------------------------------------


def test_cuts_on_rows() -> None:
    rule = TakeAndBreak.octal("4.07")
    board = Rows.full([5])
    cut = board.play(rule, Move(1, 0, at=3))
    assert cut.rows == ((2, 0, 3),) and cut.heaps == (2, 3) and cut.to_strings() == ["**|***"]
    assert Rows.from_strings(cut.to_strings()) == cut
    assert str(Move(1, 0, at=3)) == "1 3 0"
    assert Move.from_text("1 3 0", rows=True) == Move(1, 0, at=3)
    assert Move.from_text("3 0", rows=True, single_row=True) == Move(1, 0, at=3)
    # the cut stays between two stones; taking a stone beside it turns it into a real gap
    assert cut.play(rule, Move(1, 0, at=5)).to_strings() == ["**|**|*"]
    assert cut.play(rule, Move(1, 2, at=3)).to_strings() == ["**xx*"]
    assert cut.play(rule, Move(1, 2, at=4)).to_strings() == ["**|*xx"]
    # a cut needs two stones of one run on both sides
    for at in (1, 3):
        with pytest.raises(IllegalMoveError, match="cannot cut"):
            cut.play(rule, Move(1, 0, at=at))
    with pytest.raises(IllegalMoveError, match="does not exist"):
        cut.play(rule, Move(1, 0, at=6))
    # without 4 before the point nothing may be taken
    with pytest.raises(IllegalMoveError, match="at least 1"):
        board.play(TakeAndBreak.octal("0.07"), Move(1, 0, at=3))
    assert [str(m) for m in board.legal_moves(rule) if m.take == 0] == [
        "1 2 0",
        "1 3 0",
        "1 4 0",
        "1 5 0",
    ]


@pytest.mark.parametrize(
    ("text", "rows"),
    [("|**|", (2,)), ("*|x*", (1, 1, 1)), ("x|*", (0, 1, 1)), ("||", (0,)), ("*||*", (1, 0, 1))],
)
def test_cuts_beside_gaps_or_ends_mean_nothing(text: str, rows: tuple[int, ...]) -> None:
    assert Rows.from_strings([text]).rows == (rows,)


@settings(max_examples=120, deadline=None)
@given(
    code=st.sampled_from(["4.07", "4.7", "4.0", "4.137", "4.4", "4.15"]),
    heaps=st.lists(st.integers(0, 7), min_size=1, max_size=3),
    walk=st.lists(st.integers(0, 10**6), max_size=6),
)
def test_row_moves_with_cuts_are_the_theory_children(
    code: str, heaps: list[int], walk: list[int]
) -> None:
    """After random moves (cuts included), the board's moves are exactly the canonical
    children, successors equal play, and every layout survives its text form."""
    rule = TakeAndBreak.octal(code)
    board = Rows.full(heaps)
    for step in [*walk, None]:
        moves = list(board.legal_moves(rule))
        assert {board.play(rule, m).canonical for m in moves} == set(
            children(rule, board.canonical)
        )
        assert list(board.successors(rule)) == [(m, board.play(rule, m)) for m in moves]
        assert board.count_moves(rule) == len(moves)
        assert Rows.from_strings(board.to_strings()) == board
        for m in moves:
            board.check(rule, Move.from_text(str(m), rows=True))
        if step is None or not moves:
            break
        board = board.play(rule, moves[step % len(moves)])


# -- exact play and Grundy values ----------------------------------------------------------------


def brute_value(rule: TakeAndBreak, position: Canon) -> tuple[Outcome, int]:
    """Normal-play outcome and remoteness by plain recursion over the brute-force options."""

    @cache
    def solve(pos: Canon) -> tuple[bool, int]:
        kids = set()
        for i, heap in enumerate(pos):
            rest = pos[:i] + pos[i + 1 :]
            for _k, parts in brute_options(rule, heap):
                kids.add(canonical(rest + parts))
        if not kids:
            return False, 0
        results = [solve(kid) for kid in kids]
        losing = [r for wins, r in results if not wins]
        if losing:
            return True, 1 + min(losing)
        return False, 1 + max(r for _w, r in results)

    wins, remoteness = solve(position)
    return (Outcome.N if wins else Outcome.P), remoteness


@pytest.mark.parametrize("code", ["4.07", "4.0", "4.4", "4.137", "0.4", "0.54"])
def test_exact_solver_against_brute_force(code: str) -> None:
    rule = TakeAndBreak.octal(code)
    solver = ExactSolver(rule)
    for size in range(1, 4):
        for heaps in combinations_with_replacement(range(1, 9 - 2 * size), size):
            value = solver.value(canonical(heaps))
            assert (value.outcome, value.remoteness) == brute_value(rule, canonical(heaps))
            g = reduce(xor, (grundy_value(rule, h) for h in heaps), 0)
            assert (g == 0) == (value.outcome is Outcome.P)


@settings(max_examples=150, deadline=None)
@given(rule=full_rules, n=st.integers(0, 70))
def test_every_method_equals_naive_with_every_digit(rule: TakeAndBreak, n: int) -> None:
    expected = naive_grundy(rule, n)
    for method in ("auto", "sparse", "quadratic"):
        assert [int(v) for v in grundy_sequence(rule, n, method=method).values] == expected


@settings(max_examples=40, deadline=None)
@given(rule=tail_rules, n=st.integers(0, 40))
def test_infinite_tails_with_every_digit_equal_naive(rule: TakeAndBreak, n: int) -> None:
    assert [int(v) for v in grundy_sequence(rule, n).values] == naive_grundy(rule, n)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rule=full_rules, n=st.integers(1, 90))
def test_a_proven_period_predicts_values_never_computed(rule: TakeAndBreak, n: int) -> None:
    """Soundness of both proofs: whatever a short sequence proves holds further out."""
    seq = grundy_sequence(rule, n)
    if not seq.proven:
        return
    assert seq.proof == ("guy-smith" if rule.splits else "window")
    further = naive_grundy(rule, n + 120)
    assert [seq.value(m) for m in range(n + 120)] == further


def test_guy_smith_needs_n0_at_least_1() -> None:
    """0.4: G = 0, 0, 0, 1, ... -- the first three values repeat with period 1 from n0 = 0, but
    the theorem only applies from n0 >= 1, which needs 2 + 2 + 1 = 5 values."""
    rule = TakeAndBreak.octal("0.4")
    assert naive_grundy(rule, 4) == [0, 0, 0, 1]
    for n in range(1, 12):
        assert not grundy_sequence(rule, n, prove=True).proven or n > 4
    short = grundy_sequence(rule, 3)
    assert short.period == 1 and not short.proven


def test_4_07_period() -> None:
    seq = grundy_sequence(TakeAndBreak.octal("4.07"), 10_000, prove=True)
    assert seq.values[:10].tolist() == [0, 0, 1, 2, 3, 0, 1, 2, 3, 0]
    assert (seq.period, seq.preperiod, seq.proven, seq.proof) == (4, 1, True, "guy-smith")
    assert seq.proof_length == 2 * 1 + 2 * 4 + 2
    assert "2*n0 + p + t = 8" in seq.certificate()
    assert seq.value(10**30) == (10**30 - 1) % 4  # G(n) = (n - 1) mod 4 for n >= 1


# -- grundy_value: O(1) after a proof, and a bounded cache ---------------------------------------


def test_huge_heaps_cost_nothing_once_proven(monkeypatch: pytest.MonkeyPatch) -> None:
    dawson = TakeAndBreak.octal("0.07")
    first = grundy_value(dawson, 10**30)
    cached = grundy_module._CACHE[dawson]
    assert cached.proven and len(cached.values) == cached.preperiod + cached.period  # type: ignore[operator]

    def no_work(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("computed again")

    monkeypatch.setattr(grundy_module, "grundy_sequence", no_work)
    naive = naive_grundy(dawson, 53 + 34)  # preperiod 53, period 34
    for n in (10**30, 10**300 + 7, 60):
        assert grundy_value(dawson, n) == naive[53 + (n - 53) % 34]
    assert first == naive[53 + (10**30 - 53) % 34]


def test_the_cache_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(grundy_module, "_CACHE", type(grundy_module._CACHE)())
    monkeypatch.setattr(grundy_module, "_CACHE_RULES", 2)
    rules = [TakeAndBreak.octal(c) for c in ("0.77", "0.07", "0.137")]
    for rule in rules:
        grundy_value(rule, 5)
    assert list(grundy_module._CACHE) == rules[1:]  # the least recently used went first
    grundy_value(rules[1], 5)  # a hit makes it the most recent
    grundy_value(rules[0], 5)
    assert list(grundy_module._CACHE) == [rules[1], rules[0]]
    monkeypatch.setattr(grundy_module, "_CACHE_BYTES", 100)  # smaller than any sequence
    grundy_value(TakeAndBreak.octal("0.6"), 5000)
    assert TakeAndBreak.octal("0.6") not in grundy_module._CACHE
    assert sum(s.values.nbytes for s in grundy_module._CACHE.values()) <= 2 * 4096 * 2


# -- nimlab grundy -------------------------------------------------------------------------------


def grundy_json(*args: str) -> dict[str, object]:
    result = runner.invoke(app, ["grundy", *args, "--json"])
    assert result.exit_code == 0, result.output
    out: dict[str, object] = json.loads(result.stdout)
    return out


def test_cli_names_the_argument_that_proved_the_period() -> None:
    window = runner.invoke(app, ["grundy", "0.0123", "--max", "20"])
    assert window.exit_code == 0
    assert "window argument" in window.stdout and "Guy–Smith" not in window.stdout
    assert grundy_json("0.0123", "--max", "20")["proof"] == "window"
    kayles = runner.invoke(app, ["grundy", "kayles", "--prove"])
    assert "Guy–Smith theorem" in kayles.stdout and "window" not in kayles.stdout
    assert grundy_json("kayles", "--prove")["proof"] == "guy-smith"
    assert grundy_json("kayles", "--max", "50")["proof"] is None
    split = grundy_json("4.07", "--prove")
    assert (split["game"], split["period"], split["proof"]) == ("4.07", 4, "guy-smith")


def test_cli_json_gives_a_period_only_with_its_proof() -> None:
    # 170 values of 0.07 repeat with period 34 from heap 53, but the Guy-Smith condition needs
    # more: the JSON names that repetition a guess, as the text and nimlab.grundy do
    seen = grundy_json("0.07", "--max", "170")
    assert (seen["period"], seen["preperiod"], seen["proven"], seen["proof"]) == (
        None,
        None,
        False,
        None,
    )
    assert (seen["guessed_period"], seen["guessed_preperiod"]) == (34, 53)
    proven = grundy_json("0.07", "--max", "1000")
    assert (proven["period"], proven["preperiod"], proven["proven"]) == (34, 53, True)
    assert "guessed_period" not in proven
    text = runner.invoke(app, ["grundy", "0.07", "--max", "170"]).stdout
    assert "Not proven" in text
    unseen = grundy_json("0.6", "--max", "100")  # no repetition at all: no guess either
    assert unseen["period"] is None and "guessed_period" not in unseen


def test_cli_open_games_stop_at_a_stated_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(grundy_cli, "PROVE_LIMIT", 3000)
    out = grundy_json("0.6", "--prove")
    found = (out["period"], out["proven"], out["proof"], out["searched"])
    assert found == (None, False, None, 3000)
    text = runner.invoke(app, ["grundy", "0.6", "--prove"])
    assert "No period proven up to 3,000 values" in text.stdout
    assert grundy_json("0.6", "--prove", "--max", "2500")["searched"] == 2500
    assert "searched" not in grundy_json("0.6", "--max", "2500")  # only --prove searches
    timed = grundy_json("0.6", "--prove", "--seconds", "0")  # out of time at once
    assert timed["stopped"] == "time" and timed["proven"] is False
    assert grundy_cli.PROVE_SECONDS >= 60


def test_cli_progress_shows_a_fixed_limit() -> None:
    statuses: list[grundy_module.GrundyStatus] = []
    grundy_sequence(TakeAndBreak.octal("0.6"), 200_000, prove=True, status=statuses.append)
    assert statuses and all(s.limit == 200_000 for s in statuses)
    assert [s.computed for s in statuses] == sorted(s.computed for s in statuses)
    assert statuses[-1].computed == 200_000 and statuses[-1].rare == 1584
    line = grundy_cli.status_line(1_500_000, 2_097_152, 53, 1.0)
    assert line == "1,500,000 of at most 2,097,152 values · 53 rare · 1.5M values/s"
    assert grundy_cli.status_line(0, 10, None, 0.0) == "0 of at most 10 values"
    seq = grundy_cli._compute(TakeAndBreak.octal("0.6"), 5000, True, show_progress=True)
    assert len(seq) == 5000


def test_cli_rejects_meaningless_codes() -> None:
    """The typed error that ``nimlab``'s command group turns into a message and exit status 2."""
    result = runner.invoke(app, ["grundy", "2.07"])
    assert result.exit_code == 2
    assert "before the point must be 0 or 4" in result.stderr and "Traceback" not in result.stderr


@settings(max_examples=100, deadline=None)
@given(
    digits=st.lists(st.integers(0, 7), min_size=1, max_size=4),
    n=st.integers(0, 80),
    mask=st.integers(1, 255),
    positional=st.booleans(),
)
def test_sparse_method_with_splits_that_take_nothing(
    digits: list[int], n: int, mask: int, positional: bool
) -> None:
    """k = 0 counts among the splitting removals of the rare/common method, for any mask."""
    rule = TakeAndBreak(tuple(digits), d0=4)
    if positional and any(k % 2 for k, d in enumerate(rule.digits, 1) if d & 4):
        return  # a positional mask needs splitting removals of one parity (0 is even)
    seq = grundy_module._sequence_with_mask(rule, n, mask, positional=positional)
    assert [int(v) for v in seq.values] == naive_grundy(rule, n)


def test_a_game_of_4_07_plays_to_the_end_and_replays() -> None:
    from nimlab.core.game import Game

    game = Game("octal:4.07", [9], ["human:Ann", "bot:perfect:Hal"])
    assert isinstance(game.board, Rows)
    turn = game.push("1 5 0")  # a cut before stone 5: runs of 4 and 5
    assert turn.move == Move(1, 0, at=5) and game.board.to_strings() == ["****|*****"]
    while not game.is_over:
        if game.to_move.is_bot:
            game.play_bot()
        else:
            game.push(game.legal_moves[0])
    assert game.board.count_moves(TakeAndBreak.octal("4.07")) == 0
    again = Game.from_record(game.to_record())
    assert again.board == game.board
    assert [t.move for t in again.history] == [t.move for t in game.history]
