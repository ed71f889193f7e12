"""Tool-call accuracy (LLM): were the right tools called for the request?
(docs/scorers.md, Tool Call Accuracy (LLM))

Steps: preprocess (code) collects the tool calls of the output messages (invocations in state
`result`, `call` or `output-error`, de-duplicated by `toolCallId`; docs/scorers.md, "Reading
inputs and outputs") and fails when the input has no user request or the output is empty.
Analyze (judge) rates each call as appropriate or not for the user's explicit request (and,
with no call, says which tools were missed, if any). Score: with no evaluation, 0 when a tool
was missed, else 1; otherwise `#appropriate / #evaluations`, rounded half up to two decimals;
no scale. Reason (judge).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any

from pydantic import BaseModel, Field

from core.errors import ScorerConfigError
from core.judge import JudgeConfig, PromptStep
from core.scorers._context import MissingInputError
from core.scorers._judge_setup import judge_for
from core.scorers._messages import assistant_message, messages_of, user_message
from core.scorers._options import OptionType, ScorerOptions
from core.scorers._prompts import as_json, explain_step, tagged
from core.scorers._registry import PrebuiltScorer
from core.scorers._scores import round_to_two_decimals
from core.scorers._text import tool_invocations
from core.scorers.metadata import COMPARES
from core.scoring import Scorer, StepContext, create_scorer, described

__all__ = [
    "CATALOG_ENTRY",
    "SCORER_ID",
    "ToolCallAccuracyOptions",
    "create_tool_call_accuracy_scorer_llm",
    "tool_call_accuracy_score",
    "tool_calls",
]

SCORER_ID = "llm-tool-call-accuracy-scorer"
NAME = "Tool Call Accuracy (LLM) Scorer"
DESCRIPTION = (
    "Whether the agent called the right tools for the user's explicit request: the share of"
    " its tool calls the judge finds appropriate."
)

INSTRUCTIONS = (
    "You review an AI agent's tool use. Given the user's request, the tools the agent had and "
    "the calls it made, you decide whether each call was appropriate for what the user "
    "explicitly asked. You are strict: a call that is merely related or nice to have is not "
    "appropriate. Follow the definitions given in each request exactly and answer in the "
    "format it asks for."
)

_CALL_STATES = frozenset({"result", "call", "output-error"})


class ToolCallAccuracyOptions(ScorerOptions):
    """Options of the LLM tool-call accuracy scorer (the factory's `available_tools`)."""

    available_tools: Annotated[
        Any, OptionType("list[dict]"), Field(examples=[[{"id": "x", "description": "x"}]])
    ]
    """The agent's tools, each {'id': ..., 'description': ...}."""


class ToolEvaluation(BaseModel):
    """One tool call's verdict."""

    toolCalled: str
    wasAppropriate: bool
    reasoning: str


class ToolAnalysis(BaseModel):
    """Analyze answer."""

    evaluations: list[ToolEvaluation]
    missingTools: list[str] = Field(default_factory=list)


def tool_calls(output: Any) -> list[dict[str, Any]]:
    """The tool calls of the output messages, in order: `toolName`, `toolCallId`,
    `messageIndex`, `invocationIndex`, `args`."""
    calls: list[dict[str, Any]] = []
    for message_index, message in enumerate(messages_of(output)):
        if not isinstance(message, Mapping):
            continue
        for invocation_index, invocation in enumerate(tool_invocations([message])):
            name = invocation.get("toolName")
            if not name or invocation.get("state") not in _CALL_STATES:
                continue
            calls.append(
                {
                    "toolName": name,
                    "toolCallId": invocation.get("toolCallId")
                    or f"{message_index}-{invocation_index}",
                    "messageIndex": message_index,
                    "invocationIndex": invocation_index,
                    "args": invocation.get("args"),
                }
            )
    return calls


def tool_call_accuracy_score(analysis: Mapping[str, Any]) -> float:
    """`#appropriate / #evaluations`, rounded; without evaluations 0 if a tool was missed,
    else 1."""
    evaluations: Sequence[Mapping[str, Any]] = analysis.get("evaluations") or []
    if not evaluations:
        return 0.0 if analysis.get("missingTools") else 1.0
    appropriate = sum(1 for item in evaluations if item["wasAppropriate"])
    return round_to_two_decimals(appropriate / len(evaluations))


def _tool_lines(available_tools: Sequence[Any]) -> list[tuple[str, str]]:
    """`(id, description)` of each tool: dicts with `id`/`description` (or `name`), or
    objects with those attributes."""
    tools = []
    for tool in available_tools:
        get = tool.get if isinstance(tool, Mapping) else lambda key, t=tool: getattr(t, key, None)
        tool_id = get("id") or get("name")
        if not tool_id:
            raise ScorerConfigError(
                id="PREBUILT_SCORER_INVALID_OPTIONS",
                message=f"{SCORER_ID}: each available tool needs an 'id' (or 'name'): got {tool!r}",
            )
        tools.append((str(tool_id), str(get("description") or "")))
    return tools


def _preprocess(ctx: StepContext) -> dict[str, Any]:
    if not user_message(ctx.run.input).strip():
        raise MissingInputError(
            f"{NAME} needs the user's request: the item's input has no user message.",
            scorer_id=SCORER_ID,
            missing="input",
        )
    output = ctx.run.output
    if output is None or output == [] or (isinstance(output, str) and not output.strip()):
        raise MissingInputError(
            f"{NAME} needs the agent's output messages: the item's output is empty.",
            scorer_id=SCORER_ID,
            missing="output",
        )
    calls = tool_calls(output)
    return {
        "actualTools": [call["toolName"] for call in calls],
        "hasToolCalls": bool(calls),
        "toolCallInfos": calls,
    }


described(_preprocess, "Collect the tool calls of the output")


def _calls_text(calls: Sequence[Mapping[str, Any]]) -> str:
    if not calls:
        return "(no tool was called)"
    return "\n".join(
        f"{index}. {call['toolName']} with arguments {json.dumps(call['args'], ensure_ascii=False)}"
        for index, call in enumerate(calls, start=1)
    )


def _analyze_prompt(tools: list[tuple[str, str]]) -> Callable[[StepContext], str]:
    tool_text = "\n".join(f"{tool_id}: {text}" for tool_id, text in tools) or "(none)"

    def create_prompt(ctx: StepContext) -> str:
        calls = ctx.results.preprocess_step_result["toolCallInfos"]
        return "\n\n".join(
            [
                "Below are a user's request, the tools an AI agent had, the tool calls it "
                "made, and its final answer. Decide whether each tool call was appropriate.",
                "Rules:\n"
                "- A call is appropriate only when the user's explicit request needs it: the "
                "request cannot be fulfilled well without that tool.\n"
                "- A call that is merely related, helpful or anticipatory (doing something the "
                "user did not ask for) is not appropriate.\n"
                "- Judge each call on its own, in the order listed, with one evaluation per "
                'call: "toolCalled" (the tool name), "wasAppropriate" (true or false) and '
                '"reasoning" (one short sentence).\n'
                '- If no tool was called, return an empty "evaluations" list and decide '
                "whether that was right: when the request clearly needed one of the available "
                'tools, list it in "missingTools"; when asking for clarification or answering '
                'directly was right, leave "missingTools" empty.\n'
                '- Also list in "missingTools" any tool the request clearly needed that was '
                "never called.",
                'Answer with JSON: {"evaluations": [{"toolCalled": "...", "wasAppropriate": '
                'true, "reasoning": "..."}], "missingTools": []}',
                'Example: for the request "What is the weather in Paris?" with the tools '
                '"weather-tool: current weather of a city" and "calendar-tool: the user\'s '
                'agenda", calls to weather-tool and calendar-tool give\n'
                '{"evaluations": [{"toolCalled": "weather-tool", "wasAppropriate": true, '
                '"reasoning": "The user asked for the weather."}, {"toolCalled": '
                '"calendar-tool", "wasAppropriate": false, "reasoning": "The agenda was not '
                'asked for."}], "missingTools": []}',
                tagged("user_request", user_message(ctx.run.input)),
                tagged("available_tools", tool_text),
                tagged("tool_calls", _calls_text(calls)),
                tagged("final_answer", assistant_message(ctx.run.output) or "(no text)"),
            ]
        )

    return create_prompt


def create_tool_call_accuracy_scorer_llm(
    model: str | JudgeConfig, available_tools: Sequence[Any]
) -> Scorer:
    """Tool-call accuracy judged by `model` (`llm-tool-call-accuracy-scorer`).

    `available_tools`: the agent's tools, each a dict `{"id", "description"}` (or an object
    with those attributes), shown to the judge as `id: description` lines. The output should
    be Mastra messages carrying tool invocations; a plain string output has no tool call.
    """
    if isinstance(available_tools, (str, Mapping)) or not isinstance(available_tools, Sequence):
        raise ScorerConfigError(
            id="PREBUILT_SCORER_INVALID_OPTIONS",
            message=f"{SCORER_ID}: available_tools must be a list of "
            "{'id': ..., 'description': ...} tools",
        )
    tools = _tool_lines(available_tools)
    return (
        create_scorer(
            id=SCORER_ID, name=NAME, description=DESCRIPTION, judge=judge_for(model, INSTRUCTIONS)
        )
        .preprocess(_preprocess)
        .analyze(
            PromptStep(
                description="Judge each tool call against the request",
                output_schema=ToolAnalysis,
                create_prompt=_analyze_prompt(tools),
            )
        )
        .generate_score(lambda ctx: tool_call_accuracy_score(ctx.results.analyze_step_result))
        .generate_reason(
            explain_step(
                metric="tool-call accuracy",
                scale=1,
                meaning="higher means more of the tool calls were appropriate for the request",
                example="The score is 0.5 because the weather tool was needed for the request, "
                "but the calendar tool was called without being asked for.",
                findings=lambda ctx: as_json(ctx.results.analyze_step_result),
            )
        )
    )


CATALOG_ENTRY = PrebuiltScorer(
    SCORER_ID,
    "Tool Call Accuracy (LLM)",
    DESCRIPTION,
    create_tool_call_accuracy_scorer_llm,
    calls_judge=True,
    compares=COMPARES[SCORER_ID],
    options_model=ToolCallAccuracyOptions,
)
