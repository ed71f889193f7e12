"""The judge totals of an experiment's failed runs, in columns of their own.

Successful runs are counted from `scorer_results` when an experiment is read (a crash can
leave the experiment row's counters behind its stored results); failed runs are never stored,
so what they cost the judge is kept in the row: `failed_judge_calls`, `failed_judge_attempts`
and `failed_<token kind>`.

Rows written before this revision hold the totals over every run; their failed part is what
the stored results do not account for (none when no run failed, never below zero).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

_USAGE = (
    "input_tokens",
    "output_tokens",
    "total_tokens",
    "reasoning_tokens",
    "cached_input_tokens",
    "cache_creation_input_tokens",
)
_CALLS = ("judge_calls", "judge_attempts")


def upgrade() -> None:
    for name in _USAGE:
        op.add_column("experiments", sa.Column(f"failed_{name}", sa.Integer, nullable=True))
    for name in _CALLS:
        op.add_column(
            "experiments",
            sa.Column(f"failed_{name}", sa.Integer, nullable=False, server_default="0"),
        )
    _fill_failed_totals()


def _fill_failed_totals() -> None:
    names = (*_USAGE, *_CALLS)
    results = sa.table("scorer_results", sa.column("experiment_id"), *map(sa.column, names))
    experiments = sa.table(
        "experiments",
        sa.column("id"),
        sa.column("failed_runs"),
        *map(sa.column, names),
        *(sa.column(f"failed_{name}") for name in names),
    )
    values = {}
    for name in names:
        stored = (
            sa.select(sa.func.coalesce(sa.func.sum(results.c[name]), 0))
            .where(results.c.experiment_id == experiments.c.id)
            .scalar_subquery()
        )
        left = experiments.c[name] - stored
        values[f"failed_{name}"] = sa.case((left < 0, 0), else_=left)
    op.execute(sa.update(experiments).where(experiments.c.failed_runs > 0).values(**values))


def downgrade() -> None:
    for name in (*_USAGE, *_CALLS):
        op.drop_column("experiments", f"failed_{name}")
