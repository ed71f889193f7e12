"""Human reviews of scores for the `Service` (docs/review.md): saving one checked against the
experiment, reading them, the review marks of the grid, the review queue and the agreement of
each scorer with the reviews. `Service` delegates here (facade.py stays composition only)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.errors import ReviewError
from core.records import ExperimentDetail, Review, ReviewVerdict
from core.reporting.agreement import LabelAgreement, review_agreement
from core.reporting.review_queue import QueueEntry, review_queue
from core.reporting.reviews import check_review, review_marks
from core.storage import NotFoundError, Store

__all__ = ["queue", "save", "scorer_agreement", "verdicts"]


def save(
    store: Store,
    experiment_id: str,
    item_id: str,
    scorer_id: str,
    verdict: Any,
    *,
    score: Any = None,
    note: Any = "",
    reviewer: Any = None,
) -> Review:
    """Check a review against the experiment (its scorers, the scorer's range, its dataset's
    items), then store it (insert or update); raises NotFoundError, ReviewError."""
    info = store.get_experiment(experiment_id)
    checked = check_review(
        info,
        item_id=item_id,
        scorer_id=scorer_id,
        verdict=verdict,
        score=score,
        note=note,
        reviewer=reviewer,
    )
    try:
        store.dataset_item(info.dataset_id, item_id)
    except NotFoundError:
        raise ReviewError(
            f"Review of item {item_id!r}: experiment {info.name!r} has no such item"
        ) from None
    return store.save_review(experiment_id, checked)


def verdicts(store: Store, experiment_id: str) -> dict[str, dict[str, ReviewVerdict]]:
    """Item id -> scorer id -> the latest verdict (`core.reporting.reviews.review_marks`)."""
    return review_marks(store.reviews(experiment_id))


def queue(
    store: Store, experiment_id: str, thresholds: Mapping[str, float] | None = None
) -> list[QueueEntry]:
    """The experiment's items in review-queue order (`core.reporting.review_queue`), read
    without the results' JSON (`Store.scored_runs`)."""
    info = store.get_experiment(experiment_id)
    item_ids, runs = store.scored_runs(experiment_id)
    reviewed = {review.item_id for review in store.reviews(experiment_id)}
    return review_queue(info, item_ids, runs, reviewed, thresholds)


def scorer_agreement(
    detail: ExperimentDetail, thresholds: Mapping[str, float] | None = None
) -> LabelAgreement:
    """Each scorer's agreement with the reviews of `detail` as labels."""
    return review_agreement(detail, thresholds=thresholds)
