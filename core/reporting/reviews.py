"""Human reviews of scores (docs/review.md): checking a review, the labels reviews make for the
label agreement, the counts and notes of the HTML report, and the grid's review marks.

A review says whether one scorer's score of one item is right or wrong, and may give the score
the reviewer would have given. For the label agreement, a review makes a label per (item,
scorer) meaning "this item deserves a high score from this scorer" (1) or not (0):

- the reviewer's own score, when given: 1 when it is at or above the scorer's threshold;
- else, the verdict `right`: the scorer's own score thresholded (1 when at or above the
  threshold), and `wrong`: its opposite.

A review may also judge the whole item (its `scorer_id` is `WHOLE_ITEM`, "*"): right or wrong
with a note, no score; it makes no label (it says nothing about one scorer's score).

The threshold is the middle of the scorer's range (0.5 for a 0..1 scorer), unless one is given
for the scorer. Several reviewers of one (item, scorer) give the mean of their labels (a number
in [0, 1], binarised at 0.5 by the agreement like any label). A review of a run without a
stored score, with no score of its own, gives no label.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pydantic import Field

from core.errors import ReviewError
from core.record_base import Record
from core.records import (
    REVIEW_NOTE_MAX,
    ExperimentInfo,
    Review,
    ReviewInput,
    ReviewVerdict,
)

__all__ = [
    "ANONYMOUS",
    "VERDICTS",
    "WHOLE_ITEM",
    "ReviewCounts",
    "check_review",
    "review_label",
    "review_labels",
    "review_marks",
    "review_summary",
    "scorer_range",
    "scorer_threshold",
]

ANONYMOUS = "anonymous"
"""The reviewer of a review nobody signed."""
VERDICTS: tuple[ReviewVerdict, ...] = ("right", "wrong")
WHOLE_ITEM = "*"
"""The `scorer_id` of a review judging the whole item (the answer), not one scorer's score."""
_REVIEWER_MAX = 200


def scorer_range(info: ExperimentInfo, scorer_id: str) -> tuple[float, float]:
    """The range of a scorer's scores: 0 to its `scale` option (1 when it has none, or its
    options are unknown)."""
    scale = _options(info, scorer_id).get("scale", 1.0)
    if isinstance(scale, bool) or not isinstance(scale, int | float) or not scale > 0:
        scale = 1.0
    return 0.0, float(scale)


def scorer_threshold(
    info: ExperimentInfo, scorer_id: str, thresholds: Mapping[str, float] | None = None
) -> float:
    """The decision threshold of a scorer: the one given for it, else its range's middle."""
    if thresholds and scorer_id in thresholds:
        return float(thresholds[scorer_id])
    low, high = scorer_range(info, scorer_id)
    return (low + high) / 2


def _options(info: ExperimentInfo, scorer_id: str) -> dict[str, Any]:
    # `scorers` and `scorer_ids` are parallel when the experiment recorded its specs.
    if len(info.scorers) == len(info.scorer_ids) and scorer_id in info.scorer_ids:
        return info.scorers[info.scorer_ids.index(scorer_id)].options
    return {}


def check_review(
    info: ExperimentInfo,
    *,
    item_id: str,
    scorer_id: str,
    verdict: Any,
    score: Any = None,
    note: Any = "",
    reviewer: Any = None,
) -> ReviewInput:
    """A review of `info`'s scorer checked: raises ReviewError naming the field and the value
    for an unknown scorer, a verdict other than right/wrong, a score that is not a number in
    the scorer's range, a note too long, a score on a verdict on the whole item (`WHOLE_ITEM`).
    A blank reviewer is "anonymous". (Whether the item exists is the store's to say.)"""
    if scorer_id == WHOLE_ITEM:
        if score is not None:
            raise ReviewError(
                f"Review of item {item_id!r} as a whole: a verdict on the whole item takes no "
                f"score, got {score!r}"
            )
    elif scorer_id not in info.scorer_ids:
        known = ", ".join(info.scorer_ids) or "none"
        raise ReviewError(
            f"Review of item {item_id!r}: experiment {info.name!r} has no scorer "
            f"{scorer_id!r} (its scorers: {known})"
        )
    place = (
        f"Review of item {item_id!r} as a whole"
        if scorer_id == WHOLE_ITEM
        else f"Review of item {item_id!r} by scorer {scorer_id!r}"
    )
    if verdict not in VERDICTS:
        raise ReviewError(f"{place}: the verdict must be 'right' or 'wrong', got {verdict!r}")
    low, high = scorer_range(info, scorer_id)
    if score is not None and scorer_id != WHOLE_ITEM:
        if (
            isinstance(score, bool)
            or not isinstance(score, int | float)
            or not math.isfinite(score)
        ):
            raise ReviewError(f"{place}: the reviewer's score must be a number, got {score!r}")
        if not low <= score <= high:
            raise ReviewError(
                f"{place}: the reviewer's score {score!r} is outside the scorer's range "
                f"{low:g} to {high:g}"
            )
    text = "" if note is None else str(note).strip()
    if len(text) > REVIEW_NOTE_MAX:
        raise ReviewError(
            f"{place}: the note has {len(text):,} characters; at most {REVIEW_NOTE_MAX:,}"
        )
    who = str(reviewer or "").strip() or ANONYMOUS
    if len(who) > _REVIEWER_MAX:
        raise ReviewError(f"{place}: the reviewer's name is longer than {_REVIEWER_MAX}")
    return ReviewInput(
        item_id=item_id,
        scorer_id=scorer_id,
        verdict=verdict,
        score=None if score is None else float(score),
        note=text,
        reviewer=who,
    )


# ---- reviews as labels ----


def review_label(review: Review, scorer_score: float | None, threshold: float) -> float | None:
    """One review's label (module docstring): 1.0 when it says the item deserves a score at or
    above `threshold` from the scorer, 0.0 when not, None when it cannot say."""
    if review.score is not None:
        return 1.0 if review.score >= threshold else 0.0
    if scorer_score is None or not math.isfinite(scorer_score):
        return None
    high = scorer_score >= threshold
    return 1.0 if high == (review.verdict == "right") else 0.0


def review_labels(
    info: ExperimentInfo,
    reviews: Iterable[Review],
    scores: Mapping[str, Mapping[str, float]],
    thresholds: Mapping[str, float] | None = None,
) -> dict[str, dict[str, float]]:
    """Scorer id -> item id -> the mean label of the reviews of that pair (module docstring);
    `scores`: scorer id -> item id -> the stored score."""
    found: dict[str, dict[str, list[float]]] = {}
    for review in reviews:
        if review.scorer_id not in info.scorer_ids:
            continue
        threshold = scorer_threshold(info, review.scorer_id, thresholds)
        stored = scores.get(review.scorer_id, {}).get(review.item_id)
        label = review_label(review, stored, threshold)
        if label is not None:
            found.setdefault(review.scorer_id, {}).setdefault(review.item_id, []).append(label)
    return {
        scorer: {item: sum(values) / len(values) for item, values in items.items()}
        for scorer, items in found.items()
    }


# ---- what the grid, the drill-down and the report show ----


def review_marks(reviews: Iterable[Review]) -> dict[str, dict[str, ReviewVerdict]]:
    """Item id -> scorer id -> the verdict of the latest review of that pair (several
    reviewers: the one who changed theirs last)."""
    latest: dict[tuple[str, str], Review] = {}
    for review in reviews:
        key = (review.item_id, review.scorer_id)
        kept = latest.get(key)
        if kept is None or review.updated_at >= kept.updated_at:
            latest[key] = review
    marks: dict[str, dict[str, ReviewVerdict]] = {}
    for (item_id, scorer_id), review in latest.items():
        marks.setdefault(item_id, {})[scorer_id] = review.verdict
    return marks


class ReviewCounts(Record):
    """One scorer's reviews in an experiment."""

    scorer_id: str
    """The scorer."""
    right: int = 0
    """Reviews saying its score was right."""
    wrong: int = 0
    """Reviews saying its score was wrong."""
    items: int = 0
    """Items reviewed (by anyone)."""
    notes: list[Review] = Field(default_factory=list)
    """Its reviews with a note, oldest first."""


def review_summary(info: ExperimentInfo, reviews: Sequence[Review]) -> list[ReviewCounts]:
    """Per scorer of the experiment (in its order), the right/wrong counts, the items reviewed
    and the reviews with a note."""
    summary = []
    for scorer_id in info.scorer_ids:
        own = [r for r in reviews if r.scorer_id == scorer_id]
        summary.append(
            ReviewCounts(
                scorer_id=scorer_id,
                right=sum(r.verdict == "right" for r in own),
                wrong=sum(r.verdict == "wrong" for r in own),
                items=len({r.item_id for r in own}),
                notes=[r for r in own if r.note],
            )
        )
    return summary
