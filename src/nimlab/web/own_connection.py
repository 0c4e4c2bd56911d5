"""A storage object on a database connection and a thread of its own (:class:`OwnConnection`),
for the work the processes serving one database share beside the games' writer: the rate
limits and held counts (:mod:`nimlab.web.limits`), the engine's claims (:mod:`nimlab.web.claims`).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
from collections.abc import Callable
from typing import Generic, Protocol, TypeVar

from nimlab.storage import StorageError

__all__ = ["OwnConnection"]

T = TypeVar("T")


class _Closable(Protocol):
    def close(self) -> None: ...


C = TypeVar("C", bound=_Closable)


class OwnConnection(Generic[C]):
    """The object ``open()`` makes (on a connection of its own), used only on this object's
    thread (``name``): opened when first needed, and opened again by the next call after a
    call raised :class:`~nimlab.storage.StorageError` (the database went away)."""

    def __init__(self, open: Callable[[], C], name: str) -> None:
        self._open = open
        self._object: C | None = None
        self._thread = concurrent.futures.ThreadPoolExecutor(1, name)

    def _call(self, fn: Callable[[C], T]) -> T:
        if self._object is None:
            self._object = self._open()
        try:
            return fn(self._object)
        except StorageError:
            self._object.close()
            self._object = None
            raise

    async def run(self, fn: Callable[[C], T]) -> T:
        """``fn(object)`` on the thread; raises what it raises."""
        return await asyncio.wrap_future(self._thread.submit(self._call, fn))

    def submit(self, fn: Callable[[C], T]) -> concurrent.futures.Future[T]:
        """``fn(object)`` on the thread, not waited for."""
        return self._thread.submit(self._call, fn)

    def close(self, last: Callable[[C], None] | None = None) -> None:
        """Finish what was handed to the thread, call ``last(object)`` when it is open (its
        storage errors ignored), then close it and stop the thread."""

        def close() -> None:
            if self._object is not None:
                if last is not None:
                    with contextlib.suppress(StorageError):
                        last(self._object)
                self._object.close()
                self._object = None

        self._thread.submit(close)
        self._thread.shutdown(wait=True)
