"""Rubric (`rubric-scorer`) through the real pipeline."""

from __future__ import annotations

from typing import Any

import pytest

from core import ScorerConfigError
from core.scorers.rubric import create_rubric_scorer, parse_rubric, rubric_score


def grade(criterion: str, satisfied: bool, required: bool) -> dict[str, Any]:
    return {"criterion": criterion, "satisfied": satisfied, "required": required, "reasoning": "m"}


ANSWERS = {
    "analyze": {
        "criteria": [
            grade("Mentions the deadline", True, True),
            grade("Friendly tone", False, False),
        ],
        "overallAssessment": "Meets the required criterion.",
    }
}
RUBRIC = "- Mentions the deadline\n\n2) Friendly tone\n"
RUN = {"input": "Write a reminder", "output": "The deadline is 5 May."}


def test_end_to_end(harness: Any) -> None:
    scorer = create_rubric_scorer(harness.judge, RUBRIC, scale=3)
    result = harness.check_end_to_end(scorer, ANSWERS, **RUN)
    assert result.score == 3
    analyze = harness.server.prompts()[0]
    assert "1. [required] Mentions the deadline\n2. [required] Friendly tone" in analyze
    assert result.reason.startswith("The score is 3 because every required criterion")
    assert "- FAIL (optional) Friendly tone: m" in result.reason


def test_judge_faults(harness: Any) -> None:
    harness.check_faults(create_rubric_scorer(harness.judge, RUBRIC), ANSWERS, **RUN)


def test_rubric_from_the_item(harness: Any) -> None:
    scorer = create_rubric_scorer(harness.judge)
    rubric = [
        {"description": "Mentions the deadline"},
        {"description": "Friendly tone", "required": False},
    ]
    result = harness.run(scorer, ANSWERS, **RUN, request_context={"rubric": rubric})
    assert result.score == 1
    assert "2. [optional] Friendly tone" in harness.server.prompts()[0]


def test_no_rubric_scores_one(harness: Any) -> None:
    empty = {"analyze": {"criteria": [], "overallAssessment": "No rubric provided."}}
    result = harness.run(create_rubric_scorer(harness.judge, scale=5), empty, **RUN)
    assert result.score == 1
    assert "No rubric was provided" in harness.server.prompts()[0]
    assert "no rubric was provided" in result.reason


def test_failed_required_criterion_is_named(harness: Any) -> None:
    answers = {
        "analyze": {
            "criteria": [grade("Mentions the deadline", False, True)],
            "overallAssessment": "m",
        }
    }
    result = harness.run(create_rubric_scorer(harness.judge, RUBRIC), answers, **RUN)
    assert result.score == 0
    assert "not satisfied: Mentions the deadline" in result.reason


def test_parse_rubric() -> None:
    parsed = parse_rubric("* one\n1. two\n[ ] three\n   \n• four")
    assert [c.description for c in parsed] == ["one", "two", "three", "four"]
    assert all(c.required for c in parsed)
    assert (
        parse_rubric(["a", {"id": "b", "description": "B", "required": False}])[1].required is False
    )
    with pytest.raises(ScorerConfigError):
        create_rubric_scorer("openai/x", [{"required": True}])


def test_gating() -> None:
    assert rubric_score([grade("a", False, False), grade("b", True, False)]) == 0  # none marked
    assert rubric_score([grade("a", True, True), grade("b", False, False)], scale=2) == 2
    assert rubric_score([]) == 1
