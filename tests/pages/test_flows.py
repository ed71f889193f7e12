"""Flows through the forms: start an experiment from the defaults, try a scorer."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

import core.service
from core.testing import FakeJudge


def visit(app: AppTest, page: str) -> AppTest:
    app.switch_page(page)
    app.run()
    assert not app.exception, app.exception
    return app


def test_new_experiment_with_the_defaults_runs_the_code_scorers(app: AppTest) -> None:
    visit(app, "pages/new_experiment.py")
    datasets = core.service.get_service().list_datasets()
    support = next(info.id for info in datasets if info.name == "support-qa")
    app.selectbox(key="new_experiment.dataset").set_value(support)
    app.run()
    scorers = app.multiselect(key="new_experiment.scorers").value
    assert len(scorers) == 5
    captions = " ".join(c.value for c in app.caption)
    assert "1,200 scorer runs · no judge calls" in captions  # never "at least 0 judge calls"
    assert "at least" not in captions
    next(b for b in app.button if b.label == "Start experiment").click()
    app.run()
    assert not app.exception, app.exception
    service = core.service.get_service()
    experiment_id = app.session_state["new_experiment.last_started"]
    assert service.wait(experiment_id, timeout=120).status == "completed"
    app.run()
    assert any("Experiment finished (completed)" in s.value for s in app.success)
    info = service.get_experiment(experiment_id)
    assert set(info.scores) == set(scorers)
    assert info.counts.succeeded == 1200


def test_a_judge_scorer_without_a_model_cannot_start(app: AppTest) -> None:
    visit(app, "pages/new_experiment.py")
    app.multiselect(key="new_experiment.scorers").set_value(["answer-relevancy-scorer"])
    app.run()
    assert any("need a judge model" in w.value for w in app.warning)
    assert next(b for b in app.button if b.label == "Start experiment").disabled


def test_playground_runs_a_code_scorer(app: AppTest) -> None:
    visit(app, "pages/scorers.py")
    app.selectbox(key="scorers.playground.scorer").set_value("content-similarity-scorer")
    app.run()
    app.text_area(key="scorers.playground.input").input("Hello World")
    app.text_area(key="scorers.playground.output").input("hello world")
    app.text_area(key="scorers.playground.truth").input("hello world")
    app.run()
    next(b for b in app.button if b.label == "Run").click()
    app.run()
    assert not app.exception, app.exception
    assert {m.label: m.value for m in app.metric}["Score"] == "1.000"


def test_playground_reports_an_unreachable_judge_plainly(
    app: AppTest, judge_server: FakeJudge, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    visit(app, "pages/scorers.py")
    app.selectbox(key="scorers.playground.scorer").set_value("toxicity-scorer")
    app.run()
    app.text_input(key="scorers.playground.model").input("openai/fake-judge")
    # A closed port: the judge is unreachable.
    app.text_input(key="scorers.playground.api_base").input("http://127.0.0.1:9/v1")
    app.run()
    next(b for b in app.button if b.label == "Run").click()
    app.run(timeout=120)
    assert not app.exception, app.exception
    assert any("Scorer Run Failed" in e.value for e in app.error)


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("gpt4-typo", "cannot route the judge model 'gpt4-typo'"),
        ("anthropic/claude-3-5-haiku-latest", "needs ANTHROPIC_API_KEY in the environment"),
    ],
)
def test_a_bad_judge_model_is_a_message_not_a_failure_per_item(
    app: AppTest, monkeypatch: pytest.MonkeyPatch, model: str, expected: str
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    visit(app, "pages/new_experiment.py")
    app.multiselect(key="new_experiment.scorers").set_value(["toxicity-scorer"])
    app.run()
    app.text_input(key="new_experiment.model").input(model)
    app.run()
    next(b for b in app.button if b.label == "Start experiment").click()
    app.run()
    assert not app.exception, app.exception
    assert any(expected in e.value.replace("\\", "") for e in app.error)  # shown escaped
    assert core.service.get_service().list_experiments() == []
