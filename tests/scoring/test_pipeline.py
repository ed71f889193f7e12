"""The function-step pipeline: scorer-core §7 cases 1-8, the builder, prepare_run, run_sync."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest

from core import (
    ScorerConfigError,
    ScorerRun,
    ScorerRunError,
    StepInfo,
    create_scorer,
)

IN = [{"role": "user", "content": "test input"}]
OUT = {"role": "assistant", "text": "test output"}


def upper_preprocess(ctx: Any) -> dict[str, str]:
    return {
        "reformattedInput": ctx.run.input[0]["content"].upper(),
        "reformattedOutput": ctx.run.output["text"].upper(),
    }


def test_missing_generate_score_raises_before_any_step_runs() -> None:
    calls: list[str] = []
    scorer = create_scorer(id="s", description="d").preprocess(lambda ctx: calls.append("pre"))
    with pytest.raises(ScorerConfigError) as raised:
        scorer.run_sync(input=IN, output=OUT)
    assert raised.value.id == "MASTR_SCORER_FAILED_TO_RUN_MISSING_GENERATE_SCORE"
    assert raised.value.details == {"scorerId": "s", "steps": "preprocess"}
    assert calls == []


@pytest.mark.parametrize("bad_id", ["", "   ", None, 3])
def test_missing_id_raises_at_creation(bad_id: Any) -> None:
    with pytest.raises(ScorerConfigError) as raised:
        create_scorer(id=bad_id, description="d")
    assert raised.value.id == "MASTR_SCORER_FAILED_TO_CREATE_MISSING_ID"
    assert isinstance(raised.value, ValueError)


def test_basic_function_scorer_result() -> None:
    scorer = create_scorer(id="s", description="d").generate_score(
        lambda ctx: 1 if ctx.run.input[0]["content"] and ctx.run.output["text"] else 0
    )
    result = scorer.run_sync(input=IN, output=OUT)
    assert result.score == 1
    assert str(uuid.UUID(result.run_id, version=4)) == result.run_id
    assert result.judge is None
    assert result.input == IN and result.output == OUT
    for empty in (
        "reason",
        "preprocess_step_result",
        "analyze_step_result",
        "preprocess_prompt",
        "analyze_prompt",
        "generate_score_prompt",
        "generate_reason_prompt",
        "not_scorable",
    ):
        assert getattr(result, empty) is None, empty
    assert result.to_dict() == {"runId": result.run_id, "input": IN, "output": OUT, "score": 1}


def test_run_id_is_kept_or_fresh() -> None:
    scorer = create_scorer(id="s", description="d").generate_score(lambda ctx: 1)
    assert scorer.run_sync(output=OUT, run_id="failure-run-id").run_id == "failure-run-id"
    assert scorer.run_sync(output=OUT).run_id != scorer.run_sync(output=OUT).run_id


def test_results_are_passed_forward_through_all_four_steps() -> None:
    seen: dict[str, Any] = {}

    def analyze(ctx: Any) -> dict[str, str]:
        seen["analyze_sees_score"] = ctx.score
        pre = ctx.results.preprocess_step_result
        return {
            "inputFromAnalyze": pre["reformattedInput"] + "!",
            "outputFromAnalyze": pre["reformattedOutput"] + "!",
        }

    def reason(ctx: Any) -> str:
        a = ctx.results.analyze_step_result
        seen["reason_results_score"] = ctx.results.generate_score_step_result
        return (
            f"the reason the score is {ctx.score} is because the input is "
            f"{a['inputFromAnalyze']} and the output is {a['outputFromAnalyze']}"
        )

    scorer = (
        create_scorer(id="s", description="d")
        .preprocess(upper_preprocess)
        .analyze(analyze)
        .generate_score(
            lambda ctx: (
                1
                if ctx.results.analyze_step_result["inputFromAnalyze"]
                and ctx.results.analyze_step_result["outputFromAnalyze"]
                else 0
            )
        )
        .generate_reason(reason)
    )
    result = scorer.run_sync(input=IN, output=OUT)
    assert result.preprocess_step_result == {
        "reformattedInput": "TEST INPUT",
        "reformattedOutput": "TEST OUTPUT",
    }
    assert result.analyze_step_result == {
        "inputFromAnalyze": "TEST INPUT!",
        "outputFromAnalyze": "TEST OUTPUT!",
    }
    assert result.score == 1
    assert result.reason == (
        "the reason the score is 1 is because the input is TEST INPUT! and the output is "
        "TEST OUTPUT!"
    )
    assert seen == {"analyze_sees_score": None, "reason_results_score": 1}


def test_reason_without_analyze_uses_score_and_run() -> None:
    scorer = (
        create_scorer(id="s", description="d")
        .generate_score(lambda ctx: 1 if ctx.run.input else 0)
        .generate_reason(
            lambda ctx: (
                f"the reason the score is {ctx.score} is because the input is "
                f"{ctx.run.input[0]['content']} and the output is {ctx.run.output['text']}"
            )
        )
    )
    result = scorer.run_sync(input=IN, output=OUT)
    assert result.reason == (
        "the reason the score is 1 is because the input is test input and the output is test output"
    )


async def test_async_steps_are_awaited() -> None:
    async def preprocess(ctx: Any) -> dict[str, str]:
        await asyncio.sleep(0.01)
        return upper_preprocess(ctx)

    async def score(ctx: Any) -> int:
        await asyncio.sleep(0)
        return 1 if ctx.results.preprocess_step_result["reformattedInput"] else 0

    scorer = create_scorer(id="s", description="d").preprocess(preprocess).generate_score(score)
    result = await scorer.run(input=IN, output=OUT)
    assert result.score == 1
    assert result.preprocess_step_result == {
        "reformattedInput": "TEST INPUT",
        "reformattedOutput": "TEST OUTPUT",
    }
    assert scorer.run_sync(input=IN, output=OUT).score == 1


def test_a_chain_built_out_of_order_runs_in_canonical_order() -> None:
    """Seed: .run() executes preprocess, analyze, generateScore, generateReason in that order,
    whatever order the chain was built in (issue 19)."""
    order: list[str] = []

    def reason(ctx: Any) -> str:
        order.append("reason")
        return f"score {ctx.score}, analysis {ctx.results.analyze_step_result}"

    def score(ctx: Any) -> float:
        order.append("score")
        return float(ctx.results.analyze_step_result["n"]) / 4

    def analyze(ctx: Any) -> dict[str, int]:
        order.append("analyze")
        return {"n": len(ctx.results.preprocess_step_result)}

    def preprocess(ctx: Any) -> list[str]:
        order.append("pre")
        return ctx.run.output.split()

    scorer = (
        create_scorer(id="s", description="d")
        .generate_reason(reason)
        .generate_score(score)
        .analyze(analyze)
        .preprocess(preprocess)
    )
    result = scorer.run_sync(output="a b c")
    assert order == ["pre", "analyze", "score", "reason"]
    assert result.score == 0.75
    assert result.reason == "score 0.75, analysis {'n': 3}"
    assert [step.name for step in scorer.steps] == [
        "preprocess",
        "analyze",
        "generateScore",
        "generateReason",
    ]


def test_prepare_run_transforms_what_steps_and_result_see() -> None:
    seen: list[Any] = []

    def prepare(run: ScorerRun) -> ScorerRun:
        return run.replace(ground_truth=None, output=run.output[:5])

    scorer = create_scorer(id="s", description="d", prepare_run=prepare).generate_score(
        lambda ctx: seen.append((ctx.run.output, ctx.run.ground_truth)) or 1
    )
    result = scorer.run_sync(input="q", output="a long answer", ground_truth="truth", run_id="r")
    assert seen == [("a lon", None)]
    assert result.output == "a lon"
    assert result.ground_truth is None
    assert result.run_id == "r"


async def test_async_prepare_run_returning_a_dict_and_no_run_id_gets_one() -> None:
    async def prepare(run: ScorerRun) -> dict[str, Any]:
        return {"input": run.input, "output": run.output.upper()}

    scorer = create_scorer(id="s", description="d", prepare_run=prepare).generate_score(
        lambda ctx: 1.0 if ctx.run.output == "ABC" else 0.0
    )
    result = await scorer.run(output="abc", run_id="given")
    assert result.score == 1.0
    # The dict left the run id out: the prepared run is what counts, so a fresh one is made.
    assert result.run_id != "given" and uuid.UUID(result.run_id)


def test_prepare_run_returning_something_else_is_a_clear_error() -> None:
    scorer = create_scorer(id="s", description="d", prepare_run=lambda run: 42).generate_score(
        lambda ctx: 1
    )
    with pytest.raises(ScorerConfigError, match="prepare_run of scorer 's' must return"):
        scorer.run_sync(output="x")


def test_builder_is_immutable_and_returns_new_scorers() -> None:
    base = create_scorer(id="s", description="d")
    with_score = base.generate_score(lambda ctx: 1)
    assert base is not with_score
    assert base.steps == []
    assert [s.name for s in with_score.steps] == ["generateScore"]
    with pytest.raises(AttributeError):
        with_score.id = "other"  # type: ignore[misc]


def test_same_step_twice_is_rejected() -> None:
    scorer = create_scorer(id="s", description="d").generate_score(lambda ctx: 1)
    with pytest.raises(ScorerConfigError, match="already has a generate_score step"):
        scorer.generate_score(lambda ctx: 2)


@pytest.mark.parametrize(
    ("definition", "message"),
    [
        (42, "expected a function taking ctx or a PromptStep, not int"),
        (lambda: 1, "must take exactly one argument"),
        (lambda ctx, other: 1, "must take exactly one argument"),
    ],
)
def test_bad_step_definitions_are_rejected(definition: Any, message: str) -> None:
    with pytest.raises(ScorerConfigError, match=message):
        create_scorer(id="s", description="d").analyze(definition)


def test_config_type_errors_are_reported_together() -> None:
    with pytest.raises(ScorerConfigError) as raised:
        create_scorer(id="s", description=3, judge="gpt")  # type: ignore[arg-type]
    assert "description must be a string" in str(raised.value)
    assert "judge must be a JudgeConfig" in str(raised.value)


def test_properties_and_steps_info() -> None:
    def analyze(ctx: Any) -> int:
        return 1

    analyze.description = "counts things"  # type: ignore[attr-defined]
    scorer = (
        create_scorer(id="quality", description="Evaluates quality")
        .analyze(analyze)
        .generate_score(lambda ctx: 1)
    )
    assert scorer.name == "quality"
    assert create_scorer(id="q", name="Quality", description="").name == "Quality"
    assert scorer.description == "Evaluates quality"
    assert scorer.judge is None
    assert scorer.steps == [
        StepInfo("analyze", "function", "counts things"),
        StepInfo("generateScore", "function", None),
    ]
    assert scorer.has_judge_steps is False


@pytest.mark.parametrize("bad_score", ["0.5", None, True, float("nan"), float("inf"), [1]])
def test_generate_score_must_return_a_finite_number(bad_score: Any) -> None:
    scorer = create_scorer(id="s", description="d").generate_score(lambda ctx: bad_score)
    with pytest.raises(ScorerRunError) as raised:
        scorer.run_sync(output="x")
    assert raised.value.failed_step == "generateScore"
    assert "generate_score" in str(raised.value)


async def test_run_sync_works_inside_a_running_event_loop() -> None:
    async def slow_score(ctx: Any) -> float:
        await asyncio.sleep(0.001)
        return 0.25

    scorer = create_scorer(id="s", description="d").generate_score(slow_score)
    # We are inside pytest-asyncio's loop here, as in Jupyter or Streamlit.
    assert scorer.run_sync(output="x").score == 0.25


def test_run_sync_of_a_sync_scorer_needs_no_event_loop() -> None:
    scorer = create_scorer(id="s", description="d").generate_score(
        lambda ctx: 0.5 if _no_running_loop() else 0.0
    )
    assert scorer.run_sync(output="x").score == 0.5


def _no_running_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return True
    return False


def test_result_round_trips_through_json() -> None:
    scorer = (
        create_scorer(id="s", description="d")
        .preprocess(lambda ctx: {"keywords": {"b", "a"}, "empty": None})
        .generate_score(lambda ctx: 0)
    )
    result = scorer.run_sync(input="q", output="a", ground_truth="g", request_context={"k": 1})
    as_dict = result.to_dict()
    assert as_dict == {
        "runId": result.run_id,
        "input": "q",
        "output": "a",
        "groundTruth": "g",
        "requestContext": {"k": 1},
        "score": 0,
        "preprocessStepResult": {"keywords": ["a", "b"], "empty": None},
    }
    again = type(result).model_validate(as_dict)
    assert again.to_dict() == as_dict


def test_to_dict_keeps_nulls_inside_data_and_drops_absent_fields() -> None:
    """Mastra's JSON.stringify drops `undefined` (our None fields), never a `null` in data."""
    scorer = (
        create_scorer(id="s", description="d")
        .preprocess(lambda ctx: {"outputUnit": None, "nested": [None, {"k": None}]})
        .analyze(lambda ctx: None)
        .generate_score(lambda ctx: 1)
    )
    as_dict = scorer.run_sync(output="a", input={"question": None}).to_dict()
    assert as_dict["preprocessStepResult"] == {"outputUnit": None, "nested": [None, {"k": None}]}
    assert as_dict["input"] == {"question": None}
    # The record's own fields that were never set are absent, not null.
    assert "groundTruth" not in as_dict and "reason" not in as_dict
    assert "analyzeStepResult" not in as_dict  # a step that returned None: undefined in Mastra


async def test_to_dict_keeps_nulls_in_a_judge_output(judge_config: Any, judge_server: Any) -> None:
    from pydantic import BaseModel

    from core import PromptStep

    class Measure(BaseModel):
        value: float
        unit: str | None

    judge_server.script('{"value": 3, "unit": null}', '{"score": 0.5}')
    scorer = (
        create_scorer(id="s", description="d", judge=judge_config)
        .preprocess(
            PromptStep(description="m", create_prompt=lambda ctx: "p", output_schema=Measure)
        )
        .generate_score(lambda ctx: 1)
    )
    result = await scorer.run(output="a")
    as_dict = result.to_dict()
    assert as_dict["preprocessStepResult"] == {"value": 3.0, "unit": None}
    output = as_dict["judge"]["preprocess"]["executions"][0]["output"]
    assert output == {"value": 3.0, "unit": None}
    assert "cost" not in as_dict["judge"]["preprocess"]["executions"][0]  # unset record field
    assert type(result).model_validate(as_dict).to_dict() == as_dict
