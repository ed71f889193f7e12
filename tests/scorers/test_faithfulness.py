"""Faithfulness (`faithfulness-scorer`) through the real pipeline."""

from __future__ import annotations

from typing import Any

import pytest

from core import ScorerConfigError
from core.scorers._context import MissingInputError
from core.scorers.faithfulness import create_faithfulness_scorer, faithfulness_score

ANSWERS = {
    "preprocess": {"claims": ["Paris is the capital.", "Paris has 9M people."]},
    "analyze": {
        "verdicts": [
            {"verdict": "yes", "reason": "Stated."},
            {"verdict": "unsure", "reason": "Not in the context."},
        ]
    },
}
RUN = {
    "input": "What is the capital of France?",
    "output": "Paris is the capital. It has 9M people.",
    "request_context": {
        "context": ["Paris is the capital of France.", "The Seine runs through it."]
    },
}


def test_end_to_end(harness: Any) -> None:
    result = harness.check_end_to_end(create_faithfulness_scorer(harness.judge), ANSWERS, **RUN)
    assert result.score == 0.5
    extract, analyze, _ = harness.server.prompts()
    assert "Paris is the capital. It has 9M people." in extract
    assert "[0] Paris is the capital of France.\n[1] The Seine runs through it." in analyze
    assert "Paris has 9M people." in analyze


def test_judge_faults(harness: Any) -> None:
    harness.check_faults(create_faithfulness_scorer(harness.judge), ANSWERS, **RUN)


def test_missing_context_fails_before_any_judge_call(harness: Any) -> None:
    error = harness.fail(create_faithfulness_scorer(harness.judge), [], input="q", output="a")
    assert (error.failed_step, error.completed_steps) == ("preprocess", [])
    assert isinstance(error.__cause__, MissingInputError)
    assert "needs context" in str(error) and "request_context={'context'" in str(error)
    assert harness.server.call_count == 0


def test_context_option_wins_over_the_item(harness: Any) -> None:
    scorer = create_faithfulness_scorer(harness.judge, context=["From the options."])
    harness.run(scorer, ANSWERS, **RUN)
    analyze = harness.server.prompts()[1]
    assert "[0] From the options." in analyze and "Seine" not in analyze


def test_item_context_as_a_list_or_tool_results(harness: Any) -> None:
    scorer = create_faithfulness_scorer(harness.judge)
    harness.run(scorer, ANSWERS, input="q", output="a", request_context=["Listed piece."])
    assert "[0] Listed piece." in harness.server.prompts()[1]
    harness.server.reset()
    output = [
        {
            "role": "assistant",
            "content": {
                "content": "It is 21 degrees.",
                "toolInvocations": [
                    {
                        "toolCallId": "1",
                        "toolName": "weather",
                        "state": "result",
                        "result": {"t": 21},
                    }
                ],
            },
        }
    ]
    harness.run(scorer, ANSWERS, input="q", output=output)
    extract, analyze, _ = harness.server.prompts()
    assert "It is 21 degrees." in extract and '[0] {"t": 21}' in analyze


def test_empty_context_option_is_refused() -> None:
    with pytest.raises(ScorerConfigError, match="context"):
        create_faithfulness_scorer("openai/x", {"context": []})


def test_only_an_exact_yes_counts() -> None:
    verdicts = [{"verdict": v, "reason": ""} for v in ("yes", "YES", " yes", "no", "unsure")]
    assert faithfulness_score(verdicts, scale=5) == 1
    assert faithfulness_score([]) == 0
