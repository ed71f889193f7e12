"""Completeness: Mastra's upstream assertions, and its coverage formula exactly."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from core import ScorerConfigError, ScorerRunError
from core.scorers import create_completeness_scorer
from core.scorers.completeness import coverage, extract_elements, is_covered

from ._vectors import as_messages, vector_cases

SCORER = create_completeness_scorer()

Check = Callable[[Any], bool]


def _missing(*words: str) -> Check:
    return lambda result: set(words) <= set(result.preprocess_step_result["missingElements"])


def _counts(input: int, output: int) -> Check:
    return lambda result: (
        result.preprocess_step_result["elementCounts"]
        == {
            "input": input,
            "output": output,
        }
    )


# Mastra's own test assertions (the vectors' `upstream_assertion`), one entry per case.
UPSTREAM: dict[str, list[Check]] = {
    "should return high score for identical text": [
        lambda r: r.score == pytest.approx(1, abs=5e-3)
    ],
    "should return lower score for simplified text missing elements": [
        lambda r: 0.5 < r.score < 1.0,
        _missing("brown", "lazy"),
    ],
    "should handle completely different texts": [
        lambda r: r.score < 0.3,
        lambda r: r.preprocess_step_result["elementCounts"]["input"] > 0,
        lambda r: r.preprocess_step_result["elementCounts"]["output"] > 0,
    ],
    "should handle both empty strings": [lambda r: r.score == 1, _counts(0, 0)],
    "should handle empty original string": [lambda r: r.score == 0],
    "should handle whitespace-only strings": [lambda r: r.score == 1, _counts(0, 0)],
    "should handle lists and enumerations": [lambda r: r.score < 0.8, _missing("oranges")],
    "should handle repeated elements": [lambda r: r.score > 0.7],
    "should handle long and multi-paragraph text": [lambda r: r.score > 0.5],
}

# Cases whose element sets differ from compromise's (the scores still agree), with the reason.
ELEMENT_DIFFERENCES = {
    "should handle repeated elements": "'cat cat cat cats': the final 'cats' follows a content"
    " word at the end of the clause, which the approximation reads as a verb ('cat'); compromise"
    " tags it as a plural noun.",
}


@pytest.mark.parametrize("case", vector_cases("completeness"))
def test_mastra_vector(case: dict[str, Any]) -> None:
    if case.get("expected_error"):
        with pytest.raises(ScorerRunError, match="Inputs cannot be null or undefined"):
            SCORER.run_sync(input=case["input"], output=case["output"])
        return
    result = SCORER.run_sync(
        input=as_messages(case["input"], "user"), output=as_messages(case["output"], "assistant")
    )
    for check in UPSTREAM.get(case["test_name"], []):
        assert check(result), case["upstream_assertion"]
    # Our approximation of compromise happens to give Mastra's score on every vector.
    assert result.score == pytest.approx(case["expected_score"], abs=1e-9)
    mastra = case["expected_intermediate"]["preprocessStepResult"]
    if case["test_name"] not in ELEMENT_DIFFERENCES:
        assert set(result.preprocess_step_result["inputElements"]) == set(mastra["inputElements"])
        assert set(result.preprocess_step_result["outputElements"]) == set(mastra["outputElements"])


@pytest.mark.parametrize(
    "case",
    [
        param
        for param in vector_cases("completeness")
        if param.values[0] is None or not param.values[0].get("expected_error")
    ],
)
def test_coverage_formula_on_mastra_elements(case: dict[str, Any]) -> None:
    mastra = case["expected_intermediate"]["preprocessStepResult"]
    assert coverage(mastra["inputElements"], mastra["outputElements"]) == case["expected_score"]


def test_every_upstream_assertion_is_encoded() -> None:
    names = {
        param.values[0]["test_name"]
        for param in vector_cases("completeness")
        if param.values[0]
        and param.values[0]["upstream_assertion"]
        and not param.values[0].get("expected_error")
    }
    assert names <= set(UPSTREAM)


@pytest.mark.parametrize(
    ("element", "candidates", "covered"),
    [
        ("cats", ["cat"], True),  # 3/4 = 0.75 > 0.6
        ("running", ["run"], False),  # 3/7
        ("international", ["nation"], False),  # 6/13
        ("cat", ["cats"], False),  # short elements need an exact match
        ("abcde", ["abc"], False),  # exactly 0.6 is not enough
        ("abcd", ["abcde"], True),  # the candidate may be the longer one
        ("model", ["model"], True),
    ],
)
def test_fuzzy_inclusion(element: str, candidates: list[str], covered: bool) -> None:
    assert is_covered(element, candidates) is covered


def test_coverage_empty_cases() -> None:
    assert coverage([], []) == 1.0
    assert coverage([], ["x"]) == 0.0
    assert coverage(["x"], []) == 0.0


@pytest.mark.parametrize(
    ("text", "elements"),
    [
        ("He has been running fast", ["he", "run", "fast"]),
        ("The sky is blue", ["the", "sky", "be", "blue"]),
        ("She didn't like it", ["she", "does", "not", "like", "it"]),
        ("We’re testing", ["we", "re", "test"]),
        ("Café Zürich", ["cafe", "zurich"]),
        ("apples, oranges", ["apples", "oranges"]),
    ],
)
def test_element_extraction(text: str, elements: list[str]) -> None:
    assert extract_elements(text) == elements


def test_step_results() -> None:
    result = SCORER.run_sync(input="The fox jumps", output="A fox")
    assert result.preprocess_step_result == {
        "inputElements": ["the", "fox", "jump"],
        "outputElements": ["a", "fox"],
        "missingElements": ["the", "jump"],
        "elementCounts": {"input": 3, "output": 2},
    }
    assert result.analyze_step_result is None
    assert result.score == pytest.approx(1 / 3)


def test_missing_output_raises() -> None:
    with pytest.raises(ScorerRunError, match="Inputs cannot be null or undefined"):
        SCORER.run_sync(input="question", output=None)


# --- Reference: the input (default) or the ground truth -------------------------------------

GT_SCORER = create_completeness_scorer(reference="ground_truth")
QUESTION = "Who is Luke Skywalker's father, according to Obi-Wan Kenobi, and what happened?"
ANSWER = "No. I am your father."


def test_ground_truth_reference_scores_an_exact_answer_fully() -> None:
    assert SCORER.run_sync(input=QUESTION, output=ANSWER).score < 0.3
    result = GT_SCORER.run_sync(input=QUESTION, output=ANSWER, ground_truth=ANSWER)
    assert result.score == 1.0
    assert result.preprocess_step_result["inputElements"] == extract_elements(ANSWER)
    assert "ground truth" in result.reason
    assert GT_SCORER.id == SCORER.id


@pytest.mark.parametrize("ground_truth", [None, "", "   "])
def test_missing_ground_truth_is_not_scorable(ground_truth: Any) -> None:
    result = GT_SCORER.run_sync(input=QUESTION, output=ANSWER, ground_truth=ground_truth)
    assert result.score is None
    assert result.not_scorable.step == "preprocess"
    assert "no ground truth to compare with" in result.not_scorable.reason


def test_ground_truth_reference_does_not_need_an_input() -> None:
    assert GT_SCORER.run_sync(input=None, output=ANSWER, ground_truth=ANSWER).score == 1.0
    with pytest.raises(ScorerRunError, match="Inputs cannot be null or undefined"):
        GT_SCORER.run_sync(input=QUESTION, output=None, ground_truth=ANSWER)


def test_default_reference_ignores_the_ground_truth() -> None:
    result = SCORER.run_sync(input="The fox jumps", output="A fox", ground_truth="The fox jumps")
    assert result.score == pytest.approx(1 / 3)
    assert result.reason is None


def test_invalid_reference_is_refused_at_construction() -> None:
    with pytest.raises(ScorerConfigError, match="create_completeness_scorer"):
        create_completeness_scorer(reference="expected")  # type: ignore[arg-type]
