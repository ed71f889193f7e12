"""`Store`: the one entry to the database (SQLite or PostgreSQL), composed of parts by subject
that share one `Database`; each public method a one-line delegation to its part.

Every method returns pydantic records (never ORM rows). Items and results go in with bulk
inserts, a batch at a time, and items come out a page at a time (`iter_dataset_items`), so a
dataset of a million items is never held whole. A dataset is written in one transaction: whole
or not at all. Failed scorer runs are refused: they live in memory only (`add_results` raises if
given one).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.engine import Engine

from core._delegate import delegate
from core.storage import reads
from core.storage._manage import ManageStore
from core.storage.database import (
    DATABASE_URL_ENV,
    STALE_AFTER_S,
    Database,
    NotFoundError,
    StorageError,
    default_database_url,
)
from core.storage.datasets import DatasetStore
from core.storage.experiments import ExperimentStore
from core.storage.results import ResultStore
from core.storage.reviews import ReviewStore

__all__ = [
    "DATABASE_URL_ENV",
    "STALE_AFTER_S",
    "NotFoundError",
    "StorageError",
    "Store",
    "default_database_url",
]


class Store:
    """The database behind the dashboard and the CLI. Its parts: `datasets`, `experiments`
    (with their thresholds), `results` (with the reads the database computes), `reviewing`,
    `manage` (docs/architecture.md)."""

    def __init__(
        self, database_url: str | None = None, *, stale_after_s: float = STALE_AFTER_S
    ) -> None:
        self.database = Database(database_url, stale_after_s)
        """What the parts share: the engine, transactions, live runs, settled totals."""
        self.datasets = DatasetStore(self.database)
        self.experiments = ExperimentStore(self.database, self.datasets)
        self.results = ResultStore(self.database, self.experiments)
        self.reviewing = ReviewStore(self.database, self.experiments)
        self.manage = ManageStore(self.database, self.datasets, self.experiments)
        self._settled: dict[str, tuple[tuple[Any, ...], list[reads.ScorerTotals]]] = (
            self.database.settled
        )
        """The totals kept for settled experiments (the database's, under its old name)."""

    @property
    def url(self) -> str:
        """The database URL (normalised)."""
        return self.database.url

    @property
    def engine(self) -> Engine:
        """The SQLAlchemy engine."""
        return self.database.engine

    @property
    def stale_after_s(self) -> float:
        """A running experiment without a heartbeat for this long is `interrupted`."""
        return self.database.stale_after_s

    @property
    def safe_url(self) -> str:
        """The URL with any password hidden, for messages."""
        return self.database.safe_url

    close = delegate("database", Database.close)

    # ---- datasets (core/storage/datasets.py) ----
    save_dataset = delegate("datasets", DatasetStore.save_dataset)
    list_datasets = delegate("datasets", DatasetStore.list_datasets)
    get_dataset = delegate("datasets", DatasetStore.get_dataset)
    find_dataset = delegate("datasets", DatasetStore.find_dataset)
    dataset_items = delegate("datasets", DatasetStore.dataset_items)
    iter_dataset_items = delegate("datasets", DatasetStore.iter_dataset_items)
    iter_unfinished_items = delegate("datasets", DatasetStore.iter_unfinished_items)
    dataset_items_by_id = delegate("datasets", DatasetStore.dataset_items_by_id)
    delete_dataset = delegate("datasets", DatasetStore.delete_dataset)
    dataset_item = delegate("datasets", DatasetStore.dataset_item)

    # ---- experiments (core/storage/experiments.py) ----
    create_experiment = delegate("experiments", ExperimentStore.create_experiment)
    update_experiment_progress = delegate("experiments", ExperimentStore.update_experiment_progress)
    heartbeat = delegate("experiments", ExperimentStore.heartbeat)
    set_rate_limit = delegate("experiments", ExperimentStore.set_rate_limit)
    finish_experiment = delegate("experiments", ExperimentStore.finish_experiment)
    reopen_experiment = delegate("experiments", ExperimentStore.reopen_experiment)
    get_experiment = delegate("experiments", ExperimentStore.get_experiment)
    list_experiments = delegate("experiments", ExperimentStore.list_experiments)
    delete_experiment = delegate("experiments", ExperimentStore.delete_experiment)
    dataset_of = delegate("experiments", ExperimentStore.dataset_of)
    save_thresholds = delegate("experiments", ExperimentStore.save_thresholds)
    thresholds = delegate("experiments", ExperimentStore.thresholds)
    live_experiments = delegate("experiments", ExperimentStore.live_experiments)
    experiment_ids_of = delegate("experiments", ExperimentStore.experiment_ids_of)

    # ---- results (core/storage/results.py) ----
    add_results = delegate("results", ResultStore.add_results)
    add_rows = delegate("results", ResultStore.add_rows)
    detached = delegate("results", ResultStore.detached)
    stored_pairs = delegate("results", ResultStore.stored_pairs)
    prepare_search = delegate("results", ResultStore.prepare_search)
    experiment_results = delegate("results", ResultStore.experiment_results)
    stored_scores = delegate("results", ResultStore.stored_scores)
    result_count = delegate("results", ResultStore.result_count)
    score_summaries = delegate("results", ResultStore.score_summaries)
    score_histograms = delegate("results", ResultStore.score_histograms)
    judge_usage = delegate("results", ResultStore.judge_usage)
    result_page = delegate("results", ResultStore.result_page)
    slice_summaries = delegate("results", ResultStore.slice_summaries)
    metadata_values = delegate("results", ResultStore.metadata_values)

    # ---- reviewing (core/storage/reviews.py) ----
    save_review = delegate("reviewing", ReviewStore.save_review)
    reviews = delegate("reviewing", ReviewStore.reviews)
    review_count = delegate("reviewing", ReviewStore.review_count)
    scored_runs = delegate("reviewing", ReviewStore.scored_runs)
    delete_review = delegate("reviewing", ReviewStore.delete_review)

    # ---- manage (core/storage/_manage.py) ----
    rename_dataset = delegate("manage", ManageStore.rename_dataset)
    rename_experiment = delegate("manage", ManageStore.rename_experiment)
    set_experiment_note = delegate("manage", ManageStore.set_experiment_note)
    dataset_impact = delegate("manage", ManageStore.dataset_impact)
    experiment_impact = delegate("manage", ManageStore.experiment_impact)
