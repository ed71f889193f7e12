"""Output schemas of prompt steps: the JSON schema sent to the judge and the validation of
its answer."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from pydantic import BaseModel, ValidationError

from core.errors import MastraError

__all__ = ["JudgeOutputError", "OutputSchema", "parse_judge_json", "score_schema"]


class JudgeOutputError(MastraError):
    """The judge answered, but not with JSON matching the step's schema (a format error).

    The message never quotes the judge's answer: raw output stays in the judge record only.
    """


_FENCED = re.compile(r"^```[a-zA-Z0-9_-]*\s*\n?(.*?)\n?```$", re.DOTALL)


@dataclass(frozen=True, slots=True)
class OutputSchema:
    """A pydantic model class or a JSON-schema dict, ready to describe and to validate."""

    source: type[BaseModel] | Mapping[str, Any]
    json_schema: dict[str, Any] = field(init=False)
    _validator: Any = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if isinstance(self.source, type) and issubclass(self.source, BaseModel):
            object.__setattr__(self, "json_schema", self.source.model_json_schema())
            object.__setattr__(self, "_validator", None)
        elif isinstance(self.source, Mapping):
            import jsonschema

            schema = dict(self.source)
            validator_class = jsonschema.validators.validator_for(schema)
            try:
                validator_class.check_schema(schema)
            except jsonschema.SchemaError as error:
                raise TypeError(
                    f"output_schema is not a valid JSON schema: {error.message}"
                ) from None
            object.__setattr__(self, "json_schema", schema)
            object.__setattr__(self, "_validator", validator_class(schema))
        else:
            raise TypeError(
                "output_schema must be a pydantic model class or a JSON-schema dict, "
                f"not {type(self.source).__name__}"
            )

    @property
    def name(self) -> str:
        """A short name for the provider's structured-output request."""
        if isinstance(self.source, type):
            return self.source.__name__
        return str(self.json_schema.get("title") or "output")

    def validate(self, value: Any) -> Any:
        """The validated value as plain JSON-ready data, or a `JudgeOutputError`."""
        if value is None or value == {}:
            raise JudgeOutputError(
                id="JUDGE_OUTPUT_EMPTY", message="The judge returned an empty object"
            )
        if self._validator is None:
            model: type[BaseModel] = self.source  # type: ignore[assignment]
            try:
                return model.model_validate(value).model_dump(mode="json")
            except ValidationError as error:
                raise _mismatch(_pydantic_problems(error)) from None
        problems = sorted(self._validator.iter_errors(value), key=lambda e: list(e.path))
        if problems:
            raise _mismatch(_jsonschema_problems(problems))
        return value


@cache
def score_schema() -> OutputSchema:
    """What a generate_score prompt step's judge must answer (built on first use, so that
    `import core` does not load jsonschema)."""
    return OutputSchema(
        {
            "title": "score",
            "type": "object",
            "properties": {"score": {"type": "number"}},
            "required": ["score"],
        }
    )


def parse_judge_json(text: str) -> Any:
    """Parse the judge's text as JSON, accepting one Markdown code fence around it."""
    stripped = text.strip()
    fenced = _FENCED.match(stripped)
    if fenced:
        stripped = fenced.group(1).strip()
    if not stripped:
        raise JudgeOutputError(id="JUDGE_OUTPUT_EMPTY", message="The judge returned no text")
    try:
        return json.loads(stripped)
    except json.JSONDecodeError as error:
        raise JudgeOutputError(
            id="JUDGE_OUTPUT_INVALID_JSON",
            message=f"The judge's answer is not valid JSON ({error.msg} at line {error.lineno}, "
            f"column {error.colno})",
        ) from None


def _mismatch(problems: str) -> JudgeOutputError:
    return JudgeOutputError(
        id="JUDGE_OUTPUT_SCHEMA_MISMATCH",
        message=f"The judge's answer does not match the schema: {problems}",
    )


def _pydantic_problems(error: ValidationError) -> str:
    # Built from locations and messages only: pydantic's own text would quote the answer.
    return "; ".join(
        f"{'.'.join(str(part) for part in problem['loc']) or '(root)'}: {problem['msg']}"
        for problem in error.errors(include_input=False, include_url=False)
    )


def _jsonschema_problems(problems: list[Any]) -> str:
    return "; ".join(
        f"{'.'.join(str(part) for part in problem.path) or '(root)'}: "
        f"fails {problem.validator!r} {json.dumps(problem.validator_value, default=str)[:80]}"
        for problem in problems
    )
