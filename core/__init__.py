"""scorelab's scorer core: a Python port of Mastra's scorer system.

Everything public is importable from here, each name imported on first use (PEP 562): importing
`core`, or any module of it such as `core.records`, loads neither the engine nor the scorers
until one of their names is asked for, so the `scorelab` commands that run no scorer start
quickly (docs/architecture.md). Importing `core` loads neither litellm (imported when a judge
is first called) nor Streamlit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from core._lazy import lazy_import

if TYPE_CHECKING:
    from core.errors import MastraError, ScorerConfigError, ScorerRunError
    from core.experiments import (
        DataItem,
        GateResult,
        ItemOutcome,
        RunEvalsResult,
        RunEvalsSummary,
        Threshold,
        ThresholdResult,
        run_evals,
        run_evals_sync,
    )
    from core.judge import JudgeConfig, JudgeOutputError, PromptStep
    from core.record_base import StepName
    from core.run_results import (
        ErrorSummary,
        JudgeCost,
        JudgeExecution,
        JudgeExecutionFailure,
        JudgeExecutionSuccess,
        JudgeStepResult,
        JudgeUsage,
        NotScorableInfo,
        ScorerRunResult,
    )
    from core.scoring import (
        NotScorable,
        Scorer,
        ScorerRun,
        StepContext,
        StepInfo,
        StepResults,
        create_scorer,
        not_scorable,
    )

__all__ = [
    "DataItem",
    "ErrorSummary",
    "GateResult",
    "ItemOutcome",
    "JudgeConfig",
    "JudgeCost",
    "JudgeExecution",
    "JudgeExecutionFailure",
    "JudgeExecutionSuccess",
    "JudgeOutputError",
    "JudgeStepResult",
    "JudgeUsage",
    "MastraError",
    "NotScorable",
    "NotScorableInfo",
    "PromptStep",
    "RunEvalsResult",
    "RunEvalsSummary",
    "Scorer",
    "ScorerConfigError",
    "ScorerRun",
    "ScorerRunError",
    "ScorerRunResult",
    "StepContext",
    "StepInfo",
    "StepName",
    "StepResults",
    "Threshold",
    "ThresholdResult",
    "create_scorer",
    "not_scorable",
    "run_evals",
    "run_evals_sync",
]

_HOMES: dict[str, str] = {
    "DataItem": "core.experiments",
    "ErrorSummary": "core.run_results",
    "GateResult": "core.experiments",
    "ItemOutcome": "core.experiments",
    "JudgeConfig": "core.judge",
    "JudgeCost": "core.run_results",
    "JudgeExecution": "core.run_results",
    "JudgeExecutionFailure": "core.run_results",
    "JudgeExecutionSuccess": "core.run_results",
    "JudgeOutputError": "core.judge",
    "JudgeStepResult": "core.run_results",
    "JudgeUsage": "core.run_results",
    "MastraError": "core.errors",
    "NotScorable": "core.scoring",
    "NotScorableInfo": "core.run_results",
    "PromptStep": "core.judge",
    "RunEvalsResult": "core.experiments",
    "RunEvalsSummary": "core.experiments",
    "Scorer": "core.scoring",
    "ScorerConfigError": "core.errors",
    "ScorerRun": "core.scoring",
    "ScorerRunError": "core.errors",
    "ScorerRunResult": "core.run_results",
    "StepContext": "core.scoring",
    "StepInfo": "core.scoring",
    "StepName": "core.record_base",
    "StepResults": "core.scoring",
    "Threshold": "core.experiments",
    "ThresholdResult": "core.experiments",
    "create_scorer": "core.scoring",
    "not_scorable": "core.scoring",
    "run_evals": "core.experiments",
    "run_evals_sync": "core.experiments",
}
"""Each public name -> the module it comes from, imported when the name is first asked for."""


def __getattr__(name: str) -> Any:
    """A public name, imported from its module on first use (then kept in this module)."""
    return lazy_import(__name__, _HOMES, globals(), name)
