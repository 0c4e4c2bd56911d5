"""Players and names, typed game records, setups, and the review functions every interface uses."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nimlab.core.bots import BotSpec as BotsBotSpec
from nimlab.core.bots import parse_bot as bots_parse_bot
from nimlab.core.errors import (
    GameOverError,
    IllegalMoveError,
    PlayerError,
    PositionError,
    RulesetError,
)
from nimlab.core.game import Game
from nimlab.core.game import Player as GamePlayer
from nimlab.core.narrate import new_round_text, round_text, turn_messages
from nimlab.core.players import (
    MAX_NAME,
    BotSpec,
    Player,
    check_name,
    name_key,
    parse_bot,
    player_from,
    unique_players,
)
from nimlab.core.position import Rows
from nimlab.core.record import GameRecord
from nimlab.core.review import hint, paranoid_move_values, value_history
from nimlab.core.ruleset import Ruleset
from nimlab.core.setup import GameSetup, ruleset_from
from nimlab.theory.budget import Budget, budget_scope
from nimlab.theory.outcome import Outcome

# -- players --------------------------------------------------------------------------------------


def test_old_import_paths_still_work() -> None:
    assert GamePlayer is Player and BotsBotSpec is BotSpec and bots_parse_bot is parse_bot


@pytest.mark.parametrize(
    ("raw", "kept"),
    [
        ("Ann", "Ann"),
        ("  Ann   Lee ", "Ann Lee"),
        ("Ａnn", "Ann"),
        ("ﬁona", "fiona"),
        ("a b", "a b"),
    ],
)
def test_names_are_normalised(raw: str, kept: str) -> None:
    assert check_name(raw) == kept
    assert Player.parse(f"human:{raw}").name == kept


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        ("", "1 to 40 printable"),
        ("   ", "1 to 40 printable"),
        ("x" * (MAX_NAME + 1), "1 to 40 printable"),
        ("a:b", "no colon"),
        ("tab\x07bell", "printable"),
        ("@ann", "registered player"),
        ("＠ann", "registered player"),  # full-width @ is @ after NFKC
    ],
)
def test_bad_names_say_what_is_allowed(raw: str, why: str) -> None:
    with pytest.raises(PlayerError, match=why):
        check_name(raw)


def test_names_that_differ_in_form_or_case_are_the_same_person() -> None:
    assert name_key("ＡNN") == name_key("ann") == name_key(" Ann ")
    players = unique_players(["human:Ann", "human:ＡNN", "bot:perfect"])
    assert [p.name for p in players] == ["Ann 1", "ANN 2", "Perfect bot"]


@given(
    name=st.text(
        st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), min_size=1, max_size=40
    )
)
@settings(max_examples=200)
def test_a_checked_name_round_trips_through_a_player_spec(name: str) -> None:
    try:
        kept = check_name(name)
    except PlayerError:
        return
    assert check_name(kept) == kept
    for spec in (f"human:{kept}", f"bot:perfect:{kept}:error=5"):
        p = Player.parse(spec)
        assert p.name == kept
        assert Player.parse(str(p)) == p


def test_player_from_form_fields() -> None:
    assert player_from("human", "") == Player("You")
    assert player_from("perfect", "") == Player("Perfect bot", BotSpec("perfect"))
    assert str(player_from("lookahead", "Deep", depth=4, error=10)) == (
        "bot:lookahead:4:Deep:error=10"
    )
    with pytest.raises(PlayerError, match="unknown bot"):
        player_from("wizard", "Merlin")
    with pytest.raises(PlayerError, match="lookahead depth"):
        player_from("lookahead", "x", depth=99)


def test_storage_reads_players_without_the_engine() -> None:
    code = (
        "import sys, nimlab.storage\n"
        "from nimlab.storage import Store\n"
        "s = Store.open(':memory:'); s.add_player('a', given='A', family='B', bot='perfect')\n"
        "s.get_player('a').as_player()\n"
        "bad = [m for m in ('numpy', 'numba', 'nimlab.core.bots', 'nimlab.core.analysis')"
        " if m in sys.modules]\n"
        "print(bad)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# -- records --------------------------------------------------------------------------------------


def finished() -> Game:
    game = Game("kayles misere", Rows.full([4, 2]), ["bot:perfect:A", "bot:random:B"], seed=3)
    while not game.is_over:
        game.play_bot()
    return game


def test_a_record_round_trips_typed_and_as_json() -> None:
    game = finished()
    record = game.record()
    assert record.over and record.winner == game.winner_seat
    as_json = json.loads(json.dumps(game.to_record()))
    assert GameRecord.from_json(as_json) == record
    assert record.to_json() == game.to_record()
    again = Game.from_record(record)
    assert again.board == game.board and again.history == game.history[: len(again.history)]
    assert Game.from_record(as_json).to_record() == game.to_record()  # times are kept too


def _good() -> dict[str, Any]:
    game = Game("nim", [2, 3], ["human:Ann", "human:Bob"], seed=1)
    game.push("1 2")
    return game.to_record()


@pytest.mark.parametrize(
    ("change", "error", "message"),
    [
        ({"format": "nimlab-game/2"}, PositionError, "not a nimlab game record"),
        ({"ruleset": 7}, RulesetError, "ruleset must be text"),
        ({"ruleset": "chess"}, RulesetError, "unknown game"),
        ({"start": "3 4"}, PositionError, "list of heap sizes"),
        ({"start": [[[[[[1]]]]]]}, PositionError, "not a list"),
        ({"start": [10**5000]}, None, None),  # a huge heap is a legal heap
        ({"start": [-1, 2]}, PositionError, "0 or more"),
        ({"start": {"rows": ["***"]}}, PositionError, "does not fit its game"),
        ({"players": "Ann"}, PlayerError, "must be a list"),
        ({"players": ["human:Ann"]}, PlayerError, "2 to 64 players"),
        ({"players": ["human:Ann", 5]}, PlayerError, "must be text"),
        ({"players": ["human:Ann", "wizard:Bob"]}, PlayerError, "human:NAME"),
        ({"first": 10**400}, PositionError, "a number too large"),
        ({"first": True}, PositionError, "seat number"),
        ({"seed": 1.5}, PositionError, "seed"),
        ({"seed": 1 << 80}, PositionError, "seed"),
        ({"moves": {"0": 1}}, PositionError, "moves must be a list"),
        ({"moves": [[0, "1 2"]]}, PositionError, "must be an object"),
        ({"moves": [{"seat": 0}]}, PositionError, "needs 'seat' and 'move'"),
        ({"moves": [{"seat": 2, "move": "1 1"}]}, PositionError, "seat number 0 to 1"),
        ({"moves": [{"seat": 0, "move": "1 1" * 10_000}]}, PositionError, "longer than"),
        ({"winner": "Ann"}, PositionError, "winner"),
        ({"over": "yes"}, PositionError, "true or false"),
    ],
)
def test_malformed_records_raise_typed_errors(
    change: dict[str, Any], error: type[Exception] | None, message: str | None
) -> None:
    record = _good() | change
    if error is None:
        GameRecord.from_json(record)
        return
    with pytest.raises(error, match=message):
        GameRecord.from_json(record)
    with pytest.raises(error):
        Game.from_record(record)


def test_missing_keys_and_wrong_turns() -> None:
    record = _good()
    del record["players"]
    with pytest.raises(PositionError, match="incomplete game record: it has no 'players'"):
        GameRecord.from_json(record)
    with pytest.raises(PositionError, match="not a nimlab game record"):
        GameRecord.from_json([1, 2])
    record = _good()
    record["moves"][0]["seat"] = 1
    with pytest.raises(PositionError, match="it was seat 0's turn"):
        Game.from_record(record)
    record = _good()
    record["moves"][0]["move"] = "1 9"
    with pytest.raises(IllegalMoveError):
        Game.from_record(record)


# -- setups ---------------------------------------------------------------------------------------


def test_a_setup_builds_the_game_it_describes() -> None:
    setup = GameSetup.from_options(
        game="subtraction:1-3",
        misere=True,
        end_positions=["2,2"],
        defaults=True,
        piles=["5", 4],
        players=["human:Ann", player_from("classic", "")],
        first=1,
        seed=9,
    )
    assert setup.ruleset == ruleset_from("subtraction:1-3", True, [[2, 2]], defaults=True)
    game = setup.build()
    assert game.position == (5, 4) and game.seed == 9 and game.to_move.name == "Classic bot"
    assert setup.build().to_record()["players"] == game.to_record()["players"]


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"players": ["human:A"]}, PlayerError, "at least two players"),
        ({"players": ["human:A"] * 65}, PlayerError, "at most 64"),
        ({"first": 2}, PlayerError, "first player 3 does not exist"),
        ({"first": "last"}, PlayerError, "choose first, random, auto"),
        ({"piles": []}, PositionError, "at least one pile"),
        ({"piles": [-3]}, PositionError, "negative"),
        ({"game": "kayles", "piles": [600, 600], "max_stones": 1000}, PositionError, "1,000"),
        ({"game": "chess"}, RulesetError, "unknown game"),
    ],
)
def test_bad_setups_raise_the_cores_errors(
    options: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        GameSetup.from_options(**options)


def test_a_setup_checks_its_board_kind() -> None:
    with pytest.raises(PositionError, match="rows of stones"):
        GameSetup(Ruleset.parse("kayles"), Game().start, (Player("A"), Player("B")))


# -- review and narration -------------------------------------------------------------------------


def test_bot_choice_for_a_human_is_a_player_error() -> None:
    game = Game("nim", [3], ["human:Ann", "bot:perfect:Hal"])
    with pytest.raises(PlayerError, match="Ann is not a bot"):
        game.bot_choice()
    game.push("1 3")
    with pytest.raises(GameOverError):
        game.bot_choice()
    with pytest.raises(GameOverError):
        hint(game)


def test_value_history_marks_exactly_the_moves_that_throw_a_win_away() -> None:
    game = Game("nim", [1, 2, 3, 4], ["human:A", "human:B"], seed=0)
    for move in ["4 4", "3 3", "1 1", "2 1"]:  # [1,2,3,0] is P: A's first move wins
        game.push(move)
    steps = value_history(game)
    assert [s.number for s in steps] == [0, 1, 2, 3, 4]
    evaluator = game.ruleset.evaluator
    for before, after, turn in zip(steps, steps[1:], game.history, strict=False):
        wins_after = evaluator.outcome(turn.after.canonical) is Outcome.P
        assert (after.winner == turn.seat) == wins_after or turn.winner is not None
        assert after.mistake == (before.winner == turn.seat and after.winner != turn.seat)


def test_hint_explains_and_takes_a_winning_move() -> None:
    game = Game("nim", [3, 4, 5], ["human:A", "bot:perfect:B"])
    advice = hint(game, explain=True)
    after = game.board.play(game.ruleset.rule, advice.move)
    assert game.ruleset.evaluator.outcome(after.canonical) is Outcome.P
    assert advice.proven and advice.explanation


def test_paranoid_values_and_round_sentences() -> None:
    game = Game("nim misere", [1, 1], ["human:A", "human:B", "human:C"])
    with budget_scope(Budget()):  # what is proven, not how fast: no deadline (a busy machine)
        values = paranoid_move_values(game)
    assert values is not None and [v.result for v in values] == [(0, 1), (1, 0)]
    assert paranoid_move_values(game, max_moves=1) is None
    assert (
        paranoid_move_values(
            Game("nim", [50, 50, 50], ["human:a", "human:b", "human:c"]), max_moves=10
        )
        is None
    )
    game.push("1 1")
    game.push("2 1")  # B empties the board: eliminated
    assert turn_messages(game) == [
        [],
        ["B was eliminated!", "Round 2: A and C play on from the start position."],
    ]
    assert round_text(game) == new_round_text(2, ["A", "C"])


@given(st.lists(st.integers(0, 4), min_size=1, max_size=3), st.integers(0, 10**6))
@settings(max_examples=30, deadline=None)
def test_random_games_replay_from_their_records(heaps: list[int], seed: int) -> None:
    if not any(heaps):
        heaps = [*heaps, 1]
    game = Game("nim misere", heaps, ["bot:random:A", "bot:random:B", "bot:random:C"], seed=seed)
    while not game.is_over:
        game.play_bot()
    record = GameRecord.from_json(json.loads(json.dumps(game.to_record())))
    again = Game.from_record(record)
    assert again.record() == game.record()


def test_emoji_joined_by_zero_width_joiners_are_a_name_and_messages_show_them_as_typed() -> None:
    """A family emoji is characters joined by zero-width joiners (format characters to Unicode):
    a name may hold them; a joiner alone at an end is no name, and messages quote what was typed
    as it reads, escaping only what does not print."""
    assert check_name("🎲Zoë👩\u200d👩\u200d👧") == "🎲Zoë👩\u200d👩\u200d👧"
    with pytest.raises(PlayerError, match='"\u200dZoë":'):
        check_name("\u200dZoë")
    with pytest.raises(PlayerError, match=r'"tab\\x07bell"'):
        check_name("tab\x07bell")
