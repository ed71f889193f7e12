"""Trajectory accuracy, LLM version (`llm-trajectory-accuracy-scorer`), through the real
pipeline."""

from __future__ import annotations

from typing import Any

from core.scorers.trajectory_accuracy_llm import (
    create_trajectory_accuracy_scorer_llm,
    format_trajectory,
    trajectory_accuracy_score,
)


def evaluation(name: str, necessary: bool, in_order: bool) -> dict[str, Any]:
    return {"stepName": name, "wasNecessary": necessary, "wasInOrder": in_order, "reasoning": "m"}


ANSWERS = {
    "analyze": {
        "stepEvaluations": [evaluation("search", True, True), evaluation("summarize", True, True)],
        "missingSteps": [],
        "extraSteps": [],
        "overallAssessment": "m",
    }
}
TRAJECTORY = {
    "steps": [
        {"stepType": "tool_call", "name": "search", "toolArgs": {"q": "solar"}, "success": True},
        {
            "stepType": "workflow_step",
            "name": "summarize",
            "children": [{"stepType": "model_generation", "name": "draft"}],
        },
    ]
}
RUN = {"input": "Search then summarize", "output": TRAJECTORY}


def test_end_to_end(harness: Any) -> None:
    scorer = create_trajectory_accuracy_scorer_llm(
        harness.judge, expected_trajectory=["search", "summarize"]
    )
    result = harness.check_end_to_end(scorer, ANSWERS, **RUN)
    assert result.score == 0.9  # Mastra's maximum
    assert result.preprocess_step_result["actualStepCount"] == 2
    analyze = harness.server.prompts()[0]
    assert '1. search [tool_call] args={"q": "solar"}' in analyze
    assert "2. summarize [workflow_step]\n  2.1. draft [model_generation]" in analyze
    assert "<expected_trajectory>\n1. search\n2. summarize" in analyze


def test_judge_faults(harness: Any) -> None:
    harness.check_faults(create_trajectory_accuracy_scorer_llm(harness.judge), ANSWERS, **RUN)


def test_expected_trajectory_from_the_item(harness: Any) -> None:
    scorer = create_trajectory_accuracy_scorer_llm(harness.judge)
    harness.run(
        scorer,
        ANSWERS,
        **RUN,
        request_context={"expectedTrajectory": {"steps": [{"name": "lookup"}]}},
    )
    assert "<expected_trajectory>\n1. lookup" in harness.server.prompts()[0]
    harness.server.reset()
    harness.run(scorer, ANSWERS, **RUN, ground_truth="search, then summarize")
    assert "<expected_trajectory>\nsearch, then summarize" in harness.server.prompts()[0]
    harness.server.reset()
    harness.run(scorer, ANSWERS, **RUN)
    assert "There is no expected trajectory" in harness.server.prompts()[0]


def test_tool_calls_of_messages_become_steps() -> None:
    messages = [
        {
            "role": "assistant",
            "content": {
                "toolInvocations": [
                    {
                        "toolCallId": "1",
                        "toolName": "search",
                        "state": "result",
                        "args": {"q": "x"},
                    },
                    {"toolCallId": "2", "toolName": "fetch", "state": "output-error"},
                    {"toolCallId": "3", "toolName": "draft", "state": "partial-call"},
                ]
            },
        }
    ]
    text, count = format_trajectory(messages)
    assert text == '1. search [tool_call] args={"q": "x"}\n2. fetch [tool_call] (failed)'
    assert count == 2
    assert format_trajectory([]) == ("(no steps)", 0)


def test_score_rules() -> None:
    partly = {
        "stepEvaluations": [evaluation("a", True, True), evaluation("b", False, False)],
        "missingSteps": ["c"],
    }
    assert trajectory_accuracy_score(partly) == 0.42  # 0.3 + 0.15 - 0.1/3
    assert trajectory_accuracy_score({"stepEvaluations": [], "missingSteps": ["x"]}) == 0
    assert trajectory_accuracy_score({"stepEvaluations": [], "extraSteps": ["x"]}) == 0.5
    assert trajectory_accuracy_score({"stepEvaluations": []}) == 1
