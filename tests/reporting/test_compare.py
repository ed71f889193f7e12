"""The paired comparison: pairing by id, the bootstrap interval, per-scorer counts, the per-item
table, word diffs and judge usage side by side."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pytest

from core.records import DatasetItem, ExperimentDetail, ExperimentInfo, ScorerOutcome
from core.reporting import (
    DiffSegment,
    bootstrap_ci,
    compare,
    compare_experiments,
    diff_html,
    item_changes,
    item_pair,
    scorer_table,
    usage_side_by_side,
    word_diff,
)
from core.reporting.compare import DISTINCT_VALUES, INDEX_DRAWS, RESAMPLES, _bootstrap_means
from core.run_results import JudgeUsage

from ._records import build_detail

NOW = datetime(2026, 3, 1, tzinfo=UTC)


def experiment(
    experiment_id: str,
    items: Sequence[tuple[str, Any]],
    scores: Mapping[str, Mapping[str, float | None]],
    *,
    fingerprint: str = "fp",
    extra: Sequence[ScorerOutcome] = (),
) -> ExperimentDetail:
    """An experiment over `items` ((id, output) pairs, input "question <id>") with the given
    successful scores per scorer and item (None: not scorable)."""
    results = [
        ScorerOutcome(
            item_id=item_id,
            scorer_id=scorer_id,
            status="success",
            score=score,
            reason=f"{scorer_id} on {item_id}: {score}",
            usage=JudgeUsage(input_tokens=10, output_tokens=2, total_tokens=12),
        )
        for scorer_id, by_item in scores.items()
        for item_id, score in by_item.items()
    ]
    info = ExperimentInfo(
        id=experiment_id,
        name=f"run {experiment_id}",
        dataset_id="d",
        dataset_fingerprint=fingerprint,
        scorer_ids=list(scores),
        created_at=NOW,
    )
    dataset = [
        DatasetItem(id=i, input=f"question {i}", output=o, ground_truth="truth") for i, o in items
    ]
    return ExperimentDetail(
        info=info,
        items=dataset,
        results=[*results, *[o for o in extra if o.status == "success"]],
        failures=[o for o in extra if o.status == "failed"],
        failures_in_memory=True,
    )


# ---- bootstrap ----


def test_large_known_difference_is_covered_and_zero_excluded() -> None:
    rng = np.random.default_rng(1)
    differences = 0.1 + rng.normal(0, 0.2, size=400)
    low, high = bootstrap_ci(differences)
    assert low < 0.1 < high
    assert low > 0
    assert low < differences.mean() < high


def test_zero_effect_interval_covers_zero() -> None:
    rng = np.random.default_rng(2)
    baseline = rng.uniform(0, 1, size=300)
    candidate = baseline + rng.normal(0, 0.1, size=300)
    low, high = bootstrap_ci(candidate - baseline)
    assert low < 0 < high


def test_the_interval_covers_the_true_mean_about_95_percent_of_the_time() -> None:
    rng = np.random.default_rng(3)
    trials, covered = 300, 0
    for trial in range(trials):
        sample = 0.05 + rng.normal(0, 0.3, size=80)
        low, high = bootstrap_ci(sample, resamples=1_000, seed=trial)
        covered += low <= 0.05 <= high
    assert 0.90 <= covered / trials <= 0.99


def test_the_interval_is_seeded_and_narrows_with_more_pairs() -> None:
    rng = np.random.default_rng(4)
    small, large = rng.normal(0.2, 0.3, size=30), rng.normal(0.2, 0.3, size=3_000)
    assert bootstrap_ci(small, seed=9) == bootstrap_ci(small, seed=9)
    assert bootstrap_ci(small, seed=9) != bootstrap_ci(small, seed=10)
    small_width = np.subtract(*bootstrap_ci(small)[::-1])
    large_width = np.subtract(*bootstrap_ci(large)[::-1])
    assert large_width < small_width / 5


def test_large_samples_are_resampled_in_chunks() -> None:
    differences = np.full(20_000, 0.25)
    differences[::2] = 0.75
    low, high = bootstrap_ci(differences)
    assert 0.49 < low < 0.5 < high < 0.51


def test_degenerate_and_bad_inputs() -> None:
    assert all(math.isnan(x) for x in bootstrap_ci([]))
    assert all(math.isnan(x) for x in bootstrap_ci([0.3]))
    assert bootstrap_ci([0.2, 0.2, 0.2]) == (pytest.approx(0.2), pytest.approx(0.2))
    with pytest.raises(ValueError, match="finite"):
        bootstrap_ci([0.1, math.nan])
    with pytest.raises(ValueError, match="resamples"):
        bootstrap_ci([0.1, 0.2], resamples=0)
    with pytest.raises(ValueError, match="confidence"):
        bootstrap_ci([0.1, 0.2], confidence=1.5)
    with pytest.raises(ValueError, match="one-dimensional"):
        bootstrap_ci(np.zeros((2, 2)))


# ---- pairing ----


def test_pairs_by_id_with_missing_and_duplicated_ids() -> None:
    baseline = experiment(
        "b",
        [("a", "x"), ("b", "x"), ("c", "x"), ("dup", "x"), ("dup", "y"), ("gone", "x")],
        {"s": {"a": 0.5, "b": 0.5, "c": 0.5, "dup": 0.5, "gone": 1.0}},
    )
    candidate = experiment(
        "c",
        [(i, "x") for i in ("c", "a", "b", "dup", "new", "twice")] + [("twice", "y")],
        {"s": {"a": 0.7, "b": 0.2, "c": 0.5, "dup": 0.9, "new": 0.0}},
    )
    pairing = compare(baseline, candidate).pairing
    assert pairing.paired_ids == ("a", "b", "c")  # in the baseline's order
    assert pairing.baseline_only == ("gone",)
    assert pairing.candidate_only == ("new",)
    assert pairing.baseline_duplicates == ("dup",)
    assert pairing.candidate_duplicates == ("twice",)
    assert pairing.unpaired == 4
    assert not pairing.fingerprints_differ


def test_never_pairs_by_input_text() -> None:
    baseline = experiment("b", [("a", "x")], {"s": {"a": 0.0}})
    candidate = experiment("c", [("z", "x")], {"s": {"z": 1.0}})
    assert baseline.items[0].input != candidate.items[0].input  # ids differ, so do inputs
    same_text = candidate.model_copy(
        update={"items": [DatasetItem(id="z", input="question a", output="x")]}
    )
    comparison = compare(baseline, same_text)
    assert comparison.pairing.paired_ids == ()
    assert comparison.scorers[0].paired_n == 0 and math.isnan(comparison.scorers[0].mean_change)


def test_same_id_with_another_input_is_paired_and_flagged() -> None:
    baseline = experiment("b", [("a", "x"), ("b", "x")], {"s": {"a": 0.0, "b": 0.0}})
    edited = baseline.model_copy(
        update={
            "info": baseline.info.model_copy(update={"id": "c", "dataset_fingerprint": "other"}),
            "items": [
                DatasetItem(id="a", input="question a", output="x"),
                DatasetItem(id="b", input="another question", output="x"),
            ],
        }
    )
    pairing = compare(baseline, edited).pairing
    assert pairing.paired_ids == ("a", "b")
    assert pairing.input_mismatches == ("b",)
    assert pairing.fingerprints_differ


# ---- per scorer ----


def test_scorer_statistics() -> None:
    items = [(i, "x") for i in ("a", "b", "c", "d", "e")]
    baseline = experiment(
        "b", items, {"s": {"a": 0.2, "b": 0.5, "c": 0.5, "d": 1.0, "e": None}, "t": {"a": 1.0}}
    )
    candidate = experiment(
        "c",
        items,
        {"s": {"a": 0.6, "b": 0.5 + 1e-12, "c": 0.25, "d": 1.0, "e": 0.9}, "u": {"a": 0.5}},
    )
    comparison = compare(baseline, candidate)
    assert comparison.scorer_ids == ["s", "t", "u"]
    s, t, u = comparison.scorers
    assert s.baseline_n == 4 and s.candidate_n == 5 and s.paired_n == 4
    assert s.baseline_mean == pytest.approx(0.55)
    assert s.candidate_mean == pytest.approx((0.6 + 0.5 + 0.25 + 1.0 + 0.9) / 5)
    assert s.mean_change == pytest.approx((0.4 + 0.0 - 0.25 + 0.0) / 4)
    assert (s.improved, s.regressed, s.unchanged) == (1, 1, 2)  # 1e-12 is float noise
    assert s.ci_low <= s.mean_change <= s.ci_high
    assert t.candidate_n == 0 and t.paired_n == 0 and math.isnan(t.candidate_mean)
    assert u.baseline_n == 0 and math.isnan(u.mean_change) and math.isnan(u.ci_low)
    frame = scorer_table(comparison)
    assert list(frame["scorer_id"]) == ["s", "t", "u"]
    assert frame["improved"].dtype == "int64" and frame.loc[0, "paired_n"] == 4


def test_failed_and_duplicated_runs_are_not_paired() -> None:
    failed = ScorerOutcome(
        item_id="b", scorer_id="s", status="failed", error="boom", recovered_score=0.9
    )
    again = ScorerOutcome(item_id="a", scorer_id="s", status="success", score=0.0)
    items = [("a", "x"), ("b", "x"), ("c", "x")]
    baseline = experiment("b", items, {"s": {"a": 0.5, "b": 0.5, "c": 0.5}})
    candidate = experiment("c", items, {"s": {"a": 1.0, "c": 0.5}}, extra=[failed, again])
    s = compare(baseline, candidate).scorers[0]
    assert s.candidate_n == 1 and s.paired_n == 1  # b failed, a is ambiguous
    assert s.ambiguous == 1 and s.unchanged == 1
    changes = item_changes(compare(baseline, candidate), "s")
    assert dict(zip(changes["item_id"], changes["status"], strict=True)) == {
        "c": "unchanged",
        "a": "baseline only",
        "b": "baseline only",
    }
    assert changes.loc[changes["item_id"] == "b", "candidate_reason"].item().startswith("[failed")


def test_item_table_is_sorted_by_the_size_of_the_change() -> None:
    items = [(i, f"answer {i}") for i in ("a", "b", "c", "d")]
    baseline = experiment("b", items, {"s": {"a": 0.5, "b": 0.5, "c": 0.5}})
    candidate = experiment("c", items, {"s": {"a": 0.6, "b": 0.0, "c": 0.8, "d": 1.0}})
    changes = item_changes(compare(baseline, candidate), "s")
    assert list(changes["item_id"]) == ["b", "c", "a", "d"]
    assert list(changes["status"]) == ["regressed", "improved", "improved", "candidate only"]
    assert changes["change"].iloc[0] == pytest.approx(-0.5)
    assert math.isnan(changes["change"].iloc[3])
    row = changes.iloc[0]
    assert row["baseline_reason"] == "s on b: 0.5" and row["candidate_reason"] == "s on b: 0.0"
    assert row["baseline_output"] == "answer b" and row["input"] == "question b"
    with pytest.raises(KeyError, match="scorers: s"):
        item_changes(compare(baseline, candidate), "nope")


def test_several_candidates_against_one_baseline() -> None:
    items = [("a", "x"), ("b", "x")]
    baseline = experiment("b", items, {"s": {"a": 0.0, "b": 0.0}})
    better = experiment("c1", items, {"s": {"a": 1.0, "b": 1.0}})
    worse = experiment("c2", items, {"s": {"a": 0.0, "b": -1.0}}, fingerprint="fp2")
    first, second = compare_experiments(baseline, [better, worse])
    assert first.candidate.id == "c1" and first.scorers[0].mean_change == 1.0
    assert second.scorers[0].mean_change == -0.5 and second.pairing.fingerprints_differ
    with pytest.raises(ValueError, match="its own candidate"):
        compare_experiments(baseline, [baseline])
    with pytest.raises(ValueError, match="given twice"):
        compare_experiments(baseline, [better, better])


# ---- one item ----


def test_item_pair_has_both_sides_and_the_diffs() -> None:
    baseline = experiment("b", [("a", "The cat sat")], {"s": {"a": 0.5}})
    candidate = experiment("c", [("a", "The dog sat down")], {"s": {"a": 1.0}})
    pair = item_pair(compare(baseline, candidate), "a")
    before, after = pair.outcomes["s"]
    assert before is not None and after is not None and after.score == 1.0
    assert pair.output_diff == [
        DiffSegment("equal", "The "),
        DiffSegment("delete", "cat "),
        DiffSegment("insert", "dog "),
        DiffSegment("equal", "sat "),
        DiffSegment("insert", "down"),
    ]
    assert pair.baseline_vs_truth[0] == DiffSegment("delete", "truth")
    with pytest.raises(KeyError, match="not paired"):
        item_pair(compare(baseline, candidate), "zzz")


def test_word_diff_is_word_level_and_keeps_the_text() -> None:
    before = "Paris is the capital of France.\nIt is large."
    after = "Paris is the  capital of Spain.\nIt is large."
    segments = word_diff(before, after)
    assert [s for s in segments if s.op != "equal"] == [
        DiffSegment("delete", "France.\n"),
        DiffSegment("insert", "Spain.\n"),
    ]  # the double space is not a change
    assert "".join(s.text for s in segments if s.op != "insert") == before
    assert word_diff(None, None) == []
    assert word_diff({"a": 1}, {"a": 2}) == [
        DiffSegment("equal", '{"a": '),
        DiffSegment("delete", "1}"),
        DiffSegment("insert", "2}"),
    ]


def test_diff_html_escapes_everything() -> None:
    hostile = '<script>alert(1)</script> <img src=x onerror="alert(2)"> & done'
    html = diff_html(word_diff("safe words", hostile))
    assert "<script" not in html and "<img" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "onerror=&quot;alert(2)&quot;" in html and "&amp; done" in html
    assert html.count("<ins") == 1 and html.count("<del") == 1
    assert "(empty)" in diff_html([])


# ---- judge usage ----


def test_usage_side_by_side_sums_each_experiment() -> None:
    detail = build_detail()
    other = detail.model_copy(update={"info": detail.info.model_copy(update={"id": "e2"})})
    frame = usage_side_by_side([compare(detail, other)])
    assert list(frame.columns) == ["baseline · demo", "candidate · demo"]
    assert frame.loc["total tokens"].tolist() == [749.0, 749.0]  # sums, failures included
    assert frame.loc["failed executions"].tolist() == [1.0, 1.0]
    assert usage_side_by_side([]).empty


# ---- the bootstrap at scale: the same statistic, drawn cheaper ----


def _index_bootstrap(values: np.ndarray, seed: int) -> tuple[float, float]:
    """The interval as every earlier version drew it: each sample's indices (the reference)."""
    means = _bootstrap_means(values, RESAMPLES, np.random.default_rng(seed))
    tail = (1 - 0.95) / 2
    low, high = np.quantile(means, [tail, 1 - tail])
    return (float(low), float(high))


def test_a_small_set_keeps_the_intervals_of_earlier_versions() -> None:
    values = np.random.default_rng(6).normal(0.1, 0.3, size=INDEX_DRAWS // RESAMPLES)
    assert bootstrap_ci(values, seed=3) == _index_bootstrap(values, 3)


@pytest.mark.parametrize(
    "kind, size",
    [("grid", 3_000), ("grid", 10_000), ("continuous", 3_000), ("continuous", 10_000)],
)
def test_a_large_set_gives_the_index_bootstrap_within_its_own_noise(kind: str, size: int) -> None:
    rng = np.random.default_rng(7)
    if kind == "grid":  # few distinct differences: resampled through their counts
        grid = np.linspace(0, 1, 9)
        values = rng.choice(grid, size) - rng.choice(grid, size) + 0.05
        assert np.unique(values).size <= DISTINCT_VALUES
    else:  # many distinct differences: the normal limit
        values = rng.gamma(2.0, 0.15, size) - 0.25  # skewed, the harder case for the limit
    reference = np.array([_index_bootstrap(values, seed) for seed in range(8)])
    found = np.array(bootstrap_ci(values))
    noise = reference.std(axis=0, ddof=1)
    assert np.all(np.abs(found - reference.mean(axis=0)) < 4 * noise + 1e-12)
    assert bootstrap_ci(values) == bootstrap_ci(values)  # reproducible


def test_a_large_grid_is_resampled_not_approximated() -> None:
    # Two distinct values, far from normal at a tiny spread: the counts' resampling keeps the
    # interval on the grid of possible means, which the normal limit would not.
    values = np.zeros(5_000)
    values[:3] = 1.0
    low, high = bootstrap_ci(values)
    assert low * 5_000 == pytest.approx(round(low * 5_000))
    assert high * 5_000 == pytest.approx(round(high * 5_000))
    assert 0 <= low < 3 / 5_000 < high
