"""The judge rate limit kept with its experiment (issue 22): `experiments.judge_rpm` and
`experiments.judge_tpm`, the requests and tokens per minute it was started (or last resumed)
with; null: the provider's default (as every experiment before)."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0011"  # relinked after 0013 and 0011 landed on main (was "0010")
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("experiments", sa.Column("judge_rpm", sa.Integer, nullable=True))
    op.add_column("experiments", sa.Column("judge_tpm", sa.Integer, nullable=True))


def downgrade() -> None:
    op.drop_column("experiments", "judge_tpm")
    op.drop_column("experiments", "judge_rpm")
