"""Alembic's environment for scorelab: migrations always run on a connection handed over by
`core.storage.schema` (in its locked transaction), never on one Alembic opens itself."""

from __future__ import annotations

from alembic import context

from core.storage.tables import TABLES, include_object

connection = context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError(
        "scorelab's migrations run through core.storage.schema.upgrade_schema or "
        "`python -m core.storage.migrations`, which hand Alembic a connection"
    )
context.configure(
    connection=connection,
    target_metadata=TABLES[0].metadata,
    # SQLite alters most things by copying the table; autogenerate writes such batch steps.
    render_as_batch=connection.dialect.name == "sqlite",
    compare_type=True,
    include_object=include_object,
)
with context.begin_transaction():  # inside the caller's transaction: adds none of its own
    context.run_migrations()
