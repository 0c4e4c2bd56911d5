"""Errors of the web API that are not the core's: who may move, which game, busy database."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nimlab.web.metrics import RefusalLimit

__all__ = [
    "TOO_DEEP",
    "ApiError",
    "Conflict",
    "Forbidden",
    "NotFound",
    "TooManyRequests",
    "Unauthorized",
    "Unavailable",
]

TOO_DEEP = "the request body is not valid JSON: its arrays and objects are nested too deeply"
"""The answer (400) to a body nested deeper than the JSON parser goes (about a thousand levels;
no request needs more than a few)."""


class ApiError(Exception):
    """An error answered with ``status`` and ``{"detail": message}``; nothing was changed."""

    status = 400

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class NotFound(ApiError):
    status = 404


class Forbidden(ApiError):
    """The request may not act for that seat (wrong token, a bot's seat)."""

    status = 403


class Conflict(ApiError):
    """Not now: out of turn, the game is over, or the request is stale."""

    status = 409


class Unavailable(ApiError):
    """The database could not store the change (it was undone)."""

    status = 503


class TooManyRequests(ApiError):
    """Over a limit per client (rate, games in play); ``retry_after`` seconds, when known."""

    status = 429

    def __init__(
        self, message: str, *, limit: RefusalLimit, retry_after: float | None = None
    ) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        self.limit: RefusalLimit = limit
        """The limit's setting (``create_rate``, ``move_rate``...), for the metrics."""


class Unauthorized(ApiError):
    """The server has an admin token and the request did not carry it."""

    status = 401
