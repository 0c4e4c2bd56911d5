"""``nimlab shell``: the Nim Game System shell over nimlab's database."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from nimlab.cli.app import app
from nimlab.cli.database import DbOption, open_store
from nimlab.shell import run_shell

__all__ = ["shell_command"]


@app.command("shell")
def shell_command(
    seed: Annotated[
        int | None, typer.Option("--seed", help="Seed for the AI players' random choices.")
    ] = None,
    db: DbOption = None,
) -> None:
    """The Nim Game System shell: register players and play its two games by typed commands.

    Commands: addplayer, addaiplayer, removeplayer, editplayer, resetstats, displayplayer,
    rankings, startgame, startadvancedgame, exit."""
    with open_store(db) as store:
        try:
            status = run_shell(store, sys.stdin, sys.stdout, seed=seed)
        except KeyboardInterrupt:
            sys.stdout.write("\n")
            sys.stdout.flush()
            raise typer.Exit(130) from None
    raise typer.Exit(status)
