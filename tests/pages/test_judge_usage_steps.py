"""Judge usage of stored runs per prompt step (issue 21): a stored experiment of a scorer with
two prompt steps shows each step on the Judge usage page's charts, not "all steps"; runs stored
before per-step usage was kept still show as "all steps"."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy
import streamlit as st
from streamlit.testing.v1 import AppTest

import core.service
from core.records import ExperimentConfig, ScorerSpec
from core.testing import FakeJudge
from core.testing.fake_judge import answer_from_schema

ROWS = b"question,answer\nWhat is Python?,A language.\nWhat is SQL?,Queries.\n"
SCORER = "toxicity-scorer"  # two prompt steps: analyze and generateReason
CALLS_CHART = "Judge calls and attempts by scorer and step"


@pytest.fixture
def judged(
    app: AppTest, judge_server: FakeJudge, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> str:
    monkeypatch.setenv("SCORELAB_JUDGE_API_KEY", "test-key")
    monkeypatch.setenv("SCORELAB_JUDGE_CACHE", str(tmp_path / "cache"))
    judge_server.responder = answer_from_schema
    service = core.service.get_service()
    dataset = service.import_dataset("two.csv", ROWS)
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


def _calls_chart(app: AppTest, experiment_id: str) -> dict[str, Any]:
    app.query_params["experiment"] = experiment_id
    app.switch_page("pages/judge_usage.py")
    app.run()
    assert not app.exception, app.exception
    charts = [json.loads(chart.proto.spec) for chart in app.get("plotly_chart")]
    (chart,) = [c for c in charts if CALLS_CHART in json.dumps(c.get("layout", {}))]
    return chart


def _bar_labels(chart: dict[str, Any]) -> set[str]:
    """Every label the chart's bars carry (axis values and hover texts)."""
    labels: set[str] = set()
    for trace in chart["data"]:
        for key in ("x", "y", "customdata", "hovertext", "text"):
            values = trace.get(key)
            if isinstance(values, list):
                labels.update(str(v) for v in values)
    return labels


def test_a_stored_run_with_two_prompt_steps_shows_both(app: AppTest, judged: str) -> None:
    text = " ".join(_bar_labels(_calls_chart(app, judged)))
    assert f"{SCORER} · analyze" in text
    assert f"{SCORER} · generateReason" in text
    assert "all steps" not in text
    caption = " ".join(c.value for c in app.caption)
    assert "summed per prompt step" in caption


def test_runs_stored_without_steps_still_show_all_steps(app: AppTest, judged: str) -> None:
    engine = core.service.get_service().store.engine
    with engine.begin() as connection:  # as stored before revision 0011
        connection.execute(sqlalchemy.text("UPDATE scorer_results SET step_usage = NULL"))
        connection.execute(sqlalchemy.text("DELETE FROM experiment_totals"))  # kept at finish
    st.cache_resource.clear()  # the page's aggregates are kept per experiment version
    text = " ".join(_bar_labels(_calls_chart(app, judged)))
    assert f"{SCORER} · all steps" in text
    assert "analyze" not in text and "generateReason" not in text
