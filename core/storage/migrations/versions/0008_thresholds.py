"""Pass/fail thresholds kept with an experiment (issue 21): the `thresholds` table, one row per
(experiment, scorer) with the inclusive bounds on its scores."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "thresholds",
        sa.Column("id", sa.Integer, primary_key=True, nullable=False),
        sa.Column(
            "experiment_id", sa.String(length=64), sa.ForeignKey("experiments.id"), nullable=False
        ),
        sa.Column("scorer_id", sa.Text, nullable=False),
        sa.Column("min", sa.Float, nullable=True),
        sa.Column("max", sa.Float, nullable=True),
        sa.UniqueConstraint("experiment_id", "scorer_id"),
    )


def downgrade() -> None:
    op.drop_table("thresholds")
