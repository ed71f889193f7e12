"""Indexes for reading an experiment of a million results without loading it
(docs/storage.md, Reading a large experiment).

`ix_scorer_results_aggregates` on (experiment_id, scorer_id, score, id, then every column
the per-scorer sums read) replaces `ix_scorer_results_experiment_scorer` (its first two columns):

- the per-scorer summaries, judge usage totals and counts are answered from the index alone,
  never from the table's rows and their result JSON;
- the score histograms, the score-range filter and the sort by a scorer's score walk it in
  score order (ties in the order the results were written: `id`).

The item table's other lookups use the unique keys already there: (dataset_id, item_id) of
`dataset_items` and (experiment_id, item_id, scorer_id) of `scorer_results`.
"""

from __future__ import annotations

from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

_COLUMNS = [
    "experiment_id",
    "scorer_id",
    "score",
    "id",
    "judge_calls",
    "judge_attempts",
    "cached_calls",
    "duration_ms",
    "input_tokens",
    "output_tokens",
    "total_tokens",
    "reasoning_tokens",
    "cached_input_tokens",
    "cache_creation_input_tokens",
]


def upgrade() -> None:
    op.create_index("ix_scorer_results_aggregates", "scorer_results", _COLUMNS)
    op.drop_index("ix_scorer_results_experiment_scorer", table_name="scorer_results")


def downgrade() -> None:
    op.create_index(
        "ix_scorer_results_experiment_scorer", "scorer_results", ["experiment_id", "scorer_id"]
    )
    op.drop_index("ix_scorer_results_aggregates", table_name="scorer_results")
