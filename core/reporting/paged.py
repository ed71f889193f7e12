"""Shaping for the pages of a large experiment: the database's aggregates and a page of the item
table, never the whole experiment (docs/storage.md, Reading a large experiment).

Pure: the records in, pandas frames and plotly figures out; no Streamlit, no database.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from itertools import pairwise
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from core.judge.pricing import canonical_model
from core.records import ResultPage, ScoreHistogram, ScorerOutcome, ScorerUsage, StepUsage
from core.reporting.figures import NO_SCORES, _note
from core.reporting.table_rows import (
    ITEM_COLUMNS,
    TOKEN_COLUMNS,
    USAGE_COLUMNS,
    _check_scorer_ids,
    _display,
)
from core.reporting.tables import judge_usage_frame

__all__ = [
    "ALL_STEPS",
    "binned_histograms",
    "page_frame",
    "usage_summary_frame",
    "usage_summary_totals",
]

ALL_STEPS = "all steps"
"""The step of a `usage_summary_frame` row summing a scorer's stored runs."""


def binned_histograms(
    histograms: Sequence[ScoreHistogram],
    titles: Mapping[str, str] | None = None,
    means: Mapping[str, float | None] | None = None,
) -> go.Figure:
    """One bar chart per scorer from bins the database counted, in a grid of small multiples
    titled with `titles[scorer_id]` (the id when absent), the count scored and the mean."""
    title = "Score distribution per scorer"
    shown = [h for h in histograms if sum(h.counts)]
    if not shown:
        return _note(title, NO_SCORES)
    titles, means = titles or {}, means or {}
    columns = min(len(shown), 2)
    rows = math.ceil(len(shown) / columns)
    figure = make_subplots(
        rows=rows,
        cols=columns,
        subplot_titles=[_title(h, titles, means) for h in shown],
    )
    for n, histogram in enumerate(shown):
        figure.add_trace(_bars(histogram), row=n // columns + 1, col=n % columns + 1)
    figure.update_layout(title=title, showlegend=False, height=60 + 260 * rows, bargap=0.05)
    figure.update_xaxes(title_text="score")
    figure.update_yaxes(title_text="items")
    return figure


def _title(
    histogram: ScoreHistogram, titles: Mapping[str, str], means: Mapping[str, float | None]
) -> str:
    name = titles.get(histogram.scorer_id, histogram.scorer_id)
    mean = means.get(histogram.scorer_id)
    shown = "" if mean is None else f", mean {mean:.3f}"
    return f"{name} ({sum(histogram.counts):,} scored{shown})"


def _bars(histogram: ScoreHistogram) -> go.Bar:
    edges = np.array(histogram.edges)
    ranges = [f"{a:.2f}–{b:.2f}" for a, b in pairwise(edges)]
    return go.Bar(
        name=histogram.scorer_id,
        x=(edges[:-1] + edges[1:]) / 2,
        y=histogram.counts,
        width=float(edges[1] - edges[0]),
        # plotly takes any values as customdata; plotly-stubs allow numbers only.
        customdata=ranges,  # type: ignore[arg-type]
        hovertemplate="score %{customdata}: %{y} items",
    )


def page_frame(page: ResultPage, scorer_ids: Sequence[str]) -> pd.DataFrame:
    """One row per item of the page, in its order: `item_id, input, output, ground_truth` as
    display strings, one float column per scorer (NaN when not scored), `failed` (the scorers
    that failed on it, comma-joined, in `scorer_ids` order) and `judge_tokens`.

    Raises ValueError when a scorer id is also the name of a fixed column."""
    scorer_ids = list(scorer_ids)
    _check_scorer_ids(scorer_ids)
    order = {scorer_id: n for n, scorer_id in enumerate(scorer_ids)}
    columns: dict[str, Any] = {
        "item_id": [row.item_id for row in page.rows],
        "input": [_display(row.input) for row in page.rows],
        "output": [_display(row.output) for row in page.rows],
        "ground_truth": [_display(row.ground_truth) for row in page.rows],
    }
    for scorer_id in scorer_ids:
        columns[scorer_id] = np.array(
            [_score(row.scores.get(scorer_id)) for row in page.rows], dtype=float
        )
    columns["failed"] = [
        ",".join(sorted(dict.fromkeys(row.failed), key=lambda s: order.get(s, len(order))))
        for row in page.rows
    ]
    columns["judge_tokens"] = np.array([row.judge_tokens for row in page.rows], dtype=np.int64)
    frame = pd.DataFrame(columns)
    return frame.astype(dict.fromkeys([*ITEM_COLUMNS, "failed"], "str"))


def _score(value: float | None) -> float:
    return math.nan if value is None else value


def usage_summary_frame(
    usages: Sequence[ScorerUsage], failures: Sequence[ScorerOutcome] = ()
) -> pd.DataFrame:
    """A `judge_usage_frame` of a large experiment: per scorer, one row per prompt step and model
    summing its stored runs that keep their usage per step (`ScorerUsage.steps`), and one row
    (step `ALL_STEPS`, model the experiment's judge, `duration_ms` summed over the runs) summing
    those that do not (every run stored before per-step usage was kept); then one row per judge
    execution of the failed runs held in memory. Scorers without judge calls are left out."""
    rows = [
        row
        for usage in usages
        if usage.judge_calls or usage.judge_attempts
        for row in _usage_rows(usage)
    ]
    stored = pd.DataFrame(rows, columns=list(USAGE_COLUMNS))
    failed = judge_usage_frame(failures)
    frame = pd.concat([stored, failed], ignore_index=True) if len(failed) else stored
    ints = ["attempts", "model_calls", "duration_ms", *TOKEN_COLUMNS]
    texts = ["item_id", "scorer_id", "step", "status"]
    dtypes = dict.fromkeys(ints, "int64") | dict.fromkeys(texts, "str")
    return frame.astype(dtypes | {"est_cost_usd": "float64"})


def _usage_rows(usage: ScorerUsage) -> list[dict[str, Any]]:
    """The scorer's rows: per step when its runs keep it (then "all steps" for the rest)."""
    if not usage.steps:
        return [_usage_row(usage.scorer_id, usage)]
    rows = [_usage_row(usage.scorer_id, step) for step in usage.steps]
    rest = usage.unsplit
    if rest is not None and (rest.judge_calls or rest.judge_attempts):
        rows.append(_usage_row(usage.scorer_id, rest))
    return rows


def _usage_row(scorer_id: str, usage: ScorerUsage | StepUsage) -> dict[str, Any]:
    tokens = usage.usage
    step = usage.step if isinstance(usage, StepUsage) and usage.step else ALL_STEPS
    return {
        "item_id": "",
        "scorer_id": scorer_id,
        "step": step,
        "status": "success",
        "model": canonical_model(usage.model) if usage.model else usage.model,
        "provider": None,
        "attempts": usage.judge_attempts,
        "model_calls": usage.judge_calls,
        "duration_ms": usage.duration_ms,
        "input_tokens": tokens.input_tokens or 0,
        "output_tokens": tokens.output_tokens or 0,
        "reasoning_tokens": tokens.reasoning_tokens or 0,
        "cached_input_tokens": tokens.cached_input_tokens or 0,
        "total_tokens": tokens.total_tokens or 0,
        "est_cost_usd": math.nan if usage.est_cost_usd is None else usage.est_cost_usd,
    }


def usage_summary_totals(
    usages: Sequence[ScorerUsage], failures: Sequence[ScorerOutcome] = ()
) -> dict[str, float]:
    """Sums over the stored runs' usage and the failed runs held in memory: every token column,
    `model_calls`, `attempts`, `est_cost_usd` (NaN when nothing has a known price), `runs`
    (stored runs that called the judge) and `failed` (failed runs held in memory)."""
    frame = usage_summary_frame(usages, failures)
    sums = ("model_calls", "attempts", *TOKEN_COLUMNS)
    totals = {name: float(frame[name].sum()) for name in sums}
    costs = frame["est_cost_usd"]
    totals["est_cost_usd"] = float(costs.sum()) if costs.notna().any() else math.nan
    totals["runs"] = float(sum(u.runs for u in usages if u.judge_calls or u.judge_attempts))
    totals["failed"] = float(len(failures))
    return totals
