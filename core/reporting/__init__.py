"""Pure shaping of experiment results: tables (pandas), figures (plotly), the paired comparison
of experiments, scorers' agreement with a label column, slices and reviews (no Streamlit, no
database; the files that leave the app are written in core.exchange).

The names below are imported on first use (PEP 562): importing one module of the package
(`core.reporting.agreement`, say) does not load pandas and plotly for them all, so the CLI's
commands that draw nothing start without them."""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from core.reporting.agreement import (
        Confusion,
        LabelAgreement,
        LabelError,
        ScorerAgreement,
        agreement_frame,
        agreement_line,
        agreement_verdict,
        label_agreement,
        label_columns,
        label_values,
        parse_label,
        ranked_scorers,
        scorer_verdict,
        suggested_label_column,
        verdict_badge,
    )
    from core.reporting.compare import (
        Comparison,
        DiffSegment,
        ItemPair,
        ItemPairing,
        ScorerComparison,
        bootstrap_ci,
        compare,
        compare_experiments,
        comparison_words,
        diff_html,
        item_changes,
        item_pair,
        mismatched_comparisons,
        scorer_table,
        usage_side_by_side,
        word_diff,
    )
    from core.reporting.figures import (
        calls_and_attempts,
        cost_by_scorer,
        duration_distribution,
        score_histograms,
        tokens_by_model,
        tokens_by_scorer_step,
    )
    from core.reporting.paged import (
        ALL_STEPS,
        binned_histograms,
        page_frame,
        usage_summary_frame,
        usage_summary_totals,
    )
    from core.reporting.slices import (
        CHART_VALUES,
        NO_VALUE_LABEL,
        slice_changes,
        slice_changes_frame,
        slice_chart,
        slices_frame,
        with_intervals,
    )
    from core.reporting.tables import (
        StepView,
        experiment_cost,
        experiments_frame,
        failure_groups,
        filter_items,
        item_frame,
        item_outcomes,
        judge_usage_frame,
        scored_label,
        step_views,
        usage_totals,
    )

__all__ = [
    "ALL_STEPS",
    "CHART_VALUES",
    "NO_VALUE_LABEL",
    "Comparison",
    "Confusion",
    "DiffSegment",
    "ItemPair",
    "ItemPairing",
    "LabelAgreement",
    "LabelError",
    "ScorerAgreement",
    "ScorerComparison",
    "StepView",
    "agreement_frame",
    "agreement_line",
    "agreement_verdict",
    "binned_histograms",
    "bootstrap_ci",
    "calls_and_attempts",
    "compare",
    "compare_experiments",
    "comparison_words",
    "cost_by_scorer",
    "diff_html",
    "duration_distribution",
    "experiment_cost",
    "experiments_frame",
    "failure_groups",
    "filter_items",
    "item_changes",
    "item_frame",
    "item_outcomes",
    "item_pair",
    "judge_usage_frame",
    "label_agreement",
    "label_columns",
    "label_values",
    "mismatched_comparisons",
    "page_frame",
    "parse_label",
    "ranked_scorers",
    "score_histograms",
    "scored_label",
    "scorer_table",
    "scorer_verdict",
    "slice_changes",
    "slice_changes_frame",
    "slice_chart",
    "slices_frame",
    "step_views",
    "suggested_label_column",
    "tokens_by_model",
    "tokens_by_scorer_step",
    "usage_side_by_side",
    "usage_summary_frame",
    "usage_summary_totals",
    "usage_totals",
    "verdict_badge",
    "with_intervals",
    "word_diff",
]


_LAZY: dict[str, str] = {
    "agreement_verdict": "core.reporting.agreement",
    "ranked_scorers": "core.reporting.agreement",
    "scorer_verdict": "core.reporting.agreement",
    "verdict_badge": "core.reporting.agreement",
    "experiment_cost": "core.reporting.tables",
    "Confusion": "core.reporting.agreement",
    "LabelAgreement": "core.reporting.agreement",
    "LabelError": "core.reporting.agreement",
    "ScorerAgreement": "core.reporting.agreement",
    "agreement_frame": "core.reporting.agreement",
    "agreement_line": "core.reporting.agreement",
    "label_agreement": "core.reporting.agreement",
    "label_columns": "core.reporting.agreement",
    "label_values": "core.reporting.agreement",
    "parse_label": "core.reporting.agreement",
    "suggested_label_column": "core.reporting.agreement",
    "Comparison": "core.reporting.compare",
    "DiffSegment": "core.reporting.compare",
    "ItemPair": "core.reporting.compare",
    "ItemPairing": "core.reporting.compare",
    "ScorerComparison": "core.reporting.compare",
    "bootstrap_ci": "core.reporting.compare",
    "compare": "core.reporting.compare",
    "compare_experiments": "core.reporting.compare",
    "comparison_words": "core.reporting.compare",
    "diff_html": "core.reporting.compare",
    "item_changes": "core.reporting.compare",
    "item_pair": "core.reporting.compare",
    "mismatched_comparisons": "core.reporting.compare",
    "scorer_table": "core.reporting.compare",
    "usage_side_by_side": "core.reporting.compare",
    "word_diff": "core.reporting.compare",
    "calls_and_attempts": "core.reporting.figures",
    "cost_by_scorer": "core.reporting.figures",
    "duration_distribution": "core.reporting.figures",
    "score_histograms": "core.reporting.figures",
    "tokens_by_model": "core.reporting.figures",
    "tokens_by_scorer_step": "core.reporting.figures",
    "ALL_STEPS": "core.reporting.paged",
    "binned_histograms": "core.reporting.paged",
    "page_frame": "core.reporting.paged",
    "usage_summary_frame": "core.reporting.paged",
    "usage_summary_totals": "core.reporting.paged",
    "CHART_VALUES": "core.reporting.slices",
    "NO_VALUE_LABEL": "core.reporting.slices",
    "slice_changes": "core.reporting.slices",
    "slice_changes_frame": "core.reporting.slices",
    "slice_chart": "core.reporting.slices",
    "slices_frame": "core.reporting.slices",
    "with_intervals": "core.reporting.slices",
    "StepView": "core.reporting.tables",
    "experiments_frame": "core.reporting.tables",
    "failure_groups": "core.reporting.tables",
    "filter_items": "core.reporting.tables",
    "item_frame": "core.reporting.tables",
    "item_outcomes": "core.reporting.tables",
    "judge_usage_frame": "core.reporting.tables",
    "scored_label": "core.reporting.tables",
    "step_views": "core.reporting.tables",
    "usage_totals": "core.reporting.tables",
}
"""Where each public name lives."""


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


class _Package(types.ModuleType):
    """The package, keeping the function `compare` under its name: importing the submodule of
    the same name (core.reporting.compare) sets the package's attribute to that module, which
    an eager import used to rebind at once; lazily, the attribute is left to `__getattr__`."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _LAZY and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
