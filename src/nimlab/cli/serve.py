"""``nimlab serve``: the web app on http://127.0.0.1:8000 (FastAPI + Uvicorn)."""

from __future__ import annotations

from typing import Annotated

import typer

from nimlab.cli.app import app
from nimlab.cli.database import DbOption, open_store

__all__ = ["serve"]


def _url_host(host: str) -> str:
    """The host to print in the URL: where a browser on this machine reaches the server."""
    if host in ("", "0.0.0.0", "::"):
        return "127.0.0.1"
    return f"[{host}]" if ":" in host else host


@app.command("serve")
def serve(
    host: Annotated[
        str, typer.Option("--host", help="The address to listen on (0.0.0.0: every network).")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="The port.")] = 8000,
    db: DbOption = None,
) -> None:
    """The web app: set up, play, analyse and keep games in the browser (Ctrl+C stops it)."""
    import uvicorn

    from nimlab.web import create_app

    open_store(db).close()  # a database that cannot be used is reported now, not at startup
    typer.echo(f"nimlab is serving on http://{_url_host(host)}:{port}  (Ctrl+C stops it)")
    uvicorn.run(create_app(db), host=host, port=port, log_level="warning")
