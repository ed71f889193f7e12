"""What the catalog, the CLI and the dashboard's forms learn from a scorer's options model.

`describe_options(model)` gives one `ScorerOption` per field: its name, a type label for
forms, its docstring as description, its default, whether it is required, its choices (a
`Literal` field) and whether only Python callers can give it (a function). Required options
come first, the rest in declaration order. `placeholder_options(model)` gives stand-in values
for the required options, to learn a scorer's steps without real options.

Type labels: "str", "bool", "int", "float", "choice", "regex", "list[str]", "list[dict]",
"dict" (a nested options group or a mapping), "callable" (code-only). A field whose
annotation maps to none of them must carry an `OptionType` marker; otherwise describing the
model fails at import time, so a new scorer cannot ship an option forms cannot show.
"""

from __future__ import annotations

import re
import types
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from inspect import isclass
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from core.scorers._options import OptionType
from core.scorers._scores import format_score

__all__ = [
    "ScorerOption",
    "defaults_summary",
    "describe_options",
    "placeholder_options",
    "type_label",
]

CODE_ONLY = "callable"

_SCALARS: dict[Any, str] = {bool: "bool", int: "int", float: "float", str: "str"}
_MAPPINGS = (dict, Mapping)
_SEQUENCES = (list, tuple, set, frozenset, Sequence)
_PLACEHOLDERS: dict[str, Any] = {
    "str": "x",
    "regex": "x",
    "int": 1,
    "float": 0.5,
    "bool": True,
    "list[str]": ["x"],
    "list[dict]": [{"id": "x", "name": "x", "description": "x"}],
    "dict": {},
}


@dataclass(frozen=True, slots=True)
class ScorerOption:
    """One option of a prebuilt scorer, as forms and the CLI show it (derived from the
    scorer's options model, never written by hand)."""

    name: str
    """The keyword the scorer's factory takes."""
    type: str
    """A short type label: "str", "bool", "float", "int", "choice", "list[str]", "regex", ..."""
    description: str
    default: Any = None
    required: bool = False
    choices: tuple[str, ...] | None = None
    """The only values allowed, when the option is a choice."""
    code_only: bool = False
    """Only Python callers can give it (a function): forms and the CLI skip it."""


def type_label(annotation: Any) -> tuple[str, tuple[str, ...] | None]:
    """The form type label of an annotation, and its choices when it is a `Literal`.

    Raises TypeError for an annotation no label fits (mark the field with `OptionType`)."""
    origin = get_origin(annotation)
    if origin is Annotated:
        return _marked(get_args(annotation)[1:]) or type_label(get_args(annotation)[0])
    if origin in (Union, types.UnionType):
        members = [arg for arg in get_args(annotation) if arg is not type(None)]
        return type_label(members[0])  # the first form is the one a form can give
    if origin is Literal:
        return "choice", tuple(str(value) for value in get_args(annotation))
    label = _plain_label(annotation, origin)
    if label is None:
        raise TypeError(f"no form type fits {annotation!r}: mark the field with OptionType(...)")
    return label, None


def _marked(metadata: Sequence[Any]) -> tuple[str, None] | None:
    for item in metadata:
        if isinstance(item, OptionType):
            return item.label, None
    return None


def _plain_label(annotation: Any, origin: Any) -> str | None:
    if annotation in _SCALARS:
        return _SCALARS[annotation]
    if annotation is re.Pattern or origin is re.Pattern:
        return "regex"
    if annotation is Callable or origin is Callable:
        return CODE_ONLY
    if isclass(annotation) and issubclass(annotation, BaseModel):
        return "dict"
    if annotation in _MAPPINGS or origin in _MAPPINGS:
        return "dict"
    if annotation in _SEQUENCES or origin in _SEQUENCES:
        items = get_args(annotation)
        inner = type_label(items[0])[0] if items else "str"
        return f"list[{inner}]"
    return None


def _label_of(info: FieldInfo) -> tuple[str, tuple[str, ...] | None]:
    return _marked(info.metadata) or type_label(info.annotation)


def _nested_model(info: FieldInfo) -> type[BaseModel] | None:
    annotation = info.annotation
    if isclass(annotation) and issubclass(annotation, BaseModel):
        return annotation
    return None


def _shown(value: Any) -> str:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return format_score(value)
    return repr(value)


def defaults_summary(model: type[BaseModel]) -> str:
    """The defaults of a nested options group, e.g. "none 1, minimal 0.85" (groups within it
    in parentheses)."""
    parts = []
    for name, info in model.model_fields.items():
        nested = _nested_model(info)
        if nested is not None:
            parts.append(f"{name} ({defaults_summary(nested)})")
        elif info.default is not PydanticUndefined:
            parts.append(f"{name} {_shown(info.default)}")
    return ", ".join(parts)


def _describe(name: str, info: FieldInfo) -> ScorerOption:
    label, choices = _label_of(info)
    description = " ".join((info.description or "").split())
    nested = _nested_model(info)
    if nested is not None:
        description = f"{description} Defaults: {defaults_summary(nested)}.".strip()
    return ScorerOption(
        name=name,
        type=label,
        description=description,
        default=None if info.default is PydanticUndefined else info.default,
        required=info.is_required(),
        choices=choices,
        code_only=label == CODE_ONLY,
    )


def describe_options(model: type[BaseModel]) -> tuple[ScorerOption, ...]:
    """One `ScorerOption` per field of `model`: required ones first, then declaration order."""
    options = [_describe(name, info) for name, info in model.model_fields.items()]
    return tuple(sorted(options, key=lambda option: not option.required))


def placeholder_options(model: type[BaseModel]) -> dict[str, Any]:
    """Stand-in values for the required options: the field's first example when it gives
    one, else a value of its type."""
    values: dict[str, Any] = {}
    for name, info in model.model_fields.items():
        if not info.is_required():
            continue
        if info.examples:
            values[name] = info.examples[0]
            continue
        label, choices = _label_of(info)
        values[name] = choices[0] if choices else _PLACEHOLDERS.get(label, "x")
    return values
