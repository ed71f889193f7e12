"""Context precision (`context-precision-scorer`) through the real pipeline."""

from __future__ import annotations

from typing import Any

from core.scorers.context_precision import (
    context_precision_score,
    create_context_precision_scorer,
)

CONTEXT = ["Exercise strengthens the heart.", "Gyms open at 6.", "Exercise lifts mood."]
ANSWERS = {
    "analyze": {
        "verdicts": [
            {"context_index": 2, "verdict": "yes", "reason": "Mood."},
            {"context_index": 0, "verdict": "yes", "reason": "Heart."},
            {"context_index": 1, "verdict": "no", "reason": "Opening hours."},
        ]
    }
}
RUN = {
    "input": "What are the benefits of exercise?",
    "output": "It improves heart health and mood.",
    "request_context": {"context": CONTEXT},
}


def test_end_to_end(harness: Any) -> None:
    scorer = create_context_precision_scorer(harness.judge)
    result = harness.check_end_to_end(scorer, ANSWERS, **RUN)
    assert result.score == 0.83  # sorted: yes, no, yes -> (1/1 + 2/3) / 2
    assert result.preprocess_step_result == {"context": CONTEXT}
    analyze = harness.server.prompts()[0]
    assert "[1] Gyms open at 6." in analyze and "(3 in total)" in analyze
    assert RUN["input"] in analyze and RUN["output"] in analyze


def test_judge_faults(harness: Any) -> None:
    harness.check_faults(create_context_precision_scorer(harness.judge), ANSWERS, **RUN)


def test_missing_context_fails_in_preprocess(harness: Any) -> None:
    scorer = create_context_precision_scorer(harness.judge)
    error = harness.fail(scorer, [], input="q", output="a")
    assert (error.failed_step, error.completed_steps) == ("preprocess", [])
    assert "context_extractor" in str(error) and "request_context" in str(error)
    assert harness.server.call_count == 0


def test_extractor_wins_and_may_be_async(harness: Any) -> None:
    async def extract(input: Any, output: Any) -> list[str]:
        return [f"About {input}"]

    scorer = create_context_precision_scorer(harness.judge, context_extractor=extract, scale=10)
    one = {"analyze": {"verdicts": [{"context_index": 0, "verdict": "yes", "reason": "r"}]}}
    result = harness.run(scorer, one, **RUN)
    assert result.score == 10
    assert "[0] About What are the benefits of exercise?" in harness.server.prompts()[0]


def test_extractor_with_no_context_fails(harness: Any) -> None:
    scorer = create_context_precision_scorer(harness.judge, context_extractor=lambda i, o: [])
    error = harness.fail(scorer, [], **RUN)
    assert error.failed_step == "preprocess"
    assert "No context available for evaluation" in str(error)


def test_mean_average_precision() -> None:
    verdicts = [{"context_index": i, "verdict": v} for i, v in enumerate(["no", " Yes", "yes"])]
    assert context_precision_score(verdicts) == 0.58  # (1/2 + 2/3) / 2
    assert context_precision_score([{"context_index": 0, "verdict": "no"}]) == 0
