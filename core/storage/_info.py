"""An experiment's record from its row (a Mapping of the row's columns, JSON decoded and
timestamps as datetimes): shared by the Store and the quick export's reader
(core/storage/export_reads.py), which imports no SQLAlchemy, so nothing here does."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypeAlias, overload

from core.records import ExperimentInfo, RateLimit, RunCounts, ScorerSpec
from core.run_results import JudgeUsage

_LIVE_STATUSES = ("pending", "running")
_USAGE_COLUMNS = (
    "input_tokens",
    "output_tokens",
    "total_tokens",
    "reasoning_tokens",
    "cached_input_tokens",
    "cache_creation_input_tokens",
)
"""The token columns of the experiment row (and, `failed_` before each, of its failed runs)."""

if TYPE_CHECKING:  # a type only: no SQLAlchemy is imported here
    from sqlalchemy.engine import RowMapping

_RowFields: TypeAlias = "RowMapping | Mapping[str, Any]"
"""A row read back (its `_mapping`), or a dict of its columns."""


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
        rate_limit=_rate_limit(row["judge_rpm"], row["judge_tpm"]),
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


def _rate_limit(rpm: int | None, tpm: int | None) -> RateLimit | None:
    """The stored judge rate limit (None: the provider's defaults)."""
    if rpm is None and tpm is None:
        return None
    return RateLimit(requests_per_minute=rpm, tokens_per_minute=tpm)


# The one mapping between `RunCounts` and the experiment row. The planned total is set when
# the experiment is created. The row's own counters are what its process last wrote (kept for
# readers of the table itself); what is shown of the successful runs is counted from their
# stored results, which a crash cannot leave behind, and only the failed runs, never stored,
# come from the row.
def _counts(row: _RowFields, successes: RunCounts) -> RunCounts:
    failed = RunCounts(
        failed=row["failed_runs"],
        usage=JudgeUsage(**{k: row[f"failed_{k}"] for k in _USAGE_COLUMNS}),
        judge_calls=row["failed_judge_calls"] or 0,
        judge_attempts=row["failed_judge_attempts"] or 0,
        cached_calls=row["failed_cached_calls"] or 0,
    )
    return RunCounts(total=row["total_runs"]) + successes + failed


@overload
def _utc(value: datetime) -> datetime: ...
@overload
def _utc(value: None) -> None: ...
def _utc(value: datetime | None) -> datetime | None:
    # SQLite gives naive datetimes back; they were written in UTC.
    if value is None or value.tzinfo is not None:
        return value
    return value.replace(tzinfo=UTC)
