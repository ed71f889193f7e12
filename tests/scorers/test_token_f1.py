"""Token F1: SQuAD's word-overlap F1 on normalised tokens, best over acceptable answers."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from core.scorers import create_token_f1_scorer
from core.scorers.exact_match import normalise_answer
from core.scorers.token_f1 import token_f1

SCORER = create_token_f1_scorer()


def _reference_f1(output: str, truth: str) -> float:
    """The textbook formula, written independently of the scorer."""
    predicted, gold = normalise_answer(output).split(), normalise_answer(truth).split()
    if not predicted or not gold:
        return float(predicted == gold)
    common = sum((Counter(predicted) & Counter(gold)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(predicted), common / len(gold)
    return 2 * precision * recall / (precision + recall)


@pytest.mark.parametrize(
    ("output", "truth", "expected"),
    [
        ("The Eiffel Tower", "eiffel tower!", 1.0),
        ("the big Eiffel Tower", "Eiffel Tower in Paris", 2 * (2 / 3) * (2 / 4) / (2 / 3 + 2 / 4)),
        ("Rome", "Paris", 0.0),
        ("paris paris", "paris", 2 * 0.5 * 1.0 / 1.5),  # repeated tokens count as often
        ("paris paris", "paris paris london", 2 * 1.0 * (2 / 3) / (1 + 2 / 3)),
        ("the", "a an", 1.0),  # both empty after normalisation
        ("", "Paris", 0.0),  # one side empty
        ("Paris", "the", 0.0),
    ],
)
def test_f1(output: str, truth: str, expected: float) -> None:
    result = SCORER.run_sync(output=output, ground_truth=truth)
    assert result.score == pytest.approx(expected)
    assert result.score == pytest.approx(_reference_f1(output, truth))


def test_best_of_several_answers_counts() -> None:
    result = SCORER.run_sync(
        output="Eiffel Tower", ground_truth=["Big Ben", "the Eiffel Tower in Paris", "Eiffel"]
    )
    assert result.score == pytest.approx(max(2 * 1 * (2 / 4) / 1.5, 2 * 0.5 * 1 / 1.5))
    assert result.analyze_step_result["bestMatch"] == 1
    assert token_f1("Eiffel Tower", ["Big Ben", "Eiffel"]) == pytest.approx(2 / 3)


def test_step_results_and_reason() -> None:
    result = SCORER.run_sync(output="the big Eiffel Tower", ground_truth="Eiffel Tower in Paris")
    assert result.preprocess_step_result == {
        "normalisedOutput": "big eiffel tower",
        "normalisedGroundTruths": ["eiffel tower in paris"],
        "outputTokenCount": 3,
        "groundTruthTokenCounts": [4],
    }
    (comparison,) = result.analyze_step_result["comparisons"]
    assert comparison["commonTokens"] == 2
    assert comparison["precision"] == pytest.approx(2 / 3)
    assert comparison["recall"] == pytest.approx(0.5)
    assert result.reason == (
        "2 shared token(s) between the output (3 tokens) and the ground truth (4 tokens):"
        " precision 0.67, recall 0.50, F1 0.57."
    )


def test_equally_good_answers_name_the_first() -> None:
    result = SCORER.run_sync(output="Paris", ground_truth=["paris", "Paris!"])
    assert result.analyze_step_result["bestMatch"] == 0


@pytest.mark.parametrize("ground_truth", [None, "", "  ", [], [" "]])
def test_missing_ground_truth_is_not_scorable(ground_truth: Any) -> None:
    result = SCORER.run_sync(output="Paris", ground_truth=ground_truth)
    assert result.score is None
    assert "no ground truth to compare with" in result.not_scorable.reason


def test_identity() -> None:
    assert SCORER.id == "token-f1-scorer"
    assert [step.name for step in SCORER.steps][-1] == "generateReason"
