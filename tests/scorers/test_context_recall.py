"""Context recall (`context-recall-scorer`) through the real pipeline."""

from __future__ import annotations

from typing import Any

from core.scorers.context_recall import context_recall_score, create_context_recall_scorer

ANSWERS = {
    "preprocess": {"claims": ["The Nile flows through Egypt.", "The Nile is 6,650 km long."]},
    "analyze": {
        "verdicts": [
            {"verdict": "yes", "reason": "Piece 0."},
            {"verdict": "no", "reason": "No length."},
        ]
    },
}
RUN = {
    "input": "Tell me about the Nile",
    "output": "It flows through Egypt.",
    "ground_truth": "The Nile flows through Egypt and is 6,650 km long.",
    "request_context": {"context": ["The Nile flows through Egypt and Sudan."]},
}


def test_end_to_end(harness: Any) -> None:
    result = harness.check_end_to_end(create_context_recall_scorer(harness.judge), ANSWERS, **RUN)
    assert result.score == 0.5
    extract, analyze, _ = harness.server.prompts()
    assert "<expected_answer>\nThe Nile flows through Egypt and is 6,650 km long." in extract
    assert "[0] The Nile flows through Egypt and Sudan." in analyze


def test_judge_faults(harness: Any) -> None:
    harness.check_faults(create_context_recall_scorer(harness.judge), ANSWERS, **RUN)


def test_missing_context_fails_before_any_judge_call(harness: Any) -> None:
    scorer = create_context_recall_scorer(harness.judge)
    error = harness.fail(scorer, [], input="q", output="a", ground_truth="gt")
    assert (error.failed_step, error.completed_steps) == ("preprocess", [])
    assert "Context Recall Scorer needs context" in str(error)
    assert harness.server.call_count == 0


def test_no_ground_truth_scores_zero(harness: Any) -> None:
    run = {key: value for key, value in RUN.items() if key != "ground_truth"}
    result = harness.run(create_context_recall_scorer(harness.judge), ANSWERS, **run)
    assert result.score == 0
    assert "no ground truth" in harness.server.prompts()[2]


def test_structured_ground_truth_is_json(harness: Any) -> None:
    run = {**RUN, "ground_truth": {"river": "Nile", "countries": ["Egypt"]}}
    harness.run(create_context_recall_scorer(harness.judge), ANSWERS, **run)
    assert '{"river": "Nile", "countries": ["Egypt"]}' in harness.server.prompts()[0]


def test_claims_are_the_denominator() -> None:
    yes = {"verdict": " YES "}
    assert context_recall_score(["a", "b"], [yes, yes, yes], scale=4) == 4  # capped at 1
    assert context_recall_score(["a", "b", "c"], [yes]) == 0.33
    assert context_recall_score([], [yes]) == 0
