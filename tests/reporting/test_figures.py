"""The plotly figures: their traces hold the sums and counts of the tables (the experiment is
described in _records.py)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from core.records import ExperimentDetail, ScorerOutcome
from core.reporting import (
    calls_and_attempts,
    cost_by_scorer,
    duration_distribution,
    item_frame,
    judge_usage_frame,
    score_histograms,
    tokens_by_model,
    tokens_by_scorer_step,
)
from core.reporting.figures import LABEL_WIDTH, short_label

USAGE_FIGURES: list[Callable[[pd.DataFrame], go.Figure]] = [
    tokens_by_scorer_step,
    tokens_by_model,
    calls_and_attempts,
    duration_distribution,
    cost_by_scorer,
]


@pytest.fixture
def usage(outcomes: list[ScorerOutcome]) -> pd.DataFrame:
    return judge_usage_frame(outcomes)


def traces(figure: go.Figure) -> dict[str, list[float]]:
    """Values per trace name (x of lying bars, y of upright ones)."""
    return {
        trace.name: list(trace.x if trace.orientation == "h" else trace.y) for trace in figure.data
    }


def labels(trace: go.Bar) -> list[str]:
    """The whole labels of a lying bar trace (the axis shows them shortened)."""
    assert trace.orientation == "h"
    return list(trace.customdata)


def notes(figure: go.Figure) -> list[str]:
    return [annotation.text for annotation in figure.layout.annotations]


# ---- scores ----


def test_score_histograms_count_each_scorer_in_ten_bins(detail: ExperimentDetail) -> None:
    figure = score_histograms(item_frame(detail), ["relevancy", "tone"])
    relevancy, tone = figure.data
    assert relevancy.name == "relevancy" and tone.name == "tone"
    assert list(relevancy.y) == [0, 0, 1, 0, 0, 0, 0, 0, 0, 1]  # 0.25 and 1.0 (last bin closed)
    assert list(tone.y) == [1, 0, 0, 0, 0, 1, 0, 0, 0, 0]  # 0.0 and 0.5
    assert list(np.round(relevancy.x, 2)) == [0.05, 0.15, 0.25, 0.35, 0.45, 0.55, 0.65, 0.75,
                                              0.85, 0.95]  # fmt: skip
    assert relevancy.xaxis != tone.xaxis  # one panel each
    titles = notes(figure)
    assert titles == ["relevancy (2 scored, mean 0.625)", "tone (2 scored, mean 0.250)"]


def test_score_histograms_widen_the_range_for_scores_outside_zero_one() -> None:
    items = pd.DataFrame({"s": [0.0, 1.0, 2.0, np.nan]})
    (bars,) = score_histograms(items, ["s"]).data
    assert sum(bars.y) == 3
    assert bars.x[-1] == pytest.approx(1.9)


def test_score_histograms_of_a_scorer_without_scores(detail: ExperimentDetail) -> None:
    frame = item_frame(detail).assign(tone=np.nan)
    figure = score_histograms(frame, ["relevancy", "tone"])
    assert sum(figure.data[1].y) == 0
    assert "tone (no scores)" in notes(figure)


@pytest.mark.parametrize("scorers", [[], ["missing"]])
def test_score_histograms_with_nothing_to_show(
    detail: ExperimentDetail, scorers: list[str]
) -> None:
    figure = score_histograms(item_frame(detail), scorers)
    assert figure.data == () and notes(figure) == ["No scores"]


def test_score_histograms_of_an_empty_table(detail: ExperimentDetail) -> None:
    empty = item_frame(detail.model_copy(update={"items": []}))
    assert notes(score_histograms(empty, ["relevancy"])) == ["No scores"]


# ---- judge usage ----


def test_tokens_by_scorer_step_stacks_parts_that_sum_to_the_tokens(usage: pd.DataFrame) -> None:
    figure = tokens_by_scorer_step(usage)
    assert figure.layout.barmode == "stack"
    assert labels(figure.data[0]) == ["relevancy · analyze", "relevancy · generateReason"]
    # analyze: in 100 + 110 + 200 (150 cached), out 20 + 30 + 80 (50 reasoning)
    # generateReason: in 50 + 70 + 40, out 5 + 40 + 4
    assert traces(figure) == {
        "input (not cached)": [260, 160],
        "cached input": [150, 0],
        "output (not reasoning)": [80, 49],
        "reasoning": [50, 0],
    }
    heights = np.sum([trace.x for trace in figure.data], axis=0)
    sums = usage.groupby("step")[["input_tokens", "output_tokens"]].sum().sum(axis=1)
    assert list(heights) == [sums["analyze"], sums["generateReason"]]


def test_tokens_by_scorer_step_orders_steps_as_mastra_does() -> None:
    rows = [("s", "generateReason", 5), ("t", "analyze", 7), ("s", "preprocess", 3)]
    usage = pd.DataFrame(rows, columns=["scorer_id", "step", "input_tokens"]).assign(
        output_tokens=0, reasoning_tokens=0, cached_input_tokens=0
    )
    figure = tokens_by_scorer_step(usage)
    assert labels(figure.data[0]) == ["s · preprocess", "s · generateReason", "t · analyze"]
    assert list(figure.data[0].x) == [3, 5, 7]


def test_tokens_by_model(usage: pd.DataFrame) -> None:
    figure = tokens_by_model(usage)
    assert labels(figure.data[0]) == ["gpt-4o-mini-2024-07-18"]
    assert traces(figure) == {
        "input (not cached)": [570 - 150],
        "cached input": [150],
        "output (not reasoning)": [179 - 50],
        "reasoning": [50],
    }


def test_calls_and_attempts(usage: pd.DataFrame) -> None:
    figure = calls_and_attempts(usage)
    assert figure.layout.barmode == "group"
    assert labels(figure.data[0]) == ["relevancy · analyze", "relevancy · generateReason"]
    assert traces(figure) == {"model calls": [3, 4], "attempts": [3, 5]}


def test_duration_distribution(usage: pd.DataFrame) -> None:
    (box,) = duration_distribution(usage).data
    assert isinstance(box, go.Box) and box.name == "relevancy"
    assert box.orientation == "h"
    assert sorted(box.x) == [90, 100, 500, 600, 700, 900]


def test_cost_by_scorer_sums_the_estimates(usage: pd.DataFrame) -> None:
    figure = cost_by_scorer(usage)
    assert "estimate" in figure.layout.title.text.lower()
    (bars,) = figure.data
    assert labels(bars) == ["relevancy"]
    assert bars.x[0] == pytest.approx(usage["est_cost_usd"].sum())
    assert bars.x[0] > 0


def test_cost_by_scorer_without_a_known_price(usage: pd.DataFrame) -> None:
    figure = cost_by_scorer(usage.assign(est_cost_usd=np.nan))
    assert figure.data == ()
    assert "estimate" in figure.layout.title.text.lower()
    assert "cannot be estimated" in notes(figure)[0]


@pytest.mark.parametrize("make", USAGE_FIGURES, ids=lambda f: f.__name__)
def test_usage_figures_of_no_judge_call(make: Callable[[pd.DataFrame], go.Figure]) -> None:
    figure = make(judge_usage_frame([]))
    assert figure.data == ()
    assert notes(figure) == ["No judge calls"]
    assert figure.layout.title.text


@pytest.mark.parametrize("make", USAGE_FIGURES, ids=lambda f: f.__name__)
def test_usage_figures_have_titles(
    make: Callable[[pd.DataFrame], go.Figure], usage: pd.DataFrame
) -> None:
    figure = make(usage)
    assert figure.layout.title.text and figure.data


def test_usage_bars_lie_down_with_short_labels_and_whole_ones_in_the_hover() -> None:
    """Upright bars spent most of the chart's height on slanted "scorer · step" labels."""
    long = "a-scorer-with-a-rather-long-identifier-from-an-imported-file"
    rows = [(long, "analyze", 5), (long, "generateReason", 7)]
    usage = pd.DataFrame(rows, columns=["scorer_id", "step", "input_tokens"]).assign(
        output_tokens=0, reasoning_tokens=0, cached_input_tokens=0, model_calls=1, attempts=1
    )
    for figure in (tokens_by_scorer_step(usage), calls_and_attempts(usage)):
        bars = figure.data[0]
        assert bars.orientation == "h"
        assert all(len(label) <= LABEL_WIDTH for label in bars.y)
        assert bars.y[0].startswith("a-scorer") and bars.y[1].endswith("generateReason")
        assert labels(bars) == [f"{long} · analyze", f"{long} · generateReason"]
        assert "%{customdata}" in bars.hovertemplate
        assert figure.layout.height < 400  # as tall as two bars need


def test_short_label_keeps_distinct_labels_apart() -> None:
    assert short_label("short") == "short"
    assert short_label("x" * 50) == "x" * 16 + "…" + "x" * 15
    usage = pd.DataFrame({"scorer_id": ["a" * 20 + "1" + "b" * 30, "a" * 20 + "2" + "b" * 30]})
    usage = usage.assign(step="analyze", model_calls=1, attempts=1)
    (bars, _) = calls_and_attempts(usage).data
    assert len(set(bars.y)) == 2  # two shortened labels that would read the same: whole ones


def test_short_label_never_cuts_an_entity() -> None:
    escaped = "&lt;a href=javascript:alert(3)&gt;model&lt;/a&gt; [m](http://example.com)"
    short = short_label(escaped)
    assert short.startswith("&lt;a href=javascr")  # "&lt;" is one character
    assert len(short.replace("&lt;", "<").replace("&gt;", ">")) == LABEL_WIDTH
    assert short_label("&amp;" * 10) == "&amp;" * 10  # ten characters: kept whole
