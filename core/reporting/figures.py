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


def _stacked_tokens(sums: pd.DataFrame, labels: Sequence[str], title: str) -> go.Figure:
    figure = go.Figure(
        [
            go.Bar(
                name=name,
                x=list(labels),
                y=sums[column].to_numpy(),
                hovertemplate="%{x}<br>" + name + ": %{y:,}<extra></extra>",
            )
            for column, name in _TOKEN_PARTS
        ]
    )
    figure.update_layout(
        title=title, barmode="stack", yaxis_title="tokens", legend_title_text="tokens"
    )
    return figure


def tokens_by_scorer_step(usage: pd.DataFrame) -> go.Figure:
    """Stacked judge tokens per scorer × step: input (not cached), cached input, output (not
    reasoning), reasoning; each bar's height is that step's input + output tokens."""
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
            go.Bar(name="model calls", x=labels, y=sums["model_calls"].to_numpy()),
            go.Bar(name="attempts", x=labels, y=sums["attempts"].to_numpy()),
        ]
    )
    figure.update_layout(title=title, barmode="group", yaxis_title="count")
    return figure


def duration_distribution(usage: pd.DataFrame) -> go.Figure:
    """Box plot of judge execution durations (ms) per scorer."""
    title = "Judge execution duration by scorer (ms)"
    if usage.empty:
        return _note(title, NO_JUDGE_CALLS)
    figure = go.Figure(
        [
            go.Box(name=str(scorer_id), y=group["duration_ms"].to_numpy(), boxpoints="outliers")
            for scorer_id, group in usage.groupby("scorer_id", sort=False)
        ]
    )
    figure.update_layout(title=title, yaxis_title="duration (ms)", showlegend=False)
    return figure


def cost_by_scorer(usage: pd.DataFrame) -> go.Figure:
    """Estimated judge cost (USD) summed per scorer, from litellm's price table."""
    title = "Estimated judge cost by scorer (USD, estimate from litellm prices)"
    if usage.empty:
        return _note(title, NO_JUDGE_CALLS)
    if usage["est_cost_usd"].isna().all():
        return _note(title, NO_PRICE)
    sums = usage.groupby("scorer_id", sort=False)["est_cost_usd"].sum(min_count=1).reset_index()
    figure = go.Figure(
        go.Bar(
            name="estimated cost",
            x=sums["scorer_id"].tolist(),
            y=sums["est_cost_usd"].to_numpy(),
            hovertemplate="%{x}: ≈ $%{y:.6f}<extra>estimate</extra>",
        )
    )
    figure.update_layout(title=title, yaxis_title="estimated USD")
    return figure
