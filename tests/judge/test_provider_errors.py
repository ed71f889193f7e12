"""Provider errors and `ScorerRunError` on the real litellm path (scorer-core.md §7 cases 22
and 24-30, adapted), timeouts and the judge's transport retries (`num_retries`; the fault
matrix is in test_retries.py).

Adaptations: the mock judge of Mastra's tests reports `mock-model-id`/`mock-provider`; here a
call with no response keeps litellm's resolution of the model string (`fake-judge`/`openai`) and
a call that got a response takes the response's model (`fake-judge-model`). Error processors do
not exist: transport retries are `num_retries` (second half of case 22 below). Case 26
(observability emission) has no Python counterpart.
"""

from __future__ import annotations

import json
from typing import Any

import litellm
import pytest

from core import (
    JudgeConfig,
    JudgeExecutionFailure,
    JudgeExecutionSuccess,
    PromptStep,
    Scorer,
    ScorerRunError,
    create_scorer,
)
from core.testing import FakeJudge, Fault, Reply

SCORE_PROMPT = "score this output"
REASON_PROMPT = "explain this score"


def score_scorer(judge: JudgeConfig, prompt: str = SCORE_PROMPT) -> Scorer:
    step = PromptStep(description="Score", create_prompt=lambda ctx: prompt)
    return create_scorer(id="judge-scorer", description="d", judge=judge).generate_score(step)


def with_settings(judge: JudgeConfig, **settings: Any) -> JudgeConfig:
    return judge.model_copy(update={"model_settings": settings})


async def run_failing(scorer: Scorer, **run: Any) -> ScorerRunError:
    with pytest.raises(ScorerRunError) as caught:
        await scorer.run(output=run.pop("output", "o"), **run)
    return caught.value


def failed_execution(error: ScorerRunError, step: str) -> JudgeExecutionFailure:
    assert error.result is not None
    assert error.result.judge is not None
    execution = error.result.judge[step].executions[-1]
    assert isinstance(execution, JudgeExecutionFailure)
    return execution


# ---- §7 cases 22 and 28: one provider error, one call, no fallback --------------------------


@pytest.mark.parametrize(
    ("status", "exception_class"),
    [
        (429, litellm.RateLimitError),
        (500, litellm.InternalServerError),
        (503, litellm.ServiceUnavailableError),
        (400, litellm.BadRequestError),
        (401, litellm.AuthenticationError),
    ],
)
async def test_provider_error_is_recorded_once_without_fallback(
    judge_server: FakeJudge,
    judge_config: JudgeConfig,
    status: int,
    exception_class: type[Exception],
) -> None:
    judge_server.script(Fault(status, "provider said no"), '{"score": 1}')

    error = await run_failing(score_scorer(judge_config))

    assert judge_server.call_count == 1  # no structured-output fallback for provider errors
    assert isinstance(error.__cause__, exception_class)
    assert error.failed_step == "generateScore"
    assert error.completed_steps == []
    assert str(error).startswith("Scorer Run Failed: ")
    assert "provider said no" in str(error)
    assert error.result is not None
    assert error.result.score is None
    assert "score" not in error.result.to_dict()
    execution = failed_execution(error, "generateScore")
    assert execution.prompt == SCORE_PROMPT
    assert execution.judge_model_id == "fake-judge"
    assert execution.judge_provider == "openai"
    assert execution.attempt_count == 1
    assert execution.model_call_count == 0
    assert execution.finish_reason == "error"
    assert execution.usage is None
    assert execution.output is None
    assert execution.raw_output is None
    assert execution.error.name == exception_class.__name__
    assert "provider said no" in execution.error.message
    assert execution.error.code == str(status)
    data = execution.model_dump(by_alias=True, exclude_none=True)
    assert set(data["error"]) == {"name", "message", "code"}
    assert not {"usage", "output", "rawOutput"} & set(data)
    # The fake server answers with an `x-request-id` header: no header may leak anywhere.
    assert "fake-request-id" not in json.dumps(error.result.to_dict())
    assert "fake-request-id" not in json.dumps(error.to_dict())
    assert "responseHeaders" not in json.dumps(error.result.to_dict())


# ---- §7 case 24: a function step throws after analyze ----------------------------------------


async def test_function_step_failure_after_analyze() -> None:
    def fail(ctx: Any) -> float:
        raise RuntimeError("score generation failed")

    scorer = (
        create_scorer(id="s", description="d")
        .analyze(lambda ctx: {"status": False, "note": ""})
        .generate_score(fail)
    )

    error = await run_failing(scorer, input="in", output="out", run_id="failure-run-id")

    assert error.id == "MASTR_SCORER_FAILED_TO_RUN_WORKFLOW_FAILED"
    assert (error.domain, error.category) == ("SCORER", "USER")
    assert error.details["failedStep"] == "generateScore"
    assert error.details["completedSteps"] == "analyze"
    assert error.failed_step == "generateScore"
    assert error.completed_steps == ["analyze"]
    assert str(error) == "Scorer Run Failed: score generation failed"
    assert isinstance(error.__cause__, RuntimeError)
    assert error.result is not None
    assert error.result.input == "in"
    assert error.result.output == "out"
    assert error.result.analyze_step_result == {"status": False, "note": ""}
    assert error.result.run_id == "failure-run-id"
    snapshot = error.result.to_dict()
    assert "score" not in snapshot
    assert "judge" not in snapshot
    serialised = json.dumps(error.to_dict())
    assert "analyzeStepResult" not in serialised
    assert '"result"' not in serialised


# ---- §7 case 25: the reason fails after a score of 0 ----------------------------------------


async def test_reason_provider_failure_keeps_the_score_of_zero(
    judge_server: FakeJudge, judge_config: JudgeConfig
) -> None:
    judge_server.script('{"score": 0}', Fault(400, "reason provider failed"))
    scorer = (
        create_scorer(id="s", description="d", judge=judge_config)
        .generate_score(PromptStep(description="Score", create_prompt=lambda ctx: SCORE_PROMPT))
        .generate_reason(PromptStep(description="Explain", create_prompt=lambda ctx: REASON_PROMPT))
    )

    error = await run_failing(scorer)

    assert error.failed_step == "generateReason"
    assert error.completed_steps == ["generateScore"]
    assert error.result is not None
    assert error.result.score == 0
    assert error.result.to_dict()["score"] == 0
    assert error.result.generate_score_prompt == SCORE_PROMPT
    assert error.result.generate_reason_prompt is None
    assert error.result.judge is not None
    (score_execution,) = error.result.judge["generateScore"].executions
    assert isinstance(score_execution, JudgeExecutionSuccess)
    assert score_execution.output == 0
    (reason_execution,) = error.result.judge["generateReason"].executions
    reason = reason_execution.model_dump(by_alias=True, exclude_none=True)
    reason.pop("durationMs")
    assert reason == {
        "status": "failed",
        "prompt": REASON_PROMPT,
        "judgeModelId": "fake-judge",
        "judgeProvider": "openai",
        "attemptCount": 1,
        "modelCallCount": 0,
        "finishReason": "error",
        "error": {
            "name": "BadRequestError",
            "message": reason_execution.error.message,
            "code": "400",
        },
    }
    assert "reason provider failed" in reason_execution.error.message
    total_input = sum(
        (execution.usage.input_tokens or 0) if execution.usage is not None else 0
        for step_result in error.result.judge.values()
        for execution in step_result.executions
    )
    assert total_input == 10
    assert judge_server.call_count == 2


# ---- §7 case 27: the first step throws -----------------------------------------------------


async def test_first_step_failure_has_no_snapshot() -> None:
    def fail(ctx: Any) -> float:
        raise ValueError("boom")

    error = await run_failing(create_scorer(id="s", description="d").generate_score(fail))

    assert error.failed_step == "generateScore"
    assert error.completed_steps == []
    assert error.result is None


# ---- §7 case 29: fallback, then a provider failure ------------------------------------------


async def test_fallback_attempt_failing_at_the_provider(
    judge_server: FakeJudge, judge_config: JudgeConfig
) -> None:
    judge_server.script("not valid JSON", Fault(503, "unavailable"))

    error = await run_failing(score_scorer(judge_config))

    assert judge_server.call_count == 2
    assert isinstance(error.__cause__, litellm.ServiceUnavailableError)
    execution = failed_execution(error, "generateScore")
    assert execution.usage is not None
    assert execution.usage.model_dump(by_alias=True, exclude_none=True) == {
        "inputTokens": 10,
        "outputTokens": 20,
        "totalTokens": 30,
    }
    assert execution.attempt_count == 2
    assert execution.model_call_count == 1
    assert execution.raw_output == "not valid JSON"
    assert execution.output is None
    # The first call's real finish reason is kept; "error" only fills an empty slot.
    assert execution.finish_reason == "stop"
    assert execution.error.name == "ServiceUnavailableError"


# ---- §7 case 30: fallback exhausted --------------------------------------------------------


async def test_fallback_exhausted_record_and_error_serialisation(
    judge_server: FakeJudge, judge_config: JudgeConfig
) -> None:
    judge_server.script("first bad answer", "still not valid JSON")

    error = await run_failing(score_scorer(judge_config))

    execution = failed_execution(error, "generateScore")
    assert execution.usage is not None
    assert execution.usage.model_dump(by_alias=True, exclude_none=True) == {
        "inputTokens": 20,
        "outputTokens": 40,
        "totalTokens": 60,
    }
    assert execution.attempt_count == 2
    assert execution.model_call_count == 2
    # Deviation from scorer-core §7 case 30 ('error'): python-api.md defines finish_reason as
    # "the provider's last finish reason, 'error' when no response arrived". Both calls got a
    # response that finished with 'stop', so the record says 'stop'.
    assert execution.finish_reason == "stop"
    assert execution.raw_output == "still not valid JSON"
    assert isinstance(execution.duration_ms, int)
    assert execution.duration_ms >= 0
    serialised = json.dumps(error.to_dict())
    assert '"result"' not in serialised
    assert SCORE_PROMPT not in serialised
    assert "still not valid JSON" not in serialised
    assert "first bad answer" not in serialised


# ---- timeouts ------------------------------------------------------------------------------


async def test_slow_judge_times_out_and_the_error_leaks_nothing(
    judge_server: FakeJudge, judge_config: JudgeConfig
) -> None:
    prompt = "grade the secret-prompt-marker answer"
    judge_server.script(Reply('{"score": 1, "note": "raw-output-marker"}', delay=3))
    scorer = score_scorer(with_settings(judge_config, timeout=1, num_retries=0), prompt)

    error = await run_failing(scorer)

    assert isinstance(error.__cause__, litellm.Timeout)
    assert judge_server.call_count == 1
    execution = failed_execution(error, "generateScore")
    assert execution.error.name == "Timeout"
    assert execution.finish_reason == "error"
    assert execution.model_call_count == 0
    assert execution.raw_output is None
    assert execution.prompt == prompt
    for serialised in (json.dumps(error.to_dict()), json.dumps(error.to_dict()["cause"])):
        assert "secret-prompt-marker" not in serialised
        assert "raw-output-marker" not in serialised
        assert '"result"' not in serialised
    assert error.to_dict()["cause"]["name"] == "Timeout"


# ---- transport retries (num_retries) -------------------------------------------------------


async def test_num_retries_retries_a_429_as_a_second_attempt(
    judge_server: FakeJudge, judge_config: JudgeConfig, retry_waits: list[float]
) -> None:
    judge_server.script(Fault(429, "slow down"), '{"score": 1}')

    result = await score_scorer(with_settings(judge_config, num_retries=1)).run(output="o")

    assert result.score == 1
    assert judge_server.call_count == 2
    assert result.judge is not None
    (execution,) = result.judge["generateScore"].executions
    assert execution.status == "success"
    # Before issue 10 litellm retried invisibly and this record said 1 attempt for 2 requests.
    assert execution.attempt_count == 2
    assert execution.model_call_count == 1
    assert [error.code for error in execution.attempt_errors or ()] == ["429"]
    assert len(retry_waits) == 1


async def test_without_retries_a_429_is_not_retried(
    judge_server: FakeJudge, judge_config: JudgeConfig
) -> None:
    judge_server.script(Fault(429, "slow down"), '{"score": 1}')

    await run_failing(score_scorer(judge_config))

    assert judge_server.call_count == 1


# ---- secrets in errors --------------------------------------------------------------------


async def test_api_key_echoed_by_the_provider_is_masked_in_the_judge_record(
    judge_server: FakeJudge, judge_config: JudgeConfig
) -> None:
    judge_server.script(Fault(401, "Incorrect API key provided: test-key"))

    error = await run_failing(score_scorer(judge_config))

    execution = failed_execution(error, "generateScore")
    assert "test-key" not in execution.error.message
    assert "Incorrect API key provided" in execution.error.message
    assert error.result is not None
    assert "test-key" not in json.dumps(error.result.to_dict())


async def test_api_key_echoed_by_the_provider_is_masked_in_the_serialised_error(
    judge_server: FakeJudge, judge_config: JudgeConfig
) -> None:
    judge_server.script(Fault(401, "Incorrect API key provided: test-key"))

    error = await run_failing(score_scorer(judge_config))

    assert "test-key" not in json.dumps(error.to_dict())
    assert "test-key" not in str(error)
