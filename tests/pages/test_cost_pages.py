"""New experiment shows the estimated judge cost before Start and takes the judge cache and a
spend cap; Judge usage counts the answers from the cache apart."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

import core.service
from core.judge import cache as judge_cache_module
from core.testing import FakeJudge, Reply
from core.testing.fake_judge import answer_from_schema

MINI = (
    b"question,answer\n"
    b"What is Python?,Python is a programming language.\n"
    b"What is SQL?,SQL queries relational databases and is used by many applications.\n"
)


@pytest.fixture
def judge(
    judge_server: FakeJudge, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> Iterator[FakeJudge]:
    monkeypatch.setenv("SCORELAB_JUDGE_API_KEY", "test-key")
    monkeypatch.setenv("SCORELAB_JUDGE_CACHE", str(tmp_path / "cache"))
    judge_cache_module._store.cache_clear()
    judge_server.responder = answer_from_schema
    yield judge_server
    judge_cache_module._store.cache_clear()


def fill_form(app: AppTest, judge: FakeJudge) -> None:
    app.switch_page("pages/new_experiment.py")
    app.run()
    dataset = core.service.get_service().import_dataset("mini.csv", MINI)
    app.run()
    app.selectbox(key="new_experiment.dataset").set_value(dataset.id)
    app.multiselect(key="new_experiment.scorers").set_value(["answer-relevancy-scorer"])
    app.run()
    app.text_input(key="new_experiment.model").input("openai/gpt-4o-mini")
    app.text_input(key="new_experiment.api_base").input(judge.url)
    app.number_input(key="new_experiment.retries").set_value(0)
    app.run()
    assert not app.exception, app.exception


def start(app: AppTest) -> str:
    next(b for b in app.button if b.label == "Start experiment").click()
    app.run()
    assert not app.exception, app.exception
    experiment_id = app.session_state["new_experiment.last_started"]
    assert core.service.get_service().wait(experiment_id, timeout=60).finished
    return experiment_id


def test_the_estimate_shows_before_start_and_sends_nothing(app: AppTest, judge: FakeJudge) -> None:
    fill_form(app, judge)
    shown = " ".join(i.value for i in app.info)
    assert "Estimated judge cost: $" in shown and "not a bill" in shown
    assert "6 calls" in shown  # 2 items x 3 prompt steps
    assert judge.call_count == 0


def test_the_cache_switch_makes_a_rerun_free_and_usage_shows_it(
    app: AppTest, judge: FakeJudge
) -> None:
    fill_form(app, judge)
    app.toggle(key="new_experiment.cache").set_value(True)
    app.run()
    start(app)
    sent = judge.call_count
    assert sent >= 6
    experiment_id = start(app)
    assert judge.call_count == sent  # the second run came from the cache
    info = core.service.get_service().get_experiment(experiment_id)
    assert info.counts.cached_calls == 6 and info.counts.judge_calls == 0
    app.query_params["experiment"] = experiment_id
    app.switch_page("pages/judge_usage.py")
    app.run()
    assert not app.exception, app.exception
    metrics = {m.label: m.value for m in app.metric}
    assert metrics["From the judge cache"] == "6"
    assert metrics["Model calls"] == "0"


def test_a_spend_cap_on_a_model_without_a_price_is_refused(app: AppTest, judge: FakeJudge) -> None:
    fill_form(app, judge)
    app.text_input(key="new_experiment.model").input("openai/fake-judge")
    app.number_input(key="new_experiment.max_cost").set_value(1.0)
    app.run()
    assert any("no price for" in i.value for i in app.info)
    next(b for b in app.button if b.label == "Start experiment").click()
    app.run()
    assert any("openai/fake-judge" in e.value.replace("\\", "") for e in app.error)
    assert core.service.get_service().list_experiments() == []


def expensive(request: dict[str, Any]) -> Reply:
    """A valid answer that cost 100,000 prompt tokens (1.5 cents on gpt-4o-mini)."""
    answer = answer_from_schema(request)
    assert isinstance(answer, Reply)
    return replace(answer, prompt_tokens=100_000)


def test_a_run_stopped_at_the_cap_says_so(app: AppTest, judge: FakeJudge) -> None:
    judge.responder = expensive
    fill_form(app, judge)
    app.number_input(key="new_experiment.max_cost").set_value(0.02)
    app.run()
    experiment_id = start(app)
    service = core.service.get_service()
    info = service.get_experiment(experiment_id)
    assert info.status == "budget_reached" and info.max_cost == 0.02
    assert 0 < judge.call_count < 6
    app.query_params["experiment"] = experiment_id
    app.switch_page("pages/experiment.py")
    app.run()
    assert not app.exception, app.exception
    assert any("Stopped at the spend cap ($0.0200)" in w.value for w in app.warning)
    assert any("spend cap $0.0200" in c.value for c in app.caption)
