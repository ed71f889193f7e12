"""One stored result per (experiment, item, scorer), enforced by the database.

Resuming an experiment runs only the pairs without a stored result, and its writes skip a pair
stored meanwhile (`INSERT ... ON CONFLICT DO NOTHING` on this key): both need the key to be a
unique constraint or index the database enforces. Every database scorelab made has it (revision
`0001` declares it, and the versions before migrations did too); this revision makes sure of it
for one that lacks it (a table made by hand or by another tool, a restore without its
constraints): it first deletes the duplicates, keeping per key the row written last (the
highest `id`), then creates the unique index `uq_scorer_results_key`. A database that has the
key is only inspected.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

_TABLE = "scorer_results"
_KEY = ("experiment_id", "item_id", "scorer_id")
_INDEX = "uq_scorer_results_key"


def upgrade() -> None:
    bind = op.get_bind()
    if _has_key(bind):
        return
    _delete_duplicates()
    op.create_index(_INDEX, _TABLE, list(_KEY), unique=True)


def _has_key(bind: sa.Connection) -> bool:
    """True when a unique constraint or index covers exactly the key's columns."""
    wanted = set(_KEY)
    if bind.dialect.name == "sqlite":
        # SQLAlchemy does not reflect SQLite's unnamed UNIQUE constraints (`0001` made one):
        # the indexes behind them are listed by the pragmas.
        for index in bind.exec_driver_sql(f"PRAGMA index_list('{_TABLE}')").mappings():
            if index["unique"]:
                info = bind.exec_driver_sql(f"PRAGMA index_info('{index['name']}')").mappings()
                if {column["name"] for column in info} == wanted:
                    return True
        return False
    inspector = sa.inspect(bind)
    keys: list[list[str | None]] = [
        list(c["column_names"]) for c in inspector.get_unique_constraints(_TABLE)
    ]
    keys += [list(i["column_names"]) for i in inspector.get_indexes(_TABLE) if i["unique"]]
    return any(set(columns) == wanted for columns in keys)


def _delete_duplicates() -> None:
    """All but the latest row of each key (a window over the table: one pass, on both
    databases, whatever the number of rows)."""
    results = sa.table(_TABLE, sa.column("id"), *map(sa.column, _KEY))
    ranked = sa.select(
        results.c.id,
        sa.func.row_number()
        .over(partition_by=[results.c[k] for k in _KEY], order_by=results.c.id.desc())
        .label("rank"),
    ).subquery()
    older = sa.select(ranked.c.id).where(ranked.c.rank > 1)
    op.execute(sa.delete(results).where(results.c.id.in_(older)))


def downgrade() -> None:
    # Only a database this revision repaired has the index; the others keep their constraint.
    op.drop_index(_INDEX, _TABLE, if_exists=True)
