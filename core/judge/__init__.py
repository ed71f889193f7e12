"""LLM-judge steps. Only this package talks to litellm, and only when a judge call happens."""

from core.judge.config import JudgeConfig
from core.judge.prompt_step import PromptStep
from core.judge.schema import JudgeOutputError

__all__ = ["JudgeConfig", "JudgeOutputError", "PromptStep"]
