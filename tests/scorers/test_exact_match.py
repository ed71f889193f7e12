"""Exact match: SQuAD's normalisation, lists of acceptable answers, and the not-scorable
cases."""

from __future__ import annotations

from typing import Any

import pytest

from core import ScorerRunError
from core.scorers import PREBUILT, ScorerInputError, create_exact_match_scorer
from core.scorers.exact_match import exact_match, normalise_answer

SCORER = create_exact_match_scorer()


@pytest.mark.parametrize(
    ("text", "normalised"),
    [
        ("The Eiffel Tower", "eiffel tower"),  # article and case
        ("  an   apple,  a pear ", "apple pear"),  # articles, punctuation, whitespace runs
        ("U.S.", "us"),  # punctuation is deleted, not replaced by a space
        ("state-of-the-art", "stateoftheart"),
        ("“Paris”!", "paris"),  # typographic quotes are punctuation too
        ("snake_case", "snakecase"),  # SQuAD counts "_" as punctuation
        ("Theory of the atom", "theory of atom"),  # whole-word articles only
        ("Cafe\u0301", "café"),  # NFC: a decomposed accent is kept as a letter
        ("50%", "50"),
        ("", ""),
    ],
)
def test_normalisation(text: str, normalised: str) -> None:
    assert normalise_answer(text) == normalised


@pytest.mark.parametrize(
    ("output", "ground_truth", "score"),
    [
        ("the Eiffel tower.", "Eiffel Tower", 1.0),
        ("Eiffel Tower in Paris", "Eiffel Tower", 0.0),
        ("Paris", ["London", "paris", "Rome"], 1.0),  # any acceptable answer
        ("Berlin", ["London", "Paris"], 0.0),
        ("42", 42, 1.0),  # a number is read as its text
        ("The", "a", 1.0),  # both normalise to nothing
    ],
)
def test_scores(output: str, ground_truth: Any, score: float) -> None:
    assert SCORER.run_sync(output=output, ground_truth=ground_truth).score == score


def test_step_results_and_reason_on_a_match() -> None:
    result = SCORER.run_sync(
        input="Which tower?", output="The Eiffel Tower!", ground_truth=["Big Ben", "eiffel tower"]
    )
    assert result.preprocess_step_result == {
        "normalisedOutput": "eiffel tower",
        "normalisedGroundTruths": ["big ben", "eiffel tower"],
    }
    assert result.analyze_step_result == {"matches": [False, True], "bestMatch": 1}
    assert result.score == 1.0
    assert "answer 2" in result.reason and "'eiffel tower'" in result.reason


def test_reason_on_no_match() -> None:
    result = SCORER.run_sync(output="Rome", ground_truth="Paris")
    assert result.analyze_step_result == {"matches": [False], "bestMatch": None}
    assert (
        result.reason == "The output 'rome' (normalised) does not equal the ground truth: 'paris'."
    )


@pytest.mark.parametrize("ground_truth", [None, "", "   ", [], ["", "  "]])
def test_missing_ground_truth_is_not_scorable(ground_truth: Any) -> None:
    result = SCORER.run_sync(input="q", output="Paris", ground_truth=ground_truth)
    assert result.score is None
    assert result.not_scorable.step == "preprocess"
    assert "no ground truth to compare with" in result.not_scorable.reason


def test_blank_answers_in_a_list_are_dropped() -> None:
    result = SCORER.run_sync(output="Paris", ground_truth=["", "Paris"])
    assert result.preprocess_step_result["normalisedGroundTruths"] == ["paris"]


def test_message_output_is_read_like_the_other_code_scorers() -> None:
    output = [{"role": "assistant", "content": "Paris"}]
    assert SCORER.run_sync(output=output, ground_truth="paris").score == 1.0


def test_bad_ground_truth_is_a_clear_error() -> None:
    with pytest.raises(ScorerRunError) as caught:
        SCORER.run_sync(output="Paris", ground_truth=[{"answer": "Paris"}])
    assert isinstance(caught.value.__cause__, ScorerInputError)
    assert "ground_truth[0]" in str(caught.value)
    assert "list of acceptable answers" in str(caught.value)


def test_pure_function() -> None:
    assert exact_match("An apple", ["apple", "pear"]) == 1.0
    assert exact_match("apples", ["apple"]) == 0.0


def test_identity_and_steps() -> None:
    assert SCORER.id == "exact-match-scorer"
    assert [step.name for step in SCORER.steps] == [
        "preprocess",
        "analyze",
        "generateScore",
        "generateReason",
    ]
    assert not SCORER.has_judge_steps
    entry = PREBUILT["exact-match-scorer"]
    assert entry.comparison() == "output vs ground truth" and not entry.calls_judge
    assert [need.column for need in entry.data_needs()] == ["ground_truth"]
