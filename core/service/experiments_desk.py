"""The experiment desk: stored experiments listed, read whole or by page, and deleted."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from core.errors import ExperimentConfigError
from core.judge.secrets import secret_masker
from core.records import DatasetItem, ExperimentDetail, ExperimentInfo, ScorerOutcome
from core.reporting.agreement import LabelAgreement, agreement_with_labels, finite_scores
from core.service.context import DeskContext

__all__ = ["ExperimentsDesk"]


class ExperimentsDesk:
    """`service.experiments`: reading and deleting stored experiments."""

    def __init__(self, context: DeskContext) -> None:
        self._ctx = context

    def list_experiments(self) -> list[ExperimentInfo]:
        """Every experiment, newest first, with per-scorer means."""
        return [self._described(info) for info in self._ctx.store.list_experiments()]

    def get_experiment(self, experiment_id: str) -> ExperimentInfo:
        """One experiment; raises NotFoundError."""
        return self._described(self._ctx.store.get_experiment(experiment_id))

    def load_experiment(self, experiment_id: str) -> ExperimentDetail:
        """An experiment with its items, stored results and in-memory failures."""
        info = self.get_experiment(experiment_id)
        return ExperimentDetail(
            info=info,
            items=self._ctx.store.dataset_items(info.dataset_id),
            results=self._ctx.store.experiment_results(experiment_id),
            failures=self.failures(experiment_id),
            failures_in_memory=self._ctx.jobs.get(experiment_id) is not None,
            reviews=self._ctx.store.reviews(experiment_id),
        )

    def experiment_pages(
        self, experiment_id: str, page_size: int = 2_000
    ) -> Iterator[ExperimentDetail]:
        """`load_experiment` a page of items at a time: each page holds `page_size` items in
        order, with their stored results and in-memory failures (at least one page, maybe
        empty). For exports of an experiment too large to load whole."""
        info = self.get_experiment(experiment_id)
        failures: dict[str, list[ScorerOutcome]] = {}
        for failure in self.failures(experiment_id):
            failures.setdefault(failure.item_id, []).append(failure)
        in_memory = self._ctx.jobs.get(experiment_id) is not None

        def page(items: list[DatasetItem]) -> ExperimentDetail:
            ids = [item.id for item in items]
            return ExperimentDetail(
                info=info,
                items=items,
                results=self._ctx.store.experiment_results(experiment_id, item_ids=ids),
                failures=[f for item_id in ids for f in failures.get(item_id, [])],
                failures_in_memory=in_memory,
                reviews=self._ctx.store.reviews(experiment_id, ids),
            )

        items: list[DatasetItem] = []
        given = False
        for item in self._ctx.store.iter_dataset_items(info.dataset_id, page_size):
            items.append(item)
            if len(items) == page_size:
                yield page(items)
                items, given = [], True
        if items or not given:
            yield page(items)

    def failures(self, experiment_id: str) -> list[ScorerOutcome]:
        """The failed runs of an experiment this process ran (empty otherwise), every secret
        the process holds masked (a last line: the engine masks them when it makes them)."""
        job = self._ctx.jobs.get(experiment_id)
        if job is None:
            return []
        masker = secret_masker()
        return [masker.record(outcome) for outcome in job.failures()]

    def sample_results(self, experiment_id: str, limit: int = 500) -> list[ScorerOutcome]:
        """The first `limit` stored results with their full result JSON (a sample of the judge
        executions of a large experiment)."""
        return self._ctx.store.experiment_results(experiment_id, limit=limit)

    def sample_items(self, dataset_id: str, limit: int = 1_000) -> list[DatasetItem]:
        """A dataset's first `limit` items (e.g. to find its label columns)."""
        return self._ctx.store.dataset_items(dataset_id, limit)

    def label_agreement(self, experiment_id: str, column: str) -> LabelAgreement:
        """Each scorer's agreement with the labels in the dataset's `column` (AUC, its
        interval, kappa, ...: core/reporting/agreement.py), from the items and the stored
        scores' columns (`Store.stored_scores`), never the results themselves (10,000 x 5:
        0.4 s, against 2.5 s to read the results without their JSON). Raises LabelError for
        a column no item has or a value that is not a label."""
        info = self.get_experiment(experiment_id)
        return agreement_with_labels(
            self._ctx.store.dataset_items(info.dataset_id),
            finite_scores(self._ctx.store.stored_scores(experiment_id)),
            info.scorer_ids,
            column,
        )

    def delete_experiment(self, experiment_id: str) -> None:
        """Remove a finished experiment and its results."""
        job = self._ctx.jobs.get(experiment_id)
        if job is not None and job.running:
            raise ExperimentConfigError("Cancel the experiment before deleting it")
        self._ctx.store.delete_experiment(experiment_id)
        self._ctx.jobs.forget(experiment_id)

    def _described(self, info: ExperimentInfo) -> ExperimentInfo:
        update: dict[str, Any] = {"comparisons": self._ctx.catalog.comparisons(info)}
        if info.error:
            update["error"] = secret_masker().text(info.error)
        return info.model_copy(update=update)
