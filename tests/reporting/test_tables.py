"""The dashboard's tables: experiment list, per-item table and filters, drill-down steps,
failure groups and judge usage (the experiment is described in _records.py)."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import textwrap
from datetime import timedelta
from pathlib import Path

import pandas as pd
import pytest

from core import JudgeConfig, PromptStep, Scorer, create_scorer
from core.experiments.engine import run_outcome
from core.judge.pricing import estimate_cost_usd
from core.records import (
    DatasetItem,
    ExperimentDetail,
    ExperimentInfo,
    RunCounts,
    ScorerOutcome,
)
from core.reporting import (
    StepView,
    experiments_frame,
    failure_groups,
    filter_items,
    item_frame,
    item_outcomes,
    judge_usage_frame,
    step_views,
    usage_totals,
)
from core.run_results import JudgeUsage, json_ready
from core.testing import FakeJudge, Fault

from ._records import NOW, build_detail, code_success, failed_reason_execution, judge_failure

ROOT = Path(__file__).resolve().parents[2]


def ids(frame: pd.DataFrame) -> list[str]:
    """The item ids of a filtered frame, in order."""
    return frame["item_id"].tolist()


def values(series: pd.Series) -> list[float | None]:
    """A float column with NaN as None, for comparisons."""
    return [None if math.isnan(v) else v for v in series.tolist()]


# ---- experiments ----


def experiment(**fields: object) -> ExperimentInfo:
    base: dict[str, object] = {
        "id": "e",
        "name": "n",
        "dataset_id": "d",
        "dataset_fingerprint": "f",
        "created_at": NOW,
    }
    return ExperimentInfo(**(base | fields))


def test_experiments_frame_rows_means_cost_and_duration() -> None:
    judged = experiment(
        id="e1",
        name="judged",
        dataset_name="qa",
        scorer_ids=["relevancy", "tone"],
        scores={"relevancy": 0.5, "tone": 0.25},
        judge_model="gpt-4o-mini",
        status="completed",
        total_items=10,
        counts=RunCounts(
            total=20,
            failed=3,
            usage=JudgeUsage(input_tokens=1000, output_tokens=100, total_tokens=1100),
        ),
        started_at=NOW,
        finished_at=NOW + timedelta(seconds=90),
    )
    coded = experiment(
        id="e2", scorer_ids=["tone", "exact"], scores={"tone": 1.0}, status="running"
    )
    frame = experiments_frame([judged, coded])
    assert frame.columns.tolist() == [
        "id", "name", "dataset", "status", "items", "runs", "failed", "judge_tokens",
        "est_cost_usd", "duration_s", "created_at",
        "mean · relevancy", "mean · tone", "mean · exact",
    ]  # fmt: skip
    assert frame["dataset"].tolist() == ["qa", "d"]  # the id when there is no name
    assert frame[["items", "runs", "failed", "judge_tokens"]].to_numpy().tolist() == [
        [10, 20, 3, 1100],
        [0, 0, 0, 0],
    ]
    assert frame.loc[0, "est_cost_usd"] == pytest.approx(
        estimate_cost_usd("gpt-4o-mini", 1000, 100)
    )
    assert frame.loc[0, "est_cost_usd"] > 0
    assert math.isnan(frame.loc[1, "est_cost_usd"])  # no judge, no cost
    assert values(frame["duration_s"]) == [90.0, None]  # still running: unknown
    assert values(frame["mean · relevancy"]) == [0.5, None]
    assert values(frame["mean · tone"]) == [0.25, 1.0]
    assert values(frame["mean · exact"]) == [None, None]
    assert frame["mean · exact"].dtype == float
    assert frame.loc[0, "created_at"] == pd.Timestamp(NOW)


def test_experiments_frame_cost_is_nan_for_a_model_without_price() -> None:
    info = experiment(
        judge_model="openai/fake-judge",
        usage=JudgeUsage(input_tokens=10, output_tokens=1, total_tokens=11),
    )
    assert math.isnan(experiments_frame([info]).loc[0, "est_cost_usd"])


def test_experiments_frame_empty() -> None:
    frame = experiments_frame([])
    assert frame.empty
    assert frame.columns.tolist()[:3] == ["id", "name", "dataset"]
    assert "created_at" in frame.columns


# ---- item table ----


def test_item_frame_columns_and_display_strings(detail: ExperimentDetail) -> None:
    frame = item_frame(detail)
    assert frame.columns.tolist() == [
        "item_id", "input", "output", "ground_truth", "relevancy", "tone",
        "failed", "judge_tokens", "search_text",
    ]  # fmt: skip
    assert ids(frame) == ["q1", "q2", "q3", "q4"]
    assert frame.loc[1, "input"] == '{"question": "2+2?"}'  # JSON values are dumped
    assert frame.loc[1, "ground_truth"] == ""  # no ground truth
    assert frame.loc[0, "output"] == "Paris"


def test_item_frame_scores_failures_and_tokens(detail: ExperimentDetail) -> None:
    frame = item_frame(detail)
    assert values(frame["relevancy"]) == [1.0, None, 0.25, None]  # failed, then no run
    assert values(frame["tone"]) == [0.5, 0.0, None, None]  # failed, then not scorable
    assert frame["relevancy"].dtype == float and frame["tone"].dtype == float
    assert frame["failed"].tolist() == ["", "relevancy", "tone", ""]
    # q2: 140 (analyze) + 110 (the failed generateReason): failed runs count
    assert frame["judge_tokens"].tolist() == [175, 250, 324, 0]
    assert frame["judge_tokens"].dtype == "int64"


def test_item_frame_search_text_is_lower_case_with_reasons(detail: ExperimentDetail) -> None:
    text = item_frame(detail)["search_text"]
    assert "fully relevant answer" in text[0]
    assert "what is the capital of france?" in text[0]
    assert text[0] == text[0].lower()
    assert "mostly off topic" in text[2]


def test_item_frame_failed_lists_scorers_in_experiment_order() -> None:
    detail = build_detail()
    q1 = detail.items[0]
    tone_failure = judge_failure(q1).model_copy(update={"scorer_id": "tone"})
    relevancy_failure = judge_failure(q1)
    frame = item_frame(
        detail.model_copy(
            update={
                "results": [o for o in detail.results if o.item_id != "q1"],
                "failures": [tone_failure, relevancy_failure],
            }
        )
    )
    assert frame.loc[0, "failed"] == "relevancy,tone"


def test_item_frame_ignores_outcomes_of_unknown_items(detail: ExperimentDetail) -> None:
    stray = code_success(DatasetItem(id="gone"), 1.0)
    frame = item_frame(detail.model_copy(update={"results": [*detail.results, stray]}))
    assert ids(frame) == ["q1", "q2", "q3", "q4"]


def test_item_frame_empty_experiment(detail: ExperimentDetail) -> None:
    empty = detail.model_copy(update={"items": [], "results": [], "failures": []})
    frame = item_frame(empty)
    assert frame.empty and "relevancy" in frame.columns
    assert filter_items(frame, score_range=(0, 1), failed_only=True, search="x").empty


def test_item_frame_rejects_scorer_ids_that_clash_with_columns(detail: ExperimentDetail) -> None:
    info = detail.info.model_copy(update={"scorer_ids": ["failed"]})
    with pytest.raises(ValueError, match="failed"):
        item_frame(detail.model_copy(update={"info": info}))


# ---- filters ----


@pytest.fixture
def frame(detail: ExperimentDetail) -> pd.DataFrame:
    return item_frame(detail)


def test_no_filter_keeps_everything(frame: pd.DataFrame) -> None:
    assert ids(filter_items(frame)) == ["q1", "q2", "q3", "q4"]
    assert ids(filter_items(frame, scorer_ids=["tone"])) == ["q1", "q2", "q3", "q4"]


def test_score_range_any_scorer_with_inclusive_bounds(frame: pd.DataFrame) -> None:
    # q1: tone 0.5 (upper bound); q3: relevancy 0.25 (lower bound)
    assert ids(filter_items(frame, score_range=(0.25, 0.5))) == ["q1", "q3"]
    assert ids(filter_items(frame, score_range=(0.0, 0.0))) == ["q2"]
    assert ids(filter_items(frame, score_range=(0.0, 1.0))) == ["q1", "q2", "q3"]  # q4: NaN only


def test_score_range_restricted_to_chosen_scorers(frame: pd.DataFrame) -> None:
    assert ids(filter_items(frame, scorer_ids=["relevancy"], score_range=(0.5, 1.0))) == ["q1"]
    assert ids(filter_items(frame, scorer_ids=["tone"], score_range=(0.0, 0.25))) == ["q2"]
    assert ids(filter_items(frame, scorer_ids=["tone"], score_range=(0.9, 1.0))) == []
    assert ids(filter_items(frame, scorer_ids=["nope"], score_range=(0.0, 1.0))) == []


def test_failed_only_with_and_without_a_scorer_choice(frame: pd.DataFrame) -> None:
    assert ids(filter_items(frame, failed_only=True)) == ["q2", "q3"]
    assert ids(filter_items(frame, failed_only=True, scorer_ids=["tone"])) == ["q3"]
    assert ids(filter_items(frame, failed_only=True, scorer_ids=["relevancy"])) == ["q2"]
    assert ids(filter_items(frame, failed_only=True, scorer_ids=["relevancy", "tone"])) == [
        "q2",
        "q3",
    ]


def test_failed_only_matches_whole_scorer_ids(frame: pd.DataFrame) -> None:
    renamed = frame.assign(failed=["", "tone-2", "x,tone", "tone,y"])
    assert ids(filter_items(renamed, failed_only=True, scorer_ids=["tone"])) == ["q3", "q4"]
    assert ids(filter_items(renamed, failed_only=True, scorer_ids=["tone-2"])) == ["q2"]


def test_search_is_case_insensitive_plain_text(frame: pd.DataFrame) -> None:
    assert ids(filter_items(frame, search="PARIS")) == ["q1"]
    assert ids(filter_items(frame, search="fully relevant")) == ["q1"]  # a reason
    assert ids(filter_items(frame, search="A.B*C (X)")) == ["q3"]  # regex characters, literally
    assert ids(filter_items(frame, search="[yes]")) == ["q3"]
    assert ids(filter_items(frame, search=".*")) == []
    assert ids(filter_items(frame, search='"question"')) == ["q2"]  # in the dumped JSON
    assert ids(filter_items(frame, search="   ")) == ["q1", "q2", "q3", "q4"]


def test_filters_combine(frame: pd.DataFrame) -> None:
    assert ids(filter_items(frame, failed_only=True, score_range=(0.0, 0.3))) == ["q2", "q3"]
    assert ids(filter_items(frame, failed_only=True, score_range=(0.2, 0.3))) == ["q3"]
    assert ids(filter_items(frame, failed_only=True, score_range=(0.0, 1.0), search="regex")) == [
        "q3"
    ]
    assert (
        ids(filter_items(frame, scorer_ids=["tone"], failed_only=True, score_range=(0.0, 1.0)))
        == []
    )  # tone failed on q3 but has no score there


def test_filter_returns_full_rows(frame: pd.DataFrame) -> None:
    kept = filter_items(frame, search="paris")
    assert kept.columns.tolist() == frame.columns.tolist()
    assert kept.iloc[0]["relevancy"] == 1.0


# ---- drill-down ----


def test_item_outcomes_per_scorer(detail: ExperimentDetail) -> None:
    q2 = item_outcomes(detail, "q2")
    assert list(q2) == ["relevancy", "tone"]
    assert q2["relevancy"].status == "failed" and q2["tone"].status == "success"
    assert list(item_outcomes(detail, "q4")) == ["tone"]
    assert item_outcomes(detail, "missing") == {}


def test_step_views_of_a_judge_success(detail: ExperimentDetail) -> None:
    views = step_views(item_outcomes(detail, "q1")["relevancy"])
    assert [(v.name, v.kind, v.failed) for v in views] == [
        ("analyze", "prompt", False),
        ("generateScore", "function", False),
        ("generateReason", "prompt", False),
    ]
    analyze, score, reason = views
    assert analyze.result == {"verdicts": ["yes"]} and analyze.prompt == "Judge q1"
    assert [e["judgeModelId"] for e in analyze.executions] == ["gpt-4o-mini-2024-07-18"]
    assert analyze.executions[0]["usage"] == {
        "inputTokens": 100,
        "outputTokens": 20,
        "totalTokens": 120,
    }
    assert score.result == 1.0 and score.prompt is None and score.executions == []
    assert reason.result == "Fully RELEVANT answer" and reason.prompt == "Explain q1"


def test_step_views_of_a_code_success_and_a_not_scorable_run(detail: ExperimentDetail) -> None:
    views = step_views(item_outcomes(detail, "q1")["tone"])
    assert [(v.name, v.kind, v.result) for v in views] == [
        ("preprocess", "function", {"words": 3}),
        ("analyze", "function", {"sentiment": 0.5}),
        ("generateScore", "function", 0.5),
    ]
    assert step_views(item_outcomes(detail, "q4")["tone"]) == [
        StepView("preprocess", "function", None, None, [], False)
    ]


def test_step_views_of_a_success_loaded_without_its_result() -> None:
    light = ScorerOutcome(item_id="a", scorer_id="s", status="success", score=0.5, reason="ok")
    assert [(v.name, v.result) for v in step_views(light)] == [
        ("generateScore", 0.5),
        ("generateReason", "ok"),
    ]


def test_step_views_of_a_judge_failure_mark_the_failed_step(detail: ExperimentDetail) -> None:
    views = step_views(item_outcomes(detail, "q2")["relevancy"])
    assert [(v.name, v.kind, v.failed) for v in views] == [
        ("analyze", "prompt", False),
        ("generateScore", "function", False),
        ("generateReason", "prompt", True),
    ]
    assert views[1].result == 0.2  # the recovered score
    failed = views[2]
    assert failed.prompt == "Explain the score of q2"  # only in the failed execution
    assert failed.result is None
    assert failed.executions == [json_ready(failed_reason_execution())]  # not twice
    assert failed.executions[0]["status"] == "failed"
    assert failed.executions[0]["error"] == {"name": "JudgeOutputError", "message": "invalid JSON"}
    assert failed.executions[0]["rawOutput"] == "not json"


def test_step_views_add_a_failed_execution_missing_from_the_snapshot() -> None:
    q2 = build_detail().items[1]
    views = step_views(judge_failure(q2, failed_in_snapshot=False))
    assert views[-1].failed and views[-1].prompt == "Explain the score of q2"
    assert [e["status"] for e in views[-1].executions] == ["failed"]


def test_step_views_of_a_function_step_failure(detail: ExperimentDetail) -> None:
    views = step_views(item_outcomes(detail, "q3")["tone"])
    assert [(v.name, v.kind, v.result, v.failed) for v in views] == [
        ("preprocess", "function", {"words": 4}, False),
        ("analyze", "function", None, True),
    ]
    assert views[1].prompt is None and views[1].executions == []


def test_step_views_of_a_failure_without_snapshot() -> None:
    bare = ScorerOutcome(
        item_id="a",
        scorer_id="s",
        status="failed",
        error="boom",
        failed_step="preprocess",
        completed_steps=[],
    )
    assert [(v.name, v.failed) for v in step_views(bare)] == [("preprocess", True)]
    no_step = bare.model_copy(update={"failed_step": None})
    assert step_views(no_step) == []


# ---- failures ----


def failure(item_id: str, scorer_id: str, step: str | None, error: str) -> ScorerOutcome:
    return ScorerOutcome(
        item_id=item_id, scorer_id=scorer_id, status="failed", failed_step=step, error=error
    )


def test_failure_groups_count_and_sort() -> None:
    failures = [
        failure("a", "relevancy", "generateReason", "timeout"),
        failure("d", "tone", "analyze", "bad input"),
        failure("b", "relevancy", "generateReason", "timeout"),
        failure("e", "relevancy", "analyze", "timeout"),
        failure("c", "relevancy", "generateReason", "timeout"),
        failure("f", "relevancy", "analyze", "timeout"),
        failure("g", "relevancy", "generateReason", "rate limited"),
        failure("h", "relevancy", None, "input rejected"),
    ]
    groups = failure_groups(failures)
    assert groups.columns.tolist() == ["scorer_id", "failed_step", "error", "count", "item_ids"]
    assert groups.to_dict("records") == [
        {"scorer_id": "relevancy", "failed_step": "generateReason", "error": "timeout",
         "count": 3, "item_ids": ["a", "b", "c"]},
        {"scorer_id": "relevancy", "failed_step": "analyze", "error": "timeout",
         "count": 2, "item_ids": ["e", "f"]},
        {"scorer_id": "tone", "failed_step": "analyze", "error": "bad input",
         "count": 1, "item_ids": ["d"]},
        {"scorer_id": "relevancy", "failed_step": "generateReason", "error": "rate limited",
         "count": 1, "item_ids": ["g"]},
        {"scorer_id": "relevancy", "failed_step": "", "error": "input rejected",
         "count": 1, "item_ids": ["h"]},
    ]  # fmt: skip
    assert groups["count"].sum() == len(failures)


def test_failure_groups_empty() -> None:
    groups = failure_groups([])
    assert groups.empty
    assert groups.columns.tolist() == ["scorer_id", "failed_step", "error", "count", "item_ids"]


# ---- judge usage ----


def test_judge_usage_rows_cover_successes_and_failures_once(
    outcomes: list[ScorerOutcome],
) -> None:
    usage = judge_usage_frame(outcomes)
    assert usage.columns.tolist() == [
        "item_id", "scorer_id", "step", "status", "model", "provider", "attempts",
        "model_calls", "cached", "duration_ms", "input_tokens", "output_tokens",
        "reasoning_tokens", "cached_input_tokens", "total_tokens", "est_cost_usd",
    ]  # fmt: skip
    assert not usage["cached"].any()  # every answer came from the provider
    rows = usage[["item_id", "step", "status", "attempts", "model_calls", "duration_ms"]]
    assert rows.to_numpy().tolist() == [
        ["q1", "analyze", "success", 1, 1, 500],
        ["q1", "generateReason", "success", 1, 1, 100],
        ["q3", "analyze", "success", 1, 1, 700],
        ["q3", "generateReason", "success", 1, 1, 90],
        ["q2", "analyze", "success", 1, 1, 600],
        ["q2", "generateReason", "failed", 3, 2, 900],  # in the snapshot and failed_execution
    ]
    assert set(usage["scorer_id"]) == {"relevancy"}  # tone never called a judge
    assert set(usage["model"]) == {"gpt-4o-mini-2024-07-18"}
    assert set(usage["provider"]) == {"openai"}
    q3 = usage.iloc[2]
    assert [q3["input_tokens"], q3["output_tokens"], q3["reasoning_tokens"]] == [200, 80, 50]
    assert [q3["cached_input_tokens"], q3["total_tokens"]] == [150, 280]
    assert usage.iloc[0]["reasoning_tokens"] == 0  # not reported: 0
    assert usage["reasoning_tokens"].dtype == "int64"


def test_judge_usage_adds_a_failed_execution_missing_from_the_snapshot() -> None:
    q2 = build_detail().items[1]
    usage = judge_usage_frame([judge_failure(q2, failed_in_snapshot=False)])
    assert usage[["step", "status"]].to_numpy().tolist() == [
        ["analyze", "success"],
        ["generateReason", "failed"],
    ]


def test_judge_usage_cost_is_estimated_per_execution(outcomes: list[ScorerOutcome]) -> None:
    usage = judge_usage_frame(outcomes)
    first = usage.iloc[0]
    expected = estimate_cost_usd("openai/gpt-4o-mini-2024-07-18", 100, 20)
    assert expected is not None and first["est_cost_usd"] == pytest.approx(expected)
    assert usage["est_cost_usd"].notna().all()


def test_judge_usage_cost_is_nan_for_unknown_models_and_missing_tokens() -> None:
    failed = failed_reason_execution().model_copy(update={"judge_model_id": "fake-judge"})
    no_usage = failed.model_copy(update={"usage": None, "judge_model_id": "gpt-4o-mini"})
    outcomes = [
        ScorerOutcome(item_id=i, scorer_id="s", status="failed", failed_step="analyze",
                      failed_execution=e)
        for i, e in (("a", failed), ("b", no_usage))
    ]  # fmt: skip
    usage = judge_usage_frame(outcomes)
    assert usage["status"].tolist() == ["failed", "failed"]
    assert usage["est_cost_usd"].isna().all()
    assert usage.iloc[1][["input_tokens", "total_tokens"]].tolist() == [0, 0]
    assert math.isnan(usage_totals(usage)["est_cost_usd"])


def test_usage_totals_are_sums(outcomes: list[ScorerOutcome]) -> None:
    usage = judge_usage_frame(outcomes)
    totals = usage_totals(usage)
    assert totals["input_tokens"] == 100 + 50 + 110 + 70 + 200 + 40
    assert totals["output_tokens"] == 20 + 5 + 30 + 40 + 80 + 4
    assert totals["reasoning_tokens"] == 50
    assert totals["cached_input_tokens"] == 150
    assert totals["total_tokens"] == 120 + 55 + 140 + 110 + 280 + 44
    assert totals["model_calls"] == 7 and totals["attempts"] == 8
    assert totals["duration_ms"] == 500 + 100 + 600 + 900 + 700 + 90
    assert totals["executions"] == 6 and totals["failed"] == 1
    assert totals["est_cost_usd"] == pytest.approx(usage["est_cost_usd"].sum())
    # the same totals as the runs' own usage records (failed runs included)
    assert totals["total_tokens"] == sum(o.usage.total_tokens or 0 for o in outcomes)
    assert totals["model_calls"] == sum(o.judge_calls for o in outcomes)
    assert totals["attempts"] == sum(o.judge_attempts for o in outcomes)


def test_usage_of_no_judge_call(detail: ExperimentDetail) -> None:
    usage = judge_usage_frame([o for o in detail.results if o.scorer_id == "tone"])
    assert usage.empty and "est_cost_usd" in usage.columns
    totals = usage_totals(usage)
    assert totals["total_tokens"] == 0 and totals["executions"] == 0 and totals["failed"] == 0
    assert math.isnan(totals["est_cost_usd"])
    assert usage_totals(judge_usage_frame([]))["input_tokens"] == 0


def test_tables_without_judge_tokens_never_import_litellm() -> None:
    script = textwrap.dedent(
        """
        import sys
        from datetime import UTC, datetime
        from core.records import (DatasetItem, ExperimentDetail, ExperimentInfo,
                                             ScorerOutcome)
        from core.reporting import (experiments_frame, item_frame, judge_usage_frame,
                                    usage_totals, cost_by_scorer)
        info = ExperimentInfo(id="e", name="n", dataset_id="d", dataset_fingerprint="f",
                              scorer_ids=["s"], judge_model="gpt-4o-mini",
                              created_at=datetime.now(UTC))
        run = ScorerOutcome(item_id="a", scorer_id="s", status="success", score=1.0,
                            result={"runId": "r", "score": 1.0})
        detail = ExperimentDetail(info=info, items=[DatasetItem(id="a")], results=[run],
                                  failures=[], failures_in_memory=True)
        experiments_frame([info]); item_frame(detail)
        usage = judge_usage_frame([run]); usage_totals(usage); cost_by_scorer(usage)
        print("litellm" in sys.modules)
        """
    )
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    completed = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, env=env
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "False"


# ---- outcomes from the real engine (fake judge on 127.0.0.1) ----


def judged_scorer(judge: JudgeConfig) -> Scorer:
    return (
        create_scorer(id="judged", description="score and reason by a judge", judge=judge)
        .generate_score(PromptStep(description="Score", create_prompt=lambda ctx: "score this"))
        .generate_reason(PromptStep(description="Why", create_prompt=lambda ctx: "explain this"))
    )


async def test_engine_outcomes_give_steps_and_usage(
    judge_server: FakeJudge, judge_config: JudgeConfig
) -> None:
    judge_server.script(
        '{"score": 0.8}', "Because.", '{"score": 0}', Fault(status=400, message="reason failed")
    )
    scorer = judged_scorer(judge_config)
    success = await run_outcome(DatasetItem(id="a", input="q", output="x"), scorer)
    failure = await run_outcome(DatasetItem(id="b", input="q", output="y"), scorer)
    assert (success.status, failure.status) == ("success", "failed")

    assert [(v.name, v.kind, v.prompt, v.failed) for v in step_views(success)] == [
        ("generateScore", "prompt", "score this", False),
        ("generateReason", "prompt", "explain this", False),
    ]
    steps = step_views(failure)
    assert [(v.name, v.failed) for v in steps] == [
        ("generateScore", False),
        ("generateReason", True),
    ]
    assert steps[0].result == 0 and steps[1].prompt == "explain this"
    assert [e["status"] for e in steps[1].executions] == ["failed"]  # snapshot + failed_execution

    usage = judge_usage_frame([success, failure])
    assert usage[["item_id", "step", "status"]].to_numpy().tolist() == [
        ["a", "generateScore", "success"],
        ["a", "generateReason", "success"],
        ["b", "generateScore", "success"],
        ["b", "generateReason", "failed"],
    ]
    totals = usage_totals(usage)
    assert totals["total_tokens"] == success.usage.total_tokens + failure.usage.total_tokens
    assert totals["attempts"] == success.judge_attempts + failure.judge_attempts
    assert totals["model_calls"] == success.judge_calls + failure.judge_calls
    assert usage["est_cost_usd"].isna().all()  # the fake judge has no price
