"""The review desk: human reviews of scores saved, read, queued, set against the scorers."""

from __future__ import annotations

from collections.abc import Mapping

from core.errors import ReviewError
from core.records import Review, ReviewVerdict
from core.reporting.agreement import LabelAgreement, agreement_with_reviews, finite_scores
from core.reporting.review_queue import QueueEntry, review_queue
from core.reporting.reviews import check_review, review_marks
from core.service.context import DeskContext
from core.service.experiments_desk import ExperimentsDesk
from core.storage import NotFoundError

__all__ = ["ReviewsDesk"]


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
        """Store (or update) `reviewer`'s review of a scorer's score of an item, checked against
        the experiment (its scorers, the scorer's range, its dataset's items); raises
        NotFoundError, and ReviewError naming a bad field (unknown item or scorer, a verdict
        other than right/wrong, a score outside the scorer's range, a note too long)."""
        store = self._ctx.store
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
        return review_marks(self._ctx.store.reviews(experiment_id))

    def review_queue(
        self, experiment_id: str, thresholds: Mapping[str, float] | None = None
    ) -> list[QueueEntry]:
        """Every item of the experiment, those most worth a review first, with the reason
        (core/reporting/review_queue.py); reads the scores and reported confidences only
        (`Store.scored_runs`), never the results' JSON."""
        store = self._ctx.store
        info = store.get_experiment(experiment_id)
        item_ids, runs = store.scored_runs(experiment_id)
        reviewed = {review.item_id for review in store.reviews(experiment_id)}
        return review_queue(info, item_ids, runs, reviewed, thresholds)

    def review_agreement(
        self, experiment_id: str, thresholds: Mapping[str, float] | None = None
    ) -> LabelAgreement:
        """Each scorer's agreement (AUC, kappa, ...) with the reviews as labels, from the
        stored scores' columns (`Store.stored_scores`), never the results themselves."""
        store = self._ctx.store
        info = self._experiments.get_experiment(experiment_id)
        return agreement_with_reviews(
            info,
            store.reviews(experiment_id),
            store.get_dataset(info.dataset_id).item_count,
            finite_scores(store.stored_scores(experiment_id)),
            thresholds=thresholds,
        )
