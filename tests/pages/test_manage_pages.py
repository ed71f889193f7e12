"""Managing datasets and experiments, and the themes panel, in the dashboard (AppTest): the
name field follows the upload, stored content is offered instead of a copy, renames, deletions
confirmed with what goes, an experiment's note and tags (its page, the home table and filter),
and the themes of low-score reasons and failure errors with links to their items."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from page_text import plain  # tests/pages is on sys.path (no package: `pages` is the app)
from planted import CATALOG, planted_csv  # tests/ is on sys.path too
from streamlit.testing.v1 import AppTest

import core.service
from core.records import ExperimentConfig, ScorerSpec
from core.service import Service
from pages.ui.manage import EXPERIMENT_EDITOR

ROOT = Path(__file__).resolve().parents[2]

SMALL = b"question,answer\nWhat is 2+2?,4\nCapital of France?,Paris\n"


@pytest.fixture
def shared(fresh_service: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Service:
    """The process-wide service, with a scorer whose reason is the item's output."""
    service = Service(f"sqlite:///{tmp_path / 'manage.db'}", catalog=CATALOG)
    monkeypatch.setattr(core.service, "_service", service)
    return service


@pytest.fixture
def app(shared: Service) -> AppTest:
    test = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    test.run()
    assert not test.exception, test.exception
    return test


@pytest.fixture
def experiment_id(shared: Service) -> str:
    dataset = shared.import_dataset("planted.csv", planted_csv())
    started = shared.start_experiment(
        ExperimentConfig(
            name="planted run",
            dataset_id=dataset.id,
            scorers=[ScorerSpec(scorer_id="reasoned")],
        )
    )
    assert shared.wait(started, timeout=60).counts.failed == 6
    return started


def visit(app: AppTest, page: str, experiment_id: str | None = None) -> AppTest:
    if experiment_id is not None:
        app.query_params["experiment"] = experiment_id
    app.switch_page(page)
    app.run()
    assert not app.exception, app.exception
    return app


def open_editor(app: AppTest) -> AppTest:
    """Open the experiment page's "Name, note and tags" expander, as a click on it does: its
    form is drawn only when open."""
    assert not [b for b in app.button if b.label == "Delete…"]  # shut: nothing drawn in it
    app.session_state[EXPERIMENT_EDITOR] = True
    return rerun(app)


def rerun(app: AppTest) -> AppTest:
    app.run()
    assert not app.exception, app.exception
    return app


def button(app: AppTest, label: str) -> Any:
    return next(b for b in app.button if b.label == label)


def labels(app: AppTest) -> list[str]:
    return [b.label for b in app.button]


def shown(app: AppTest) -> str:
    parts = [m.value for m in app.markdown] + [c.value for c in app.caption]
    parts += [w.value for w in app.warning] + [i.value for i in app.info]
    parts += [e.value for e in app.error] + [s.value for s in app.success]
    return plain(" ".join(parts)).replace("**", "")


def upload(app: AppTest, name: str, content: bytes) -> AppTest:
    app.file_uploader[0].set_value((name, content, "text/csv"))
    return rerun(app)


# ---- datasets ----


def test_the_name_field_follows_each_uploaded_file(app: AppTest) -> None:
    visit(app, "pages/datasets.py")
    upload(app, "first.csv", SMALL)
    assert [t.value for t in app.text_input if t.label == "Dataset name"] == ["first"]
    upload(app, "second.csv", SMALL + b"Color of the sky?,Blue\n")
    assert [t.value for t in app.text_input if t.label == "Dataset name"] == ["second"]


def test_stored_content_is_offered_instead_of_a_second_copy(app: AppTest, shared: Service) -> None:
    visit(app, "pages/datasets.py")
    upload(app, "quiz.csv", SMALL)
    button(app, "Import dataset").click()
    rerun(app)
    assert "Imported quiz: 2 items" in shown(app)
    rerun(app)  # pressing Import again finds the stored copy
    assert "Import dataset" not in labels(app)
    assert "stored already as quiz (2 items" in shown(app)
    button(app, "Use the stored dataset").click()
    rerun(app)
    assert [d.name for d in shared.list_datasets()].count("quiz") == 1
    assert app.selectbox(key="datasets.inspect").value == shared.list_datasets()[0].id
    button(app, "Import a copy anyway").click()
    rerun(app)
    assert [d.name for d in shared.list_datasets()].count("quiz") == 2


def test_rename_and_delete_a_dataset_saying_what_goes(
    app: AppTest, shared: Service, experiment_id: str
) -> None:
    dataset_id = shared.get_experiment(experiment_id).dataset_id
    visit(app, "pages/datasets.py")
    app.selectbox(key="datasets.inspect").select(dataset_id)
    rerun(app)
    app.text_input(key=f"manage.dataset.{dataset_id}.name").input("Planted v2")
    button(app, "Rename").click()
    rerun(app)
    assert shared.get_dataset(dataset_id).name == "Planted v2"
    app.text_input(key=f"manage.dataset.{dataset_id}.name").input("   ")
    button(app, "Rename").click()
    rerun(app)
    assert "The dataset name is empty" in shown(app)
    button(app, "Delete…").click()
    rerun(app)
    results = shared.store.result_count(experiment_id)
    assert (
        f"Deleting the dataset Planted v2 also deletes 36 items, 1 experiment, "
        f"{results} stored results and 0 human reviews" in shown(app)
    )
    button(app, "Cancel").click()
    rerun(app)
    assert "Delete the dataset" not in labels(app)
    button(app, "Delete…").click()
    rerun(app)
    button(app, "Delete the dataset").click()
    rerun(app)
    assert dataset_id not in [d.id for d in shared.list_datasets()]
    assert shared.list_experiments() == []


# ---- experiments ----


def test_note_and_tags_are_edited_shown_and_filtered(
    app: AppTest, shared: Service, experiment_id: str
) -> None:
    other = shared.start_experiment(
        ExperimentConfig(
            name="other run",
            dataset_id=shared.get_experiment(experiment_id).dataset_id,
            scorers=[ScorerSpec(scorer_id="reasoned")],
        )
    )
    shared.wait(other, timeout=60)
    open_editor(visit(app, "pages/experiment.py", experiment_id))
    key = f"manage.experiment.{experiment_id}"
    app.text_input(key=f"{key}.name").input("baseline run")
    app.text_area(key=f"{key}.note").input("Prompt v3, before the fix.")
    app.text_input(key=f"{key}.tags").input("baseline, prompt-v3")
    button(app, "Save").click()
    rerun(app)
    info = shared.get_experiment(experiment_id)
    assert (info.name, info.note, info.tags) == (
        "baseline run",
        "Prompt v3, before the fix.",
        ["baseline", "prompt-v3"],
    )
    assert "baseline" in shown(app) and "Prompt v3, before the fix." in shown(app)
    app.text_input(key=f"{key}.tags").input("ok, " + "x" * 40)
    button(app, "Save").click()
    rerun(app)
    assert "Tag 2" in shown(app) and "at most 32" in shown(app)
    assert shared.get_experiment(experiment_id).tags == ["baseline", "prompt-v3"]

    visit(app, "pages/home.py")
    table = app.dataframe[0].value
    assert list(table["tags"]) == ["", "baseline, prompt-v3"]
    app.multiselect(key="home.tags").select("prompt-v3")
    rerun(app)
    table = app.dataframe[0].value
    assert list(table["name"]) == ["baseline run"]
    assert list(table["note"]) == ["Prompt v3, before the fix."]


def test_delete_an_experiment_after_saying_what_goes(
    app: AppTest, shared: Service, experiment_id: str
) -> None:
    open_editor(visit(app, "pages/experiment.py", experiment_id))
    button(app, "Delete…").click()
    rerun(app)
    results = shared.store.result_count(experiment_id)
    assert (
        f"Deleting the experiment planted run also deletes {results} stored results and 0 "
        "human reviews" in shown(app)
    )
    button(app, "Delete the experiment").click()
    rerun(app)
    assert shared.list_experiments() == []
    assert shared.list_datasets()  # its dataset stays


# ---- themes ----


def page_links(app: AppTest) -> list[Any]:
    return list(app.get("page_link"))


def test_themes_of_low_score_reasons_link_to_their_items(app: AppTest, experiment_id: str) -> None:
    app.query_params["tab"] = "themes"
    visit(app, "pages/experiment.py", experiment_id)
    assert not any("Telling words" in c.value for c in app.caption)  # nothing until asked
    app.toggle(key="themes.low_scores-failures.on").set_value(True)
    rerun(app)
    text = shown(app)
    assert "lowest 25% of scores" in text and "24 texts" in text
    for words in (("date", "wrong", "year"), ("source", "cites"), ("rude", "dismissive")):
        assert any(word in text for word in words), words
    links = [link for link in page_links(app) if "item=" in str(link.proto)]
    assert len(links) >= 3
    assert f"experiment={experiment_id}" in str(links[0].proto)
    app.radio(key="themes.low_scores-failures.basis").set_value("Below a threshold")
    rerun(app)
    assert "24 of 30 scored items scoring below 0.5" in shown(app)
    app.number_input(key="themes.low_scores-failures.threshold").set_value(-1.0)
    rerun(app)
    assert "0 of 30 scored items scoring below -1" in shown(app)
    assert "No low-scoring item with a reason to group." in shown(app)
    app.radio(key="themes.low_scores-failures.kind").set_value("failures")
    rerun(app)
    text = shown(app)
    assert "errors of the 6 failed runs" in text.lower()
    assert "limit" in text and "timed" in text


def test_themes_of_failure_errors_on_the_failures_page(app: AppTest, experiment_id: str) -> None:
    visit(app, "pages/failures.py", experiment_id)
    app.toggle(key="themes.failures.on").set_value(True)
    rerun(app)
    assert [s.label for s in app.selectbox if s.key == "themes.failures.scorer.failures"] == [
        "Scorer"
    ]
    text = shown(app)
    assert "6 texts" in text and "rate" in text and "timed" in text
