"""The server's log: one line per error answer, with the request id the answer carries too.

:class:`RequestIds` (ASGI middleware, outermost) gives every HTTP request an id (the client's
``X-Request-ID`` when it is a short plain word, else a new one), answers it in the
``X-Request-ID`` header, and logs one line for each answer of status 400 or more: status,
method, path (never the query string), client, and the answer's ``detail``. Error answers also
carry the id as their JSON field ``request_id`` (see :func:`request_id`).

:func:`configure` sets up the log (``--log-level``, ``--log-format text|json``) on stderr, with
:class:`Redact`: no token or secret is ever written (the admin token, seat tokens, anything
after ``token=`` or ``Bearer``). Both formats write every message and field through
:func:`escape_controls`: a path, header or name a request sent cannot end a log line, start a
forged one, or colour a terminal.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import json
import logging
import random
import re
import sys
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from nimlab.web import metrics

__all__ = [
    "JsonFormatter",
    "Redact",
    "RequestIds",
    "TextFormatter",
    "configure",
    "escape_controls",
    "log",
    "new_request_id",
    "request_id",
]

log = logging.getLogger("nimlab.web")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

_REQUEST_ID: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "nimlab_request_id", default=None
)
_GIVEN_ID = re.compile(r"[A-Za-z0-9._-]{1,64}")
_SECRETS = re.compile(
    r"((?:token|authorization|bearer|secret|password)[\"']?\s*[=:]?\s*[\"']?(?:bearer\s+)?)"
    r"[^\s\"'&,;]{12,}",
    re.IGNORECASE,
)
"""A value of 12 characters or more after a word that announces a secret (seat tokens have 24)."""


_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escaped(found: re.Match[str]) -> str:
    char = found.group()
    return _SHORT.get(char) or (
        f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}"
    )


def escape_controls(text: str) -> str:
    """``text`` with every control character written as its escape (``\\n``, ``\\r``,
    ``\\t``, ``\\x00``, ``\\x1b``, ``\\x85``, ``\\u2028``...): the C0 and C1 controls,
    DEL, and the Unicode line and paragraph separators; so an ANSI escape sequence loses its
    ESC. Anything a request sent is logged through it (both log formats do). O(len(text))."""
    return _CONTROLS.sub(_escaped, text) if _CONTROLS.search(text) else text


def _escape_lines(text: str, indent: str = "") -> str:
    """A traceback's lines, each escaped (an exception's message may hold what a request sent)
    and indented by ``indent``."""
    return "\n".join(indent + escape_controls(line) for line in text.split("\n"))


FAILED = "the server failed to answer this request (its log says why, under this request_id)"


STOPPING = "the server is stopping: try again in a moment"


async def _answer_json(send: Send, status: int, detail: str, rid: str) -> None:
    body = json.dumps({"detail": detail, "request_id": rid}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if status == 503:
        headers.append((b"retry-after", b"5"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def new_request_id() -> str:
    """A new request id: 16 hex digits from the interpreter's generator (reseeded in every
    process forked from this one), an id to find a request by in the log, not a secret (the
    client gets it): no system call per request, as the system's generator would make."""
    return f"{random.getrandbits(64):016x}"


def request_id() -> str | None:
    """The id of the request being answered (``None`` outside a request)."""
    return _REQUEST_ID.get()


class Redact(logging.Filter):
    """Removes secrets from every record: the ``secrets`` given (the admin token), and any
    value after ``token``, ``Authorization``, ``Bearer``, ``secret`` or ``password``."""

    def __init__(self, secrets: tuple[str, ...] = ()) -> None:
        super().__init__()
        self.secrets = tuple(s for s in secrets if s)

    def clean(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, "[hidden]")
        return _SECRETS.sub(r"\1[hidden]", text)

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = self.clean(record.getMessage())
        record.args = None
        if record.exc_info:
            record.exc_text = self.clean(logging.Formatter().formatException(record.exc_info))
            record.exc_info = None
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, the request's fields."""

    FIELDS = ("request_id", "status", "method", "path", "client")

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": escape_controls(record.getMessage()),
        }
        for name in self.FIELDS:
            value = getattr(record, name, None)
            if value is not None:
                out[name] = escape_controls(value) if isinstance(value, str) else value
        if record.exc_text:
            out["exception"] = _escape_lines(record.exc_text)
        return json.dumps(out, ensure_ascii=False)


class TextFormatter(logging.Formatter):
    """A line for people: time, level, message; a traceback follows on lines of its own, each
    indented (no line of it can pass for a log line)."""

    def format(self, record: logging.LogRecord) -> str:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(record.created))
        line = f"{stamp} {record.levelname:<7} {escape_controls(record.getMessage())}"
        if record.exc_text:
            line += "\n" + _escape_lines(record.exc_text, "    ")
        return line


def configure(level: str = "info", fmt: str = "text", secrets: tuple[str, ...] = ()) -> None:
    """Send the log (nimlab's and Uvicorn's) to stderr at ``level`` in ``fmt`` (``text`` or
    ``json``), every record cleaned of ``secrets`` and of anything that looks like a token."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == "json" else TextFormatter())
    handler.addFilter(Redact(secrets))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper())
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logging.getLogger(name).handlers.clear()
        logging.getLogger(name).propagate = True


def _level(status: int) -> int:
    if status >= 500:
        return logging.ERROR
    if status in (413, 421, 429):
        return logging.WARNING
    return logging.INFO


class RequestIds:
    """The middleware (see the module docstring)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = None
        for key, value in scope.get("headers", ()):
            if key == b"x-request-id":
                given = bytes(value).decode("latin-1")
                break
        rid = given if given and _GIVEN_ID.fullmatch(given) else new_request_id()
        token = _REQUEST_ID.set(rid)
        status = 0
        body: list[bytes] = []

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
                headers = [*message.get("headers", ()), (b"x-request-id", rid.encode())]
                message = {**message, "headers": headers}
            elif (
                message["type"] == "http.response.body"
                and status >= 400
                and sum(map(len, body)) < 4096
            ):
                body.append(bytes(message.get("body", b"")))
            await send(message)

        metrics.IN_FLIGHT.inc()
        try:
            await self.app(scope, receive, send_with_id)
        except asyncio.CancelledError:  # the server is stopping and cannot wait any longer
            if status != 0:
                raise
            # answered (and logged below, once): the request ends here, as the stop wants
            await _answer_json(send_with_id, 503, STOPPING, rid)
        except Exception as exc:  # a bug: logged with its request id, answered 500 in JSON
            log.error(
                "%s %s failed: %s: %s",
                scope.get("method", ""),
                scope.get("path", ""),
                type(exc).__name__,
                exc,
                exc_info=exc,
                extra={"request_id": rid, "status": 500},
            )
            if status == 0:
                await _answer_json(send_with_id, 500, FAILED, rid)
            status = 0  # logged
        finally:
            metrics.IN_FLIGHT.dec()
            _REQUEST_ID.reset(token)
        if status >= 400:
            self._log(scope, rid, status, b"".join(body))

    @staticmethod
    def _log(scope: Scope, rid: str, status: int, body: bytes) -> None:
        detail = ""
        with contextlib.suppress(ValueError, AttributeError):
            detail = str(json.loads(body).get("detail", ""))
        client = scope.get("client")
        fields = {
            "request_id": rid,
            "status": status,
            "method": scope.get("method", ""),
            "path": scope.get("path", ""),
            "client": client[0] if client else None,
        }
        log.log(
            _level(status),
            "%s %s %s request=%s: %s",
            status,
            fields["method"],
            fields["path"],
            rid,
            detail or "(no detail)",
            extra=fields,
        )
