"""The rules protocol as people meet it: the classic relatives of Nim played in the terminal and
explained in words with their working, their theorems checked against a plain search under the
real rules (and never used where they do not hold), what each game supports (Grundy values,
quotients, end positions, players) said in words, and the moves' text forms."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from nimlab.cli.app import app
from nimlab.core.analysis import analyze
from nimlab.core.errors import IllegalMoveError, PlayerError, RulesetError
from nimlab.core.game import Game
from nimlab.core.games import parse_game
from nimlab.core.position import Move
from nimlab.core.rules import PileRules
from nimlab.core.ruleset import Ruleset
from nimlab.theory.outcome import Outcome
from nimlab.theory.solver import MoveSolver
from test_play import run_session

runner = CliRunner()

RELATIVES = ("wythoff", "moore:2", "moore:3", "staircase", "fibonacci")


def _search(ruleset: Ruleset) -> MoveSolver[tuple[int, ...]]:
    """A search over the board's own moves (no theorem, no theory move generator)."""
    rules = ruleset.relative_rules
    return MoveSolver(
        lambda key: (after.canonical for _, after in rules.successors(rules.board_of(key))),
        misere=ruleset.misere,
    )


def _heaps(game: str) -> st.SearchStrategy[list[int]]:
    piles = parse_game(game).rules.piles
    if piles is not None:
        return st.lists(st.integers(0, 9), min_size=piles, max_size=piles)
    return st.lists(st.integers(0, 5), min_size=1, max_size=4)


@pytest.mark.parametrize("game", RELATIVES)
@pytest.mark.parametrize("misere", [False, True])
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_each_theorem_agrees_with_a_search_under_the_real_rules(
    game: str, misere: bool, data: st.DataObject
) -> None:
    ruleset = Ruleset(parse_game(game), misere)
    heaps = data.draw(_heaps(game))
    board = ruleset.rules.start(heaps)
    engine = ruleset.relative_engine
    theorem = ruleset.relative_rules.formula(board.canonical, misere)
    truth = _search(ruleset).value(board.canonical)
    if theorem is not None:
        assert theorem is truth.outcome
    ev = engine.evaluate(board.canonical)
    assert ev.outcome is truth.outcome and ev.remoteness == truth.remoteness


@pytest.mark.parametrize("k", [1, 2, 3])
@settings(max_examples=30, deadline=None)
@given(heaps=st.lists(st.integers(0, 5), min_size=1, max_size=4))
def test_misere_moore_is_answered_by_its_theorem(k: int, heaps: list[int]) -> None:
    """Misère Moore's Nim_k is decided by the theorem (method ``moore``, proven), not by the
    search; its outcome and its winning move agree with a search under the real rules."""
    ruleset = Ruleset(parse_game(f"moore:{k}"), True)
    rules = ruleset.relative_rules
    board = rules.start(heaps)
    search = _search(ruleset)
    truth = search.value(board.canonical).outcome
    a = analyze(ruleset, board)
    if a.terminal:
        return
    assert a.method == "moore" and a.proven and a.outcome is truth
    assert rules.formula(board.canonical, True) is truth
    wins = rules.theorem_wins(board, True)
    assert wins is not None and (wins == []) == (truth is Outcome.P)
    for move in wins:
        assert search.value(rules.play(board, move).canonical).outcome is Outcome.P


def test_misere_moore_beyond_any_search_is_proven_with_a_winning_move() -> None:
    for game, heaps in [("moore:2", [10**100, 3]), ("moore:1", [10**30, 10**30 + 2, 1])]:
        ruleset = Ruleset(parse_game(game), True)
        a = analyze(ruleset, heaps)
        assert a.method == "moore" and a.proven and a.outcome is Outcome.N
        (win,) = a.winning_moves
        left = ruleset.relative_rules.play(a.board, win.move)
        assert ruleset.relative_rules.formula(left.canonical, True) is Outcome.P
        assert "no theorem" not in " ".join(a.explanation).lower()


HUGE_PILES = [[10**8, 1], [2**70, 3], [10**100, 5, 7], [2**70, 2**70, 2**70, 1]]


@pytest.mark.parametrize("heaps", HUGE_PILES)
@pytest.mark.parametrize("misere", [False, True])
def test_moore_on_huge_piles_never_lists_moves(
    heaps: list[int], misere: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whether the game is over, the number of moves, a move's check, the hint and every bot's
    move are answered without listing a move (listing the moves of a pile of 10**8 took 13 s
    and 4 GB; above 2**63 it raised OverflowError)."""
    from nimlab.core import rules as rules_module
    from nimlab.core.review import hint
    from nimlab.theory import moore

    def listed(*_: object, **__: object) -> None:
        raise AssertionError("the moves were listed")

    monkeypatch.setattr(rules_module.MooreRules, "successors", listed)
    monkeypatch.setattr(moore, "moore_takes", listed)
    monkeypatch.setattr(moore, "moore_moves", listed)
    ruleset = Ruleset(parse_game("moore:2"), misere)
    rules = ruleset.relative_rules
    for bot in ("perfect", "classic", "lookahead", "random"):
        game = Game(ruleset, heaps, ["human:Ann", f"bot:{bot}:Hal"], seed=1)
        assert not game.is_over and rules.count_moves(game.board) > 10**8
        advice = hint(game)
        after = rules.play(game.board, advice.move)
        assert advice.proven and rules.formula(after.canonical, misere) is Outcome.P
        losing = next(  # a move that leaves an N-position: the bot can win
            m
            for m in (Move(1, 1), Move(1, 2), Move(1, 3))
            if rules.formula(rules.play(game.board, m).canonical, misere) is Outcome.N
        )
        game.push(losing)
        turn = game.play_bot()
        if bot != "random":
            assert rules.formula(turn.after.canonical, misere) is Outcome.P, bot
    with pytest.raises(IllegalMoveError, match="at most 2 piles"):
        rules.play(rules.start([*heaps, 1]), Move(1, 1, also=((2, 1), (3, 1))))


def test_moore_random_move_draws_every_move_once_without_listing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The draw beyond the listed moves maps the ranks 1 .. count one to one onto the legal
    moves (so a uniform rank is a uniform move)."""
    from nimlab.core import rules as rules_module

    class Ranks:
        rank = 0

        def randrange(self, start: int, stop: int) -> int:
            assert start == 1 and 1 <= self.rank < stop
            return self.rank

    monkeypatch.setattr(rules_module, "RANDOM_LISTED", 0)
    for game, heaps in [("moore:2", [3, 0, 2, 4]), ("moore:3", [1, 2, 3, 2]), ("moore:1", [4, 2])]:
        rules = parse_game(game).rules
        assert isinstance(rules, PileRules)
        board = rules.start(heaps)
        legal = sorted((m.pile, m.take, m.also) for m, _ in rules.successors(board))
        count = rules.count_moves(board)
        assert count == len(legal)
        ranks = Ranks()
        drawn = []
        for ranks.rank in range(1, count + 1):
            m = rules.random_move(board, ranks)  # type: ignore[arg-type]
            drawn.append((m.pile, m.take, m.also))
        assert sorted(drawn) == legal


def test_no_theorem_answers_under_extra_end_positions() -> None:
    ruleset = Ruleset.parse("wythoff end=1.2")  # (1, 2) ends the game: Wythoff's pairs move
    a = analyze(ruleset, [3, 5])
    assert a.method == "search"
    truth = MoveSolver(
        lambda key: (
            after.canonical
            for _, after in ruleset.rules.successors(ruleset.relative_rules.board_of(key))
        ),
        is_end=lambda key: key == (1, 2),
    ).value((3, 5))
    assert a.outcome is truth.outcome
    assert "extra end positions ([1, 2])" in a.explanation[0]


@pytest.mark.parametrize(
    ("game", "heaps", "working"),
    [
        ("wythoff", [3, 5], "the 2nd Wythoff pair (⌊2φ⌋, ⌊2φ⌋ + 2), (3, 5)"),
        ("wythoff", [4, 7], "(4, 7) is that pair, so it is a P-position"),
        ("moore:2", [1, 2, 3], "multiple of k + 1 = 3"),
        ("staircase", [3, 1, 2], "step 1: 3, step 3: 2; their nim-sum is 1"),
        ("fibonacci", [10], "10 = 8 + 2"),
        ("lasker", [3, 4], "Sprague–Grundy"),
        ("grundys-game", [7], "Sprague–Grundy"),
        ("fibonacci misere", [10], "not known to hold in misère play"),
    ],
)
def test_explanations_show_the_working(game: str, heaps: list[int], working: str) -> None:
    a = analyze(game, heaps)
    assert a.proven
    assert working in " ".join(a.explanation)


def test_what_each_game_supports_is_said_in_words() -> None:
    assert parse_game("lasker").grundy_support == ""
    assert "not sums of independent heaps" in parse_game("wythoff").grundy_support
    assert parse_game("lasker").quotient_support == ""  # partial quotients (test_quotient.py)
    assert parse_game("grundys-game").quotient_support == ""
    with pytest.raises(
        RulesetError, match="Northcott's game is not offered to play: it is partisan"
    ):
        parse_game("northcott")
    assert "infinite" in parse_game("nim").quotient_support
    assert "not sums of independent heaps" in parse_game("staircase").quotient_support
    r = runner.invoke(app, ["grundy", "staircase"])
    assert r.exit_code == 2 and "not sums of independent heaps" in r.output
    r = runner.invoke(app, ["grundy", "wythoff"])  # not sums of heaps, but a table of pairs
    assert r.exit_code == 0 and "Grundy values of Wythoff's game" in r.output
    r = runner.invoke(app, ["grundy", "lasker", "--max", "8", "--json", "--values"])
    assert r.exit_code == 0 and '"values": [0, 1, 2, 4, 3, 5, 6, 8]' in r.output
    r = runner.invoke(app, ["quotient", "moore:2"])
    assert r.exit_code == 2 and "no misère quotient" in r.output
    with pytest.raises(RulesetError, match="takes no extra end positions"):
        Ruleset.parse("staircase end=1.2")
    with pytest.raises(PlayerError, match="at most 2 players"):
        Game("wythoff", [3, 5], ["human:A", "human:B", "human:C"])
    with pytest.raises(RulesetError, match="not a take-and-break game"):
        _ = Ruleset.parse("moore:2").rule


def test_move_text_forms() -> None:
    assert Move.from_text("a3 b3") == Move(1, 3, also=((2, 3),))
    assert Move.from_text("1 3 + 2 3") == Move(1, 3, also=((2, 3),))
    assert str(Move(1, 3, also=((2, 3),))) == "1 3 2 3"
    assert Move.from_json(Move(1, 3, also=((2, 3),)).to_json()) == Move(1, 3, also=((2, 3),))
    wythoff = parse_game("wythoff").rules
    board = wythoff.start([3, 5])
    with pytest.raises(IllegalMoveError, match="the same number from each"):
        wythoff.play(board, Move(1, 1, also=((2, 2),)))
    fib = parse_game("fibonacci").rules
    with pytest.raises(IllegalMoveError, match="the first move may not take the whole pile"):
        fib.play(fib.start([5]), Move(1, 5))
    stairs = parse_game("staircase").rules
    assert stairs.play(stairs.start([0, 2]), Move(2, 2)).heaps == (2, 0)
    assert isinstance(stairs, PileRules)


def test_wythoff_in_the_terminal() -> None:
    game = Game("wythoff", [3, 5], ["human:Ann", "bot:perfect:Hal"])
    ending, out = run_session(game, ["a4 b4", "a1 b1", "?", "values", "b1", lambda g: "a2"])
    assert "takes the same number from each" not in out  # a4 b4 is simply too many
    assert "cannot take 4 from pile A" in out
    assert "You took" not in out and "Ann took 1 from pile A and 1 from pile B" in out
    assert "Hint:" in out and "Wythoff's theorem" in out
    assert ending == "over" and "Hal wins!" in out


def test_terminal_plays_a_cut_by_keyboard() -> None:
    game = Game("lasker", [4], ["human:Ann", "human:Bob"])
    ending, out = run_session(game, ["1 0", "3 0", "1 1", "2 1", "3 2"])
    assert "cannot cut row 1 before stone 1" in out
    assert "Ann took no stone, cutting before stone 3" in out
    assert "<1,*> <2,*> | <3,*> <4,*>" in out
    assert ending == "over" and "Bob wins!" in out


@pytest.mark.parametrize(
    ("game", "heaps"),
    [
        ("wythoff", [10**6, 1618034]),
        ("wythoff misere", [10**5, 3]),
        ("moore:2", [10**5, 2 * 10**5, 3 * 10**5]),
        ("staircase", [10**6, 5, 10**6 + 1]),
        ("fibonacci", [10**9]),
    ],
)
def test_huge_piles_are_answered_by_the_theorem(game: str, heaps: list[int]) -> None:
    ruleset = Ruleset.parse(game)
    rules = ruleset.relative_rules
    board = rules.start(heaps)
    a = analyze(ruleset, board)
    assert a.proven and not a.moves_complete and a.method == rules.method
    for m in a.winning_moves:  # each leaves a P-position by the theorem
        after = rules.play(board, m.move)
        assert rules.formula(after.canonical, ruleset.misere) is Outcome.P
    g = Game(ruleset, board, ["bot:perfect:A", "bot:perfect:B"], seed=3)
    choice = g.bots[g.state.to_move].choose(g.state)
    wins = a.outcome is Outcome.N
    assert choice.proven == wins  # losing: any move, not ranked (too many), and it says so
    left = rules.play(board, choice.move)
    assert (rules.formula(left.canonical, ruleset.misere) is Outcome.P) == wins


def test_staircase_moves_are_narrated_as_coins_moved_down_the_stairs() -> None:
    """Every sentence about a move asks the rules for its words: the terminal (letters), the
    page's move list and reviews (numbers), the hint; Nim's sentences are unchanged."""
    from nimlab.core.narrate import move_instruction, turn_text
    from nimlab.core.review import value_history
    from webtools import validated_state

    game = Game("staircase", [3, 1, 2], ["human:Ann", "human:Bob"])
    _, out = run_session(game, ["c2", "a1", "?", "quit"])
    assert "Ann moved 2 coins from step C down to step B" in out
    assert "Bob moved 1 coin from step A to the ground" in out
    assert "Hint: move " in out and "took" not in out
    assert [turn_text(t) for t in game.history] == [
        "Ann moved 2 coins from step 3 down to step 2",
        "Bob moved 1 coin from step 1 to the ground",
    ]
    steps = value_history(game)
    assert steps[1].text.startswith("Ann moved 2 coins from step 3 down to step 2")
    state = validated_state(game, [None, None])
    assert [t.text for t in state.turns] == [turn_text(t) for t in game.history]
    assert move_instruction(Move(2, 1), game.board, letters=True) == (
        "move 1 coin from step B down to step A"
    )
    nim = Game("nim", [3, 4], ["human:Ann", "human:Bob"])
    assert turn_text(nim.push("2 3"), letters=True) == "Ann took 3 from pile B"


def test_moores_explanation_writes_each_heap_in_binary() -> None:
    """The columns Moore's theorem counts are seen: each heap in binary, aligned, then each
    column's count of 1s modulo k + 1."""
    lines = analyze(Ruleset.parse("moore:2"), (3, 4, 5)).explanation
    assert lines[1:4] == ["  3 = 011", "  4 = 100", "  5 = 101"]
    assert "  column      2: 1 heap, 1 mod 3" in lines
