"""Textual difference: Mastra's numbers to 1e-9 (ratio, confidence, changes, lengthDiff)."""

from __future__ import annotations

import difflib
from typing import Any

import pytest

from core import ScorerConfigError
from core.scorers import create_textual_difference_scorer
from core.scorers.textual_difference import count_changes, textual_difference

from ._vectors import as_messages, vector_cases

SCORER = create_textual_difference_scorer()


@pytest.mark.parametrize("case", vector_cases("textual-difference"))
def test_mastra_vector(case: dict[str, Any]) -> None:
    result = SCORER.run_sync(
        input=as_messages(case["input"], "user"), output=as_messages(case["output"], "assistant")
    )
    assert result.score == pytest.approx(case["expected_score"], abs=1e-9)
    expected = case["expected_intermediate"]["preprocessStepResult"]
    assert result.preprocess_step_result.keys() == expected.keys()
    for key, value in expected.items():
        assert result.preprocess_step_result[key] == pytest.approx(value, abs=1e-9), key
    assert result.analyze_step_result is None


@pytest.mark.parametrize("case", vector_cases("textual-difference"))
def test_legacy_difflib_numbers_are_python_difflib(case: dict[str, Any]) -> None:
    """The vectors' legacy numbers (Mastra before 0.14.4) are stdlib difflib's: a sanity check
    that the vectors are read right, not a feature of the scorer."""
    matcher = difflib.SequenceMatcher(None, case["input"], case["output"])
    assert matcher.ratio() == pytest.approx(case["legacy_difflib_ratio"], abs=1e-9)


@pytest.mark.parametrize(
    ("first", "second", "changes"),
    [
        ("same text", "same text", 0),
        ("a  b", "a b", 1),  # only whitespace differs
        ("a b", "a  b  c", 1),
        ("abc def ghi", "ghi def abc", 0),  # a reorder changes no word
        ("the the the cat", "the cat cat", 2),
        ("one two", "", 2),
    ],
)
def test_changes(first: str, second: str, changes: int) -> None:
    assert count_changes(first, second) == changes


def test_astral_characters_count_as_two_utf16_units() -> None:
    result = textual_difference("a😀", "a")
    assert result["lengthDiff"] == pytest.approx(2 / 3)
    assert result["ratio"] == pytest.approx(2 * 1 / (3 + 1))


# --- Reference: the input (default) or the ground truth -------------------------------------

GT_SCORER = create_textual_difference_scorer(reference="ground_truth")


def test_ground_truth_reference_scores_an_exact_answer_fully() -> None:
    question = "Who is Luke Skywalker's father, according to Obi-Wan Kenobi?"
    answer = "No. I am your father."
    assert SCORER.run_sync(input=question, output=answer).score < 0.5
    result = GT_SCORER.run_sync(input=question, output=answer, ground_truth=answer)
    assert result.score == 1.0
    assert result.preprocess_step_result == {
        "ratio": 1.0,
        "confidence": 1.0,
        "changes": 0,
        "lengthDiff": 0.0,
    }
    assert "ground truth" in result.reason


def test_ground_truth_reference_compares_ground_truth_to_output() -> None:
    result = GT_SCORER.run_sync(input="ignored", output="abcd", ground_truth="ab")
    assert result.preprocess_step_result == textual_difference("ab", "abcd")


@pytest.mark.parametrize("ground_truth", [None, "", "\n"])
def test_missing_ground_truth_is_not_scorable(ground_truth: Any) -> None:
    result = GT_SCORER.run_sync(input="q", output="a", ground_truth=ground_truth)
    assert result.score is None
    assert "no ground truth to compare with" in result.not_scorable.reason


def test_number_and_message_ground_truths_are_read_like_an_input() -> None:
    assert GT_SCORER.run_sync(input="q", output="42", ground_truth=42).score == 1.0
    message = {"role": "assistant", "content": "Paris"}
    assert GT_SCORER.run_sync(input="q", output="Paris", ground_truth=message).score == 1.0


def test_invalid_reference_is_refused_at_construction() -> None:
    with pytest.raises(ScorerConfigError, match="create_textual_difference_scorer"):
        create_textual_difference_scorer(reference="Input")  # type: ignore[arg-type]
