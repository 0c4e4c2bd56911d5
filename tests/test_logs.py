"""The server's log: one line per error answer with the request id the answer carries too (header
and JSON field), JSON lines with ``--log-format json``, and never a token or a secret."""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from nimlab.web import create_app
from nimlab.web.logs import Redact
from webtools import ServerProcess

ADMIN = "adm1n-S3cret-value"


def call(url: str, method: str = "GET", body: Any = None, **headers: str) -> tuple[int, Any, Any]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        url, data, {"content-type": "application/json", **headers}, method=method
    )
    try:
        with urllib.request.urlopen(request, timeout=120) as r:
            return r.status, r.headers, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, e.headers, json.loads(e.read() or b"null")


def test_errors_are_logged_once_with_their_request_id_and_no_secret(tmp_path: Path) -> None:
    server = ServerProcess(
        tmp_path / "l.db",
        args=["--log-format", "json", "--create-burst", "1", "--create-rate", "0.001"],
        env={"NIMLAB_ADMIN_TOKEN": ADMIN},
    ).start()
    url = server.url
    try:
        game = {"players": [{"name": "Ann"}, {"name": "Bob"}], "piles": [2, 2]}
        status, _, created = call(url + "/api/games", "POST", game)
        assert status == 201
        key, tokens = created["state"]["id"], [s["token"] for s in created["seats"]]
        errors = []
        move = {"seat": 0, "token": tokens[1], "turn": 1, "pile": 1, "take": 1}
        errors.append(call(f"{url}/api/games/{key}/moves", "POST", move))  # 403: wrong token
        errors.append(call(url + "/api/games", "POST", game))  # 429
        errors.append(
            call(
                url + "/api/players/reset",
                "POST",
                {"username": "x"},
                Authorization="Bearer " + tokens[0],
            )
        )  # 401: a seat token is not the admin token
        errors.append(call(f"{url}/api/games/{key}?token={tokens[0]}&since=x"))  # 422
        status, _, _ = call(
            url + "/api/players/reset",
            "POST",
            {"username": "nobody"},
            Authorization="Bearer " + ADMIN,
        )
        assert status == 404  # the admin token is right; nobody is unknown
        move = {"seat": 0, "token": tokens[0], "turn": 1, "pile": 1, "take": 1}
        assert call(f"{url}/api/games/{key}/moves", "POST", move)[0] == 200
    finally:
        server.stop()
    log = server.logged()
    lines = [json.loads(line) for line in log.splitlines() if line.strip()]
    assert [e[0] for e in errors] == [403, 429, 401, 422]
    for status, headers, body in errors:
        rid = headers["x-request-id"]
        assert body["request_id"] == rid
        logged = [line for line in lines if line.get("request_id") == rid]
        assert len(logged) == 1 and logged[0]["status"] == status, logged
        assert body["detail"] in logged[0]["message"]
    for secret in (ADMIN, *tokens):
        assert secret not in log


def test_a_bug_answers_json_500_with_its_request_id(tmp_path: Path) -> None:
    app = create_app(str(tmp_path / "b.db"))

    @app.get("/api/broken")
    async def broken() -> None:
        raise RuntimeError("token=abcdef123456 went wrong")

    with TestClient(app, raise_server_exceptions=False) as c:
        r = c.get("/api/broken", headers={"X-Request-ID": "trace-42"})
    assert r.status_code == 500 and r.json()["request_id"] == "trace-42"
    assert r.headers["x-request-id"] == "trace-42"


def test_request_ids_differ_between_requests_and_between_forked_processes() -> None:
    import os

    from nimlab.web.logs import new_request_id

    ids = {new_request_id() for _ in range(1000)}
    assert len(ids) == 1000 and all(re.fullmatch(r"[0-9a-f]{16}", i) for i in ids)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # a process of nimlab serve --workers N: ids of its own
        os.write(write, new_request_id().encode())
        os._exit(0)
    os.close(write)
    child = os.read(read, 64).decode()
    os.waitpid(pid, 0)
    os.close(read)
    assert child != new_request_id() and re.fullmatch(r"[0-9a-f]{16}", child)


def test_the_log_filter_hides_tokens() -> None:
    redact = Redact(("hunter2-admin",))
    text = redact.clean(
        'token=abcDEF123456 "token": "zzzYYY999000" Authorization: Bearer qwerty123456 '
        "hunter2-admin"
    )
    for secret in ("abcDEF123456", "zzzYYY999000", "qwerty123456", "hunter2-admin"):
        assert secret not in text


FORGED = "2026-11-28T21:30:00Z ERROR   admin token accepted"


def test_what_a_request_sent_cannot_forge_or_colour_a_log_line(tmp_path: Path) -> None:
    """A path with a line feed, a carriage return, a NUL and an ANSI colour (sent
    percent-encoded) is written escaped, on the request's one line, in both log formats."""
    import io
    import logging

    from nimlab.web.logs import JsonFormatter, TextFormatter

    streams = {"text": io.StringIO(), "json": io.StringIO()}
    handlers = []
    for name, formatter in (("text", TextFormatter()), ("json", JsonFormatter())):
        handler = logging.StreamHandler(streams[name])
        handler.setFormatter(formatter)
        handlers.append(handler)
    web = logging.getLogger("nimlab.web")
    level = web.level
    web.setLevel(logging.INFO)
    for handler in handlers:
        web.addHandler(handler)
    try:
        with TestClient(create_app(str(tmp_path / "i.db"))) as c:
            sent = "/static/x%0a" + FORGED.replace(" ", "%20") + "%0d%00%1b[31mred%c2%85"
            assert c.get(sent).status_code == 404
    finally:
        for handler in handlers:
            web.removeHandler(handler)
        web.setLevel(level)
    text = streams["text"].getvalue()
    assert len([line for line in text.splitlines() if "404 GET" in line]) == 1, text
    assert not any(line.startswith("2026-11-28T21:30:00Z") for line in text.splitlines())
    assert "/static/x\\n2026-11-28T21:30:00Z ERROR   admin token accepted\\r\\x00\\x1b[31m" in text
    assert "\\x85" in text
    for raw in ("\r", "\x00", "\x1b", "\x85"):
        assert raw not in text
    entries = [json.loads(line) for line in streams["json"].getvalue().splitlines()]
    (entry,) = [e for e in entries if e.get("status") == 404]
    assert entry["path"].startswith("/static/x\\n2026") and "\\x1b[31m" in entry["path"]
    assert "\\x00" in entry["message"] and "\x85" not in streams["json"].getvalue()


def test_every_log_field_and_traceback_line_is_escaped() -> None:
    import logging

    from nimlab.web.logs import JsonFormatter, TextFormatter, escape_controls

    assert escape_controls("a\nb\r\t\x00\x1b[0m\x7f\x9b\u2028é") == (
        "a\\nb\\r\\t\\x00\\x1b[0m\\x7f\\x9b\\u2028é"
    )
    record = logging.LogRecord("nimlab.web", logging.ERROR, __file__, 1, "bad %s", ("x\ny",), None)
    record.client = "10.0.0.1\n" + FORGED
    record.exc_text = "Traceback (most recent call last):\nKeyError: 'x\n" + FORGED + "'"
    text = TextFormatter().format(record)
    lines = text.split("\n")
    assert lines[0].endswith("bad x\\ny") and all(line.startswith("    ") for line in lines[1:])
    out = json.loads(JsonFormatter().format(record))
    assert out["client"] == "10.0.0.1\\n" + FORGED and out["message"] == "bad x\\ny"
