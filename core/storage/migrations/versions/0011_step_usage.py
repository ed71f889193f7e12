"""Judge usage per prompt step of each stored run (issue 21): `scorer_results.step_usage`, a
compact JSON list of `{step, model, inputTokens, outputTokens, totalTokens, reasoningTokens,
cachedInputTokens, calls, attempts, cached, durationMs}` (`core.run_results.step_usage_json`),
summed per step by the Judge usage page and the JSON export. NULL for a run without judge
executions and for every row stored before it: those stay summed as "all steps"."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0013"  # relinked after 0013 landed on main (was "0010")
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("scorer_results", sa.Column("step_usage", sa.JSON, nullable=True))


def downgrade() -> None:
    op.drop_column("scorer_results", "step_usage")
