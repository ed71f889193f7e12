"""Human review of scores (docs/review.md): the `reviews` table, one row per (experiment,
item, scorer, reviewer) with the verdict (right or wrong), the reviewer's own score and note,
and when it was made and last changed."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "reviews",
        sa.Column("id", sa.Integer, primary_key=True, nullable=False),
        sa.Column(
            "experiment_id", sa.String(length=64), sa.ForeignKey("experiments.id"), nullable=False
        ),
        sa.Column("item_id", sa.Text, nullable=False),
        sa.Column("scorer_id", sa.Text, nullable=False),
        sa.Column("reviewer", sa.Text, nullable=False),
        sa.Column("verdict", sa.String(length=8), nullable=False),
        sa.Column("score", sa.Float, nullable=True),
        sa.Column("note", sa.Text, nullable=False, server_default=""),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("experiment_id", "item_id", "scorer_id", "reviewer"),
    )


def downgrade() -> None:
    op.drop_table("reviews")
