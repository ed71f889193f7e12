"""Stored results that do not echo their item (issue 22): `scorer_results.item_texts`, true
when the row's result JSON leaves out the run's input, output, ground truth and request
context because they are the item's own (in `dataset_items`), rebuilt when the result is read;
false (full JSON, as every row before it) otherwise."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column(
        "scorer_results",
        sa.Column("item_texts", sa.Boolean, nullable=False, server_default=sa.false()),
    )


def downgrade() -> None:
    op.drop_column("scorer_results", "item_texts")
