"""What the dashboard's pages show and whom they show it to, as the pages may import it.

Pages reach the core through `core.service` only (plus the record modules): this module hands
them the report shaping of `core.reporting` (tables, figures, the paired comparison, the label
agreement, the export files) and the access rules of `core.dashboard_access` that the login
gate applies. Nothing here is new behaviour; each name is the one documented where it is
defined, re-exported so that a page never imports `core.reporting` or any other core package
itself (and so cannot reach, say, `create_scorer` or the storage).
"""

from __future__ import annotations

from core.dashboard_access import (
    DOCS,
    AllowList,
    is_loopback,
    login_problems,
    login_wanted,
    unprotected_address_message,
)
from core.reporting import (
    Comparison,
    LabelAgreement,
    StepView,
    agreement_frame,
    calls_and_attempts,
    compare_experiments,
    comparison_words,
    cost_by_scorer,
    diff_html,
    duration_distribution,
    experiment_html,
    experiment_json_text,
    experiments_frame,
    failure_groups,
    filter_items,
    item_changes,
    item_frame,
    item_outcomes,
    item_pair,
    judge_usage_frame,
    label_agreement,
    label_columns,
    mismatched_comparisons,
    results_csv,
    score_histograms,
    scored_label,
    scorer_table,
    step_views,
    suggested_label_column,
    tokens_by_model,
    tokens_by_scorer_step,
    usage_side_by_side,
    usage_totals,
)

__all__ = [
    # the login gate (core.dashboard_access; docs/deploy.md)
    "DOCS",
    "AllowList",
    "is_loopback",
    "login_problems",
    "login_wanted",
    "unprotected_address_message",
    # one experiment: tables, filters, drill-down (core.reporting.tables)
    "StepView",
    "experiments_frame",
    "failure_groups",
    "filter_items",
    "item_frame",
    "item_outcomes",
    "judge_usage_frame",
    "scored_label",
    "step_views",
    "usage_totals",
    # figures (core.reporting.figures)
    "calls_and_attempts",
    "cost_by_scorer",
    "duration_distribution",
    "score_histograms",
    "tokens_by_model",
    "tokens_by_scorer_step",
    # agreement with a label column (core.reporting.agreement)
    "LabelAgreement",
    "agreement_frame",
    "label_agreement",
    "label_columns",
    "suggested_label_column",
    # comparing experiments (core.reporting.compare)
    "Comparison",
    "compare_experiments",
    "comparison_words",
    "diff_html",
    "item_changes",
    "item_pair",
    "mismatched_comparisons",
    "scorer_table",
    "usage_side_by_side",
    # the files an experiment is shared as (core.reporting.exports, core.reporting.html)
    "experiment_html",
    "experiment_json_text",
    "results_csv",
]
