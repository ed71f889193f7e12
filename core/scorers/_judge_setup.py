"""The judge of an LLM-judge scorer: a litellm model string or a `JudgeConfig`, with the
scorer's own instructions (its judge persona) filled in when none were given."""

from __future__ import annotations

from core.errors import ScorerConfigError
from core.judge import JudgeConfig

__all__ = ["judge_for"]


def judge_for(model: str | JudgeConfig, instructions: str) -> JudgeConfig:
    """The scorer's judge: a model string gets the scorer's instructions; a `JudgeConfig`
    keeps its own instructions when it has some, else gets the scorer's."""
    if isinstance(model, str):
        if not model.strip():
            raise ScorerConfigError(
                id="PREBUILT_SCORER_MISSING_MODEL",
                message="model must be a litellm model string (e.g. 'openai/gpt-4o-mini') "
                "or a JudgeConfig; got an empty string",
            )
        return JudgeConfig(model=model, instructions=instructions)
    if isinstance(model, JudgeConfig):
        if model.instructions:
            return model
        return model.model_copy(update={"instructions": instructions})
    raise ScorerConfigError(
        id="PREBUILT_SCORER_MISSING_MODEL",
        message="model must be a litellm model string or a JudgeConfig, "
        f"not {type(model).__name__}",
    )
