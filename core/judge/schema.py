"""Output schemas of prompt steps: the JSON schema sent to the judge and the validation of
its answer.

Validation is as strict as Mastra's (zod on `JSON.parse`): NaN, Infinity and number literals
that overflow a double are not JSON, and a pydantic schema never coerces (`"10"` is not an int,
`"yes"` is not a bool). Every rejection is a `JudgeOutputError`, which takes the step's one
structured-output fallback.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any, cast

from pydantic import BaseModel, ValidationError

from core.errors import MastraError

if TYPE_CHECKING:  # jsonschema is imported on first use, to keep `import core` light
    from jsonschema.protocols import Validator

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
    _validator: Validator | None = field(init=False, repr=False)
    """The JSON-schema validator; None for a model class."""
    compact_json: str = field(init=False, repr=False, compare=False)
    """`json_schema` as compact JSON text (what goes into a prompt), written once."""
    _accepts: Callable[[Any], bool] | None = field(default=None, repr=False, compare=False)
    """A quick test that passes only answers the validator would accept as they are (the
    score schema's); whatever it does not pass goes through the validator, for its verdict and
    its message."""

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
        compact = json.dumps(self.json_schema, separators=(",", ":"))
        object.__setattr__(self, "compact_json", compact)

    @property
    def name(self) -> str:
        """A short name for the provider's structured-output request."""
        if isinstance(self.source, type):
            return self.source.__name__
        return str(self.json_schema.get("title") or "output")

    def validate(self, value: Any) -> Any:
        """The validated value as plain JSON-ready data, or a `JudgeOutputError`."""
        accepts = self._accepts
        if accepts is not None and accepts(value):
            return value
        if value is None or value == {}:
            raise JudgeOutputError(
                id="JUDGE_OUTPUT_EMPTY", message="The judge returned an empty object"
            )
        if self._validator is None:
            model = cast("type[BaseModel]", self.source)  # no validator: a model class
            # Strict JSON mode, on the answer as JSON text: no string->number or "yes"->bool
            # coercion, yet arrays still fill tuple fields and ISO strings date fields (strict
            # Python mode would refuse those).
            text = json.dumps(_js_numbers(value), allow_nan=False)
            try:
                return model.model_validate_json(text, strict=True).model_dump(mode="json")
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
        },
        _accepts=_is_score_answer,
    )


def _is_score_answer(value: Any) -> bool:
    """An object with a `score` number (JSON's number: int or float, never a boolean), which is
    all the score schema asks: the validator need not walk it (one per judge call)."""
    return type(value) is dict and type(value.get("score")) in (int, float)


def parse_judge_json(text: str) -> Any:
    """Parse the judge's text as JSON, accepting one Markdown code fence around it."""
    stripped = text.strip()
    fenced = _FENCED.match(stripped)
    if fenced:
        stripped = fenced.group(1).strip()
    if not stripped:
        raise JudgeOutputError(id="JUDGE_OUTPUT_EMPTY", message="The judge returned no text")
    try:
        return json.loads(
            stripped,
            parse_constant=_refuse_constant,
            parse_float=_finite_float,
            parse_int=_finite_int,
        )
    except json.JSONDecodeError as error:
        raise _invalid_json(f"{error.msg} at line {error.lineno}, column {error.colno}") from None


def _invalid_json(problem: str) -> JudgeOutputError:
    return JudgeOutputError(
        id="JUDGE_OUTPUT_INVALID_JSON",
        message=f"The judge's answer is not valid JSON ({problem})",
    )


def _refuse_constant(name: str) -> Any:
    # Python's json accepts NaN, Infinity and -Infinity; JSON (and JSON.parse) does not.
    raise _invalid_json(f"{name} is not a JSON value")


def _finite_float(literal: str) -> float:
    value = float(literal)
    if not math.isfinite(value):  # 1e400 parses to inf, where JSON.parse gives Infinity
        raise _invalid_json("a number overflows a double")
    return value


def _finite_int(literal: str) -> int:
    value = int(literal)
    try:
        float(value)
    except OverflowError:  # a 400-digit integer is Infinity for JSON.parse, and breaks means
        raise _invalid_json("a number overflows a double") from None
    return value


_EXACT_INT = 2**53


def _js_numbers(value: Any) -> Any:
    """`value` with integral floats as ints, as `JSON.parse` sees them (`10.0` is `10`), so that
    strict validation still accepts `10.0` for an int field, like zod's `z.number().int()`."""
    if isinstance(value, float) and value.is_integer() and abs(value) <= _EXACT_INT:
        return int(value)
    if isinstance(value, dict):
        return {key: _js_numbers(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_js_numbers(item) for item in value]
    return value


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
