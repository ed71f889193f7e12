"""Readable slices: the value × scorer pivot (worst first, intervals clipped to the scorer's
range), one scorer's chart of its worst values, Holm's correction, and Compare's change per
slice paired on the same items (interval, minimum size, correction)."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import pytest

from core.records import (
    DatasetItem,
    ExperimentDetail,
    ExperimentInfo,
    ScorerOutcome,
    SliceScorer,
    SliceSummary,
)
from core.reporting.compare import compare
from core.reporting.slice_views import (
    holm,
    paired_slice_changes,
    paired_slice_frame,
    slice_pivot,
    worst_values,
)


def summary(value: str, items: int, **scorers: tuple[float, float, float]) -> SliceSummary:
    return SliceSummary(
        column="c",
        value=value,
        items=items,
        scorers=[
            SliceScorer(scorer_id=s, scored=items, mean=m, low=lo, high=hi, missing=1, failed=0)
            for s, (m, lo, hi) in scorers.items()
        ],
    )


def test_the_pivot_is_worst_first_and_clipped() -> None:
    found = [
        summary("good", 5, a=(0.9, 0.6, 1.3), b=(0.8, 0.7, 0.9)),
        summary("bad", 3, a=(0.2, -0.4, 0.8), b=(0.9, 0.8, 1.0)),
        summary("", 4, a=(0.5, 0.4, 0.6), b=(0.6, 0.5, 0.7)),
    ]
    pivot = slice_pivot(found, {"a": (0.0, 1.0), "b": (0.0, 1.0)})
    assert list(pivot["value"]) == ["bad", "(no value)", "good"]
    bad = pivot.iloc[0]
    assert bad["a · low"] == 0.0 and bad["a · mean"] == pytest.approx(0.2)
    assert pivot.iloc[2]["a · high"] == 1.0  # 1.3 clipped to the range
    assert bad["missing"] == 2 and bad["failed"] == 0 and bad["items"] == 3
    assert list(pivot.columns[:6]) == ["value", "items", "missing", "failed", "a · n", "a · mean"]


def test_a_scale_changes_the_worst() -> None:
    # b's 4 of 10 is worse than a's 0.5 of 1 once each is read against its own range.
    found = [summary("x", 3, a=(0.5, 0.4, 0.6)), summary("y", 3, b=(4.0, 3.0, 5.0))]
    found[0] = found[0].model_copy(
        update={"scorers": [*found[0].scorers, SliceScorer(scorer_id="b")]}
    )
    pivot = slice_pivot(found, {"a": (0.0, 1.0), "b": (0.0, 10.0)})
    assert list(pivot["value"]) == ["y", "x"]


def test_the_chart_draws_one_scorer_worst_first() -> None:
    found = [summary(f"v{n}", 3, a=(n / 30, 0.0, 1.5)) for n in range(30)]
    found.append(summary("", 3, a=(0.01, -0.2, 0.3)))  # items without a value
    found.append(summary("other scorer only", 3, b=(0.0, 0.0, 0.0)))  # no score of "a"
    bars = worst_values(found, "a", top=5)
    assert [bar.value for bar in bars] == ["v0", "(no value)", "v1", "v2", "v3"]
    assert bars[0].high == 1.0  # 1.5 clipped to the scorer's range
    assert bars[1].low == 0.0 and bars[1].mean == pytest.approx(0.01)
    assert all(bar.scored == 3 for bar in bars)
    assert len(worst_values(found, "a")) == 20  # CHART_TOP
    assert worst_values(found, "nobody") == []


def test_a_value_without_an_interval_has_none() -> None:
    one = SliceSummary(
        column="c",
        value="x",
        items=1,
        scorers=[SliceScorer(scorer_id="a", scored=1, mean=0.5, low=None, high=None)],
    )
    (bar,) = worst_values([one], "a", (0.0, 10.0))
    assert (bar.mean, bar.low, bar.high) == (0.5, None, None)


def test_holm_by_hand() -> None:
    # sorted 0.01, 0.02, 0.04: times 3, 2, 1 -> 0.03, 0.04, 0.04 (kept non-decreasing)
    assert holm([0.04, 0.01, 0.02]) == pytest.approx([0.04, 0.03, 0.04])
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])
    assert holm([]) == []


def detail(name: str, scores: dict[str, float | None], groups: dict[str, str]) -> ExperimentDetail:
    items = [DatasetItem(id=i, input=f"q {i}", metadata={"topic": groups[i]}) for i in groups]
    results = [
        ScorerOutcome(item_id=i, scorer_id="s", status="success", score=v)
        for i, v in scores.items()
        if v is not None
    ]
    info = ExperimentInfo(
        id=name,
        name=name,
        dataset_id="d",
        dataset_fingerprint="fp",
        scorer_ids=["s"],
        created_at=datetime(2026, 3, 1, tzinfo=UTC),
    )
    return ExperimentDetail(
        info=info, items=items, results=results, failures=[], failures_in_memory=True
    )


def test_the_change_per_slice_is_paired_tested_and_corrected() -> None:
    groups = {f"a{n}": "big" for n in range(12)} | {f"b{n}": "small" for n in range(3)}
    groups |= {f"c{n}": "steady" for n in range(12)}
    before = {i: 1.0 for i in groups}
    after = dict(before)
    for n in range(12):
        after[f"a{n}"] = 0.0 if n % 2 else 0.5  # big drops by 0.75 on average
        before[f"c{n}"] = 0.5
        after[f"c{n}"] = 0.6 if n % 2 else 0.45  # steady: a small, noisy change (p ~ 0.3)
    for n in range(3):
        after[f"b{n}"] = 0.0  # small drops by 1, but has 3 items
    before["b0"] = None  # not scored on one side: not a pair
    changes = paired_slice_changes(
        compare(detail("x", before, groups), detail("y", after, groups)), "topic"
    )
    by_value = {c.value: c for c in changes}
    big, small, steady = by_value["big"], by_value["small"], by_value["steady"]
    assert changes[0] is big and big.significant and big.n == 12
    assert big.change == pytest.approx(-0.75) and big.low < -0.75 < big.high < 0
    assert small.n == 2 and not small.tested and math.isnan(small.adjusted_p)
    assert changes[-1] is small  # too small to test: last
    assert steady.tested and not steady.significant
    # Holm over the two tested slices: the smaller p doubled
    assert big.adjusted_p == pytest.approx(min(1.0, 2 * big.p_value))
    frame = paired_slice_frame(changes)
    assert list(frame["verdict"]) == ["drop", "no clear change", "too few items to test"]


def test_a_column_no_paired_item_has_is_an_error() -> None:
    groups = {"a": "x", "b": "y"}
    scores = {"a": 1.0, "b": 0.0}
    comparison = compare(detail("x", scores, groups), detail("y", scores, groups))
    with pytest.raises(ValueError, match="No paired item has the metadata column 'nope'"):
        paired_slice_changes(comparison, "nope")
