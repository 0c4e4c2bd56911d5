"""Schemathesis with every check (``--checks all``) against the web API's OpenAPI schema, in this
process: generated requests, valid and invalid, never get a server error, invalid ones are
refused, and every answer matches the schema (status codes, headers, content type, body, the
``Allow`` header of each path).

A well-formed request may still be refused by the game's rules (an illegal move, an unknown game
name, a username nobody registered): such a refusal is a 422 with the core's message, so 422 is
an accepted answer to schema-valid data; everything the schema can say (types, bounds, lengths,
no unknown fields, no lax coercion) it says exactly.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import CHECKS, load_all_checks
from schemathesis.config import SchemathesisConfig
from schemathesis.core.failures import FailureGroup, as_reported_failure
from schemathesis.core.result import Err
from schemathesis.generation.feedback import FeedbackSources
from schemathesis.generation.hypothesis.reporting import ignore_hypothesis_output
from schemathesis.pytest._test_builder import build_operation_test
from schemathesis.python._constants.orchestrator import make_constants_value_source
from schemathesis.schemas import APIOperation, BaseSchema
from schemathesis.transport.requests import ManagedCookiesSession

from nimlab.web import ServerSettings, create_app
from webtools import ServerThread

SETTINGS = ServerSettings(
    bot_pace=0.05,
    reply_wait=2.0,
    compute_wait=1.0,
    move_seconds=0.5,
    deep_seconds=1.0,
    job_positions=200_000,
    create_rate=1e9,
    create_burst=10**6,
    move_rate=1e9,
    move_burst=10**6,
    read_rate=0,
)


@pytest.fixture(scope="module")
def session() -> Iterator[requests.Session]:
    """The generated requests' session: its connections are kept alive (a new connection and a
    read of the proxy settings per request cost more CPU than most requests), and it keeps no
    cookie from one request to the next, as Schemathesis' own session for each request."""
    with ManagedCookiesSession() as s:
        s.trust_env = False  # no proxy, .netrc or certificate settings from the environment
        yield s


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerThread]:
    db = Path(tmp_path_factory.mktemp("schema")) / "schema.db"
    with ServerThread(create_app(str(db), settings=SETTINGS)) as s:
        yield s


ACCEPTED = ["2xx", "404", "409", "422", "429"]
CONFIG = SchemathesisConfig.from_dict(
    {"checks": {"positive_data_acceptance": {"expected-statuses": ACCEPTED}}}
)
OPENAPI = create_app(":memory:").openapi()
"""The schema the app publishes at /api/openapi.json (read without starting it)."""
LABELS = [
    f"{method.upper()} {path}"
    for path, item in OPENAPI["paths"].items()
    for method in item
    if method in {"get", "put", "post", "delete", "options", "head", "patch", "trace"}
]
"""Its operations, as Schemathesis names them ("GET /api/games"): one test each."""

load_all_checks()
ALL_CHECKS = list(CHECKS.get_all())


def test_every_check_is_run() -> None:
    names = {c.__name__ for c in ALL_CHECKS}
    assert {"positive_data_acceptance", "negative_data_rejection", "unsupported_method"} <= names


@functools.cache
def schema() -> BaseSchema:
    """The schema as Schemathesis reads it, read when a test first needs it (its OpenAPI
    loader costs 0.5 s of CPU: at collection, every worker would pay it)."""
    return schemathesis.openapi.from_dict(OPENAPI, config=CONFIG)


@functools.cache
def operations() -> dict[str, APIOperation[Any, Any, Any, Any]]:
    """Every operation of the schema, by label; one that Schemathesis cannot read fails."""
    found = {}
    for result in schema().get_all_operations():
        if isinstance(result, Err):
            raise result.err()
        found[result.ok().label] = result.ok()
    return found


@settings(
    max_examples=int(os.environ.get("SCHEMA_EXAMPLES", "20")),
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
)
def check_case(server: ServerThread, session: requests.Session, case: Any) -> None:
    """One generated request: no server error, and the answer keeps to the schema."""
    response = case.call(base_url=server.url, session=session, timeout=30)
    assert response.status_code < 500, response.text
    case.validate_response(
        response, checks=ALL_CHECKS, transport_kwargs={"base_url": server.url, "session": session}
    )


@functools.cache
def feedback() -> FeedbackSources:
    """What Schemathesis' collector shares between the operations (the schema's constants)."""
    return FeedbackSources(constants_value_source=make_constants_value_source(schema()))


@pytest.mark.parametrize("label", LABELS)
def test_the_api_never_fails_and_keeps_to_its_schema(
    server: ServerThread, session: requests.Session, label: str
) -> None:
    """What ``@schema.parametrize()`` runs for each operation (its examples, its coverage
    cases, then generated requests), built here when the test runs: Schemathesis' collector
    builds every operation's coverage cases at collection, in every xdist worker (2.7 s of CPU
    each), also in the worker that does not run them."""
    assert list(operations()) == LABELS  # every operation Schemathesis reads is tested
    test = build_operation_test(
        config=schema().config,
        operation=operations()[label],
        test_func=check_case,
        given_kwargs={},
        feedback=feedback(),
    )
    try:
        with ignore_hypothesis_output():
            test(server=server, session=session)
    except FailureGroup as e:
        raise as_reported_failure(e) from None


def test_the_schema_says_exactly_what_is_accepted(server: ServerThread) -> None:
    """The mismatches once found: non-standard ``ge``/``le`` keys on a path parameter, a bound
    rounded when written as a float, and a whole number written ``0.0`` refused."""
    import json
    import urllib.request

    with urllib.request.urlopen(server.url + "/api/openapi.json", timeout=60) as r:
        text = r.read().decode()
    published = json.loads(text)
    game_id = published["paths"]["/api/history/{game_id}"]["get"]["parameters"][0]["schema"]
    assert "ge" not in game_id and "le" not in game_id
    assert (game_id["minimum"], game_id["maximum"]) == (1, 2**63 - 1)
    seed = published["components"]["schemas"]["SetupIn"]["properties"]["seed"]["anyOf"][0]
    assert seed["exclusiveMaximum"] == 2**62 and "e+18" not in text
    body = {"players": [{"name": "Ann"}, {"name": "Bob"}], "piles": [2.0, 3]}
    request = urllib.request.Request(
        server.url + "/api/games", json.dumps(body).encode(), {"content-type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=60) as r:
        created = json.loads(r.read())
    key, token = created["state"]["id"], created["seats"][0]["token"]
    move = {"seat": 0.0, "token": token, "turn": 1.0, "pile": 1.0, "take": 1}
    request = urllib.request.Request(
        f"{server.url}/api/games/{key}/moves",
        json.dumps(move).encode(),
        {"content-type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=60) as r:
        assert r.status == 200
