"""Content similarity: Mastra's numbers to 1e-9, and its step results."""

from __future__ import annotations

from typing import Any

import pytest

from core.scorers import create_content_similarity_scorer
from core.scorers.content_similarity import dice_similarity

from ._vectors import as_messages, vector_cases


def _scorer_for(options: dict[str, Any]) -> Any:
    """Mastra replaces its defaults with any options object given (omitted keys are falsy);
    the vectors' options are mapped to our keyword arguments with that meaning."""
    if not options:
        return create_content_similarity_scorer()
    return create_content_similarity_scorer(
        ignore_case=bool(options.get("ignoreCase")),
        ignore_whitespace=bool(options.get("ignoreWhitespace")),
    )


@pytest.mark.parametrize("case", vector_cases("content-similarity"))
def test_mastra_vector(case: dict[str, Any]) -> None:
    result = _scorer_for(case["options"]).run_sync(
        input=as_messages(case["input"], "user"), output=as_messages(case["output"], "assistant")
    )
    assert result.score == pytest.approx(case["expected_score"], abs=1e-9)
    assert result.preprocess_step_result == case["expected_intermediate"]["preprocessStepResult"]


def test_python_defaults_are_merged_not_replaced() -> None:
    """Unlike Mastra, giving only ignore_whitespace keeps case folding on (documented)."""
    scorer = create_content_similarity_scorer(ignore_whitespace=True)
    assert scorer.run_sync(input="The Quick Fox", output="the quick fox").score == 1.0


@pytest.mark.parametrize(
    ("first", "second", "expected"),
    [
        ("", "", 1.0),
        ("a", "ab", 0.0),
        ("aaaa", "aa", 0.5),
        ("a b c d", "abcd", 1.0),  # whitespace never counts
        ("night", "nacht", 0.25),
    ],
)
def test_dice(first: str, second: str, expected: float) -> None:
    assert dice_similarity(first, second) == expected


def test_astral_characters_count_as_two_utf16_units() -> None:
    # "a😀b" is 4 UTF-16 units in JavaScript: bigrams a+hi, hi+lo, lo+b.
    assert dice_similarity("a😀b", "a😀c") == pytest.approx(2 * 2 / (4 + 4 - 2))


def test_identity() -> None:
    assert create_content_similarity_scorer().id == "content-similarity-scorer"
