"""Running scorers over many items."""

from core.experiments.run_evals import (
    DataItem,
    ItemOutcome,
    RunEvalsResult,
    RunEvalsSummary,
    run_evals,
    run_evals_sync,
)
from core.experiments.thresholds import GateResult, Threshold, ThresholdResult

__all__ = [
    "DataItem",
    "GateResult",
    "ItemOutcome",
    "RunEvalsResult",
    "RunEvalsSummary",
    "Threshold",
    "ThresholdResult",
    "run_evals",
    "run_evals_sync",
]
