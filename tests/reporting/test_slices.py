"""Slices' shaping: the 95% t-interval against SciPy's own interval, the failed runs per slice,
the per-slice change worst first, and the tables and chart."""

from __future__ import annotations

import math
import statistics

import numpy as np
import pytest
from scipy import stats

from core.records import SliceScorer, SliceSummary
from core.reporting.slices import (
    CHART_VALUES,
    NO_VALUE_LABEL,
    slice_changes,
    slice_changes_frame,
    slice_chart,
    slices_frame,
    t_interval,
    with_intervals,
)


def summary(value: str, items: int, *scorers: tuple[str, list[float], int]) -> SliceSummary:
    """A slice whose scorers have these scores and this many runs without a score."""
    return SliceSummary(
        column="category",
        value=value,
        items=items,
        scorers=[
            SliceScorer(
                scorer_id=scorer_id,
                runs=len(scores) + unscored,
                scored=len(scores),
                mean=statistics.fmean(scores) if scores else None,
                sd=statistics.stdev(scores) if len(scores) >= 2 else None,
                missing=items - len(scores) - unscored,
            )
            for scorer_id, scores, unscored in scorers
        ],
    )


@pytest.mark.parametrize("scores", [[0.2, 0.9], [0.1, 0.5, 0.5, 0.8, 1.0], [0.3] * 4 + [0.31]])
def test_the_interval_is_scipys_t_interval(scores: list[float]) -> None:
    mean, sd, n = statistics.fmean(scores), statistics.stdev(scores), len(scores)
    wanted = stats.t.interval(0.95, n - 1, loc=mean, scale=stats.sem(scores))
    assert t_interval(mean, sd, n) == pytest.approx(wanted)


def test_the_interval_is_wider_than_the_normal_one_for_few_scores() -> None:
    low, high = t_interval(0.5, 0.2, 5) or (math.nan, math.nan)
    normal = 1.959964 * 0.2 / math.sqrt(5)
    assert high - 0.5 > normal and 0.5 - low > normal


def test_no_interval_under_two_scores() -> None:
    assert t_interval(0.5, None, 1) is None
    assert t_interval(None, None, 0) is None
    assert t_interval(0.5, 0.0, 3) == (0.5, 0.5)  # all equal: a point


def test_intervals_and_failed_runs_are_filled_per_slice() -> None:
    found = with_intervals(
        [summary("Law", 4, ("a", [0.1, 0.6, 0.8], 0)), summary("", 2, ("a", [], 0))],
        {"Law": {"a": 1}},
    )
    law, none = found
    low, high = t_interval(law.scorers[0].mean, law.scorers[0].sd, 3) or (0, 0)
    assert (law.scorers[0].low, law.scorers[0].high) == (low, high)
    assert (law.scorers[0].failed, law.scorers[0].missing) == (1, 1)
    assert (none.scorers[0].failed, none.scorers[0].low) == (0, None)
    unknown = with_intervals([summary("Law", 4, ("a", [0.1, 0.6], 0))], None)
    assert unknown[0].scorers[0].failed is None  # not in memory: unknown, not 0


def test_changes_are_sorted_worst_first() -> None:
    baseline = [
        summary("Law", 3, ("a", [0.8, 0.8, 0.8], 0), ("b", [0.5], 0)),
        summary("Health", 2, ("a", [0.5, 0.5], 0), ("b", [0.5], 0)),
        summary("Gone", 1, ("a", [1.0], 0), ("b", [1.0], 0)),
    ]
    candidate = [
        summary("Law", 3, ("a", [0.2, 0.2, 0.2], 0), ("c", [0.5], 0)),
        summary("Health", 2, ("a", [0.7, 0.7], 0), ("c", [0.5], 0)),
        summary("New", 1, ("a", [0.4], 0), ("c", [0.5], 0)),
    ]
    changes = slice_changes(baseline, candidate)
    assert [(c.value, c.scorer_id) for c in changes] == [
        ("Law", "a"),
        ("Health", "a"),
        ("Gone", "a"),  # no candidate score: no change, after the changes
        ("New", "a"),
    ]
    assert [c.change for c in changes[:2]] == pytest.approx([-0.6, 0.2])
    assert (changes[2].baseline_mean, changes[2].candidate_mean) == (1.0, None)
    assert (changes[3].baseline_n, changes[3].candidate_n) == (0, 1)
    assert slice_changes([], candidate) == []


def test_the_tables_label_no_value_and_keep_the_order() -> None:
    found = with_intervals(
        [summary("Law", 3, ("a", [0.1, 0.9], 1)), summary("", 1, ("a", [], 0))], None
    )
    frame = slices_frame(found)
    assert list(frame["value"]) == ["Law", NO_VALUE_LABEL]
    assert list(frame["scored"]) == [2, 0] and list(frame["missing"]) == [0, 1]
    assert frame["failed"].isna().all()
    assert np.isnan(frame.loc[1, "mean"])
    changes = slice_changes_frame(slice_changes(found, found))
    assert list(changes["change"].fillna(-1)) == [0.0, -1]
    assert list(changes["value"]) == ["Law", NO_VALUE_LABEL]


def test_the_chart_has_a_bar_per_scorer_with_its_interval() -> None:
    found = with_intervals(
        [
            summary("<b>Law</b>", 3, ("a", [0.1, 0.9], 0), ("b", [0.5, 0.7], 0)),
            summary("", 1, ("a", [0.4], 0), ("b", [], 0)),
        ],
        None,
    )
    figure = slice_chart(found, {"a": "A", "b": "B"}, escape=lambda v: v.replace("<", "&lt;"))
    assert [trace.name for trace in figure.data] == ["A", "B"]
    first = figure.data[0]
    assert list(first.x) == ["&lt;b>Law&lt;/b>", NO_VALUE_LABEL]
    assert list(first.y) == pytest.approx([0.5, 0.4])
    low, high = t_interval(0.5, statistics.stdev([0.1, 0.9]), 2) or (0, 0)
    assert list(first.error_y.array) == pytest.approx([high - 0.5, 0.0])
    assert list(first.error_y.arrayminus) == pytest.approx([0.5 - low, 0.0])
    assert math.isnan(figure.data[1].y[1])  # no score: no bar


def test_the_chart_draws_the_values_with_the_most_items_only() -> None:
    many = [summary(f"v{n}", n + 1, ("a", [0.5], 0)) for n in range(CHART_VALUES + 10)]
    figure = slice_chart(many)
    drawn = list(figure.data[0].x)
    assert len(drawn) == CHART_VALUES
    assert drawn[0] == f"v{CHART_VALUES + 9}" and f"v{9}" not in drawn  # the largest first
