"""JSON export → import → the same experiment (scores, reasons, Mastra results, items), failures
back in memory and never in storage; clear errors for files that are not exports; CSV cells a
spreadsheet would run as formulas neutralised."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from scorelab_db import BACKENDS, database

from core.exchange.experiment_file import ExperimentFileError, read_experiment_json
from core.exchange.exports import experiment_json_text, neutralise_cell, results_csv
from core.records import ExperimentConfig, ExperimentDetail, ScorerSpec
from core.run_results import JudgeUsage
from core.service import Service, StorageError

from ._records import build_detail

DATA = (
    b"id,question,answer,expected,topic\n"
    b"q1,What is Python?,Python is a programming language.,A programming language.,code\n"
    b"q2,What is HTTP?,HTTP moves web pages.,The web's transfer protocol.,web\n"
    b"q3,What is SQL?,=SUM(A1) queries databases.,A query language.,data\n"
)


@pytest.fixture(params=BACKENDS)
def service(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Service]:
    """A service on SQLite, and on PostgreSQL when the test run has one."""
    with database(request.param, tmp_path) as url:
        shared = Service(url, samples_dir=tmp_path / "none")
        yield shared
        shared.store.close()


def scores(detail: ExperimentDetail) -> dict[tuple[str, str], Any]:
    return {(o.item_id, o.scorer_id): (o.score, o.reason) for o in detail.results}


def test_a_real_experiment_round_trips(service: Service) -> None:
    dataset = service.import_dataset("quiz.csv", DATA, mapping=None)
    started = service.start_experiment(
        ExperimentConfig(
            name="original",
            dataset_id=dataset.id,
            scorers=[
                ScorerSpec(scorer_id="keyword-coverage-scorer"),
                ScorerSpec(scorer_id="checks.includes", options={"value": "Python"}),
            ],
        )
    )
    assert service.wait(started, timeout=60).status == "completed"
    original = service.load_experiment(started)
    exported = experiment_json_text(original)
    imported_id = service.import_experiment_json(exported.encode())
    imported = service.load_experiment(imported_id)
    assert imported.info.name == "original (imported)"
    assert scores(imported) == scores(original) and len(scores(original)) == 6
    assert imported.info.scores == pytest.approx(original.info.scores)
    assert {(o.item_id, o.scorer_id): o.result for o in imported.results} == {
        (o.item_id, o.scorer_id): o.result for o in original.results
    }
    assert imported.info.dataset_id == dataset.id  # same content: the dataset is reused
    assert imported.items == original.items and imported.items[2].metadata == {"topic": "data"}
    assert imported.info.scorer_ids == original.info.scorer_ids
    assert imported.info.status == "completed" and imported.info.counts.succeeded == 6
    assert imported.info.started_at <= imported.info.finished_at


def test_failures_come_back_in_memory_never_in_storage(service: Service) -> None:
    detail = build_detail()  # 5 successes (one not scorable), 2 failures, judge records
    imported_id = service.import_experiment_json(experiment_json_text(detail).encode())
    imported = service.load_experiment(imported_id)
    assert service.store.result_count(imported_id) == 5
    assert imported.info.counts.failed == 2 and imported.info.counts.succeeded == 5
    assert imported.failures_in_memory
    failures = {(o.item_id, o.scorer_id): o for o in service.failures(imported_id)}
    assert set(failures) == {("q2", "relevancy"), ("q3", "tone")}
    relevancy = failures[("q2", "relevancy")]
    assert relevancy.recovered_score == 0.2 and relevancy.failed_step == "generateReason"
    assert relevancy.completed_steps == ["analyze", "generateScore"]
    assert relevancy.failed_execution is not None
    assert relevancy.failed_execution.raw_output == "not json"
    assert scores(imported) == scores(detail)
    judge = next(o for o in imported.results if o.item_id == "q3" and o.scorer_id == "relevancy")
    assert judge.usage.reasoning_tokens == 50 and judge.judge_calls == 2  # from the judge record
    assert imported.info.dataset_fingerprint != "fp"  # recomputed from the items
    assert service.list_datasets()[0].item_count == 4


def test_a_second_import_reuses_the_dataset(service: Service) -> None:
    text = experiment_json_text(build_detail()).encode()
    first = service.get_experiment(service.import_experiment_json(text))
    second = service.get_experiment(service.import_experiment_json(text, name="again"))
    assert first.dataset_id == second.dataset_id and second.name == "again"
    assert len(service.list_datasets()) == 1


def test_nan_scores_export_as_null(service: Service) -> None:
    detail = build_detail()
    odd = detail.results[1].model_copy(update={"score": float("nan")})
    nan_detail = detail.model_copy(update={"results": [detail.results[0], odd]})
    text = experiment_json_text(nan_detail)
    assert "NaN" not in text
    json.loads(text, parse_constant=lambda name: pytest.fail(f"{name} in strict JSON"))


def test_a_database_failure_leaves_nothing_half_imported(
    service: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*_: Any) -> int:
        raise StorageError("Could not store the scorer results: disk full")

    monkeypatch.setattr(service.store, "add_results", refuse)
    with pytest.raises(StorageError, match="disk full"):
        service.import_experiment_json(experiment_json_text(build_detail()).encode())
    assert service.list_experiments() == [] and service.list_datasets() == []


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"\xff\xfe{", "not UTF-8 text"),
        (b'{"items": [', "not valid JSON: line 1, column 12"),
        (b"[1, 2]", "holds an array, not an exported experiment"),
        (b'{"name": "x"}', r"no `items` list \(found null\)"),
        (b'{"items": [{"id": 3}]}', r"items\[0\]: `id` must be a non-empty text, got the number 3"),
        (b'{"items": [{"id": "a"}, {"id": "a"}]}', r"items\[1\] \(id 'a'\): .*items\[0\]"),
        (
            b'{"items": [{"id": "a", "results": {"s": {"runId": "r", "score": "high"}}}]}',
            r"items\[0\] \(id 'a'\): results\['s'\]: `score` must be a number or null",
        ),
        (
            b'{"items": [{"id": "a", "results": {"s": {"score": 1}}}]}',
            r"results\['s'\]: not a Mastra scorer result: runId: Field required",
        ),
        (
            b'{"items": [{"id": "a", "results": {"s": {"status": "failed"}}}]}',
            r"results\['s'\]: a failed run needs an `error` text",
        ),
        (b'{"items": [{"id": "a", "results": [1]}]}', r"results: must be an object, got an array"),
    ],
)
def test_files_that_are_not_exports_are_refused_with_the_place(
    service: Service, data: bytes, message: str
) -> None:
    with pytest.raises(ExperimentFileError, match=message):
        service.import_experiment_json(data)
    assert service.list_experiments() == []


def test_statuses_and_totals_read_from_the_file() -> None:
    document = json.loads(experiment_json_text(build_detail()))
    document["summary"]["status"] = "running"
    document["summary"]["judgeCalls"] = 99
    exported = read_experiment_json(json.dumps(document).encode())
    assert exported.status == "cancelled"  # exported mid-run: what is in the file is all
    assert exported.judge_calls == 99
    assert exported.scorer_ids == ["relevancy", "tone"]
    assert [o.status for o in exported.failures] == ["failed", "failed"]


# ---- CSV ----


FORMULA_STARTS = ["=", "+", "-", "@", "\t", "\r"]


@pytest.mark.parametrize("start", FORMULA_STARTS)
def test_every_formula_start_is_neutralised(start: str) -> None:
    assert neutralise_cell(f'{start}HYPERLINK("http://x")') == f'\'{start}HYPERLINK("http://x")'


@pytest.mark.parametrize(
    "text",
    [
        " =1+1",
        "   +1",
        "\u3000=1",
        "\u00a0@SUM(1)",
        "\n=1",
        "\uff1d1+1",
        "\uff0bx",
        "\uff0dx",
        "\uff20x",
        "  \uff1dHYPERLINK(1)",
        "\ufe62x",
    ],
)
def test_formula_signs_after_spaces_and_full_width_signs_are_neutralised(text: str) -> None:
    """Issue 19: leading spaces and the full-width signs do not hide a formula."""
    assert neutralise_cell(text) == "'" + text


@pytest.mark.parametrize(
    "text", ["", "plain", "   ", "a=1", "'=1", " a-b", "\uff41=1", '{"a": 1}', "1"]
)
def test_other_cells_are_left_alone(text: str) -> None:
    assert neutralise_cell(text) == text


def test_the_csv_neutralises_every_text_column() -> None:
    detail = build_detail()
    q1 = detail.items[0].model_copy(
        update={"input": "=cmd|' /C calc'!A0", "output": "+1", "ground_truth": "@SUM(1)"}
    )
    hostile = detail.model_copy(
        update={
            "items": [q1, *detail.items[1:]],
            "results": [
                o.model_copy(update={"reason": "-2+3"}) if o.item_id == "q1" else o
                for o in detail.results
            ],
            "failures": [
                detail.failures[0].model_copy(update={"error": "\t=1", "failed_step": "\r=2"}),
                detail.failures[1],
            ],
        }
    )
    rows = list(csv.DictReader(io.StringIO(results_csv(hostile))))
    first = rows[0]
    assert first["input"] == "'=cmd|' /C calc'!A0"
    assert first["output"] == "'+1" and first["groundTruth"] == "'@SUM(1)"
    assert first["reason"] == "'-2+3"
    failed = next(r for r in rows if r["status"] == "failed")
    assert failed["error"] == "'\t=1" and failed["failedStep"] == "'\r=2"  # CR kept, quoted
    for row in rows:
        for name, value in row.items():
            assert not value.startswith(tuple(FORMULA_STARTS)), (name, value)


def test_a_failed_run_keeps_every_judge_execution_through_export_and_import(
    service: Service,
) -> None:
    """The failed run's completed steps called the judge too: their usage must survive."""
    detail = build_detail()
    original = next(o for o in detail.failures if o.scorer_id == "relevancy")
    document = json.loads(experiment_json_text(detail))
    entry = document["items"][1]["results"]["relevancy"]
    assert set(entry["judge"]) == {"analyze", "generateReason"}  # not only the failed one
    for key in ("judgeUsage", "judgeCalls", "judgeAttempts"):  # totals from the runs alone
        document["summary"].pop(key)
    imported_id = service.import_experiment_json(json.dumps(document).encode())
    failure = next(o for o in service.failures(imported_id) if o.scorer_id == "relevancy")
    assert (failure.usage, failure.judge_calls, failure.judge_attempts) == (
        original.usage,
        original.judge_calls,
        original.judge_attempts,
    )
    assert failure.snapshot is not None and set(failure.snapshot["judge"]) == {
        "analyze",
        "generateReason",
    }
    assert service.store.result_count(imported_id) == 5  # the failure is still not stored
    info = service.load_experiment(imported_id).info
    expected = JudgeUsage()
    for outcome in [*detail.results, *detail.failures]:
        expected = expected + outcome.usage
    assert info.counts.usage == expected and not expected.is_empty()
    # and exported again, the failure keeps them
    again = json.loads(experiment_json_text(service.load_experiment(imported_id)))
    assert again["items"][1]["results"]["relevancy"]["judge"] == entry["judge"]
