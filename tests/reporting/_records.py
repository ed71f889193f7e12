"""A small experiment built by hand from real result records (`ScorerRunResult.to_dict()`),
shared by the table and figure tests.

Scorers: `relevancy` (analyze: prompt, generateScore: function, generateReason: prompt) and
`tone` (code only: preprocess, analyze, generateScore).

    item  relevancy                                 tone
    q1    1.0, judge on analyze + generateReason    0.5
    q2    failed at generateReason (recovered 0.2)  0.0
    q3    0.25, reasoning and cached tokens         failed at analyze (a function step)
    q4    (no run)                                  not scorable at preprocess

Judge executions (model gpt-4o-mini-2024-07-18, provider openai):

    item  step            status   in   out  reasoning  cached  total  attempts  calls  ms
    q1    analyze         success  100  20   -          -       120    1         1      500
    q1    generateReason  success  50   5    -          -       55     1         1      100
    q2    analyze         success  110  30   -          -       140    1         1      600
    q2    generateReason  failed   70   40   -          -       110    3         2      900
    q3    analyze         success  200  80   50         150     280    1         1      700
    q3    generateReason  success  40   4    -          -       44     1         1      90
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from core.records import (
    DatasetItem,
    ExperimentDetail,
    ExperimentInfo,
    RunCounts,
    ScorerOutcome,
)
from core.run_results import (
    ErrorSummary,
    JudgeExecutionFailure,
    JudgeExecutionSuccess,
    JudgeStepResult,
    JudgeUsage,
    NotScorableInfo,
    ScorerRunResult,
)

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
MODEL = "gpt-4o-mini-2024-07-18"


def success_execution(
    prompt: str, output: Any, usage: JudgeUsage, *, duration_ms: int, model: str = MODEL
) -> JudgeExecutionSuccess:
    """A successful judge execution with one attempt."""
    return JudgeExecutionSuccess(
        prompt=prompt,
        judge_model_id=model,
        judge_provider="openai",
        attempt_count=1,
        model_call_count=1,
        duration_ms=duration_ms,
        output=output,
        usage=usage,
    )


def usage(
    input_tokens: int, output_tokens: int, reasoning: int | None = None, cached: int | None = None
) -> JudgeUsage:
    """Usage with total = input + output."""
    return JudgeUsage(
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        total_tokens=input_tokens + output_tokens,
        reasoning_tokens=reasoning,
        cached_input_tokens=cached,
    )


def judge_success(
    item: DatasetItem,
    score: float,
    reason: str,
    analyze: JudgeExecutionSuccess,
    explain: JudgeExecutionSuccess,
) -> ScorerOutcome:
    """A relevancy success with judge executions on analyze and generateReason."""
    result = ScorerRunResult(
        run_id=f"run-{item.id}",
        input=item.input,
        output=item.output,
        ground_truth=item.ground_truth,
        score=score,
        reason=reason,
        analyze_step_result=analyze.output,
        analyze_prompt=analyze.prompt,
        generate_reason_prompt=explain.prompt,
        judge={
            "analyze": JudgeStepResult(executions=(analyze,)),
            "generateReason": JudgeStepResult(executions=(explain,)),
        },
    )
    return ScorerOutcome(
        item_id=item.id,
        scorer_id="relevancy",
        status="success",
        score=score,
        reason=reason,
        result=result.to_dict(),
        usage=analyze.usage + explain.usage,
        judge_calls=2,
        judge_attempts=2,
    )


def failed_reason_execution() -> JudgeExecutionFailure:
    """q2's failed generateReason execution."""
    return JudgeExecutionFailure(
        prompt="Explain the score of q2",
        judge_model_id=MODEL,
        judge_provider="openai",
        attempt_count=3,
        model_call_count=2,
        duration_ms=900,
        error=ErrorSummary(name="JudgeOutputError", message="invalid JSON"),
        raw_output="not json",
        usage=usage(70, 40),
        finish_reason="stop",
    )


def judge_failure(item: DatasetItem, *, failed_in_snapshot: bool = True) -> ScorerOutcome:
    """q2's relevancy failure at generateReason; the engine also appends the failed execution
    to the snapshot's judge record (`failed_in_snapshot`)."""
    analyze = success_execution("Judge q2", {"verdicts": ["no"]}, usage(110, 30), duration_ms=600)
    failed = failed_reason_execution()
    judge = {"analyze": JudgeStepResult(executions=(analyze,))}
    if failed_in_snapshot:
        judge["generateReason"] = JudgeStepResult(executions=(failed,))
    snapshot = ScorerRunResult(
        run_id="run-q2",
        input=item.input,
        output=item.output,
        score=0.2,
        analyze_step_result=analyze.output,
        analyze_prompt=analyze.prompt,
        judge=judge,
    )
    return ScorerOutcome(
        item_id=item.id,
        scorer_id="relevancy",
        status="failed",
        error="Scorer Run Failed: invalid JSON",
        error_type="ScorerRunError",
        recovered_score=0.2,
        failed_step="generateReason",
        completed_steps=["analyze", "generateScore"],
        failed_execution=failed,
        snapshot=snapshot.to_dict(),
        usage=analyze.usage + usage(70, 40),
        judge_calls=3,
        judge_attempts=4,
    )


def code_success(item: DatasetItem, score: float) -> ScorerOutcome:
    """A tone success (code steps only)."""
    result = ScorerRunResult(
        run_id=f"tone-{item.id}",
        input=item.input,
        output=item.output,
        score=score,
        preprocess_step_result={"words": 3},
        analyze_step_result={"sentiment": score},
    )
    return ScorerOutcome(
        item_id=item.id, scorer_id="tone", status="success", score=score, result=result.to_dict()
    )


def code_failure(item: DatasetItem) -> ScorerOutcome:
    """q3's tone failure: its analyze (function) step raised."""
    snapshot = ScorerRunResult(
        run_id="tone-q3", input=item.input, output=item.output, preprocess_step_result={"words": 4}
    )
    return ScorerOutcome(
        item_id=item.id,
        scorer_id="tone",
        status="failed",
        error="Scorer Run Failed: bad input",
        error_type="ScorerRunError",
        failed_step="analyze",
        completed_steps=["preprocess"],
        snapshot=snapshot.to_dict(),
    )


def not_scorable(item: DatasetItem) -> ScorerOutcome:
    """q4's tone run: not scorable at preprocess."""
    result = ScorerRunResult(
        run_id="tone-q4",
        input=item.input,
        output=item.output,
        not_scorable=NotScorableInfo(step="preprocess", reason="empty output"),
    )
    return ScorerOutcome(
        item_id=item.id, scorer_id="tone", status="success", result=result.to_dict()
    )


def build_items() -> list[DatasetItem]:
    """The four items."""
    return [
        DatasetItem(
            id="q1", input="What is the capital of France?", output="Paris", ground_truth="PARIS"
        ),
        DatasetItem(id="q2", input={"question": "2+2?"}, output="5"),
        DatasetItem(
            id="q3", input="Regex chars a.b*c (x)", output="It is [yes]", ground_truth="no"
        ),
        DatasetItem(id="q4", input="Say nothing", output="", ground_truth="ok"),
    ]


def build_detail(items: list[DatasetItem] | None = None) -> ExperimentDetail:
    """The experiment of the module docstring."""
    q1, q2, q3, q4 = items or build_items()
    results = [
        judge_success(
            q1,
            1.0,
            "Fully RELEVANT answer",
            success_execution("Judge q1", {"verdicts": ["yes"]}, usage(100, 20), duration_ms=500),
            success_execution("Explain q1", "Fully RELEVANT answer", usage(50, 5), duration_ms=100),
        ),
        code_success(q1, 0.5),
        code_success(q2, 0.0),
        judge_success(
            q3,
            0.25,
            "Mostly off topic",
            success_execution(
                "Judge q3", {"verdicts": ["no"]}, usage(200, 80, 50, 150), duration_ms=700
            ),
            success_execution("Explain q3", "Mostly off topic", usage(40, 4), duration_ms=90),
        ),
        not_scorable(q4),
    ]
    failures = [judge_failure(q2), code_failure(q3)]
    info = ExperimentInfo(
        id="e1",
        name="demo",
        dataset_id="d1",
        dataset_fingerprint="fp",
        scorer_ids=["relevancy", "tone"],
        judge_model="gpt-4o-mini",
        status="completed",
        total_items=4,
        counts=RunCounts(total=8, succeeded=5, failed=2),
        created_at=NOW,
    )
    return ExperimentDetail(
        info=info,
        items=[q1, q2, q3, q4],
        results=results,
        failures=failures,
        failures_in_memory=True,
    )
