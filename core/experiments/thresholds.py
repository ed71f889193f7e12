"""Thresholds and gates of `run_evals`: validation, pass/fail, and the verdict."""

from __future__ import annotations

import math
from typing import Any, Literal

from core.errors import MastraError
from core.record_base import Record

__all__ = [
    "GateResult",
    "Threshold",
    "ThresholdResult",
    "Verdict",
    "check_threshold",
    "failures_within",
    "parse_max_failure_rate",
    "parse_threshold",
    "verdict",
]

Verdict = Literal["passed", "scored", "failed"]


class Threshold(Record):
    """Inclusive bounds on a scorer's mean; a plain number given by the user is a minimum."""

    min: float | None = None
    """The mean must be at least this."""
    max: float | None = None
    """The mean must be at most this."""

    def passes(self, average: float | None) -> bool:
        """Whether `average` is within the bounds (None, no numeric score, never passes)."""
        if average is None:
            return False
        if self.min is not None and average < self.min:
            return False
        return not (self.max is not None and average > self.max)


class ThresholdResult(Record):
    """How a scorer's mean compared with its threshold, and how many of its runs failed."""

    id: str
    """The scorer id."""
    passed: bool
    """Whether the mean is within the threshold and the failed runs within the allowed rate:
    a mean leaves failed runs out, so it alone cannot pass a scorer whose runs failed."""
    average_score: float | None
    """The mean over numeric scores, or None when there were none."""
    threshold: Threshold
    """The threshold checked."""
    failed_runs: int = 0
    """Runs of this scorer that failed (they are not in the mean)."""
    total_runs: int = 0
    """Runs of this scorer planned (one per item)."""


def failures_within(failed: int, total: int, max_failure_rate: float) -> bool:
    """Whether `failed` of `total` runs is at most the allowed share (0: no failure at all)."""
    return failed == 0 or (total > 0 and failed <= max_failure_rate * total + 1e-9)


def check_threshold(
    scorer_id: str,
    threshold: Threshold,
    average: float | None,
    *,
    failed_runs: int = 0,
    total_runs: int = 0,
    max_failure_rate: float = 0.0,
) -> ThresholdResult:
    """The one pass/fail rule of thresholds, shared by `run_evals` and `scorelab run`."""
    return ThresholdResult(
        id=scorer_id,
        passed=threshold.passes(average)
        and failures_within(failed_runs, total_runs, max_failure_rate),
        average_score=average,
        threshold=threshold,
        failed_runs=failed_runs,
        total_runs=total_runs,
    )


def parse_max_failure_rate(value: Any) -> float:
    """The allowed share of failed runs, a number in [0, 1]; raises `INVALID_MAX_FAILURE_RATE`."""
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or not 0 <= value <= 1
    ):
        raise MastraError(
            id="INVALID_MAX_FAILURE_RATE",
            message=f"max_failure_rate must be a number between 0 and 1 (a share of the runs, "
            f"0.05 for 5%), got {value!r}",
        )
    return float(value)


class GateResult(Record):
    """A gate: a scorer whose mean must be 1.0."""

    id: str
    """The gate scorer id."""
    passed: bool
    """Whether the mean reached 1.0."""
    score: float
    """The gate's mean (0 when it never produced a score)."""


def parse_threshold(scorer_id: str, value: Any) -> Threshold:
    """A `Threshold` from a number (a minimum) or `{"min": .., "max": ..}`; raises
    `INVALID_SCORER_THRESHOLD` on anything else."""
    if isinstance(value, Threshold):
        bounds = {"min": value.min, "max": value.max}
    elif isinstance(value, dict):
        unknown = set(value) - {"min", "max"}
        if unknown or not value:
            _invalid(scorer_id, "a threshold dict takes the keys 'min' and/or 'max' only")
        bounds = {"min": value.get("min"), "max": value.get("max")}
    else:
        bounds = {"min": value, "max": None}
    for key, bound in bounds.items():
        if bound is None:
            continue
        if (
            isinstance(bound, bool)
            or not isinstance(bound, int | float)
            or not math.isfinite(bound)
        ):
            _invalid(
                scorer_id, f"threshold {key} must be a finite number between 0 and 1, got {bound!r}"
            )
        if not 0 <= bound <= 1:
            _invalid(
                scorer_id, f"threshold {key} must be a finite number between 0 and 1, got {bound!r}"
            )
    if bounds["min"] is not None and bounds["max"] is not None and bounds["min"] > bounds["max"]:
        _invalid(scorer_id, f"threshold min {bounds['min']} is greater than max {bounds['max']}")
    return Threshold(**bounds)


def _invalid(scorer_id: str, problem: str) -> None:
    raise MastraError(
        id="INVALID_SCORER_THRESHOLD",
        message=f"Invalid threshold for scorer {scorer_id!r}: {problem}",
        details={"scorerId": scorer_id},
    )


def verdict(
    gates: list[GateResult], thresholds: list[ThresholdResult], *, failures_ok: bool = True
) -> Verdict:
    """`failed` if a gate failed or more runs failed than allowed, else `scored` if a threshold
    failed, else `passed`."""
    if not failures_ok or any(not gate.passed for gate in gates):
        return "failed"
    if any(not threshold.passed for threshold in thresholds):
        return "scored"
    return "passed"
