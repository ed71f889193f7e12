"""`PromptStep`: a scorer step answered by an LLM judge."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from core.judge.config import JudgeConfig
from core.judge.schema import OutputSchema

__all__ = ["PromptStep"]

PromptBuilder = Callable[[Any], "str | Awaitable[str]"]


@dataclass(frozen=True, slots=True)
class PromptStep:
    """A step whose result comes from a judge model.

    `create_prompt(ctx)` (sync or async) returns the prompt text. In preprocess and analyze the
    judge answers JSON matching `output_schema` and the step result is the validated value; in
    generate_score it answers `{"score": <number>}` and the result is the number; in
    generate_reason it answers free text and the result is that text. A step-level `judge`
    overrides the scorer's judge field by field.
    """

    description: str
    create_prompt: PromptBuilder
    output_schema: type[BaseModel] | Mapping[str, Any] | None = None
    judge: JudgeConfig | None = None
    schema: OutputSchema | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.description, str) or not self.description.strip():
            raise TypeError("PromptStep needs a non-empty description")
        if not callable(self.create_prompt):
            raise TypeError(
                "PromptStep.create_prompt must be a function taking ctx and returning the prompt "
                f"string, not {type(self.create_prompt).__name__}"
            )
        if self.judge is not None and not isinstance(self.judge, JudgeConfig):
            raise TypeError(
                f"PromptStep.judge must be a JudgeConfig, not {type(self.judge).__name__}"
            )
        schema = None if self.output_schema is None else OutputSchema(self.output_schema)
        object.__setattr__(self, "schema", schema)
