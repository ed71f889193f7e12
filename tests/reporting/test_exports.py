"""Exports are pure functions: JSON in Mastra's shape, spreadsheet-safe CSV, escaped HTML."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime

import pytest

from core.exchange.exports import experiment_json, neutralise_cell, result_rows, results_csv
from core.exchange.html import experiment_html
from core.records import (
    DatasetItem,
    ExperimentDetail,
    ExperimentInfo,
    RunCounts,
    ScorerOutcome,
)
from core.run_results import ErrorSummary, JudgeExecutionFailure

NOW = datetime(2026, 11, 29, tzinfo=UTC)


def detail(failures_in_memory: bool = True) -> ExperimentDetail:
    info = ExperimentInfo(
        id="e1",
        name="<b>exp</b>",
        dataset_id="d1",
        dataset_name="qa",
        dataset_fingerprint="f",
        scorer_ids=["s1", "s2"],
        status="completed",
        total_items=2,
        counts=RunCounts(total=4, succeeded=3, failed=1),
        scores={"s1": 0.5, "s2": 1.0},
        created_at=NOW,
        started_at=NOW,
        finished_at=NOW,
    )
    items = [
        DatasetItem(id="a", input="=1+1", output="<img src=x onerror=alert(1)>", ground_truth="g"),
        DatasetItem(id="b", input="@SUM(A1)", output="-2", metadata={"k": "v"}),
    ]
    success = [
        ScorerOutcome(
            item_id="a",
            scorer_id="s1",
            status="success",
            score=0.0,
            reason="+bad",
            result={"runId": "r", "score": 0.0},
        ),
        ScorerOutcome(
            item_id="a",
            scorer_id="s2",
            status="success",
            score=1.0,
            result={"runId": "r2", "score": 1.0},
        ),
        ScorerOutcome(
            item_id="b",
            scorer_id="s2",
            status="success",
            score=1.0,
            result={"runId": "r3", "score": 1.0},
        ),
    ]
    failure = ScorerOutcome(
        item_id="b",
        scorer_id="s1",
        status="failed",
        error="Scorer Run Failed: x",
        error_type="ScorerRunError",
        recovered_score=1.0,
        failed_step="generateReason",
        completed_steps=["generateScore"],
        failed_execution=JudgeExecutionFailure(
            prompt="why",
            judge_model_id="m",
            attempt_count=1,
            model_call_count=0,
            duration_ms=1,
            error=ErrorSummary(name="E", message="boom"),
            finish_reason="error",
        ),
    )
    return ExperimentDetail(
        info=info,
        items=items,
        results=success,
        failures=[failure],
        failures_in_memory=failures_in_memory,
    )


def test_json_shape_with_results_and_failure_entries() -> None:
    report = experiment_json(detail(), thresholds=[{"id": "s1", "passed": True}])
    assert report["experimentId"] == "e1" and report["scores"] == {"s1": 0.5, "s2": 1.0}
    assert report["summary"]["totalItems"] == 2
    assert report["summary"]["thresholdResults"] == [{"id": "s1", "passed": True}]
    first, second = report["items"]
    assert list(first["results"]) == ["s1", "s2"]
    assert first["results"]["s1"] == {"runId": "r", "score": 0.0}
    failed = second["results"]["s1"]
    assert failed["score"] == 1.0 and failed["reason"] is None  # the recovered score
    assert failed["failedStep"] == "generateReason"
    assert failed["completedSteps"] == ["generateScore"]
    assert failed["failedJudgeExecution"]["status"] == "failed"
    assert second["metadata"] == {"k": "v"}


def test_rows_cover_successes_and_failures_in_dataset_order() -> None:
    rows = result_rows(detail())
    assert [(r["itemId"], r["scorerId"], r["status"]) for r in rows] == [
        ("a", "s1", "success"),
        ("a", "s2", "success"),
        ("b", "s1", "failed"),
        ("b", "s2", "success"),
    ]
    assert rows[2]["score"] is None and rows[2]["recoveredScore"] == 1.0


@pytest.mark.parametrize("text", ["=1+1", "+x", "-x", "@x", "\tx", "\rx"])
def test_formula_cells_are_neutralised(text: str) -> None:
    assert neutralise_cell(text) == "'" + text
    assert neutralise_cell("plain") == "plain"


def test_csv_is_safe_in_a_spreadsheet() -> None:
    rows = list(csv.DictReader(io.StringIO(results_csv(detail()))))
    assert rows[0]["input"] == "'=1+1" and rows[0]["reason"] == "'+bad"
    assert rows[2]["input"] == "'@SUM(A1)" and rows[2]["output"] == "'-2"
    assert rows[0]["score"] == "0.0"  # numbers stay numbers


def test_html_escapes_everything_and_loads_nothing() -> None:
    html = experiment_html(detail())
    assert "<img" not in html and "<b>exp</b>" not in html
    assert "\\u003cimg src=x onerror=alert(1)\\u003e" in html  # in the embedded data
    assert "&lt;b&gt;exp&lt;/b&gt;" in html
    assert "default-src 'none'" in html
    assert 'src="http' not in html and "<link" not in html
    assert "kept in memory only" in html
    assert "not in this report" in experiment_html(detail(failures_in_memory=False))


def test_reports_say_what_each_scorer_compared() -> None:
    from core.exchange.exports import results_csv
    from core.exchange.html import experiment_html

    from ._records import build_detail

    detail = build_detail()
    comparisons = {
        scorer_id: f"output vs <b>{scorer_id}</b>" for scorer_id in detail.info.scorer_ids
    }
    detail = detail.model_copy(
        update={"info": detail.info.model_copy(update={"comparisons": comparisons})}
    )
    html = experiment_html(detail)
    for scorer_id in detail.info.scorer_ids:
        assert f"output vs &lt;b&gt;{scorer_id}&lt;/b&gt;" in html  # shown, escaped
    rows = list(csv.DictReader(io.StringIO(results_csv(detail))))
    assert {row["compares"] for row in rows} == set(comparisons.values())
    assert experiment_json(detail)["summary"]["comparisons"] == comparisons


def test_html_shows_bidi_controls_as_escapes() -> None:
    """Issue 19: a right-to-left override in a name cannot reorder the report's text: the
    header shows it as `\\u202e`, and the script shows every data text the same way."""
    base = detail()
    spoofed = base.model_copy(
        update={"info": base.info.model_copy(update={"name": "invoice\u202efdp.exe"})}
    )
    html = experiment_html(spoofed)
    assert "\u202e" not in html
    assert "invoice\\u202efdp.exe" in html
    assert "textContent = unbidi(String(text))" in html  # every node() text of the data
