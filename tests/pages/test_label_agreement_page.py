"""The experiment page's "Agreement with labels" panel: label columns detected and one
preselected, the choice kept in the URL, one table row per scorer (numbers, or "not defined"
with the reason), and the downloads given the agreement shown."""

from __future__ import annotations

from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

import core.service
import pages.ui.downloads
from core.records import ExperimentConfig, ScorerSpec

LABELLED = (
    b"id,question,answer,expected,topic,Human verdict,grader_score\n"
    b"q1,Q1,right answer,r,a,yes,0.9\n"
    b"q2,Q2,right again,r,b,yes,0.8\n"
    b"q3,Q3,wrong answer,r,a,no,0.1\n"
    b"q4,Q4,right but wrong,r,b,no,0.6\n"
    b"q5,Q5,wrong again,r,a,,0.2\n"
)
KEY = "experiment.label"


def run_experiment(data: bytes, name: str) -> str:
    service = core.service.get_service()
    dataset = service.import_dataset(f"{name}.csv", data)
    started = service.start_experiment(
        ExperimentConfig(
            name=name,
            dataset_id=dataset.id,
            scorers=[
                ScorerSpec(scorer_id="checks.includes", options={"value": "right", "id": "right"}),
                ScorerSpec(scorer_id="checks.includes", options={"value": "zzz", "id": "flat"}),
            ],
        )
    )
    assert core.service.get_service().wait(started, timeout=60).status == "completed"
    return started


@pytest.fixture
def labelled(app: AppTest) -> str:
    return run_experiment(LABELLED, "labelled")


def show(app: AppTest, experiment_id: str, **params: str) -> AppTest:
    """The experiment page's Agreement view (another view with `tab=`)."""
    params.setdefault("tab", "agreement")
    app.query_params["experiment"] = experiment_id
    for name, value in params.items():
        app.query_params[name] = value
    app.switch_page("pages/experiment.py")
    app.run()
    assert not app.exception, app.exception
    return app


def agreement_table(app: AppTest) -> Any:
    tables = [t.value for t in app.dataframe if "AUC" in t.value.columns]
    assert len(tables) <= 1
    return tables[0] if tables else None


def test_a_label_column_is_preselected_and_each_scorer_has_a_row(
    app: AppTest, labelled: str
) -> None:
    show(app, labelled)
    picker = app.selectbox(key=KEY)
    assert picker.options == ["none", "Human verdict", "grader_score"]  # not topic
    assert picker.value == "Human verdict"  # named like a human verdict
    assert app.query_params["label"] in ("Human verdict", ["Human verdict"])
    table = agreement_table(app)
    right = table.set_index("scorer").loc["right"]
    # right: scores 1, 1, 0, 1 on labels yes, yes, no, no (q5 has no label): 2 positives over
    # 2 negatives, one tie: AUC (2 * 1 + 2 * 0.5) / 4.
    assert right["n"] == 4 and right["AUC"] == pytest.approx(0.75)
    assert (right["tp"], right["fp"], right["tn"], right["fn"]) == (2, 1, 1, 0)
    assert right["left out"] == "1 without a label, 0 without a score"
    flat = table.set_index("scorer").loc["flat"]
    assert flat["note"].startswith("not defined: the scorer gave every item the same score")
    texts = [t.value for t in app.text]
    assert any(
        "Labels from column Human verdict: 4 items labelled, 1 without a label" in t for t in texts
    )
    assert "flat: " + flat["note"] in texts  # the reason also in plain sight under the table


def test_the_choice_follows_the_url_and_goes_back_to_it(app: AppTest, labelled: str) -> None:
    show(app, labelled, label="grader_score")
    assert app.selectbox(key=KEY).value == "grader_score"
    right = agreement_table(app).set_index("scorer").loc["right"]
    assert right["n"] == 5  # every item has a grader score
    app.selectbox(key=KEY).set_value(None)
    app.run()
    assert agreement_table(app) is None
    assert app.query_params["label"] in ("", [""])
    show(app, labelled, label="")  # a link saying "none"
    assert app.selectbox(key=KEY).value is None


def test_the_downloads_get_the_agreement_shown(
    app: AppTest, labelled: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    given: list[Any] = []
    real = pages.ui.downloads.render_downloads

    def spy(load: Any, agreement: Any = None, **named: Any) -> None:
        given.append(agreement)
        real(load, agreement, **named)

    monkeypatch.setattr(pages.ui.downloads, "render_downloads", spy)
    show(app, labelled)
    assert given[-1] is not None and given[-1].label_column == "Human verdict"
    assert [entry.scorer_id for entry in given[-1].scorers] == ["right", "flat"]
    app.selectbox(key=KEY).set_value(None)
    app.run()
    assert given[-1] is None


def test_without_label_columns_the_panel_says_so(app: AppTest) -> None:
    unlabelled = run_experiment(b"question,answer,topic\nQ1,right,a\nQ2,wrong,b\n", "plain")
    show(app, unlabelled)
    assert not [s for s in app.selectbox if s.key == KEY]
    assert agreement_table(app) is None
    assert any("No metadata column of this dataset holds labels" in c.value for c in app.caption)


def test_column_names_are_shown_as_text(app: AppTest) -> None:
    hostile = "**bold** [x](javascript:alert(1)) label"
    data = f"question,answer,{hostile}\nQ1,right,yes\nQ2,wrong,no\n".encode()
    experiment_id = run_experiment(data, "hostile")
    show(app, experiment_id)
    assert app.selectbox(key=KEY).value == hostile
    texts = [t.value for t in app.text]
    assert any(f"Labels from column {hostile}:" in t for t in texts)
    assert not any(hostile in m.value for m in app.markdown)
    assert not any(hostile in c.value for c in app.caption)


def test_the_verdict_sentence_and_badges(app: AppTest) -> None:
    rows = ["id,question,answer,expected,is_correct"]
    rows += [f"r{n},Q,right {n},r,yes" for n in range(4)]
    rows += [f"w{n},Q,wrong zzz {n},r,no" for n in range(4)]
    service = core.service.get_service()
    dataset = service.import_dataset("verdict.csv", ("\n".join(rows) + "\n").encode())
    started = service.start_experiment(
        ExperimentConfig(
            name="verdict",
            dataset_id=dataset.id,
            scorers=[
                ScorerSpec(scorer_id="checks.includes", options={"value": "zzz", "id": "inv"}),
                ScorerSpec(scorer_id="checks.includes", options={"value": "right", "id": "ok"}),
            ],
        )
    )
    assert service.wait(started, timeout=60).status == "completed"
    show(app, started)
    table = agreement_table(app)
    assert list(table["scorer"]) == ["ok", "inv"]  # ranked best first
    assert list(table["verdict"]) == ["✅ separates", "🔻 inverted"]
    (box,) = [s for s in app.success if "separates the labels" in s.value]
    shown = box.value.replace("\\", "")  # markdown escapes taken off
    assert "ok (AUC 1.00)" in shown
    assert "Ranks wrong answers higher (the interval below 0.5): inv (AUC 0.00)" in shown
