"""`Store`: datasets, experiments and successful scorer results in SQLite or PostgreSQL.

Every method returns pydantic records (never ORM rows). Items and results go in with bulk
inserts, a batch at a time, and items come out a page at a time (`iter_dataset_items`), so a
dataset of a million items is never held whole. A dataset is written in one transaction: whole
or not at all. Failed scorer runs are refused: they live in memory only (`add_results` raises if
given one).
"""

from __future__ import annotations

import uuid
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import timedelta
from types import TracebackType
from typing import Any, Literal

from sqlalchemy import (
    ColumnElement,
    delete,
    func,
    insert,
    null,
    or_,
    select,
    update,
)
from sqlalchemy.engine import Connection, make_url
from sqlalchemy.exc import SQLAlchemyError
from sqlmodel import col

from core.records import (
    ColumnMapping,
    DatasetInfo,
    DatasetItem,
    ExperimentInfo,
    ExperimentStatus,
    ResultPage,
    ResultQuery,
    Review,
    ReviewInput,
    RunCounts,
    ScoredRun,
    ScoreHistogram,
    ScorerOutcome,
    ScorerSpec,
    ScorerUsage,
    ScoreSummary,
    SliceSummary,
)
from core.run_results import ResultRow
from core.storage import reads, result_rows, reviews, slices, step_usage, thresholds
from core.storage._engines import make_engine, normalise_url
from core.storage._light import DATABASE_URL_ENV, STALE_AFTER_S, default_database_url
from core.storage._manage import StoreManagement
from core.storage._rows import (
    _ITEM_PAGE,
    _KEY_PAGE,
    _LIVE_STATUSES,
    _USAGE_COLUMNS,
    _batches,
    _counts_values,
    _dataset_info,
    _experiment_info,
    _first_line,
    _flat,
    _item_rows,
    _items,
    _items_query,
    _now,
    _outcome,
    _row_key,
    _score_row,
    _settled_key,
    _stored_counts,
    _utc,
)
from core.storage.schema import SchemaError, upgrade_schema
from core.storage.tables import DatasetItemRow, DatasetRow, ExperimentRow, ScoreRow

__all__ = [
    "DATABASE_URL_ENV",
    "STALE_AFTER_S",
    "NotFoundError",
    "StorageError",
    "Store",
    "default_database_url",
]


class StorageError(RuntimeError):
    """The database refused or failed an operation."""


class NotFoundError(LookupError):
    """No dataset or experiment with that id."""


class Store(StoreManagement):
    """The database behind the dashboard and the CLI."""

    def __init__(
        self, database_url: str | None = None, *, stale_after_s: float = STALE_AFTER_S
    ) -> None:
        self.url = normalise_url(database_url or default_database_url())
        self.engine = make_engine(self.url)
        self.stale_after_s = stale_after_s
        self._settled: dict[str, tuple[tuple[Any, ...], list[reads.ScorerTotals]]] = {}
        """Per-scorer totals of finished experiments, by id, with the row state they hold for."""
        try:
            upgrade_schema(self.engine)  # migrations; safe with other processes opening it too
        except (SQLAlchemyError, SchemaError) as error:
            raise StorageError(
                f"Cannot open the database {self.safe_url}: {_first_line(error)}"
            ) from error

    @property
    def safe_url(self) -> str:
        """The URL with any password hidden, for messages."""
        return make_url(self.url).render_as_string(hide_password=True)

    def close(self) -> None:
        """Release the connections."""
        self.engine.dispose()

    # ---- datasets ----

    def save_dataset(
        self,
        *,
        name: str,
        file_name: str,
        format: str,
        fingerprint: str,
        columns: Sequence[str],
        mapping: ColumnMapping,
        items: Iterable[DatasetItem] | Iterable[Sequence[DatasetItem]],
    ) -> DatasetInfo:
        """Store a dataset and its items in one transaction (whole or nothing).

        `items`: the items, or chunks of them (lists, e.g. `MappedUpload.item_chunks()`),
        consumed once and inserted a batch at a time: never all held at once.
        """
        dataset_id = uuid.uuid4().hex
        row = {
            "id": dataset_id,
            "name": name,
            "file_name": file_name,
            "format": format,
            "fingerprint": fingerprint,
            "item_count": 0,
            "columns": list(columns),
            "mapping": mapping.model_dump(mode="json", by_alias=True),
            "created_at": _now(),
        }
        count = 0
        with self._transaction("save the dataset") as connection:
            connection.execute(insert(DatasetRow), [row])
            for batch in _batches(_flat(items)):
                result_rows.insert_items(connection, _item_rows(dataset_id, count, batch))
                count += len(batch)
            connection.execute(
                update(DatasetRow.__table__)
                .where(DatasetRow.__table__.c.id == dataset_id)
                .values(item_count=count)
            )
        return _dataset_info({**row, "item_count": count})

    def list_datasets(self) -> list[DatasetInfo]:
        """Every dataset, newest first."""
        query = select(DatasetRow.__table__).order_by(col(DatasetRow.created_at).desc())
        with self.engine.connect() as connection:
            return [_dataset_info(r._mapping) for r in connection.execute(query)]

    def get_dataset(self, dataset_id: str) -> DatasetInfo:
        """One dataset; raises NotFoundError."""
        query = select(DatasetRow.__table__).where(col(DatasetRow.id) == dataset_id)
        with self.engine.connect() as connection:
            row = connection.execute(query).first()
        if row is None:
            raise NotFoundError(f"No dataset with id {dataset_id!r}")
        return _dataset_info(row._mapping)

    def find_dataset(self, fingerprint: str) -> DatasetInfo | None:
        """The newest dataset with this content fingerprint, if any."""
        query = (
            select(DatasetRow.__table__)
            .where(col(DatasetRow.fingerprint) == fingerprint)
            .order_by(col(DatasetRow.created_at).desc())
        )
        with self.engine.connect() as connection:
            row = connection.execute(query).first()
        return None if row is None else _dataset_info(row._mapping)

    def dataset_items(self, dataset_id: str, limit: int | None = None) -> list[DatasetItem]:
        """A dataset's items in file order (the first `limit` only, when given); raises
        NotFoundError. A large dataset is better read with `iter_dataset_items`."""
        self.get_dataset(dataset_id)
        with self.engine.connect() as connection:
            return _items(connection.execute(_items_query(dataset_id, 0, limit)))

    def iter_dataset_items(
        self, dataset_id: str, page_size: int = _ITEM_PAGE
    ) -> Iterator[DatasetItem]:
        """A dataset's items in file order, read `page_size` at a time (one short query per
        page, keyed on the position: no connection or transaction stays open between pages).
        Raises NotFoundError at once for an unknown dataset."""
        self.get_dataset(dataset_id)
        return self._item_pages(dataset_id, page_size)

    def iter_unfinished_items(
        self,
        experiment_id: str,
        dataset_id: str,
        scorer_count: int,
        page_size: int = _ITEM_PAGE,
    ) -> tuple[int, Iterator[DatasetItem]]:
        """The items of an experiment's dataset (`dataset_id`) with fewer than `scorer_count`
        stored results (those a resume must run again), in file order, read a page at a time
        as `iter_dataset_items` does; with how many there are."""
        results, items = ScoreRow.__table__, DatasetItemRow.__table__
        stored = (
            select(func.count())
            .where(results.c.experiment_id == experiment_id, results.c.item_id == items.c.item_id)
            .scalar_subquery()
        )
        unfinished = stored < scorer_count
        count = (
            select(func.count())
            .select_from(items)
            .where(items.c.dataset_id == dataset_id, unfinished)
        )
        with self.engine.connect() as connection:
            total = int(connection.execute(count).scalar_one())
        return total, self._item_pages(dataset_id, page_size, unfinished)

    def _item_pages(
        self, dataset_id: str, page_size: int, where: Any = None
    ) -> Iterator[DatasetItem]:
        position = 0
        # SQLite gives the JSON columns' text as it is, decoded here by orjson (SQLAlchemy's
        # json.loads per column cost a tenth of a stored run); PostgreSQL's driver decodes.
        text = self.engine.dialect.name == "sqlite"
        while True:
            query = _items_query(dataset_id, position, page_size, as_text=text)
            if where is not None:
                query = query.where(where)
            with self.engine.connect() as connection:
                rows = connection.execute(query).all()
            yield from _items(rows, decode=text)
            if len(rows) < page_size:
                return
            position = rows[-1].position + 1

    def dataset_items_by_id(self, dataset_id: str, item_ids: Iterable[str]) -> list[DatasetItem]:
        """The items of a dataset with these ids, in file order (unknown ids are left out);
        raises NotFoundError for an unknown dataset."""
        self.get_dataset(dataset_id)
        table = DatasetItemRow.__table__
        wanted = list(dict.fromkeys(item_ids))
        rows: list[Any] = []
        with self.engine.connect() as connection:
            for start in range(0, len(wanted), _KEY_PAGE):
                query = _items_query(dataset_id, 0, None).where(
                    table.c.item_id.in_(wanted[start : start + _KEY_PAGE])
                )
                rows += connection.execute(query).all()
        rows.sort(key=lambda row: row.position)
        return _items(rows)

    def delete_dataset(self, dataset_id: str) -> None:
        """Remove a dataset, its items, and its experiments with their results; refused
        (ExperimentConfigError) while some process runs one of its experiments."""
        experiments = select(col(ExperimentRow.id)).where(
            col(ExperimentRow.dataset_id) == dataset_id
        )
        with self._transaction("delete the dataset") as connection:
            self.refuse_live_runs(connection, "dataset", dataset_id=dataset_id)
            reviews.delete_reviews_of(connection, experiments)
            thresholds.delete_thresholds_of(connection, experiments)
            connection.execute(delete(ScoreRow).where(col(ScoreRow.experiment_id).in_(experiments)))
            connection.execute(
                delete(ExperimentRow).where(col(ExperimentRow.dataset_id) == dataset_id)
            )
            connection.execute(
                delete(DatasetItemRow).where(col(DatasetItemRow.dataset_id) == dataset_id)
            )
            connection.execute(delete(DatasetRow).where(col(DatasetRow.id) == dataset_id))

    # ---- experiments ----

    def create_experiment(
        self,
        *,
        name: str,
        dataset_id: str,
        scorers: Sequence[ScorerSpec],
        scorer_ids: Sequence[str],
        judge_model: str | None,
        api_base: str | None,
        judge_settings: dict[str, Any],
        concurrency: int,
        cache: bool = False,
        max_cost: float | None = None,
    ) -> ExperimentInfo:
        """Record a new experiment (status `pending`) over a stored dataset (`cache`: the
        judge cache on; `max_cost`: its spend cap in USD, if any)."""
        dataset = self.get_dataset(dataset_id)
        row: dict[str, Any] = {
            "id": uuid.uuid4().hex,
            "name": name,
            "dataset_id": dataset_id,
            "dataset_fingerprint": dataset.fingerprint,
            "scorers": [s.model_dump(mode="json", by_alias=True) for s in scorers],
            "scorer_ids": list(scorer_ids),
            "judge_model": judge_model,
            "api_base": api_base,
            "judge_settings": judge_settings,
            "concurrency": concurrency,
            "judge_cache": bool(cache),
            "max_cost": max_cost,
            "status": "pending",
            "total_items": dataset.item_count,
            "total_runs": dataset.item_count * len(scorer_ids),
            "created_at": _now(),
            "heartbeat_at": _now(),  # its worker starts at once; a crash before is a stale row
        }
        with self._transaction("create the experiment") as connection:
            connection.execute(insert(ExperimentRow), [row])
        return self.get_experiment(row["id"])

    def update_experiment_progress(
        self, experiment_id: str, counts: RunCounts, failed: RunCounts | None = None
    ) -> None:
        """Store the counts and judge totals of a running experiment (a heartbeat too).

        `counts` covers every finished run; `failed` the failed runs alone, whose judge totals
        only the row can keep (None: they made no judge calls worth counting)."""
        values = _counts_values(counts, failed)
        values.update(status="running", heartbeat_at=_now())
        self._update_experiment(experiment_id, values, start=True)

    def heartbeat(self, experiment_id: str) -> None:
        """Record that the process running the experiment is alive (see STALE_AFTER_S)."""
        self._update_experiment(experiment_id, {"heartbeat_at": _now()}, start=False)

    def finish_experiment(
        self,
        experiment_id: str,
        status: ExperimentStatus,
        counts: RunCounts | None = None,
        error: str | None = None,
        failed: RunCounts | None = None,
    ) -> None:
        """Store the final status (and counts: see `update_experiment_progress`), with the
        finishing time."""
        values: dict[str, Any] = _counts_values(counts, failed) if counts is not None else {}
        values.update(status=status, error=error, finished_at=_now())
        self._update_experiment(experiment_id, values, start=True)

    def reopen_experiment(self, experiment_id: str, statuses: Sequence[ExperimentStatus]) -> bool:
        """Mark a stopped experiment running again, to resume it: True when this call did, False
        when its status is not one of `statuses` (`interrupted` there takes a pending or running
        row whose heartbeat is stale too, as reading it shows). One conditional UPDATE, so of
        two processes resuming the same experiment only one gets True.

        The failed runs' counters start again from zero: a resume runs again every pair without
        a stored success, failed ones included, and counts them anew.

        Its duration stays its running time: `started_at` moves forward by the idle time
        between its stop (`finished_at`, else its last heartbeat for a crashed run) and now, so
        `finished_at - started_at` never counts the time it sat cancelled or interrupted."""
        table = ExperimentRow.__table__
        claimable: ColumnElement[bool] = table.c.status.in_(list(statuses))
        if "interrupted" in statuses:
            stale_before = _now() - timedelta(seconds=self.stale_after_s)
            seen = func.coalesce(table.c.heartbeat_at, table.c.started_at, table.c.created_at)
            claimable = or_(claimable, table.c.status.in_(_LIVE_STATUSES) & (seen < stale_before))
        values: dict[str, Any] = {f"failed_{k}": None for k in _USAGE_COLUMNS}
        values.update(
            failed_runs=0,
            failed_judge_calls=0,
            failed_judge_attempts=0,
            status="running",
            error=None,
            finished_at=None,
            heartbeat_at=_now(),
        )
        with self._transaction("reopen the experiment") as connection:
            found = connection.execute(
                select(table.c.started_at, table.c.finished_at, table.c.heartbeat_at).where(
                    table.c.id == experiment_id
                )
            ).first()
            if found is not None and found.started_at is not None:
                stopped = _utc(found.finished_at or found.heartbeat_at)
                started = _utc(found.started_at)
                if stopped is not None and started is not None:
                    ran = max(stopped - started, timedelta(0))
                    values["started_at"] = values["heartbeat_at"] - ran
            result = connection.execute(
                update(table).where(table.c.id == experiment_id, claimable).values(**values)
            )
        return result.rowcount == 1

    def _update_experiment(self, experiment_id: str, values: dict[str, Any], start: bool) -> None:
        table = ExperimentRow.__table__
        with self._transaction("update the experiment") as connection:
            if start:
                connection.execute(
                    update(table)
                    .where(table.c.id == experiment_id, table.c.started_at.is_(None))
                    .values(started_at=_now())
                )
            result = connection.execute(
                update(table).where(table.c.id == experiment_id).values(**values)
            )
        if result.rowcount == 0:
            raise NotFoundError(f"No experiment with id {experiment_id!r}")

    def get_experiment(self, experiment_id: str) -> ExperimentInfo:
        """One experiment with its per-scorer means; raises NotFoundError."""
        found = self._experiments(experiment_id)
        if not found:
            raise NotFoundError(f"No experiment with id {experiment_id!r}")
        return found[0]

    def list_experiments(self) -> list[ExperimentInfo]:
        """Every experiment, newest first, with per-scorer means computed by the database."""
        return self._experiments(None)

    def _experiments(self, experiment_id: str | None) -> list[ExperimentInfo]:
        experiments = ExperimentRow.__table__
        datasets = DatasetRow.__table__
        query = (
            select(experiments, datasets.c.name.label("dataset_name"))
            .join(datasets, datasets.c.id == experiments.c.dataset_id, isouter=True)
            .order_by(experiments.c.created_at.desc())
        )
        if experiment_id is not None:
            query = query.where(experiments.c.id == experiment_id)
        with self.engine.connect() as connection:
            rows = connection.execute(query).all()
            totals = self._totals(connection, [r._mapping for r in rows])
        scores: dict[str, dict[str, float]] = {}
        successes: dict[str, RunCounts] = {}
        for found in totals.values():
            for scorer in found:
                if scorer.mean is not None:
                    scores.setdefault(scorer.experiment_id, {})[scorer.scorer_id] = scorer.mean
                before = successes.get(scorer.experiment_id, RunCounts())
                successes[scorer.experiment_id] = before + _stored_counts(scorer)
        stale_before = _now() - timedelta(seconds=self.stale_after_s)
        return [
            _experiment_info(
                r._mapping, scores.get(r.id, {}), successes.get(r.id, RunCounts()), stale_before
            )
            for r in rows
        ]

    def delete_experiment(self, experiment_id: str) -> None:
        """Remove an experiment, its results and its reviews; refused (ExperimentConfigError)
        while some process runs it (a fresh heartbeat)."""
        with self._transaction("delete the experiment") as connection:
            self.refuse_live_runs(connection, "experiment", experiment_id=experiment_id)
            self._settled.pop(experiment_id, None)
            reviews.delete_reviews_of(connection, [experiment_id])
            thresholds.delete_thresholds_of(connection, [experiment_id])
            connection.execute(delete(ScoreRow).where(col(ScoreRow.experiment_id) == experiment_id))
            connection.execute(delete(ExperimentRow).where(col(ExperimentRow.id) == experiment_id))

    # ---- results ----

    def add_results(self, experiment_id: str, outcomes: Iterable[ScorerOutcome]) -> int:
        """Bulk-insert successful outcomes; returns how many were written.

        An outcome whose (item, scorer) already has a stored result is skipped, never an error
        (`INSERT ... ON CONFLICT DO NOTHING` on the table's unique key): a resumed experiment
        racing a process still writing it stores each pair once, the first written.

        Raises ValueError (writing nothing) if any outcome is not a success: failed runs and
        their recovered scores must never reach the score storage.
        """
        outcomes = list(outcomes)
        failed = [o for o in outcomes if o.status != "success"]
        if failed:
            first = failed[0]
            raise ValueError(
                f"add_results accepts successful outcomes only; got {len(failed)} with status "
                f"{first.status!r} (first: item {first.item_id!r}, scorer {first.scorer_id!r})"
            )
        return self.add_rows(experiment_id, [_score_row(outcome) for outcome in outcomes])

    def add_rows(self, experiment_id: str, rows: Sequence[ResultRow]) -> int:
        """Bulk-insert successful runs given as pre-encoded rows (`core.run_results.ResultRow`,
        what a running experiment's writer hands over); returns how many were written, as
        `add_results` does (a pair already stored is skipped)."""
        keyed = [(experiment_id, *row) for row in rows]
        if self.engine.dialect.name == "postgresql":
            # Two writers of one experiment (a resume racing its old process) each wait for the
            # other's uncommitted keys: in one order for both, one waits and none deadlocks.
            keyed.sort(key=_row_key)
        self._settled.pop(experiment_id, None)
        with self._transaction("store the scorer results") as connection:
            return result_rows.insert_rows(connection, keyed)

    def stored_pairs(self, experiment_id: str, item_ids: Sequence[str]) -> set[tuple[str, str]]:
        """The (item id, scorer id) pairs of these items that have a stored result."""
        table = ScoreRow.__table__
        pairs: set[tuple[str, str]] = set()
        with self.engine.connect() as connection:
            for start in range(0, len(item_ids), _KEY_PAGE):
                query = select(table.c.item_id, table.c.scorer_id).where(
                    table.c.experiment_id == experiment_id,
                    table.c.item_id.in_(item_ids[start : start + _KEY_PAGE]),
                )
                pairs.update((item, scorer) for item, scorer in connection.execute(query))
        return pairs

    def experiment_results(
        self,
        experiment_id: str,
        *,
        scorer_id: str | None = None,
        with_result: bool = True,
        item_ids: Sequence[str] | None = None,
        limit: int | None = None,
    ) -> list[ScorerOutcome]:
        """The stored (successful) outcomes of an experiment, in the order they were written.

        `with_result=False` leaves out the full result JSON (a light table for large runs);
        `item_ids` keeps those of these items only (a page of a large experiment); `limit`
        the first that many.
        """
        table = ScoreRow.__table__
        columns: list[Any] = [c for c in table.c if with_result or c.name != "result"]
        if not with_result:
            # A NULL `result` column: a row without the key costs a KeyError per `.get`
            # (2 s over 100,000 rows).
            columns.append(null().label("result"))
        source: Any = table
        if with_result:
            # A result stored without its item's texts (`item_texts`) gets them back from the
            # item: the same result as it was run, whoever reads it (pages, exports, Compare).
            items = DatasetItemRow.__table__
            dataset = (
                select(ExperimentRow.__table__.c.dataset_id)
                .where(ExperimentRow.__table__.c.id == experiment_id)
                .scalar_subquery()
            )
            source = table.outerjoin(
                items,
                (items.c.dataset_id == dataset)
                & (items.c.item_id == table.c.item_id)
                & table.c.item_texts,
            )
            columns += [
                items.c.input.label("item_input"),
                items.c.output.label("item_output"),
                items.c.ground_truth.label("item_ground_truth"),
                items.c.item_metadata.label("item_metadata"),
            ]
        query = select(*columns).select_from(source).where(table.c.experiment_id == experiment_id)
        if scorer_id is not None:
            query = query.where(table.c.scorer_id == scorer_id)
        if item_ids is not None:
            query = query.where(table.c.item_id.in_(list(item_ids)))
        query = query.order_by(table.c.id)
        if limit is not None:
            query = query.limit(limit)
        with self.engine.connect() as connection:
            rows = connection.execute(query).all()
        return [_outcome(r._mapping) for r in rows]

    def result_count(self, experiment_id: str) -> int:
        """How many results are stored for an experiment."""
        query = select(func.count()).where(col(ScoreRow.experiment_id) == experiment_id)
        with self.engine.connect() as connection:
            return int(connection.execute(query).scalar_one())

    # ---- a large experiment read without loading it (core/storage/reads.py) ----

    def score_summaries(self, experiment_id: str) -> list[ScoreSummary]:
        """Per scorer: stored runs, numeric scores, mean, min and max (SQL GROUP BY)."""
        return [totals.summary() for totals in self._experiment_totals(experiment_id)[1]]

    def score_histograms(
        self, experiment_id: str, bins: int = reads.HISTOGRAM_BINS
    ) -> list[ScoreHistogram]:
        """Per scorer with a numeric score: its scores counted in `bins` equal bins over 0..1
        (widened to the lowest and highest score) by the database."""
        if isinstance(bins, bool) or not isinstance(bins, int) or bins < 1:
            raise ValueError(f"score_histograms needs 1 bin or more, got {bins!r}")
        summaries = [totals.summary() for totals in self._experiment_totals(experiment_id)[1]]
        with self.engine.connect() as connection:
            return reads.score_histograms(connection, experiment_id, summaries, bins)

    def judge_usage(self, experiment_id: str) -> list[ScorerUsage]:
        """Per scorer: its stored runs that called the judge, their judge calls, attempts,
        tokens and duration (SQL GROUP BY); the estimated cost is left for the service to
        fill."""
        model, found = self._experiment_totals(experiment_id)
        usages = [totals.scorer_usage(model) for totals in found]
        if not usages:
            return usages
        with self.engine.connect() as connection:  # each prompt step's, where runs keep it
            return step_usage.with_steps(connection, experiment_id, usages)

    def _experiment_totals(self, experiment_id: str) -> tuple[str | None, list[reads.ScorerTotals]]:
        """(the judge model, the per-scorer totals) of an experiment (none for an unknown)."""
        table = ExperimentRow.__table__
        with self.engine.connect() as connection:
            row = connection.execute(select(table).where(table.c.id == experiment_id)).first()
            if row is None:
                return None, []
            return row.judge_model, self._totals(connection, [row._mapping])[experiment_id]

    def _totals(self, connection: Any, rows: Sequence[Any]) -> dict[str, list[reads.ScorerTotals]]:
        """The per-scorer totals of each experiment row: one pass over the covering index per
        experiment, kept for a finished one until its row changes (a million results take a
        noticeable fraction of a second to sum, and a page asks on every rerun)."""
        found: dict[str, list[reads.ScorerTotals]] = {}
        for row in rows:
            key = _settled_key(row)
            kept = self._settled.get(row["id"])
            if key is not None and kept is not None and kept[0] == key:
                found[row["id"]] = kept[1]
                continue
            found[row["id"]] = reads.scorer_totals(connection, row["id"])
            if key is not None:
                self._settled[row["id"]] = (key, found[row["id"]])
        return found

    def result_page(
        self,
        experiment_id: str,
        query: ResultQuery,
        item_ids: Collection[str] | None = None,
    ) -> ResultPage:
        """A page of the experiment's item table, filtered, sorted and counted by the database
        (`query.failed_only` aside: failures are not stored, so the caller passes the items
        to consider as `item_ids`). Raises NotFoundError for an unknown experiment and
        ValueError naming a bad field of `query`; a page past the last gives the last."""
        reads.check_query(query)
        dataset_id, items, scorer_ids = self._dataset_of(experiment_id)
        with self.engine.connect() as connection:
            return reads.result_page(
                connection, experiment_id, dataset_id, items, scorer_ids, query, item_ids
            )

    def slice_summaries(self, experiment_id: str, column: str) -> list[SliceSummary]:
        """The experiment's stored results grouped by a metadata column's value, by the
        database (core/storage/slices.py); raises NotFoundError, ValueError for a column
        name the database cannot read."""
        dataset_id, _, scorer_ids = self._dataset_of(experiment_id)
        with self.engine.connect() as connection:
            return slices.slice_summaries(connection, experiment_id, dataset_id, scorer_ids, column)

    def metadata_values(
        self, dataset_id: str, column: str, item_ids: Sequence[str]
    ) -> dict[str, str]:
        """The `column` value (text; "" for none) of each given item of a dataset."""
        with self.engine.connect() as connection:
            return slices.item_values(connection, dataset_id, column, item_ids)

    def dataset_item(self, dataset_id: str, item_id: str) -> DatasetItem:
        """One item of a dataset by its id; raises NotFoundError."""
        table = DatasetItemRow.__table__
        query = _items_query(dataset_id, 0, 1).where(table.c.item_id == item_id)
        with self.engine.connect() as connection:
            found = _items(connection.execute(query))
        if not found:
            raise NotFoundError(f"No item {item_id!r} in dataset {dataset_id!r}")
        return found[0]

    def _dataset_of(self, experiment_id: str) -> tuple[str, int, list[str]]:
        """(dataset id, its item count, scorer ids) of an experiment; raises NotFoundError."""
        table = ExperimentRow.__table__
        query = select(table.c.dataset_id, table.c.total_items, table.c.scorer_ids).where(
            table.c.id == experiment_id
        )
        with self.engine.connect() as connection:
            found = connection.execute(query).first()
        if found is None:
            raise NotFoundError(f"No experiment with id {experiment_id!r}")
        return found.dataset_id, found.total_items, list(found.scorer_ids or [])

    # ---- pass/fail thresholds (core/storage/thresholds.py) ----

    def save_thresholds(
        self, experiment_id: str, bounds: Mapping[str, tuple[float | None, float | None]]
    ) -> None:
        """Replace the experiment's thresholds (scorer id -> (min, max)), unchecked (the
        service checks them)."""
        with self._transaction("save the thresholds") as connection:
            thresholds.save_thresholds(connection, experiment_id, bounds)

    def thresholds(self, experiment_id: str) -> dict[str, tuple[float | None, float | None]]:
        """The experiment's thresholds, scorer id -> (min, max)."""
        return thresholds.read_thresholds(self.engine, experiment_id)

    # ---- human reviews of scores (core/storage/reviews.py) ----

    def save_review(self, experiment_id: str, given: ReviewInput) -> Review:
        """Insert or update the review of (experiment, item, scorer, reviewer), unchecked (the
        service checks it against the experiment)."""
        with self._transaction("save the review") as connection:
            return reviews.save_review(connection, experiment_id, given)

    def reviews(self, experiment_id: str, item_ids: Collection[str] | None = None) -> list[Review]:
        """An experiment's reviews (of these items only, when given), oldest first."""
        return reviews.read_reviews(self.engine, experiment_id, item_ids)

    def review_count(self, experiment_ids: Collection[str]) -> int:
        """How many reviews these experiments hold."""
        return reviews.count_reviews(self.engine, experiment_ids) if experiment_ids else 0

    def scored_runs(self, experiment_id: str) -> tuple[list[str], list[ScoredRun]]:
        """(the item ids of its dataset in order, its stored runs' scores and reported
        confidences): what the review queue reads, without the results' JSON. Raises
        NotFoundError."""
        dataset_id = self._dataset_of(experiment_id)[0]
        runs = reviews.scored_runs(self.engine, experiment_id)
        return reviews.item_ids(self.engine, dataset_id), runs

    def delete_review(
        self, experiment_id: str, item_id: str, scorer_id: str, reviewer: str
    ) -> bool:
        """Remove one review; True when there was one."""
        with self._transaction("delete the review") as connection:
            return reviews.delete_review(connection, experiment_id, item_id, scorer_id, reviewer)

    # ---- plumbing ----

    def _transaction(self, what: str) -> _Transaction:
        return _Transaction(self, what)


class _Transaction:
    """`engine.begin()` whose database errors become StorageError naming what failed."""

    def __init__(self, store: Store, what: str) -> None:
        self._store = store
        self._what = what
        self._context: AbstractContextManager[Connection] | None = None

    def __enter__(self) -> Connection:
        try:
            self._context = self._store.engine.begin()
            return self._context.__enter__()
        except SQLAlchemyError as error:
            raise StorageError(f"Could not {self._what}: {_first_line(error)}") from error

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> Literal[False]:
        try:
            if self._context is not None:  # set by __enter__, which the with statement ran
                self._context.__exit__(kind, error, traceback)
        except SQLAlchemyError as failure:
            raise StorageError(f"Could not {self._what}: {_first_line(failure)}") from failure
        if isinstance(error, SQLAlchemyError):
            raise StorageError(f"Could not {self._what}: {_first_line(error)}") from error
        return False
