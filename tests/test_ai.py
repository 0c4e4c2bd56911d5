"""nimlab in the games-AI ecosystem (:mod:`nimlab.ai`): the action encoding of every registered
game, the OpenSpiel game and bot (OpenSpiel's own checks), the PettingZoo and Gymnasium
environments (their own checkers), and :func:`nimlab.evaluate` against brute force.

The reference here is a plain search over the rules' own moves (:func:`_brute_outcome`), no
theorem and no engine involved."""

from __future__ import annotations

import random
import subprocess
import sys
import textwrap
from dataclasses import replace
from functools import cache

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import nimlab
from nimlab.ai.encoding import Table, returns
from nimlab.core.errors import IllegalMoveError, NimlabError, PlayerError, PositionError
from nimlab.core.games import GAMES, parse_game
from nimlab.core.position import Board
from nimlab.core.rules import Rules
from nimlab.core.ruleset import Ruleset
from nimlab.theory.outcome import Outcome

pyspiel = pytest.importorskip("pyspiel")
pytest.importorskip("pettingzoo")
pytest.importorskip("gymnasium")

EXTRA = ("octal:0.4", "octal:4.07", "octal:0.54", "subtraction:1,3,4", "moore:1", "moore:3")
"""Parameters of the parametrised games beyond each entry's example (as test_every_game)."""

SMALL = {
    "wythoff": (2, 3),
    "staircase": (2, 0, 1),
    "fibonacci": (6,),
    "moore:2": (1, 2, 1),
    "moore:1": (2, 1),
    "moore:3": (1, 1, 2),
    "grundys-game": (6,),
}
"""A small start for each game (``(2, 3)`` when not listed)."""


def _kinds() -> list[str]:
    names = [f"{e.name}:{e.example}" if e.parameter else e.name for e in GAMES.values()]
    return [parse_game(n).name for n in [*names, *EXTRA]]


def _start(kind: str) -> tuple[int, ...]:
    return SMALL.get(kind, (2, 3))


def _players(kind: str) -> list[int]:
    """The player counts nimlab plays the game with (up to 4)."""
    most = parse_game(kind).rules.max_players
    return [n for n in (2, 3, 4) if most is None or n <= most]


def test_every_entry_is_covered() -> None:
    assert {parse_game(k).entry.name for k in _kinds()} == set(GAMES)


def _brute_outcome(ruleset: Ruleset, board: Board) -> Outcome:
    """The outcome by plain search over the rules' successors (normal play: moving into an end
    position wins; misère: it loses)."""

    @cache
    def outcome(b: Board) -> Outcome:
        if ruleset.is_over(b):
            return Outcome.N if ruleset.misere else Outcome.P
        rules: Rules = ruleset.rules
        return (
            Outcome.N
            if any(outcome(after) is Outcome.P for _, after in rules.successors(b))
            else Outcome.P
        )

    return outcome(board)


# -- importing nimlab loads none of these libraries --------------------------------------------


def test_nimlab_and_its_command_line_load_no_learning_library() -> None:
    code = textwrap.dedent(
        """
        import sys
        import nimlab
        nimlab.evaluate  # the lazy export is there without the adapters
        from typer.testing import CliRunner
        from nimlab.cli import app
        result = CliRunner().invoke(app, ["analyze", "3", "4", "5"])
        assert result.exit_code == 0, result.output
        import nimlab.ai.encoding, nimlab.ai.measure
        loaded = [m for m in ("pyspiel", "open_spiel", "pettingzoo", "gymnasium")
                  if m in sys.modules]
        print("LOADED", loaded)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=600, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "LOADED []" in done.stdout, done.stdout[-500:]


# -- the action encoding -------------------------------------------------------------------------


@pytest.mark.parametrize("kind", _kinds())
@settings(max_examples=6, deadline=None)
@given(misere=st.booleans(), seed=st.integers(0, 10**6), grow=st.integers(0, 2))
def test_actions_round_trip_and_mark_exactly_the_legal_moves(
    kind: str, misere: bool, seed: int, grow: int
) -> None:
    start = tuple(h + grow if h else h for h in _start(kind))
    table = Table.of(Ruleset(parse_game(kind), misere), start)
    actions, rules = table.actions, table.ruleset.rules
    assert len(set(actions.moves)) == actions.size
    rng = random.Random(seed)
    state = table.initial_state()
    while state.winner is None:
        board = state.board
        legal = list(rules.legal_moves(board))
        codes = [actions.action(m) for m in legal]
        assert [actions.move(a) for a in codes] == legal  # move -> action -> move
        assert actions.legal_actions(board) == sorted(codes)
        assert actions.mask(board).sum() == len(legal)
        for a in rng.sample(range(actions.size), min(actions.size, 20)):
            if a not in codes:  # every other action is refused by the rules
                with pytest.raises(IllegalMoveError):
                    rules.play(board, actions.move(a))
        assert len(table.observation(state)) == table.observation_size
        assert table.observation(state).max() <= table.observation_high
        state = table.play(state, rng.choice(codes))
    assert sum(returns(state)) == pytest.approx(0)


def test_a_move_on_several_piles_is_one_action_whatever_its_order() -> None:
    table = Table.of("wythoff", [3, 5])
    a = table.actions
    both = table.ruleset.rules.parse_move("2 2 1 2", table.start)
    assert a.move(a.action(both)) == table.ruleset.rules.parse_move("1 2 2 2", table.start)


def test_wrong_tables_and_actions_say_what_is_allowed() -> None:
    with pytest.raises(PlayerError, match="at most 2 players"):
        Table.of("wythoff", [3, 5], players=3)
    with pytest.raises(PositionError, match="already an end position"):
        Table.of("nim", [0, 0])
    with pytest.raises(NimlabError, match="actions are 0 to 11"):
        Table.of("nim", [3, 4, 5]).actions.move(12)
    with pytest.raises(PositionError, match="at most 1,000,000"):
        Table.of("moore:3", [200, 200, 200, 200])


# -- OpenSpiel ---------------------------------------------------------------------------------


def _spiel_cases() -> list[tuple[str, bool, int]]:
    cases = []
    for kind in _kinds():
        for misere in (False, True):
            cases.append((kind, misere, 2))
        if 3 in _players(kind):
            cases.append((kind, True, 3))
    return cases


@pytest.mark.parametrize(("kind", "misere", "players"), _spiel_cases())
def test_openspiel_checks_pass_on_every_game(kind: str, misere: bool, players: int) -> None:
    import nimlab.ai.spiel  # noqa: F401  (registers the game)

    params = {
        "game": kind,
        "piles": " ".join(map(str, _start(kind))),
        "misere": misere,
        "players": players,
    }
    game = pyspiel.load_game("nimlab", params)
    pyspiel.random_sim_test(game, num_sims=3, serialize=True, verbose=False)
    again = pyspiel.load_game(str(game))  # the game's text form loads the same game
    assert again.num_distinct_actions() == game.num_distinct_actions()
    state, rng = game.new_initial_state(), random.Random(1)
    table = game.table
    while not state.is_terminal():
        board = state.state.board
        legal = [table.actions.action(m) for m in table.ruleset.rules.legal_moves(board)]
        assert state.legal_actions() == sorted(legal)
        text = pyspiel.serialize_game_and_state(game, state)
        _, back = pyspiel.deserialize_game_and_state(text)
        assert back.state == state.state and back.history() == state.history()
        state.apply_action(rng.choice(state.legal_actions()))
    assert sum(state.returns()) == pytest.approx(0)


@pytest.mark.parametrize(
    "params",
    [
        {"game": "nim misere end=1.2", "piles": "3 2 2", "end": "defaults"},
        {"game": "kayles", "piles": "3 4", "end": "1.2", "players": 3, "misere": True},
        {"game": "subtraction:1,3,4", "piles": "6", "end": "2.2;1.1.1"},
        {"game": "octal:4.07", "piles": "5", "end": "1.1", "players": 4, "misere": True},
    ],
)
def test_openspiel_end_positions_and_text_forms_read_back(params: dict[str, object]) -> None:
    import pickle

    import nimlab.ai.spiel  # noqa: F401

    game = pyspiel.load_game("nimlab", params)
    assert game.table.ruleset.end_positions
    pyspiel.random_sim_test(game, num_sims=3, serialize=True, verbose=False)
    again = pyspiel.load_game(str(game))
    assert again.table.ruleset == game.table.ruleset and again.table.start == game.table.start
    state = game.new_initial_state()
    state.apply_action(state.legal_actions()[0])
    back = pickle.loads(pickle.dumps(state))
    assert back.state == state.state and back.history() == state.history()


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"game": "chess"}, "unknown game 'chess': choose nim"),
        ({"game": "staircase", "piles": "3 1", "end": "1.1"}, "takes no extra end positions"),
        ({"game": "wythoff", "piles": "3 5", "players": 3}, "at most 2 players"),
        ({"piles": "0 0"}, "already an end position"),
    ],
)
def test_openspiel_wrong_parameters_say_what_is_allowed(
    params: dict[str, object], message: str
) -> None:
    import nimlab.ai.spiel  # noqa: F401

    with pytest.raises(NimlabError, match=message):
        pyspiel.load_game("nimlab", params)


@pytest.mark.parametrize("kind", _kinds())
def test_openspiel_minimax_agrees_with_nimlab(kind: str) -> None:
    from open_spiel.python.algorithms.minimax import alpha_beta_search

    import nimlab.ai.spiel

    for misere in (False, True):
        params = {"game": kind, "piles": " ".join(map(str, _start(kind))), "misere": misere}
        game = pyspiel.load_game("nimlab", params)
        value, _ = alpha_beta_search(game, maximum_depth=game.max_game_length())
        ruleset = game.table.ruleset
        outcome = nimlab.analyze(ruleset, game.table.start).outcome
        assert outcome is _brute_outcome(ruleset, game.table.start)
        assert value == (1.0 if outcome is Outcome.N else -1.0)
        bot = nimlab.ai.spiel.NimlabBot(game, "perfect", seed=0)
        state = game.new_initial_state()
        while not state.is_terminal():  # the perfect bot against itself: the N side wins
            state.apply_action(bot.step(state))
        assert state.returns()[0] == value


# -- PettingZoo and Gymnasium ----------------------------------------------------------------------


@pytest.mark.parametrize("kind", _kinds())
def test_pettingzoo_api_test_passes_for_every_game_and_player_count(kind: str) -> None:
    import warnings

    from pettingzoo.test import api_test

    from nimlab.ai.zoo import NimlabEnv

    for players in _players(kind):
        misere = players > 2  # elimination rounds
        env = NimlabEnv(kind, _start(kind), players=players, misere=misere)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # its notes on Dict observations (as classic envs)
            api_test(env, num_cycles=30)


def test_pettingzoo_api_test_passes_with_end_positions() -> None:
    import warnings

    from pettingzoo.test import api_test

    from nimlab.ai.zoo import NimlabEnv

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(NimlabEnv("nim", [3, 2, 2], players=3, misere=True, end="defaults"), 30)
        api_test(NimlabEnv("kayles", [4, 3], end=[[1, 1]]), 30)


def test_pettingzoo_eliminates_and_rewards_sum_to_zero() -> None:
    from nimlab.ai.zoo import NimlabEnv

    env = NimlabEnv("nim", [1, 1], players=3, misere=True)
    env.reset()
    total = dict.fromkeys(env.possible_agents, 0.0)
    order = []
    for agent in env.agent_iter():
        observation, reward, terminated, _, _ = env.last()
        total[agent] += reward
        if terminated:
            env.step(None)
            continue
        order.append(agent)
        env.step(int(np.flatnonzero(observation["action_mask"])[0]))
    # round 1: 0 and 1 take a stone each, 1 is out; round 2 starts again from the start, the
    # first seat still in moving first: 0, then 2 takes the last stone and is out
    assert order == ["player_0", "player_1", "player_0", "player_2"]
    assert total == {"player_0": 1.0, "player_1": -0.5, "player_2": -0.5}


@pytest.mark.parametrize(
    ("game", "start", "players", "opponent"),
    [
        ("kayles misere", (5, 7), 2, "perfect"),
        ("nim misere", (2, 2), 3, "random"),
        ("wythoff", (3, 5), 2, "perfect:error=30"),
        ("fibonacci", (10,), 2, "classic"),
        ("staircase", (3, 1, 2), 2, "lookahead:2"),
        ("nim misere defaults", (3, 2, 2), 2, "perfect"),
    ],
)
def test_gymnasium_check_env_passes(
    game: str, start: tuple[int, ...], players: int, opponent: str
) -> None:
    from gymnasium.utils.env_checker import check_env

    from nimlab.ai.gymenv import NimlabGym

    check_env(NimlabGym(game, start, players=players, opponent=opponent), skip_render_check=True)


@pytest.mark.parametrize("start", [(1, 2, 3), (1, 2, 4)])
def test_gymnasium_perfect_agent_against_perfect_bot_gets_the_outcome(
    start: tuple[int, ...],
) -> None:
    from nimlab.ai.gymenv import NimlabGym
    from nimlab.core.bots import make_bot

    env = NimlabGym("nim", start, opponent="perfect")
    me = make_bot("perfect", random.Random(0))
    _, info = env.reset(seed=3)
    done, reward = False, 0.0
    while not done:
        action = env.table.actions.action(me.choose(env.state).move)
        assert info["action_mask"][action] == 1
        _, reward, done, _, info = env.step(action)
    wins = _brute_outcome(env.table.ruleset, env.table.start) is Outcome.N
    assert reward == (1.0 if wins else -1.0)


def test_gymnasium_illegal_action_ends_the_episode_as_a_loss() -> None:
    from nimlab.ai.gymenv import NimlabGym

    env = NimlabGym("nim", [1, 2])
    env.reset(seed=0)
    rules = env.table.ruleset.rules
    bad = env.table.actions.action(rules.parse_move("1 1", env.table.start))
    env.state = replace(
        env.state, board=rules.play(env.state.board, rules.parse_move("1 1", env.state.board))
    )
    before = env.state
    _, reward, done, _, info = env.step(bad)  # pile 1 is empty now
    assert (reward, done) == (-1.0, True) and "empty" in info["illegal"]
    assert env.state == before
    env.reset(seed=0)
    _, reward, done, _, info = env.step(env.table.actions.size)  # not an action at all
    assert (reward, done) == (-1.0, True) and "actions are 0 to" in info["illegal"]


# -- evaluate ------------------------------------------------------------------------------------


EVALUATED = [
    ("nim", 3, 3),
    ("nim misere", 3, 3),
    ("kayles misere", 2, 4),
    ("nim end=2.2 end=1.3", 2, 4),
    ("wythoff misere", 2, 4),
    ("fibonacci", 1, 9),
    ("staircase misere", 3, 2),
    ("moore:2", 3, 2),
    ("grundys-game", 2, 6),
    ("octal:4.07", 2, 4),
]


def _brute_figures(game: str, piles: int, max_heap: int) -> tuple[int, float, float]:
    """Won positions, the mean share of losing moves over them, and the same share for the
    policy "the first legal move", by plain search (every position up to ``max_heap``, one per
    key as the engine counts them)."""
    from itertools import product

    ruleset = Ruleset.parse(game)
    rules = ruleset.rules
    count = rules.piles or piles
    boards = {}
    for heaps in product(range(max_heap + 1), repeat=count):
        try:
            board = rules.start(heaps)
        except NimlabError:
            continue
        boards.setdefault(board.canonical, board)
    won, share, first = 0, 0.0, 0.0
    for board in boards.values():
        if ruleset.is_over(board) or _brute_outcome(ruleset, board) is Outcome.P:
            continue
        children = [_brute_outcome(ruleset, after) for _, after in rules.successors(board)]
        won += 1
        share += children.count(Outcome.N) / len(children)
        first += children[0] is Outcome.N
    return won, share / won, first / won


@pytest.mark.parametrize(("game", "piles", "max_heap"), EVALUATED)
def test_evaluate_is_exact_against_brute_force(game: str, piles: int, max_heap: int) -> None:
    won, random_share, first_share = _brute_figures(game, piles, max_heap)
    perfect = nimlab.evaluate("perfect", game, piles=piles, max_heap=max_heap)
    assert (perfect.positions, perfect.error, perfect.skipped) == (won, 0.0, 0)
    assert perfect.random_error == pytest.approx(random_share)
    uniform = nimlab.evaluate("random", game, piles=piles, max_heap=max_heap)
    assert uniform.error == pytest.approx(random_share)
    first = nimlab.evaluate(
        lambda s: next(s.ruleset.rules.legal_moves(s.board)), game, piles=piles, max_heap=max_heap
    )
    assert first.error == pytest.approx(first_share)
    if first.worst:
        slip = first.worst[0]
        assert slip.loss == 1.0 and slip.move is not None


def test_evaluate_reads_actions_and_distributions_of_the_start() -> None:
    table = Table.of("kayles misere", [3, 4])
    ruleset, rules, actions = table.ruleset, table.ruleset.rules, table.actions
    boards, frontier = {table.start}, [table.start]
    while frontier:  # every board reachable from the start, by the rules' own moves
        frontier = [a for b in frontier for _, a in rules.successors(b) if a not in boards]
        boards.update(frontier)
    won = [b for b in boards if not ruleset.is_over(b) and _brute_outcome(ruleset, b) is Outcome.N]
    first = actions.move(0)  # row 1, stone 1, take 1: illegal once stone 1 is gone

    def throws(board: Board) -> bool:
        legal = dict(rules.successors(board))
        return first not in legal or _brute_outcome(ruleset, legal[first]) is Outcome.N

    always_zero = nimlab.evaluate(lambda s: 0, "kayles misere", start=[3, 4], worst=1000)
    assert always_zero.positions == len(won)
    assert always_zero.error == pytest.approx(sum(map(throws, won)) / len(won))
    assert any(s.move is None for s in always_zero.worst)  # an illegal answer, named so
    as_text = nimlab.evaluate(lambda s: str(first), "kayles misere", start=[3, 4])
    assert as_text.error == always_zero.error
    uniform_legal = nimlab.evaluate(
        lambda s: actions.mask(s.board) / actions.mask(s.board).sum(),
        "kayles misere",
        start=[3, 4],
    )
    assert uniform_legal.error == pytest.approx(uniform_legal.random_error)


def test_evaluate_skips_what_it_cannot_prove() -> None:
    game = "kayles misere end=2.2 end=1.1.3"  # searched (extra end positions): no formula
    none = nimlab.evaluate("perfect", game, piles=3, max_heap=4, seconds=0.0)
    assert (none.positions, none.lost, none.proven) == (0, 0, False)
    assert "not proven" in str(none)
    every = nimlab.evaluate("perfect", game, piles=3, max_heap=4)
    assert every.proven and none.skipped == every.positions + every.lost


def test_the_ai_notebook_is_committed_without_outputs_and_parses() -> None:
    import ast
    import json
    from pathlib import Path

    notebook = Path(__file__).resolve().parent.parent / "docs" / "ai.ipynb"
    cells = json.loads(notebook.read_text())["cells"]
    code = [c for c in cells if c["cell_type"] == "code"]
    assert code and all(not c["outputs"] and c["execution_count"] is None for c in code)
    for cell in code:
        ast.parse("".join(cell["source"]))


def test_evaluate_refuses_too_many_positions_before_enumerating_them() -> None:
    with pytest.raises(PositionError, match="at most 200,000"):
        nimlab.evaluate("perfect", "nim", piles=12, max_heap=20)
    with pytest.raises(PositionError, match="piles 1 or more"):
        nimlab.evaluate("perfect", "nim", piles=0)
