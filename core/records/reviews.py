"""Records of human review of scores (docs/review.md) and runs as the review queue reads them."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import Field

from core.record_base import Record

__all__ = [
    "CONFIDENCE_STEPS",
    "REVIEW_NOTE_MAX",
    "Review",
    "ReviewInput",
    "ReviewVerdict",
    "ScoredRun",
]


# ---- human review of scores (docs/review.md) ----


ReviewVerdict = Literal["right", "wrong"]
"""A reviewer's verdict on a scorer's score of an item."""

REVIEW_NOTE_MAX = 2_000
"""Characters a review's note may hold."""


class ReviewInput(Record):
    """A review as a reviewer gives it (`Service.save_review` checks it against the experiment)."""

    item_id: str
    """The item reviewed."""
    scorer_id: str
    """The scorer whose score is reviewed; "*" (`WHOLE_ITEM`): a verdict on the whole item."""
    verdict: ReviewVerdict
    """Whether the scorer's score of the item is right or wrong."""
    score: float | None = None
    """The score the reviewer would have given, in the scorer's range (optional)."""
    note: str = ""
    """Why (optional; at most `REVIEW_NOTE_MAX` characters)."""
    reviewer: str = "anonymous"
    """Who reviewed: the dashboard login's user, a typed name, else "anonymous"."""


class Review(Record):
    """A stored review: one per (experiment, item, scorer, reviewer), updated in place."""

    experiment_id: str
    """The experiment."""
    item_id: str
    """The item reviewed."""
    scorer_id: str
    """The scorer whose score is reviewed; "*" (`WHOLE_ITEM`): a verdict on the whole item."""
    verdict: ReviewVerdict
    """Whether the scorer's score of the item is right or wrong."""
    score: float | None = None
    """The score the reviewer would have given, if any."""
    note: str = ""
    """The reviewer's note (may be empty)."""
    reviewer: str
    """Who reviewed."""
    created_at: datetime
    """When the review was first saved (UTC)."""
    updated_at: datetime
    """When it was last changed (UTC)."""


CONFIDENCE_STEPS = ("preprocessStepResult", "analyzeStepResult")
"""The step results of a run whose `confidence` the review queue reads, in this order."""


class ScoredRun(Record):
    """A stored run as the review queue reads it: its score and the confidence values it
    reports, without the rest of its result (core/reporting/review_queue.py)."""

    item_id: str
    """The item."""
    scorer_id: str
    """The scorer."""
    score: float | None = None
    """Its score (None: not scorable)."""
    confidences: list[Any] = Field(default_factory=list)
    """`confidence` of each of its `CONFIDENCE_STEPS` results, as stored (None where absent;
    the queue keeps the first number in [0, 1])."""
