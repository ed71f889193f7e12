"""Hallucination (`hallucination-scorer`) through the real pipeline."""

from __future__ import annotations

from typing import Any

from core.scorers.hallucination import create_hallucination_scorer, hallucination_score

ANSWERS = {
    "preprocess": {"claims": ["Curie won in 1903.", "Curie won in Chemistry in 1903."]},
    "analyze": {
        "verdicts": [
            {"statement": "Curie won in 1903.", "verdict": "no", "reason": "Supported."},
            {
                "statement": "Curie won in Chemistry in 1903.",
                "verdict": "yes",
                "reason": "Physics.",
            },
        ]
    },
}
RUN = {
    "input": "When did Curie win?",
    "output": "Curie won in 1903, in Chemistry.",
    "request_context": {"context": ["Marie Curie won the Nobel Prize in Physics in 1903."]},
}


def test_end_to_end(harness: Any) -> None:
    result = harness.check_end_to_end(create_hallucination_scorer(harness.judge), ANSWERS, **RUN)
    assert result.score == 0.5
    extract, analyze, reason = harness.server.prompts()
    assert "Curie won in 1903, in Chemistry." in extract
    assert "[0] Marie Curie won the Nobel Prize in Physics in 1903." in analyze
    assert "higher is worse" in reason


def test_judge_faults(harness: Any) -> None:
    harness.check_faults(create_hallucination_scorer(harness.judge), ANSWERS, **RUN)


def test_missing_context_fails_before_any_judge_call(harness: Any) -> None:
    error = harness.fail(create_hallucination_scorer(harness.judge), [], input="q", output="a")
    assert (error.failed_step, error.completed_steps) == ("preprocess", [])
    assert "Hallucination Scorer needs context" in str(error)
    assert harness.server.call_count == 0


def test_get_context_wins_and_is_asked_per_step(harness: Any) -> None:
    asked: list[str] = []

    async def get_context(ctx: Any, step: str) -> list[str]:
        asked.append(step)
        return [f"Dynamic context for {ctx.run.input}."]

    scorer = create_hallucination_scorer(harness.judge, context=["static"], get_context=get_context)
    harness.run(scorer, ANSWERS, input="Curie", output="a")
    assert asked == ["analyze", "generateReason"]
    analyze, reason = harness.server.prompts()[1:]
    assert "[0] Dynamic context for Curie." in analyze and "static" not in analyze
    assert "Dynamic context for Curie." in reason


def test_get_context_without_answer_fails_the_analyze_step(harness: Any) -> None:
    scorer = create_hallucination_scorer(harness.judge, get_context=lambda ctx, step: [])
    error = harness.fail(scorer, ['{"claims": ["x"]}'], input="q", output="a")
    assert (error.failed_step, error.completed_steps) == ("analyze", ["preprocess"])
    assert harness.server.call_count == 1


def test_only_an_exact_yes_counts_as_hallucinated() -> None:
    verdicts = [{"verdict": v} for v in ("yes", "Yes", "no")]
    assert hallucination_score(verdicts, scale=3) == 1
    assert hallucination_score([]) == 0
