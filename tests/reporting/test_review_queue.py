"""The review queue's order (core/reporting/review_queue.py): unreviewed first, then the
strongest signal (disagreement, nearness to a threshold, low confidence), then dataset order;
each entry says why."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from core.records import ExperimentInfo, ScorerOutcome, ScorerSpec
from core.reporting.review_queue import outcome_confidence, review_queue, scored_runs

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
INFO = ExperimentInfo(
    id="e1",
    name="demo",
    dataset_id="d1",
    dataset_fingerprint="fp",
    scorers=[ScorerSpec(scorer_id="x"), ScorerSpec(scorer_id="y", options={"scale": 10})],
    scorer_ids=["a", "b"],
    created_at=NOW,
)


def run(item: str, scorer: str, score: float | None, result: Any = None) -> ScorerOutcome:
    return ScorerOutcome(
        item_id=item, scorer_id=scorer, status="success", score=score, result=result
    )


def confident(value: Any, step: str = "analyzeStepResult") -> dict[str, Any]:
    return {step: {"confidence": value}}


def order(
    outcomes: list[ScorerOutcome], items: list[str], reviewed: frozenset[str] = frozenset()
) -> list[str]:
    return [e.item_id for e in review_queue(INFO, items, scored_runs(outcomes), reviewed)]


def test_disagreement_is_measured_on_normalised_scores() -> None:
    # b's range is 0..10: 9 on b is 0.9, so "far" disagrees the most.
    outcomes = [
        run("calm", "a", 0.95), run("calm", "b", 9.5),
        run("far", "a", 0.05), run("far", "b", 9.0),
        run("some", "a", 0.1), run("some", "b", 6.0),
    ]  # fmt: skip
    entries = review_queue(INFO, ["calm", "far", "some"], scored_runs(outcomes), set())
    assert [e.item_id for e in entries] == ["far", "some", "calm"]
    assert entries[0].signals["disagreement"] == pytest.approx(0.85)
    assert entries[0].reason.startswith("scorers disagree by 0.85 (b 9, a 0.05)")


def test_a_score_near_its_threshold_comes_before_a_clear_one() -> None:
    outcomes = [run("clear", "a", 0.98), run("close", "a", 0.52), run("mid", "b", 2.0)]
    entries = review_queue(INFO, ["clear", "close", "mid"], scored_runs(outcomes), set())
    assert [e.item_id for e in entries] == ["close", "mid", "clear"]
    assert entries[0].signals["near_threshold"] == pytest.approx(0.96)
    assert entries[0].reason == "a scored 0.52, 0.02 from its threshold 0.5"
    assert entries[1].reason == "b scored 2, 3.00 from its threshold 5"


def test_a_given_threshold_moves_the_nearness() -> None:
    outcomes = [run("p", "a", 0.9), run("q", "a", 0.5)]
    ranked = review_queue(INFO, ["p", "q"], scored_runs(outcomes), set(), thresholds={"a": 0.9})
    assert [e.item_id for e in ranked] == ["p", "q"]


def test_low_reported_confidence_raises_an_item() -> None:
    outcomes = [
        run("sure", "a", 1.0, confident(0.99)),
        run("unsure", "a", 1.0, confident(0.1, "preprocessStepResult")),
        run("silent", "a", 1.0),
    ]
    entries = review_queue(INFO, ["sure", "unsure", "silent"], scored_runs(outcomes), set())
    assert [e.item_id for e in entries] == ["unsure", "sure", "silent"]
    assert entries[0].reason == "a reports confidence 0.10"
    assert "low_confidence" not in entries[2].signals


@pytest.mark.parametrize("odd", [None, "0.2", True, 1.5, -0.1, [0.2]])
def test_a_confidence_that_is_not_a_number_in_0_1_is_ignored(odd: Any) -> None:
    assert outcome_confidence(run("i", "a", 1.0, confident(odd))) is None
    assert outcome_confidence(run("i", "a", 1.0, {"analyzeStepResult": "text"})) is None


def test_unreviewed_items_come_first_and_ties_keep_dataset_order() -> None:
    outcomes = [run(i, "a", 0.5) for i in ("p", "q", "r", "s")]
    assert order(outcomes, ["p", "q", "r", "s"], {"p", "r"}) == ["q", "s", "p", "r"]
    entries = review_queue(INFO, ["p", "q"], scored_runs(outcomes), {"p"})
    assert entries[1].reviewed and entries[1].reason.startswith("reviewed already · ")


def test_the_reason_names_every_strong_signal_strongest_first() -> None:
    outcomes = [run("both", "a", 0.0, confident(0.3)), run("both", "b", 6.0)]
    (entry,) = review_queue(INFO, ["both"], scored_runs(outcomes), set())
    assert entry.priority == pytest.approx(0.8)  # 1 - 0.2 from b's threshold (0.2 of 5)
    assert entry.reason == (
        "b scored 6, 1.00 from its threshold 5; a reports confidence 0.30; "
        "scorers disagree by 0.60 (b 6, a 0)"
    )


def test_items_without_scores_say_so() -> None:
    outcomes = [run("s", "a", 1.0), run("n", "a", None)]
    entries = review_queue(INFO, ["n", "gone", "s"], scored_runs(outcomes), set())
    assert [e.item_id for e in entries] == ["n", "gone", "s"]
    assert entries[0].reason == "no stored score"
    assert entries[2].reason == "nothing stands out: scores agree and are far from the thresholds"
