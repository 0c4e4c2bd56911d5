"""``nimlab players ...`` and ``nimlab rankings``: the player registry with statistics."""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from nimlab.cli.app import FullHelpGroup, app
from nimlab.cli.common import console, err_console, fail
from nimlab.cli.database import DbOption, open_store
from nimlab.core.players import BOT_CHOICES, parse_bot
from nimlab.core.words import count_text
from nimlab.storage import PlayerRecord

__all__ = ["players_app"]

players_app = typer.Typer(
    help="The player registry: humans and AI players with their statistics.",
    cls=FullHelpGroup,
    no_args_is_help=True,
)
app.add_typer(players_app, name="players")

UsernameArg = Annotated[
    str, typer.Argument(help="The player's username (case matters).", show_default=False)
]
GivenOption = Annotated[str, typer.Option("--given", help="Given name.", show_default=False)]
FamilyOption = Annotated[str, typer.Option("--family", help="Family name.", show_default=False)]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON.")]
YesOption = Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")]


def _confirm(question: str, yes: bool) -> None:
    """Ask a y/n question on stdin unless ``yes``; anything but y/yes stops the command."""
    if yes:
        return
    console.print(f"{question} (y/n) ", end="", highlight=False, soft_wrap=True)
    answer = sys.stdin.readline()
    if not answer:
        console.print()
    if answer.strip().lower() not in ("y", "yes"):
        err_console.print("Nothing was changed.")
        raise typer.Exit(1)


def _table(players: list[PlayerRecord], *, rank: bool = False) -> Table:
    table = Table(show_edge=False, pad_edge=False)
    if rank:
        table.add_column("#", justify="right")
    table.add_column("username", style="bold")
    table.add_column("name")
    table.add_column("kind")
    table.add_column("games", justify="right")
    table.add_column("wins", justify="right")
    table.add_column("win rate", justify="right")
    for i, p in enumerate(players, 1):
        kind = "human" if p.bot is None else f"AI ({p.bot})"
        row = [
            p.username,
            p.full_name,
            kind,
            str(p.games_played),
            str(p.games_won),
            f"{p.win_percent}%",
        ]
        table.add_row(*([str(i)] if rank else []), *row)
    return table


@players_app.command("add")
def add(
    username: UsernameArg, given: GivenOption, family: FamilyOption, db: DbOption = None
) -> None:
    """Register a human player."""
    with open_store(db) as store:
        p = store.add_player(username, given=given, family=family)
    console.print(f"Added {p.username} ({p.full_name}).", highlight=False, soft_wrap=True)


@players_app.command("add-ai")
def add_ai(
    username: UsernameArg,
    given: GivenOption,
    family: FamilyOption,
    bot: Annotated[
        str,
        typer.Option("--bot", help=f"How it plays: {BOT_CHOICES}, with :error=R."),
    ] = "perfect",
    db: DbOption = None,
) -> None:
    """Register an AI player (it plays with the given bot)."""
    spec = str(parse_bot(bot))
    with open_store(db) as store:
        p = store.add_player(username, given=given, family=family, bot=spec)
    console.print(
        f"Added AI player {p.username} ({p.full_name}, {spec} bot).",
        highlight=False,
        soft_wrap=True,
    )


@players_app.command("remove")
def remove(
    username: Annotated[
        str | None, typer.Argument(help="The player to remove.", show_default=False)
    ] = None,
    all_players: Annotated[bool, typer.Option("--all", help="Remove every player.")] = False,
    yes: YesOption = False,
    db: DbOption = None,
) -> None:
    """Remove a player, or every player with --all. Their past games stay in the history."""
    if (username is None) == (not all_players):
        fail("give a USERNAME or --all (not both)")
    with open_store(db) as store:
        if username is not None:
            store.remove_player(username)
            console.print(f"Removed {username}.", highlight=False, soft_wrap=True)
            return
        _confirm("Are you sure you want to remove all players?", yes)
        count = store.remove_all_players()
    console.print(f"Removed {count_text(count, 'player')}.")


@players_app.command("edit")
def edit(
    username: UsernameArg,
    given: Annotated[
        str | None, typer.Option("--given", help="New given name.", show_default=False)
    ] = None,
    family: Annotated[
        str | None, typer.Option("--family", help="New family name.", show_default=False)
    ] = None,
    db: DbOption = None,
) -> None:
    """Change a player's given and/or family name."""
    if given is None and family is None:
        fail("give --given and/or --family")
    with open_store(db) as store:
        p = store.edit_player(username, given=given, family=family)
    console.print(f"{p.username} is now {p.full_name}.", highlight=False, soft_wrap=True)


@players_app.command("show")
def show(
    username: Annotated[
        str | None, typer.Argument(help="One player (default: everyone).", show_default=False)
    ] = None,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Show one player, or every player sorted by username, with their statistics."""
    with open_store(db, read_only=True) as store:
        players = [store.get_player(username)] if username is not None else store.players()
    if as_json:
        typer.echo(json.dumps([p.to_json() for p in players]))
        return
    if not players:
        console.print(
            "No players are registered yet (nimlab players add USERNAME --given G --family F)."
        )
        return
    console.print(_table(players))


@players_app.command("reset-stats")
def reset_stats(
    username: Annotated[
        str | None, typer.Argument(help="The player (or --all).", show_default=False)
    ] = None,
    all_players: Annotated[
        bool, typer.Option("--all", help="Reset every player's statistics.")
    ] = False,
    yes: YesOption = False,
    db: DbOption = None,
) -> None:
    """Set games played and won back to 0 for a player, or everyone with --all."""
    if (username is None) == (not all_players):
        fail("give a USERNAME or --all (not both)")
    with open_store(db) as store:
        if username is not None:
            store.reset_stats(username)
            console.print(f"Statistics of {username} reset.", highlight=False, soft_wrap=True)
            return
        _confirm("Are you sure you want to reset all player statistics?", yes)
        store.reset_all_stats()
    console.print("All statistics reset.")


@app.command("rankings")
def rankings(
    asc: Annotated[bool, typer.Option("--asc", help="Lowest win rate first.")] = False,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, help="How many players.")] = 10,
    all_players: Annotated[
        bool, typer.Option("--all", help="Every player, not only the top --limit.")
    ] = False,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Players by win rate (ties by username; top 10 by default)."""
    with open_store(db, read_only=True) as store:
        players = store.rankings(ascending=asc, limit=None if all_players else limit)
    if as_json:
        typer.echo(json.dumps([p.to_json() for p in players]))
        return
    if not players:
        console.print("No players are registered yet.")
        return
    console.print(Text("Rankings by win rate" + (" (lowest first)" if asc else ""), style="bold"))
    console.print(_table(players, rank=True))
