"""The scorer pipeline: `create_scorer`, the immutable `Scorer`, and what steps receive."""

from core.scoring.context import ScorerRun, StepContext, StepResults
from core.scoring.not_scorable import NotScorable, not_scorable
from core.scoring.scorer import RunParts, Scorer, StepInfo, create_scorer, described

__all__ = [
    "NotScorable",
    "RunParts",
    "Scorer",
    "ScorerRun",
    "StepContext",
    "StepInfo",
    "StepResults",
    "create_scorer",
    "described",
    "not_scorable",
]
