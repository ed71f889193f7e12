"""The schema of scorelab before migrations: datasets, their items, experiments (with the
heartbeat) and successful scorer results.

It also adopts a database made by a version before migrations (tables, no `alembic_version`):
only what such a database can lack is created, the tables missing (a new database lacks them
all) and the `experiments.heartbeat_at` column the versions before heartbeats did not have.
Alembic then stamps it like any other. The tables are spelled out here, not taken from
`core/storage/tables.py`, which will move on while this revision must not.
"""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def _timestamp(name: str, nullable: bool = True) -> sa.Column[datetime]:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def _usage_columns() -> list[sa.Column[int]]:
    names = (
        "input_tokens",
        "output_tokens",
        "total_tokens",
        "reasoning_tokens",
        "cached_input_tokens",
        "cache_creation_input_tokens",
    )
    return [sa.Column(name, sa.Integer, nullable=True) for name in names]


def _datasets() -> None:
    op.create_table(
        "datasets",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("name", sa.Text, nullable=False),
        sa.Column("file_name", sa.Text, nullable=False),
        sa.Column("format", sa.String(16), nullable=False),
        sa.Column("fingerprint", sa.String(64), nullable=False),
        sa.Column("item_count", sa.Integer, nullable=False),
        sa.Column("columns", sa.JSON, nullable=True),
        sa.Column("mapping", sa.JSON, nullable=True),
        _timestamp("created_at", nullable=False),
    )
    op.create_index("ix_datasets_fingerprint", "datasets", ["fingerprint"])


def _dataset_items() -> None:
    op.create_table(
        "dataset_items",
        sa.Column("dataset_id", sa.String(64), sa.ForeignKey("datasets.id"), primary_key=True),
        sa.Column("position", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("item_id", sa.Text, nullable=False),
        sa.Column("input", sa.JSON, nullable=True),
        sa.Column("output", sa.JSON, nullable=True),
        sa.Column("ground_truth", sa.JSON, nullable=True),
        sa.Column("item_metadata", sa.JSON, nullable=True),
        sa.UniqueConstraint("dataset_id", "item_id"),
    )


def _experiments() -> None:
    counters = ("total_items", "total_runs", "done_runs", "succeeded_runs", "failed_runs")
    op.create_table(
        "experiments",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("name", sa.Text, nullable=False),
        sa.Column("dataset_id", sa.String(64), sa.ForeignKey("datasets.id"), nullable=False),
        sa.Column("dataset_fingerprint", sa.String(64), nullable=False),
        sa.Column("scorers", sa.JSON, nullable=True),
        sa.Column("scorer_ids", sa.JSON, nullable=True),
        sa.Column("judge_model", sa.Text, nullable=True),
        sa.Column("api_base", sa.Text, nullable=True),
        sa.Column("judge_settings", sa.JSON, nullable=True),
        sa.Column("concurrency", sa.Integer, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("error", sa.Text, nullable=True),
        *(sa.Column(name, sa.Integer, nullable=False) for name in counters),
        *_usage_columns(),
        sa.Column("judge_calls", sa.Integer, nullable=False),
        sa.Column("judge_attempts", sa.Integer, nullable=False),
        _timestamp("created_at", nullable=False),
        _timestamp("started_at"),
        _timestamp("finished_at"),
        _timestamp("heartbeat_at"),
    )
    op.create_index("ix_experiments_dataset_id", "experiments", ["dataset_id"])


def _scorer_results() -> None:
    op.create_table(
        "scorer_results",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("experiment_id", sa.String(64), sa.ForeignKey("experiments.id"), nullable=False),
        sa.Column("item_id", sa.Text, nullable=False),
        sa.Column("scorer_id", sa.Text, nullable=False),
        sa.Column("score", sa.Float, nullable=True),
        sa.Column("reason", sa.JSON, nullable=True),
        sa.Column("result", sa.JSON, nullable=True),
        sa.Column("duration_ms", sa.Integer, nullable=False),
        *_usage_columns(),
        sa.Column("judge_calls", sa.Integer, nullable=False),
        sa.Column("judge_attempts", sa.Integer, nullable=False),
        sa.UniqueConstraint("experiment_id", "item_id", "scorer_id"),
    )
    op.create_index(
        "ix_scorer_results_experiment_scorer", "scorer_results", ["experiment_id", "scorer_id"]
    )


_TABLES = {  # in the order their foreign keys need
    "datasets": _datasets,
    "dataset_items": _dataset_items,
    "experiments": _experiments,
    "scorer_results": _scorer_results,
}


def upgrade() -> None:
    present = set(sa.inspect(op.get_bind()).get_table_names())
    for name, create in _TABLES.items():
        if name not in present:
            create()
    if "experiments" in present:
        columns = {c["name"] for c in sa.inspect(op.get_bind()).get_columns("experiments")}
        if "heartbeat_at" not in columns:  # made by a version before heartbeats
            op.add_column("experiments", _timestamp("heartbeat_at"))


def downgrade() -> None:
    for name in reversed(_TABLES):
        op.drop_table(name)
