"""The store's rows turned into records and back: datasets, experiments, counts, results."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, TypeAlias, TypeVar, overload

from sqlalchemy import (
    select,
)
from sqlalchemy.engine import RowMapping

from core.records import (
    ColumnMapping,
    DatasetInfo,
    DatasetItem,
    ExperimentInfo,
    RunCounts,
    ScorerOutcome,
    ScorerSpec,
)
from core.run_results import JudgeUsage
from core.storage import reads
from core.storage.tables import DatasetItemRow

_LIVE_STATUSES = ("pending", "running")
_RESULT_KEY = ("experiment_id", "item_id", "scorer_id")
"""The unique key of `scorer_results`: one stored result per (experiment, item, scorer)."""
_KEY_PAGE = 500
"""Item ids per `IN (...)` query (well below SQLite's limit on bound parameters)."""
_INSERT_BATCH = 5_000
_ITEM_PAGE = 2_000
"""Items read per query by `iter_dataset_items`."""
_USAGE_COLUMNS = (
    "input_tokens",
    "output_tokens",
    "total_tokens",
    "reasoning_tokens",
    "cached_input_tokens",
    "cache_creation_input_tokens",
)


# ---- rows <-> records ----

_RowFields: TypeAlias = RowMapping | Mapping[str, Any]
"""A row read back (its `_mapping`), or the dict a row was written from."""


def _dataset_info(row: _RowFields) -> DatasetInfo:
    return DatasetInfo(
        id=row["id"],
        name=row["name"],
        file_name=row["file_name"],
        format=row["format"],
        fingerprint=row["fingerprint"],
        item_count=row["item_count"],
        columns=row["columns"] or [],
        mapping=ColumnMapping.model_validate(row["mapping"]),
        created_at=_utc(row["created_at"]),
    )


def _experiment_info(
    row: _RowFields, scores: dict[str, float], successes: RunCounts, stale_before: datetime
) -> ExperimentInfo:
    """The record of a row. A live status with no heartbeat since `stale_before` is reported as
    `interrupted` (the row itself is left alone: should the process come back, its next
    heartbeat makes it running again)."""
    status, finished_at = row["status"], _utc(row["finished_at"])
    if status in _LIVE_STATUSES:
        # Rows from before heartbeats have none: their start (or creation) is the last sign.
        seen = _utc(row["heartbeat_at"] or row["started_at"] or row["created_at"])
        if seen is not None and seen < stale_before:
            status, finished_at = "interrupted", seen
    return ExperimentInfo(
        id=row["id"],
        name=row["name"],
        dataset_id=row["dataset_id"],
        dataset_name=row["dataset_name"],
        dataset_fingerprint=row["dataset_fingerprint"],
        scorers=[ScorerSpec.model_validate(s) for s in row["scorers"] or []],
        scorer_ids=row["scorer_ids"] or [],
        judge_model=row["judge_model"],
        api_base=row["api_base"],
        judge_settings=row["judge_settings"] or {},
        concurrency=row["concurrency"],
        cache=bool(row["judge_cache"]),
        max_cost=row["max_cost"],
        status=status,
        total_items=row["total_items"],
        counts=_counts(row, successes),
        scores=scores,
        error=row["error"],
        created_at=_utc(row["created_at"]),
        started_at=_utc(row["started_at"]),
        finished_at=finished_at,
        note=row.get("note"),
        tags=row.get("tags") or [],
    )


# The one mapping between `RunCounts` and the experiment row. The planned total is set when
# the experiment is created. The row's own counters are what its process last wrote (kept for
# readers of the table itself); what is shown of the successful runs is counted from their
# stored results, which a crash cannot leave behind, and only the failed runs, never stored,
# come from the row.


def _stored_counts(totals: reads.ScorerTotals) -> RunCounts:
    return RunCounts(
        succeeded=totals.count,
        usage=totals.usage,
        judge_calls=totals.judge_calls,
        judge_attempts=totals.judge_attempts,
        cached_calls=totals.cached_calls,
    )


def _settled_key(row: _RowFields) -> tuple[Any, ...] | None:
    """What identifies the stored results of a finished experiment (None while it may still
    get results): its status, end and counters, which any later write to it changes."""
    if row["status"] in _LIVE_STATUSES:
        return None
    return (row["status"], row["finished_at"], row["done_runs"], row["succeeded_runs"])


def _counts(row: _RowFields, successes: RunCounts) -> RunCounts:
    failed = RunCounts(
        failed=row["failed_runs"],
        usage=JudgeUsage(**{k: row[f"failed_{k}"] for k in _USAGE_COLUMNS}),
        judge_calls=row["failed_judge_calls"] or 0,
        judge_attempts=row["failed_judge_attempts"] or 0,
        cached_calls=row["failed_cached_calls"] or 0,
    )
    return RunCounts(total=row["total_runs"]) + successes + failed


def _counts_values(counts: RunCounts, failed: RunCounts | None) -> dict[str, Any]:
    failed = failed or RunCounts()
    values = {
        "done_runs": counts.done,
        "succeeded_runs": counts.succeeded,
        "failed_runs": counts.failed,
        "judge_calls": counts.judge_calls,
        "judge_attempts": counts.judge_attempts,
        "failed_judge_calls": failed.judge_calls,
        "failed_judge_attempts": failed.judge_attempts,
        "cached_calls": counts.cached_calls,
        "failed_cached_calls": failed.cached_calls,
    }
    values.update({k: getattr(counts.usage, k) for k in _USAGE_COLUMNS})
    values.update({f"failed_{k}": getattr(failed.usage, k) for k in _USAGE_COLUMNS})
    return values


def _score_row(experiment_id: str, outcome: ScorerOutcome) -> dict[str, Any]:
    row = {
        "experiment_id": experiment_id,
        "item_id": outcome.item_id,
        "scorer_id": outcome.scorer_id,
        "score": outcome.score,
        "reason": outcome.reason,
        "result": outcome.result,
        "duration_ms": outcome.duration_ms,
        "judge_calls": outcome.judge_calls,
        "judge_attempts": outcome.judge_attempts,
        "cached_calls": outcome.cached_calls,
    }
    row.update({k: getattr(outcome.usage, k) for k in _USAGE_COLUMNS})
    return row


def _outcome(row: _RowFields) -> ScorerOutcome:
    return ScorerOutcome(
        item_id=row["item_id"],
        scorer_id=row["scorer_id"],
        status="success",
        score=row["score"],
        reason=row["reason"],
        result=row.get("result"),
        duration_ms=row["duration_ms"],
        usage=JudgeUsage(**{k: row[k] for k in _USAGE_COLUMNS}),
        judge_calls=row["judge_calls"],
        judge_attempts=row["judge_attempts"],
        cached_calls=row.get("cached_calls") or 0,
    )


_Row = TypeVar("_Row")


def _batches(rows: Iterable[_Row]) -> Iterator[list[_Row]]:
    """`rows` in lists of `_INSERT_BATCH` (consumed as they come)."""
    batch: list[_Row] = []
    for row in rows:
        batch.append(row)
        if len(batch) >= _INSERT_BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


def _flat(items: Iterable[DatasetItem] | Iterable[Sequence[DatasetItem]]) -> Iterator[DatasetItem]:
    """Items given one by one or in chunks, one by one."""
    for entry in items:
        if isinstance(entry, DatasetItem):
            yield entry
        else:
            yield from entry


def _item_rows(dataset_id: str, first: int, items: list[DatasetItem]) -> list[dict[str, Any]]:
    return [
        {
            "dataset_id": dataset_id,
            "position": position,
            "item_id": item.id,
            "input": item.input,
            "output": item.output,
            "ground_truth": item.ground_truth,
            "item_metadata": item.metadata,
        }
        for position, item in enumerate(items, start=first)
    ]


def _items_query(dataset_id: str, first: int, limit: int | None) -> Any:
    """Items from position `first` on, in order (`limit` of them, when given)."""
    table = DatasetItemRow.__table__
    query = (
        select(
            table.c.position,
            table.c.item_id,
            table.c.input,
            table.c.output,
            table.c.ground_truth,
            table.c.item_metadata,
        )
        .where(table.c.dataset_id == dataset_id, table.c.position >= first)
        .order_by(table.c.position)
    )
    return query if limit is None else query.limit(limit)


def _items(rows: Iterable[Sequence[Any]]) -> list[DatasetItem]:
    return [
        DatasetItem.model_construct(
            id=item_id, input=item_input, output=output, ground_truth=truth, metadata=metadata or {}
        )
        for _, item_id, item_input, output, truth, metadata in rows
    ]


def _now() -> datetime:
    return datetime.now(UTC)


@overload
def _utc(value: datetime) -> datetime: ...
@overload
def _utc(value: None) -> None: ...
def _utc(value: datetime | None) -> datetime | None:
    # SQLite gives naive datetimes back; they were written in UTC.
    if value is None or value.tzinfo is not None:
        return value
    return value.replace(tzinfo=UTC)


def _first_line(error: BaseException) -> str:
    text = str(getattr(error, "orig", None) or error)
    return text.strip().splitlines()[0] if text.strip() else type(error).__name__
