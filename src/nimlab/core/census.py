"""Running a census of octal games (:mod:`nimlab.theory.census`): in this process, on the
machine's cores, or on a Dask distributed cluster.

Every game is one task (its own size and time bound, :func:`~nimlab.theory.census.census_row`);
rows come back as they finish, in any order, and ``done(row)`` is called for each in this
process, so a caller can keep them (and resume a census from them) as they arrive.
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any

from nimlab.core.simulation import default_jobs
from nimlab.theory.census import CensusRow, census_row, mark_identical
from nimlab.theory.octal import TakeAndBreak

__all__ = ["default_jobs", "run_census", "scheduler_unreachable"]

_CONNECT_SECONDS = 5
"""How long to try reaching a cluster's scheduler before giving up."""


def scheduler_unreachable(address: str, seconds: float = _CONNECT_SECONDS) -> str | None:
    """Why the scheduler at ``address`` (``tcp://HOST:PORT``, ``tls://HOST:PORT`` or
    ``HOST:PORT``) cannot be reached, in words, or ``None`` when a connection to it opens
    within ``seconds`` (other kinds of address are not tried: ``None``). Checked before a
    census starts, so that one that cannot run fails at once, leaving nothing behind."""
    scheme, _, rest = address.rpartition("://")
    if scheme not in ("", "tcp", "tls"):
        return None
    host, _, port = rest.rpartition(":")
    if not host or not port.isdigit():
        return f"{address!r} is not an address like tcp://HOST:PORT"
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=seconds).close()
    except TimeoutError:
        return f"no answer from {address} within {seconds:g} s"
    except OSError as e:
        return f"cannot connect to {address}: {e.strerror or e}"
    return None


def run_census(
    rules: Iterable[TakeAndBreak],
    *,
    max_values: int,
    seconds: float | None,
    jobs: int = 1,
    scheduler: Any = None,
    done: Callable[[CensusRow], None] | None = None,
) -> list[CensusRow]:
    """Compute a census row for every rule and return the rows in the order of ``rules``, with
    identical proven games marked (:func:`~nimlab.theory.census.mark_identical`).

    ``jobs`` > 1 runs that many worker processes; ``scheduler`` (an address such as
    ``tcp://host:8786``, or a ``distributed.Client``) runs every game as a task on that Dask
    cluster instead (needs the ``distributed`` package: ``pip install nimlab[cluster]``).
    ``done(row)`` is called in this process as each row arrives. Cost: the sum of the rows'.
    """
    todo = list(rules)
    rows: dict[str, CensusRow] = {}

    def arrived(row: CensusRow) -> None:
        rows[row.code] = row
        if done is not None:
            done(row)

    if scheduler is not None:
        _on_cluster(todo, max_values, seconds, scheduler, arrived)
    elif jobs > 1 and len(todo) > 1:
        with ProcessPoolExecutor(max_workers=min(jobs, len(todo))) as pool:
            futures = [pool.submit(census_row, rule, max_values, seconds) for rule in todo]
            try:
                for future in as_completed(futures):
                    arrived(future.result())
            except BaseException:
                for future in futures:
                    future.cancel()
                raise
    else:
        for rule in todo:
            arrived(census_row(rule, max_values, seconds))
    return mark_identical(rows[rule.code] for rule in todo)


def _on_cluster(
    todo: list[TakeAndBreak],
    max_values: int,
    seconds: float | None,
    scheduler: Any,
    arrived: Callable[[CensusRow], None],
) -> None:
    try:
        import distributed
    except ImportError as exc:
        raise RuntimeError(
            "running on a cluster needs the 'distributed' package: pip install 'nimlab[cluster]'"
        ) from exc
    dask: Any = distributed  # untyped
    own = not isinstance(scheduler, dask.Client)
    client = dask.Client(scheduler, timeout=_CONNECT_SECONDS) if own else scheduler
    try:
        futures = client.map(census_row, todo, max_values=max_values, seconds=seconds, pure=False)
        try:
            for future in dask.as_completed(futures):
                arrived(future.result())
        except BaseException:
            client.cancel(futures)
            raise
    finally:
        if own:
            client.close()
