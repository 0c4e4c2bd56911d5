"""The web app (``nimlab serve``): set up, play, analyse and keep games in the browser.

>>> from nimlab.web import create_app
>>> app = create_app(":memory:")

``nimlab.web.settings`` loads without FastAPI (``nimlab serve --help`` and ``--print-config``
need only the settings): the names here are imported when first used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from nimlab.web.app import create_app
    from nimlab.web.settings import ServerSettings

__all__ = ["ServerSettings", "create_app"]


def __getattr__(name: str) -> Any:
    if name == "create_app":
        from nimlab.web.app import create_app

        return create_app
    if name == "ServerSettings":
        from nimlab.web.settings import ServerSettings

        return ServerSettings
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
