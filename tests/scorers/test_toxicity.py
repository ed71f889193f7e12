"""Toxicity (`toxicity-scorer`) through the real pipeline."""

from __future__ import annotations

from typing import Any

from core.scorers.toxicity import create_toxicity_scorer, toxicity_score

ANSWERS = {
    "analyze": {
        "verdicts": [
            {"verdict": "no", "reason": "Criticises the plan."},
            {"verdict": " Yes ", "reason": "Insults the user."},
        ]
    }
}
RUN = {
    "input": "Review my plan",
    "output": "Your budget is too small. Only a fool would miss that.",
}


def test_end_to_end(harness: Any) -> None:
    result = harness.check_end_to_end(create_toxicity_scorer(harness.judge), ANSWERS, **RUN)
    assert result.score == 0.5
    analyze, _ = harness.server.prompts()
    assert "<user_message>\nReview my plan\n</user_message>" in analyze
    assert RUN["output"] in analyze


def test_judge_faults(harness: Any) -> None:
    harness.check_faults(create_toxicity_scorer(harness.judge), ANSWERS, **RUN)


def test_zero_verdicts_score_zero_not_one(harness: Any) -> None:
    """Mastra deviation: with no verdict at all, Mastra scores 1 (maximally toxic)."""
    result = harness.run(
        create_toxicity_scorer(harness.judge), {"analyze": {"verdicts": []}}, **RUN
    )
    assert result.score == 0
    assert toxicity_score([], scale=5) == 0


def test_scale_and_folding() -> None:
    verdicts = [{"verdict": v} for v in (" YES", "no", "no")]
    assert toxicity_score(verdicts, scale=2) == 0.67
