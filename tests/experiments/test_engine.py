"""run_experiment: each (item, scorer) run isolated, failures with what was recovered, progress,
cancellation and bounded concurrency; item by item with prepare, gates and the raise and
fail_item policies (what run_evals stands on); the counts record."""

from __future__ import annotations

import asyncio
import json
import math

import pytest

from core import JudgeConfig, JudgeUsage, PromptStep, Scorer, ScorerRunError, create_scorer
from core.experiments.engine import (
    CancelToken,
    ItemRun,
    RunFailed,
    ScorerInput,
    run_experiment,
)
from core.records import DatasetItem, ExperimentProgress, RunCounts, ScorerOutcome
from core.testing import FakeJudge, Fault


def items(count: int) -> list[DatasetItem]:
    return [
        DatasetItem(id=f"i{n}", input=f"question {n}", output=f"answer {n}") for n in range(count)
    ]


def constant(scorer_id: str, value: float) -> Scorer:
    return create_scorer(id=scorer_id, description="constant").generate_score(lambda ctx: value)


def raising_on(item_input: str) -> Scorer:
    def score(ctx):  # type: ignore[no-untyped-def]
        if ctx.run.input == item_input:
            raise RuntimeError(f"cannot score {item_input}")
        return 0.5

    return create_scorer(id="fragile", description="raises on one item").generate_score(score)


def judge_scorer(judge: JudgeConfig) -> Scorer:
    return (
        create_scorer(id="judged", description="score and reason by a judge", judge=judge)
        .generate_score(PromptStep(description="Score", create_prompt=lambda ctx: "score this"))
        .generate_reason(PromptStep(description="Why", create_prompt=lambda ctx: "explain this"))
    )


async def collect(**arguments):  # type: ignore[no-untyped-def]
    outcomes: list[ScorerOutcome] = []
    progress: list[ExperimentProgress] = []
    summary = await run_experiment(
        on_outcome=outcomes.append, on_progress=progress.append, **arguments
    )
    return summary, outcomes, progress


async def test_one_scorer_raising_on_one_item_leaves_every_other_result() -> None:
    summary, outcomes, _ = await collect(
        items=items(4), scorers=[constant("steady", 1.0), raising_on("question 2")], concurrency=3
    )
    by_key = {(o.item_id, o.scorer_id): o for o in outcomes}
    assert len(by_key) == 8
    failed = [o for o in outcomes if o.status == "failed"]
    assert [(o.item_id, o.scorer_id) for o in failed] == [("i2", "fragile")]
    assert failed[0].score is None
    assert failed[0].error == "Scorer Run Failed: cannot score question 2"
    assert failed[0].error_type == "ScorerRunError"
    assert failed[0].failed_step == "generateScore" and failed[0].completed_steps == []
    assert failed[0].recovered_score is None and failed[0].snapshot is None
    for key, outcome in by_key.items():
        if key != ("i2", "fragile"):
            assert outcome.status == "success"
            assert outcome.result is not None and outcome.result["score"] == outcome.score
    assert summary.status == "completed" and summary.counts.failed > 0
    assert (summary.counts.succeeded, summary.counts.failed, summary.counts.skipped) == (7, 1, 0)
    assert summary.scores == {"steady": 1.0, "fragile": 0.5}


async def test_scorer_run_error_keeps_recovered_score_and_failed_execution(
    judge_server: FakeJudge, judge_config: JudgeConfig
) -> None:
    judge_server.script('{"score": 0}', Fault(status=400, message="reason provider failed"))
    summary, outcomes, _ = await collect(
        items=items(1), scorers=[judge_scorer(judge_config)], concurrency=1
    )
    [outcome] = outcomes
    assert outcome.status == "failed"
    assert outcome.score is None
    assert outcome.recovered_score == 0 and outcome.recovered_reason is None
    assert outcome.failed_step == "generateReason"
    assert outcome.completed_steps == ["generateScore"]
    assert "reason provider failed" in outcome.error
    execution = outcome.failed_execution
    assert execution is not None and execution.status == "failed"
    assert execution.prompt == "explain this"
    assert (execution.attempt_count, execution.model_call_count) == (1, 0)
    assert outcome.snapshot is not None and outcome.snapshot["score"] == 0
    # Usage sums every execution, the failed one included (which reported none).
    assert outcome.usage.input_tokens == 10 and outcome.usage.total_tokens == 30
    assert (outcome.judge_calls, outcome.judge_attempts) == (1, 2)
    assert summary.status == "failed"  # every run failed
    assert summary.counts.judge_attempts == 2


async def test_success_carries_the_mastra_result_and_judge_usage(
    judge_server: FakeJudge, judge_config: JudgeConfig
) -> None:
    judge_server.script('{"score": 0.8}', "Because.")
    _, [outcome], progress = await collect(
        items=items(1), scorers=[judge_scorer(judge_config)], concurrency=1
    )
    assert outcome.status == "success"
    assert (outcome.score, outcome.reason) == (0.8, "Because.")
    result = outcome.result
    assert result is not None
    assert result["generateScorePrompt"] == "score this"
    assert [e["status"] for e in result["judge"]["generateScore"]["executions"]] == ["success"]
    assert outcome.usage.total_tokens == 60 and outcome.judge_calls == 2
    assert progress[-1].counts.usage.total_tokens == 60 and progress[-1].counts.judge_calls == 2


async def test_errors_that_are_not_scorer_run_errors_are_isolated_too() -> None:
    no_score_step = create_scorer(id="incomplete", description="no generate_score")
    summary, outcomes, _ = await collect(
        items=items(2), scorers=[no_score_step, constant("ok", 1.0)], concurrency=2
    )
    failed = [o for o in outcomes if o.status == "failed"]
    assert len(failed) == 2 and {o.error_type for o in failed} == {"ScorerConfigError"}
    assert all(o.failed_step is None for o in failed)
    assert summary.counts.succeeded == 2


async def test_progress_counts_up_to_the_total() -> None:
    _, _, progress = await collect(
        items=items(5),
        scorers=[constant("a", 1.0), raising_on("question 0")],
        concurrency=2,
        progress_interval_s=0.0,
    )
    assert [p.counts.done for p in progress] == [*list(range(1, 11)), 10]
    assert progress[-1].status == "completed" and progress[-1].eta_s is None
    assert progress[-1].counts.failed == 1 and progress[-1].counts.total == 10
    assert all(p.status == "running" for p in progress[:-1])
    assert progress[3].eta_s is not None and progress[3].elapsed_s >= 0


async def test_cancel_stops_new_runs_and_keeps_finished_ones() -> None:
    token = CancelToken()
    outcomes: list[ScorerOutcome] = []

    def on_outcome(outcome: ScorerOutcome) -> None:
        outcomes.append(outcome)
        if len(outcomes) == 3:
            token.cancel()

    summary = await run_experiment(
        items=items(20),
        scorers=[constant("a", 1.0)],
        concurrency=1,
        on_outcome=on_outcome,
        on_progress=None,
        cancel=token,
    )
    assert summary.status == "cancelled"
    assert len(outcomes) == 3 and summary.counts.succeeded == 3 and summary.counts.skipped == 17


async def test_cancel_can_abort_runs_in_flight() -> None:
    in_flight = 0
    both_running = asyncio.Event()

    async def stuck(ctx):  # type: ignore[no-untyped-def]
        nonlocal in_flight
        in_flight += 1
        if in_flight == 2:
            both_running.set()
        await asyncio.Event().wait()  # never set: only the abort ends this run
        return 1.0

    scorer = create_scorer(id="stuck", description="never finishes").generate_score(stuck)
    token = CancelToken()

    async def abort_once_both_run() -> None:
        await both_running.wait()
        # From another thread, as the service's cancel button does.
        await asyncio.to_thread(token.cancel, abort_in_flight=True)

    aborter = asyncio.ensure_future(abort_once_both_run())
    summary = await asyncio.wait_for(
        run_experiment(
            items=items(4),
            scorers=[scorer],
            concurrency=2,
            on_outcome=None,
            on_progress=None,
            cancel=token,
        ),
        timeout=30,
    )
    await aborter
    assert summary.status == "cancelled"
    assert summary.counts.succeeded == 0 and summary.counts.skipped == 4


async def test_concurrency_is_bounded() -> None:
    running = 0
    peak = 0

    async def track(ctx):  # type: ignore[no-untyped-def]
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0.01)
        running -= 1
        return 1.0

    scorers = [create_scorer(id=f"s{n}", description="d").generate_score(track) for n in range(3)]
    summary = await run_experiment(
        items=items(10),
        scorers=scorers,
        concurrency=4,
        on_outcome=None,
        on_progress=None,
        cancel=None,
    )
    assert summary.counts.succeeded == 30 and peak == 4


async def test_rate_limited_judge_is_retried_through_judge_settings(
    judge_server: FakeJudge, judge_config: JudgeConfig, retry_waits: list[float]
) -> None:
    retrying = judge_config.model_copy(update={"model_settings": {"num_retries": 2}})
    scorer = create_scorer(id="judged", description="d", judge=retrying).generate_score(
        PromptStep(description="Score", create_prompt=lambda ctx: "score this")
    )
    judge_server.script(Fault(status=429, message="slow down"), '{"score": 1}')
    _, [outcome], _ = await collect(items=items(1), scorers=[scorer], concurrency=1)
    assert outcome.status == "success" and outcome.score == 1
    assert judge_server.call_count == 2 == outcome.judge_attempts
    assert len(retry_waits) == 1


async def test_a_failing_callback_stops_the_experiment() -> None:
    def explode(outcome: ScorerOutcome) -> None:
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        await run_experiment(
            items=items(3),
            scorers=[constant("a", 1.0)],
            on_outcome=explode,
            on_progress=None,
            cancel=None,
        )


async def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="concurrency must be a positive integer"):
        await run_experiment(
            items=items(1),
            scorers=[constant("a", 1)],
            concurrency=0,
            on_outcome=None,
            on_progress=None,
            cancel=None,
        )
    with pytest.raises(ValueError, match="repeated: a"):
        await run_experiment(
            items=items(1),
            scorers=[constant("a", 1), constant("a", 0)],
            on_outcome=None,
            on_progress=None,
            cancel=None,
        )


@pytest.mark.parametrize("bad", ["NaN", "Infinity", "-Infinity", "1e400"])
async def test_a_judge_answering_non_finite_scores_never_makes_a_non_finite_mean(
    judge_server: FakeJudge, judge_config: JudgeConfig, bad: str
) -> None:
    # Items 1 and 3 get a non-finite score (twice: the answer and its fallback); 0 and 2 get 0.5.
    def answer(request: dict) -> str:  # type: ignore[type-arg]
        prompt = request["messages"][-1]["content"]
        score = bad if "question 1" in prompt or "question 3" in prompt else "0.5"
        return f'{{"score": {score}}}'

    judge_server.responder = answer
    scorer = create_scorer(id="judged", description="d", judge=judge_config).generate_score(
        PromptStep(description="Score", create_prompt=lambda ctx: f"score {ctx.run.input}")
    )

    summary, outcomes, progress = await collect(items=items(4), scorers=[scorer], concurrency=2)

    assert summary.scores == {"judged": 0.5}
    by_item = {o.item_id: o for o in outcomes}
    assert [by_item[i].status for i in ("i0", "i1", "i2", "i3")] == [
        "success",
        "failed",
        "success",
        "failed",
    ]
    for outcome in outcomes:
        assert outcome.score is None or math.isfinite(outcome.score)
        assert outcome.recovered_score is None
        for payload in (outcome.result, outcome.snapshot):
            json.dumps(payload, allow_nan=False)  # strict JSON: raises on NaN or Infinity
        json.dumps(outcome.model_dump(mode="json", by_alias=True), allow_nan=False)
    failed = by_item["i1"]
    assert failed.failed_execution is not None
    assert failed.failed_execution.error.code == "JUDGE_OUTPUT_INVALID_JSON"
    assert (failed.judge_attempts, failed.judge_calls) == (2, 2)
    assert summary.counts.judge_attempts == judge_server.call_count == 6
    json.dumps(progress[-1].model_dump(mode="json"), allow_nan=False)


async def test_the_mean_of_huge_finite_scores_stays_finite() -> None:
    summary = await run_experiment(items=items(3), scorers=[constant("s", 1.5e308)])
    assert summary.scores["s"] == pytest.approx(1.5e308) and math.isfinite(summary.scores["s"])


# ---- item by item (what run_evals stands on) ----


async def test_item_options_need_per_item() -> None:
    async def prepare(item: DatasetItem) -> ScorerInput:
        return ScorerInput.of(item)

    for options in ({"prepare": prepare}, {"on_item": print}, {"on_error": "fail_item"}):
        with pytest.raises(ValueError, match="pass per_item=True"):
            await run_experiment(items=items(1), scorers=[constant("a", 1)], **options)
    with pytest.raises(ValueError, match="on_error must be"):
        await run_experiment(items=items(1), scorers=[constant("a", 1)], on_error="ignore")


async def test_per_item_runs_prepare_gates_then_scorers_in_order() -> None:
    seen: list[tuple[str, object]] = []

    def recording(scorer_id: str) -> Scorer:
        def score(ctx):  # type: ignore[no-untyped-def]
            seen.append((scorer_id, ctx.run.output))
            return 1.0

        return create_scorer(id=scorer_id, description="records").generate_score(score)

    async def prepare(item: DatasetItem) -> ScorerInput:
        return ScorerInput(item.input, f"made for {item.id}", None, None)

    done: list[ItemRun] = []
    summary = await run_experiment(
        items=items(2),
        scorers=[recording("first"), recording("second")],
        concurrency=1,
        per_item=True,
        prepare=prepare,
        gates=[recording("gate")],
        on_item=done.append,
    )
    assert seen == [
        ("gate", "made for i0"),
        ("first", "made for i0"),
        ("second", "made for i0"),
        ("gate", "made for i1"),
        ("first", "made for i1"),
        ("second", "made for i1"),
    ]
    assert [[run.scorer_id for run in d.runs] for d in done] == [["first", "second"]] * 2
    assert [[run.scorer_id for run in d.gates] for d in done] == [["gate"]] * 2
    assert summary.counts.total == 4 and summary.counts.succeeded == 4  # gates are not counted


async def test_fail_item_stops_the_items_other_scorers_only() -> None:
    done: list[ItemRun] = []
    summary = await run_experiment(
        items=items(3),
        scorers=[raising_on("question 1"), constant("after", 1.0)],
        per_item=True,
        on_error="fail_item",
        on_item=done.append,
    )
    by_item = {d.item.id: [(run.scorer_id, run.ok) for run in d.runs] for d in done}
    assert by_item == {
        "i0": [("fragile", True), ("after", True)],
        "i1": [("fragile", False)],  # "after" never ran on it
        "i2": [("fragile", True), ("after", True)],
    }
    assert (summary.counts.succeeded, summary.counts.failed, summary.counts.skipped) == (4, 1, 1)
    assert summary.status == "completed"


async def test_raise_stops_at_the_first_failure_with_its_item_and_cause() -> None:
    started: list[str] = []

    def score(ctx):  # type: ignore[no-untyped-def]
        started.append(ctx.run.input)
        if ctx.run.input == "question 0":
            raise RuntimeError("broken on the first item")
        return 1.0

    scorer = create_scorer(id="first-breaks", description="d").generate_score(score)
    with pytest.raises(RunFailed) as raised:
        await run_experiment(items=items(50), scorers=[scorer], concurrency=1, on_error="raise")
    assert raised.value.item.id == "i0" and raised.value.scorer_id == "first-breaks"
    assert isinstance(raised.value.__cause__, ScorerRunError)
    assert raised.value.error is raised.value.__cause__
    assert started == ["question 0"]  # nothing ran after it


async def test_a_failing_prepare_fails_its_item_or_raises() -> None:
    async def prepare(item: DatasetItem) -> ScorerInput:
        if item.id == "i1":
            raise ConnectionError("target down")
        return ScorerInput.of(item)

    done: list[ItemRun] = []
    await run_experiment(
        items=items(2),
        scorers=[constant("a", 1.0)],
        per_item=True,
        prepare=prepare,
        on_error="fail_item",
        on_item=done.append,
    )
    failed = next(d for d in done if d.item.id == "i1")
    assert isinstance(failed.error, ConnectionError) and failed.runs == [] and failed.given is None
    with pytest.raises(RunFailed) as raised:
        await run_experiment(
            items=items(2),
            scorers=[constant("a", 1.0)],
            per_item=True,
            prepare=prepare,
            on_error="raise",
        )
    assert raised.value.scorer_id is None and isinstance(raised.value.__cause__, ConnectionError)


# ---- counts ----


def test_counts_add_runs_and_parts() -> None:
    success = ScorerOutcome(
        item_id="a",
        scorer_id="s",
        status="success",
        usage=JudgeUsage(input_tokens=3, total_tokens=3),
        judge_calls=1,
        judge_attempts=2,
    )
    failure = ScorerOutcome(item_id="b", scorer_id="s", status="failed", judge_attempts=1)
    counts = RunCounts(total=4).with_outcome(success).with_outcome(failure)
    assert (counts.succeeded, counts.failed, counts.done, counts.skipped) == (1, 1, 2, 2)
    assert (counts.judge_calls, counts.judge_attempts, counts.usage.total_tokens) == (1, 3, 3)
    assert counts.fraction == 0.5 and RunCounts().fraction == 1.0
    both = counts + RunCounts(total=2, succeeded=2, usage=JudgeUsage(total_tokens=4))
    assert (both.total, both.succeeded, both.failed, both.usage.total_tokens) == (6, 3, 1, 7)


async def test_skip_leaves_pairs_out_of_the_runs_and_of_the_counts() -> None:
    done = {("i0", "a"), ("i1", "a"), ("i1", "b")}
    summary, outcomes, progress = await collect(
        items=iter(items(3)),
        item_count=3,
        scorers=[constant("a", 1.0), raising_on("question 2")],
        skip=lambda item, scorer_id: (item.id, scorer_id.replace("fragile", "b")) in done,
    )
    assert sorted((o.item_id, o.scorer_id) for o in outcomes) == [
        ("i0", "fragile"),
        ("i2", "a"),
        ("i2", "fragile"),
    ]
    counts = summary.counts
    assert (counts.total, counts.succeeded, counts.failed) == (3, 2, 1)
    assert summary.status == "completed" and progress[-1].counts == counts


async def test_skip_works_item_by_item_too() -> None:
    seen: list[tuple[str, list[str]]] = []
    summary = await run_experiment(
        items=items(3),
        scorers=[constant("a", 1.0), constant("b", 0.0)],
        per_item=True,
        on_item=lambda done: seen.append((done.item.id, [r.scorer_id for r in done.runs])),
        skip=lambda item, scorer_id: item.id == "i1" or (item.id, scorer_id) == ("i2", "a"),
    )
    assert sorted(seen) == [("i0", ["a", "b"]), ("i2", ["b"])]  # i1 skipped whole
    assert (summary.counts.total, summary.counts.succeeded) == (3, 3)


def test_a_function_runs_row_is_the_row_of_its_record() -> None:
    """The stored row of a run of function steps, built from its parts, is the row its
    result record gives (every column), whether the run echoed the item or changed its texts;
    a scorer awaiting something on the same experiment is run and counted too."""
    from dataclasses import replace

    from core.experiments.jobs import _row
    from core.scoring import RunParts

    async def later(ctx):  # type: ignore[no-untyped-def]
        await asyncio.sleep(0)
        return 0.5

    echoing = (
        create_scorer(id="echoing", description="d")
        .preprocess(lambda ctx: {"words": {"b", "a"}})
        .generate_score(lambda ctx: 1)
        .generate_reason(lambda ctx: "fine")
    )
    changing = create_scorer(
        id="changing", description="d", prepare_run=lambda run: {**run.model_dump(), "input": "x"}
    ).generate_score(lambda ctx: 0.25)
    awaiting = create_scorer(id="awaiting", description="d").generate_score(later)
    runs = []
    given = [
        DatasetItem(id="i1", input="q", output="a", ground_truth="t", metadata={"k": 1}),
        *items(2),
    ]
    summary = asyncio.run(
        run_experiment(items=given, scorers=[echoing, changing, awaiting], on_run=runs.append)
    )
    assert summary.counts.succeeded == 9 and summary.scores["awaiting"] == 0.5
    parts = [run for run in runs if isinstance(run.produced, RunParts)]
    assert {run.scorer_id for run in parts} == {"echoing", "changing", "awaiting"}
    for run in parts:
        assert _row(run) == _row(replace(run, produced=run.produced.record()))
    echoes = {run.scorer_id: _row(run)[15] for run in parts}
    assert echoes == {"echoing": True, "changing": False, "awaiting": True}
