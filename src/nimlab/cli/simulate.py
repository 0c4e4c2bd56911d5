"""``nimlab simulate``: many bot-against-bot games (self-play), on every core, with win
rates and 95 % confidence intervals."""

from __future__ import annotations

import json
import time
from typing import Annotated, Any, cast

import typer
from rich.table import Table
from rich.text import Text

from nimlab.cli.app import app
from nimlab.cli.common import (
    DefaultsOption,
    EndOption,
    GameOption,
    MisereOption,
    PileCountOption,
    PileSizeOption,
    check_first_auto,
    console,
    fail,
    heap_words,
    pile_count_default,
    progress_bar,
    ruleset_from_options,
)
from nimlab.core.narrate import player_label, rules_text
from nimlab.core.players import unique_players
from nimlab.core.position import parse_heaps
from nimlab.core.setup import GameSetup
from nimlab.core.simulation import (
    SIM_FIRST_CHOICES,
    SimFirst,
    SimulationConfig,
    SimulationResult,
    default_jobs,
    parse_range,
    simulate,
)
from nimlab.core.words import count_text, rate_text

__all__ = ["simulate_command"]

DEFAULT_BOTS = ("bot:perfect", "bot:classic")


@app.command("simulate")
def simulate_command(
    heaps: Annotated[
        list[str] | None,
        typer.Argument(help="Pile sizes (the same as --piles).", show_default=False),
    ] = None,
    games: Annotated[int, typer.Option("--games", "-n", min=1, help="How many games.")] = 1000,
    player: Annotated[
        list[str] | None,
        typer.Option(
            "--player",
            help="A bot, in seat order (repeatable, two or more): bot:KIND[:NAME][:error=R]. "
            "(default: bot:perfect and bot:classic)",
            metavar="SPEC",
            show_default=False,
        ),
    ] = None,
    piles: Annotated[
        list[str] | None,
        typer.Option(
            "--piles",
            "-p",
            help="Start every game from these piles (default: deal random piles each game).",
            metavar="N N ...",
            show_default=False,
        ),
    ] = None,
    pile_count: PileCountOption = None,
    pile_size: PileSizeOption = "1-9",
    game: GameOption = "nim",
    misere: MisereOption = False,
    end: EndOption = None,
    defaults: DefaultsOption = False,
    first: Annotated[
        str,
        typer.Option(
            "--first",
            help="Who moves first: alternate (seat by seat, game by game), first, random, or "
            "auto (the bot that can win).",
            metavar="alternate|first|random|auto",
        ),
    ] = "alternate",
    seed: Annotated[
        int, typer.Option("--seed", help="Seed: the same seed gives the same results.")
    ] = 0,
    jobs: Annotated[
        int | None,
        typer.Option(
            "--jobs",
            "-j",
            min=1,
            help="Worker processes (default: one per core).",
            show_default=False,
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Play many bot-against-bot games and report each bot's win rate with a 95 % confidence
    interval (Wilson)."""
    ruleset = ruleset_from_options(game, misere, end, defaults)
    if first not in SIM_FIRST_CHOICES:
        fail(f"--first {first!r}: choose {', '.join(SIM_FIRST_CHOICES)}")
    sizes = heap_words((piles or []) + (heaps or []))
    start = parse_heaps(sizes) if sizes else None
    bots = tuple(player or DEFAULT_BOTS)
    check_first_auto(first, len(bots), "--first alternate, first or random")
    if start is not None:  # the same checks as a game played from it (nimlab play)
        GameSetup(ruleset, ruleset.rules.start(start), unique_players(bots))
    config = SimulationConfig(
        ruleset,
        bots,
        start=start,
        pile_count=parse_range(pile_count_default(ruleset, pile_count), "--pile-count"),
        pile_size=parse_range(pile_size, "--pile-size"),
        first=cast(SimFirst, first),
        seed=seed,
    )
    workers = jobs or default_jobs()
    began = time.perf_counter()
    with progress_bar("simulating", "m of n", "remaining") as progress:
        task = progress.add_task("games", total=games)
        result = simulate(config, games, jobs=workers, progress=lambda n: progress.advance(task, n))
    seconds = time.perf_counter() - began
    if as_json:
        out: dict[str, Any] = {
            "ruleset": str(ruleset),
            "start": list(start)
            if start is not None
            else {"pile_count": list(config.pile_count), "pile_size": list(config.pile_size)},
            "first": first,
            "seed": seed,
            "jobs": workers,
            "seconds": round(seconds, 3),
        }
        out.update(result.to_json())
        typer.echo(json.dumps(out))
        return
    _print_result(config, result, first, seconds, workers)


def _print_result(
    config: SimulationConfig, result: SimulationResult, first: str, seconds: float, workers: int
) -> None:
    if config.start is not None:
        start = "from " + " ".join(map(str, config.start))
    else:
        count, size = config.pile_count, config.pile_size
        n = str(count[0]) if count[0] == count[1] else f"{count[0]}-{count[1]}"
        s = str(size[0]) if size[0] == size[1] else f"{size[0]}-{size[1]}"
        start = f"random piles ({n} {'pile' if n == '1' else 'piles'} of {s})"
    order = {
        "alternate": "the first move alternates",
        "first": "seat 1 moves first",
        "random": "a random player moves first",
        "auto": "the bot that can win moves first",
    }[first]
    console.print(
        Text(
            f"{count_text(result.games, 'game')} of "
            f"{rules_text(config.ruleset, len(config.players))}",
            style="bold",
        ),
        soft_wrap=True,
    )
    console.print(f"{start}; {order}.", highlight=False, soft_wrap=True)
    table = Table(show_edge=False, pad_edge=False)
    table.add_column("seat", justify="right")
    table.add_column("player")
    table.add_column("wins", justify="right")
    table.add_column("win rate", justify="right")
    table.add_column("95% interval", justify="right")
    for i, p in enumerate(result.players):
        lo, hi = result.interval(i)
        table.add_row(
            str(i + 1),
            player_label(p),
            f"{result.wins[i]:,}",
            f"{result.win_rate(i):.1%}",
            f"{lo:.1%} - {hi:.1%}",
        )
    console.print(table)
    mean = result.moves / result.games if result.games else 0
    first_rate = result.first_wins / result.games if result.games else 0
    rate = result.games / seconds if seconds > 0 else 0
    console.print(
        Text(
            f"{mean:.1f} moves a game on average; the player who moved first won {first_rate:.1%}. "
            f"{seconds:.1f} s on {workers} process{'es' if workers != 1 else ''} "
            f"({rate_text(rate, 'game')}).",
            style="dim",
        ),
        soft_wrap=True,
    )
