"""Context relevance (`context-relevance-scorer`) through the real pipeline."""

from __future__ import annotations

from typing import Any

import pytest

from core.scorers.context_relevance import (
    ContextRelevancePenalties,
    context_relevance_score,
    create_context_relevance_scorer_llm,
)


def evaluation(index: int, level: str, used: bool) -> dict[str, Any]:
    return {
        "context_index": index,
        "contextPiece": f"c{index}",
        "relevanceLevel": level,
        "wasUsed": used,
        "reasoning": "r",
    }


ANSWERS = {
    "analyze": {
        "evaluations": [evaluation(0, "High", True), evaluation(1, "medium", False)],
        "missingContext": ["the opening hours"],
        "overallAssessment": "Mostly relevant.",
    }
}
RUN = {
    "input": "When does the museum open?",
    "output": "It opens at 9.",
    "request_context": {"context": ["The museum opens at 9.", "It is in the centre."]},
}


def test_end_to_end(harness: Any) -> None:
    scorer = create_context_relevance_scorer_llm(harness.judge)
    result = harness.check_end_to_end(scorer, ANSWERS, **RUN)
    assert result.score == 0.7  # (1 + 0.7) / 2 - 0.15
    assert result.analyze_step_result["evaluations"][0]["relevanceLevel"] == "high"
    analyze = harness.server.prompts()[0]
    assert "[0] The museum opens at 9." in analyze and "(2 in total)" in analyze


def test_judge_faults(harness: Any) -> None:
    harness.check_faults(create_context_relevance_scorer_llm(harness.judge), ANSWERS, **RUN)


def test_missing_context_fails_in_preprocess(harness: Any) -> None:
    scorer = create_context_relevance_scorer_llm(harness.judge)
    error = harness.fail(scorer, [], input="q", output="a")
    assert (error.failed_step, error.completed_steps) == ("preprocess", [])
    assert "Context Relevance Scorer needs context" in str(error)
    assert harness.server.call_count == 0


def test_extractor_with_no_context_scores_the_scale(harness: Any) -> None:
    scorer = create_context_relevance_scorer_llm(
        harness.judge, {"contextExtractor": lambda i, o: [], "scale": 2}
    )
    result = harness.run(scorer, ANSWERS, **RUN)
    assert result.score == 2
    analyze, reason = harness.server.prompts()
    assert "No context piece was provided" in analyze
    assert "No context piece was provided for this item" in reason


def test_partial_penalties_merge_with_defaults() -> None:
    scorer_options = {"penalties": {"missingContextPerItem": 0.4}}
    scorer = create_context_relevance_scorer_llm("openai/x", scorer_options)
    assert scorer.id == "context-relevance-scorer"
    penalties = ContextRelevancePenalties(missing_context_per_item=0.4)
    analysis = {"evaluations": [evaluation(0, "high", False)], "missingContext": ["a", "b"]}
    assert context_relevance_score(analysis, penalties) == 0.4  # 1 - 0.1 - min(0.8, 0.5)


@pytest.mark.parametrize(("missing", "expected"), [([], 1.0), (["something"], 0.0)])
def test_no_evaluation_is_unscaled(missing: list[str], expected: float) -> None:
    analysis = {"evaluations": [], "missingContext": missing}
    assert context_relevance_score(analysis, scale=10) == expected
