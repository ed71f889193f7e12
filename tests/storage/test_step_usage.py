"""Judge usage per prompt step of stored runs (issue 21, migration 0011): a run of a scorer with
two prompt steps keeps each step's usage, the database sums it per step on SQLite and
PostgreSQL, rows stored without it (before the column) are summed apart as "all steps", and an
import of an exported experiment keeps it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy
from scorelab_db import BACKENDS, database

from core.exchange.exports import experiment_json_text, judge_usage_by_steps
from core.records import ExperimentConfig, ScorerSpec, ScorerUsage
from core.reporting.paged import ALL_STEPS, usage_summary_frame
from core.run_results import step_usage_of_dict
from core.service import Service
from core.testing import FakeJudge
from core.testing.fake_judge import answer_from_schema

ROWS = b"question,answer\nWhat is Python?,A language.\nWhat is SQL?,Queries.\nWhy?,Because.\n"
SCORER = "toxicity-scorer"  # two prompt steps: analyze and generateReason
STEPS = {"analyze", "generateReason"}


@pytest.fixture(params=BACKENDS)
def service(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Service]:
    with database(request.param, tmp_path) as url:
        service = Service(url)
        try:
            yield service
        finally:
            service.store.close()


@pytest.fixture
def judged(
    service: Service, judge_server: FakeJudge, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> str:
    """A completed experiment of the two-step judge scorer on three items."""
    monkeypatch.setenv("SCORELAB_JUDGE_API_KEY", "test-key")
    monkeypatch.setenv("SCORELAB_JUDGE_CACHE", str(tmp_path / "cache"))
    judge_server.responder = answer_from_schema
    dataset = service.import_dataset("three.csv", ROWS)
    started = service.start_experiment(
        ExperimentConfig(
            name="two steps",
            dataset_id=dataset.id,
            scorers=[ScorerSpec(scorer_id=SCORER)],
            judge_model="openai/gpt-4o-mini",
            api_base=judge_server.url,
            judge_settings={"num_retries": 0},
        )
    )
    assert service.wait(started, timeout=120).status == "completed"
    return started


def _usage(service: Service, experiment_id: str) -> ScorerUsage:
    (usage,) = service.judge_usage(experiment_id)
    return usage


def test_each_prompt_step_is_summed_and_the_steps_add_up_to_the_scorer(
    service: Service, judged: str
) -> None:
    usage = _usage(service, judged)
    assert {step.step for step in usage.steps} == STEPS
    assert usage.unsplit is None  # every run keeps its steps
    for step in usage.steps:
        assert step.runs == 3 and step.judge_calls == 3 and step.judge_attempts == 3
        assert (step.usage.input_tokens or 0) > 0 and (step.usage.output_tokens or 0) > 0
    assert sum(s.judge_calls for s in usage.steps) == usage.judge_calls == 6
    assert sum(s.judge_attempts for s in usage.steps) == usage.judge_attempts
    for key in ("input_tokens", "output_tokens", "total_tokens"):
        assert sum(getattr(s.usage, key) for s in usage.steps) == getattr(usage.usage, key)
    # Priced like the whole, on the experiment's judge model: the steps add up to the scorer.
    assert usage.est_cost_usd is not None
    assert sum(s.est_cost_usd or 0 for s in usage.steps) == pytest.approx(usage.est_cost_usd)
    frame = usage_summary_frame([usage])
    assert set(frame["step"]) == STEPS
    assert int(frame["model_calls"].sum()) == usage.judge_calls


def _forget_steps(service: Service, experiment_id: str, how_many: int | None) -> None:
    """Make rows look stored before revision 0011 (their step usage NULL)."""
    table = sqlalchemy.table(
        "scorer_results",
        sqlalchemy.column("id"),
        sqlalchemy.column("experiment_id"),
        sqlalchemy.column("step_usage"),
    )
    with service.store.engine.begin() as connection:
        ids = [
            row.id
            for row in connection.execute(
                sqlalchemy.select(table.c.id)
                .where(table.c.experiment_id == experiment_id)
                .order_by(table.c.id)
            )
        ]
        chosen = ids if how_many is None else ids[:how_many]
        connection.execute(
            table.update().where(table.c.id.in_(chosen)).values(step_usage=sqlalchemy.null())
        )
        # What was kept at the finish summed the steps as they were: gone with them.
        connection.execute(sqlalchemy.text("DELETE FROM experiment_totals"))


def test_rows_stored_before_the_column_are_all_steps(service: Service, judged: str) -> None:
    whole = _usage(service, judged)
    _forget_steps(service, judged, how_many=1)
    usage = _usage(service, judged)
    assert usage.judge_calls == whole.judge_calls  # the totals never change
    assert {step.step for step in usage.steps} == STEPS
    assert all(step.runs == 2 for step in usage.steps)
    rest = usage.unsplit
    assert rest is not None and rest.runs == 1 and rest.judge_calls == 2
    assert rest.judge_calls + sum(s.judge_calls for s in usage.steps) == whole.judge_calls
    assert (rest.usage.input_tokens or 0) + sum(
        s.usage.input_tokens or 0 for s in usage.steps
    ) == whole.usage.input_tokens
    frame = usage_summary_frame([usage])
    assert set(frame["step"]) == {*STEPS, ALL_STEPS}
    assert int(frame["model_calls"].sum()) == whole.judge_calls

    _forget_steps(service, judged, how_many=None)  # an experiment stored wholly before it
    old = _usage(service, judged)
    assert old.steps == () and old.unsplit is None
    assert list(usage_summary_frame([old])["step"]) == [ALL_STEPS]


def test_the_json_export_lists_each_step_and_an_import_keeps_them(
    service: Service, judged: str
) -> None:
    usages = service.judge_usage(judged, priced=False)
    entries = judge_usage_by_steps(usages)
    assert {(e["scorerId"], e["step"]) for e in entries} == {(SCORER, s) for s in STEPS}
    assert all("estCostUsd" not in e for e in entries)
    assert sum(e["judgeCalls"] for e in entries) == 6

    text = experiment_json_text(service.load_experiment(judged), usage=usages)
    assert json.loads(text)["summary"]["judgeUsageBySteps"] == entries
    copied = service.import_experiment_json(text.encode(), name="copy")
    usage = _usage(service, copied)
    assert {step.step for step in usage.steps} == STEPS
    assert sum(s.judge_calls for s in usage.steps) == 6


def test_a_judge_record_read_from_a_file_is_summed_per_step_and_model() -> None:
    judge = {
        "analyze": {
            "executions": [
                {"judgeModelId": "m1", "usage": {"inputTokens": 5, "outputTokens": 2},
                 "modelCallCount": 1, "attemptCount": 2, "durationMs": 10},
                {"judgeModelId": "m1", "usage": {"inputTokens": 1}, "modelCallCount": 1,
                 "attemptCount": 1, "durationMs": 1, "cached": True},
                {"judgeModelId": "m2", "usage": None, "modelCallCount": "x"},
            ]
        },
        "generateScore": "not a record",
        "generateReason": {"executions": "not a list"},
    }  # fmt: skip
    entries = json.loads(step_usage_of_dict(judge) or "null")
    assert entries == [
        {"step": "analyze", "model": "m1", "inputTokens": 6, "outputTokens": 2,
         "totalTokens": 0, "reasoningTokens": 0, "cachedInputTokens": 0, "calls": 2,
         "attempts": 3, "cached": 1, "durationMs": 11},
        {"step": "analyze", "model": "m2", "inputTokens": 0, "outputTokens": 0,
         "totalTokens": 0, "reasoningTokens": 0, "cachedInputTokens": 0, "calls": 0,
         "attempts": 0, "cached": 0, "durationMs": 0},
    ]  # fmt: skip
    assert step_usage_of_dict(None) is None
    assert step_usage_of_dict({"analyze": {"executions": []}}) is None
