"""Shared pieces of the LLM-judge prebuilt scorers (spec prebuilt-scorers.md §1.3, §1.4, §4).

- `round_to_two_decimals`: Mastra's half-up rounding (never Python's half-to-even `round`).
- `judge_for`: a litellm model string or a `JudgeConfig` becomes the scorer's judge, with the
  scorer's own instructions filled in when none were given.
- `ScorerOptions` / `build_options`: frozen option models whose fields default individually, so
  a partial options object is merged with the defaults (Mastra replaces them wholesale, which
  turns some scores into NaN). Keys may be snake_case or Mastra's camelCase.
- `user_message`, `assistant_message`, `system_prompt`, ...: the LLM scorers' text rules, on
  plain strings as well as Mastra's message shapes.
- `resolve_context` / `MissingInputError`: context from the options or from the item, and a
  clear error naming what is missing and where to put it; `required_context`: the same for
  the scorers with a `context_extractor`.
- `tagged`, `as_json`, `reason_prompt`: small prompt-building helpers, so that every prompt
  delimits its inputs the same way; `explain_step`: the "Explain the score" reason step built
  on `reason_prompt`.
"""

from __future__ import annotations

import inspect
import json
import math
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic.alias_generators import to_camel

from core.errors import MastraError, ScorerConfigError
from core.judge import JudgeConfig, PromptStep
from core.scorers._registry import ScorerOption
from core.scorers._text import ScorerInputError, message_text, tool_invocations
from core.scoring import StepContext

__all__ = [
    "CONTEXT_EXTRACTOR_OPTION",
    "CONTEXT_OPTION",
    "Claims",
    "ContextScorerOptions",
    "ExtractedContextOptions",
    "MissingInputError",
    "ScorerOptions",
    "Verdict",
    "Verdicts",
    "as_json",
    "assistant_message",
    "assistant_turns",
    "build_options",
    "call_maybe_async",
    "claims_prompt",
    "context_list",
    "explain_step",
    "extracted_context",
    "first_user_message",
    "folded",
    "format_score",
    "item_value",
    "judge_for",
    "messages_of",
    "missing_context",
    "numbered",
    "reason_prompt",
    "remembered_messages",
    "required_context",
    "resolve_context",
    "round_to_two_decimals",
    "scale_option",
    "system_prompt",
    "tagged",
    "text_of",
    "tool_result_context",
    "user_message",
]

Options = TypeVar("Options", bound="ScorerOptions")


# --- numbers -------------------------------------------------------------------------------


def round_to_two_decimals(value: float) -> float:
    """Round half up to two decimals, as Mastra's `roundToTwoDecimals` (spec §1.4)."""
    shifted = (value + sys.float_info.epsilon) * 100
    return math.floor(shifted + 0.5) / 100


# --- judge ---------------------------------------------------------------------------------


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


# --- options -------------------------------------------------------------------------------


class ScorerOptions(BaseModel):
    """Base of the option models: frozen, unknown keys refused, snake_case or camelCase keys."""

    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        arbitrary_types_allowed=True,
        use_attribute_docstrings=True,
    )


class ContextScorerOptions(ScorerOptions):
    """Options shared by the scorers that judge against context pieces."""

    scale: float = Field(1.0, gt=0)
    """Multiplies the 0-1 score."""
    context: list[str] | None = None
    """Context pieces used for every item; unset: each item's `request_context["context"]`."""

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
    """`context_extractor(input, output)` (sync or async) -> each item's context pieces; wins
    over `context`."""


async def extracted_context(settings: ExtractedContextOptions, run: Any) -> list[str] | None:
    """The context of a run: the extractor's answer (possibly empty), else the `context`
    option, else the item's; None when none of them has any."""
    if settings.context_extractor is not None:
        value = await call_maybe_async(settings.context_extractor, run.input, run.output)
        return context_list(value) or []
    return resolve_context(settings.context, run.request_context)


def _field_names(model: type[BaseModel]) -> dict[str, str]:
    """Every accepted key (name or alias) -> the field name."""
    names: dict[str, str] = {}
    for name, info in model.model_fields.items():
        names[name] = name
        if info.alias:
            names[info.alias] = name
    return names


def _by_name(model: type[BaseModel], values: Mapping[str, Any]) -> dict[str, Any]:
    names = _field_names(model)
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
    """Call a user callback that may be sync or async."""
    value = function(*args)
    if inspect.isawaitable(value):
        value = await value
    return value


# --- text extraction (spec §1.3, LLM rules) ------------------------------------------------


def _describe(value: Any) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text[:57] + '...' if len(text) > 60 else text}"


def _items(value: Any, side: str) -> list[Any]:
    """The messages of a side: strings and message dicts, in order."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, Mapping):
        if "inputMessages" in value:
            return _items(value["inputMessages"], side)
        return [value]
    if isinstance(value, Sequence) and not isinstance(value, (bytes, bytearray)):
        for index, item in enumerate(value):
            if not isinstance(item, (str, Mapping)):
                raise ScorerInputError(
                    f"{side}[{index}] must be a string or a message dict, got {_describe(item)}"
                )
        return list(value)
    raise ScorerInputError(
        f"{side} must be a string, a message dict or a list of these; got {_describe(value)}"
    )


def messages_of(value: Any, side: str = "output") -> list[Any]:
    """The messages of a side (strings and message dicts), refusing unreadable shapes."""
    return _items(value, side)


def text_of(item: str | Mapping[str, Any]) -> str:
    """The text of one message: a string, a `{"content"}` message (Mastra's rules) or a
    `{"text"}` object."""
    if isinstance(item, str):
        return item
    if "content" in item:
        return message_text(item)
    text = item.get("text")
    return text if isinstance(text, str) else ""


def _role(item: str | Mapping[str, Any]) -> str | None:
    return None if isinstance(item, str) else item.get("role")


def first_user_message(value: Any, side: str = "input") -> str | None:
    """The text of the first user message (a string or a role-less object counts as one), or
    None when there is none."""
    for item in _items(value, side):
        if _role(item) in (None, "user"):
            return text_of(item)
    return None


def user_message(value: Any, side: str = "input") -> str:
    """`first_user_message`, with "" when there is none."""
    return first_user_message(value, side) or ""


def assistant_turns(value: Any, side: str = "output") -> list[str]:
    """Texts of the assistant messages (strings and role-less objects count) that are not
    blank, in order."""
    return [
        text
        for item in _items(value, side)
        if _role(item) in (None, "assistant") and (text := text_of(item)).strip()
    ]


def assistant_message(value: Any, side: str = "output") -> str:
    """The last assistant message that carries text, or ""."""
    turns = assistant_turns(value, side)
    return turns[-1] if turns else ""


def _system_text(message: Any) -> str:
    """A system message's text: its string content, or its text parts joined by a space."""
    if isinstance(message, str):
        return message
    if not isinstance(message, Mapping):
        return ""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(
            part["text"]
            for part in content
            if isinstance(part, Mapping)
            and part.get("type") == "text"
            and isinstance(part.get("text"), str)
        )
    return text_of(message)


def system_prompt(value: Any) -> str:
    """The system text of an input: Mastra's `systemMessages` then its tagged system
    messages, or the `system` messages of a plain message list, joined by a blank line."""
    parts: list[str] = []
    if isinstance(value, Mapping) and "inputMessages" in value:
        parts.extend(_system_text(m) for m in value.get("systemMessages") or [])
        for messages in (value.get("taggedSystemMessages") or {}).values():
            parts.extend(_system_text(m) for m in messages or [])
    else:
        parts.extend(_system_text(m) for m in _items(value, "input") if _role(m) == "system")
    return "\n\n".join(part for part in parts if part)


def remembered_messages(value: Any) -> list[tuple[str, str]]:
    """`(role, text)` of the earlier conversation (Mastra's `rememberedMessages`)."""
    if not isinstance(value, Mapping):
        return []
    return [
        (str(_role(m) or "user"), text_of(m))
        for m in _items(value.get("rememberedMessages") or [], "input.rememberedMessages")
    ]


def tool_result_context(output: Any) -> list[str]:
    """JSON of the result of every completed tool call in the assistant messages."""
    found: list[str] = []
    for item in _items(output, "output"):
        if isinstance(item, str) or item.get("role", "assistant") != "assistant":
            continue
        for invocation in tool_invocations([item]):
            if invocation.get("state") == "result":
                found.append(json.dumps(invocation.get("result"), ensure_ascii=False))
    return found


# --- context -------------------------------------------------------------------------------


class MissingInputError(MastraError, ValueError):
    """A judge scorer lacks something it needs (context, a ground truth, ...); the message
    says what and where to put it."""

    def __init__(self, message: str, *, scorer_id: str, missing: str) -> None:
        super().__init__(
            id="PREBUILT_SCORER_MISSING_INPUT",
            message=message,
            details={"scorerId": scorer_id, "missing": missing},
        )


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
    raise ScorerInputError(f"context must be a string or a list of strings, got {_describe(value)}")


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


# --- prompt helpers ------------------------------------------------------------------------


def tagged(tag: str, text: str) -> str:
    """`text` between `<tag>` and `</tag>` lines; a closing tag inside the text is defused so
    the text cannot end its own block."""
    safe = text.replace(f"</{tag}>", f"<\\/{tag}>")
    return f"<{tag}>\n{safe}\n</{tag}>"


def as_json(value: Any) -> str:
    """Readable JSON for prompts (non-ASCII kept as is)."""
    return json.dumps(value, ensure_ascii=False, indent=2)


def reason_prompt(
    *,
    metric: str,
    score: float,
    scale: float,
    meaning: str,
    findings: str,
    example: str,
) -> str:
    """The prompt of a reason step: explain a computed score from the findings behind it."""
    return "\n\n".join(
        [
            f"Below are the {metric} score of a response and the findings it was computed "
            "from. Write a short "
            "explanation of the score for someone reading an evaluation report.",
            "Rules:\n"
            f'- Begin with "The score is {format_score(score)} because".\n'
            "- Use one to three sentences, and mention the findings that most raised or "
            "lowered the score.\n"
            "- Rely only on the findings given; do not re-judge the response or invent facts.\n"
            "- Answer in plain text, not JSON.",
            f"Score: {format_score(score)} (scale 0 to {format_score(scale)}; {meaning}).",
            tagged("findings", findings),
            f"Example of the expected form:\n{example}",
        ]
    )


def explain_step(
    *,
    metric: str,
    scale: float,
    meaning: str,
    example: str,
    findings: Callable[[StepContext], str | Awaitable[str]],
) -> PromptStep:
    """The reason step ("Explain the score") of a judge scorer: `reason_prompt` with the run's
    score; `findings(ctx)` (sync or async) gives the findings text the score came from."""

    async def create_prompt(ctx: StepContext) -> str:
        return reason_prompt(
            metric=metric,
            score=ctx.score,
            scale=scale,
            meaning=meaning,
            findings=await call_maybe_async(findings, ctx),
            example=example,
        )

    return PromptStep(description="Explain the score", create_prompt=create_prompt)


def numbered(pieces: Sequence[str]) -> str:
    """Context pieces as `[0] first`, `[1] second`, ... lines (indexes from 0)."""
    return "\n".join(f"[{index}] {piece}" for index, piece in enumerate(pieces))


class Claims(BaseModel):
    """A judge's answer listing the claims of a text."""

    claims: list[str]


class Verdict(BaseModel):
    """One verdict with its reason."""

    verdict: str
    reason: str


class Verdicts(BaseModel):
    """A judge's answer: one verdict per item, in order."""

    verdicts: list[Verdict]


def folded(value: Any) -> Any:
    """A judge's label trimmed and lower-cased (anything but a string as is); the models of
    the judge's answers use it as a `mode="before"` field validator, so that "High " is
    read as "high"."""
    return value.strip().lower() if isinstance(value, str) else value


def claims_prompt(text: str, what: str = "response") -> str:
    """Ask the judge to list the claims of `text` (the assistant's response, a reference
    answer, ...), so that each can be checked on its own later."""
    return "\n\n".join(
        [
            f"List the claims made in the {what} below, so that each one can later be checked "
            "against reference material on its own.",
            "Rules:\n"
            "- A claim states that something is, was or will be the case: a fact, a figure, a "
            'date, a cause, a prediction, or a speculation (keep its hedge: "X may happen").\n'
            "- Write each claim as a short sentence that makes sense alone; split a sentence "
            "that states several things into one claim per thing.\n"
            "- Leave out greetings, questions, offers of help and pure matters of taste.\n"
            f"- Stay faithful to the {what}: add nothing, correct nothing, even when it is "
            "wrong.\n"
            f"- If the {what} makes no claim (or is empty), return an empty list.",
            'Answer with JSON: {"claims": ["...", "..."]}',
            'Example: for "The Eiffel Tower, finished in 1889, is 330 m tall. It might be '
            'repainted in 2030." the answer is\n'
            '{"claims": ["The Eiffel Tower was finished in 1889.", "The Eiffel Tower is 330 m '
            'tall.", "The Eiffel Tower might be repainted in 2030."]}',
            tagged(what.replace(" ", "_"), text),
        ]
    )


def format_score(value: float) -> str:
    """A score for display: `1` rather than `1.0`, `0.43` as is."""
    return str(int(value)) if float(value).is_integer() else str(value)


# --- catalog -------------------------------------------------------------------------------


def scale_option(default: float = 1.0) -> ScorerOption:
    """The `scale` option: the [0, 1] score is multiplied by it (before rounding)."""
    return ScorerOption("scale", "float", "Multiplies the 0-1 score.", default=default)


CONTEXT_OPTION = ScorerOption(
    "context",
    "list[str]",
    "Context pieces to judge against, for every item; when unset, each item's"
    " request_context['context'] is used.",
    default=None,
)

CONTEXT_EXTRACTOR_OPTION = ScorerOption(
    "context_extractor",
    "callable",
    "A function (input, output) -> list[str] giving each item's context; wins over `context`.",
    default=None,
)
