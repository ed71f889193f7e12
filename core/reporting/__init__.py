"""Pure shaping of experiment results: tables (pandas), figures (plotly) and JSON, CSV and HTML
exports (no Streamlit, no database)."""

from core.reporting.exports import (
    experiment_json,
    failure_entry,
    neutralise_cell,
    result_rows,
    results_csv,
)
from core.reporting.figures import (
    calls_and_attempts,
    cost_by_scorer,
    duration_distribution,
    score_histograms,
    tokens_by_model,
    tokens_by_scorer_step,
)
from core.reporting.html import experiment_html
from core.reporting.tables import (
    StepView,
    experiments_frame,
    failure_groups,
    filter_items,
    item_frame,
    item_outcomes,
    judge_usage_frame,
    step_views,
    usage_totals,
)

__all__ = [
    "StepView",
    "calls_and_attempts",
    "cost_by_scorer",
    "duration_distribution",
    "experiment_html",
    "experiment_json",
    "experiments_frame",
    "failure_entry",
    "failure_groups",
    "filter_items",
    "item_frame",
    "item_outcomes",
    "judge_usage_frame",
    "neutralise_cell",
    "result_rows",
    "results_csv",
    "score_histograms",
    "step_views",
    "tokens_by_model",
    "tokens_by_scorer_step",
    "usage_totals",
]
