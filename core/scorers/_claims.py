"""The claim-check judge scorers' one pipeline (faithfulness, hallucination, context recall):
list the claims of a text, judge each against the context, score the verdicts, explain.

Each scorer brings its prompts, its verdicts' shape and its score; the steps' order, their
schemas and the reason step are declared here once (docs/scorers.md).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from core.judge import JudgeConfig, PromptStep
from core.judge.prompt_step import PromptBuilder
from core.scorers._answers import Claims
from core.scorers._scores import round_to_two_decimals
from core.scoring import Scorer, StepContext, create_scorer

__all__ = ["claim_check_scorer", "share_of_yes"]


def share_of_yes(verdicts: Sequence[Mapping[str, Any]], scale: float = 1.0) -> float:
    """`#verdicts exactly "yes" / #verdicts * scale`, rounded; 0 without verdicts."""
    if not verdicts:
        return 0.0
    yes = sum(1 for item in verdicts if item["verdict"] == "yes")
    return round_to_two_decimals(yes / len(verdicts) * scale)


def claim_check_scorer(
    *,
    scorer_id: str,
    name: str,
    description: str,
    judge: JudgeConfig,
    claims: tuple[str, PromptBuilder],
    check: tuple[str, type[BaseModel], PromptBuilder],
    generate_score: Callable[[StepContext], float],
    reason: PromptStep,
) -> Scorer:
    """The scorer: `claims` (the step's description, its prompt) answered as `Claims`, then
    `check` (description, the verdicts' schema, prompt), `generate_score`, and `reason` (an
    `explain_step`)."""
    claims_description, claims_prompt = claims
    check_description, verdicts, check_prompt = check
    return (
        create_scorer(id=scorer_id, name=name, description=description, judge=judge)
        .preprocess(
            PromptStep(
                description=claims_description, output_schema=Claims, create_prompt=claims_prompt
            )
        )
        .analyze(
            PromptStep(
                description=check_description, output_schema=verdicts, create_prompt=check_prompt
            )
        )
        .generate_score(generate_score)
        .generate_reason(reason)
    )
