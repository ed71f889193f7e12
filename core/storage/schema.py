"""The database schema's creation and upgrades: the Alembic migrations shipped in
`core/storage/migrations`, run when a `Store` opens a database (docs/storage.md).

Any number of processes may open the same database at once, new or old:

- a database already at the head revision is only read (its `alembic_version`): no lock, no
  write;
- otherwise the upgrade runs in one transaction that first takes a lock held until it ends,
  PostgreSQL's transaction-level advisory lock, SQLite's write lock (`BEGIN IMMEDIATE`); a
  second process waits for it, then finds the head revision and does nothing;
- a database made before migrations (tables, no `alembic_version`) is brought to the first
  revision's schema by that revision itself, then stamped and upgraded like any other.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from sqlalchemy import Connection, Engine, func, inspect, select, text

from core.storage._engines import is_sqlite_file, sqlite_upgrade_engine
from core.storage._light import MIGRATIONS_DIR, shipped_heads

if TYPE_CHECKING:  # Alembic is imported only to upgrade (and by its own tools): opening a
    # database already at the head revision reads its `alembic_version` with a plain select
    from alembic.config import Config
    from alembic.script import ScriptDirectory

__all__ = [
    "MIGRATIONS_DIR",
    "SchemaError",
    "alembic_config",
    "head_revisions",
    "revision_ids",
    "revisions",
    "upgrade_schema",
]


UPGRADE_LOCK_KEY = 0x73636F72656C6162  # "scorelab" in ASCII: the advisory lock's id
"""PostgreSQL advisory lock taken around an upgrade. Advisory locks are per database, so
upgrades of different schemas of one database wait for each other too: harmless."""


def alembic_config(connection: Connection | None = None) -> Config:
    """Alembic's configuration for the shipped migrations, without any alembic.ini; Alembic
    runs them on `connection` (see migrations/env.py)."""
    from alembic.config import Config

    config = Config(stdout=sys.stdout)  # Alembic's default is the stdout of its import time
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.set_main_option("path_separator", "os")
    config.set_main_option("file_template", "%%(rev)s_%%(slug)s")
    if connection is not None:
        config.attributes["connection"] = connection
    return config


@functools.cache
def _scripts() -> ScriptDirectory:
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(alembic_config())


def revision_ids() -> list[str]:
    """Every shipped revision, newest first."""
    return [script.revision for script in _scripts().walk_revisions()]


def head_revisions() -> frozenset[str]:
    """The revisions a database up to date is at (one, unless migrations branched)."""
    return frozenset(_scripts().get_heads())


def revisions(engine: Engine) -> frozenset[str]:
    """The revisions the database is at (none for a new one, or one made before migrations)."""
    from alembic.runtime.migration import MigrationContext

    with engine.connect() as connection:
        return frozenset(MigrationContext.configure(connection).get_current_heads())


def _stored_revisions(engine: Engine) -> frozenset[str]:
    """`revisions`, read with a plain select (no Alembic import)."""
    with engine.connect() as connection:
        if not inspect(connection).has_table("alembic_version"):
            return frozenset()
        rows = connection.execute(text("SELECT version_num FROM alembic_version"))
        return frozenset(str(row[0]) for row in rows)


class SchemaError(RuntimeError):
    """The database's schema cannot be brought to this version's (one made by a newer version,
    or a migration that failed)."""


def upgrade_schema(engine: Engine) -> bool:
    """Bring the database to the head revision; True when something had to be done.

    Safe to call from many processes at once (see the module's docstring). Raises SchemaError
    for a database a newer version upgraded, and SQLAlchemy's errors for a database refusing."""
    if _stored_revisions(engine) == shipped_heads():
        return False  # the common case, without importing Alembic
    from alembic import command
    from alembic.util import CommandError

    current = revisions(engine)
    if current == head_revisions():
        return False
    unknown = current - set(revision_ids())
    if unknown:
        raise SchemaError(
            f"its schema is at revision {', '.join(sorted(unknown))}, made by a newer version "
            f"of scorelab than this one (which knows up to {', '.join(sorted(head_revisions()))})"
            "; upgrade scorelab"
        )
    try:
        with _upgrade_transaction(engine) as connection:
            command.upgrade(alembic_config(connection), "head")
    except CommandError as error:
        raise SchemaError(f"its schema could not be upgraded: {error}") from error
    return True


@contextmanager
def _upgrade_transaction(engine: Engine) -> Iterator[Connection]:
    """A transaction holding the lock that serialises upgrades, on a connection to `engine`'s
    database; committed when the block ends without error."""
    if is_sqlite_file(engine.url.render_as_string(hide_password=False)):
        locked = sqlite_upgrade_engine(engine.url.render_as_string(hide_password=False))
        try:
            with locked.begin() as connection:  # BEGIN IMMEDIATE: waits for another upgrade
                yield connection
        finally:
            locked.dispose()
        return
    # An in-memory SQLite database has a single connection: no one to wait for.
    with engine.begin() as connection:
        if connection.dialect.name == "postgresql":
            connection.execute(select(func.pg_advisory_xact_lock(UPGRADE_LOCK_KEY)))
        yield connection
