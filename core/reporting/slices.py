"""Slices: an experiment's results per value of a metadata column (the database groups them,
core/storage/slices.py); here the 95% interval of each mean, the failed runs held in memory
per slice, the per-slice change between two experiments, and their tables and chart.

Pure shaping: no Streamlit, no database.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from typing import Any

import pandas as pd

from core.records import SliceChange, SliceScorer, SliceSummary

__all__ = [
    "CHART_VALUES",
    "CONFIDENCE",
    "NO_VALUE_LABEL",
    "slice_changes",
    "slice_changes_frame",
    "slice_chart",
    "slices_frame",
    "t_interval",
    "with_intervals",
]

CONFIDENCE = 0.95
CHART_VALUES = 40
"""Values drawn at most by `slice_chart` (those with the most items; the table has them all)."""
NO_VALUE_LABEL = "(no value)"
"""How a slice of items without a value is shown."""


@lru_cache(maxsize=512)
def _t_quantile(degrees: int) -> float:
    from scipy.stats import t  # scipy is heavy: imported when a slice is first shown

    return float(t.ppf(0.5 + CONFIDENCE / 2, degrees))


def t_interval(mean: float | None, sd: float | None, n: int) -> tuple[float, float] | None:
    """The 95% Student t-interval of a mean: mean ± t(0.975, n-1) · sd / √n (the scores of a
    slice are few and not normal: t, not the normal quantile, so a slice of 5 items gets the
    wider interval it deserves). None under two scores or without a standard deviation."""
    if mean is None or sd is None or n < 2:
        return None
    half = _t_quantile(n - 1) * sd / math.sqrt(n)
    return mean - half, mean + half


def with_intervals(
    summaries: Sequence[SliceSummary],
    failed: Mapping[str, Mapping[str, int]] | None,
) -> list[SliceSummary]:
    """The summaries with each scorer's 95% t-interval (`t_interval`) and, when the failures
    are held in memory (`failed` not None: slice value -> scorer -> failed runs), its failed
    runs per slice (0 where none failed)."""
    found = []
    for summary in summaries:
        scorers = []
        for scorer in summary.scorers:
            interval = t_interval(scorer.mean, scorer.sd, scorer.scored)
            update: dict[str, Any] = {
                "low": None if interval is None else interval[0],
                "high": None if interval is None else interval[1],
            }
            if failed is not None:
                update["failed"] = failed.get(summary.value, {}).get(scorer.scorer_id, 0)
            scorers.append(scorer.model_copy(update=update))
        found.append(summary.model_copy(update={"scorers": scorers}))
    return found


def slice_changes(
    baseline: Sequence[SliceSummary], candidate: Sequence[SliceSummary]
) -> list[SliceChange]:
    """Per slice value (either side's) and scorer run on both sides: the change of the mean
    from the baseline to the candidate, worst first (largest drop first; slices whose change
    cannot be computed, one side having no score, last)."""
    before = {s.value: s for s in baseline}
    after = {s.value: s for s in candidate}
    scorer_ids = [
        scorer.scorer_id
        for scorer in (baseline[0].scorers if baseline else [])
        if candidate and scorer.scorer_id in {c.scorer_id for c in candidate[0].scorers}
    ]
    column = (baseline or candidate)[0].column if (baseline or candidate) else ""
    changes = []
    for value in dict.fromkeys([*before, *after]):
        for scorer_id in scorer_ids:
            a = _scorer(before.get(value), scorer_id)
            b = _scorer(after.get(value), scorer_id)
            change = None
            if a.mean is not None and b.mean is not None:
                change = b.mean - a.mean
            changes.append(
                SliceChange(
                    column=column,
                    value=value,
                    scorer_id=scorer_id,
                    baseline_n=a.scored,
                    candidate_n=b.scored,
                    baseline_mean=a.mean,
                    candidate_mean=b.mean,
                    change=change,
                )
            )
    return sorted(changes, key=lambda c: (c.change is None, c.change or 0.0))


def _scorer(summary: SliceSummary | None, scorer_id: str) -> SliceScorer:
    for scorer in summary.scorers if summary is not None else []:
        if scorer.scorer_id == scorer_id:
            return scorer
    return SliceScorer(scorer_id=scorer_id)


def _label(value: str) -> str:
    return NO_VALUE_LABEL if value == "" else value


def slices_frame(summaries: Sequence[SliceSummary]) -> pd.DataFrame:
    """One row per slice and scorer: `value, items, scorer, scored, mean, low, high,
    missing, failed` (failed empty when the failures are not in memory)."""
    rows = [
        {
            "value": _label(summary.value),
            "items": summary.items,
            "scorer": scorer.scorer_id,
            "scored": scorer.scored,
            "mean": scorer.mean,
            "low": scorer.low,
            "high": scorer.high,
            "missing": scorer.missing,
            "failed": scorer.failed,
        }
        for summary in summaries
        for scorer in summary.scorers
    ]
    columns = ["value", "items", "scorer", "scored", "mean", "low", "high", "missing", "failed"]
    frame = pd.DataFrame(rows, columns=columns)
    return frame.astype({"mean": float, "low": float, "high": float, "failed": "Int64"})


def slice_changes_frame(changes: Sequence[SliceChange]) -> pd.DataFrame:
    """One row per change, in its order: `scorer, value, baseline_n, baseline_mean,
    candidate_n, candidate_mean, change`."""
    rows = [
        {
            "scorer": change.scorer_id,
            "value": _label(change.value),
            "baseline_n": change.baseline_n,
            "baseline_mean": change.baseline_mean,
            "candidate_n": change.candidate_n,
            "candidate_mean": change.candidate_mean,
            "change": change.change,
        }
        for change in changes
    ]
    columns = [
        "scorer",
        "value",
        "baseline_n",
        "baseline_mean",
        "candidate_n",
        "candidate_mean",
        "change",
    ]
    frame = pd.DataFrame(rows, columns=columns)
    return frame.astype({"baseline_mean": float, "candidate_mean": float, "change": float})


def slice_chart(
    summaries: Sequence[SliceSummary],
    titles: Mapping[str, str] | None = None,
    escape: Callable[[str], str] = str,
) -> Any:
    """A plotly figure: per scorer, a bar per slice at its mean with the 95% t-interval as
    error bars (grouped by slice, one colour per scorer). `titles` names the scorers in the
    legend (already escaped for the chart by the caller); `escape` makes a slice value safe
    as a plotly label (the values come from the dataset). Only the `CHART_VALUES` values with
    the most items are drawn (a free-text column would draw thousands of bars)."""
    import plotly.graph_objects as go

    titles = titles or {}
    summaries = sorted(summaries, key=lambda s: -s.items)[:CHART_VALUES]
    labels = [escape(_label(summary.value)) for summary in summaries]
    figure = go.Figure()
    scorer_ids = [scorer.scorer_id for scorer in summaries[0].scorers] if summaries else []
    for scorer_id in scorer_ids:
        entries = [_scorer(summary, scorer_id) for summary in summaries]
        figure.add_bar(
            name=titles.get(scorer_id, scorer_id),
            x=labels,
            y=[math.nan if entry.mean is None else entry.mean for entry in entries],
            error_y={
                "type": "data",
                "symmetric": False,
                "array": [_above(entry) for entry in entries],
                "arrayminus": [_below(entry) for entry in entries],
            },
            text=[f"n={entry.scored}" for entry in entries],
            hovertemplate="%{x}: mean %{y:.3f} (%{text})<extra></extra>",
            textposition="none",
        )
    figure.update_layout(
        barmode="group",
        height=340,
        margin={"l": 10, "r": 10, "t": 30, "b": 10},
        yaxis_title="mean score (95% t-interval)",
        xaxis={"type": "category", "automargin": True, "tickangle": 0},
        legend={"orientation": "h", "y": 1.1},
    )
    return figure


def _above(entry: SliceScorer) -> float:
    if entry.high is None or entry.mean is None:
        return 0.0
    return entry.high - entry.mean


def _below(entry: SliceScorer) -> float:
    if entry.low is None or entry.mean is None:
        return 0.0
    return entry.mean - entry.low
