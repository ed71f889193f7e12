"""Textual difference: Mastra's numbers to 1e-9 (ratio, confidence, changes, lengthDiff)."""

from __future__ import annotations

import difflib
from typing import Any

import pytest

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
