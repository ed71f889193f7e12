"""Storage of datasets, experiments and successful scorer results (SQLite or PostgreSQL).

The only package that imports sqlmodel / sqlalchemy; it returns pydantic records only. Its
public names are imported on first use (PEP 562), so `core.storage.listing` (the quick
experiments list, which reads through the driver alone) loads none of them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from core.storage.store import (
        DATABASE_URL_ENV,
        NotFoundError,
        StorageError,
        Store,
        default_database_url,
    )

__all__ = ["DATABASE_URL_ENV", "NotFoundError", "StorageError", "Store", "default_database_url"]


def __getattr__(name: str) -> Any:
    """A public name, imported from `core.storage.store` on first use."""
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module("core.storage.store"), name)
    globals()[name] = value
    return value
