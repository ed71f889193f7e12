"""Transport retries of judge requests (scorelab issue 10, point 2).

Every request the provider receives is one attempt of the judge record: litellm's and the
OpenAI client's own retries are off and `num_retries` runs in the judge's loop. The record lists
why each earlier attempt failed (`attempt_errors`). Waits honour `Retry-After` and are recorded
instead of slept (fixture `retry_waits`).
"""

from __future__ import annotations

import asyncio
import json
import time
import urllib.request
from email.utils import formatdate
from types import SimpleNamespace
from typing import Any

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
from core.judge import retry
from core.testing import FakeJudge, Fault, Reply

# The tests read the waits, never sleep them; these bound what a wait may be.
JITTER = retry.JITTER_S


def score_scorer(judge: JudgeConfig) -> Scorer:
    step = PromptStep(description="Score", create_prompt=lambda ctx: "score this")
    return create_scorer(id="judged", description="d", judge=judge).generate_score(step)


def settings(judge: JudgeConfig, **model_settings: Any) -> JudgeConfig:
    return judge.model_copy(update={"model_settings": model_settings})


async def execution_of(scorer: Scorer) -> JudgeExecutionSuccess | JudgeExecutionFailure:
    """The generateScore execution, whether the run succeeded or failed."""
    try:
        result = await scorer.run(output="o")
    except ScorerRunError as error:
        assert error.result is not None and error.result.judge is not None
        result = error.result
    assert result.judge is not None
    (execution,) = result.judge["generateScore"].executions
    return execution


def names(execution: JudgeExecutionSuccess | JudgeExecutionFailure) -> list[str]:
    return [error.name for error in execution.attempt_errors or ()]


def assert_every_request_is_an_attempt(
    execution: JudgeExecutionSuccess | JudgeExecutionFailure, server: FakeJudge
) -> None:
    stats = server.stats()
    assert execution.attempt_count == stats["requests"] == server.call_count
    assert sum(stats["byStatus"].values()) == stats["requests"]
    assert len(execution.attempt_errors or ()) == execution.attempt_count - 1


# ---- each fault on every request, with num_retries 0 and 2 --------------------------------

TRANSPORT_FAULTS: dict[str, tuple[Any, str, str | None]] = {
    # fault, error class name, error code
    "http-500": (Fault(500, "boom"), "InternalServerError", "500"),
    "http-503": (Fault(503, "unavailable"), "ServiceUnavailableError", "503"),
    "http-429": (Fault(429, "slow down"), "RateLimitError", "429"),
    "http-429-retry-after": (Fault(429, "slow down", retry_after="1"), "RateLimitError", "429"),
    "timeout": (Reply('{"score": 1}', delay=1.0), "Timeout", None),
}


@pytest.mark.parametrize("retries", [0, 2])
@pytest.mark.parametrize("fault", list(TRANSPORT_FAULTS))
async def test_a_failing_provider_gets_one_attempt_per_request(
    judge_server: FakeJudge,
    judge_config: JudgeConfig,
    retry_waits: list[float],
    fault: str,
    retries: int,
) -> None:
    answer, error_name, code = TRANSPORT_FAULTS[fault]
    judge_server.responder = lambda request: answer
    judge = settings(judge_config, num_retries=retries, timeout=0.3)

    execution = await execution_of(score_scorer(judge))

    assert isinstance(execution, JudgeExecutionFailure)
    assert_every_request_is_an_attempt(execution, judge_server)
    assert execution.attempt_count == retries + 1
    assert execution.model_call_count == 0
    assert execution.finish_reason == "error"
    assert execution.error.name == error_name
    assert names(execution) == [error_name] * retries
    if code is not None:
        assert execution.error.code == code
        assert all(error.code == code for error in execution.attempt_errors or ())
    assert len(retry_waits) == retries
    if fault == "http-429-retry-after":
        assert all(1 <= wait <= 1 + JITTER for wait in retry_waits)


FORMAT_FAULTS = {
    "invalid-json": "not JSON",
    "non-finite-json": '{"score": NaN}',
    "schema-mismatch": '{"score": "high"}',
}


@pytest.mark.parametrize("retries", [0, 2])
@pytest.mark.parametrize("fault", list(FORMAT_FAULTS))
async def test_a_malformed_answer_takes_one_fallback_whatever_num_retries(
    judge_server: FakeJudge,
    judge_config: JudgeConfig,
    retry_waits: list[float],
    fault: str,
    retries: int,
) -> None:
    answer = FORMAT_FAULTS[fault]
    judge_server.responder = lambda request: answer

    execution = await execution_of(score_scorer(settings(judge_config, num_retries=retries)))

    assert isinstance(execution, JudgeExecutionFailure)
    assert_every_request_is_an_attempt(execution, judge_server)
    assert (execution.attempt_count, execution.model_call_count) == (2, 2)
    assert execution.error.name == "JudgeOutputError"
    assert names(execution) == ["JudgeOutputError"]
    assert execution.attempt_errors is not None
    assert execution.attempt_errors[0].code == execution.error.code
    mismatch = fault == "schema-mismatch"
    expected = "JUDGE_OUTPUT_SCHEMA_MISMATCH" if mismatch else "JUDGE_OUTPUT_INVALID_JSON"
    assert execution.error.code == expected
    assert retry_waits == []  # a format error is never a transport retry


@pytest.mark.parametrize("status", [400, 401, 404])
async def test_client_errors_are_not_retried(
    judge_server: FakeJudge, judge_config: JudgeConfig, retry_waits: list[float], status: int
) -> None:
    judge_server.responder = lambda request: Fault(status, "no")

    execution = await execution_of(score_scorer(settings(judge_config, num_retries=2)))

    assert isinstance(execution, JudgeExecutionFailure)
    assert_every_request_is_an_attempt(execution, judge_server)
    assert execution.attempt_count == 1
    assert execution.attempt_errors is None
    assert execution.error.code == str(status)
    assert retry_waits == []


# ---- mixes -----------------------------------------------------------------------------


async def test_a_500_then_a_bad_answer_then_success(
    judge_server: FakeJudge, judge_config: JudgeConfig, retry_waits: list[float]
) -> None:
    judge_server.script(Fault(500, "boom"), "not JSON", '{"score": 0.5}')
    # gpt-4o-mini takes response_format: the first call differs from the fallback.
    judge = settings(judge_config, num_retries=2).model_copy(update={"model": "openai/gpt-4o-mini"})

    execution = await execution_of(score_scorer(judge))

    assert isinstance(execution, JudgeExecutionSuccess)
    assert execution.output == 0.5
    assert_every_request_is_an_attempt(execution, judge_server)
    assert (execution.attempt_count, execution.model_call_count) == (3, 2)
    assert names(execution) == ["InternalServerError", "JudgeOutputError"]
    assert len(retry_waits) == 1
    # The retry resends the same request; only the fallback puts the schema in the prompt.
    first, retried, fallback = judge_server.requests
    assert first == retried and "response_format" in first
    assert "response_format" not in fallback


async def test_the_fallback_call_has_its_own_transport_retries(
    judge_server: FakeJudge, judge_config: JudgeConfig, retry_waits: list[float]
) -> None:
    judge_server.script(
        "not JSON", Fault(429, "slow down", retry_after="2"), Fault(503), '{"score": 1}'
    )

    execution = await execution_of(score_scorer(settings(judge_config, num_retries=2)))

    assert isinstance(execution, JudgeExecutionSuccess)
    assert_every_request_is_an_attempt(execution, judge_server)
    assert (execution.attempt_count, execution.model_call_count) == (4, 2)
    assert names(execution) == ["JudgeOutputError", "RateLimitError", "ServiceUnavailableError"]
    assert len(retry_waits) == 2 and 2 <= retry_waits[0] <= 2 + JITTER
    fallback_prompts = judge_server.prompts()[1:]
    assert len(set(fallback_prompts)) == 1 and '"score"' in fallback_prompts[0]


async def test_retries_exhausted_in_the_fallback_call(
    judge_server: FakeJudge, judge_config: JudgeConfig, retry_waits: list[float]
) -> None:
    judge_server.script(Fault(500), "not JSON", Fault(500), Fault(502), Fault(500, "last"))

    execution = await execution_of(score_scorer(settings(judge_config, num_retries=2)))

    assert isinstance(execution, JudgeExecutionFailure)
    assert_every_request_is_an_attempt(execution, judge_server)
    assert (execution.attempt_count, execution.model_call_count) == (5, 1)
    assert names(execution) == [
        "InternalServerError",
        "JudgeOutputError",
        "InternalServerError",
        "BadGatewayError",
    ]
    assert execution.attempt_errors is not None
    assert [error.code for error in execution.attempt_errors] == [
        "500",
        "JUDGE_OUTPUT_INVALID_JSON",
        "500",
        "502",
    ]
    assert "last" in execution.error.message
    assert execution.raw_output == "not JSON"
    assert execution.finish_reason == "stop"  # the one response's real reason is kept
    assert judge_server.stats()["byStatus"] == {"200": 1, "500": 3, "502": 1}


async def test_a_timeout_then_success(
    judge_server: FakeJudge, judge_config: JudgeConfig, retry_waits: list[float]
) -> None:
    judge_server.script(Reply('{"score": 0}', delay=1.0), '{"score": 1}')

    execution = await execution_of(score_scorer(settings(judge_config, num_retries=1, timeout=0.3)))

    assert isinstance(execution, JudgeExecutionSuccess)
    assert execution.output == 1
    assert_every_request_is_an_attempt(execution, judge_server)
    assert names(execution) == ["Timeout"]


async def test_to_dict_lists_the_attempt_errors(
    judge_server: FakeJudge, judge_config: JudgeConfig, retry_waits: list[float]
) -> None:
    judge_server.script(Fault(503, "unavailable"), '{"score": 1}')

    result = await score_scorer(settings(judge_config, num_retries=1)).run(output="o")

    data = result.to_dict()["judge"]["generateScore"]["executions"][0]
    assert data["attemptCount"] == 2 and data["modelCallCount"] == 1
    [error] = data["attemptErrors"]
    assert error["name"] == "ServiceUnavailableError" and error["code"] == "503"
    assert "unavailable" in error["message"]
    assert "fake-request-id" not in json.dumps(data)  # no response header leaks


async def test_a_key_echoed_in_a_retried_error_is_masked(
    judge_server: FakeJudge, judge_config: JudgeConfig, retry_waits: list[float]
) -> None:
    judge_server.script(Fault(500, "upstream rejected key test-key"), '{"score": 1}')

    result = await score_scorer(settings(judge_config, num_retries=1)).run(output="o")

    assert "test-key" not in json.dumps(result.to_dict())
    assert result.judge is not None
    [error] = result.judge["generateScore"].executions[0].attempt_errors or ()
    assert "upstream rejected key ***" in error.message


# ---- the retry budget ----------------------------------------------------------------------


async def test_without_num_retries_a_request_is_retried_twice(
    judge_server: FakeJudge, judge_config: JudgeConfig, retry_waits: list[float]
) -> None:
    judge_server.responder = lambda request: Fault(500)
    judge = judge_config.model_copy(update={"model_settings": None})

    execution = await execution_of(score_scorer(judge))

    assert_every_request_is_an_attempt(execution, judge_server)
    assert execution.attempt_count == 1 + retry.DEFAULT_RETRIES == 3


async def test_max_retries_means_num_retries(
    judge_server: FakeJudge, judge_config: JudgeConfig, retry_waits: list[float]
) -> None:
    judge_server.responder = lambda request: Fault(500)

    execution = await execution_of(score_scorer(settings(judge_config, max_retries=1)))

    assert_every_request_is_an_attempt(execution, judge_server)
    assert execution.attempt_count == 2


def test_retry_settings_must_be_whole_numbers() -> None:
    for bad in (-1, True, "2", 1.5):
        with pytest.raises(ValueError, match="must be a whole number of retries"):
            JudgeConfig(model_settings={"num_retries": bad})
    with pytest.raises(ValueError, match="max_retries"):
        JudgeConfig(model_settings={"max_retries": -2})
    assert JudgeConfig(model_settings={"num_retries": 0}).model_settings == {"num_retries": 0}


@pytest.mark.parametrize("key", ["retry_policy", "fallbacks"])
def test_settings_that_hide_requests_are_refused(key: str) -> None:
    with pytest.raises(ValueError, match=f"may not set '{key}'"):
        JudgeConfig(model_settings={key: {}})


# ---- the waits -----------------------------------------------------------------------------


async def test_backoff_doubles_without_retry_after(
    judge_server: FakeJudge, judge_config: JudgeConfig, retry_waits: list[float]
) -> None:
    judge_server.script(Fault(500), Fault(500), Fault(500), '{"score": 1}')

    await score_scorer(settings(judge_config, num_retries=3)).run(output="o")

    assert len(retry_waits) == 3
    for number, wait in enumerate(retry_waits):
        base = retry.BACKOFF_INITIAL_S * 2**number
        assert base <= wait <= base + JITTER


@pytest.mark.parametrize(
    ("header", "low", "high"),
    [
        ("3", 3, 3 + JITTER),
        ("0", 0, JITTER),
        ("3600", retry.RETRY_AFTER_CAP_S, retry.RETRY_AFTER_CAP_S + JITTER),
        ("in a while", retry.BACKOFF_INITIAL_S, retry.BACKOFF_INITIAL_S + JITTER),
    ],
)
async def test_retry_after_seconds_is_honoured_and_capped(
    judge_server: FakeJudge,
    judge_config: JudgeConfig,
    retry_waits: list[float],
    header: str,
    low: float,
    high: float,
) -> None:
    judge_server.script(Fault(429, "slow down", retry_after=header), '{"score": 1}')

    await score_scorer(settings(judge_config, num_retries=1)).run(output="o")

    [wait] = retry_waits
    assert low <= wait <= high


async def test_retry_after_as_an_http_date(
    judge_server: FakeJudge, judge_config: JudgeConfig, retry_waits: list[float]
) -> None:
    judge_server.script(
        Fault(503, "later", retry_after=formatdate(time.time() + 20, usegmt=True)),
        '{"score": 1}',
    )

    await score_scorer(settings(judge_config, num_retries=1)).run(output="o")

    [wait] = retry_waits
    assert 15 <= wait <= 20 + JITTER  # the date has whole seconds; the request took some time


def error_with(headers: Any, status: int = 429) -> Exception:
    error = Exception("fault")
    error.status_code = status  # type: ignore[attr-defined]
    error.litellm_response_headers = headers  # type: ignore[attr-defined]
    return error


def test_retry_after_parsing() -> None:
    assert retry.retry_after_seconds(error_with({"Retry-After": "2.5"})) == 2.5
    assert retry.retry_after_seconds(error_with({"retry-after-ms": "1500"})) == 1.5
    assert retry.retry_after_seconds(error_with({"retry-after": "-3"})) is None
    assert retry.retry_after_seconds(error_with({"retry-after": "nan"})) is None
    assert retry.retry_after_seconds(error_with({})) is None
    assert retry.retry_after_seconds(Exception("no headers at all")) is None
    past = formatdate(1_000_000, usegmt=True)
    assert retry.retry_after_seconds(error_with({"retry-after": past})) == 0
    now = 2_000_000_000.0
    later = formatdate(now + 42, usegmt=True)
    assert retry.retry_after_seconds(error_with({"retry-after": later}), now=now) == 42
    # litellm also keeps the provider's headers on the error's response
    response_only = Exception("fault")
    response_only.response = SimpleNamespace(headers={"retry-after": "7"})  # type: ignore[attr-defined]
    assert retry.retry_after_seconds(response_only) == 7


def test_what_is_retryable() -> None:
    for status in (408, 429, 500, 502, 503, 504, 529):
        assert retry.is_retryable(error_with({}, status)), status
    for status in (400, 401, 403, 404, 422):
        assert not retry.is_retryable(error_with({}, status)), status
    assert retry.is_retryable(TimeoutError())
    assert retry.is_retryable(ConnectionRefusedError())
    assert not retry.is_retryable(ValueError("a bug, not a transport error"))
    assert not retry.is_retryable(asyncio.CancelledError())


def test_retry_budget() -> None:
    assert retry.retry_budget(None) == retry.DEFAULT_RETRIES
    assert retry.retry_budget({"temperature": 0}) == retry.DEFAULT_RETRIES
    assert retry.retry_budget({"num_retries": 0, "max_retries": 5}) == 0
    assert retry.retry_budget({"max_retries": 5}) == 5


# ---- the fake judge's counter over HTTP ----------------------------------------------------


async def test_stats_are_served_over_http(
    judge_server: FakeJudge, judge_config: JudgeConfig, retry_waits: list[float]
) -> None:
    judge_server.script(Fault(500), Fault(429), '{"score": 1}')
    await score_scorer(settings(judge_config, num_retries=2)).run(output="o")

    root = judge_server.url.removesuffix("/v1")
    for url in (f"{root}/__stats", f"{judge_server.url}/__stats"):
        with urllib.request.urlopen(url, timeout=5) as response:
            served = json.loads(response.read())
        assert served == judge_server.stats()
        assert {k: served[k] for k in ("requests", "byStatus")} == {
            "requests": 3,
            "byStatus": {"200": 1, "429": 1, "500": 1},
        }
        assert [entry["status"] for entry in served["log"]] == [500, 429, 200]
        assert [entry["totalTokens"] for entry in served["log"]] == [0, 0, 30]
        times = [entry["at"] for entry in served["log"]]
        assert times == sorted(times)
    judge_server.reset()
    assert judge_server.stats() == {"requests": 0, "byStatus": {}, "log": []}
