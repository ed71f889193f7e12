"""The store's experiments: recorded, progressing, finished, reopened, read, thresholds, deleted."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import Any

from sqlalchemy import (
    ColumnElement,
    delete,
    func,
    insert,
    or_,
    select,
    update,
)
from sqlmodel import col

from core.records import (
    ExperimentInfo,
    ExperimentStatus,
    RateLimit,
    RunCounts,
    ScorerSpec,
)
from core.storage import reads, result_rows, reviews, step_usage, thresholds, totals
from core.storage._info import _LIVE_STATUSES, _USAGE_COLUMNS, _experiment_info, _utc
from core.storage._rows import _counts_values, _now, _settled_key, _stored_counts
from core.storage.database import Database, NotFoundError, StorageError
from core.storage.datasets import DatasetStore
from core.storage.tables import DatasetRow, ExperimentRow, ScoreRow

_log = logging.getLogger("scorelab.storage")

__all__ = ["ExperimentStore"]


class ExperimentStore:
    """`store.experiments`: the experiments' rows and what is kept with them."""

    def __init__(self, database: Database, datasets: DatasetStore) -> None:
        self._db = database
        self._datasets = datasets

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
        rate_limit: RateLimit | None = None,
    ) -> ExperimentInfo:
        """Record a new experiment (status `pending`) over a stored dataset (`cache`: the
        judge cache on; `max_cost`: its spend cap in USD, if any; `rate_limit`: its judge rate
        limit, if it set one)."""
        dataset = self._datasets.get_dataset(dataset_id)
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
            **_rate_limit_values(rate_limit),
            "status": "pending",
            "total_items": dataset.item_count,
            "total_runs": dataset.item_count * len(scorer_ids),
            "created_at": _now(),
            "heartbeat_at": _now(),  # its worker starts at once; a crash before is a stale row
        }
        with self._db.transaction("create the experiment") as connection:
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

    def set_rate_limit(self, experiment_id: str, rate_limit: RateLimit | None) -> None:
        """Store the experiment's judge rate limit (None: the provider's defaults), e.g. the
        one a resume was given."""
        self._update_experiment(experiment_id, _rate_limit_values(rate_limit), start=False)

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
        stored = self._keep_totals(experiment_id)
        self._db.refresh_statistics("scorer_results", stored)

    def _keep_totals(self, experiment_id: str) -> int:
        """Sum a finished experiment's totals and histograms once and keep them
        (`core/storage/totals.py`): every later first render of its pages, in any process,
        reads them instead of a pass over its results. Best effort: a failure to keep them
        leaves the pages summing as before, and never fails the finish. Returns the results
        stored (0 when not summed)."""
        table = ExperimentRow.__table__
        try:
            with self._db.transaction("keep the experiment's totals") as connection:
                row = connection.execute(select(table).where(table.c.id == experiment_id)).first()
                key = None if row is None else _settled_key(row._mapping)
                if key is None:
                    return 0
                found = reads.scorer_totals(connection, experiment_id)
                summaries = [one.summary() for one in found]
                bins = reads.HISTOGRAM_BINS
                shown = reads.score_histograms(connection, experiment_id, summaries, bins)
                steps = step_usage.step_sums(connection, experiment_id)
                totals.keep(connection, experiment_id, key, found, shown, bins, steps)
            self._db.settled[experiment_id] = (key, found)
        except StorageError as error:
            _log.warning("experiment %s: totals not kept (%s)", experiment_id, error)
            return 0
        return sum(one.count for one in found)

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
            stale_before = _now() - timedelta(seconds=self._db.stale_after_s)
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
        with self._db.transaction("reopen the experiment") as connection:
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
        with self._db.transaction("update the experiment") as connection:
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
        with self._db.engine.connect() as connection:
            rows = connection.execute(query).all()
            totals = self._db.totals(connection, [r._mapping for r in rows])
        scores: dict[str, dict[str, float]] = {}
        successes: dict[str, RunCounts] = {}
        for found in totals.values():
            for scorer in found:
                if scorer.mean is not None:
                    scores.setdefault(scorer.experiment_id, {})[scorer.scorer_id] = scorer.mean
                before = successes.get(scorer.experiment_id, RunCounts())
                successes[scorer.experiment_id] = before + _stored_counts(scorer)
        stale_before = _now() - timedelta(seconds=self._db.stale_after_s)
        return [
            _experiment_info(
                r._mapping, scores.get(r.id, {}), successes.get(r.id, RunCounts()), stale_before
            )
            for r in rows
        ]

    def delete_experiment(self, experiment_id: str) -> None:
        """Remove an experiment, its results and its reviews; refused (ExperimentConfigError)
        while some process runs it (a fresh heartbeat)."""
        with self._db.transaction("delete the experiment") as connection:
            result_rows.lock_experiments(connection, ExperimentRow.__table__.c.id == experiment_id)
            self._db.refuse_live_runs(connection, "experiment", experiment_id=experiment_id)
            self._db.settled.pop(experiment_id, None)
            reviews.delete_reviews_of(connection, [experiment_id])
            thresholds.delete_thresholds_of(connection, [experiment_id])
            totals.forget(connection, [experiment_id])
            connection.execute(delete(ScoreRow).where(col(ScoreRow.experiment_id) == experiment_id))
            connection.execute(delete(ExperimentRow).where(col(ExperimentRow.id) == experiment_id))

    def dataset_of(self, experiment_id: str) -> tuple[str, int, list[str]]:
        """(dataset id, its item count, scorer ids) of an experiment; raises NotFoundError."""
        table = ExperimentRow.__table__
        query = select(table.c.dataset_id, table.c.total_items, table.c.scorer_ids).where(
            table.c.id == experiment_id
        )
        with self._db.engine.connect() as connection:
            found = connection.execute(query).first()
        if found is None:
            raise NotFoundError(f"No experiment with id {experiment_id!r}")
        return found.dataset_id, found.total_items, list(found.scorer_ids or [])

    def save_thresholds(
        self, experiment_id: str, bounds: Mapping[str, tuple[float | None, float | None]]
    ) -> None:
        """Replace the experiment's thresholds (scorer id -> (min, max)), unchecked (the
        service checks them)."""
        with self._db.transaction("save the thresholds") as connection:
            thresholds.save_thresholds(connection, experiment_id, bounds)

    def thresholds(self, experiment_id: str) -> dict[str, tuple[float | None, float | None]]:
        """The experiment's thresholds, scorer id -> (min, max)."""
        return thresholds.read_thresholds(self._db.engine, experiment_id)

    def live_experiments(
        self, *, dataset_id: str | None = None, experiment_id: str | None = None
    ) -> list[tuple[str, str]]:
        """(id, name) of the dataset's experiments (or of the one experiment) that some
        process runs now: `running` with a heartbeat fresher than `stale_after_s`,
        whichever process it is (this one, a CLI, a second dashboard, a team server)."""
        with self._db.engine.connect() as connection:
            return self._db.live(connection, self._db.which(dataset_id, experiment_id))

    def experiment_ids_of(self, dataset_id: str) -> list[str]:
        """The ids of the experiments over a dataset."""
        table = ExperimentRow.__table__
        with self._db.engine.connect() as connection:
            rows = connection.execute(select(table.c.id).where(table.c.dataset_id == dataset_id))
            return [row.id for row in rows]


def _rate_limit_values(rate_limit: RateLimit | None) -> dict[str, int | None]:
    """The experiment row's columns of a judge rate limit."""
    if rate_limit is None:
        return {"judge_rpm": None, "judge_tpm": None}
    return {
        "judge_rpm": rate_limit.requests_per_minute,
        "judge_tpm": rate_limit.tokens_per_minute,
    }
