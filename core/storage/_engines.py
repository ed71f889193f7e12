"""SQLAlchemy engines for the store: URLs, SQLite's connection settings, and the one connection
a schema upgrade holds while it runs (docs/storage.md)."""

from __future__ import annotations

import random
import sqlite3
import time
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.pool import NullPool, StaticPool

from core.run_results import database_json

__all__ = ["is_sqlite_file", "make_engine", "normalise_url", "sqlite_upgrade_engine"]

_SQLITE_TIMEOUT_S = 30
"""How long an SQLite connection waits for another one's write lock before failing."""


def normalise_url(url: str) -> str:
    """psycopg (3) is the driver we install; a bare postgresql:// would ask for psycopg2."""
    for prefix in ("postgres://", "postgresql://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


def is_sqlite_file(url: str) -> bool:
    """An SQLite database in a file (other processes may open it too)."""
    parsed = make_url(url)
    return parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:")


def make_engine(url: str) -> Engine:
    """The store's engine: JSON that PostgreSQL accepts; SQLite in WAL mode, waiting for locks."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite":
        return create_engine(url, json_serializer=_dumps, pool_pre_ping=True)
    in_file = is_sqlite_file(url)
    if in_file and parsed.database:  # a file database always has a name: this tells mypy
        Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(
        url,
        json_serializer=_dumps,
        connect_args={"check_same_thread": False, "timeout": _SQLITE_TIMEOUT_S},
        # One shared connection for an in-memory database, or each connection would get its own.
        poolclass=None if in_file else StaticPool,
    )
    event.listen(engine, "connect", _sqlite_pragmas)
    return engine


def sqlite_upgrade_engine(url: str) -> Engine:
    """An engine for one schema upgrade of an SQLite file: its transaction starts with
    `BEGIN IMMEDIATE`, which takes the database's write lock at once, so a second process
    upgrading the same file waits there (up to the busy timeout) and then finds the work done.

    pysqlite would otherwise begin transactions itself, lazily and never before DDL; with its
    own transaction handling off, the transaction is ours (SQLAlchemy's documented recipe)."""
    engine = create_engine(url, poolclass=NullPool, connect_args={"timeout": _SQLITE_TIMEOUT_S})

    @event.listens_for(engine, "connect")
    def _connect(connection: Any, record: Any) -> None:
        connection.isolation_level = None
        _sqlite_pragmas(connection, record)

    @event.listens_for(engine, "begin")
    def _begin(connection: Any) -> None:
        connection.exec_driver_sql("BEGIN IMMEDIATE")

    return engine


def _sqlite_pragmas(connection: Any, _record: Any) -> None:
    cursor = connection.cursor()
    cursor.execute(f"PRAGMA busy_timeout={_SQLITE_TIMEOUT_S * 1000}")
    _switch_to_wal(cursor)  # readers (the dashboard) never block the writer
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def _switch_to_wal(cursor: Any) -> None:
    """`PRAGMA journal_mode=WAL`, retried while another connection holds the lock it needs.

    On a new file opened by many processes at once, SQLite answers "database is locked" at
    once, without waiting out the busy timeout, when waiting could deadlock (two connections
    each holding a shared lock and wanting the exclusive one); the statement failing releases
    this connection's lock, so trying again after a short random pause lets one of them win."""
    deadline = time.monotonic() + _SQLITE_TIMEOUT_S
    while True:
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) or time.monotonic() > deadline:
                raise
            time.sleep(random.uniform(0.005, 0.05))


_dumps = database_json
"""JSON for the database (core/run_results.py): PostgreSQL rejects NaN and Infinity in JSON, so
non-finite numbers in step results are written as the strings JavaScript's JSON would show."""
