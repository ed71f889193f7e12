"""Answer relevancy (`answer-relevancy-scorer`) through the real pipeline."""

from __future__ import annotations

from typing import Any

import pytest

from core import JudgeConfig, ScorerConfigError
from core.scorers.answer_relevancy import (
    INSTRUCTIONS,
    AnswerRelevancyOptions,
    answer_relevancy_score,
    create_answer_relevancy_scorer,
)

ANSWERS = {
    "preprocess": {"statements": ["Paris is the capital of France.", "I like cheese."]},
    "analyze": {
        "results": [
            {"result": "yes", "reason": "Answers it."},
            {"result": "unsure", "reason": "Off to the side."},
        ]
    },
}
RUN = {
    "input": [{"role": "user", "content": "What is the capital of France?"}],
    "output": [{"role": "assistant", "content": "Paris is the capital. I like cheese."}],
}


def test_end_to_end(harness: Any) -> None:
    result = harness.check_end_to_end(create_answer_relevancy_scorer(harness.judge), ANSWERS, **RUN)
    assert result.score == 0.65
    assert result.preprocess_step_result == ANSWERS["preprocess"]
    extract, analyze, reason = harness.server.prompts()
    assert "Paris is the capital. I like cheese." in extract
    assert '"What is the capital of France?"' in analyze  # the question, JSON-encoded
    assert "I like cheese." in analyze and "2 in total" in analyze
    assert 'Begin with "The score is 0.65 because"' in reason
    assert harness.server.requests[0]["messages"][0]["content"] == INSTRUCTIONS


def test_judge_faults(harness: Any) -> None:
    harness.check_faults(create_answer_relevancy_scorer(harness.judge), ANSWERS, **RUN)


def test_partial_options_merge_instead_of_nan(harness: Any) -> None:
    """Mastra deviation: {scale: 10} alone keeps uncertainty_weight 0.3 (Mastra: NaN)."""
    result = harness.run(
        create_answer_relevancy_scorer(harness.judge, {"scale": 10}), ANSWERS, **RUN
    )
    assert result.score == 6.5


def test_options_as_keywords_model_or_camel_case(harness: Any) -> None:
    for scorer in (
        create_answer_relevancy_scorer(harness.judge, uncertainty_weight=0.5),
        create_answer_relevancy_scorer(harness.judge, {"uncertaintyWeight": 0.5}),
        create_answer_relevancy_scorer(
            harness.judge, AnswerRelevancyOptions(uncertainty_weight=0.5)
        ),
    ):
        assert harness.run(scorer, ANSWERS, **RUN).score == 0.75


def test_bad_options_fail_at_construction() -> None:
    with pytest.raises(ScorerConfigError, match="uncertainty_weight"):
        create_answer_relevancy_scorer("openai/x", {"uncertainty_weight": 3})


def test_model_string_becomes_a_judge_with_the_scorer_instructions() -> None:
    scorer = create_answer_relevancy_scorer("openai/gpt-4o-mini")
    assert scorer.judge == JudgeConfig(model="openai/gpt-4o-mini", instructions=INSTRUCTIONS)
    assert scorer.id == "answer-relevancy-scorer"
    assert [(s.name, s.kind) for s in scorer.steps] == [
        ("preprocess", "prompt"),
        ("analyze", "prompt"),
        ("generateScore", "function"),
        ("generateReason", "prompt"),
    ]


def test_score_function() -> None:
    results = [{"result": r, "reason": ""} for r in (" YES ", "Unsure", "no", "maybe")]
    assert answer_relevancy_score(results) == 0.33  # (1 + 0.3) / 4 = 0.325 -> half up
    assert answer_relevancy_score([]) == 0
