"""What the API's routers share in answering: a model or plain data as a JSON answer
(:func:`json_answer`), and the page a request for a list gets (:data:`Limit`, :data:`Offset`,
:func:`page_of`, bounded by the server's ``page_size`` and ``max_page``)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Query, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel

from nimlab.web.access import live

__all__ = ["Limit", "Offset", "json_answer", "page_of"]


def json_answer(content: Any, status: int = 200) -> Response:
    """A JSON answer: a pydantic model is serialised by pydantic itself (in compiled code, with
    no intermediate dicts), anything else by the standard JSON encoder."""
    if isinstance(content, BaseModel):
        return Response(content.model_dump_json(), status, media_type="application/json")
    return JSONResponse(content, status_code=status)


def page_of(request: Request, limit: int | None) -> int:
    """How many entries one answer of a list holds: ``limit``, the default page (``page_size``),
    at most the largest page (``max_page``)."""
    s = live(request).settings
    return min(s.page_size, s.max_page) if limit is None else min(limit, s.max_page)


Limit = Annotated[
    int | None,
    Query(ge=1, le=1_000_000, description="How many entries (default and bound: the server's)"),
]
"""A list's ``limit=`` (see :func:`page_of`)."""
Offset = Annotated[int, Query(ge=0, le=1 << 40, description="How many entries to skip")]
"""A list's ``offset=``."""
