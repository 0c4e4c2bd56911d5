"""Names of a package imported when first used (PEP 562), so that importing the package, or one
of its parts, does not import every other part."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(namespace: dict[str, Any], exports: Mapping[str, str]) -> Callable[[str], Any]:
    """The module ``__getattr__`` of a package whose globals are ``namespace``: a name listed in
    ``exports`` (name -> module that defines it) is imported on first use and kept in the
    package's globals; any other name raises :class:`AttributeError`. O(1) after the import."""
    package = namespace["__name__"]

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    return __getattr__
