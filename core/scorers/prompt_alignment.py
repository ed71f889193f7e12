"""Prompt alignment: how well the response follows the user's prompt and/or the system
prompt (docs/scorers.md, Prompt Alignment).

Steps: analyze (judge) rates four dimensions from 0 to 1 (intent alignment, requirements
fulfilment, completeness, response appropriateness) in one of three modes: "user" (the user's
prompt), "system" (the system prompt's rules) or "both" (the default). Score, times `scale`,
rounded half up to two decimals (0 without analysis):

- user mode: `0.4 intent + 0.3 requirements + 0.2 completeness + 0.1 appropriateness`;
- system mode: `0.35 / 0.35 / 0.15 / 0.15` on the same four fields;
- both mode: `0.7 U + 0.3 U` with U the user-mode formula, i.e. U itself. Mastra's code keeps
  a placeholder there for a separate system score; the single analysis already weighs user
  intent and system rules together, so the formula is kept as is for parity.

Reason (judge). The run fails in analyze, before any judge call, when the text a mode needs
is missing (the user prompt, the system prompt, or the response).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from core.judge import JudgeConfig, PromptStep
from core.scorers._context import MissingInputError
from core.scorers._judge_setup import judge_for
from core.scorers._messages import (
    assistant_message,
    first_user_message,
    remembered_messages,
    system_prompt,
)
from core.scorers._options import ScorerOptions, build_options
from core.scorers._prompts import as_json, explain_step, tagged
from core.scorers._registry import PrebuiltScorer
from core.scorers._scores import round_to_two_decimals
from core.scorers.metadata import COMPARES
from core.scoring import Scorer, StepContext, create_scorer

__all__ = [
    "CATALOG_ENTRY",
    "SCORER_ID",
    "ConversationHistory",
    "PromptAlignmentOptions",
    "create_prompt_alignment_scorer_llm",
    "prompt_alignment_score",
]

SCORER_ID = "prompt-alignment-scorer"
NAME = "Prompt Alignment Scorer"
DESCRIPTION = (
    "How well the response follows the prompt: intent, explicit requirements, completeness"
    " and format/tone, against the user's prompt, the system prompt, or both."
)

INSTRUCTIONS = (
    "You evaluate how well an assistant's response follows the instructions it was given: "
    "the user's prompt, the system prompt, or both. You identify the intent and every "
    "explicit requirement, check each one against the response, and rate the response on "
    "fixed dimensions from 0 to 1. Follow the definitions given in each request exactly and "
    "answer in the format it asks for."
)

Mode = Literal["both", "user", "system"]
_WEIGHTS: dict[str, tuple[float, float, float, float]] = {
    "user": (0.4, 0.3, 0.2, 0.1),
    "system": (0.35, 0.35, 0.15, 0.15),
}


class ConversationHistory(ScorerOptions):
    """How much earlier conversation to show the judge."""

    max_messages: int = Field(10, ge=1)
    """The last this-many remembered messages."""


class PromptAlignmentOptions(ScorerOptions):
    """Options of the prompt-alignment scorer; each one defaults on its own."""

    evaluation_mode: Mode = "both"
    """What the response is held to: "user" (the user's prompt), "system" (the system
    prompt) or "both"."""
    include_conversation_history: bool | ConversationHistory = False
    """Show the judge the earlier conversation (Mastra's `rememberedMessages`): True keeps
    the last 10 messages, {'max_messages': n} the last n."""
    scale: float = Field(1.0, gt=0)
    """Multiplies the 0-1 score."""


Score01 = Annotated[float, Field(ge=0, le=1)]
"""A rating from 0 to 1."""


class IntentAlignment(BaseModel):
    score: Score01
    primaryIntent: str
    isAddressed: bool
    reasoning: str


class Requirement(BaseModel):
    requirement: str
    isFulfilled: bool
    reasoning: str


class RequirementsFulfillment(BaseModel):
    requirements: list[Requirement]
    overallScore: Score01


class Completeness(BaseModel):
    score: Score01
    missingElements: list[str]
    reasoning: str


class ResponseAppropriateness(BaseModel):
    score: Score01
    formatAlignment: bool
    toneAlignment: bool
    reasoning: str


class AlignmentAnalysis(BaseModel):
    """Analyze answer: the four dimensions and an overall assessment."""

    intentAlignment: IntentAlignment
    requirementsFulfillment: RequirementsFulfillment
    completeness: Completeness
    responseAppropriateness: ResponseAppropriateness
    overallAssessment: str


def _weighted(analysis: Mapping[str, Any], weights: tuple[float, float, float, float]) -> float:
    weighted: float = (
        analysis["intentAlignment"]["score"] * weights[0]
        + analysis["requirementsFulfillment"]["overallScore"] * weights[1]
        + analysis["completeness"]["score"] * weights[2]
        + analysis["responseAppropriateness"]["score"] * weights[3]
    )
    return weighted


def prompt_alignment_score(
    analysis: Mapping[str, Any] | None, mode: Mode = "both", scale: float = 1.0
) -> float:
    """The weighted score of an analysis for a mode, times `scale`, rounded; 0 without one."""
    if not analysis:
        return 0.0
    if mode == "both":
        user = _weighted(analysis, _WEIGHTS["user"])
        value = 0.7 * user + 0.3 * user  # Mastra's formula: the system half reuses U
    else:
        value = _weighted(analysis, _WEIGHTS[mode])
    return round_to_two_decimals(value * scale)


_TASKS: dict[str, str] = {
    "user": "Evaluate how well the assistant's response fulfils the user's prompt. Hold the "
    "response to what the user asked for.",
    "system": "Evaluate how well the assistant's response follows its system prompt: the "
    "role, rules, constraints, format and tone the system prompt sets. Hold the response to "
    "the system prompt's rules, not to what the user happened to ask.",
    "both": "Evaluate how well the assistant's response serves the user's prompt while "
    "following the system prompt. Consider both together: the user's intent and requests, "
    "and the rules, constraints, format and tone set by the system prompt (where they "
    "conflict, the system prompt's rules win).",
}

_DIMENSIONS = (
    "Rate four dimensions, each from 0 (not at all) to 1 (fully); use values in between for "
    "partial success:\n"
    '1. "intentAlignment": what the prompt is mainly after ("primaryIntent", one sentence), '
    'whether the response addresses it ("isAddressed"), "score", "reasoning".\n'
    '2. "requirementsFulfillment": every explicit requirement of the prompt (content to '
    "include, format, length, language, style, things to avoid), each with "
    '"requirement", "isFulfilled" and "reasoning"; "overallScore" is the share of '
    "requirements met, weighted by importance (1 when there is no explicit requirement and "
    "the intent is met).\n"
    '3. "completeness": whether every part of the request is covered; "missingElements" '
    'lists what is left out; "score", "reasoning".\n'
    '4. "responseAppropriateness": whether the format fits what was asked '
    '("formatAlignment") and the tone fits the audience and instructions '
    '("toneAlignment"); "score", "reasoning".\n'
    'Finally "overallAssessment": one or two sentences.'
)

_EXAMPLE = (
    'Example: for the prompt "List three fruits, in lowercase, as a bullet list." and the '
    'response "- Apple\\n- banana\\n- cherry" the answer is\n'
    '{"intentAlignment": {"score": 1, "primaryIntent": "Get a list of three fruits.", '
    '"isAddressed": true, "reasoning": "Three fruits are listed."}, '
    '"requirementsFulfillment": {"requirements": [{"requirement": "Three fruits", '
    '"isFulfilled": true, "reasoning": "Exactly three."}, {"requirement": "Lowercase", '
    '"isFulfilled": false, "reasoning": "Apple is capitalised."}, {"requirement": "Bullet '
    'list", "isFulfilled": true, "reasoning": "Uses bullets."}], "overallScore": 0.67}, '
    '"completeness": {"score": 1, "missingElements": [], "reasoning": "Nothing left out."}, '
    '"responseAppropriateness": {"score": 0.8, "formatAlignment": true, "toneAlignment": '
    'true, "reasoning": "Right format; one casing slip."}, "overallAssessment": "Meets the '
    'request except for one capitalised word."}'
)


def _history(input_value: Any, setting: bool | ConversationHistory) -> str | None:
    if setting is False:
        return None
    limit = setting.max_messages if isinstance(setting, ConversationHistory) else 10
    messages = remembered_messages(input_value)[-limit:]
    if not messages:
        return None
    return "\n".join(f"{role}: {text}" for role, text in messages)


def _missing(what: str, where: str, mode: str) -> MissingInputError:
    return MissingInputError(
        f"{NAME} (evaluation_mode={mode!r}) needs {what}, and the item has none: {where}.",
        scorer_id=SCORER_ID,
        missing=what,
    )


def _texts(ctx: StepContext, mode: str) -> tuple[str, str, str]:
    """The user prompt, system prompt and response, or the error for what is missing."""
    user = (first_user_message(ctx.run.input) or "").strip()
    system = system_prompt(ctx.run.input).strip()
    response = assistant_message(ctx.run.output).strip()
    if mode == "user" and not user:
        raise _missing("the user's prompt", "give the item an input text or a user message", mode)
    if mode == "system" and not system:
        raise _missing(
            "a system prompt",
            "give the item's input a {'role': 'system', 'content': ...} message (or Mastra's "
            "agent input with systemMessages)",
            mode,
        )
    if mode == "both" and not (user or system):
        raise _missing("a user prompt or a system prompt", "give the item an input", mode)
    if not response:
        raise _missing("a response to evaluate", "the item's output has no assistant text", mode)
    return user, system, response


def _analyze_prompt(settings: PromptAlignmentOptions) -> Callable[[StepContext], str]:
    def create_prompt(ctx: StepContext) -> str:
        mode = settings.evaluation_mode
        user, system, response = _texts(ctx, mode)
        parts = [_TASKS[mode], _DIMENSIONS]
        parts.append(
            'Answer with JSON: {"intentAlignment": {...}, "requirementsFulfillment": {...}, '
            '"completeness": {...}, "responseAppropriateness": {...}, "overallAssessment": '
            '"..."}'
        )
        parts.append(_EXAMPLE)
        if mode != "user":
            parts.append(tagged("system_prompt", system or "(none: judge the user's prompt)"))
        if mode != "system" or user:
            parts.append(tagged("user_prompt", user or "(none)"))
        history = _history(ctx.run.input, settings.include_conversation_history)
        if history:
            parts.append(
                "Earlier conversation, for context only (judge the response, not these):\n"
                + tagged("conversation_history", history)
            )
        parts.append(tagged("response", response))
        return "\n\n".join(parts)

    return create_prompt


def create_prompt_alignment_scorer_llm(
    model: str | JudgeConfig,
    options: PromptAlignmentOptions | Mapping[str, Any] | None = None,
    **option_values: Any,
) -> Scorer:
    """Prompt alignment (`prompt-alignment-scorer`), judged by `model`.

    `options` (or keyword arguments): `scale` (1), `evaluation_mode` ("both", "user" or
    "system"), `include_conversation_history` (False; True or `{"max_messages": n}` shows the
    judge the last n of Mastra's `rememberedMessages`, 10 by default).

    The user prompt is the first user message of the input (a plain string counts as one);
    the system prompt is the input's `system` messages, or Mastra's `systemMessages` and
    tagged system messages. Deviation from Mastra: partial options merge with the defaults.
    """
    settings = build_options(PromptAlignmentOptions, options, option_values, SCORER_ID)

    def generate_score(ctx: StepContext) -> float:
        analysis = ctx.results.analyze_step_result
        return prompt_alignment_score(analysis, settings.evaluation_mode, settings.scale)

    return (
        create_scorer(
            id=SCORER_ID, name=NAME, description=DESCRIPTION, judge=judge_for(model, INSTRUCTIONS)
        )
        .analyze(
            PromptStep(
                description="Rate intent, requirements, completeness and appropriateness",
                output_schema=AlignmentAnalysis,
                create_prompt=_analyze_prompt(settings),
            )
        )
        .generate_score(generate_score)
        .generate_reason(
            explain_step(
                metric=f"prompt alignment ({settings.evaluation_mode} mode)",
                scale=settings.scale,
                meaning="higher means the response follows the prompt more closely",
                example="The score is 0.8 because the response addresses the request and meets "
                "most requirements, but ignores the lowercase rule and skips one part.",
                findings=lambda ctx: as_json(ctx.results.analyze_step_result),
            )
        )
    )


CATALOG_ENTRY = PrebuiltScorer(
    SCORER_ID,
    "Prompt Alignment",
    DESCRIPTION,
    create_prompt_alignment_scorer_llm,
    calls_judge=True,
    compares=COMPARES[SCORER_ID],
    options_model=PromptAlignmentOptions,
)
