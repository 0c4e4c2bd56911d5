"""A throwaway PostgreSQL cluster for the tests, and a fresh database per test.

``scripts/test`` starts one cluster for the whole run (``python tests/postgres.py start DIR``
prints its URL; ``stop DIR`` stops it and deletes DIR), exports the URL as
:data:`URL_ENV` and sets :data:`REQUIRED_ENV`, so a test that cannot reach PostgreSQL fails
rather than being skipped. Without :data:`URL_ENV` (pytest run directly), the tests start a
cluster of their own.

The cluster: ``initdb`` into a temporary folder (as the ``postgres`` user when run as root),
listening only on a unix socket in that folder, with ``fsync``, ``synchronous_commit`` and
``full_page_writes`` off (a test's data need not survive a crash of the machine).
"""

from __future__ import annotations

import contextlib
import glob
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

URL_ENV = "NIMLAB_TEST_POSTGRES"
"""The URL of a running cluster's ``postgres`` database (a superuser may create databases)."""

REQUIRED_ENV = "NIMLAB_TEST_POSTGRES_REQUIRED"
"""When set (not empty, not 0): a test that needs PostgreSQL fails if it cannot have it."""

SETTINGS = (
    "-c listen_addresses='' -c fsync=off -c synchronous_commit=off -c full_page_writes=off "
    "-c max_connections=200 -c shared_buffers=32MB"
)

PASSWORD_ROLE, PASSWORD = "nimlab_password", "right-password"
"""A role of the cluster that logs in only with its password (the others need none)."""

TEMPLATE = "nimlab_template"
"""The database each test's database is copied from: nimlab's schema, no rows."""


def required() -> bool:
    return os.environ.get(REQUIRED_ENV, "") not in ("", "0")


def binaries() -> Path | None:
    """The folder of ``initdb`` and ``pg_ctl``: on the PATH, else Debian's newest
    ``/usr/lib/postgresql/*/bin``; ``None`` when PostgreSQL is not installed."""
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return Path(found).resolve().parent
    versions = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda p: (
            int(Path(p).parent.parent.name) if Path(p).parent.parent.name.isdigit() else 0
        ),
    )
    return Path(versions[-1]).parent if versions else None


def _as_owner(command: list[str]) -> list[str]:
    """``command`` run as the ``postgres`` user when we are root (PostgreSQL refuses root)."""
    if os.geteuid() == 0:
        return ["runuser", "-u", "postgres", "--", *command]
    return command


def url_of(root: Path, database: str = "postgres") -> str:
    return f"postgresql://postgres@/{database}?host={root}"


def start(root: Path) -> str:
    """Create and start a cluster in the empty folder ``root``; returns its URL. Raises
    RuntimeError saying what failed."""
    bin_dir = binaries()
    if bin_dir is None:
        raise RuntimeError(
            "PostgreSQL is not installed (no initdb): apt-get install postgresql, or run "
            "scripts/test, which installs it"
        )
    root.mkdir(parents=True, exist_ok=True)
    if os.geteuid() == 0:
        shutil.chown(root, "postgres", "postgres")
    data = root / "data"
    env = {**os.environ, "LC_ALL": "C"}
    run = [
        str(bin_dir / "initdb"),
        "-D",
        str(data),
        "-U",
        "postgres",
        "-A",
        "trust",
        "-E",
        "UTF8",
        "--no-sync",
        "--locale=C",
    ]
    done = subprocess.run(_as_owner(run), capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"initdb failed: {done.stderr or done.stdout}")
    hba = data / "pg_hba.conf"  # one role that must give its password (the others need none)
    hba.write_text(f"local all {PASSWORD_ROLE} scram-sha-256\n" + hba.read_text())
    options = f"{SETTINGS} -c unix_socket_directories='{root}'"
    ctl = [str(bin_dir / "pg_ctl"), "-D", str(data), "-l", str(root / "log"), "-o", options]
    done = subprocess.run(_as_owner([*ctl, "-w", "-t", "120", "start"]), capture_output=True,
                          text=True, env=env)  # fmt: skip
    if done.returncode != 0:
        log = (root / "log").read_text(errors="replace") if (root / "log").exists() else ""
        raise RuntimeError(f"pg_ctl start failed: {done.stderr or done.stdout}\n{log}")
    url = url_of(root)
    _admin(
        url,
        f"CREATE DATABASE {TEMPLATE} TEMPLATE template0",
        f"CREATE ROLE {PASSWORD_ROLE} LOGIN PASSWORD '{PASSWORD}'",
    )
    from nimlab.storage import Store

    Store.open(url_of(root, TEMPLATE)).close()  # the schema, made once for every test
    return url


def stop(root: Path) -> None:
    """Stop the cluster in ``root`` (at once: its data are thrown away) and delete ``root``."""
    bin_dir = binaries()
    if bin_dir is not None and (root / "data").exists():
        subprocess.run(
            _as_owner([str(bin_dir / "pg_ctl"), "-D", str(root / "data"), "-m", "immediate",
                       "-w", "stop"]),
            capture_output=True,
        )  # fmt: skip
    shutil.rmtree(root, ignore_errors=True)


def _admin(url: str, *statements: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        for statement in statements:
            conn.execute(statement)


_DROP_TRIGGERS = """DO $$ DECLARE r record; BEGIN
  FOR r IN SELECT t.tgname, c.relname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
           WHERE NOT t.tgisinternal LOOP
    EXECUTE format('DROP TRIGGER %I ON %I', r.tgname, r.relname);
  END LOOP;
  FOR r IN SELECT p.oid::regprocedure AS f FROM pg_proc p
           JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'public' LOOP
    EXECUTE 'DROP FUNCTION ' || r.f;
  END LOOP;
END $$"""
"""Drops the triggers and functions a test made (to make a statement fail on purpose)."""


class Databases:
    """One database of this process (a pytest worker) in the cluster of ``url``, emptied for
    each test by :meth:`fresh` (a few milliseconds; making a database costs 30 to 500 ms
    depending on the machine's load). Emptying ends every other connection to it (what a
    previous test left open), drops the triggers and functions a test made, deletes every row,
    restarts the ids and sets the schema's version back; a test that changes the tables
    themselves takes a database of its own (:func:`new_database`)."""

    def __init__(self, url: str) -> None:
        self.cluster = url
        self.url = ""
        self._admin: Any = None
        self._reset = ""
        self._make()

    def _make(self) -> None:
        import psycopg

        self.url = new_database(self.cluster)
        self._admin = psycopg.connect(self.url, autocommit=True)
        tables = [
            str(r[0])
            for r in self._admin.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename"
            )
        ]
        identities = self._admin.execute(
            "SELECT table_name, column_name FROM information_schema.columns "
            "WHERE table_schema = 'public' AND is_identity = 'YES'"
        ).fetchall()
        version = self._admin.execute("SELECT version FROM schema_version").fetchone()[0]
        self._reset = ";".join(
            [
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid()",
                "BEGIN",
                _DROP_TRIGGERS,
                "SET LOCAL session_replication_role = replica",  # no foreign key checks
                *(f"DELETE FROM {t}" for t in tables),
                *(f"ALTER TABLE {t} ALTER COLUMN {c} RESTART" for t, c in identities),
                f"INSERT INTO schema_version (version) VALUES ({int(version)})",
                "COMMIT",
            ]
        )

    def fresh(self) -> str:
        """The database's URL, emptied (see the class docstring)."""
        try:
            self._admin.execute(self._reset)
        except Exception:  # its schema was changed, or it is gone: use a new one
            self.close()
            self._make()
        return self.url

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._admin.close()
        drop_database(self.cluster, self.url)


def new_database(url: str, *, empty: bool = False) -> str:
    """A new database in the cluster of ``url`` with nimlab's schema and no rows (``empty``:
    without the schema either); returns its URL. About 30 ms."""
    name = f"t_{secrets.token_hex(6)}"
    template = "template0" if empty else TEMPLATE
    _admin(url, f"CREATE DATABASE {name} TEMPLATE {template} STRATEGY FILE_COPY")
    return url.replace("/postgres?", f"/{name}?", 1)


def database_name(url: str) -> str:
    """The name of the database a URL names."""
    from psycopg.conninfo import conninfo_to_dict

    return str(conninfo_to_dict(url)["dbname"])


def drop_database(url: str, database_url: str) -> None:
    """Drop the database of ``database_url`` (closing its connections) in the cluster of
    ``url``."""
    name = database_name(database_url)
    with contextlib.suppress(Exception):
        _admin(url, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@contextlib.contextmanager
def cluster() -> Iterator[str]:
    """A cluster for the duration of the block: the one :data:`URL_ENV` names, else a new one
    (stopped after)."""
    given = os.environ.get(URL_ENV)
    if given:
        yield given
        return
    root = Path(tempfile.mkdtemp(prefix="nimlab-pg-"))
    try:
        yield start(root)
    finally:
        stop(root)


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in ("start", "stop"):
        print("usage: python tests/postgres.py start|stop DIR", file=sys.stderr)
        return 2
    root = Path(argv[1])
    if argv[0] == "stop":
        stop(root)
        return 0
    try:
        print(start(root))
    except RuntimeError as e:
        print(f"error: {e}", file=sys.stderr)
        stop(root)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
