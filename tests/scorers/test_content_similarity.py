"""Content similarity: Mastra's numbers to 1e-9, and its step results."""

from __future__ import annotations

from typing import Any

import pytest

from core import ScorerConfigError
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


# --- Reference: the input (default) or the ground truth -------------------------------------

QUESTION = "Who is Luke Skywalker's father, according to Obi-Wan Kenobi?"
ANSWER = "No. I am your father."


def test_ground_truth_reference_scores_an_exact_answer_fully() -> None:
    default = create_content_similarity_scorer()
    scorer = create_content_similarity_scorer(reference="ground_truth")
    assert default.run_sync(input=QUESTION, output=ANSWER).score < 0.4
    result = scorer.run_sync(input=QUESTION, output=ANSWER, ground_truth="no. i am your FATHER.")
    assert result.score == 1.0
    assert result.preprocess_step_result["processedInput"] == "no. i am your father."
    assert "ground truth" in result.reason


def test_ground_truth_reference_keeps_the_other_options() -> None:
    scorer = create_content_similarity_scorer(ignore_case=False, reference="ground_truth")
    result = scorer.run_sync(input="x", output="Paris", ground_truth="paris")
    assert result.score == dice_similarity("paris", "Paris") < 1.0


@pytest.mark.parametrize("ground_truth", [None, "", " \t "])
def test_missing_ground_truth_is_not_scorable(ground_truth: Any) -> None:
    scorer = create_content_similarity_scorer(reference="ground_truth")
    result = scorer.run_sync(input=QUESTION, output=ANSWER, ground_truth=ground_truth)
    assert result.score is None
    assert "no ground truth to compare with" in result.not_scorable.reason


def test_default_reference_ignores_the_ground_truth() -> None:
    result = create_content_similarity_scorer().run_sync(
        input="abc", output="abc", ground_truth="xyz"
    )
    assert result.score == 1.0
    assert result.reason is None


def test_invalid_reference_is_refused_at_construction() -> None:
    with pytest.raises(ScorerConfigError, match="'input' or 'ground_truth'"):
        create_content_similarity_scorer(reference="truth")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("tab\tand\nnewline", "tab and newline"),
        ("bom\ufeffhere", "bom here"),  # JavaScript whitespace, not Python's
        ("sep\x1chere", "sep here"),  # Python whitespace, not JavaScript's
        ("aaaaaaa", "aaa"),
        ("abcabcabc", "cbacbacba"),
    ],
)
def test_dice_matches_a_plain_multiset_count(first: str, second: str) -> None:
    """The vectorised count against the textbook definition (JS whitespace removed)."""
    from collections import Counter

    from core.scorers._text import JS_WHITESPACE_RUN

    a, b = JS_WHITESPACE_RUN.sub("", first), JS_WHITESPACE_RUN.sub("", second)
    if a == b:
        expected = 1.0
    else:
        bigrams_a = Counter(a[i : i + 2] for i in range(len(a) - 1))
        bigrams_b = Counter(b[i : i + 2] for i in range(len(b) - 1))
        shared = sum((bigrams_a & bigrams_b).values())
        expected = 2 * shared / (len(a) + len(b) - 2)
    assert dice_similarity(first, second) == pytest.approx(expected)
