"""New experiment takes the judge rate limit (requests and tokens per minute; 0 keeps the
provider's default) into the experiment it starts (scorelab issue 15, point 3)."""

from __future__ import annotations

from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

import core.service
from core.records import ExperimentConfig, RateLimit

MINI = b"question,answer\nWhat is Python?,Python is a programming language.\n"


def started_config(app: AppTest, monkeypatch: pytest.MonkeyPatch, **figures: int) -> Any:
    """The config Start hands the service with `figures` typed in (rpm=..., tpm=...)."""
    service = core.service.get_service()
    started: list[ExperimentConfig] = []

    def start_experiment(config: ExperimentConfig, **_: Any) -> str:
        started.append(config)
        return "not-started"

    monkeypatch.setattr(service, "start_experiment", start_experiment)
    app.switch_page("pages/new_experiment.py")
    app.run()
    dataset = service.import_dataset("mini.csv", MINI)
    app.run()
    app.selectbox(key="new_experiment.dataset").set_value(dataset.id)
    app.multiselect(key="new_experiment.scorers").set_value(["answer-relevancy-scorer"])
    app.run()
    app.text_input(key="new_experiment.model").input("ollama/llama3")
    app.run()
    for name, value in figures.items():
        app.number_input(key=f"new_experiment.{name}").set_value(value)
    app.run()
    assert not app.exception, app.exception
    next(b for b in app.button if b.label == "Start experiment").click()
    app.run()
    assert len(started) == 1, [e.value for e in app.error]
    return started[0].rate_limit


def test_the_typed_rates_go_into_the_experiment(
    app: AppTest, monkeypatch: pytest.MonkeyPatch
) -> None:
    limit = started_config(app, monkeypatch, rpm=120, tpm=40_000)
    assert limit == RateLimit(requests_per_minute=120, tokens_per_minute=40_000)


def test_zero_keeps_the_default_figure(app: AppTest, monkeypatch: pytest.MonkeyPatch) -> None:
    assert started_config(app, monkeypatch, rpm=0, tpm=5_000) == RateLimit(tokens_per_minute=5_000)


def test_no_rate_typed_means_the_defaults(app: AppTest, monkeypatch: pytest.MonkeyPatch) -> None:
    assert started_config(app, monkeypatch) is None


def test_a_negative_rate_cannot_be_typed(app: AppTest) -> None:
    app.switch_page("pages/new_experiment.py")
    app.run()
    dataset = core.service.get_service().import_dataset("mini.csv", MINI)
    app.run()
    app.selectbox(key="new_experiment.dataset").set_value(dataset.id)
    app.multiselect(key="new_experiment.scorers").set_value(["answer-relevancy-scorer"])
    app.run()
    field = app.number_input(key="new_experiment.rpm")
    assert field.min == 0 and field.step == 10 and isinstance(field.value, int)
