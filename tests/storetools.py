"""Helpers of the storage tests: a writer held busy, so that the jobs submitted meanwhile make one
group, and a connection that logs the statements it runs."""

from __future__ import annotations

import sqlite3
import threading
from collections import Counter
from typing import Any

from nimlab.storage import Store, StoreWriter


def held_writer(store: Store) -> tuple[StoreWriter, threading.Event]:
    """A writer busy with a first job until the returned event is set (so that the jobs
    submitted meanwhile are processed together, as one group)."""
    writer = StoreWriter(store)
    gate, holding = threading.Event(), threading.Event()

    def hold(_: Store) -> None:
        holding.set()
        gate.wait()

    writer.submit(hold)
    assert holding.wait(60)
    return writer, gate


class StatementLog:
    """A connection that logs each statement it runs (``execute`` and ``executemany``) with the
    thread that ran it; everything else is the connection's own."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.seen: list[tuple[str, int]] = []

    @property
    def statements(self) -> set[str]:
        """The distinct statements run."""
        return {sql for sql, _ in self.seen}

    @property
    def counts(self) -> Counter[str]:
        """How many times each statement ran."""
        return Counter(sql for sql, _ in self.seen)

    def execute(self, sql: str, *args: Any) -> Any:
        self.seen.append((sql, threading.get_ident()))
        return self.conn.execute(sql, *args)

    def executemany(self, sql: str, *args: Any) -> Any:
        self.seen.append((sql, threading.get_ident()))
        return self.conn.executemany(sql, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.conn, name)
