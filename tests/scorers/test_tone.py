"""Tone: Mastra's numbers to 1e-9, in both modes, and the sentiment rules behind them."""

from __future__ import annotations

from typing import Any

import pytest

from core import ScorerConfigError
from core.scorers import create_tone_scorer
from core.scorers.tone import LEXICON, sentiment_comparative, tone_analysis

from ._vectors import as_messages, vector_cases


@pytest.mark.parametrize("case", vector_cases("tone"))
def test_mastra_vector(case: dict[str, Any]) -> None:
    scorer = create_tone_scorer(reference_tone=case["options"].get("referenceTone"))
    result = scorer.run_sync(
        input=as_messages(case["input"], "user"), output=as_messages(case["output"], "assistant")
    )
    assert result.score == pytest.approx(case["expected_score"], abs=1e-9)
    expected = case["expected_intermediate"]["preprocessStepResult"]
    assert result.preprocess_step_result.keys() == expected.keys()
    for key, value in expected.items():
        assert result.preprocess_step_result[key] == pytest.approx(value, abs=1e-9), key


def test_lexicon_is_afinn_165_plus_emoji() -> None:
    assert len(LEXICON) == 3382 + 767
    assert LEXICON["good"] == 3
    assert LEXICON["😍"] == 3


@pytest.mark.parametrize(
    ("text", "comparative"),
    [
        ("", 0.0),
        ("good", 3.0),
        ("not good", -1.5),  # one-token negation
        ("good, bad", 0.0),
        ("Love!!", 3.0),
        ("good\tday", 0.0),  # a single tab stays inside the token
    ],
)
def test_comparative(text: str, comparative: float) -> None:
    assert sentiment_comparative(text) == comparative


def test_input_is_ignored() -> None:
    scorer = create_tone_scorer()
    assert scorer.run_sync(input="I hate this", output="Nice.").score == 1.0


def test_reference_tone_must_be_text() -> None:
    with pytest.raises(TypeError, match="reference_tone must be a string"):
        create_tone_scorer(reference_tone=3)  # type: ignore[arg-type]


# --- Reference: the input (default) or the ground truth -------------------------------------


def test_ground_truth_reference_is_each_items_reference_tone() -> None:
    swinging = "I love this wonderful day. I hate this awful, terrible mess!"
    default = create_tone_scorer().run_sync(input="How was it?", output=swinging)
    assert default.score < 0.5  # the sentiment swings from sentence to sentence
    scorer = create_tone_scorer(reference="ground_truth")
    result = scorer.run_sync(input="How was it?", output=swinging, ground_truth=swinging)
    assert result.score == 1.0
    assert result.preprocess_step_result["referenceSentiment"] == sentiment_comparative(swinging)
    assert "ground truth" in result.reason


def test_ground_truth_reference_scores_a_different_tone_lower() -> None:
    scorer = create_tone_scorer(reference="ground_truth")
    result = scorer.run_sync(output="This is great", ground_truth="This is terrible")
    assert result.score == pytest.approx(
        tone_analysis("This is great", "This is terrible")["score"]
    )
    assert result.score < 1.0


@pytest.mark.parametrize("ground_truth", [None, "", "  "])
def test_missing_ground_truth_is_not_scorable(ground_truth: Any) -> None:
    result = create_tone_scorer(reference="ground_truth").run_sync(
        output="Nice.", ground_truth=ground_truth
    )
    assert result.score is None
    assert "no ground truth to compare with" in result.not_scorable.reason


def test_reference_tone_and_ground_truth_reference_exclude_each_other() -> None:
    with pytest.raises(ScorerConfigError, match="not both"):
        create_tone_scorer(reference_tone="Great!", reference="ground_truth")


def test_invalid_reference_is_refused_at_construction() -> None:
    with pytest.raises(ScorerConfigError, match="create_tone_scorer"):
        create_tone_scorer(reference="output")  # type: ignore[arg-type]
