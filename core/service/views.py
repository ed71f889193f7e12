"""What the dashboard's pages show and whom they show it to, as the pages may import it.

Pages reach the core through `core.service` only (plus the record modules): this module hands
them the report shaping of `core.reporting` (tables, figures, the paired comparison, the label
agreement, the export files) and the access rules of `core.dashboard_access` that the login
gate applies. Nothing here is new behaviour; each name is the one documented where it is
defined, re-exported so that a page never imports `core.reporting` or any other core package
itself (and so cannot reach, say, `create_scorer` or the storage).

From core.dashboard_access (the login gate, docs/deploy.md): DOCS, AllowList, is_loopback,
login_problems, login_wanted, unprotected_address_message. From core.reporting: the tables of
one experiment (experiments_frame, item_frame, filter_items, item_outcomes, step_views,
scored_label, failure_groups, judge_usage_frame, usage_totals), the shaping of a large
experiment's aggregates and pages (page_frame, binned_histograms, usage_summary_frame,
usage_summary_totals, ALL_STEPS), its figures, its slices by metadata (slices_frame,
slice_chart, slice_changes_frame, NO_VALUE_LABEL, CHART_VALUES; the readable pivot, one
scorer's chart and Compare's paired change per slice of core/reporting/slice_views.py), the N
experiments side by side (core/reporting/side_by_side.py), the agreement with
a label column, the paired comparison (compare_experiments, item_changes, item_pair,
diff_html, ...), and the files it is shared as (experiment_html, experiment_json_text,
results_csv). From core.reporting's review modules (docs/review.md): QueueEntry,
REVIEWS_SOURCE, ANONYMOUS, WHOLE_ITEM, scorer_range, scorer_threshold. From core._collector:
collector_paused (the cyclic collector paused around a page's bulk read).
"""

from __future__ import annotations

from core._collector import collector_paused
from core.dashboard_access import (
    DOCS,
    AllowList,
    is_loopback,
    login_problems,
    login_wanted,
    unprotected_address_message,
)
from core.exchange.exports import experiment_json_text, results_csv
from core.exchange.html import experiment_html, write_experiment_html
from core.reporting import (
    ALL_STEPS,
    CHART_VALUES,
    NO_VALUE_LABEL,
    Comparison,
    LabelAgreement,
    StepView,
    agreement_frame,
    agreement_verdict,
    binned_histograms,
    calls_and_attempts,
    compare_experiments,
    comparison_words,
    cost_by_scorer,
    diff_html,
    duration_distribution,
    experiment_cost,
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
    page_frame,
    score_histograms,
    scored_label,
    scorer_table,
    scorer_verdict,
    slice_changes_frame,
    slice_chart,
    slices_frame,
    step_views,
    suggested_label_column,
    tokens_by_model,
    tokens_by_scorer_step,
    usage_side_by_side,
    usage_summary_frame,
    usage_summary_totals,
    usage_totals,
)
from core.reporting.agreement import REVIEWS_SOURCE
from core.reporting.review_queue import QueueEntry
from core.reporting.reviews import ANONYMOUS, WHOLE_ITEM, scorer_range, scorer_threshold
from core.reporting.side_by_side import CHANGE_SUFFIX, side_by_side, side_by_side_columns
from core.reporting.slice_views import (
    CHART_TOP,
    CORRECTION,
    MIN_SLICE,
    PairedSliceChange,
    SliceBar,
    paired_slice_changes,
    paired_slice_frame,
    slice_pivot,
    worst_values,
)

__all__ = [
    "ALL_STEPS",
    "ANONYMOUS",
    "CHANGE_SUFFIX",
    "CHART_TOP",
    "CHART_VALUES",
    "CORRECTION",
    "DOCS",
    "MIN_SLICE",
    "NO_VALUE_LABEL",
    "REVIEWS_SOURCE",
    "WHOLE_ITEM",
    "AllowList",
    "Comparison",
    "LabelAgreement",
    "PairedSliceChange",
    "QueueEntry",
    "SliceBar",
    "StepView",
    "agreement_frame",
    "agreement_verdict",
    "binned_histograms",
    "calls_and_attempts",
    "collector_paused",
    "compare_experiments",
    "comparison_words",
    "cost_by_scorer",
    "diff_html",
    "duration_distribution",
    "experiment_cost",
    "experiment_html",
    "experiment_json_text",
    "experiments_frame",
    "failure_groups",
    "filter_items",
    "is_loopback",
    "item_changes",
    "item_frame",
    "item_outcomes",
    "item_pair",
    "judge_usage_frame",
    "label_agreement",
    "label_columns",
    "login_problems",
    "login_wanted",
    "mismatched_comparisons",
    "page_frame",
    "paired_slice_changes",
    "paired_slice_frame",
    "results_csv",
    "score_histograms",
    "scored_label",
    "scorer_range",
    "scorer_table",
    "scorer_threshold",
    "scorer_verdict",
    "side_by_side",
    "side_by_side_columns",
    "slice_changes_frame",
    "slice_chart",
    "slice_pivot",
    "slices_frame",
    "step_views",
    "suggested_label_column",
    "tokens_by_model",
    "tokens_by_scorer_step",
    "unprotected_address_message",
    "usage_side_by_side",
    "usage_summary_frame",
    "usage_summary_totals",
    "usage_totals",
    "worst_values",
    "write_experiment_html",
]
