"""Databases for the storage, service and CLI tests: a temporary SQLite file, and, when
SCORELAB_TEST_POSTGRES_URL is set (`make test` sets it), a fresh PostgreSQL schema per test.

Test modules declare their own fixture from these helpers (fixtures cannot be shared across
sibling test folders without the root conftest):

    @pytest.fixture(params=BACKENDS)
    def database_url(request, tmp_path):
        with database(request.param, tmp_path) as url:
            yield url
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import sqlalchemy

POSTGRES_ENV = "SCORELAB_TEST_POSTGRES_URL"

BACKENDS = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param(
        "postgres",
        id="postgres",
        marks=pytest.mark.skipif(
            not os.environ.get(POSTGRES_ENV),
            reason=f"{POSTGRES_ENV} is not set (`make test` starts PostgreSQL and sets it)",
        ),
    ),
]


@contextmanager
def database(backend: str, tmp_path: Path) -> Iterator[str]:
    """A database URL for one test; a PostgreSQL schema is created and dropped around it."""
    if backend == "sqlite":
        yield f"sqlite:///{tmp_path / 'scorelab.db'}"
        return
    base = os.environ[POSTGRES_ENV].replace("postgresql://", "postgresql+psycopg://", 1)
    schema = f"test_{uuid.uuid4().hex[:12]}"
    admin = sqlalchemy.create_engine(base)
    with admin.begin() as connection:
        connection.execute(sqlalchemy.text(f'CREATE SCHEMA "{schema}"'))
    separator = "&" if "?" in base else "?"
    try:
        yield f"{base}{separator}options=-csearch_path%3D{schema}"
    finally:
        with admin.begin() as connection:
            connection.execute(sqlalchemy.text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()
