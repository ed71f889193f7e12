"""The judge key on the pages (scorelab issue 11, points 1 and 7): New experiment and the
Scorers playground say which key the judge gets and take a key typed for one run, which goes
to the judge only; the Failures page never shows a key the judge echoed."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from key_canary import CANARY, KEY_VARIABLES, ROWS, SCORER, echoing_judge
from streamlit.testing.v1 import AppTest

import core.service
from core.records import ExperimentConfig, ScorerSpec
from core.testing import FakeJudge
from core.testing.fake_judge import answer_from_schema

TYPED = "sk-typed-on-the-page-0042"


@pytest.fixture
def canary(monkeypatch: pytest.MonkeyPatch) -> str:
    for variable in KEY_VARIABLES:
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    return CANARY


def visit(app: AppTest, page: str) -> AppTest:
    app.switch_page(page)
    app.run()
    assert not app.exception, app.exception
    return app


def everything_shown(app: AppTest) -> str:
    """The protobuf of every element on the page, as text."""

    def walk(node: Any) -> Iterator[Any]:
        yield node
        for child in getattr(node, "children", {}).values():
            yield from walk(child)

    return "\n".join(str(getattr(node, "proto", "")) for node in walk(app._tree))


def captions(app: AppTest) -> str:
    return " ".join(c.value.replace("\\", "") for c in app.caption)


def test_new_experiment_says_which_key_and_sends_only_the_typed_one(
    app: AppTest, judge_server: FakeJudge, canary: str, tmp_path: Path
) -> None:
    judge_server.responder = answer_from_schema
    visit(app, "pages/new_experiment.py")
    app.multiselect(key="new_experiment.scorers").set_value([SCORER])
    app.run()
    app.text_input(key="new_experiment.model").input("openai/fake-judge")
    app.text_input(key="new_experiment.api_base").input(judge_server.url)
    app.run()
    assert "Judge key: none (the server gets a placeholder); OPENAI_API_KEY is not sent" in (
        captions(app)
    )
    app.text_input(key="new_experiment.api_key").input(TYPED)
    app.run()
    assert "Judge key: the one typed here (not stored)" in captions(app)
    next(b for b in app.button if b.label == "Start experiment").click()
    app.run()
    assert not app.exception, app.exception
    service = core.service.get_service()
    experiment_id = app.session_state["new_experiment.last_started"]
    assert service.wait(experiment_id, timeout=120).finished
    assert judge_server.authorizations
    assert set(judge_server.authorizations) == {f"Bearer {TYPED}"}
    with sqlite3.connect(tmp_path / "scorelab.db") as connection:
        stored = repr(connection.execute("SELECT * FROM experiments").fetchall())
    assert TYPED not in stored and CANARY not in stored


def test_the_playground_sends_the_typed_key_or_none(
    app: AppTest, judge_server: FakeJudge, canary: str
) -> None:
    judge_server.responder = answer_from_schema
    visit(app, "pages/scorers.py")
    app.selectbox(key="scorers.playground.scorer").set_value(SCORER)
    app.run()
    app.text_input(key="scorers.playground.model").input("openai/fake-judge")
    app.text_input(key="scorers.playground.api_base").input(judge_server.url)
    app.run()
    assert "Judge key: none (the server gets a placeholder)" in captions(app)
    next(b for b in app.button if b.label == "Run").click()
    app.run(timeout=120)
    assert not app.exception, app.exception
    assert set(judge_server.authorizations) == {"Bearer no-key"}

    judge_server.reset()
    app.text_input(key="scorers.playground.api_key").input(TYPED)
    app.run()
    assert "Judge key: the one typed here (not stored)" in captions(app)
    next(b for b in app.button if b.label == "Run").click()
    app.run(timeout=120)
    assert not app.exception, app.exception
    assert set(judge_server.authorizations) == {f"Bearer {TYPED}"}
    assert TYPED not in everything_shown(app)


def test_the_failures_page_never_shows_an_echoed_key(
    app: AppTest, judge_server: FakeJudge, canary: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCORELAB_TRUSTED_API_BASES", judge_server.url.removesuffix("/v1"))
    judge_server.responder = echoing_judge()
    service = core.service.get_service()
    dataset = service.import_dataset("rows.csv", ROWS)
    experiment_id = service.start_experiment(
        ExperimentConfig(
            dataset_id=dataset.id,
            scorers=[ScorerSpec(scorer_id=SCORER)],
            judge_model="openai/fake-judge",
            api_base=judge_server.url,
            concurrency=1,
            judge_settings={"num_retries": 0},
        )
    )
    assert service.wait(experiment_id, timeout=60).counts.failed == 2
    assert set(judge_server.authorizations) == {f"Bearer {canary}"}  # the judge had the key
    app.query_params["experiment"] = experiment_id
    visit(app, "pages/failures.py")
    shown = everything_shown(app)
    assert "Incorrect API key provided: ***" in shown
    assert "still not JSON, still the key ***" in shown  # the raw output, masked
    assert canary not in shown


def test_new_experiment_names_the_origin_openai_base_url_sends_the_key_to(
    app: AppTest, canary: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 19: with OPENAI_BASE_URL set, the form names the host the key goes to."""
    monkeypatch.setenv("OPENAI_BASE_URL", "https://llm-gateway.internal.example:9443/v1")
    visit(app, "pages/new_experiment.py")
    app.multiselect(key="new_experiment.scorers").set_value([SCORER])
    app.run()
    app.text_input(key="new_experiment.model").input("openai/gpt-4o-mini")
    app.run()
    assert not app.exception, app.exception
    assert (
        "Judge key: OPENAI_API_KEY (the provider's own endpoint, sent to "
        "https://llm-gateway.internal.example:9443 as OPENAI_BASE_URL configures)"
    ) in captions(app).replace("\u2060", "")  # md_text keeps the URL from becoming a link
