"""``nimlab simulate`` and :mod:`nimlab.core.simulation`: bot-against-bot games, repeatable results
on any number of processes, Wilson intervals. (Speed is measured by bench/bench_simulate.py.)"""

from __future__ import annotations

import json
import random

import pytest

from nimlab.core.errors import NimlabError, PositionError
from nimlab.core.ruleset import Ruleset
from nimlab.core.simulation import SimulationConfig, deal, parse_range, simulate, wilson_interval
from processes import nimlab


def test_wilson_interval() -> None:
    assert wilson_interval(0, 0) == (0.0, 1.0)
    lo, hi = wilson_interval(5, 10)
    assert lo == pytest.approx(0.2366, abs=1e-4) and hi == pytest.approx(0.7634, abs=1e-4)
    lo, hi = wilson_interval(0, 10)
    assert lo == 0.0 and hi == pytest.approx(0.2775, abs=1e-4)
    lo, hi = wilson_interval(10, 10)
    assert lo == pytest.approx(0.7225, abs=1e-4) and hi == pytest.approx(1.0)
    lo, hi = wilson_interval(5000, 10000)
    assert hi - lo == pytest.approx(2 * 1.96 * 0.005, abs=1e-4)


def test_deal_and_ranges() -> None:
    assert parse_range("5", "x") == (5, 5) and parse_range("3-5", "x") == (3, 5)
    for bad in ("5-3", "a", "1-2-3", ""):
        with pytest.raises(PositionError):
            parse_range(bad, "x")
    rng = random.Random(1)
    for _ in range(100):
        heaps = deal(rng, (5, 5), (1, 9))
        assert len(heaps) == 5 and all(1 <= h <= 9 for h in heaps)


def test_results_do_not_depend_on_the_number_of_processes() -> None:
    config = SimulationConfig(
        Ruleset.parse("nim misere"),
        ("bot:perfect:error=40", "bot:classic"),
        pile_count=(3, 4),
        seed=5,
    )
    one = simulate(config, 600, jobs=1)
    two = simulate(config, 600, jobs=2)
    assert one.wins == two.wins and one.moves == two.moves and one.first_wins == two.first_wins
    assert one.games == 600 and sum(one.wins) == 600


def test_progress_is_reported_for_every_game() -> None:
    config = SimulationConfig(Ruleset(), ("bot:classic", "bot:random"), start=(3, 4, 5))
    seen: list[int] = []
    simulate(config, 300, jobs=2, progress=seen.append)
    assert sum(seen) == 300


def test_perfect_play_wins_every_won_position() -> None:
    config = SimulationConfig(
        Ruleset(), ("bot:perfect:P", "bot:random:R"), start=(3, 4, 5), first="first"
    )
    result = simulate(config, 50, jobs=1)
    assert result.wins == [50, 0] and result.first_wins == 50
    # alternating: the perfect bot also wins every game it starts, and most of the others
    alt = simulate(
        SimulationConfig(Ruleset(), ("bot:perfect:P", "bot:random:R"), start=(3, 4, 5)), 50, jobs=1
    )
    assert alt.wins[0] >= 25


def test_kayles_and_three_bots_with_eliminations() -> None:
    config = SimulationConfig(
        Ruleset.parse("kayles"),
        ("bot:classic", "bot:random", "bot:lookahead:2"),
        start=(6,),
        seed=2,
    )
    result = simulate(config, 30, jobs=1)
    assert sum(result.wins) == 30
    misere = SimulationConfig(
        Ruleset.parse("nim misere defaults"),
        ("bot:classic:A", "bot:random:B", "bot:random:C"),
        start=(5, 5),
    )
    assert sum(simulate(misere, 30, jobs=1).wins) == 30


def test_json_result_shape() -> None:
    config = SimulationConfig(Ruleset(), ("bot:classic:A", "bot:random:B"), start=(1, 2))
    out = simulate(config, 10, jobs=1).to_json()
    assert out["games"] == 10 and len(out["players"]) == 2
    assert set(out["players"][0]) == {"seat", "player", "name", "wins", "win_rate", "ci95"}


@pytest.mark.parametrize(
    ("players", "message"),
    [
        (("human:Ann", "bot:classic"), "is human"),
        (("bot:classic",), "at least two"),
        (("bot:nope", "bot:classic"), "unknown bot"),
    ],
)
def test_bad_players(players: tuple[str, ...], message: str) -> None:
    with pytest.raises(NimlabError, match=message):
        SimulationConfig(Ruleset(), players)


def test_command_table_and_json() -> None:
    r = nimlab(
        "simulate",
        "--games",
        "300",
        "--player",
        "bot:perfect:error=30",
        "--player",
        "bot:classic",
        "--misere",
        "--defaults",
        "--pile-count",
        "3",
    )
    assert r.returncode == 0, r.stderr
    assert "300 games of Nim, misère play" in r.stdout and "95% interval" in r.stdout
    assert "Perfect bot (30% errors)" in r.stdout and "Classic bot" in r.stdout
    r = nimlab("simulate", "--games", "40", "--json", "--piles", "3", "4", "5", "--jobs", "1")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["games"] == 40 and out["start"] == [3, 4, 5] and out["ruleset"] == "nim"
    assert sum(p["wins"] for p in out["players"]) == 40
    assert all(0 <= p["ci95"][0] <= p["win_rate"] <= p["ci95"][1] <= 1 for p in out["players"])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--player", "human:Ann", "--player", "bot:classic"], "is human"),
        (["--first", "never"], "choose alternate"),
        (["--pile-size", "9-1"], "low end first"),
        (["--piles", "x"], "not a whole number"),
    ],
)
def test_command_errors(args: list[str], message: str) -> None:
    r = nimlab("simulate", "--games", "5", *args)
    assert r.returncode == 2 and message in r.stderr and "Traceback" not in r.stderr
