"""scorelab's scorer core: a Python port of Mastra's scorer system.

Everything public is importable from here. Importing `core` loads neither litellm (imported
when a judge is first called) nor Streamlit.
"""

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
