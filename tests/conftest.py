import atexit
import logging
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

sys.path.insert(0, str(Path(__file__).parent))

import postgres  # a module of tests/, found through the path set above

# The tests never read or write the user's own data (the default database is under
# XDG_DATA_HOME): a folder of this run's instead, for this process and every child it starts.
os.environ["XDG_DATA_HOME"] = tempfile.mkdtemp(prefix="nimlab-test-data-")
atexit.register(shutil.rmtree, os.environ["XDG_DATA_HOME"], ignore_errors=True)

settings.register_profile("default", deadline=None, max_examples=100)
settings.load_profile("default")

BACKENDS = ("sqlite", "postgresql")


@pytest.fixture(autouse=True)
def _logging_as_it_was() -> Iterator[None]:
    """The logging set-up as before the test: ``nimlab serve`` run in this process (its refusals
    through the CLI runner) points the root logger at the runner's stream, which is closed when
    the test ends; a later test's log line would then fail to be written ("Logging error")."""
    root = logging.getLogger()
    names = ("uvicorn", "uvicorn.error", "uvicorn.access")
    kept = [(list(logging.getLogger(n).handlers), logging.getLogger(n).propagate) for n in names]
    handlers, level = list(root.handlers), root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
    for name, (was, propagate) in zip(names, kept, strict=True):
        logging.getLogger(name).handlers[:] = was
        logging.getLogger(name).propagate = propagate


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[str]:
    """The URL of a PostgreSQL cluster for the run: the one scripts/test started, else one of
    this process's own. Without PostgreSQL the test is skipped, or fails when the run requires
    it (scripts/test does: a test that needs PostgreSQL is never skipped silently)."""
    try:
        with postgres.cluster() as url:
            yield url
            return
    except RuntimeError as e:
        if postgres.required():
            pytest.fail(f"PostgreSQL is required for this run and cannot be started: {e}")
        pytest.skip(f"no PostgreSQL: {e}")


@pytest.fixture(scope="session")
def postgres_databases(postgres_cluster: str) -> Iterator[postgres.Databases]:
    """This worker's database, emptied for each test (see :class:`postgres.Databases`)."""
    databases = postgres.Databases(postgres_cluster)
    yield databases
    databases.close()


@pytest.fixture
def postgres_url(postgres_databases: postgres.Databases) -> str:
    """A database with nimlab's schema and no rows, for this test alone."""
    return postgres_databases.fresh()


@pytest.fixture
def fresh_postgres_url(postgres_cluster: str) -> Iterator[str]:
    """A new database with nimlab's schema and no rows, dropped after the test: for a test
    that changes the schema."""
    url = postgres.new_database(postgres_cluster)
    yield url
    postgres.drop_database(postgres_cluster, url)


@pytest.fixture(params=BACKENDS)
def database(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A new database on each backend: an SQLite file (not made yet), or a PostgreSQL URL."""
    if request.param == "sqlite":
        return str(tmp_path / "nimlab.db")
    url: str = request.getfixturevalue("postgres_url")
    return url


@pytest.fixture
def empty_postgres_url(postgres_cluster: str) -> Iterator[str]:
    """A new database without nimlab's schema (nothing in it), dropped after the test."""
    url = postgres.new_database(postgres_cluster, empty=True)
    yield url
    postgres.drop_database(postgres_cluster, url)


LEAD: tuple[tuple[str, ...], ...] = (
    (
        "test_same_answers.py",
        "test_stopping.py",
        "test_processes.py",
        "test_processes_machine.py",
        "test_backup.py",
        "test_logs.py",
        "test_deploy.py",
        "test_service.py",
    ),
    ("test_web_browser.py",),
)
"""Files that wait far more than they compute (command lines given half of the time by design,
Chromium and its server, servers stopped and started), in chains run first, each by a worker
of its own while the other workers compute (and scripts/test compiles the kernels and runs mypy
beside them). Every file that starts servers through the zygote is here: each chain's worker
forks them from one zygote (``tests/zygote.py``); one Chromium, one cold start."""


def _shares(count: int, workers: int) -> list[int]:
    """Where each worker's first share of ``count`` tests starts: pytest-xdist's ``worksteal``
    hands the collection out in contiguous shares, in order, when every worker has collected
    (it later takes the end of a busy worker's share for an idle one, never its start)."""
    starts, given = [], 0
    for left in range(workers, 0, -1):
        starts.append(given)
        given += (count - given) // left
    return starts


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Put each chain of :data:`LEAD` at the start of a worker's share (each file in its own
    order); with fewer than one worker per chain and one to compute, the chains run one after
    the other from the first worker's start. The same order in every worker, as xdist
    requires. The tests themselves do not depend on it."""
    lead = {name: (c, k) for c, chain in enumerate(LEAD) for k, name in enumerate(chain)}
    chains: list[list[pytest.Item]] = [[] for _ in LEAD]
    rest = []
    for item in items:
        if item.path.name in lead:
            chains[lead[item.path.name][0]].append(item)
        else:
            rest.append(item)
    for chain in chains:
        chain.sort(key=lambda i: lead[i.path.name][1])  # stable: each file keeps its own order
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    if workers <= len(LEAD):
        items[:] = [i for chain in chains for i in chain] + rest
        return
    ordered: list[pytest.Item] = []
    for c, start in enumerate(_shares(len(items), workers)[: len(LEAD)]):
        filler = max(0, start - len(ordered))  # the previous worker's computing
        ordered += rest[:filler]
        del rest[:filler]
        ordered += chains[c]
    items[:] = ordered + rest
