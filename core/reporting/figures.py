"""Plotly figures for the experiment and judge-usage pages (no Streamlit).

Every figure takes a frame from `core.reporting.tables` and draws the sums or counts it holds;
an empty frame gives a figure with a "No judge calls" (or "No scores") note, never an error.

The token bars stack parts that add up to the tokens actually billed: providers count cached
prompt tokens inside the input tokens and reasoning tokens inside the output tokens, so the
stack is input (not cached), cached input, output (not reasoning) and reasoning, and its height
is input + output.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from itertools import pairwise

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from core.record_base import STEP_ORDER

__all__ = [
    "NO_JUDGE_CALLS",
    "NO_SCORES",
    "calls_and_attempts",
    "cost_by_scorer",
    "duration_distribution",
    "score_histograms",
    "short_label",
    "tokens_by_model",
    "tokens_by_scorer_step",
]

NO_JUDGE_CALLS = "No judge calls"
"""The note on a usage figure drawn from an empty frame."""

NO_SCORES = "No scores"
"""The note on a histogram figure with nothing to count."""

NO_PRICE = "No price known for the judge model: the cost cannot be estimated"
"""The note on the cost figure when litellm knows no price for any execution."""

_BINS = 10
_TOKEN_PARTS: tuple[tuple[str, str], ...] = (
    ("input_uncached", "input (not cached)"),
    ("cached_input_tokens", "cached input"),
    ("output_visible", "output (not reasoning)"),
    ("reasoning_tokens", "reasoning"),
)


def _note(title: str, text: str) -> go.Figure:
    """An empty figure with a centred note."""
    figure = go.Figure()
    figure.add_annotation(
        text=text, showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper", font={"size": 16}
    )
    figure.update_layout(title=title, xaxis={"visible": False}, yaxis={"visible": False})
    return figure


# ---- scores ----


def score_histograms(items: pd.DataFrame, scorer_ids: Sequence[str]) -> go.Figure:
    """One histogram per scorer (10 bins over 0..1, widened when a score falls outside), in a
    grid of small multiples titled with the scorer id, the count scored and the mean."""
    title = "Score distribution per scorer"
    present = [scorer_id for scorer_id in scorer_ids if scorer_id in items.columns]
    if items.empty or not present or items[present].isna().all().all():
        return _note(title, NO_SCORES)
    columns = min(len(present), 2)
    rows = math.ceil(len(present) / columns)
    values = {scorer_id: items[scorer_id].dropna().to_numpy(dtype=float) for scorer_id in present}
    figure = make_subplots(
        rows=rows,
        cols=columns,
        subplot_titles=[_histogram_title(scorer_id, values[scorer_id]) for scorer_id in present],
    )
    for n, scorer_id in enumerate(present):
        figure.add_trace(
            _histogram(scorer_id, values[scorer_id]), row=n // columns + 1, col=n % columns + 1
        )
    figure.update_layout(title=title, showlegend=False, height=60 + 260 * rows, bargap=0.05)
    figure.update_xaxes(title_text="score")
    figure.update_yaxes(title_text="items")
    return figure


def _histogram_title(scorer_id: str, scores: np.ndarray) -> str:
    if scores.size == 0:
        return f"{scorer_id} (no scores)"
    return f"{scorer_id} ({scores.size} scored, mean {scores.mean():.3f})"


def _histogram(scorer_id: str, scores: np.ndarray) -> go.Bar:
    low = min(0.0, float(scores.min())) if scores.size else 0.0
    high = max(1.0, float(scores.max())) if scores.size else 1.0
    counts, edges = np.histogram(scores, bins=_BINS, range=(low, high))
    ranges = [f"{a:.2f}–{b:.2f}" for a, b in pairwise(edges)]
    return go.Bar(
        name=scorer_id,
        x=(edges[:-1] + edges[1:]) / 2,
        y=counts,
        width=float(edges[1] - edges[0]),
        # plotly takes any values as customdata; plotly-stubs allow numbers only.
        customdata=ranges,  # type: ignore[arg-type]
        hovertemplate="score %{customdata}: %{y} items<extra>" + scorer_id + "</extra>",
    )


# ---- judge usage ----


_TOKEN_COLUMNS = ["input_tokens", "output_tokens", "reasoning_tokens", "cached_input_tokens"]


def _with_parts(sums: pd.DataFrame) -> pd.DataFrame:
    """Token sums plus the stacked parts `input_uncached` (input - cached) and `output_visible`
    (output - reasoning), never below 0."""
    sums["input_uncached"] = (sums["input_tokens"] - sums["cached_input_tokens"]).clip(lower=0)
    sums["output_visible"] = (sums["output_tokens"] - sums["reasoning_tokens"]).clip(lower=0)
    return sums


def _by_scorer_step(usage: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
    """Sums per scorer × step, steps in Mastra order, with a `label` "scorer · step"."""
    sums = usage.groupby(["scorer_id", "step"], sort=False)[list(columns)].sum().reset_index()
    order = {step: n for n, step in enumerate(STEP_ORDER)}
    sums["_order"] = sums["step"].map(lambda step: order.get(step, len(order)))
    sums = sums.sort_values(["scorer_id", "_order"], kind="stable").drop(columns="_order")
    sums["label"] = sums["scorer_id"] + " · " + sums["step"]
    return sums.reset_index(drop=True)


LABEL_WIDTH = 32
"""Characters of a bar's label shown beside it; the whole label is in its hover text."""

_ENTITY_OR_CHAR = re.compile(r"&(?:#\d+|#x[0-9a-fA-F]+|[A-Za-z]\w*);|.", re.DOTALL)


def short_label(label: str, width: int = LABEL_WIDTH) -> str:
    """`label` cut to `width` characters, the cut in the middle (`answer-rel…cy · analyze`):
    the scorer's start and the step at the end are what tell bars apart. An HTML entity
    (`&lt;`, as labels escaped for plotly hold) counts as the one character it shows and is
    never cut."""
    units = _ENTITY_OR_CHAR.findall(label)
    if len(units) <= width:
        return label
    keep = width - 1
    return "".join(units[: keep - keep // 2]) + "…" + "".join(units[len(units) - keep // 2 :])


def _horizontal(
    figure: go.Figure, labels: Sequence[str], title: str, axis: str, per_label: int = 1
) -> go.Figure:
    """Bars lying down, labels (shortened) beside them and read top to bottom, the figure as
    tall as its bars need: upright bars spent most of their height on slanted labels."""
    figure.update_layout(
        title=title,
        xaxis_title=axis,
        yaxis={"autorange": "reversed", "automargin": True},
        height=160 + 24 * max(len(labels), 1) * per_label,
        legend={"orientation": "h", "y": -0.2},
    )
    return figure


def _bar(name: str, labels: Sequence[str], values: object, hover: str) -> go.Bar:
    """One horizontal bar trace: short labels on the axis (whole ones when two would read
    the same: bars of one category are drawn as one), the whole label in the hover."""
    shown = [short_label(label) for label in labels]
    if len(set(shown)) < len(set(labels)):
        shown = list(labels)
    return go.Bar(
        name=name,
        # plotly takes text categories on either axis; plotly-stubs allow numbers only.
        y=shown,  # type: ignore[arg-type]
        x=values,  # type: ignore[arg-type]
        orientation="h",
        # plotly takes any values as customdata; plotly-stubs allow numbers only.
        customdata=list(labels),  # type: ignore[arg-type]
        hovertemplate="%{customdata}<br>" + hover + "<extra></extra>",
    )


def _stacked_tokens(sums: pd.DataFrame, labels: Sequence[str], title: str) -> go.Figure:
    figure = go.Figure(
        [
            _bar(name, labels, sums[column].to_numpy(), name + ": %{x:,}")
            for column, name in _TOKEN_PARTS
        ]
    )
    figure.update_layout(barmode="stack", legend_title_text="tokens")
    return _horizontal(figure, labels, title, "tokens")


def tokens_by_scorer_step(usage: pd.DataFrame) -> go.Figure:
    """Stacked judge tokens per scorer × step: input (not cached), cached input, output (not
    reasoning), reasoning; each bar's length is that step's input + output tokens."""
    title = "Judge tokens by scorer and step"
    if usage.empty:
        return _note(title, NO_JUDGE_CALLS)
    sums = _with_parts(_by_scorer_step(usage, _TOKEN_COLUMNS))
    return _stacked_tokens(sums, sums["label"].tolist(), title)


def tokens_by_model(usage: pd.DataFrame) -> go.Figure:
    """Stacked judge tokens per judge model (as the provider named it), same parts as
    `tokens_by_scorer_step`."""
    title = "Judge tokens by judge model"
    if usage.empty:
        return _note(title, NO_JUDGE_CALLS)
    models = usage.assign(model=usage["model"].fillna("unknown model"))
    sums = _with_parts(models.groupby("model", sort=False)[_TOKEN_COLUMNS].sum().reset_index())
    return _stacked_tokens(sums, sums["model"].tolist(), title)


def calls_and_attempts(usage: pd.DataFrame) -> go.Figure:
    """Judge model calls (that returned) next to attempts (started) per scorer × step."""
    title = "Judge calls and attempts by scorer and step"
    if usage.empty:
        return _note(title, NO_JUDGE_CALLS)
    sums = _by_scorer_step(usage, ["model_calls", "attempts"])
    labels = sums["label"].tolist()
    figure = go.Figure(
        [
            _bar("model calls", labels, sums["model_calls"].to_numpy(), "model calls: %{x:,}"),
            _bar("attempts", labels, sums["attempts"].to_numpy(), "attempts: %{x:,}"),
        ]
    )
    figure.update_layout(barmode="group")
    return _horizontal(figure, labels, title, "count", per_label=2)


def duration_distribution(usage: pd.DataFrame) -> go.Figure:
    """Box plot of judge execution durations (ms) per scorer, lying down."""
    title = "Judge execution duration by scorer (ms)"
    if usage.empty:
        return _note(title, NO_JUDGE_CALLS)
    groups = list(usage.groupby("scorer_id", sort=False))
    figure = go.Figure(
        [
            go.Box(
                name=short_label(str(scorer_id)),
                x=group["duration_ms"].to_numpy(),
                orientation="h",
                boxpoints="outliers",
                hovertext=str(scorer_id),
            )
            for scorer_id, group in groups
        ]
    )
    _horizontal(figure, [str(scorer_id) for scorer_id, _ in groups], title, "duration (ms)")
    figure.update_layout(showlegend=False)
    return figure


def cost_by_scorer(usage: pd.DataFrame) -> go.Figure:
    """Estimated judge cost (USD) summed per scorer, from litellm's price table."""
    title = "Estimated judge cost by scorer (USD, estimate from litellm prices)"
    if usage.empty:
        return _note(title, NO_JUDGE_CALLS)
    if usage["est_cost_usd"].isna().all():
        return _note(title, NO_PRICE)
    sums = usage.groupby("scorer_id", sort=False)["est_cost_usd"].sum(min_count=1).reset_index()
    labels = sums["scorer_id"].tolist()
    figure = go.Figure(
        _bar("estimated cost", labels, sums["est_cost_usd"].to_numpy(), "≈ $%{x:.6f} (estimate)")
    )
    return _horizontal(figure, labels, title, "estimated USD")
