"""How a prebuilt scorer declares its options: one frozen pydantic model per scorer.

Each field is one option: its annotation (with `Literal` for a choice), its default (none
when the option is required) and its docstring (what it does, for forms and the CLI). The
catalog, the CLI help and the dashboard's forms are all derived from that model (see
`_option_info.py`), so an option is written down once. `OptionType` marks a field whose
annotation does not say which form input fits it (a regex, a list of dicts given as JSON).

Keys may be snake_case or Mastra's camelCase. `build_options` merges a partial options object
with the defaults, field by field (Mastra replaces the defaults wholesale, which turns some
scores into NaN: docs/scorers.md, "Departures from Mastra").
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from core.errors import ScorerConfigError

__all__ = [
    "OptionType",
    "Scale",
    "ScorerOptions",
    "build_options",
    "call_maybe_async",
    "field_names",
]

Options = TypeVar("Options", bound="ScorerOptions")


@dataclass(frozen=True, slots=True)
class OptionType:
    """`Annotated` marker: the type label forms use for a field whose annotation does not
    say it ("regex" for a pattern string, "list[dict]" for JSON records, ...)."""

    label: str


class ScorerOptions(BaseModel):
    """Base of the option models: frozen, unknown keys refused, snake_case or camelCase keys,
    field docstrings kept as descriptions. Without fields, it is "no options"."""

    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        arbitrary_types_allowed=True,
        use_attribute_docstrings=True,
    )


Scale = Annotated[float, Field(gt=0, description="Multiplies the 0-1 score.")]
"""The `scale` option of the LLM-judge scorers (give it a default: `scale: Scale = 1.0`)."""


def field_names(model: type[BaseModel]) -> dict[str, str]:
    """Every accepted key (name or alias) -> the field name."""
    names: dict[str, str] = {}
    for name, info in model.model_fields.items():
        names[name] = name
        if info.alias:
            names[info.alias] = name
    return names


def _by_name(model: type[BaseModel], values: Mapping[str, Any]) -> dict[str, Any]:
    names = field_names(model)
    return {names.get(key, key): value for key, value in values.items()}


def build_options(
    model: type[Options],
    options: Options | Mapping[str, Any] | None,
    overrides: Mapping[str, Any],
    scorer_id: str,
) -> Options:
    """The options object: defaults, then `options`, then keyword `overrides` (later wins).

    Fields absent from `options`, or given as None, keep their defaults (nested option
    groups too)."""
    if options is None:
        values: dict[str, Any] = {}
    elif isinstance(options, model):
        values = options.model_dump(exclude_unset=True)
    elif isinstance(options, Mapping):
        values = _by_name(model, options)
    else:
        raise ScorerConfigError(
            id="PREBUILT_SCORER_INVALID_OPTIONS",
            message=f"{scorer_id}: options must be a dict or {model.__name__}, "
            f"not {type(options).__name__}",
        )
    values.update(_by_name(model, overrides))
    values = {key: value for key, value in values.items() if value is not None}
    try:
        return model.model_validate(values)
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in problem['loc']) or '(options)'}: {problem['msg']}"
            for problem in error.errors(include_input=False, include_url=False)
        )
        raise ScorerConfigError(
            id="PREBUILT_SCORER_INVALID_OPTIONS",
            message=f"{scorer_id}: invalid options: {problems}",
            details={"scorerId": scorer_id},
        ) from None


async def call_maybe_async(function: Callable[..., Any], *args: Any) -> Any:
    """Call a user callback given as an option (an extractor, ...) that may be sync or async."""
    value = function(*args)
    if inspect.isawaitable(value):
        value = await value
    return value
