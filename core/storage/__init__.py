"""Storage of datasets, experiments and successful scorer results (SQLite or PostgreSQL).

The only package that imports sqlmodel / sqlalchemy; it returns pydantic records only.
"""

from core.storage.store import (
    DATABASE_URL_ENV,
    NotFoundError,
    StorageError,
    Store,
    default_database_url,
)

__all__ = ["DATABASE_URL_ENV", "NotFoundError", "StorageError", "Store", "default_database_url"]
