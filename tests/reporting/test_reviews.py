"""Reviews in core/reporting: the scorer's range and threshold, a review checked, the label a
review makes (docs/review.md), the marks and the per-scorer counts."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from core.errors import ReviewError
from core.records import ExperimentInfo, Review, ReviewVerdict, ScorerSpec
from core.reporting.reviews import (
    check_review,
    review_label,
    review_labels,
    review_marks,
    review_summary,
    scorer_range,
    scorer_threshold,
)

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def info(scale: object = None) -> ExperimentInfo:
    options = {} if scale is None else {"scale": scale}
    return ExperimentInfo(
        id="e1",
        name="demo",
        dataset_id="d1",
        dataset_fingerprint="fp",
        scorers=[ScorerSpec(scorer_id="judge", options=options), ScorerSpec(scorer_id="code")],
        scorer_ids=["judged", "code"],
        created_at=NOW,
    )


def review(
    item: str,
    verdict: ReviewVerdict,
    *,
    scorer: str = "code",
    score: float | None = None,
    note: str = "",
    who: str = "ana",
    minutes: int = 0,
) -> Review:
    at = NOW + timedelta(minutes=minutes)
    return Review(
        experiment_id="e1",
        item_id=item,
        scorer_id=scorer,
        verdict=verdict,
        score=score,
        note=note,
        reviewer=who,
        created_at=at,
        updated_at=at,
    )


def test_the_range_is_zero_to_the_scale_option_else_one() -> None:
    assert scorer_range(info(5), "judged") == (0.0, 5.0)
    assert scorer_range(info(5), "code") == (0.0, 1.0)
    for odd in (0, -2, True, "10"):
        assert scorer_range(info(odd), "judged") == (0.0, 1.0)
    assert scorer_threshold(info(5), "judged") == 2.5
    assert scorer_threshold(info(5), "judged", {"judged": 4.0}) == 4.0
    assert scorer_threshold(info(), "code", {"judged": 0.9}) == 0.5


def test_a_checked_review_is_trimmed_and_signed() -> None:
    checked = check_review(
        info(5), item_id="a", scorer_id="judged", verdict="wrong", score=4, note="  meh "
    )
    assert (checked.score, checked.note, checked.reviewer) == (4.0, "meh", "anonymous")
    signed = check_review(info(), item_id="a", scorer_id="code", verdict="right", reviewer=" bo ")
    assert signed.reviewer == "bo" and signed.score is None and signed.note == ""


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"scorer_id": "judge"}, "no scorer 'judge' (its scorers: judged, code)"),
        ({"verdict": None}, "must be 'right' or 'wrong', got None"),
        ({"score": 5.5}, "5.5 is outside the scorer's range 0 to 5"),
        ({"score": True}, "must be a number, got True"),
        ({"score": float("inf")}, "must be a number"),
        ({"reviewer": "x" * 201}, "longer than 200"),
    ],
)
def test_a_bad_review_names_its_problem(fields: dict, message: str) -> None:
    given = {"item_id": "a", "scorer_id": "judged", "verdict": "right", **fields}
    with pytest.raises(ReviewError) as raised:
        check_review(info(5), **given)
    assert message in str(raised.value)


@pytest.mark.parametrize(
    ("verdict", "own", "stored", "label"),
    [
        ("right", None, 0.9, 1.0),  # the high score was deserved
        ("right", None, 0.1, 0.0),  # the low score was deserved
        ("wrong", None, 0.9, 0.0),  # the high score was not deserved
        ("wrong", None, 0.1, 1.0),
        ("right", None, 0.5, 1.0),  # at the threshold counts as high
        ("wrong", 0.7, 0.1, 1.0),  # the reviewer's own score decides
        ("wrong", 0.2, 0.9, 0.0),
        ("right", None, None, None),  # nothing to threshold
        ("right", 0.6, None, 1.0),
    ],
)
def test_the_label_of_a_review(
    verdict: ReviewVerdict, own: float | None, stored: float | None, label: float | None
) -> None:
    assert review_label(review("a", verdict, score=own), stored, 0.5) == label


def test_labels_per_scorer_average_the_reviewers() -> None:
    scores = {"code": {"a": 0.9, "b": 0.2}, "judged": {"a": 4.0}}
    reviews = [
        review("a", "right", who="ana"),
        review("a", "wrong", who="bo"),
        review("b", "right"),
        review("a", "right", scorer="judged"),  # 4 of 5: above the threshold 2.5
        review("c", "right"),  # no score, no label
        review("a", "right", scorer="gone"),  # not a scorer of the experiment
    ]
    assert review_labels(info(5), reviews, scores) == {
        "code": {"a": 0.5, "b": 0.0},
        "judged": {"a": 1.0},
    }


def test_marks_keep_the_latest_verdict_and_the_summary_counts_per_scorer() -> None:
    reviews = [
        review("a", "right", who="ana", minutes=1),
        review("a", "wrong", who="bo", minutes=2),
        review("b", "right", scorer="judged", note="fine"),
    ]
    assert review_marks(reviews) == {"a": {"code": "wrong"}, "b": {"judged": "right"}}
    assert review_marks(list(reversed(reviews))) == review_marks(reviews)
    summary = {c.scorer_id: c for c in review_summary(info(), reviews)}
    assert list(summary) == ["judged", "code"]
    assert (summary["code"].right, summary["code"].wrong, summary["code"].items) == (1, 1, 1)
    assert [r.note for r in summary["judged"].notes] == ["fine"] and summary["code"].notes == []
