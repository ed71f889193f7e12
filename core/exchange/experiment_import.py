"""An exported experiment back into the store, whole or nothing.

The file (`core.exchange.exports.experiment_json`, read by `read_experiment_json`) brings its items,
its successful results and its failed runs. Its dataset is reused when one with the same
content fingerprint is stored, else created from the items; the results are stored with the
experiment's counts and status. The failed runs are handed back in a finished job, for the
memory of the process: like the failures of an experiment run here, they never reach the score
storage.
"""

from __future__ import annotations

import logging

from core.datasets.upload import dataset_fingerprint
from core.errors import ReviewError
from core.exchange.experiment_file import (
    ExperimentFileError,
    ExportedExperiment,
    read_experiment_json,
)
from core.experiments.jobs import ExperimentJob
from core.judge.secrets import secret_masker
from core.records import ColumnMapping, DatasetInfo, ExperimentInfo, RunCounts
from core.reporting.reviews import check_review
from core.storage import StorageError, Store

__all__ = ["import_experiment"]

logger = logging.getLogger(__name__)


def import_experiment(store: Store, data: bytes, name: str | None) -> ExperimentJob:
    """Store the experiment exported in `data` under `name` (else the file's, marked imported);
    returns it as a finished job holding its failed runs.

    Raises ExperimentFileError (naming the place) for a file that is not a readable export,
    and StorageError when the database refuses; then nothing is left half-imported.
    """
    exported = read_experiment_json(data)
    # A file exported elsewhere may quote a key this process holds: it is stored masked.
    masker = secret_masker()
    results = [masker.record(outcome) for outcome in exported.results]
    failures = [masker.record(outcome) for outcome in exported.failures]
    dataset, created = _dataset_for(store, exported)
    experiment_id: str | None = None
    try:
        info = store.create_experiment(
            name=(name or "").strip() or f"{exported.name} (imported)",
            dataset_id=dataset.id,
            scorers=exported.scorers,  # empty for exports that did not record them
            scorer_ids=exported.scorer_ids,
            judge_model=exported.judge_model,
            api_base=None,
            judge_settings={},
            concurrency=1,
        )
        experiment_id = info.id
        store.add_results(info.id, results)
        _store_reviews(store, info, exported)
        counts = RunCounts(
            total=info.counts.total,
            succeeded=len(results),
            failed=len(failures),
            usage=exported.usage,
            judge_calls=exported.judge_calls,
            judge_attempts=exported.judge_attempts,
            cached_calls=sum(outcome.cached_calls for outcome in (*results, *failures)),
        )
        failed = sum((RunCounts().with_outcome(f) for f in exported.failures), RunCounts())
        # A progress write first stamps started_at, so it never falls after finished_at.
        store.update_experiment_progress(info.id, counts, failed)
        store.finish_experiment(info.id, exported.status, counts, failed=failed)
    except BaseException:
        _undo(store, experiment_id, dataset.id if created else None)
        raise
    return ExperimentJob(info.id, counts, status=exported.status, failures=failures)


def _store_reviews(store: Store, info: ExperimentInfo, exported: ExportedExperiment) -> None:
    """The file's reviews, checked against the new experiment (a score in its scorer's range)."""
    for index, review in enumerate(exported.reviews):
        try:
            checked = check_review(info, **review.model_dump(by_alias=False))
        except ReviewError as error:
            raise ExperimentFileError(f"reviews[{index}]: {error}") from None
        store.save_review(info.id, checked)


def _dataset_for(store: Store, exported: ExportedExperiment) -> tuple[DatasetInfo, bool]:
    """The stored dataset with the items' fingerprint, or a new one; True when new."""
    fingerprint = dataset_fingerprint(exported.items)
    existing = store.find_dataset(fingerprint)
    if existing is not None:
        return existing, False
    metadata = list(dict.fromkeys(key for item in exported.items for key in item.metadata))
    mapping = ColumnMapping(
        id="id", input="input", output="output", ground_truth="groundTruth", metadata=metadata
    )
    saved = store.save_dataset(
        name=exported.dataset_name or f"{exported.name} (dataset)",
        file_name=f"{exported.name}.json",
        format="json",
        fingerprint=fingerprint,
        columns=["id", "input", "output", "groundTruth", *metadata],
        mapping=mapping,
        items=exported.items,
    )
    return saved, True


def _undo(store: Store, experiment_id: str | None, dataset_id: str | None) -> None:
    """Remove what a failed import wrote (best effort: the database may be the problem)."""
    try:
        if experiment_id is not None:
            store.delete_experiment(experiment_id)
        if dataset_id is not None:
            store.delete_dataset(dataset_id)
    except StorageError as error:
        logger.error("Could not remove a half-imported experiment: %s", error)
