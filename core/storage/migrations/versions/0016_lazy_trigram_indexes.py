"""No trigram index maintained by an import on PostgreSQL either (issue 22): revision 0013's
GIN trigram index of every item's searched text (`TRIGRAM_INDEX`) is dropped. It cost most of a
PostgreSQL import's time (100,000 items: 3.9 s, against 1.2 s on SQLite, which has no such
index). Instead, each dataset gets a partial trigram index of its own items when a search may be
wanted (`core/storage/search_index.py`, `CREATE INDEX CONCURRENTLY ... WHERE dataset_id = '<id>'`,
named `DATASET_TRIGRAM_PREFIX` and the id), so a dataset nobody searches costs nothing; until
it is built the same search scans. The planner takes no statistics from a partial index, so
the searched text gets extended statistics of its own (`SEARCHED_TEXT_STATISTICS`, PostgreSQL
14 and later), gathered by ANALYZE like the dropped index's. Nothing else changes: the items,
and every search's answers, are the same (the index only chose the plan). SQLite is left as
revision 0015 made it."""

from __future__ import annotations

from alembic import op

from core.storage.tables import (
    DATASET_TRIGRAM_PREFIX,
    SEARCHED_TEXT,
    SEARCHED_TEXT_STATISTICS,
    TRIGRAM_INDEX,
)

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


_STATISTICS_OF_EXPRESSIONS = 140000
"""The first PostgreSQL version (`server_version_num`) with statistics of an expression."""


def upgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name != "postgresql":
        return
    op.execute(f"DROP INDEX IF EXISTS {TRIGRAM_INDEX}")
    version = int(bind.exec_driver_sql("SHOW server_version_num").scalar_one())
    if version >= _STATISTICS_OF_EXPRESSIONS:
        op.execute(
            f"CREATE STATISTICS IF NOT EXISTS {SEARCHED_TEXT_STATISTICS} ON ({SEARCHED_TEXT}) "
            "FROM dataset_items"
        )
        op.execute("ANALYZE dataset_items")


def downgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name != "postgresql":
        return
    op.execute(f"DROP STATISTICS IF EXISTS {SEARCHED_TEXT_STATISTICS}")
    lazy = bind.exec_driver_sql(
        "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() "
        "AND tablename = 'dataset_items' AND indexname LIKE %s AND indexname <> %s",
        (DATASET_TRIGRAM_PREFIX.replace("_", "\\_") + "%", TRIGRAM_INDEX),
    ).scalars()
    for name in list(lazy):
        op.execute(f'DROP INDEX IF EXISTS "{name}"')
    schema = bind.exec_driver_sql(
        "SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace "
        "WHERE e.extname = 'pg_trgm'"
    ).scalar()
    if schema is not None:
        op.execute(
            f"CREATE INDEX IF NOT EXISTS {TRIGRAM_INDEX} ON dataset_items USING gin "
            f'(({SEARCHED_TEXT}) "{schema}".gin_trgm_ops)'
        )
