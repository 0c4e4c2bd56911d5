"""The notebook-first library: top-level grundy/quotient/analyze answer with plain ints and
honest proofs, and positions, games, analyses, sequences and quotients draw themselves."""

from __future__ import annotations

import contextlib
import re
import shutil
import sqlite3
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import nimlab
from nimlab.core.errors import RulesetError
from nimlab.theory.grundy import naive_grundy
from nimlab.theory.octal import TakeAndBreak

ROOT = Path(__file__).resolve().parent.parent


def _plain(value: object) -> bool:
    return type(value) is int


def test_grundy_values_are_plain_ints_equal_to_the_reference() -> None:
    g = nimlab.grundy("kayles", 60)
    assert len(g) == 60
    assert all(_plain(v) for v in g.values)
    assert list(g.values) == naive_grundy(TakeAndBreak.octal("0.77"), 60)


codes = st.builds(
    lambda d0, digits, last: f"{d0}." + "".join(map(str, digits)) + str(last),
    st.sampled_from(["0", "4"]),
    st.lists(st.integers(0, 7), max_size=2),
    st.integers(1, 7),
)


@settings(max_examples=40, deadline=None)
@given(code=codes, n=st.integers(1, 40))
def test_grundy_of_any_octal_game_agrees_with_the_reference_and_proves_only_what_holds(
    code: str, n: int
) -> None:
    g = nimlab.grundy(code, n, prove=True)
    rule = TakeAndBreak.octal(code)
    assert list(g.values) == naive_grundy(rule, len(g.values))
    if g.proven:  # a proven period holds beyond the values computed
        far = 3 * len(g.values) + 20
        assert [g[k] for k in range(far)] == naive_grundy(rule, far)
    else:
        assert g.period is None and g.preperiod is None and g.proof is None


def test_a_period_comes_only_with_its_proof() -> None:
    short = nimlab.grundy("0.77", 100)  # Kayles repeats from 71 with period 12: too few to prove
    assert short.period is None and short.preperiod is None and short.proof is None
    assert not short.proven
    assert (short.guessed_period, short.guessed_preperiod) == (12, 71)
    assert "guess" in short.summary()
    proven = nimlab.grundy(nimlab.Ruleset.parse("kayles"), 400, prove=True)
    assert (proven.period, proven.preperiod) == (12, 71)
    assert proven.proof is not None and proven.proof.startswith("Guy–Smith theorem")
    assert proven.guessed_period is None
    assert all(_plain(x) for x in (proven.period, proven.preperiod))
    assert proven[10_000] == proven[71 + (10_000 - 71) % 12]
    with pytest.raises(IndexError):
        short[10_000]


def test_grundy_refuses_what_it_cannot_read() -> None:
    with pytest.raises(RulesetError):
        nimlab.grundy("no such game", 10)
    for n in (0, 10**12, 2.5):
        with pytest.raises(ValueError, match="how many values"):
            nimlab.grundy("kayles", n)  # type: ignore[arg-type]


def test_grundy_table_of_wythoffs_game() -> None:
    t = nimlab.grundy_table("wythoff", 20)
    assert len(t) == 20 and all(_plain(v) for row in t.values for v in row)
    assert t.values[3][:6] == (3, 4, 5, 6, 2, 0) and t[5, 3] == 0 and t[3, 3] == 6
    assert t.p_positions() == [(0, 0), (1, 2), (3, 5), (4, 7), (6, 10), (8, 13), (9, 15), (11, 18)]
    assert t[0, 10**20] == 10**20 and t[2618, 1618] == 0  # (⌊1000φ⌋, ⌊1000φ²⌋), beyond it
    with pytest.raises(IndexError, match="beyond the table"):
        t[20, 21]
    assert "piles 0..19" in t.summary()
    html = t._repr_html_()
    assert "<table" in html and html.count("<tr>") == 21
    with pytest.raises(RulesetError, match=r"nimlab\.grundy_table"):
        nimlab.grundy("wythoff", 10)  # a table of pairs, not a sequence of one heap
    with pytest.raises(RulesetError, match="not played on a pair of piles"):
        nimlab.grundy_table("kayles", 10)
    for n in (0, 2001, 2.5):
        with pytest.raises(ValueError, match="how many piles"):
            nimlab.grundy_table("wythoff", n)  # type: ignore[arg-type]


def test_quotient_of_kayles() -> None:
    q = nimlab.quotient("kayles")
    assert q.proven and _plain(q.order) and q.order == len(q.elements)
    assert q.outcome([1]) == "P" and q.outcome([1, 1]) == "N"
    assert q.period is not None
    html = q._repr_html_()
    assert "<table" in html and html.count("<tr>") == q.order + 1


def test_quotient_refuses_an_infinite_game() -> None:
    with pytest.raises(RulesetError, match="misère quotient is infinite"):
        nimlab.quotient("nim")


def test_analyze_accepts_text_and_plain_lists_and_answers_plain_ints() -> None:
    a = nimlab.analyze("nim", [3, 4, 5])
    assert _plain(a.grundy) and a.grundy == 2
    assert _plain(a.remoteness)
    for m in a.moves:
        assert all(_plain(h) for h in m.result)


def _svg(text: str) -> ET.Element:
    root = ET.fromstring(text)
    assert root.tag.endswith("svg")
    return root


def test_a_position_draws_its_piles_and_an_analysis_marks_its_winning_move() -> None:
    svg = _svg(nimlab.Position.of([3, 4, 5])._repr_svg_())
    heads = [e for e in svg.iter() if e.tag.endswith("ellipse")]
    assert len(heads) == 12  # one match head per object
    html = nimlab.analyze("nim", [3, 4, 5])._repr_html_()
    assert "-2" in html  # the only winning move takes 2 from pile 1
    svg = _svg(re.search(r"<svg.*?</svg>", html, re.S).group(0))  # type: ignore[union-attr]
    assert sum(1 for e in svg.iter() if e.get("fill") == "#7fdc9f") == 1


def test_huge_positions_draw_a_bounded_picture() -> None:
    piles = nimlab.Position.of([10**9] * 10_000)._repr_svg_()
    assert len(piles) < 300_000 and "first 40 drawn" in piles
    rows = nimlab.Rows.full([10**9, 5])._repr_svg_()
    assert len(rows) < 50_000 and "1,000,000,000 in all" in rows


def test_rows_draw_as_stones_with_winning_stones_ringed() -> None:
    rows = nimlab.Rows.from_strings(["***x**"])
    svg = _svg(rows._repr_svg_())
    circles = [e for e in svg.iter() if e.tag.endswith("circle")]
    assert len(circles) == 6  # five stones and one gap
    html = nimlab.analyze("kayles", rows)._repr_html_()
    assert "stroke='#7fdc9f'" in html


def test_a_game_and_a_grundy_sequence_draw_themselves() -> None:
    game = nimlab.Game("nim", [1, 2], ["human:Ann", "bot:perfect:Hal"])
    assert "Ann to move" in game._repr_html_()
    g = nimlab.grundy("dawson", 50)
    svg = _svg(g._repr_svg_())
    points = [e for e in svg.iter() if e.tag.endswith("circle")]
    assert len(points) == 50


def copy_mypy_cache(source: Path, to: Path) -> None:
    """A copy of mypy's cache ``source`` (SQLite databases, which the project's own check may
    be writing: copied with SQLite's backup, which reads only finished writes) at ``to``;
    nothing when there is none or it cannot be read (mypy then reads everything)."""
    try:
        for path in sorted(source.rglob("*")):
            if not path.is_file() or path.name.endswith(("-wal", "-shm", "-journal")):
                continue
            target = to / path.relative_to(source)
            target.parent.mkdir(parents=True, exist_ok=True)
            if path.suffix == ".db":
                with (
                    contextlib.closing(sqlite3.connect(path)) as db,
                    contextlib.closing(sqlite3.connect(target)) as copy,
                ):
                    db.backup(copy)
            else:
                shutil.copy2(path, target)
    except (OSError, sqlite3.Error):
        shutil.rmtree(to, ignore_errors=True)


def test_nimlab_ships_py_typed_and_a_users_script_passes_mypy_strict(tmp_path: Path) -> None:
    import nimlab as package

    assert (Path(package.__file__).parent / "py.typed").is_file()
    script = tmp_path / "study.py"
    script.write_text(
        textwrap.dedent(
            """
            import nimlab

            g = nimlab.grundy("kayles", 100)
            first: int = g.values[0]
            period: int | None = g.period
            order: int = nimlab.quotient("kayles").order
            value: int | None = nimlab.analyze("nim", [3, 4, 5]).grundy
            game = nimlab.Game("nim misere", [3, 4, 5], ["human:Ann", "bot:perfect:Hal"])
            game.push("1 1")
            print(first, period, order, value, game.position)
            """
        )
    )
    # mypy keeps a cache, as it does for a user: a copy of the one the project's own check left
    # (scripts/test runs it first), so that the packages nimlab uses are not read again; mypy
    # reads again whatever the copy holds for other options or other sources
    cache = tmp_path / "mypy-cache"
    copy_mypy_cache(ROOT / ".mypy_cache", cache)
    # run from the script's folder, so that mypy finds nimlab as installed (not the source tree)
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(cache), script.name],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_an_analysis_of_three_players_names_its_model_and_claims_no_two_player_outcome() -> None:
    for model in ("paranoid", "li"):
        html = nimlab.analyze("nim", [1, 2, 3], players=3, model=model)._repr_html_()
        assert f"3 players, {model} model" in html and "P-position" not in html


# -- the library speaks as the command line does ------------------------------------------------

BAD_SECONDS = [float("nan"), -1, float("inf"), "2", True, 10**100]


@pytest.mark.parametrize("seconds", BAD_SECONDS)
def test_every_computation_takes_seconds_and_refuses_a_bad_one_as_the_cli_does(
    seconds: object,
) -> None:
    calls = [
        lambda: nimlab.analyze("nim", [3, 4, 5], seconds=seconds),
        lambda: nimlab.grundy("kayles", 10, seconds=seconds),
        lambda: nimlab.grundy_table("wythoff", 3, seconds=seconds),
        lambda: nimlab.quotient("kayles", 5, seconds=seconds),
        lambda: nimlab.make_bot("perfect", seconds=seconds),
    ]
    for call in calls:
        with pytest.raises(nimlab.ArgumentError, match=r"^seconds is .*: give a number") as e:
            call()
        assert "\n" not in str(e.value)


def test_analyze_takes_seconds_or_a_budget() -> None:
    a = nimlab.analyze("kayles", [3, 4, 5], seconds=5)
    assert a.proven and a.outcome is not None
    b = nimlab.analyze("kayles", [3, 4, 5], budget=nimlab.Budget(seconds=5))
    assert (a.outcome, a.remoteness) == (b.outcome, b.remoteness)
    with pytest.raises(nimlab.ArgumentError, match="seconds or budget, not both"):
        nimlab.analyze("nim", [3], seconds=1, budget=nimlab.Budget(seconds=1))


def test_useful_reprs() -> None:
    game = nimlab.Game("kayles misere", [3, 4], ["human:Ann", "bot:perfect:Hal"], seed=1)
    assert repr(game) == ("<Game kayles misere: 3 4; Ann, Hal (perfect bot); move 1, Ann to move>")
    game = nimlab.Game("nim", [1], ["human:Ann", "human:Bob"])
    game.push("1")
    assert repr(game) == "<Game nim: 0; Ann, Bob; over after 1 move, Ann won>"
    ruleset = nimlab.Ruleset.parse("kayles misere end 2,2")
    assert repr(ruleset) == "Ruleset.parse('kayles misere end=2.2')"
    assert eval(repr(ruleset), {"Ruleset": nimlab.Ruleset}) == ruleset
    player = nimlab.Player.parse("bot:lookahead:3:Deep")
    assert eval(repr(player), {"Player": nimlab.Player}) == player
    a = nimlab.analyze("nim", [3, 4, 5])
    assert repr(a) == (
        "<Analysis of nim: 3 4 5; N-position: the player to move wins, remoteness 11, "
        "Grundy value 2; 12 moves, 1 winning>"
    )
    assert repr(nimlab.quotient("kayles")) == "<Quotient of Kayles (octal 0.77): order 40, proven>"


def test_make_bot_needs_no_rng_and_a_seed_repeats_it() -> None:
    from nimlab.core.state import GameState

    game = nimlab.Game("nim", [3, 4, 5], ["human:A", "human:B"])
    state: GameState = game.state
    assert nimlab.make_bot("perfect").choose(state).proven
    moves = [nimlab.make_bot("random", seed=7).choose(state).move for _ in range(3)]
    assert len(set(moves)) == 1
    with pytest.raises(nimlab.ArgumentError, match="rng or seed"):
        nimlab.make_bot("random", __import__("random").Random(1), seed=1)
    with pytest.raises(nimlab.PlayerError):
        nimlab.make_bot(5)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("rules", "start"),
    [("nim", [0]), ("nim", [0, 0]), ("nim misere defaults", [2, 2, 2]), ("dawson", [1, 1])],
)
def test_a_game_that_would_be_over_at_once_is_refused_as_play_refuses_it(
    rules: str, start: list[int]
) -> None:
    from nimlab.core.setup import GameSetup, start_over_message

    ruleset = nimlab.Ruleset.parse(rules)
    board = ruleset.rules.start(start)
    message = start_over_message(board)
    with pytest.raises(nimlab.PositionError) as game_error:
        nimlab.Game(ruleset, start, ["human:A", "human:B", "human:C"])
    with pytest.raises(nimlab.PositionError) as setup_error:
        GameSetup(ruleset, board, tuple(nimlab.Player.parse(p) for p in ["human:A", "human:B"]))
    assert str(game_error.value) == str(setup_error.value) == message


@pytest.mark.parametrize(
    "text",
    [
        "kayles misere end 2,2",
        "kayles misere --end 2,2",
        "kayles --misere end=2.2",
        "kayles misere --end=2,2",
        "kayles misère end [2,2]",
    ],
)
def test_a_ruleset_reads_the_command_lines_words(text: str) -> None:
    assert nimlab.Ruleset.parse(text) == nimlab.Ruleset.parse("kayles misere end=2.2")


def test_a_ruleset_word_end_needs_its_position() -> None:
    with pytest.raises(nimlab.RulesetError, match="'end' needs an end position"):
        nimlab.Ruleset.parse("nim end")


def test_a_huge_piles_label_fits_its_picture() -> None:
    svg = nimlab.Position.of([10**40, 3])._repr_svg_()
    width = float(ET.fromstring(svg).attrib["width"])
    label = "10,000,000,000,000,000,000,000,000,000,000,000,000,000 (first 40 drawn)"
    assert label in svg
    # 13 px system-ui digits and commas are at most 8 px wide: the label ends inside
    x = max(float(m) for m in re.findall(r"<text x='([\d.]+)'[^>]*font-size='13'", svg))
    assert x + len(label) * 13 * 0.62 <= width


BAD_CALLS = {
    "grundy n": lambda: nimlab.grundy("kayles", -1),
    "grundy n float": lambda: nimlab.grundy("kayles", 10.5),
    "grundy game": lambda: nimlab.grundy(None),  # type: ignore[arg-type]
    "grundy_table n": lambda: nimlab.grundy_table("wythoff", 0),
    "quotient max_heap": lambda: nimlab.quotient("kayles", "x"),  # type: ignore[arg-type]
    "analyze players": lambda: nimlab.analyze("nim", [3], players="x"),  # type: ignore[arg-type]
    "analyze model": lambda: nimlab.analyze("nim", [3], players=3, model="x"),
    "analyze max_moves": lambda: nimlab.analyze("nim", [3], max_moves=-1),
    "analyze rules": lambda: nimlab.analyze([1], [3]),  # type: ignore[arg-type]
    "analyze huge": lambda: nimlab.analyze("nim", [10**5000]),
    "Game players": lambda: nimlab.Game("nim", [3], 5),  # type: ignore[arg-type]
    "Game seed": lambda: nimlab.Game("nim", [3], seed="x"),  # type: ignore[arg-type]
    "Game first": lambda: nimlab.Game("nim", [3], first=10**5000),
    "parse_move": lambda: nimlab.Game("nim", [3]).parse_move(3),  # type: ignore[arg-type]
    "Player.parse": lambda: nimlab.Player.parse(None),  # type: ignore[arg-type]
    "parse_game": lambda: nimlab.parse_game(1),  # type: ignore[arg-type]
    "Position.of": lambda: nimlab.Position.of(3),  # type: ignore[arg-type]
    "board_for": lambda: nimlab.board_for("nim", [1]),  # type: ignore[arg-type]
    "Ruleset.parse": lambda: nimlab.Ruleset.parse(["nim"]),  # type: ignore[arg-type]
    "end position": lambda: nimlab.Ruleset().with_end_positions(3),  # type: ignore[arg-type]
    "quotient outcome": lambda: nimlab.quotient("kayles").outcome([-1]),
    "Move.from_text": lambda: nimlab.Move.from_text(None),  # type: ignore[arg-type]
}


@pytest.mark.parametrize("name", list(BAD_CALLS))
def test_every_refusal_is_a_nimlab_error_of_one_line(name: str) -> None:
    with pytest.raises(nimlab.NimlabError) as e:
        BAD_CALLS[name]()
    text = str(e.value)
    assert text and "\n" not in text and len(text) < 300
    assert not re.search(r"\b(ValueError|TypeError|OverflowError|Traceback)\b", text)


def test_a_bots_seconds_bound_its_search_and_it_says_so() -> None:
    game = nimlab.Game("nim defaults", [13, 17, 19, 23, 29], ["human:A", "human:B"])
    rushed = nimlab.make_bot("perfect", seed=1, seconds=0).choose(game.state)
    assert not rushed.proven and rushed.claim.startswith("not proven")
    assert nimlab.make_bot("perfect", seed=1, seconds=60).choose(game.state).proven


def test_the_teaching_modules_refusals_are_nimlab_errors_and_keep_the_notebooks_types() -> None:
    from nimlab import lab

    with pytest.raises(TypeError) as wrong_type:
        lab.nim_sum("3 4")  # type: ignore[arg-type]
    with pytest.raises(ValueError) as wrong_value:
        lab.exclusive_or(2, 0)
    assert isinstance(wrong_type.value, nimlab.NimlabError)
    assert isinstance(wrong_value.value, nimlab.NimlabError)
