"""``nimlab analyze``: outcome, nim-sum in binary, Grundy value, every move's value and remoteness,
and why; ``--json`` and ``--batch`` for scripts."""

# (no ``from __future__ import annotations``: Typer reads the command's annotations at every
# start, and evaluating them as strings took about 2 ms of the closed-form answers' 90)
import math
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, BinaryIO

import typer
from rich.text import Text

from nimlab.cli.app import app
from nimlab.cli.common import (
    DefaultsOption,
    EndOption,
    GameOption,
    MisereOption,
    board_from_args,
    cannot,
    console,
    err_console,
    fail,
    input_file,
    ruleset_from_options,
    seconds_check,
    showing_progress,
)
from nimlab.cli.prepare import say_when_preparing
from nimlab.core.analysis import (
    DEFAULT_MAX_MOVES,
    MODELS,
    RESULT_CELLS,
    Analysis,
    analyze,
    count_text,
    describe_move,
)
from nimlab.core.errors import NimlabError
from nimlab.core.narrate import rules_text
from nimlab.core.position import Board
from nimlab.core.ruleset import Ruleset
from nimlab.theory.budget import Budget
from nimlab.theory.engine import INTERACTIVE_POSITIONS

SHOWN_MOVES = 40
MAX_LINE = 50_000_000
DEFAULT_SECONDS = 30.0
"""The command line's time budget per position: generous, so that work, not the machine's load,
decides what is proven (bots and the web keep about 2 s per move)."""


@app.command("analyze", context_settings={"ignore_unknown_options": True})
def analyze_command(
    heaps: Annotated[
        list[str] | None,
        typer.Argument(
            help="The position: pile sizes, 3 4 5 or 3,4,5 (row lengths in games on rows of "
            "stones).",
            show_default=False,
        ),
    ] = None,
    game: GameOption = "nim",
    misere: MisereOption = False,
    end: EndOption = None,
    defaults: DefaultsOption = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    batch: Annotated[
        str | None,
        typer.Option(
            "--batch",
            help="Analyse each line of FILE (a JSON list of heaps; - for stdin): one JSON line "
            'out for each; a line that cannot be analysed gets {"error": ..., "line": N} (N its '
            "line number) and the exit status is then 1.",
            metavar="FILE",
        ),
    ] = None,
    max_moves: Annotated[
        int,
        typer.Option(
            "--max-moves",
            min=1,
            help="List every move when there are at most this many, else only winning ones.",
        ),
    ] = DEFAULT_MAX_MOVES,
    max_result_heaps: Annotated[
        int,
        typer.Option(
            "--max-result-heaps",
            min=1,
            help="When only winning moves are listed: most heaps in their results in all (each "
            "result is a whole position); the winning moves beyond it are counted, not listed.",
        ),
    ] = RESULT_CELLS,
    all_moves: Annotated[
        bool, typer.Option("--all", help="Show every move in the table, not only the first 40.")
    ] = False,
    players: Annotated[
        int,
        typer.Option(
            "--players",
            min=2,
            max=64,
            help="How many players (more than 2: every player in, the first to move).",
        ),
    ] = 2,
    model: Annotated[
        str,
        typer.Option(
            "--model",
            help="With more than 2 players: paranoid (can the mover beat all others together?) "
            "or li (who makes the last move when each wants to move as late as possible).",
            metavar="paranoid|li",
        ),
    ] = "paranoid",
    seconds: Annotated[
        float,
        typer.Option(
            "--seconds",
            callback=seconds_check(0.1, 3600),
            help=f"Time budget of the work on each position (default {DEFAULT_SECONDS:.0f} s; "
            "preparing the solvers on the first run is not counted); past it the answer says "
            "'not proven', which step ran out, and how many seconds to try next.",
        ),
    ] = DEFAULT_SECONDS,
) -> None:
    """Analyse a position: who wins, why, and the value of every legal move."""
    ruleset = ruleset_from_options(game, misere, end, defaults)
    if model not in MODELS:
        fail(f"unknown model {model!r}: choose paranoid or li")
    if model == "li" and ruleset.misere:
        fail("Li's model is for normal play: drop --misere or use --model paranoid")
    if model != "paranoid" and players == 2:
        err_console.print(
            f"note: --model {model} is for more than 2 players (--players N); with 2 players it "
            "changes nothing: the position is analysed as a two-player game.",
            style="yellow",
            highlight=False,
            soft_wrap=True,
        )
    options = _Options(max_moves, players, model, seconds, max_result_heaps)
    if batch is not None:
        if heaps:
            fail("give either heap sizes or --batch, not both")
        if batch != "-":
            input_file(batch, "batch file")  # checked before any work
        say_when_preparing()
        _run_batch(ruleset, batch, options)
        return
    unknown = [h for h in heaps or [] if h.startswith("-") and not h[1:].isdigit()]
    if unknown:
        fail(f"no such option: {unknown[0]} (see nimlab analyze --help)")
    board = board_from_args(ruleset, heaps or [])
    say_when_preparing()
    budget = options.budget()
    if as_json:
        analysis = options.analyze(ruleset, board, budget)
    else:
        with showing_progress(_searching(ruleset, board, budget, players)):
            analysis = options.analyze(ruleset, board, budget)
    if as_json:
        import json  # (here: the answers printed as text need no JSON)

        typer.echo(json.dumps(analysis.to_json()))
    else:
        _print_analysis(analysis, all_moves, seconds)


@dataclass(frozen=True)
class _Options:
    max_moves: int
    players: int
    model: str
    seconds: float
    max_result_heaps: int = RESULT_CELLS

    def budget(self) -> Budget:
        """The budget of one position's analysis."""
        return Budget(seconds=self.seconds, positions=INTERACTIVE_POSITIONS * 10)

    def analyze(self, ruleset: Ruleset, board: Board, budget: Budget | None = None) -> Analysis:
        budget = self.budget() if budget is None else budget
        return analyze(
            ruleset,
            board,
            max_moves=self.max_moves,
            budget=budget,
            players=self.players,
            model=self.model,
            max_cells=self.max_result_heaps,
        )


def _searching(ruleset: Ruleset, board: Board, budget: Budget, players: int) -> Callable[[], str]:
    """What a long analysis shows on a terminal: the positions its searches have stored so far,
    against the engine's estimate for the position when it has one."""
    estimate: list[float | None] = []

    def describe() -> str:
        if not estimate:  # (asked once the work has gone on for a while)
            known = None
            if players == 2 and ruleset.game.is_heap_game:
                known = ruleset.engine.known_cost(board.canonical)
            estimate.append(known if known is not None and math.isfinite(known) else None)
        parts = []
        quotient = sys.modules.get("nimlab.theory.quotient")  # (loaded by the questions it helps)
        building_of = getattr(quotient, "quotient_building", None)  # (None while it loads)
        if building_of is not None and ruleset.game.is_heap_game:
            building = building_of(ruleset.rule)
            if building is not None:
                heap, bound, order = building
                parts.append(f"misère quotient: heap {heap} of {bound}, order {order}")
        spent = budget.spent
        if spent or not parts:
            stored = f"{count_text(spent, 'position')} stored"
            if spent and estimate[0] is not None:
                stored += f" of about {int(estimate[0]):,}"
            parts.append(stored)
        return "analysing: " + " · ".join(parts)

    return describe


def _run_batch(ruleset: Ruleset, source: str, options: _Options) -> None:
    """One JSON line out for every line in, in order; a bad line gets ``{"error": ..., "line":
    N}`` with its 1-based line number, the others go on, and the command then exits with 1."""
    import json

    stream: BinaryIO
    if source == "-":
        stream = sys.stdin.buffer
    else:
        path = input_file(source, "batch file")
        try:
            stream = path.open("rb")
        except OSError as e:
            cannot(f"cannot read batch file {source!r}: {e.strerror or e}")
    failed = 0
    with stream:
        for number, raw in enumerate(stream, 1):
            answer = _batch_line(ruleset, raw, options)
            if "error" in answer:
                answer["line"] = number
                failed += 1
            typer.echo(json.dumps(answer))
            sys.stdout.flush()
    if failed:
        raise typer.Exit(1)


def _batch_line(ruleset: Ruleset, raw: bytes, options: _Options) -> dict[str, Any]:
    import json

    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError:
        return {"error": "the line is not UTF-8 text: write a list of heap sizes like [3, 4, 5]"}
    if not line.strip():
        return {"error": "empty line: write a list of heap sizes like [3, 4, 5]"}
    if len(line) > MAX_LINE:
        return {"error": f"the line is longer than {MAX_LINE:,} characters"}
    try:
        heaps = json.loads(line)
    except json.JSONDecodeError as e:
        return {"error": f"not JSON ({e.msg}): write a list of heap sizes like [3, 4, 5]"}
    except (ValueError, RecursionError):
        return {"error": "not a list of heap sizes (numbers over 4,300 digits or nested too deep)"}
    if not isinstance(heaps, list) or not heaps:
        return {"error": "each line must be a non-empty JSON list of heap sizes like [3, 4, 5]"}
    if not all(type(h) is int for h in heaps):
        return {"error": "heap sizes must be whole JSON numbers 0 or more, like [3, 4, 5]"}
    try:
        return options.analyze(ruleset, ruleset.rules.start(heaps)).to_json()
    except NimlabError as e:
        return {"error": str(e)}


def _shortfall_text(a: Analysis, seconds: float) -> str:
    """Which step ran out, and what to pass to go further."""
    if a.shortfall is None:
        return "no exact method answers this position within the budget"
    if a.shortfall.more_time_helps:
        more = max(60, round(4 * seconds))
        return f"{a.shortfall}: pass --seconds {more} to go further"
    return f"{a.shortfall}: the position is beyond what nimlab searches"


def _print_analysis(a: Analysis, all_moves: bool, seconds: float = 0.0) -> None:
    heaps = a.board.heaps
    shown = " ".join(map(str, heaps)) if len(heaps) <= 30 else f"{len(heaps):,} heaps"
    console.print(
        Text.assemble(
            ("Position ", "bold"), shown, ("  ·  ", "dim"), rules_text(a.ruleset, a.players)
        )
    )
    if a.model == "li" and a.last_mover is not None:
        console.print(
            Text.assemble(
                ("Last mover (Li's model): ", "bold"),
                f"{a.last_mover} (0 = the player "
                f"to move, {a.players - 1} = the player who just moved)",
            )
        )
    elif a.outcome is None:
        console.print(
            Text(f"Outcome: not proven ({_shortfall_text(a, seconds)})", style="bold yellow")
        )
    elif a.model == "paranoid":
        wins = a.outcome.next_player_wins
        console.print(
            Text.assemble(
                ("Outcome (paranoid model): ", "bold"),
                (
                    "the player to move can beat all others together"
                    if wins
                    else "the others together can stop the player to move",
                    "bold green" if wins else "bold red",
                ),
            )
        )
    elif a.terminal:  # as nimlab play says of such a start: the game is over, no move
        console.print(
            Text.assemble(
                ("Outcome: ", "bold"),
                ("the game is over (an end position: no move can be made)", "bold"),
            )
        )
    else:
        style = "bold green" if a.outcome.next_player_wins else "bold red"
        line = Text.assemble(("Outcome: ", "bold"), (a.outcome.description, style))
        if a.remoteness is not None:
            line.append(f"  (remoteness {a.remoteness})", style="dim")
        console.print(line)
    if a.grundy is not None:
        console.print(Text.assemble(("Grundy value: ", "bold"), str(a.grundy)))
    console.print()
    for sentence in a.explanation:
        console.print(Text(sentence))
    if not a.moves:
        return
    console.print()
    from rich.table import Table  # (here: an answer without moves prints no table)

    table = Table(title="Every move (value for the mover)", title_justify="left")
    table.add_column("move")
    table.add_column("result")
    table.add_column("value", justify="center")
    table.add_column("remoteness", justify="right")
    with_grundy = any(m.grundy is not None for m in a.moves)
    if with_grundy:
        table.add_column("Grundy value", justify="right")
    ordered = sorted(a.moves, key=lambda m: (not m.winning,))
    limit = None if all_moves else SHOWN_MOVES
    for m in ordered[:limit]:
        result = " ".join(map(str, m.result)) if len(m.result) <= 20 else f"{len(m.result):,} heaps"
        value = "not proven" if m.winning is None else ("wins" if m.winning else "loses")
        style = "yellow" if m.winning is None else "green" if m.winning else "red"
        cells: list[str | Text] = [
            describe_move(m.move, a.board),
            result or "(empty)",
            Text(value, style=style),
            "?" if m.remoteness is None else str(m.remoteness),
        ]
        if with_grundy:
            cells.append("?" if m.grundy is None else str(m.grundy))
        table.add_row(*cells)
    console.print(table)
    hidden = len(ordered) - len(ordered[:limit])
    if hidden:
        console.print(
            Text(
                f"... and {count_text(hidden, 'more move')} (--all shows them, --json lists them)",
                style="dim",
            )
        )
    if not a.moves_complete:
        console.print(Text(a.listing_note(), style="dim"))
