"""Noise sensitivity (`noise-sensitivity-scorer`) through the real pipeline."""

from __future__ import annotations

from typing import Any

from core.scorers.noise_sensitivity import (
    NoiseScoring,
    create_noise_sensitivity_scorer_llm,
    noise_sensitivity_score,
)

DIMENSIONS = [
    "content_accuracy",
    "completeness",
    "relevance",
    "consistency",
    "hallucination_resistance",
]


def analysis(
    levels: list[str], robustness: float, issues: list[str] | None = None
) -> dict[str, Any]:
    return {
        "dimensions": [
            {"dimension": name, "impactLevel": level, "specificChanges": "m", "noiseInfluence": "m"}
            for name, level in zip(DIMENSIONS, levels, strict=False)
        ],
        "overallAssessment": "m",
        "majorIssues": issues or [],
        "robustnessScore": robustness,
    }


ANSWERS = {"analyze": analysis(["none", "none", "Minimal", "none", "none"], 0.95)}
OPTIONS = {
    "baselineResponse": "Paris is the capital of France.",
    "noisyQuery": "What is the capital of France? I heard Lyon became the capital.",
    "noiseType": "misinformation",
}
RUN = {"input": "What is the capital of France?", "output": "Paris is the capital of France."}


def test_end_to_end(harness: Any) -> None:
    scorer = create_noise_sensitivity_scorer_llm(harness.judge, OPTIONS)
    result = harness.check_end_to_end(scorer, ANSWERS, **RUN)
    assert result.score == 0.95
    analyze = harness.server.prompts()[0]
    assert "<baseline_response>\nParis is the capital of France." in analyze
    assert "I heard Lyon became the capital." in analyze
    assert '"misinformation"' in analyze
    assert "<noisy_response>\nParis is the capital of France." in analyze


def test_judge_faults(harness: Any) -> None:
    harness.check_faults(
        create_noise_sensitivity_scorer_llm(harness.judge, OPTIONS), ANSWERS, **RUN
    )


def test_baseline_and_noisy_query_may_come_from_the_item(harness: Any) -> None:
    scorer = create_noise_sensitivity_scorer_llm(harness.judge)
    context = {"baselineResponse": "Per item baseline.", "noisyQuery": "Per item noisy query."}
    assert harness.run(scorer, ANSWERS, **RUN, request_context=context).score == 0.95
    assert "Per item baseline." in harness.server.prompts()[0]


def test_missing_baseline_fails_before_any_judge_call(harness: Any) -> None:
    scorer = create_noise_sensitivity_scorer_llm(harness.judge, noisy_query="q?")
    error = harness.fail(scorer, [], **RUN)
    assert (error.failed_step, error.completed_steps) == ("analyze", [])
    assert "needs baseline_response" in str(error) and "baselineResponse" in str(error)
    assert harness.server.call_count == 0


def test_empty_response_fails(harness: Any) -> None:
    scorer = create_noise_sensitivity_scorer_llm(harness.judge, OPTIONS)
    error = harness.fail(scorer, [], input="q", output="")
    assert "needs a response" in str(error)


def test_score_rules() -> None:
    severe = analysis(["moderate", "significant", "moderate", "minimal", "severe"], 0.9)
    assert noise_sensitivity_score(severe) == 0.49  # far from the dimensions: keep their mean
    assert noise_sensitivity_score(analysis(["none"] * 5, 0.8, ["a", "b", "c", "d"])) == 0.5
    assert noise_sensitivity_score(analysis([], 1.7, ["a"])) == 0.9  # clamped, then penalised
    partial = NoiseScoring.model_validate({"impactWeights": {"minimal": 0.5}})
    assert partial.impact_weights.none == 1.0
    assert noise_sensitivity_score(analysis(["minimal", "minimal"], 1), partial) == 0.5
