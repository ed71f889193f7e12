"""Tool-call accuracy, LLM version (`llm-tool-call-accuracy-scorer`), through the real
pipeline."""

from __future__ import annotations

from typing import Any

import pytest

from core import ScorerConfigError
from core.scorers.tool_call_accuracy_llm import (
    create_tool_call_accuracy_scorer_llm,
    tool_call_accuracy_score,
    tool_calls,
)

TOOLS = [
    {"id": "weather-tool", "description": "Current weather of a city"},
    {"id": "calendar-tool", "description": "The user's agenda"},
]
OUTPUT = [
    {
        "role": "assistant",
        "content": {
            "content": "It is sunny in Paris.",
            "toolInvocations": [
                {
                    "toolCallId": "a",
                    "toolName": "weather-tool",
                    "state": "result",
                    "args": {"city": "Paris"},
                },
            ],
            "parts": [
                {
                    "type": "tool-invocation",
                    "toolInvocation": {
                        "toolCallId": "a",
                        "toolName": "weather-tool",
                        "state": "result",
                    },
                },
                {
                    "type": "tool-invocation",
                    "toolInvocation": {
                        "toolCallId": "b",
                        "toolName": "calendar-tool",
                        "state": "call",
                    },
                },
                {
                    "type": "tool-invocation",
                    "toolInvocation": {
                        "toolCallId": "c",
                        "toolName": "draft",
                        "state": "partial-call",
                    },
                },
            ],
        },
    }
]
ANSWERS = {
    "analyze": {
        "evaluations": [
            {"toolCalled": "weather-tool", "wasAppropriate": True, "reasoning": "Asked for."},
            {"toolCalled": "calendar-tool", "wasAppropriate": False, "reasoning": "Not asked."},
        ],
        "missingTools": [],
    }
}
RUN = {"input": "What is the weather in Paris?", "output": OUTPUT}


def test_end_to_end(harness: Any) -> None:
    scorer = create_tool_call_accuracy_scorer_llm(harness.judge, TOOLS)
    result = harness.check_end_to_end(scorer, ANSWERS, **RUN)
    assert result.score == 0.5
    assert result.preprocess_step_result["actualTools"] == ["weather-tool", "calendar-tool"]
    assert result.preprocess_step_result["hasToolCalls"] is True
    analyze = harness.server.prompts()[0]
    assert "weather-tool: Current weather of a city\ncalendar-tool: The user's agenda" in analyze
    assert '1. weather-tool with arguments {"city": "Paris"}' in analyze
    assert "2. calendar-tool" in analyze and "draft" not in analyze
    assert "<final_answer>\nIt is sunny in Paris." in analyze


def test_judge_faults(harness: Any) -> None:
    harness.check_faults(create_tool_call_accuracy_scorer_llm(harness.judge, TOOLS), ANSWERS, **RUN)


@pytest.mark.parametrize(
    ("run", "missing"),
    [({"input": "", "output": OUTPUT}, "user's request"), ({"input": "q", "output": []}, "output")],
)
def test_empty_input_or_output_fails_in_preprocess(
    harness: Any, run: dict[str, Any], missing: str
) -> None:
    error = harness.fail(create_tool_call_accuracy_scorer_llm(harness.judge, TOOLS), [], **run)
    assert (error.failed_step, error.completed_steps) == ("preprocess", [])
    assert missing in str(error)


def test_no_call_is_judged_too(harness: Any) -> None:
    scorer = create_tool_call_accuracy_scorer_llm(harness.judge, TOOLS)
    missed = {"analyze": {"evaluations": [], "missingTools": ["weather-tool"]}}
    result = harness.run(scorer, missed, input="Weather in Paris?", output="I don't know.")
    assert result.score == 0 and result.preprocess_step_result["hasToolCalls"] is False
    assert "(no tool was called)" in harness.server.prompts()[0]


def test_tool_calls_and_score() -> None:
    assert [call["toolCallId"] for call in tool_calls(OUTPUT)] == ["a", "b"]
    assert tool_calls("plain text") == []
    assert tool_call_accuracy_score({"evaluations": [], "missingTools": []}) == 1
    three = [{"wasAppropriate": flag} for flag in (True, True, False)]
    assert tool_call_accuracy_score({"evaluations": three}) == 0.67


def test_bad_tool_lists_are_refused() -> None:
    with pytest.raises(ScorerConfigError, match="available_tools"):
        create_tool_call_accuracy_scorer_llm("openai/x", "weather-tool")
    with pytest.raises(ScorerConfigError, match="'id'"):
        create_tool_call_accuracy_scorer_llm("openai/x", [{"description": "no id"}])
