"""Scorers' agreement with a label column: known cases worked out by hand (pair counts for AUC,
rank differences for Spearman, observed and chance agreement for kappa), what is left out and
why, labels in every accepted form, and the "not defined" cases."""

from __future__ import annotations

import math
import random
import subprocess
import sys
from datetime import UTC, datetime
from itertools import product
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from core.records import DatasetItem, ExperimentDetail, ExperimentInfo, ScorerOutcome
from core.reporting import (
    LabelError,
    agreement_frame,
    agreement_line,
    label_agreement,
    label_columns,
    label_values,
    parse_label,
    suggested_label_column,
)
from core.run_results import ScorerRunResult

ROOT = Path(__file__).resolve().parents[2]


def detail_of(
    labels: list[Any],
    scores: dict[str, list[float | None]],
    *,
    column: str = "label",
    failed: dict[str, list[int]] | None = None,
) -> ExperimentDetail:
    """Items i0, i1, ... labelled in `column`; per scorer one successful run per item (a None
    score is a not-scorable run), except the item indexes in `failed[scorer]` (failed runs with
    a recovered score of 1, which must never count)."""
    items = [DatasetItem(id=f"i{n}", metadata={column: value}) for n, value in enumerate(labels)]
    results, failures = [], []
    for scorer_id, values in scores.items():
        for n, value in enumerate(values):
            item_id = f"i{n}"
            if n in (failed or {}).get(scorer_id, []):
                failures.append(
                    ScorerOutcome(
                        item_id=item_id,
                        scorer_id=scorer_id,
                        status="failed",
                        error="boom",
                        recovered_score=1.0,
                    )
                )
            else:
                result = ScorerRunResult(run_id=f"{scorer_id}-{n}", output="o", score=value)
                results.append(
                    ScorerOutcome(
                        item_id=item_id,
                        scorer_id=scorer_id,
                        status="success",
                        score=value,
                        result=result.to_dict(),
                    )
                )
    info = ExperimentInfo(
        id="e",
        name="labelled",
        dataset_id="d",
        dataset_fingerprint="fp",
        scorer_ids=list(scores),
        created_at=datetime(2026, 3, 1, tzinfo=UTC),
    )
    return ExperimentDetail(
        info=info, items=items, results=results, failures=failures, failures_in_memory=True
    )


def only(detail: ExperimentDetail, **options: Any) -> Any:
    (entry,) = label_agreement(detail, "label", **options).scorers
    return entry


def pair_auc(positives: list[float], negatives: list[float]) -> float:
    """AUC from its definition: the share of (positive, negative) pairs ranked right, ties
    counting one half."""
    wins = sum(1.0 if p > q else 0.5 if p == q else 0.0 for p, q in product(positives, negatives))
    return wins / (len(positives) * len(negatives))


# ---- known cases ----


def test_a_perfect_ranking() -> None:
    entry = only(detail_of([1, 1, 1, 0, 0, 0], {"s": [0.9, 0.8, 0.7, 0.3, 0.2, 0.1]}))
    assert entry.defined and entry.reason is None
    assert (entry.n, entry.positives, entry.negatives) == (6, 3, 3)
    assert entry.auc == 1.0 and (entry.auc_low, entry.auc_high) == (1.0, 1.0)
    assert entry.threshold == 0.7 and entry.youden_j == 1.0 and entry.kappa == 1.0
    assert entry.confusion.model_dump() == {"tp": 3, "fp": 0, "tn": 3, "fn": 0}
    # Spearman of score ranks 6..1 with label ranks 5,5,5,2,2,2 (ties averaged): Pearson of the
    # centred ranks, 13.5 / sqrt(17.5 * 13.5).
    assert entry.spearman == pytest.approx(math.sqrt(13.5 / 17.5))


def test_a_reversed_ranking() -> None:
    entry = only(detail_of([1, 1, 1, 0, 0, 0], {"s": [0.1, 0.2, 0.3, 0.7, 0.8, 0.9]}))
    assert entry.defined
    assert entry.auc == 0.0 and (entry.auc_low, entry.auc_high) == (0.0, 0.0)
    assert entry.spearman == pytest.approx(-math.sqrt(13.5 / 17.5))
    # No threshold does better than chance: the best J, 0, is first reached at the lowest
    # score (everything called positive).
    assert entry.threshold == 0.1 and entry.youden_j == 0.0 and entry.kappa == 0.0
    assert entry.confusion.model_dump() == {"tp": 3, "fp": 3, "tn": 0, "fn": 0}


def test_ties_count_one_half_and_the_highest_best_threshold_wins() -> None:
    entry = only(detail_of([1, 1, 0, 0], {"s": [0.8, 0.5, 0.5, 0.2]}))
    # Pairs: 0.8>0.5, 0.8>0.2, 0.5=0.5 (one half), 0.5>0.2: 3.5 of 4.
    assert entry.auc == pytest.approx(0.875)
    # At 0.8: TPR 1/2, FPR 0; at 0.5: TPR 1, FPR 1/2: both J = 1/2, the higher threshold kept.
    assert entry.threshold == 0.8 and entry.youden_j == pytest.approx(0.5)
    assert entry.confusion.model_dump() == {"tp": 1, "fp": 0, "tn": 2, "fn": 1}
    # Observed agreement 3/4, chance agreement 1/4 * 1/2 + 3/4 * 1/2 = 1/2.
    assert entry.kappa == pytest.approx((0.75 - 0.5) / (1 - 0.5))


def test_float_labels_are_binarised_for_auc_but_ranked_as_given_for_spearman() -> None:
    labels = [0.9, 0.6, 0.4, 0.1, 0.55]
    scores = [0.8, 0.3, 0.6, 0.1, 0.7]
    entry = only(detail_of(labels, {"s": scores}))
    assert (entry.positives, entry.negatives) == (3, 2)  # 0.9, 0.6, 0.55 >= 0.5
    assert entry.auc == pytest.approx(pair_auc([0.8, 0.3, 0.7], [0.6, 0.1]))
    # Label ranks 5,4,2,1,3 and score ranks 5,2,3,1,4: d^2 sums to 6, 1 - 6*6/(5*24) = 0.7
    # (against the binarised labels it would be another number).
    assert entry.spearman == pytest.approx(0.7)


def test_agrees_with_the_definitions_on_random_data_with_ties() -> None:
    rng = random.Random(7)
    labels = [rng.random() < 0.4 for _ in range(60)]
    scores = [round(rng.random() + 0.3 * label, 1) for label in labels]  # coarse: many ties
    entry = only(detail_of(labels, {"s": scores}))
    positives = [s for s, label in zip(scores, labels, strict=True) if label]
    negatives = [s for s, label in zip(scores, labels, strict=True) if not label]
    assert entry.auc == pytest.approx(pair_auc(positives, negatives))

    # The chosen threshold has the best J of every score value, and its matrix and kappa
    # follow from counting.
    def j_at(t: float) -> float:
        tpr = sum(s >= t for s in positives) / len(positives)
        return tpr - sum(s >= t for s in negatives) / len(negatives)

    assert entry.youden_j == pytest.approx(max(j_at(t) for t in set(scores)))
    assert entry.youden_j == pytest.approx(j_at(entry.threshold))
    t = entry.threshold
    tp, fn = sum(s >= t for s in positives), sum(s < t for s in positives)
    fp, tn = sum(s >= t for s in negatives), sum(s < t for s in negatives)
    assert entry.confusion.model_dump() == {"tp": tp, "fp": fp, "tn": tn, "fn": fn}
    n = len(scores)
    observed = (tp + tn) / n
    chance = ((tp + fp) / n) * ((tp + fn) / n) + ((tn + fn) / n) * ((tn + fp) / n)
    assert entry.kappa == pytest.approx((observed - chance) / (1 - chance))


# ---- not defined ----


def test_a_constant_scorer_is_not_defined() -> None:
    entry = only(detail_of([1, 0, 1, 0], {"s": [0.5, 0.5, 0.5, 0.5]}))
    assert not entry.defined and entry.n == 4
    assert "same score (0.5)" in entry.reason
    assert entry.auc is None and entry.kappa is None and entry.confusion is None
    assert entry.to_json() == {
        "n": 4,
        "positives": 2,
        "negatives": 2,
        "leftOutNoLabel": 0,
        "leftOutNoScore": 0,
        "defined": False,
        "reason": entry.reason,
    }
    assert agreement_line(entry).startswith("label agreement (n=4): not defined: the scorer gave")


@pytest.mark.parametrize(
    ("labels", "kind"), [([1, 1, 0.7], "positive"), (["no", "false", 0], "negative")]
)
def test_single_class_labels_are_not_defined(labels: list[Any], kind: str) -> None:
    entry = only(detail_of(labels, {"s": [0.1, 0.5, 0.9]}))
    assert not entry.defined
    assert f"all 3 labelled items are {kind}" in entry.reason
    assert "need both positive and negative" in entry.reason


def test_no_item_with_both_a_label_and_a_score_is_not_defined() -> None:
    entry = only(detail_of(["", None, 1], {"s": [0.2, 0.3, None]}))
    assert not entry.defined and entry.n == 0
    assert entry.reason == "no item has both a label and a score from this scorer"
    assert (entry.left_out_no_label, entry.left_out_no_score) == (2, 1)


# ---- what is left out ----


def test_items_without_a_label_are_left_out_and_counted() -> None:
    detail = detail_of([1, "", 0, None, 1, "  ", 0], {"s": [0.9, 0.0, 0.2, 1.0, 0.8, 0.5, 0.1]})
    detail.items.append(DatasetItem(id="no-column", metadata={}))  # the key is missing
    agreement = label_agreement(detail, "label")
    (entry,) = agreement.scorers
    assert (agreement.labelled_items, agreement.unlabelled_items) == (4, 4)
    assert entry.n == 4 and entry.left_out_no_label == 4 and entry.left_out_no_score == 0
    assert entry.auc == 1.0


def test_failed_and_not_scorable_runs_are_left_out_of_that_scorer_only() -> None:
    labels = [1, 1, 0, 0, 1, 0]
    detail = detail_of(
        labels,
        {
            "flaky": [0.9, None, 0.1, 0.2, 0.8, 0.3],  # i1 not scorable
            "steady": [0.9, 0.7, 0.1, 0.2, 0.8, 0.3],
        },
        failed={"flaky": [2]},  # recovered score 1.0 would make the AUC < 1 if it counted
    )
    flaky, steady = label_agreement(detail, "label").scorers
    assert (flaky.n, flaky.left_out_no_score, flaky.left_out_no_label) == (4, 2, 0)
    assert flaky.auc == 1.0
    assert (steady.n, steady.left_out_no_score) == (6, 0)
    line = agreement_line(flaky)
    assert "(n=4)" in line and "left out: 2 without a score (failed or not scorable)" in line


def test_a_scorer_that_never_ran_is_all_left_out() -> None:
    detail = detail_of([1, 0], {"s": [0.9, 0.1]})
    info = detail.info.model_copy(update={"scorer_ids": ["s", "cancelled"]})
    entries = label_agreement(detail.model_copy(update={"info": info}), "label").scorers
    assert [e.scorer_id for e in entries] == ["s", "cancelled"]
    assert entries[1].n == 0 and entries[1].left_out_no_score == 2 and not entries[1].defined


# ---- labels ----


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (True, 1.0),
        (False, 0.0),
        (1, 1.0),
        (0, 0.0),
        (np.int64(1), 1.0),
        (0.25, 0.25),
        (1.0, 1.0),
        (np.float64(0.5), 0.5),
        ("true", 1.0),
        ("FALSE", 0.0),
        (" Yes ", 1.0),
        ("no", 0.0),
        ("1", 1.0),
        ("0", 0.0),
        ("0.75", 0.75),
        ("1.0", 1.0),
        (None, None),
        ("", None),
        ("   ", None),
        (float("nan"), None),
    ],
)
def test_accepted_labels(value: Any, expected: float | None) -> None:
    assert parse_label(value) == expected


@pytest.mark.parametrize(
    "value", [2, -1, 1.5, -0.1, float("inf"), "maybe", "nan", "2", "y", [1], {"a": 1}]
)
def test_values_that_are_not_labels(value: Any) -> None:
    with pytest.raises(ValueError):
        parse_label(value)


def test_a_bad_label_names_the_column_the_item_its_row_and_the_value() -> None:
    detail = detail_of(["yes", "no", "perhaps", "yes"], {"s": [0.1, 0.2, 0.3, 0.4]})
    with pytest.raises(LabelError) as caught:
        label_agreement(detail, "label")
    error = caught.value
    assert (error.column, error.item_id, error.row, error.value) == ("label", "i2", 3, "perhaps")
    assert str(error).startswith("Label column 'label', item 'i2' (row 3): the text 'perhaps'")
    assert "true/false, yes/no, 0/1 or a number from 0 to 1" in str(error)


def test_a_column_no_item_has_is_an_error() -> None:
    detail = detail_of([1, 0], {"s": [0.1, 0.2]})
    with pytest.raises(LabelError, match="Label column 'verdict': no item has this column"):
        label_values(detail.items, "verdict")


def test_label_columns_are_detected_and_one_is_suggested() -> None:
    items = [
        DatasetItem(
            id="a",
            metadata={"topic": "x", "Is Correct": "yes", "human_score": 0.5, "blank": "", "n": 1},
        ),
        DatasetItem(
            id="b", metadata={"topic": "y", "Is Correct": "", "human_score": 1, "blank": None}
        ),
        DatasetItem(id="c", metadata={"topic": "1", "Is Correct": "No", "n": 3}),
    ]
    # topic holds words, blank holds nothing, n holds a 3.
    assert label_columns(items) == ["Is Correct", "human_score"]
    assert suggested_label_column(["human_score", "Is Correct"]) == "Is Correct"
    assert suggested_label_column(["verdict", "gold_label"]) == "gold_label"
    assert suggested_label_column(["topic", "score"]) is None


# ---- the bootstrap interval ----


def noisy_detail() -> ExperimentDetail:
    rng = random.Random(3)
    labels = [rng.random() < 0.5 for _ in range(80)]
    return detail_of(labels, {"s": [rng.random() + 0.4 * label for label in labels]})


def test_the_interval_is_deterministic_and_contains_the_auc() -> None:
    detail = noisy_detail()
    first, again = only(detail), only(detail)
    assert (first.auc_low, first.auc_high) == (again.auc_low, again.auc_high)
    assert first.auc_low < first.auc < first.auc_high
    assert first.auc_low >= 0.0 and first.auc_high <= 1.0
    other = only(detail, seed=1)
    assert (other.auc_low, other.auc_high) != (first.auc_low, first.auc_high)
    assert other.auc == first.auc  # only the interval depends on the resampling


def test_a_class_of_one_item_is_held_fixed_in_the_resamples() -> None:
    one_positive = only(detail_of([1, 0, 0, 0, 0], {"s": [0.6, 0.1, 0.7, 0.3, 0.5]}))
    assert one_positive.auc == pytest.approx(0.75)
    # Only the negatives are resampled: every resample's AUC is a multiple of 1/4, from 0 (four
    # copies of the 0.7) to 1 (no 0.7 drawn, which happens in (3/4)^4 = 32% of resamples).
    assert 0.0 <= one_positive.auc_low < one_positive.auc < one_positive.auc_high == 1.0
    assert one_positive.auc_low * 4 == round(one_positive.auc_low * 4)
    two_items = only(detail_of([1, 0], {"s": [0.9, 0.1]}))
    assert (two_items.auc, two_items.auc_low, two_items.auc_high) == (1.0, 1.0, 1.0)


def test_more_items_give_a_narrower_interval() -> None:
    small = only(noisy_detail())
    rng = random.Random(5)
    labels = [rng.random() < 0.5 for _ in range(800)]
    large = only(detail_of(labels, {"s": [rng.random() + 0.4 * label for label in labels]}))
    assert large.auc_high - large.auc_low < small.auc_high - small.auc_low


# ---- shapes ----


def test_the_json_entry_and_the_method() -> None:
    agreement = label_agreement(noisy_detail(), "label", resamples=200, seed=4)
    (entry,) = agreement.scorers
    document = agreement.to_json()
    assert list(document) == ["s"]
    assert set(document["s"]) == {
        "n", "positives", "negatives", "leftOutNoLabel", "leftOutNoScore", "defined", "auc",
        "aucLow", "aucHigh", "spearman", "threshold", "youdenJ", "kappa", "confusion",
    }  # fmt: skip
    assert document["s"]["confusion"] == entry.confusion.model_dump()
    method = agreement.method_json()
    assert (method["labelColumn"], method["resamples"], method["seed"]) == ("label", 200, 4)
    assert method["confidenceLevel"] == 0.95


def test_the_line_and_the_table() -> None:
    detail = detail_of([1, 1, 0, 0], {"s": [0.8, 0.5, 0.5, 0.2], "flat": [0.3] * 4})
    agreement = label_agreement(detail, "label")
    line = agreement_line(agreement.scorers[0])
    assert line.startswith("label agreement (n=4): AUC 0.88 [")
    assert "· at threshold 0.8 (J 0.50): kappa 0.50, tp/fp/tn/fn 1/0/2/1" in line
    frame = agreement_frame(agreement, {"s": "output vs ground truth"})
    assert list(frame["scorer"]) == ["s", "flat"]
    assert list(frame["compares"]) == ["output vs ground truth", ""]
    assert frame.loc[0, "AUC"] == pytest.approx(0.875) and frame.loc[0, "tp"] == 1
    assert pd.isna(frame.loc[0, "note"])
    assert frame.loc[1, "note"].startswith("not defined: the scorer gave every item")
    assert frame["tp"].isna().tolist() == [False, True]


def test_importing_the_core_loads_neither_scipy_nor_sklearn() -> None:
    probe = (
        "import sys, core, core.reporting, core.cli; "
        "print(sorted(m for m in ('scipy', 'sklearn') if m in sys.modules))"
    )
    output = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    assert output.strip() == "[]"
