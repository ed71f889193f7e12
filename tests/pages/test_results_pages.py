"""The result pages on a real experiment: code and judge scorers, one judge failure."""

from __future__ import annotations

from typing import Any

import pytest
from grid_rows import click_row, grid, open_filters, open_scorer_tab
from page_text import plain  # tests/pages is on sys.path (no package: `pages` is the app)
from streamlit.testing.v1 import AppTest

import core.service
from core.records import ExperimentConfig, ScorerSpec
from core.testing import FakeJudge, Reply
from core.testing.fake_judge import answer_from_schema

MINI = (
    b"id,question,answer,expected\n"
    b"q1,What is Python?,Python is a programming language.,A programming language.\n"
    b"q2,What is HTTP?,FAIL-ME HTTP is a protocol.,The web's transfer protocol.\n"
    b"q3,What is SQL?,SQL queries relational databases.,A query language for databases.\n"
)


def failing_on_marker(request: dict[str, Any]) -> Any:
    """Answers validly, except for the item whose output carries the marker."""
    prompt = request["messages"][-1]["content"]
    if "FAIL-ME" in prompt:
        return Reply("this is not JSON")
    return answer_from_schema(request)


@pytest.fixture
def experiment_id(app: AppTest, judge_server: FakeJudge, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    judge_server.responder = failing_on_marker
    service = core.service.get_service()
    dataset = service.import_dataset("mini.csv", MINI)
    started = service.start_experiment(
        ExperimentConfig(
            name="mini run",
            dataset_id=dataset.id,
            scorers=[
                ScorerSpec(scorer_id="keyword-coverage-scorer"),
                ScorerSpec(scorer_id="answer-relevancy-scorer"),
            ],
            judge_model="openai/fake-judge",
            api_base=judge_server.url,
            concurrency=4,
            judge_settings={"num_retries": 0},
        )
    )
    progress = service.wait(started, timeout=60)
    assert progress.status == "completed" and progress.counts.failed == 1
    return started


def show(app: AppTest, page: str, experiment_id: str) -> AppTest:
    app.query_params["experiment"] = experiment_id
    app.switch_page(page)
    app.run()
    assert not app.exception, app.exception
    return app


def test_home_lists_the_experiment(app: AppTest, experiment_id: str) -> None:
    show(app, "pages/home.py", experiment_id)
    table = app.dataframe[0].value
    row = table.iloc[0]
    assert row["name"] == "mini run"
    assert row["failed"] == 1
    assert row["judge_tokens"] > 0


def test_experiment_detail_summary_table_and_drilldown(app: AppTest, experiment_id: str) -> None:
    show(app, "pages/experiment.py", experiment_id)
    metrics = {m.label: m.value for m in app.metric}
    assert metrics["Items"] == "3"
    assert metrics["Failed runs"] == "1"
    assert metrics["Scorer runs"] == "6 / 6"
    table = grid(app).value
    assert list(table["item_id"]) == ["q1", "q2", "q3"]
    assert table.loc[table["item_id"] == "q2", "failed"].item() == "answer-relevancy-scorer"
    # Scores first, then the id, the texts, the failed scorers and the judge tokens.
    assert list(table.columns) == [
        "keyword-coverage-scorer",
        "answer-relevancy-scorer",
        "item_id",
        "input",
        "output",
        "ground_truth",
        "failed",
        "judge_tokens",
    ]
    click_row(app, 1)
    assert app.query_params["item"] == ["q2"] or app.query_params["item"] == "q2"
    assert not app.error  # only the open tab is drawn: the first scorer's, which succeeded
    open_scorer_tab(app, experiment_id, 1)  # the failed one
    errors = plain(" ".join(e.value for e in app.error))
    assert "Failed at preprocess" in errors
    assert "JudgeOutputError" in errors


def test_filters_narrow_the_table_and_go_to_the_url(app: AppTest, experiment_id: str) -> None:
    show(app, "pages/experiment.py", experiment_id)
    open_filters(app)
    app.checkbox(key="experiment.failed").check()
    app.run()
    assert list(grid(app).value["item_id"]) == ["q2"]
    assert app.query_params["failed"] in ("1", ["1"])
    app.checkbox(key="experiment.failed").uncheck()
    app.text_input(key="experiment.search").input("sql")
    app.run()
    assert list(grid(app).value["item_id"]) == ["q3"]


def test_failures_page_groups_and_says_memory_only(app: AppTest, experiment_id: str) -> None:
    show(app, "pages/failures.py", experiment_id)
    assert any("in memory only" in i.value for i in app.info)
    groups = app.dataframe[0].value
    assert groups.iloc[0]["scorer_id"] == "answer-relevancy-scorer"
    assert groups.iloc[0]["failed_step"] == "preprocess"
    assert groups.iloc[0]["count"] == 1
    text = plain(" ".join(m.value for m in app.markdown))
    assert "Item q2" in text and "failed step preprocess" in text


def test_judge_usage_page_sums(app: AppTest, experiment_id: str) -> None:
    show(app, "pages/judge_usage.py", experiment_id)
    metrics = {m.label: m.value for m in app.metric}
    # answer-relevancy succeeded on 2 items (keyword coverage calls no judge); q2 failed.
    assert metrics["Scorer runs calling the judge"] == "2"
    assert metrics["Failed runs"] == "1"
    counts = core.service.get_service().get_experiment(experiment_id).counts
    assert metrics["Model calls"] == f"{counts.judge_calls:,}" and counts.judge_calls >= 7
    # The fake judge has no price: a sentence naming it, not an empty cost chart.
    assert len(app.get("plotly_chart")) == 4
    (unpriced,) = [i.value for i in app.info if "No price known" in i.value]
    # One name per model: the experiment's `openai/fake-judge` is the records' `fake-judge`.
    assert "fake-judge" in plain(unpriced) and "openai/fake-judge" not in plain(unpriced)
    # The sample of executions: 2 items × 3 judge steps succeeded, plus q2's failed preprocess.
    executions = app.dataframe[0].value
    assert len(executions) == 7 and (executions["status"] == "failed").sum() == 1


def test_the_picker_follows_the_user_and_the_links(app: AppTest, experiment_id: str) -> None:
    service = core.service.get_service()
    dataset = service.list_datasets()[0]
    other = service.start_experiment(
        ExperimentConfig(
            name="second run",
            dataset_id=dataset.id,
            scorers=[ScorerSpec(scorer_id="tone-scorer")],
        )
    )
    service.wait(other, timeout=60)
    show(app, "pages/experiment.py", experiment_id)
    picker = app.selectbox(key="experiment.picked")
    assert picker.value == experiment_id
    picker.set_value(other)
    app.run()
    assert app.selectbox(key="experiment.picked").value == other
    assert app.query_params["experiment"] in (other, [other])
    show(app, "pages/experiment.py", experiment_id)  # a link naming the first one again
    assert app.selectbox(key="experiment.picked").value == experiment_id
