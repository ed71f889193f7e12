"""The Compare page on real experiments: two runs of code scorers over two versions of a small
dataset (the candidate's outputs differ, one item is new and one is gone), pairing by id,
the fingerprint warning, the URL parameters, the drill-down diffs and the JSON import."""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

import core.service
from core.exchange.exports import experiment_json_text
from core.records import ExperimentConfig, ScorerSpec

PAGE = "pages/compare.py"
BASELINE_CSV = (
    b"id,question,answer,expected\n"
    b"q1,What is Python?,Python is a snake.,Python is a programming language.\n"
    b"q2,What is HTTP?,HTTP is a protocol.,HTTP is the web's transfer protocol.\n"
    b"q3,What is SQL?,SQL queries relational databases.,SQL is a query language.\n"
    b"q4,What is CSS?,CSS styles pages.,CSS styles web pages.\n"
)
CANDIDATE_CSV = (
    b"id,question,answer,expected\n"
    b"q1,What is Python?,Python is a programming language.,Python is a programming language.\n"
    b"q2,What is HTTP?,HTTP is a protocol.,HTTP is the web's transfer protocol.\n"
    b"q3,What is SQL?,It is <b>SQL</b>.,SQL is a query language.\n"
    b"q5,What is DNS?,DNS names hosts.,DNS maps names to addresses.\n"
)
SCORERS = [ScorerSpec(scorer_id="content-similarity-scorer"), ScorerSpec(scorer_id="tone-scorer")]


def run(name: str, csv: bytes) -> str:
    service = core.service.get_service()
    dataset = service.import_dataset(f"{name}.csv", csv)
    started = service.start_experiment(
        ExperimentConfig(name=name, dataset_id=dataset.id, scorers=SCORERS, concurrency=2)
    )
    assert service.wait(started, timeout=60).status == "completed"
    return started


@pytest.fixture
def experiments(app: AppTest) -> tuple[str, str]:
    """(baseline id, candidate id)."""
    return run("baseline run", BASELINE_CSV), run("candidate run", CANDIDATE_CSV)


def open_page(app: AppTest, **params: str) -> AppTest:
    for name, value in params.items():
        app.query_params[name] = value
    app.switch_page(PAGE)
    app.run()
    assert not app.exception, app.exception
    return app


def param(app: AppTest, name: str) -> str:
    value = app.query_params[name]
    return value[0] if isinstance(value, list) else value


def test_one_experiment_is_not_enough(app: AppTest) -> None:
    run("only run", BASELINE_CSV)
    open_page(app)
    assert any("needs two experiments" in i.value for i in app.info)


def test_pairs_by_id_warns_and_tabulates(app: AppTest, experiments: tuple[str, str]) -> None:
    baseline, candidate = experiments
    open_page(app, baseline=baseline, candidates=candidate)
    warnings = " ".join(w.value for w in app.warning)
    assert "datasets differ" in warnings
    captions = " ".join(c.value for c in app.caption)
    assert "3 items paired by id" in captions
    assert "1 only in the baseline" in captions and "1 only in the candidate" in captions
    scorers = app.dataframe[0].value
    assert list(scorers["scorer_id"]) == ["content-similarity-scorer", "tone-scorer"]
    similarity = scorers.iloc[0]
    assert similarity["paired_n"] == 3 and similarity["baseline_n"] == 4
    assert similarity["improved"] == 1 and similarity["regressed"] == 1
    assert similarity["unchanged"] == 1
    changes = next(d.value for d in app.dataframe if "baseline_reason" in d.value.columns)
    assert set(changes["item_id"]) == {"q1", "q2", "q3"}
    assert changes.iloc[-1]["item_id"] == "q2"  # unchanged: last


def test_choices_go_to_the_url_and_back(app: AppTest, experiments: tuple[str, str]) -> None:
    baseline, candidate = experiments
    open_page(app, baseline=baseline, candidates=candidate, scorer="tone-scorer", item="q3")
    assert app.selectbox(key="compare.baseline").value == baseline
    assert app.multiselect(key="compare.candidates").value == [candidate]
    assert app.selectbox(key="compare.scorer").value == "tone-scorer"
    assert app.selectbox(key="compare.item").value == "q3"
    app.selectbox(key="compare.scorer").set_value("content-similarity-scorer")
    app.run()
    assert param(app, "scorer") == "content-similarity-scorer"
    assert param(app, "baseline") == baseline and param(app, "candidates") == candidate
    app.selectbox(key="compare.baseline").set_value(candidate)  # swap the sides
    app.run()
    assert not app.exception, app.exception
    assert param(app, "baseline") == candidate
    assert param(app, "candidates") == baseline


def test_drilldown_shows_escaped_word_diffs(app: AppTest, experiments: tuple[str, str]) -> None:
    baseline, candidate = experiments
    open_page(app, baseline=baseline, candidates=candidate, item="q3")
    diffs = [element.proto.body for element in app.get("html")]
    output_diff = diffs[-1]
    assert "&lt;b&gt;SQL&lt;/b&gt;" in output_diff and "<b>" not in output_diff
    assert "<del" in output_diff and "<ins" in output_diff
    assert len(diffs) == 3  # each side against the ground truth, then output against output


def test_several_candidates(app: AppTest, experiments: tuple[str, str]) -> None:
    baseline, candidate = experiments
    third = run("third run", CANDIDATE_CSV)
    open_page(app, baseline=baseline, candidates=f"{candidate},{third}", vs=third)
    assert app.multiselect(key="compare.candidates").value == [candidate, third]
    assert app.selectbox(key="compare.vs").value == third
    usage = app.dataframe[-1].value
    assert len(usage.columns) == 3 and usage.columns[0].startswith("baseline · ")


def test_import_an_exported_experiment(app: AppTest, experiments: tuple[str, str]) -> None:
    baseline, _ = experiments
    service = core.service.get_service()
    exported = experiment_json_text(service.load_experiment(baseline)).encode()
    imported = service.import_experiment_json(exported)
    open_page(app, baseline=baseline, candidates=imported)
    assert not any("datasets differ" in w.value for w in app.warning)
    scorers = app.dataframe[0].value
    assert (scorers["unchanged"] == scorers["paired_n"]).all()
    assert (scorers["mean_change"] == 0).all()
    assert json.loads(exported)["name"] == "baseline run"


def test_the_change_table_lists_the_largest_changes_its_picker_offers(app: AppTest) -> None:
    def csv(shift: int) -> bytes:
        moods = ("Awful and terrible.", "Great and wonderful!", "Great and wonderful!")
        rows = [f"q{n},Question {n}?,{moods[(n + shift) % 3]} {n},x" for n in range(2_005)]
        return ("id,question,answer,expected\n" + "\n".join(rows) + "\n").encode()

    service = core.service.get_service()
    ids = []
    for name, shift in (("many base", 0), ("many cand", 1)):
        dataset = service.import_dataset(f"{name}.csv", csv(shift))
        started = service.start_experiment(
            ExperimentConfig(name=name, dataset_id=dataset.id, scorers=[SCORERS[1]], concurrency=2)
        )
        assert service.wait(started, timeout=120).status == "completed"
        ids.append(started)
    open_page(app, baseline=ids[0], candidates=ids[1])
    changes = next(d.value for d in app.dataframe if "baseline_reason" in d.value.columns)
    assert len(changes) == 2_000
    assert changes["change"].abs().is_monotonic_decreasing  # the largest first
    captions = " ".join(c.value for c in app.caption)
    assert "The 2,000 largest changes of 2,005 paired items." in captions
    picker = next(s for s in app.selectbox if s.label == "Item (largest change first)")
    assert len(picker.options) == 2_000 and picker.options[0] == changes["item_id"].iloc[0]
