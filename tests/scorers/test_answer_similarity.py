"""Answer similarity (`answer-similarity-scorer`) through the real pipeline."""

from __future__ import annotations

from typing import Any

from core.scorers.answer_similarity import (
    AnswerSimilarityOptions,
    answer_similarity_score,
    create_answer_similarity_scorer,
)


def match(kind: str) -> dict[str, Any]:
    return {
        "groundTruthUnit": "g",
        "outputUnit": None if kind == "missing" else "o",
        "matchType": kind,
        "explanation": "m",
    }


ANSWERS = {
    "preprocess": {
        "outputUnits": ["Paris"],
        "groundTruthUnits": ["Paris is the capital", "2M people"],
    },
    "analyze": {
        "matches": [match("Semantic"), match("missing")],
        "extraInOutput": [],
        "contradictions": [],
    },
}
RUN = {
    "input": "What is the capital of France?",
    "output": "Paris.",
    "ground_truth": "The capital of France is Paris, with about 2 million inhabitants.",
}


def test_end_to_end(harness: Any) -> None:
    result = harness.check_end_to_end(
        create_answer_similarity_scorer(harness.judge), ANSWERS, **RUN
    )
    assert result.score == 0.27  # (0.8 - 0.15) / 2.4
    units, analyze, _ = harness.server.prompts()
    assert "<response>\nParis.\n</response>" in units
    assert "about 2 million inhabitants." in units
    assert "2M people" in analyze and "(2 in total)" in analyze


def test_judge_faults(harness: Any) -> None:
    harness.check_faults(create_answer_similarity_scorer(harness.judge), ANSWERS, **RUN)


def test_missing_ground_truth_fails_before_any_judge_call(harness: Any) -> None:
    scorer = create_answer_similarity_scorer(harness.judge)
    error = harness.fail(scorer, [], input="q", output="a")
    assert (error.failed_step, error.completed_steps) == ("preprocess", [])
    assert str(error).startswith(
        "Scorer Run Failed: Answer Similarity Scorer requires ground truth to be provided"
    )
    assert harness.server.call_count == 0


def test_missing_ground_truth_scores_zero_when_not_required(harness: Any) -> None:
    scorer = create_answer_similarity_scorer(harness.judge, require_ground_truth=False)
    assert harness.run(scorer, ANSWERS, input="q", output="a").score == 0


def test_score_formula_with_partial_options() -> None:
    analysis = {
        "matches": [match("exact"), match("partial")],
        "extraInOutput": ["x", "y"],
        "contradictions": [],
    }
    assert answer_similarity_score(analysis) == 0.57  # (1.2 + 0.4) / 2.4 - 0.1
    options = AnswerSimilarityOptions.model_validate({"exactMatchBonus": 0, "scale": 10})
    assert options.semantic_threshold == 0.8
    assert answer_similarity_score(analysis, options) == 6  # (1 + 0.4) / 2 - 0.1
    contradicted = {
        **analysis,
        "contradictions": [{"outputUnit": "o", "groundTruthUnit": "g", "explanation": "e"}],
    }
    assert answer_similarity_score(contradicted) == 0
    assert answer_similarity_score({"matches": []}) == 0
