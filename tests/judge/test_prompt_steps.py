"""Prompt steps against a real litellm call to the fake judge server.

Ports scorer-core.md §7 cases 9-15, 17 and 18 to the litellm judge, plus the Python-specific
behaviour of `JudgeConfig` / `PromptStep` (json_prompt_injection, model_settings, field-by-field
override, fallback, validation, builder errors, secrets).

Cases of §7 9-21 that do not apply to the litellm judge:
- case 16 (memory merge): judges have no memory in the Python port (out of scope, product
  decision 1);
- case 18's callback counts (`onStepFinish`/`onFinish`): there are no judge callbacks; the
  telemetry half of case 18 is ported;
- case 19 (several model steps in one attempt): one attempt is exactly one `acompletion` call
  with no tool loop, so an attempt is at most one model call (checked in the fallback tests);
- case 20 (legacy v1 judge): there is no legacy path;
- case 21 (usage normalisation, unit level) lives in `test_usage.py`; here only the provider's
  usage as it reaches the record (reasoning and cached tokens) is tested.
Streaming specifics (`onStream`, stream events) do not exist: one judge attempt is one
non-streaming litellm call.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from core import (
    JudgeConfig,
    JudgeExecutionFailure,
    JudgeExecutionSuccess,
    JudgeStepResult,
    MastraError,
    PromptStep,
    Scorer,
    ScorerConfigError,
    ScorerRunError,
    create_scorer,
)
from core.testing import FakeJudge, Reply

INSTRUCTIONS = "You are a strict grader."
SCORE_PROMPT = "score this output"


class Lengths(BaseModel):
    inputLength: int
    outputLength: int


class Reformatted(BaseModel):
    reformattedInput: str
    reformattedOutput: str


LENGTHS_DICT_SCHEMA: dict[str, Any] = {
    "title": "lengths",
    "type": "object",
    "properties": {"inputLength": {"type": "integer"}, "outputLength": {"type": "integer"}},
    "required": ["inputLength", "outputLength"],
}


def score_scorer(
    judge: JudgeConfig | None,
    prompt: str = SCORE_PROMPT,
    step_judge: JudgeConfig | None = None,
) -> Scorer:
    """A scorer whose only step is a generate_score prompt step."""
    step = PromptStep(description="Score", create_prompt=lambda ctx: prompt, judge=step_judge)
    scorer = create_scorer(id="judge-scorer", description="scores with a judge", judge=judge)
    return scorer.generate_score(step)


def user_message(request: dict[str, Any]) -> str:
    return next(m["content"] for m in request["messages"] if m["role"] == "user")


def system_message(request: dict[str, Any]) -> str:
    return next(m["content"] for m in request["messages"] if m["role"] == "system")


def only_execution(result: Any, step: str) -> Any:
    executions = result.judge[step].executions
    assert len(executions) == 1
    return executions[0]


# ---- §7 case 9: analyze prompt -------------------------------------------------------------


async def test_analyze_prompt_step_result_prompt_and_success_record(
    judge_server: FakeJudge, judge_config: JudgeConfig
) -> None:
    judge_server.script('{"inputLength": 10, "outputLength": 11}')
    scorer = (
        create_scorer(id="s", description="d", judge=judge_config)
        .analyze(
            PromptStep(
                description="Measure",
                output_schema=Lengths,
                create_prompt=lambda ctx: "Test Analyze prompt",
            )
        )
        .generate_score(lambda ctx: 1 if ctx.results.analyze_step_result["inputLength"] else 0)
    )

    result = await scorer.run(input="test input", output="test output")

    assert result.analyze_step_result == {"inputLength": 10, "outputLength": 11}
    assert result.analyze_prompt == "Test Analyze prompt"
    assert result.score == 1
    execution = only_execution(result, "analyze")
    assert execution.status == "success"
    assert execution.output == {"inputLength": 10, "outputLength": 11}
    assert list(result.judge) == ["analyze"]
    assert judge_server.call_count == 1


async def test_analyze_prompt_step_with_json_schema_dict(
    judge_server: FakeJudge, judge_config: JudgeConfig
) -> None:
    judge_server.script('{"inputLength": 3, "outputLength": 4}')
    scorer = (
        create_scorer(id="s", description="d", judge=judge_config)
        .analyze(
            PromptStep(
                description="Measure",
                output_schema=LENGTHS_DICT_SCHEMA,
                create_prompt=lambda ctx: "measure",
            )
        )
        .generate_score(lambda ctx: ctx.results.analyze_step_result["outputLength"] / 10)
    )

    result = await scorer.run(output="o")

    assert result.analyze_step_result == {"inputLength": 3, "outputLength": 4}
    assert result.score == pytest.approx(0.4)


# ---- §7 case 10: generate_score prompt -----------------------------------------------------


async def test_generate_score_prompt_gives_the_number_to_the_reason_step(
    judge_server: FakeJudge, judge_config: JudgeConfig
) -> None:
    judge_server.script('{"score": 1}')
    seen_scores: list[Any] = []

    def reason(ctx: Any) -> str:
        seen_scores.append(ctx.score)
        return f"score was {ctx.score}"

    scorer = (
        create_scorer(id="s", description="d", judge=judge_config)
        .generate_score(
            PromptStep(description="Score", create_prompt=lambda ctx: "Test Generate Score prompt")
        )
        .generate_reason(reason)
    )

    result = await scorer.run(input="test input", output="test output")

    assert result.score == 1
    assert result.generate_score_prompt == "Test Generate Score prompt"
    assert seen_scores == [1]
    assert result.reason == "score was 1"
    assert only_execution(result, "generateScore").output == 1
    assert list(result.judge) == ["generateScore"]


async def test_generate_score_accepts_any_number_without_range_check(
    judge_server: FakeJudge, judge_config: JudgeConfig
) -> None:
    judge_server.script('{"score": 0.85}')
    result = await score_scorer(judge_config).run(output="o")
    assert result.score == pytest.approx(0.85)


# ---- §7 case 11: async create_prompt in generate_reason -----------------------------------


async def test_async_create_prompt_in_generate_reason(
    judge_server: FakeJudge, judge_config: JudgeConfig
) -> None:
    judge_server.script("This is an async reason for the score")

    async def reason_prompt(ctx: Any) -> str:
        pre = ctx.results.preprocess_step_result
        return (
            f"Async reason prompt: Score {ctx.score} for "
            f"{pre['reformattedInput']} and {pre['reformattedOutput']}"
        )

    scorer = (
        create_scorer(id="s", description="d", judge=judge_config)
        .preprocess(
            lambda ctx: {
                "reformattedInput": ctx.run.input.upper(),
                "reformattedOutput": ctx.run.output.upper(),
            }
        )
        .generate_score(lambda ctx: 1)
        .generate_reason(PromptStep(description="Explain", create_prompt=reason_prompt))
    )

    result = await scorer.run(input="test input", output="test output")

    assert result.generate_reason_prompt == (
        "Async reason prompt: Score 1 for TEST INPUT and TEST OUTPUT"
    )
    assert result.reason == "This is an async reason for the score"
    assert judge_server.prompts() == ["Async reason prompt: Score 1 for TEST INPUT and TEST OUTPUT"]


# ---- §7 case 12: the full judge record -----------------------------------------------------


async def test_full_judge_record_for_three_prompt_steps(
    judge_server: FakeJudge, judge_config: JudgeConfig
) -> None:
    judge_server.script(
        '{"reformattedInput": "TEST INPUT", "reformattedOutput": "TEST OUTPUT"}',
        '{"inputLength": 10, "outputLength": 11}',
        "Because it is long enough.",
    )
    scorer = (
        create_scorer(id="s", description="d", judge=judge_config)
        .preprocess(
            PromptStep(
                description="Reformat",
                output_schema=Reformatted,
                create_prompt=lambda ctx: "Test Preprocess prompt",
            )
        )
        .analyze(
            PromptStep(
                description="Measure",
                output_schema=Lengths,
                create_prompt=lambda ctx: "Test Analyze prompt",
            )
        )
        .generate_score(lambda ctx: 1)
        .generate_reason(
            PromptStep(description="Explain", create_prompt=lambda ctx: "Test Reason prompt")
        )
    )

    result = await scorer.run(input="test input", output="test output")

    assert list(result.judge) == ["preprocess", "analyze", "generateReason"]
    data = result.to_dict()
    assert list(data["judge"]) == ["preprocess", "analyze", "generateReason"]
    preprocess = dict(data["judge"]["preprocess"]["executions"][0])
    duration = preprocess.pop("durationMs")
    assert preprocess == {
        "status": "success",
        "prompt": "Test Preprocess prompt",
        "output": {"reformattedInput": "TEST INPUT", "reformattedOutput": "TEST OUTPUT"},
        "judgeModelId": "fake-judge-model",  # the model the response names
        "judgeProvider": "openai",  # the provider litellm routed to
        "usage": {"inputTokens": 10, "outputTokens": 20, "totalTokens": 30},
        "attemptCount": 1,
        "modelCallCount": 1,
    }
    assert isinstance(duration, int)
    assert not isinstance(duration, bool)
    assert duration >= 0
    for step in ("preprocess", "analyze", "generateReason"):
        assert "cost" not in data["judge"][step]["executions"][0]
    assert data["judge"]["generateReason"]["executions"][0]["output"] == (
        "Because it is long enough."
    )
    assert json.loads(json.dumps(data["judge"])) == data["judge"]
    # The record also survives a round trip back into the models.
    for step, step_result in result.judge.items():
        assert JudgeStepResult.model_validate(json.loads(json.dumps(data["judge"][step]))) == (
            step_result
        )
    assert isinstance(result.judge["preprocess"].executions[0], JudgeExecutionSuccess)


# ---- §7 case 13: mixed steps ----------------------------------------------------------------


async def test_function_steps_leave_no_judge_entry(
    judge_server: FakeJudge, judge_config: JudgeConfig
) -> None:
    judge_server.script('{"inputLength": 1, "outputLength": 2}')
    scorer = (
        create_scorer(id="s", description="d", judge=judge_config)
        .preprocess(lambda ctx: {"n": 1})
        .analyze(
            PromptStep(description="Measure", output_schema=Lengths, create_prompt=lambda c: "p")
        )
        .generate_score(lambda ctx: 0.5)
        .generate_reason(lambda ctx: "fn reason")
    )

    result = await scorer.run(output="o")

    assert list(result.judge) == ["analyze"]
    assert result.preprocess_prompt is None
    assert result.generate_score_prompt is None
    assert result.generate_reason_prompt is None
    assert result.analyze_prompt == "p"


async def test_function_only_scorer_has_no_judge_and_makes_no_call(
    judge_server: FakeJudge, judge_config: JudgeConfig
) -> None:
    scorer = create_scorer(id="s", description="d", judge=judge_config).generate_score(
        lambda ctx: 1
    )
    result = await scorer.run(output="o")
    assert result.judge is None
    assert "judge" not in result.to_dict()
    assert judge_server.call_count == 0


# ---- §7 case 14 and json_prompt_injection -------------------------------------------------


async def test_auto_injection_with_unknown_model_puts_schema_in_prompt(
    judge_server: FakeJudge, judge_config: JudgeConfig
) -> None:
    assert judge_config.json_prompt_injection is None  # unset means "auto"
    result = await score_scorer(judge_config).run(output="o")

    (request,) = judge_server.requests
    assert "response_format" not in request
    text = user_message(request)
    assert text.startswith(SCORE_PROMPT)
    schema_text = text[len(SCORE_PROMPT) :]
    assert '"score"' in schema_text
    assert '"number"' in schema_text
    assert result.score == 1


async def test_injection_false_sends_response_format_and_no_schema_text(
    judge_server: FakeJudge, judge_config: JudgeConfig
) -> None:
    judge = judge_config.model_copy(update={"json_prompt_injection": False})
    judge_server.script('{"score": 0.5}')

    result = await score_scorer(judge).run(output="o")

    (request,) = judge_server.requests
    assert user_message(request) == SCORE_PROMPT
    response_format = request["response_format"]
    assert response_format["type"] == "json_schema"
    schema = response_format["json_schema"]["schema"]
    assert schema["properties"]["score"]["type"] == "number"
    assert schema["required"] == ["score"]
    assert result.score == 0.5


async def test_injection_false_sends_the_pydantic_schema_of_an_analyze_step(
    judge_server: FakeJudge, judge_config: JudgeConfig
) -> None:
    judge = judge_config.model_copy(update={"json_prompt_injection": False})
    judge_server.script('{"inputLength": 1, "outputLength": 2}')
    scorer = (
        create_scorer(id="s", description="d", judge=judge)
        .analyze(
            PromptStep(description="Measure", output_schema=Lengths, create_prompt=lambda c: "p")
        )
        .generate_score(lambda ctx: 1)
    )

    await scorer.run(output="o")

    (request,) = judge_server.requests
    assert user_message(request) == "p"
    assert request["response_format"]["json_schema"]["schema"] == Lengths.model_json_schema()


async def test_injection_true_puts_schema_in_prompt_even_for_a_schema_capable_model(
    judge_server: FakeJudge, judge_config: JudgeConfig
) -> None:
    judge = judge_config.model_copy(
        update={"model": "openai/gpt-4o-mini", "json_prompt_injection": True}
    )

    await score_scorer(judge).run(output="o")

    (request,) = judge_server.requests
    assert "response_format" not in request
    assert user_message(request).startswith(SCORE_PROMPT + "\n")
    assert '"score"' in user_message(request)


async def test_auto_injection_with_schema_capable_model_sends_response_format(
    judge_server: FakeJudge, judge_config: JudgeConfig
) -> None:
    judge = judge_config.model_copy(update={"model": "openai/gpt-4o-mini"})
    judge_server.script('{"score": 0.75}')

    result = await score_scorer(judge).run(output="o")

    (request,) = judge_server.requests
    assert request["model"] == "gpt-4o-mini"
    assert request["response_format"]["type"] == "json_schema"
    assert user_message(request) == SCORE_PROMPT
    assert result.score == 0.75
    assert only_execution(result, "generateScore").judge_provider == "openai"


async def test_step_level_injection_false_overrides_scorer_level_true(
    judge_server: FakeJudge, judge_config: JudgeConfig
) -> None:
    scorer_judge = judge_config.model_copy(update={"json_prompt_injection": True})
    judge_server.script('{"inputLength": 1, "outputLength": 2}', '{"score": 1}')
    scorer = (
        create_scorer(id="s", description="d", judge=scorer_judge)
        .analyze(
            PromptStep(
                description="Measure",
                output_schema=Lengths,
                create_prompt=lambda ctx: "analyze this",
                judge=JudgeConfig(json_prompt_injection=False),
            )
        )
        .generate_score(PromptStep(description="Score", create_prompt=lambda ctx: "score this"))
    )

    result = await scorer.run(output="o")

    analyze_request, score_request = judge_server.requests
    assert user_message(analyze_request) == "analyze this"
    assert analyze_request["response_format"]["type"] == "json_schema"
    # The score step has no step-level judge: it keeps the scorer-level True.
    assert "response_format" not in score_request
    assert user_message(score_request).startswith("score this\n")
    assert result.analyze_step_result == {"inputLength": 1, "outputLength": 2}


async def test_record_prompt_is_the_create_prompt_string_without_schema_text(
    judge_server: FakeJudge, judge_config: JudgeConfig
) -> None:
    result = await score_scorer(judge_config).run(output="o")

    sent = judge_server.prompts()[0]
    assert sent != SCORE_PROMPT  # the schema text was added for the call ...
    assert result.generate_score_prompt == SCORE_PROMPT  # ... but not to the result
    assert only_execution(result, "generateScore").prompt == SCORE_PROMPT


# ---- §7 case 15: model_settings ----------------------------------------------------------


async def test_scorer_level_model_settings_are_forwarded(
    judge_server: FakeJudge, judge_config: JudgeConfig
) -> None:
    judge = judge_config.model_copy(
        update={"model_settings": {"temperature": 0.42, "max_tokens": 50, "num_retries": 0}}
    )
    await score_scorer(judge).run(output="o")
    (request,) = judge_server.requests
    assert request["temperature"] == 0.42
    assert request["max_tokens"] == 50


async def test_step_level_model_settings_replace_scorer_level(
    judge_server: FakeJudge, judge_config: JudgeConfig
) -> None:
    judge = judge_config.model_copy(
        update={"model_settings": {"temperature": 0.42, "max_tokens": 50, "num_retries": 0}}
    )
    scorer = score_scorer(
        judge, step_judge=JudgeConfig(model_settings={"temperature": 0.9, "num_retries": 0})
    )
    await scorer.run(output="o")
    (request,) = judge_server.requests
    assert request["temperature"] == 0.9
    assert "max_tokens" not in request  # replaced, not merged


async def test_no_model_settings_sends_no_sampling_settings(
    judge_server: FakeJudge, judge_config: JudgeConfig
) -> None:
    judge = judge_config.model_copy(update={"model_settings": None})
    await score_scorer(judge).run(output="o")
    (request,) = judge_server.requests
    assert set(request) == {"model", "messages"}


# ---- §3.2: field-by-field override ---------------------------------------------------------


async def test_step_judge_overriding_only_model_inherits_instructions_and_endpoint(
    judge_server: FakeJudge, judge_config: JudgeConfig
) -> None:
    judge_server.script(Reply('{"score": 1}', model="step-judge-answer"))
    scorer = score_scorer(judge_config, step_judge=JudgeConfig(model="openai/step-judge"))

    result = await scorer.run(output="o")

    (request,) = judge_server.requests
    assert request["model"] == "step-judge"
    assert system_message(request) == INSTRUCTIONS
    execution = only_execution(result, "generateScore")
    assert execution.judge_model_id == "step-judge-answer"
    assert execution.judge_provider == "openai"


async def test_step_judge_instructions_override_scorer_instructions(
    judge_server: FakeJudge, judge_config: JudgeConfig
) -> None:
    scorer = score_scorer(judge_config, step_judge=JudgeConfig(instructions="Be lenient."))
    await scorer.run(output="o")
    (request,) = judge_server.requests
    assert system_message(request) == "Be lenient."
    assert request["model"] == "fake-judge"
    assert [m["role"] for m in request["messages"]] == ["system", "user"]


async def test_run_request_context_is_not_sent_to_the_judge(
    judge_server: FakeJudge, judge_config: JudgeConfig
) -> None:
    await score_scorer(judge_config).run(
        output="o", request_context={"tenant": "request-context-marker"}
    )
    assert "request-context-marker" not in json.dumps(judge_server.requests)


# ---- usage from the provider ----------------------------------------------------------------


async def test_usage_with_reasoning_and_cached_tokens_is_normalised(
    judge_server: FakeJudge, judge_config: JudgeConfig
) -> None:
    judge_server.script(
        Reply(
            '{"score": 0.5}',
            prompt_tokens=12,
            completion_tokens=8,
            total_tokens=20,
            reasoning_tokens=5,
            cached_tokens=4,
        )
    )
    result = await score_scorer(judge_config).run(output="o")
    usage = only_execution(result, "generateScore").usage
    assert usage.model_dump(by_alias=True, exclude_none=True) == {
        "inputTokens": 12,
        "outputTokens": 8,
        "totalTokens": 20,
        "reasoningTokens": 5,
        "cachedInputTokens": 4,
    }


async def test_usage_total_is_computed_when_the_provider_omits_it(
    judge_server: FakeJudge, judge_config: JudgeConfig
) -> None:
    judge_server.script(
        Reply('{"score": 0.5}', prompt_tokens=7, completion_tokens=3, total_tokens=None)
    )
    result = await score_scorer(judge_config).run(output="o")
    usage = only_execution(result, "generateScore").usage
    assert (usage.input_tokens, usage.output_tokens, usage.total_tokens) == (7, 3, 10)


# ---- §7 cases 17-18: structured-output fallback ---------------------------------------------


async def test_empty_object_triggers_one_fallback_with_schema_in_prompt(
    judge_server: FakeJudge, judge_config: JudgeConfig
) -> None:
    # gpt-4o-mini takes response_format, so "auto" starts without the schema in the prompt.
    judge = judge_config.model_copy(update={"model": "openai/gpt-4o-mini"})
    judge_server.script("{}", '{"score": 1}')

    result = await score_scorer(judge).run(output="o")

    assert result.score == 1
    first, second = judge_server.requests
    assert "response_format" in first
    assert user_message(first) == SCORE_PROMPT
    assert "response_format" not in second
    assert user_message(second).startswith(SCORE_PROMPT + "\n")
    assert '"score"' in user_message(second)
    execution = only_execution(result, "generateScore")
    assert (execution.attempt_count, execution.model_call_count) == (2, 2)


async def test_empty_object_triggers_the_fallback_even_when_the_schema_accepts_it(
    judge_server: FakeJudge, judge_config: JudgeConfig
) -> None:
    permissive = {"type": "object", "properties": {"note": {"type": "string"}}}
    judge_server.script("{}", '{"note": "filled"}')
    scorer = (
        create_scorer(id="s", description="d", judge=judge_config)
        .preprocess(
            PromptStep(description="Note", output_schema=permissive, create_prompt=lambda c: "p")
        )
        .generate_score(lambda ctx: 1)
    )

    result = await scorer.run(output="o")

    assert judge_server.call_count == 2
    assert result.preprocess_step_result == {"note": "filled"}
    assert only_execution(result, "preprocess").attempt_count == 2


async def test_invalid_json_then_valid_json_records_two_attempts_and_summed_usage(
    judge_server: FakeJudge, judge_config: JudgeConfig, caplog: pytest.LogCaptureFixture
) -> None:
    judge_server.script("not valid JSON", '{"score": 1}')

    with caplog.at_level(logging.WARNING):
        result = await score_scorer(judge_config).run(output="o")

    assert judge_server.call_count == 2
    data = result.to_dict()["judge"]["generateScore"]["executions"][0]
    data.pop("durationMs")
    assert data == {
        "status": "success",
        "prompt": SCORE_PROMPT,
        "output": 1,
        "judgeModelId": "fake-judge-model",
        "judgeProvider": "openai",
        "usage": {"inputTokens": 20, "outputTokens": 40, "totalTokens": 60},
        "attemptCount": 2,
        "modelCallCount": 2,
        # Not in Mastra's record: why the first attempt did not count (issue 10).
        "attemptErrors": [
            {
                "name": "JudgeOutputError",
                "message": "The judge's answer is not valid JSON (Expecting value at line 1, "
                "column 1)",
                "code": "JUDGE_OUTPUT_INVALID_JSON",
            }
        ],
    }
    assert "raw" not in data["usage"]
    assert "providerMetadata" not in data
    assert any("retrying once" in record.getMessage() for record in caplog.records)


async def test_invalid_json_twice_fails_with_judge_output_error(
    judge_server: FakeJudge, judge_config: JudgeConfig
) -> None:
    judge_server.script("not valid JSON", "still not valid JSON", '{"score": 1}')

    with pytest.raises(ScorerRunError) as caught:
        await score_scorer(judge_config).run(output="o")

    error = caught.value
    assert judge_server.call_count == 2  # exactly one fallback, the third answer is unused
    assert error.failed_step == "generateScore"
    assert error.completed_steps == []
    assert type(error.__cause__).__name__ == "JudgeOutputError"
    assert error.result is not None
    assert error.result.score is None
    execution = only_execution(error.result, "generateScore")
    assert isinstance(execution, JudgeExecutionFailure)
    assert execution.attempt_count == 2
    assert execution.model_call_count == 2
    assert execution.raw_output == "still not valid JSON"
    assert execution.output is None
    assert execution.usage is not None
    assert (execution.usage.input_tokens, execution.usage.total_tokens) == (20, 60)
    assert execution.error.name == "JudgeOutputError"
    assert execution.error.code == "JUDGE_OUTPUT_INVALID_JSON"


async def test_pydantic_schema_mismatch_triggers_the_fallback(
    judge_server: FakeJudge, judge_config: JudgeConfig
) -> None:
    judge_server.script(
        '{"inputLength": "ten", "outputLength": 11}', '{"inputLength": 10, "outputLength": 11}'
    )
    scorer = (
        create_scorer(id="s", description="d", judge=judge_config)
        .analyze(
            PromptStep(description="Measure", output_schema=Lengths, create_prompt=lambda c: "p")
        )
        .generate_score(lambda ctx: 1)
    )

    result = await scorer.run(output="o")

    assert result.analyze_step_result == {"inputLength": 10, "outputLength": 11}
    execution = only_execution(result, "analyze")
    assert (execution.attempt_count, execution.model_call_count) == (2, 2)
    assert judge_server.call_count == 2


async def test_json_schema_dict_mismatch_twice_fails_with_schema_mismatch_code(
    judge_server: FakeJudge, judge_config: JudgeConfig
) -> None:
    judge_server.script('{"inputLength": "x"}', '{"inputLength": 1}')
    scorer = (
        create_scorer(id="s", description="d", judge=judge_config)
        .preprocess(lambda ctx: "pre")
        .analyze(
            PromptStep(
                description="Measure",
                output_schema=LENGTHS_DICT_SCHEMA,
                create_prompt=lambda c: "p",
            )
        )
        .generate_score(lambda ctx: 1)
    )

    with pytest.raises(ScorerRunError) as caught:
        await scorer.run(output="o")

    error = caught.value
    assert error.failed_step == "analyze"
    assert error.completed_steps == ["preprocess"]
    assert error.result is not None
    assert error.result.preprocess_step_result == "pre"
    assert error.result.analyze_prompt is None  # the failed step's prompt is in its record only
    execution = only_execution(error.result, "analyze")
    assert execution.status == "failed"
    assert execution.prompt == "p"
    assert execution.error.name == "JudgeOutputError"
    assert execution.error.code == "JUDGE_OUTPUT_SCHEMA_MISMATCH"
    assert execution.raw_output == '{"inputLength": 1}'
    assert judge_server.call_count == 2


async def test_code_fenced_json_is_accepted_without_fallback(
    judge_server: FakeJudge, judge_config: JudgeConfig
) -> None:
    judge_server.script('```json\n{"score": 0.25}\n```')
    result = await score_scorer(judge_config).run(output="o")
    assert result.score == 0.25
    assert judge_server.call_count == 1
    assert only_execution(result, "generateScore").attempt_count == 1


async def test_generate_reason_is_free_text_with_no_schema_and_no_fallback(
    judge_server: FakeJudge, judge_config: JudgeConfig
) -> None:
    judge_server.script('{"score": 0.5}', "not JSON { at all", "unused")
    scorer = (
        create_scorer(id="s", description="d", judge=judge_config)
        .generate_score(PromptStep(description="Score", create_prompt=lambda ctx: "score it"))
        .generate_reason(
            PromptStep(description="Explain", create_prompt=lambda ctx: f"explain {ctx.score}")
        )
    )

    result = await scorer.run(output="o")

    assert result.reason == "not JSON { at all"
    assert judge_server.call_count == 2
    reason_request = judge_server.requests[1]
    assert user_message(reason_request) == "explain 0.5"
    assert "response_format" not in reason_request
    execution = only_execution(result, "generateReason")
    assert execution.output == "not JSON { at all"
    assert execution.attempt_count == 1


# ---- missing model / instructions, unknown provider -----------------------------------------


@pytest.mark.parametrize(
    "judge",
    [
        None,
        JudgeConfig(model="openai/fake-judge"),
        JudgeConfig(instructions="You are a strict grader."),
    ],
    ids=["no-judge", "no-instructions", "no-model"],
)
async def test_missing_model_or_instructions_fails_before_any_call(
    judge_server: FakeJudge, judge: JudgeConfig | None
) -> None:
    with pytest.raises(ScorerRunError) as caught:
        await score_scorer(judge).run(output="o")

    error = caught.value
    assert isinstance(error.__cause__, MastraError)
    assert error.__cause__.id == "MASTR_SCORER_FAILED_TO_RUN_MISSING_MODEL_OR_INSTRUCTIONS"
    assert error.failed_step == "generateScore"
    assert error.result is None  # no step result, no prompt, no judge record
    assert judge_server.call_count == 0


async def test_missing_model_after_a_completed_step_leaves_no_judge_record(
    judge_server: FakeJudge,
) -> None:
    scorer = (
        create_scorer(id="s", description="d")
        .preprocess(lambda ctx: {"n": 1})
        .generate_score(PromptStep(description="Score", create_prompt=lambda ctx: "p"))
    )

    with pytest.raises(ScorerRunError) as caught:
        await scorer.run(output="o")

    assert caught.value.result is not None
    assert caught.value.result.preprocess_step_result == {"n": 1}
    assert caught.value.result.judge is None
    assert "judge" not in caught.value.result.to_dict()
    assert judge_server.call_count == 0


async def test_unknown_litellm_provider_fails_with_no_judge_record(
    judge_server: FakeJudge, judge_config: JudgeConfig
) -> None:
    judge = judge_config.model_copy(update={"model": "no-such-provider-xyz/some-model"})

    with pytest.raises(ScorerRunError) as caught:
        await score_scorer(judge).run(output="o")

    assert caught.value.result is None
    assert caught.value.__cause__ is not None
    assert judge_server.call_count == 0


# ---- builder and config errors --------------------------------------------------------------


@pytest.mark.parametrize("method", ["preprocess", "analyze"])
def test_object_prompt_step_without_output_schema_is_a_config_error(method: str) -> None:
    scorer = create_scorer(id="s", description="d")
    with pytest.raises(ScorerConfigError):
        getattr(scorer, method)(PromptStep(description="x", create_prompt=lambda ctx: "p"))


@pytest.mark.parametrize("method", ["generate_score", "generate_reason"])
def test_score_or_reason_prompt_step_with_output_schema_is_a_config_error(method: str) -> None:
    scorer = create_scorer(id="s", description="d")
    step = PromptStep(description="x", output_schema=Lengths, create_prompt=lambda ctx: "p")
    with pytest.raises(ScorerConfigError):
        getattr(scorer, method)(step)


@pytest.mark.parametrize("key", ["messages", "response_format", "model", "api_key"])
def test_judge_config_rejects_reserved_model_settings(key: str) -> None:
    with pytest.raises(ValidationError):
        JudgeConfig(model="openai/x", model_settings={key: "anything"})


def test_judge_config_accepts_ordinary_model_settings() -> None:
    config = JudgeConfig(model="openai/x", model_settings={"temperature": 0.1, "timeout": 5})
    assert config.model_settings == {"temperature": 0.1, "timeout": 5}


# ---- secrets --------------------------------------------------------------------------------


def test_api_key_is_not_in_judge_config_repr_or_str(judge_config: JudgeConfig) -> None:
    assert "test-key" not in repr(judge_config)
    assert "test-key" not in str(judge_config)
    assert "test-key" not in json.dumps(judge_config.model_dump(mode="json"))
    assert judge_config.api_key is not None
    assert judge_config.api_key.get_secret_value() == "test-key"


async def test_api_key_is_in_no_judge_record(
    judge_server: FakeJudge, judge_config: JudgeConfig
) -> None:
    judge_server.script("not valid JSON", '{"score": 1}', "a reason")
    scorer = (
        create_scorer(id="s", description="d", judge=judge_config)
        .generate_score(PromptStep(description="Score", create_prompt=lambda ctx: "score"))
        .generate_reason(PromptStep(description="Explain", create_prompt=lambda ctx: "why"))
    )

    result = await scorer.run(output="o")

    assert "test-key" not in json.dumps(result.to_dict())
    assert "test-key" not in result.model_dump_json()
    assert "test-key" not in repr(result)
    assert "test-key" not in json.dumps(judge_server.requests)  # the key goes in a header only
