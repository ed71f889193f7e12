"""The judge call's per-call work cut to what the record needs (scorelab issue 22, point 4;
docs/core.md, "The judge call's own cost"): the routing asked once per model and base, the
score answer's quick check agreeing with the JSON-schema validator on every answer, the retry
loop keeping tenacity's rules, and the record of a judged run as it was."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import jsonschema
import pytest

from core import JudgeConfig, JudgeExecutionSuccess, PromptStep, Scorer, create_scorer
from core.judge import _litellm, retry
from core.judge.call import schema_instruction
from core.judge.schema import JudgeOutputError, parse_judge_json, score_schema
from core.testing import FakeJudge, Fault, Reply


def score_scorer(judge: JudgeConfig) -> Scorer:
    step = PromptStep(description="Score", create_prompt=lambda ctx: f"score {ctx.run.output}")
    return create_scorer(id="judged", description="d", judge=judge).generate_score(step)


@pytest.fixture
def routing_calls(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, Any]]]:
    """Every routing the judge path asks of litellm (`_litellm.resolve_model`), with an empty
    routing cache before and after."""
    real = _litellm.resolve_model
    calls: list[tuple[str, Any]] = []

    def counted(model: str, api_base: str | None) -> tuple[str, str]:
        calls.append((model, api_base))
        return real(model, api_base)

    monkeypatch.setattr(_litellm, "resolve_model", counted)
    _litellm.routed_model.cache_clear()
    yield calls
    _litellm.routed_model.cache_clear()


async def test_the_routing_is_asked_once_per_model_and_base(
    judge_config: JudgeConfig, routing_calls: list[tuple[str, Any]]
) -> None:
    scorer = score_scorer(judge_config)
    for index in range(4):
        result = await scorer.run(output=f"o{index}")
        assert result.judge is not None
        (execution,) = result.judge["generateScore"].executions
        assert execution.judge_provider == "openai"
    assert routing_calls == [(judge_config.model, judge_config.api_base)]
    other = judge_config.model_copy(update={"api_base": judge_config.api_base + "/"})
    await score_scorer(other).run(output="o")
    assert routing_calls[1:] == [(judge_config.model, other.api_base)]


def test_an_unknown_provider_is_asked_again_not_cached(
    routing_calls: list[tuple[str, Any]],
) -> None:
    for _ in range(2):
        with pytest.raises(Exception, match="LLM Provider NOT provided"):
            _litellm.routed_model("no-such-provider-model", None)
    assert len(routing_calls) == 2


SCORE_ANSWERS = [
    '{"score": 1}',
    '{"score": 0.25}',
    '{"score": -3}',
    '{"score": 1, "why": "extra keys are allowed"}',
    '{"score": true}',
    '{"score": "1"}',
    '{"score": null}',
    '{"score": [1]}',
    '{"points": 1}',
    "[1]",
    '"1"',
    "1",
    "{}",
]


@pytest.mark.parametrize("answer", SCORE_ANSWERS)
def test_the_quick_score_check_agrees_with_the_json_schema_validator(answer: str) -> None:
    schema = score_schema()
    value = parse_judge_json(answer)
    valid = jsonschema.Draft202012Validator(schema.json_schema).is_valid(value) and value != {}
    if valid:
        assert schema.validate(value) == value
        return
    with pytest.raises(JudgeOutputError) as raised:
        schema.validate(value)
    expected = "JUDGE_OUTPUT_EMPTY" if value == {} else "JUDGE_OUTPUT_SCHEMA_MISMATCH"
    assert raised.value.id == expected


def test_the_schema_goes_into_the_prompt_as_compact_json() -> None:
    text = schema_instruction(score_schema())
    assert text.endswith(
        '{"title":"score","type":"object","properties":{"score":{"type":"number"}},'
        '"required":["score"]}'
    )


async def test_a_judged_run_keeps_its_record(
    judge_server: FakeJudge, judge_config: JudgeConfig
) -> None:
    judge_server.script(Reply('{"score": 0.5}', prompt_tokens=7, completion_tokens=3))
    result = await score_scorer(judge_config).run(output="o")
    assert result.score == 0.5
    assert result.judge is not None
    (execution,) = result.judge["generateScore"].executions
    assert isinstance(execution, JudgeExecutionSuccess)
    assert (execution.attempt_count, execution.model_call_count) == (1, 1)
    assert execution.judge_model_id == "fake-judge-model"
    assert execution.judge_provider == "openai"
    assert execution.output == 0.5
    assert execution.attempt_errors is None and execution.cached is None
    # The total as the provider reported it (the fake says 30), not recomputed.
    assert execution.usage.model_dump(exclude_none=True) == {
        "inputTokens": 7,
        "outputTokens": 3,
        "totalTokens": 30,
    }
    assert execution.prompt.startswith("score o")
    assert isinstance(execution.duration_ms, int) and execution.duration_ms >= 0


async def test_the_retry_loop_warns_before_each_wait_and_stops_at_the_budget(
    judge_server: FakeJudge,
    judge_config: JudgeConfig,
    retry_waits: list[float],
    caplog: pytest.LogCaptureFixture,
) -> None:
    judge_server.script(Fault(503, "busy"), Fault(503, "busy"), Fault(503, "busy"))
    judge = judge_config.model_copy(update={"model_settings": {"num_retries": 2}})
    with (
        caplog.at_level(logging.WARNING, logger=retry.__name__),
        pytest.raises(Exception, match="busy"),
    ):
        await score_scorer(judge).run(output="o")
    assert judge_server.call_count == 3  # the first request and two retries, no more
    warnings = [r.getMessage() for r in caplog.records if r.name == retry.__name__]
    assert len(warnings) == 2 == len(retry_waits)
    assert "retry 1 of 2" in warnings[0] and "retry 2 of 2" in warnings[1]
    assert all("HTTP 503" in message and "busy" not in message for message in warnings)
    # Backoff 0.5 s then 1 s, each plus up to JITTER_S.
    assert retry.BACKOFF_INITIAL_S <= retry_waits[0] <= retry.BACKOFF_INITIAL_S + retry.JITTER_S
    second = 2 * retry.BACKOFF_INITIAL_S
    assert second <= retry_waits[1] <= second + retry.JITTER_S


async def test_a_cancelled_request_is_never_retried(retry_waits: list[float]) -> None:
    calls = 0

    async def cancelled() -> None:
        nonlocal calls
        calls += 1
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        await retry.with_retries(3, cancelled)
    assert calls == 1 and retry_waits == []
