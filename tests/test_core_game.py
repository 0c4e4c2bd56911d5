from __future__ import annotations

import json

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from nimlab import (
    Game,
    GameOverError,
    IllegalMoveError,
    InvalidMoveError,
    Move,
    Player,
    PlayerError,
    PositionError,
    Rows,
    Ruleset,
)
from nimlab.core.bots import parse_bot
from nimlab.core.narrate import turn_messages


def test_player_specs_round_trip() -> None:
    for text in [
        "human:Ann",
        "bot:perfect:Hal",
        "bot:perfect:Hal:error=20",
        "bot:lookahead:3:Deep",
        "bot:random:R",
    ]:
        assert str(Player.parse(text)) == text
    p = Player.parse("bot:lookahead:3")
    assert p.bot is not None and p.bot.depth == 3 and p.name == "Lookahead bot"
    assert Player.parse("bot:classic:error=30:Cl").bot == parse_bot("classic:error=30")


@pytest.mark.parametrize(
    "text",
    [
        "robot:x",
        "bot:",
        "bot:genius",
        "bot:perfect:A:B",
        "bot:perfect:error=150",
        "bot:lookahead:0",
        "bot:lookahead:99",
        "bot:perfect:error=x",
        "human:" + "x" * 50,
    ],
)
def test_bad_player_specs(text: str) -> None:
    with pytest.raises(PlayerError):
        Player.parse(text)


def test_duplicate_names_are_numbered() -> None:
    game = Game(Ruleset(), [3], ["bot:perfect", "bot:perfect"])
    assert [p.name for p in game.players] == ["Perfect bot 1", "Perfect bot 2"]


def test_needs_two_players_and_a_pile() -> None:
    with pytest.raises(PlayerError, match="at least two"):
        Game(Ruleset(), [3], ["human:A"])
    with pytest.raises(PositionError):
        Game(Ruleset(), [], ["human:A", "human:B"])


def test_illegal_move_changes_nothing() -> None:
    game = Game(Ruleset(), [3, 4, 5], ["human:A", "human:B"])
    for bad in ["4 1", "1 0", "1 4", "0 1"]:
        with pytest.raises(IllegalMoveError):
            game.push(bad)
    with pytest.raises(InvalidMoveError):
        game.push("hello")
    assert game.board.heaps == (3, 4, 5) and game.history == [] and game.to_move.name == "A"


def test_turns_undo_and_game_over() -> None:
    game = Game(Ruleset(), [1, 2], ["human:A", "bot:perfect:B"], seed=3)
    game.push("2 1")  # A -> [1, 1], a P-position: A is winning
    turn = game.play_bot()
    assert turn.player.name == "B"
    undone = game.undo_for(0)
    assert [t.player.name for t in undone] == ["B", "A"]
    assert game.board.heaps == (1, 2) and game.to_move.name == "A"
    game.push("2 1")
    game.play_bot()
    game.push(game.legal_moves[0])
    assert game.is_over and game.winner is not None and game.winner.name == "A"
    with pytest.raises(GameOverError):
        game.push("1 1")
    game.pop()
    assert not game.is_over


def test_undo_without_moves() -> None:
    game = Game(Ruleset(), [3], ["human:A", "human:B"])
    with pytest.raises(GameOverError):
        game.pop()
    with pytest.raises(GameOverError):
        game.undo_for(0)


def test_first_player_choices() -> None:
    players = ["human:A", "bot:perfect:B"]
    assert Game(Ruleset(), [3, 4, 5], players, first="auto").to_move.name == "B"  # N: bot starts
    assert Game(Ruleset(), [1, 2, 3], players, first="auto").to_move.name == "A"  # P: human starts
    assert Game(Ruleset(), [3], players, first=1).to_move.name == "B"
    seen = {Game(Ruleset(), [3], players, first="random", seed=s).to_move.name for s in range(20)}
    assert seen == {"A", "B"}
    with pytest.raises(PlayerError):
        Game(Ruleset(), [3], players, first="last")  # type: ignore[arg-type]


def test_record_replays_exactly_including_rows() -> None:
    game = Game(
        Ruleset.parse("kayles misere"),
        [6, 3],
        ["bot:perfect:A", "bot:random:B", "bot:classic:C"],
        seed=5,
    )
    while not game.is_over:
        game.play_bot()
    record = json.loads(json.dumps(game.to_record()))
    again = Game.from_record(record)
    assert again.board == game.board
    assert [t.move for t in again.history] == [t.move for t in game.history]
    assert again.winner == game.winner and again.eliminated == game.eliminated
    assert isinstance(again.board, Rows)


def test_bad_records() -> None:
    with pytest.raises(PositionError):
        Game.from_record({"format": "chess"})
    game = Game(Ruleset(), [3, 4], ["human:A", "human:B"])
    game.push("1 1")
    record = game.to_record()
    record["moves"][0]["move"] = "1 9"
    with pytest.raises(IllegalMoveError):
        Game.from_record(record)
    del record["players"]
    with pytest.raises(PositionError, match="incomplete"):
        Game.from_record(record)


def test_kayles_single_row_takes_seed_003_notation() -> None:
    game = Game(Ruleset.parse("kayles"), [5], ["human:A", "human:B"])
    assert game.parse_move("3 2") == Move(1, 2, at=3)
    game.push("3 2")
    assert game.board.to_json() == ["**xx*"]


@given(
    piles=st.lists(st.integers(0, 3), min_size=1, max_size=3),
    players=st.integers(2, 4),
    picks=st.lists(st.integers(0, 10**6), max_size=40),
    undo=st.integers(0, 3),
)
@settings(max_examples=150, deadline=None)
def test_turn_messages_of_a_range_are_those_of_the_whole_game(
    piles: list[int], players: int, picks: list[int], undo: int
) -> None:
    """Misère rounds with eliminations: the messages of moves a+1..b, worked out from the
    state before move a+1 alone, are those the whole game gives them; history follows push
    and pop."""
    assume(any(piles))  # a start that is already over is refused (see the setup tests)
    names = [f"human:P{i}" for i in range(players)]
    game = Game(Ruleset.parse("nim misere"), piles, names)
    for pick in picks:
        if game.is_over:
            break
        moves = game.legal_moves
        game.push(moves[pick % len(moves)])
    for _ in range(min(undo, len(game.history))):
        game.pop()
    whole = turn_messages(game)
    n = len(game.history)
    assert len(whole) == n and [t.number for t in game.history] == list(range(1, n + 1))
    for a in range(n + 1):
        for b in range(a, n + 1):
            assert turn_messages(game, a, b) == whole[a:b]


@pytest.mark.parametrize(
    ("options", "shown"),
    [
        ({"piles": [0]}, "0"),
        ({"piles": [2, 2], "end_positions": ["2,2"]}, "2 2"),
        ({"piles": [2, 2, 2], "misere": True, "defaults": True}, "2 2 2"),
        ({"game": "dawson", "piles": [1, 1]}, "1 1"),  # no move: a heap of 1 in Dawson's Kayles
    ],
)
def test_a_setup_whose_start_is_already_over_is_refused(
    options: dict[str, object], shown: str
) -> None:
    from nimlab.core.setup import GameSetup

    with pytest.raises(PositionError, match=f"start position {shown} is already an end position"):
        GameSetup.from_options(**options)  # type: ignore[arg-type]
    GameSetup.from_options(piles=[1, 2])  # one move to play is enough


def test_analyze_takes_what_game_takes() -> None:
    from nimlab import NimlabError, analyze

    for rules in ("kayles misere", Ruleset.parse("kayles misere")):
        for start in ([5, 3], (5, 3), Game(rules, [5, 3], ["human:A", "human:B"]).start):
            a = analyze(rules, start)
            assert a.board == Game(rules, start, ["human:A", "human:B"]).start
            assert a.outcome is not None and a.ruleset == Ruleset.parse("kayles misere")
    for rules, start, error in [
        (None, [3], "rules are a Ruleset or text"),
        ("nim", None, "a position is a list of heap sizes"),
        ("nim", "345", "not the text '345'"),
        ("nim", 3, "not int"),
        ("nim", [-1], "negative"),
    ]:
        with pytest.raises(NimlabError, match=error):
            analyze(rules, start)  # type: ignore[arg-type]
        with pytest.raises(NimlabError, match=error):
            Game(rules, start)  # type: ignore[arg-type]


@pytest.mark.parametrize("move", [None, 3, (1, 2), b"1 2"])
def test_push_refuses_what_is_not_a_move_with_a_nimlab_error(move: object) -> None:
    game = Game("nim", [3, 4, 5], ["human:A", "human:B"])
    with pytest.raises(InvalidMoveError, match="a move is a Move or move text"):
        game.push(move)  # type: ignore[arg-type]
    assert issubclass(InvalidMoveError, ValueError)
    assert game.board.heaps == (3, 4, 5) and not game.history


def test_rows_beyond_a_record_are_refused_and_a_random_move_on_long_rows_is_drawn() -> None:
    """A game on rows keeps every stone in its record (at most a million): more is refused at
    the start, with what is allowed; up to that, a random bot's move is drawn without listing
    every move."""
    from nimlab.core.record import MAX_ROW
    from nimlab.core.setup import GameSetup

    with pytest.raises(PositionError, match="at most 1,000,000 stones"):
        GameSetup.from_options(
            game="kayles", piles=[MAX_ROW, 1], players=["bot:random", "bot:random"]
        )
    with pytest.raises(PositionError, match="at most 1,000 stones"):
        GameSetup.from_options(
            game="kayles", piles=[1001], players=["bot:random"] * 2, max_stones=1000
        )
    game = GameSetup.from_options(
        game="kayles", piles=[MAX_ROW], players=["bot:random", "bot:random"], seed=3
    ).build()
    game.play_bot()
    assert len(game.history) == 1
