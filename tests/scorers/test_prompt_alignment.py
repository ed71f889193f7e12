"""Prompt alignment (`prompt-alignment-scorer`) through the real pipeline."""

from __future__ import annotations

import json
from typing import Any

import pytest

from core.scorers.prompt_alignment import (
    create_prompt_alignment_scorer_llm,
    prompt_alignment_score,
)

ANALYSIS = {
    "intentAlignment": {"score": 0.9, "primaryIntent": "x", "isAddressed": True, "reasoning": "m"},
    "requirementsFulfillment": {
        "requirements": [{"requirement": "lowercase", "isFulfilled": True, "reasoning": "m"}],
        "overallScore": 0.8,
    },
    "completeness": {"score": 0.7, "missingElements": [], "reasoning": "m"},
    "responseAppropriateness": {
        "score": 0.6,
        "formatAlignment": True,
        "toneAlignment": True,
        "reasoning": "m",
    },
    "overallAssessment": "m",
}
ANSWERS = {"analyze": ANALYSIS}
SYSTEM = "Always answer in lowercase haiku."
RUN = {
    "input": [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": "Write about rain."},
    ],
    "output": "soft rain on the roof",
}


def test_end_to_end(harness: Any) -> None:
    result = harness.check_end_to_end(
        create_prompt_alignment_scorer_llm(harness.judge), ANSWERS, **RUN
    )
    assert result.score == 0.8
    analyze = harness.server.prompts()[0]
    assert f"<system_prompt>\n{SYSTEM}" in analyze
    assert "<user_prompt>\nWrite about rain." in analyze
    assert "<response>\nsoft rain on the roof" in analyze


def test_judge_faults(harness: Any) -> None:
    harness.check_faults(create_prompt_alignment_scorer_llm(harness.judge), ANSWERS, **RUN)


@pytest.mark.parametrize(("mode", "expected"), [("user", 0.8), ("system", 0.79), ("both", 0.8)])
def test_mode_weights(mode: str, expected: float) -> None:
    assert prompt_alignment_score(ANALYSIS, mode, scale=1) == expected  # type: ignore[arg-type]
    assert prompt_alignment_score(None) == 0


def test_user_mode_shows_no_system_prompt(harness: Any) -> None:
    scorer = create_prompt_alignment_scorer_llm(harness.judge, evaluation_mode="user", scale=5)
    assert harness.run(scorer, ANSWERS, **RUN).score == 4
    assert SYSTEM not in harness.server.prompts()[0]


@pytest.mark.parametrize(
    ("mode", "run", "missing"),
    [
        (
            "user",
            {"input": [{"role": "system", "content": "s"}], "output": "a"},
            "the user's prompt",
        ),
        ("system", {"input": "q", "output": "a"}, "a system prompt"),
        ("both", {"input": None, "output": "a"}, "a user prompt or a system prompt"),
        ("both", {"input": "q", "output": [{"role": "assistant", "content": " "}]}, "a response"),
    ],
)
def test_missing_text_fails_before_any_judge_call(
    harness: Any, mode: str, run: dict[str, Any], missing: str
) -> None:
    scorer = create_prompt_alignment_scorer_llm(harness.judge, evaluation_mode=mode)
    error = harness.fail(scorer, [], **run)
    assert (error.failed_step, error.completed_steps) == ("analyze", [])
    assert f"needs {missing}" in str(error)
    assert harness.server.call_count == 0


def test_system_prompt_from_mastra_agent_input_and_history(harness: Any) -> None:
    agent_input = {
        "inputMessages": [{"role": "user", "content": "And now?"}],
        "rememberedMessages": [{"role": "user", "content": f"old {index}"} for index in range(4)],
        "systemMessages": [{"role": "system", "content": SYSTEM}],
        "taggedSystemMessages": {},
    }
    scorer = create_prompt_alignment_scorer_llm(
        harness.judge,
        evaluation_mode="system",
        include_conversation_history={"maxMessages": 2},
    )
    harness.run(scorer, ANSWERS, input=agent_input, output="ok")
    analyze = harness.server.prompts()[0]
    assert f"<system_prompt>\n{SYSTEM}" in analyze
    assert "user: old 2\nuser: old 3" in analyze and "old 1" not in analyze


def test_out_of_range_ratings_are_refused(harness: Any) -> None:
    bad = {**ANALYSIS, "completeness": {**ANALYSIS["completeness"], "score": 7}}
    scorer = create_prompt_alignment_scorer_llm(harness.judge)
    error = harness.fail(scorer, [json.dumps(bad)] * 2, **RUN)  # the answer, then the retry
    assert error.failed_step == "analyze"
    assert "completeness.score" in str(error)


def test_both_mode_without_a_system_prompt_says_so(harness: Any) -> None:
    scorer = create_prompt_alignment_scorer_llm(harness.judge)
    assert harness.run(scorer, ANSWERS, input="Write about rain.", output="rain").score == 0.8
    assert "<system_prompt>\n(none: judge the user's prompt)" in harness.server.prompts()[0]
