"""Where the context scorers find an item's context, and the error when there is none.

Context comes, first found, from a context function (an option only Python callers can
give), the `context` option, or the item's `request_context["context"]` (a request context
that is itself a list of strings counts too). A scorer that needs context and finds none
fails with a `MissingInputError` saying where to put it (docs/scorers.md, "Context").
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pydantic import field_validator

from core.errors import MastraError
from core.scorers._options import ScorerOptions, call_maybe_async
from core.scorers._text import ScorerInputError, describe_value

__all__ = [
    "ContextScorerOptions",
    "ExtractedContextOptions",
    "MissingInputError",
    "context_list",
    "extracted_context",
    "item_value",
    "missing_context",
    "required_context",
    "resolve_context",
]


class MissingInputError(MastraError, ValueError):
    """A judge scorer lacks something it needs (context, a ground truth, ...); the message
    says what and where to put it."""

    def __init__(self, message: str, *, scorer_id: str, missing: str) -> None:
        super().__init__(
            id="PREBUILT_SCORER_MISSING_INPUT",
            message=message,
            details={"scorerId": scorer_id, "missing": missing},
        )


class ContextScorerOptions(ScorerOptions):
    """Options shared by the scorers that judge against context pieces (each adds its own
    `scale` last, so that forms list it after the context options)."""

    context: list[str] | None = None
    """Context pieces to judge against, for every item; when unset, each item's
    request_context['context'] is used."""

    @field_validator("context")
    @classmethod
    def _not_empty(cls, value: list[str] | None) -> list[str] | None:
        if value is not None and not value:
            raise ValueError(
                "must not be empty: leave it unset to read each item's request_context['context']"
            )
        return value


class ExtractedContextOptions(ContextScorerOptions):
    """Context options with Mastra's `contextExtractor` (the context-* scorers)."""

    context_extractor: Callable[..., Any] | None = None
    """A function (input, output) -> list[str], sync or async, giving each item's context;
    wins over `context`."""


def context_list(value: Any) -> list[str] | None:
    """Context pieces from a string or a list (non-strings become JSON); None when empty."""
    if value is None:
        return None
    if isinstance(value, str):
        return [value] if value.strip() else None
    if isinstance(value, Sequence) and not isinstance(value, (bytes, bytearray)):
        pieces = [
            piece if isinstance(piece, str) else json.dumps(piece, ensure_ascii=False)
            for piece in value
        ]
        return pieces or None
    raise ScorerInputError(
        f"context must be a string or a list of strings, got {describe_value(value)}"
    )


def item_value(request_context: Any, key: str) -> Any:
    """`request_context[key]` when the item's request context is a dict, else None."""
    if isinstance(request_context, Mapping):
        return request_context.get(key)
    return None


def resolve_context(option: Sequence[str] | None, request_context: Any) -> list[str] | None:
    """The context to judge against: the scorer's `context` option, else the item's
    (`request_context={"context": [...]}`, or a request context that is itself a list of
    strings). None when neither has any."""
    if option:
        return list(option)
    if isinstance(request_context, Mapping):
        return context_list(request_context.get("context"))
    if isinstance(request_context, (str, Sequence)):
        return context_list(request_context)
    return None


async def extracted_context(settings: ExtractedContextOptions, run: Any) -> list[str] | None:
    """The context of a run: the extractor's answer (possibly empty), else the `context`
    option, else the item's; None when none of them has any."""
    if settings.context_extractor is not None:
        value = await call_maybe_async(settings.context_extractor, run.input, run.output)
        return context_list(value) or []
    return resolve_context(settings.context, run.request_context)


def missing_context(
    scorer_name: str, scorer_id: str, factory: str, *, extractor: bool = False
) -> MissingInputError:
    """The error for a run with no context, saying where context can come from."""
    option = "options={'context': [...]}"
    if extractor:
        option += " (or a context_extractor)"
    return MissingInputError(
        f"{scorer_name} needs context to judge against, and none was found. Pass {option} "
        f"to {factory}(), or give the item request_context={{'context': [...]}} (a list of "
        "strings).",
        scorer_id=scorer_id,
        missing="context",
    )


async def required_context(
    settings: ExtractedContextOptions,
    run: Any,
    scorer_name: str,
    scorer_id: str,
    factory: str,
    *,
    allow_empty: bool = False,
) -> list[str]:
    """`extracted_context` for a scorer that needs context: none at all fails saying where to
    put it; an extractor that returns no piece fails too, unless `allow_empty`."""
    context = await extracted_context(settings, run)
    if context is None:
        raise missing_context(scorer_name, scorer_id, factory, extractor=True)
    if not context and not allow_empty:
        raise MissingInputError(
            "No context available for evaluation: the context_extractor returned no context "
            "pieces for this item.",
            scorer_id=scorer_id,
            missing="context",
        )
    return context
