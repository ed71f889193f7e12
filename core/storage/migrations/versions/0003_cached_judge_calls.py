"""Judge calls answered from the judge cache, counted apart: `scorer_results.cached_calls`,
`experiments.cached_calls` and `experiments.failed_cached_calls` (0 for rows from before the
judge cache, which had none)."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
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


def downgrade() -> None:
    for table, name in reversed(_COLUMNS):
        op.drop_column(table, name)
