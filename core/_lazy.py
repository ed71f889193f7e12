"""Public names imported on first use (PEP 562), shared by the packages whose import must stay
quick: `core` and `core.service` (docs/architecture.md, Start-up)."""

from __future__ import annotations

import importlib
from collections.abc import Mapping, MutableMapping
from typing import Any

__all__ = ["lazy_import"]


def lazy_import(
    package: str, homes: Mapping[str, str], namespace: MutableMapping[str, Any], name: str
) -> Any:
    """`package`'s attribute `name`: a public name from its home module (then kept in the
    package's `namespace`, so the next access is a plain lookup), or else a submodule, found as
    an eager import would have found it."""
    home = homes.get(name)
    if home is None:
        try:
            return importlib.import_module(f"{package}.{name}")
        except ModuleNotFoundError as error:
            if error.name != f"{package}.{name}":
                raise
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    namespace[name] = value
    return value
