"""`ScorerRunError` from function steps: scorer-core §5 and §7 cases 24 and 27."""

from __future__ import annotations

import json
from typing import Any

import pytest

from core import MastraError, ScorerRunError, create_scorer


def failing_score(ctx: Any) -> float:
    raise RuntimeError("score generation failed")


def test_function_step_throwing_after_analyze() -> None:
    scorer = (
        create_scorer(id="s", description="d")
        .analyze(lambda ctx: {"status": False, "note": ""})
        .generate_score(failing_score)
    )
    with pytest.raises(ScorerRunError) as raised:
        scorer.run_sync(input="in", output="out", run_id="failure-run-id")
    error = raised.value
    assert isinstance(error, MastraError)
    assert error.id == "MASTR_SCORER_FAILED_TO_RUN_WORKFLOW_FAILED"
    assert (error.domain, error.category) == ("SCORER", "USER")
    assert error.details["failedStep"] == "generateScore"
    assert error.details["completedSteps"] == "analyze"
    assert error.details["steps"] == "analyze, generateScore"
    assert error.failed_step == "generateScore"
    assert error.completed_steps == ["analyze"]
    assert str(error) == "Scorer Run Failed: score generation failed"
    assert isinstance(error.__cause__, RuntimeError)
    assert error.result is not None
    snapshot = error.result.to_dict()
    assert snapshot == {
        "runId": "failure-run-id",
        "input": "in",
        "output": "out",
        "analyzeStepResult": {"status": False, "note": ""},
    }
    serialised = json.dumps(error.to_dict())
    assert "analyzeStepResult" not in serialised
    assert '"result"' not in serialised
    assert set(error.to_dict()) == {"message", "code", "domain", "category", "details", "cause"}
    assert error.to_dict()["cause"] == {
        "name": "RuntimeError",
        "message": "score generation failed",
    }


def test_first_step_throwing_leaves_no_snapshot() -> None:
    scorer = create_scorer(id="s", description="d").generate_score(failing_score)
    with pytest.raises(ScorerRunError) as raised:
        scorer.run_sync(output="x")
    assert raised.value.failed_step == "generateScore"
    assert raised.value.completed_steps == []
    assert raised.value.details["completedSteps"] == ""
    assert raised.value.result is None


def test_steps_that_returned_none_leave_no_snapshot() -> None:
    """Seed: a function step failing before any Scorer field was produced creates no result;
    a step that returned None produced nothing (issue 19)."""

    def failing_analyze(ctx: Any) -> None:
        raise RuntimeError("analyze failed")

    scorer = (
        create_scorer(id="s", description="d")
        .preprocess(lambda ctx: None)
        .analyze(failing_analyze)
        .generate_score(lambda ctx: 1)
    )
    with pytest.raises(ScorerRunError) as raised:
        scorer.run_sync(input="in", output="out", run_id="r")
    assert raised.value.failed_step == "analyze"
    assert raised.value.completed_steps == ["preprocess"]
    assert raised.value.result is None


def test_a_falsy_step_result_other_than_none_is_kept_in_the_snapshot() -> None:
    scorer = (
        create_scorer(id="s", description="d")
        .preprocess(lambda ctx: None)
        .analyze(lambda ctx: [])
        .generate_score(failing_score)
    )
    with pytest.raises(ScorerRunError) as raised:
        scorer.run_sync(output="out", run_id="r")
    assert raised.value.result is not None
    assert raised.value.result.to_dict() == {"runId": "r", "output": "out", "analyzeStepResult": []}


def test_reason_failing_after_a_score_of_zero_keeps_the_zero() -> None:
    def failing_reason(ctx: Any) -> str:
        raise ValueError("step reason failed")

    scorer = (
        create_scorer(id="s", description="d")
        .generate_score(lambda ctx: 0)
        .generate_reason(failing_reason)
    )
    with pytest.raises(ScorerRunError) as raised:
        scorer.run_sync(output="x")
    error = raised.value
    assert error.failed_step == "generateReason"
    assert error.completed_steps == ["generateScore"]
    assert error.result is not None and error.result.score == 0
    assert error.result.to_dict()["score"] == 0
    assert str(error) == "Scorer Run Failed: step reason failed"


async def test_async_step_failure_is_wrapped_the_same_way() -> None:
    async def preprocess(ctx: Any) -> dict[str, int]:
        return {"n": 1}

    async def score(ctx: Any) -> float:
        raise KeyError("missing")

    scorer = create_scorer(id="s", description="d").preprocess(preprocess).generate_score(score)
    with pytest.raises(ScorerRunError) as raised:
        await scorer.run(output="x")
    assert raised.value.failed_step == "generateScore"
    assert raised.value.completed_steps == ["preprocess"]
    assert raised.value.result is not None
    assert raised.value.result.preprocess_step_result == {"n": 1}
    assert isinstance(raised.value.__cause__, KeyError)


def test_empty_cause_message_falls_back() -> None:
    def silent(ctx: Any) -> float:
        raise RuntimeError()

    scorer = create_scorer(id="s", description="d").generate_score(silent)
    with pytest.raises(ScorerRunError, match=r"^Scorer Run Failed: Scorer workflow failed$"):
        scorer.run_sync(output="x")


def test_mastra_error_cause_serialises_as_mastra_error() -> None:
    def failing(ctx: Any) -> float:
        raise MastraError(id="MY_ID", message="inner", details={"k": "v"})

    scorer = create_scorer(id="s", description="d").generate_score(failing)
    with pytest.raises(ScorerRunError) as raised:
        scorer.run_sync(output="x")
    cause = raised.value.to_dict()["cause"]
    assert cause["code"] == "MY_ID" and cause["details"] == {"k": "v"}
