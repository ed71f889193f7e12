"""Judge answers are validated as strictly as Mastra's zod on `JSON.parse` (scorelab issue 10,
point 3): non-finite numbers are not JSON, and pydantic output schemas never coerce. Both are
format errors: one structured-output fallback, then a `JudgeOutputError`.
"""

from __future__ import annotations

import datetime
import enum
import json
from typing import Any

import pytest
from pydantic import BaseModel

from core import (
    JudgeConfig,
    JudgeExecutionFailure,
    PromptStep,
    Scorer,
    ScorerRunError,
    create_scorer,
)
from core.judge.schema import JudgeOutputError, parse_judge_json
from core.testing import FakeJudge

NON_FINITE_ANSWERS = {
    "nan": '{"score": NaN}',
    "infinity": '{"score": Infinity}',
    "minus-infinity": '{"score": -Infinity}',
    "overflowing-float": '{"score": 1e400}',
    "overflowing-negative-float": '{"score": -1e400}',
    "overflowing-integer": '{"score": 1' + "0" * 400 + "}",
    "nested": '{"score": 1, "detail": [0.5, NaN]}',
}


def strict_json(value: Any) -> str:
    """JSON as a browser would parse it back: no NaN or Infinity anywhere."""
    return json.dumps(value, allow_nan=False)


def score_scorer(judge: JudgeConfig) -> Scorer:
    step = PromptStep(description="Score", create_prompt=lambda ctx: "score this")
    return create_scorer(id="judged", description="d", judge=judge).generate_score(step)


def analyze_scorer(judge: JudgeConfig, schema: Any) -> Scorer:
    step = PromptStep(description="Check", output_schema=schema, create_prompt=lambda c: "check")
    return (
        create_scorer(id="checked", description="d", judge=judge)
        .analyze(step)
        .generate_score(lambda ctx: 1)
    )


# ---- non-finite numbers ---------------------------------------------------------------------


@pytest.mark.parametrize("answer", NON_FINITE_ANSWERS.values(), ids=NON_FINITE_ANSWERS.keys())
def test_non_finite_numbers_are_not_json(answer: str) -> None:
    with pytest.raises(JudgeOutputError) as caught:
        parse_judge_json(answer)
    assert caught.value.id == "JUDGE_OUTPUT_INVALID_JSON"
    assert "0" * 20 not in str(caught.value)  # the message never quotes the answer


def test_large_finite_numbers_are_still_json() -> None:
    assert parse_judge_json('{"score": 1e308}') == {"score": 1e308}
    assert parse_judge_json('{"score": -0.0, "n": 9007199254740993}') == {
        "score": -0.0,
        "n": 9007199254740993,
    }
    assert parse_judge_json('```json\n{"score": 0.5}\n```') == {"score": 0.5}


@pytest.mark.parametrize("answer", NON_FINITE_ANSWERS.values(), ids=NON_FINITE_ANSWERS.keys())
async def test_a_non_finite_score_takes_the_fallback(
    judge_server: FakeJudge, judge_config: JudgeConfig, answer: str
) -> None:
    judge_server.script(answer, '{"score": 0.25}')

    result = await score_scorer(judge_config).run(output="o")

    assert result.score == 0.25
    assert judge_server.call_count == 2
    assert result.judge is not None
    [execution] = result.judge["generateScore"].executions
    assert [e.code for e in execution.attempt_errors or ()] == ["JUDGE_OUTPUT_INVALID_JSON"]
    strict_json(result.to_dict())


@pytest.mark.parametrize("answer", NON_FINITE_ANSWERS.values(), ids=NON_FINITE_ANSWERS.keys())
async def test_a_judge_answering_non_finite_twice_fails_as_a_format_error(
    judge_server: FakeJudge, judge_config: JudgeConfig, answer: str
) -> None:
    judge_server.responder = lambda request: answer

    with pytest.raises(ScorerRunError) as caught:
        await score_scorer(judge_config).run(output="o")

    error = caught.value
    assert isinstance(error.__cause__, JudgeOutputError)
    assert error.__cause__.id == "JUDGE_OUTPUT_INVALID_JSON"
    assert judge_server.call_count == 2
    assert error.result is not None and error.result.score is None
    assert error.result.judge is not None
    [execution] = error.result.judge["generateScore"].executions
    assert isinstance(execution, JudgeExecutionFailure)
    assert execution.output is None
    assert execution.raw_output == answer  # kept as text, never as a number
    strict_json(error.result.to_dict())
    strict_json(error.to_dict())


# ---- pydantic schemas: strict, no coercion ------------------------------------------------


class Checks(BaseModel):
    inputLength: int
    ok: bool


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        ('{"inputLength": "10", "ok": true}', "inputLength"),
        ('{"inputLength": 10, "ok": "yes"}', "ok"),
        ('{"inputLength": 10, "ok": "true"}', "ok"),
        ('{"inputLength": 10, "ok": 1}', "ok"),
        ('{"inputLength": true, "ok": true}', "inputLength"),
        ('{"inputLength": 10.5, "ok": true}', "inputLength"),
        ('{"inputLength": null, "ok": true}', "inputLength"),
    ],
)
async def test_pydantic_schemas_do_not_coerce(
    judge_server: FakeJudge, judge_config: JudgeConfig, answer: str, problem: str
) -> None:
    judge_server.responder = lambda request: answer

    with pytest.raises(ScorerRunError) as caught:
        await analyze_scorer(judge_config, Checks).run(output="o")

    cause = caught.value.__cause__
    assert isinstance(cause, JudgeOutputError)
    assert cause.id == "JUDGE_OUTPUT_SCHEMA_MISMATCH"
    assert problem in str(cause)
    assert judge_server.call_count == 2  # the one fallback, then the format error


async def test_the_issue_example_takes_the_fallback(
    judge_server: FakeJudge, judge_config: JudgeConfig
) -> None:
    judge_server.script('{"inputLength": "10", "ok": "yes"}', '{"inputLength": 10, "ok": true}')

    result = await analyze_scorer(judge_config, Checks).run(output="o")

    assert result.analyze_step_result == {"inputLength": 10, "ok": True}
    assert result.judge is not None
    [execution] = result.judge["analyze"].executions
    [first] = execution.attempt_errors or ()
    assert first.code == "JUDGE_OUTPUT_SCHEMA_MISMATCH"
    assert "inputLength" in first.message and "ok" in first.message
    assert '"10"' not in first.message and "yes" not in first.message  # never quotes the answer


class Level(enum.Enum):
    LOW = "low"
    HIGH = "high"


class Inner(BaseModel):
    weight: float


class Rich(BaseModel):
    pair: tuple[int, str]
    day: datetime.date
    level: Level
    count: int
    weight: float
    items: list[Inner]
    note: str | None = None


async def test_strict_validation_keeps_what_json_can_express(
    judge_server: FakeJudge, judge_config: JudgeConfig
) -> None:
    # Arrays fill tuples, ISO strings dates, strings enums; 10.0 is 10 (as for JSON.parse);
    # an int fills a float.
    answer = {
        "pair": [1, "x"],
        "day": "2024-05-06",
        "level": "high",
        "count": 10.0,
        "weight": 2,
        "items": [{"weight": 0.5}],
    }
    judge_server.script(json.dumps(answer))

    result = await analyze_scorer(judge_config, Rich).run(output="o")

    assert judge_server.call_count == 1
    assert result.analyze_step_result == {
        "pair": [1, "x"],
        "day": "2024-05-06",
        "level": "high",
        "count": 10,
        "weight": 2.0,
        "items": [{"weight": 0.5}],
        "note": None,
    }


# ---- dict JSON schemas: jsonschema, as before ----------------------------------------------

COUNT_SCHEMA = {
    "type": "object",
    "properties": {"count": {"type": "integer"}},
    "required": ["count"],
}


async def test_dict_schemas_keep_jsonschema_semantics(
    judge_server: FakeJudge, judge_config: JudgeConfig
) -> None:
    judge_server.script('{"count": "10"}', '{"count": 10.0}')

    result = await analyze_scorer(judge_config, COUNT_SCHEMA).run(output="o")

    assert judge_server.call_count == 2  # "10" is not an integer; 10.0 is, to jsonschema
    assert result.analyze_step_result == {"count": 10.0}


async def test_dict_schemas_refuse_non_finite_numbers_too(
    judge_server: FakeJudge, judge_config: JudgeConfig
) -> None:
    schema = {"type": "object", "properties": {"weight": {"type": "number"}}}
    judge_server.responder = lambda request: '{"weight": Infinity}'

    with pytest.raises(ScorerRunError) as caught:
        await analyze_scorer(judge_config, schema).run(output="o")

    assert isinstance(caught.value.__cause__, JudgeOutputError)
    assert caught.value.__cause__.id == "JUDGE_OUTPUT_INVALID_JSON"
