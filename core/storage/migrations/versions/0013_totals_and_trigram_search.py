"""The pages of a large experiment without a whole-experiment pass (issue 22), on both
databases: `experiment_totals`, each finished experiment's per-scorer totals and histograms
summed once when it finished (`core/storage/totals.py`).

Text search under a score filter served by an index on PostgreSQL: the `pg_trgm`
extension and a GIN trigram index of the text the item table's search reads on PostgreSQL
(`SEARCHED_TEXT`: the item's id and the JSON text of its input, output and ground truth, joined
by a unit separator; `core.storage.text_search.matches` searches that same expression), so
`ILIKE '%needle%'` can be answered from the index instead of reading every item (the planner
chooses it where it is cheaper: a rare needle in a large table). SQLite is left as it is
(its LIKE has no such index).

The extension is created when the role may (a trusted extension: CREATE on the database is
enough since PostgreSQL 13); when it may not, the upgrade goes on without the index, says so
in the log (`scorelab.storage`: what to run as a superuser), and the search keeps its
sequential plan. The index is declared here only, not in tables.py (`TRIGRAM_INDEX` is left
out of the schema comparison)."""

from __future__ import annotations

import logging

import sqlalchemy as sa
from alembic import op

from core.storage.tables import SEARCHED_TEXT, TRIGRAM_INDEX

revision = "0013"
down_revision = "0010"
branch_labels = None
depends_on = None

_log = logging.getLogger("scorelab.storage")


def upgrade() -> None:
    op.create_table(
        "experiment_totals",
        sa.Column("experiment_id", sa.String(64), primary_key=True),
        sa.Column("settled", sa.Text, nullable=False),
        sa.Column("totals", sa.JSON, nullable=False),
        sa.Column("histograms", sa.JSON, nullable=True),
    )
    bind = op.get_bind()
    if bind.dialect.name != "postgresql":
        return
    schema = trigram_schema(bind)
    if schema is None:
        return
    op.execute(
        f"CREATE INDEX IF NOT EXISTS {TRIGRAM_INDEX} ON dataset_items USING gin "
        f'(({SEARCHED_TEXT}) "{schema}".gin_trgm_ops)'
    )


def trigram_schema(bind: sa.Connection) -> str | None:
    """The schema holding `pg_trgm`, created first when it is missing and the role may (in a
    savepoint: a refusal leaves the upgrade's transaction usable); None, logged, when not."""
    found = _extension_schema(bind)
    if found is not None:
        return found
    try:
        with bind.begin_nested():
            bind.exec_driver_sql("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    except sa.exc.DBAPIError as error:
        _log.warning(
            "PostgreSQL refused to create the pg_trgm extension (%s): the item table's text "
            "search keeps a sequential scan. A superuser can run `CREATE EXTENSION pg_trgm;` "
            "in this database, then `CREATE INDEX %s ...` as revision 0013 does.",
            str(error.orig).strip().splitlines()[0],
            TRIGRAM_INDEX,
        )
        return None
    return _extension_schema(bind)


def _extension_schema(bind: sa.Connection) -> str | None:
    row = bind.exec_driver_sql(
        "SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace "
        "WHERE e.extname = 'pg_trgm'"
    ).first()
    return None if row is None else str(row[0])


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(f"DROP INDEX IF EXISTS {TRIGRAM_INDEX}")
    op.drop_table("experiment_totals")
