"""The judge cache and the spend cap: judge calls answered from the cache, counted apart
(`scorer_results.cached_calls`, `experiments.cached_calls` and `experiments.failed_cached_calls`,
0 for rows from before the cache, which had none), and each experiment's choices
(`experiments.judge_cache`, false before; `experiments.max_cost`, USD, null: no cap)."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

_COLUMNS = (
    ("scorer_results", "cached_calls"),
    ("experiments", "cached_calls"),
    ("experiments", "failed_cached_calls"),
)


def upgrade() -> None:
    for table, name in _COLUMNS:
        op.add_column(table, sa.Column(name, sa.Integer, nullable=False, server_default="0"))
    op.add_column(
        "experiments",
        sa.Column("judge_cache", sa.Boolean, nullable=False, server_default=sa.false()),
    )
    op.add_column("experiments", sa.Column("max_cost", sa.Float, nullable=True))


def downgrade() -> None:
    op.drop_column("experiments", "max_cost")
    op.drop_column("experiments", "judge_cache")
    for table, name in reversed(_COLUMNS):
        op.drop_column(table, name)
