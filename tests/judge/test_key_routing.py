"""Which key reaches a judge server, over real HTTP (the fake judge records each request's
Authorization header), when a `JudgeConfig` is built by hand; and every secret the process
holds masked in the judge records, whichever key the server echoes."""

from __future__ import annotations

import json
import logging

import pytest

from core import JudgeConfig, PromptStep, Scorer, ScorerRunError, create_scorer
from core.judge.endpoints import NO_KEY, TRUSTED_API_BASES_ENV, origin
from core.testing import FakeJudge, Fault, Reply
from core.testing.fake_judge import KEY_ECHO

CANARY = "sk-canary-openai-routing-0123456789"


def reason_scorer(judge: JudgeConfig) -> Scorer:
    score = PromptStep(description="Score", create_prompt=lambda ctx: "score this")
    reason = PromptStep(description="Reason", create_prompt=lambda ctx: "why?")
    return (
        create_scorer(id="judged", description="d", judge=judge)
        .generate_score(score)
        .generate_reason(reason)
    )


@pytest.fixture
def provider_key(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    monkeypatch.delenv(TRUSTED_API_BASES_ENV, raising=False)
    monkeypatch.delenv("OPENAI_API_BASE", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    return CANARY


def judge_at(server: FakeJudge, api_key: str | None = None) -> JudgeConfig:
    return JudgeConfig(
        model="openai/fake-judge",
        instructions="Grade.",
        api_base=server.url,
        api_key=api_key,
        model_settings={"num_retries": 0},
    )


async def test_a_keyless_judge_at_an_untrusted_base_sends_no_provider_key(
    judge_server: FakeJudge, provider_key: str
) -> None:
    judge_server.script('{"score": 1}', "fine")
    await reason_scorer(judge_at(judge_server)).run(output="o")
    assert judge_server.authorizations == [f"Bearer {NO_KEY}"] * 2


async def test_a_trusted_base_gets_the_provider_key(
    judge_server: FakeJudge, provider_key: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(
        TRUSTED_API_BASES_ENV, f"https://elsewhere.example,{origin(judge_server.url)}"
    )
    judge_server.script('{"score": 1}', "fine")
    await reason_scorer(judge_at(judge_server)).run(output="o")
    assert judge_server.authorizations == [f"Bearer {provider_key}"] * 2


async def test_a_key_given_in_the_config_goes_as_given(
    judge_server: FakeJudge, provider_key: str
) -> None:
    judge_server.script('{"score": 1}', "fine")
    await reason_scorer(judge_at(judge_server, "sk-given-by-hand")).run(output="o")
    assert judge_server.authorizations == ["Bearer sk-given-by-hand"] * 2


async def test_an_echoed_provider_key_is_masked_in_every_judge_record(
    judge_server: FakeJudge,
    provider_key: str,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # The server is trusted, so it gets OPENAI_API_KEY, and it echoes it everywhere it can.
    monkeypatch.setenv(TRUSTED_API_BASES_ENV, origin(judge_server.url) or "")
    caplog.set_level(logging.DEBUG)
    judge = judge_at(judge_server).model_copy(update={"model_settings": {"num_retries": 1}})
    judge_server.script(
        Fault(500, f"upstream refused {KEY_ECHO}"),  # retried: an attempt error
        '{"score": 1}',
        Reply(f"The reason quotes {KEY_ECHO}"),  # a success whose text holds the key
    )
    result = await reason_scorer(judge).run(output="o")
    assert judge_server.authorizations[0] == f"Bearer {provider_key}"
    assert result.reason == "The reason quotes ***"
    assert provider_key not in json.dumps(result.to_dict())

    judge_server.script(
        Reply(f"not JSON {KEY_ECHO}"),  # malformed: the fallback asks again
        Reply(f"still not JSON {KEY_ECHO}"),  # malformed again: the step fails
    )
    with pytest.raises(ScorerRunError) as caught:
        await reason_scorer(judge).run(output="o")
    failure = caught.value.result
    assert failure is not None and failure.judge is not None
    [execution] = failure.judge["generateScore"].executions
    assert execution.raw_output == "still not JSON ***"

    judge_server.script(Fault(401, f"Incorrect API key provided: {KEY_ECHO}"))
    with pytest.raises(ScorerRunError) as caught:
        await reason_scorer(judge.model_copy(update={"model_settings": {"num_retries": 0}})).run(
            output="o"
        )
    assert "Incorrect API key provided: ***" in str(caught.value)
    assert caught.value.result is not None
    assert provider_key not in json.dumps(caught.value.result.to_dict())
    assert provider_key not in caplog.text
