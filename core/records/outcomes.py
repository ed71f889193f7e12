"""The record of one scorer's run on one item: its result or its failure."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from core.record_base import Record
from core.run_results import JudgeExecutionFailure, JudgeUsage

__all__ = [
    "ScorerOutcome",
]


# ---- runs ----


class ScorerOutcome(Record):
    """What one scorer did on one item: a result, or a failure kept in memory only."""

    item_id: str
    """The item's id."""
    scorer_id: str
    """The scorer's id."""
    status: Literal["success", "failed"]
    """`success`: the run finished; `failed`: a step raised (never written to storage)."""
    score: float | None = None
    """The score (None for a failure, or a not-scorable run)."""
    reason: Any = None
    """The reason, when the scorer gives one."""
    result: dict[str, Any] | None = None
    """Success: the Mastra-format result (`ScorerRunResult.to_dict()`), judge record included."""
    error: str | None = None
    """Failure: the error message."""
    error_type: str | None = None
    """Failure: the error's class name."""
    recovered_score: float | None = None
    """Failure (`ScorerRunError`): the score computed before the failure, if any."""
    recovered_reason: Any = None
    """Failure (`ScorerRunError`): the reason computed before the failure, if any."""
    failed_step: str | None = None
    """Failure: the Mastra step that raised."""
    completed_steps: list[str] = Field(default_factory=list)
    """Failure: the steps that finished before it."""
    failed_execution: JudgeExecutionFailure | None = None
    """Failure: the failed judge execution of `failed_step`, if a judge call was attempted."""
    snapshot: dict[str, Any] | None = None
    """Failure: the error's result snapshot (`error.result.to_dict()`), if any."""
    duration_ms: int = 0
    """Wall time of the run."""
    usage: JudgeUsage = Field(default_factory=JudgeUsage)
    """Judge usage summed over the run's judge executions (successful and failed)."""
    judge_calls: int = 0
    """Judge model calls that returned (sum of `modelCallCount`)."""
    judge_attempts: int = 0
    """Judge attempts started (sum of `attemptCount`)."""
    cached_calls: int = 0
    """Judge executions answered from the judge cache (no request sent, no cost)."""
