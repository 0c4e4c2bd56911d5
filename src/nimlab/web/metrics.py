"""What the server counts, in Prometheus' text format at ``/metrics`` (prometheus-client).

- ``nimlab_moves_total`` and ``nimlab_move_seconds``: move requests answered, and how long each
  took (the bots' replies within ``reply_wait`` included);
- ``nimlab_games_in_play``: the games in play in the database, read at each scrape (the club's,
  counted once however many processes serve it);
- ``nimlab_websockets_open`` and ``nimlab_requests_in_flight``: what the server holds now;
- ``nimlab_requests_refused_total{limit}``: requests (and connections, WebSockets) refused by
  each limit, named as the setting that refused them; :data:`REFUSAL_LIMITS` lists every label
  and what it refuses (the metric's help names them too), ``unavailable`` being the 503s (the
  engine or the database is overloaded or stopping);
- ``nimlab_engine_jobs_total{kind,outcome}`` and ``nimlab_engine_job_seconds{kind}``: engine work
  by outcome (``answered``; ``not_proven``: its budget ran out before any answer;
  ``cancelled``; ``failed``) and its time;
- ``nimlab_engine_jobs_waiting`` and ``nimlab_engine_jobs_running``: the engine's queue now;
- ``nimlab_db_commit_seconds`` and ``nimlab_db_batch_size``: the writer's group commits;
- ``nimlab_db_errors_total``: database operations that failed (each answered 503, details in
  the log);
- ``nimlab_change_feed_up``: 1 while the change feed (the changes other processes make) is
  read, 0 while it has lost the database (or there is none: an in-memory database);
- ``nimlab_http_requests_total{route,status}`` and ``nimlab_http_request_seconds{route}``: every
  HTTP request by its route's template (``/api/games/{key}/moves``, never the raw path;
  ``unmatched`` for paths no route serves) and status;
- the process's own from prometheus-client (CPU, memory, ``process_open_fds`` and
  ``process_max_fds``: file descriptors in use and allowed).

Several worker processes: set ``PROMETHEUS_MULTIPROC_DIR`` to an empty folder before they start;
each process then writes its values there and ``/metrics`` adds them up: counters and histograms
summed over every process that ever ran, gauges over the live ones (``livesum``; the change feed:
the lowest, ``livemin``; the games in play: the most recent count, ``livemostrecent``). The
supervisor of ``nimlab serve --workers N`` marks a worker that ended dead
(:func:`process_dead`), so a worker killed with SIGKILL leaves no gauge behind, and when it starts,
the processes of an earlier run on the same folder (:func:`forget_dead_processes`). With one
process the values are this process's.
Each hook is one call where the thing happens, cheap enough for every request.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, get_args

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)

if TYPE_CHECKING:
    from nimlab.web.live import LiveGames
    from nimlab.web.work import Job

__all__ = [
    "CONTENT_TYPE_LATEST",
    "REFUSAL_LIMITS",
    "RefusalLimit",
    "RouteMetrics",
    "change_feed",
    "database_error",
    "db_commit",
    "engine_job",
    "exposition",
    "forget_dead_processes",
    "move_answered",
    "observe",
    "process_dead",
    "refused",
]

MOVES = Counter("nimlab_moves", "Move requests answered.")
MOVE_SECONDS = Histogram(
    "nimlab_move_seconds",
    "Time to answer a move request (the bots' replies included).",
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
)
GAMES = Gauge(
    "nimlab_games_in_play",
    "Games in play in the database: the club's, counted once (whichever process answers).",
    multiprocess_mode="livemostrecent",
)
SOCKETS = Gauge("nimlab_websockets_open", "Game pages listening.", multiprocess_mode="livesum")
IN_FLIGHT = Gauge(
    "nimlab_requests_in_flight", "HTTP requests being answered.", multiprocess_mode="livesum"
)
RefusalLimit = Literal[
    "allow_host",
    "max_body",
    "read_rate",
    "create_rate",
    "move_rate",
    "register_per_hour",
    "max_games_in_play",
    "max_games_per_client",
    "max_connections_per_client",
    "max_sockets_per_client",
    "max_watchers_per_game",
    "max_concurrency",
    "network_share",
    "reserve_share",
    "unavailable",
]
"""The labels of ``nimlab_requests_refused_total``: the setting that refused (``unavailable``:
the 503s of an engine or database overloaded or stopping). The one list: :data:`REFUSAL_LIMITS`
and the metric's help are made from it, and the type checker holds every count to it."""

REFUSAL_LIMITS: dict[RefusalLimit, str] = {
    "allow_host": "a Host header this server does not answer for (421)",
    "max_body": "a request body too large (413)",
    "read_rate": "reads of the API (GET /api/...) beyond the client's rate (429)",
    "create_rate": "new games beyond the client's rate (429)",
    "move_rate": "moves beyond the client's rate (429)",
    "register_per_hour": "players registered beyond the client's rate (429)",
    "max_games_in_play": "a new game beyond the games in play the server keeps (429)",
    "max_games_per_client": "a new game beyond the client's games in play (429)",
    "max_connections_per_client": "a connection beyond the client's (429, closed)",
    "max_sockets_per_client": "a game page beyond the client's WebSockets (closed)",
    "max_watchers_per_game": "a game page beyond the game's WebSockets (closed)",
    "max_concurrency": "a connection or game page beyond what the server holds in all",
    "network_share": "beyond its network's share of games, WebSockets or connections",
    "reserve_share": "the last part of games, WebSockets or connections, kept for newcomers",
    "unavailable": "the engine or the database is overloaded or stopping (503)",
}
"""Every label of ``nimlab_requests_refused_total`` and what it refuses (:data:`RefusalLimit`)."""
assert tuple(REFUSAL_LIMITS) == get_args(RefusalLimit)


def refusal_limit(name: str) -> RefusalLimit:
    """The label of a bound another layer names as text (the storage's
    ``TooManyGamesInPlayError.limit``); ValueError for a name not in the one list."""
    if name not in REFUSAL_LIMITS:
        raise ValueError(f"{name!r} is not a label of nimlab_requests_refused_total")
    return name


REFUSED = Counter(
    "nimlab_requests_refused",
    "Requests, connections and WebSockets refused, by the setting that refused them: "
    + "; ".join(f"{name}: {what}" for name, what in REFUSAL_LIMITS.items())
    + ".",
    ["limit"],
)
for _limit in REFUSAL_LIMITS:  # each at 0 from the start: a refusal is an increase
    REFUSED.labels(_limit)
ENGINE_JOBS = Counter(
    "nimlab_engine_jobs", "Engine jobs, by kind and outcome.", ["kind", "outcome"]
)
ENGINE_SECONDS = Histogram(
    "nimlab_engine_job_seconds",
    "Engine time of a job.",
    ["kind"],
    buckets=(0.001, 0.01, 0.05, 0.1, 0.5, 1, 2, 5, 10, 20, 60),
)
COMMIT_SECONDS = Histogram(
    "nimlab_db_commit_seconds",
    "Time of a group commit of the database writer (BEGIN to COMMIT).",
    buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5),
)
BATCH_SIZE = Histogram(
    "nimlab_db_batch_size",
    "Writes committed together in one transaction.",
    buckets=(1, 2, 4, 8, 16, 32, 64, 128, 256),
)


ENGINE_WAITING = Gauge(
    "nimlab_engine_jobs_waiting", "Engine jobs waiting for a thread.", multiprocess_mode="livesum"
)
ENGINE_RUNNING = Gauge(
    "nimlab_engine_jobs_running", "Engine jobs running.", multiprocess_mode="livesum"
)
DB_ERRORS = Counter("nimlab_db_errors", "Database operations that failed (answered 503).")
FEED_UP = Gauge(
    "nimlab_change_feed_up",
    "1 while the change feed listens to the database, 0 while it has lost it.",
    multiprocess_mode="livemin",
)
HTTP_REQUESTS = Counter(
    "nimlab_http_requests",
    "HTTP requests answered, by route template and status.",
    ["route", "status"],
)
HTTP_SECONDS = Histogram(
    "nimlab_http_request_seconds",
    "Time to answer an HTTP request, by route template.",
    ["route"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
)


class RouteMetrics:
    """ASGI middleware counting every HTTP request by its route's template and status, and
    timing it (to the end of its answer). The template is the one the router matched (so the
    labels are bounded: no raw path, key or token is a label); a request no route matched is
    ``unmatched``."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500  # (an exception with no answer sent)

        async def sending(message: Any) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            route = getattr(scope.get("route"), "path", None) or "unmatched"
            series = _ROUTE_SERIES.get((route, status))
            if series is None:  # (bounded: the routes' templates times the statuses answered)
                series = _ROUTE_SERIES[route, status] = (
                    HTTP_REQUESTS.labels(route, str(status)),
                    HTTP_SECONDS.labels(route),
                )
            series[0].inc()
            series[1].observe(time.perf_counter() - started)


_ROUTE_SERIES: dict[tuple[str, int], tuple[Any, Any]] = {}
"""The counter and histogram of each route and status answered so far (asking for them by
label each time costs a lock and a validation per request)."""


def database_error() -> None:
    """A database operation failed (its request answered 503)."""
    DB_ERRORS.inc()


def change_feed(up: bool) -> None:
    """The change feed listens (``up``) or has lost the database."""
    FEED_UP.set(1 if up else 0)


def move_answered(started: float) -> None:
    """A move request answered; ``started`` is its ``time.perf_counter()`` at the start."""
    MOVES.inc()
    MOVE_SECONDS.observe(time.perf_counter() - started)


def refused(limit: RefusalLimit) -> None:
    """A request, connection or WebSocket refused by ``limit`` (:data:`REFUSAL_LIMITS`)."""
    REFUSED.labels(limit).inc()


def engine_job(job: Job, error: BaseException | None) -> None:
    """An engine job ended (with ``error``, or its answer)."""
    from nimlab.theory.budget import BudgetExceeded

    if job.budget.cancelled:
        outcome = "cancelled"
    elif error is None:
        outcome = "answered"
    elif isinstance(error, BudgetExceeded):
        outcome = "not_proven"
    else:
        outcome = "failed"
    ENGINE_JOBS.labels(job.kind, outcome).inc()
    if job.started is not None and job.finished is not None:
        ENGINE_SECONDS.labels(job.kind).observe(job.finished - job.started)


def db_commit(batch: int, seconds: float) -> None:
    """The writer committed ``batch`` jobs in one transaction taking ``seconds``."""
    BATCH_SIZE.observe(batch)
    COMMIT_SECONDS.observe(seconds)


def observe(live: LiveGames, games_in_play: int | None) -> None:
    """Set the gauges from ``live`` (on the event loop's thread, which changes it) and the
    number of games in play the database holds (``None``: it could not be read; the last
    count stands)."""
    if games_in_play is not None:
        GAMES.set(games_in_play)
    SOCKETS.set(sum(len(lg.subscribers) for lg in live.games.values()))
    workers = getattr(live, "workers", None)
    if workers is not None:
        ENGINE_WAITING.set(workers.waiting())
        ENGINE_RUNNING.set(workers.running())


def process_dead(pid: int) -> None:
    """The server process ``pid`` has ended (a supervisor reaped it): with
    ``PROMETHEUS_MULTIPROC_DIR``, its gauges leave ``/metrics`` (its counters stay counted)."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(pid)  # type: ignore[no-untyped-call]


def forget_dead_processes() -> list[int]:
    """With ``PROMETHEUS_MULTIPROC_DIR``: mark dead (:func:`process_dead`) every process whose
    gauges are in the folder but which no longer runs (a supervisor starting again on the
    folder of its last run, or one that was killed itself). Returns their pids. O(files)."""
    folder = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if not folder:
        return []
    pids: set[int] = set()
    for path in Path(folder).glob("gauge_live*_*.db"):
        number = path.stem.rpartition("_")[2]
        if number.isdigit():
            pids.add(int(number))
    dead: list[int] = []
    for pid in sorted(pids):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            dead.append(pid)
            process_dead(pid)
        except PermissionError:  # another user's process: it runs
            pass
    return dead


def exposition() -> bytes:
    """The metrics in Prometheus' text format (of every process, in multiprocess mode)."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
        return generate_latest(registry)
    return generate_latest(REGISTRY)
