"""Schemathesis against the web API's OpenAPI schema: generated requests, valid and invalid, never
get a server error, and every answer matches the schema (status codes, content type, body)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from nimlab.web import create_app
from webtools import ServerThread


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerThread]:
    db = Path(tmp_path_factory.mktemp("schema")) / "schema.db"
    app = create_app(str(db), bot_pace=0.05, reply_wait=2.0, compute_wait=2.0)
    with ServerThread(app) as s:
        yield s


schema = schemathesis.openapi.from_dict(create_app(":memory:").openapi())
"""The schema the app publishes at /api/openapi.json (read without starting it)."""


@schema.parametrize()
@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
)
def test_the_api_never_fails_and_keeps_to_its_schema(server: ServerThread, case: Any) -> None:
    response = case.call(base_url=server.url, timeout=30)
    assert response.status_code < 500, response.text
    case.validate_response(
        response,
        checks=[
            not_a_server_error,
            status_code_conformance,
            content_type_conformance,
            response_schema_conformance,
        ],
    )
