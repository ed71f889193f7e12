"""Human reviews of scores for the `Service` (docs/review.md): saving one checked against the
experiment, reading them, the review marks of the grid, the review queue and the agreement of
each scorer with the reviews: the desk `service.reviewing` over the checks below."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.errors import ReviewError
from core.records import ExperimentDetail, Review, ReviewVerdict
from core.reporting.agreement import LabelAgreement, review_agreement
from core.reporting.review_queue import QueueEntry, review_queue
from core.reporting.reviews import check_review, review_marks
from core.service.context import DeskContext
from core.service.experiments_desk import ExperimentsDesk
from core.storage import NotFoundError, Store

__all__ = ["ReviewsDesk", "queue", "save", "scorer_agreement", "verdicts"]


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


class ReviewsDesk:
    """`service.reviewing`: human reviews of scores saved, read and deleted; the review marks,
    the review queue and the scorers' agreement with the reviews."""

    def __init__(self, context: DeskContext, experiments: ExperimentsDesk) -> None:
        self._ctx = context
        self._experiments = experiments

    def save_review(
        self,
        experiment_id: str,
        item_id: str,
        scorer_id: str,
        verdict: ReviewVerdict,
        *,
        score: float | None = None,
        note: str = "",
        reviewer: str | None = None,
    ) -> Review:
        """Store (or update) `reviewer`'s review of a scorer's score of an item; raises
        NotFoundError, and ReviewError naming a bad field (unknown item or scorer, a verdict
        other than right/wrong, a score outside the scorer's range, a note too long)."""
        return save(
            self._ctx.store, experiment_id, item_id, scorer_id, verdict,
            score=score, note=note, reviewer=reviewer,
        )  # fmt: skip

    def reviews(self, experiment_id: str, item_id: str | None = None) -> list[Review]:
        """An experiment's reviews (of one item, when given), oldest first."""
        return self._ctx.store.reviews(experiment_id, None if item_id is None else [item_id])

    def delete_review(
        self, experiment_id: str, item_id: str, scorer_id: str, reviewer: str
    ) -> bool:
        """Remove one review; True when there was one."""
        return self._ctx.store.delete_review(experiment_id, item_id, scorer_id, reviewer)

    def review_marks(self, experiment_id: str) -> dict[str, dict[str, ReviewVerdict]]:
        """Item id -> scorer id -> the latest review's verdict (the grid's review marks)."""
        return verdicts(self._ctx.store, experiment_id)

    def review_queue(
        self, experiment_id: str, thresholds: Mapping[str, float] | None = None
    ) -> list[QueueEntry]:
        """Every item of the experiment, those most worth a review first, with the reason
        (core/reporting/review_queue.py); reads the scores and reported confidences only."""
        return queue(self._ctx.store, experiment_id, thresholds)

    def review_agreement(
        self, experiment_id: str, thresholds: Mapping[str, float] | None = None
    ) -> LabelAgreement:
        """Each scorer's agreement (AUC, kappa, ...) with the reviews as labels."""
        return scorer_agreement(self._experiments.scores_detail(experiment_id), thresholds)
