"""Issue 14's polish list, each item on the page where a user met it: the home table's means
and missing values, the picker's status after a run ends, failure titles, the Failures page of
a run whose details are gone, the unpriced cost chart, the lying judge-usage bars and the
Compare item picker after a change of scorer."""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa
import pytest
from page_text import plain  # tests/pages is on sys.path (no package: `pages` is the app)
from streamlit.testing.v1 import AppTest

import core.service
from core.records import ExperimentConfig, ScorerSpec
from core.testing import FakeJudge, Reply
from core.testing.fake_judge import answer_from_schema
from pages.ui.failure_titles import distinctive

MINI = (
    b"id,question,answer,expected\n"
    b"q1,What is Python?,Python is a programming language.,A programming language.\n"
    b"q2,What is HTTP?,FAIL-ME HTTP is a protocol.,The web's transfer protocol.\n"
    b"q3,What is SQL?,SQL queries relational databases.,A query language for databases.\n"
)


def failing_on_marker(request: dict[str, Any]) -> Any:
    """Answers validly, except for the item whose output carries the marker."""
    if "FAIL-ME" in request["messages"][-1]["content"]:
        return Reply("this is not JSON")
    return answer_from_schema(request)


@pytest.fixture
def judged(app: AppTest, judge_server: FakeJudge, monkeypatch: pytest.MonkeyPatch) -> str:
    """A finished experiment of a judge scorer (unpriced fake model) with one failed run."""
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    judge_server.responder = failing_on_marker
    service = core.service.get_service()
    dataset = service.import_dataset("mini.csv", MINI)
    started = service.start_experiment(
        ExperimentConfig(
            name="judged run",
            dataset_id=dataset.id,
            scorers=[ScorerSpec(scorer_id="answer-relevancy-scorer")],
            judge_model="openai/fake-judge",
            api_base=judge_server.url,
            judge_settings={"num_retries": 0},
        )
    )
    assert service.wait(started, timeout=60).counts.failed == 1
    return started


def code_only(name: str = "code run") -> str:
    service = core.service.get_service()
    dataset = next(d for d in service.list_datasets() if d.name == "support-qa")
    started = service.start_experiment(
        ExperimentConfig(
            name=name, dataset_id=dataset.id, scorers=[ScorerSpec(scorer_id="tone-scorer")]
        )
    )
    assert service.wait(started, timeout=60).status == "completed"
    return started


def show(app: AppTest, page: str, **params: str) -> AppTest:
    for name, value in params.items():
        app.query_params[name] = value
    app.switch_page(page)
    app.run()
    assert not app.exception, app.exception
    return app


def displayed(frame: Any) -> pa.Table:
    """The cell texts a styled dataframe shows (its Styler's display values)."""
    return pa.ipc.open_stream(frame.proto.arrow_data.styler.display_values).read_all()


# ---- home ----


def test_home_table_puts_the_means_first_and_shows_a_dash_for_nothing(app: AppTest) -> None:
    code_only()
    show(app, "pages/home.py")
    (table,) = app.dataframe
    columns = list(table.value.columns)
    assert columns[0] == "name" and columns[1].startswith("mean · tone-scorer")
    assert columns.index("status") > 1  # the means come before everything else
    texts = displayed(table).to_pylist()[0]
    # A code-only run has no judge cost: "—", never "None" or "nan".
    assert "—" in texts.values()
    assert not {"None", "nan", "NaN"} & {str(v) for v in texts.values()}


def test_pickers_resend_a_label_whose_status_changed(
    app: AppTest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The browser keeps the label it was last sent for the chosen option; once the run ended
    it must be sent "completed", not left showing "running"."""
    experiment_id = code_only()
    service = core.service.get_service()
    real = service.list_experiments
    running = [info.model_copy(update={"status": "running"}) for info in real()]
    monkeypatch.setattr(service, "list_experiments", lambda: running)
    show(app, "pages/experiment.py", experiment=experiment_id)
    assert "running" in app.selectbox(key="experiment.picked").proto.raw_value
    monkeypatch.setattr(service, "list_experiments", real)
    app.run()
    picker = app.selectbox(key="experiment.picked").proto
    assert picker.set_value and "· completed ·" in picker.raw_value


# ---- failures ----


def test_failure_titles_keep_the_part_that_tells_groups_apart() -> None:
    errors = [
        "litellm.APIError: APIError: OpenAIException - injected failure 1 for item q7",
        "litellm.APIError: APIError: OpenAIException - injected timeout after 60 s",
        "litellm.RateLimitError: OpenAIException - rate limited",
    ]
    titles = distinctive(errors[:2], width=40)  # the words both share go too
    assert titles[errors[0]] == "…failure 1 for item q7"
    assert titles[errors[1]] == "…timeout after 60 s"
    titles = distinctive(errors, width=40)  # nothing shared past the exception names
    assert titles[errors[0]] == "injected failure 1 for item q7"
    assert titles[errors[2]] == "rate limited"
    single = distinctive(["ValueError: " + "x" * 100])
    assert single["ValueError: " + "x" * 100] == "x" * 89 + "…"


def test_failure_group_titles_on_the_page(app: AppTest, judged: str) -> None:
    show(app, "pages/failures.py", experiment=judged)
    (group,) = app.expander
    assert "not valid JSON" in plain(group.label)  # the message, not the exception names
    assert any("Error:" in c.value for c in app.caption)  # the whole error inside


def test_failures_gone_with_the_process_that_ran_them(
    app: AppTest, judged: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import streamlit as st

    monkeypatch.setattr(core.service, "_service", None)  # another process (a CLI run's)
    st.cache_resource.clear()
    fresh = AppTest.from_file(app._script_path, default_timeout=60)
    fresh.run()
    show(fresh, "pages/failures.py", experiment=judged)
    (warning,) = [plain(w.value) for w in fresh.warning]
    assert "1 runs of this experiment failed" in warning
    assert "scorelab run" in warning and "--json" in warning and "Compare" in warning
    assert "dashboard process" not in warning


# ---- judge usage ----


def test_judge_usage_bars_lie_down_and_name_the_unpriced_model(app: AppTest, judged: str) -> None:
    show(app, "pages/judge_usage.py", experiment=judged)
    charts = [json.loads(chart.proto.spec) for chart in app.get("plotly_chart")]
    bars = [c for c in charts if c["data"] and c["data"][0]["type"] == "bar"]
    assert bars and all(c["data"][0]["orientation"] == "h" for c in bars)
    assert not any("cost" in c["layout"]["title"]["text"].lower() for c in charts)
    assert any("No price known for model" in i.value for i in app.info)


# ---- compare ----


def test_compare_item_follows_a_change_of_scorer(app: AppTest) -> None:
    baseline, candidate = code_only("baseline"), code_only("candidate")
    service = core.service.get_service()
    scorer = service.get_experiment(baseline).scorer_ids[0]
    show(app, "pages/compare.py", baseline=baseline, candidates=candidate, scorer=scorer)
    listed = app.dataframe[1].value["item_id"].tolist()
    last = listed[-1]  # unchanged (the same run twice): the list's end
    show(app, "pages/compare.py", baseline=baseline, candidates=candidate, item=last)
    assert app.selectbox(key="compare.item").value == last  # a link's item is kept
    app.selectbox(key="compare.baseline").set_value(candidate)  # swap the sides
    app.run()
    assert not app.exception, app.exception
    top = app.dataframe[1].value["item_id"].iloc[0]
    assert top != last
    assert app.selectbox(key="compare.item").value == top
    assert app.query_params["item"] in (top, [top])
