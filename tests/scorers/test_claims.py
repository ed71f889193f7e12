"""The claim-check pipeline (core/scorers/_claims.py) that faithfulness, hallucination and
context recall share: the share of "yes" verdicts, and the steps in order against the fake
judge."""

from __future__ import annotations

from typing import Any

import pytest

from core.scorers._answers import Verdicts
from core.scorers._claims import claim_check_scorer, share_of_yes
from core.scorers._prompts import explain_step
from core.scorers.faithfulness import faithfulness_score
from core.scorers.hallucination import hallucination_score
from core.scoring import StepContext


@pytest.mark.parametrize(
    ("labels", "scale", "expected"),
    [
        ([], 1.0, 0.0),
        (["yes", "no", "yes"], 1.0, 0.67),
        (["Yes", " yes", "unsure"], 1.0, 0.0),  # exactly "yes" only
        (["yes", "no"], 10.0, 5.0),
    ],
)
def test_the_share_of_yes(labels: list[str], scale: float, expected: float) -> None:
    verdicts = [{"verdict": label, "reason": ""} for label in labels]
    assert share_of_yes(verdicts, scale) == expected


def test_faithfulness_and_hallucination_score_with_the_one_share() -> None:
    assert faithfulness_score is share_of_yes and hallucination_score is share_of_yes


def test_the_pipeline_lists_checks_scores_and_explains_in_order(harness: Any) -> None:
    seen: list[str] = []

    def claims_prompt(ctx: StepContext) -> str:
        seen.append("claims")
        return f"List the claims of: {ctx.run.output}"

    async def check_prompt(ctx: StepContext) -> str:
        seen.append("check")
        return f"Check: {ctx.results.preprocess_step_result['claims']}"

    def findings(ctx: StepContext) -> str:
        return str(ctx.results.analyze_step_result["verdicts"])

    scorer = claim_check_scorer(
        scorer_id="claims-test",
        name="Claims test",
        description="checks claims",
        judge=harness.judge.model_copy(update={"instructions": "You check claims."}),
        claims=("List them", claims_prompt),
        check=("Check them", Verdicts, check_prompt),
        generate_score=lambda ctx: share_of_yes(ctx.results.analyze_step_result["verdicts"]),
        reason=explain_step(metric="test", scale=1, meaning="m", example="e", findings=findings),
    )
    assert [(s.name, s.kind, s.description) for s in scorer.steps] == [
        ("preprocess", "prompt", "List them"),
        ("analyze", "prompt", "Check them"),
        ("generateScore", "function", None),
        ("generateReason", "prompt", "Explain the score"),
    ]
    answers = {
        "preprocess": {"claims": ["a", "b"]},
        "analyze": {
            "verdicts": [{"verdict": "yes", "reason": "r"}, {"verdict": "no", "reason": "r"}]
        },
    }
    result = harness.run(scorer, answers, input="q", output="a. b.")
    assert result.score == 0.5
    assert seen == ["claims", "check"]
    assert "Check: ['a', 'b']" in harness.server.prompts()[1]
