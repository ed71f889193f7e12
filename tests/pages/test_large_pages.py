"""The result pages never load a whole experiment: the experiment detail, Failures and Judge
usage pages render, filter and turn pages through the database's aggregates and a page of the
item table. A spy makes every whole-experiment read fail while they render."""

from __future__ import annotations

from typing import Any

import pytest
from grid_rows import click_row, grid, open_filters  # tests/pages is on sys.path (no package)
from streamlit.testing.v1 import AppTest

import core.service
from core.records import ExperimentConfig, ScorerSpec
from core.service import Service
from core.storage import Store
from core.storage.text_search import search_base

ITEMS = 120


@pytest.fixture
def experiment_id(app: AppTest) -> str:
    rows = b"id,question,answer\n" + b"".join(
        b"i%03d,question %d,%s %d\n" % (n, n, b"right" if n % 3 else b"wrong", n)
        for n in range(ITEMS)
    )
    service = core.service.get_service()
    dataset = service.import_dataset("many.csv", rows)
    started = service.start_experiment(
        ExperimentConfig(
            name="many",
            dataset_id=dataset.id,
            scorers=[
                ScorerSpec(scorer_id="checks.includes", options={"value": "right", "id": "right"})
            ],
        )
    )
    assert service.wait(started, timeout=60).status == "completed"
    return started


@pytest.fixture
def no_whole_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every read of a whole experiment fails the test (and is listed)."""
    calls: list[str] = []

    def refuse(name: str) -> Any:
        def refused(*args: Any, **kwargs: Any) -> Any:
            calls.append(name)
            raise AssertionError(f"{name} called while rendering a result page")

        return refused

    monkeypatch.setattr(Service, "load_experiment", refuse("Service.load_experiment"))
    monkeypatch.setattr(Service, "experiment_pages", refuse("Service.experiment_pages"))
    real_results = Store.experiment_results
    real_items = Store.dataset_items

    def results(self: Store, experiment_id: str, **kwargs: Any) -> Any:
        if kwargs.get("item_ids") is None and kwargs.get("limit") is None:
            calls.append("Store.experiment_results (every result)")
            raise AssertionError("every stored result read while rendering a result page")
        return real_results(self, experiment_id, **kwargs)

    def items(self: Store, dataset_id: str, limit: int | None = None) -> Any:
        if limit is None:
            calls.append("Store.dataset_items (every item)")
            raise AssertionError("every item read while rendering a result page")
        return real_items(self, dataset_id, limit)

    monkeypatch.setattr(Store, "experiment_results", results)
    monkeypatch.setattr(Store, "dataset_items", items)
    return calls


def show(app: AppTest, page: str, experiment_id: str) -> AppTest:
    app.query_params["experiment"] = experiment_id
    app.switch_page(page)
    app.run()
    assert not app.exception, app.exception
    return app


def caption(app: AppTest) -> str:
    return next(c.value for c in app.caption if " items · page " in c.value)


def test_the_experiment_page_reads_a_page_at_a_time(
    app: AppTest, experiment_id: str, no_whole_reads: list[str]
) -> None:
    show(app, "pages/experiment.py", experiment_id)
    assert caption(app) == f"{ITEMS} of {ITEMS} items · page 1 of 3"
    table = grid(app).value
    assert list(table["item_id"]) == [f"i{n:03d}" for n in range(50)]
    assert {m.label: m.value for m in app.metric}["Scorer runs"] == f"{ITEMS} / {ITEMS}"
    assert [i.value for i in app.info] == ["Click a row of the grid to open its item here."]
    assert not app.get("plotly_chart")  # the histograms are drawn in their own view only
    app.number_input(key="experiment.page").set_value(3)
    app.run()
    assert caption(app) == f"{ITEMS} of {ITEMS} items · page 3 of 3"
    assert list(grid(app).value["item_id"]) == [f"i{n:03d}" for n in range(100, ITEMS)]
    open_filters(app)
    app.slider(key="experiment.range").set_range(0.0, 0.5)  # the "wrong" answers: score 0
    app.run()
    wrong = [f"i{n:03d}" for n in range(0, ITEMS, 3)]
    assert caption(app) == f"{len(wrong)} of {ITEMS} items · page 1 of 1"  # back to page 1
    assert list(grid(app).value["item_id"]) == wrong
    app.text_input(key="experiment.search").input("question 11")
    app.run()
    assert list(grid(app).value["item_id"]) == ["i111", "i114", "i117"]
    assert app.query_params["q"] in ("question 11", ["question 11"])
    click_row(app, 1)  # i114
    assert app.query_params["item"] in ("i114", ["i114"])
    shown = [e.value for e in [*app.markdown, *app.code, *app.text]]
    assert any("question 114" in str(value) for value in shown)  # only that item was read
    assert no_whole_reads == []


def test_the_sort_by_score_and_a_link_to_a_page(
    app: AppTest, experiment_id: str, no_whole_reads: list[str]
) -> None:
    app.query_params["sort"] = "asc:right"
    app.query_params["page"] = "1"
    show(app, "pages/experiment.py", experiment_id)
    ids = list(grid(app).value["item_id"])
    assert ids[:40] == [f"i{n:03d}" for n in range(0, ITEMS, 3)]  # score 0 first
    assert no_whole_reads == []


def test_failures_and_judge_usage_never_load_the_experiment(
    app: AppTest, experiment_id: str, no_whole_reads: list[str]
) -> None:
    show(app, "pages/failures.py", experiment_id)
    assert any("No scorer run failed" in s.value for s in app.success)
    show(app, "pages/judge_usage.py", experiment_id)
    assert any("made no judge call" in i.value for i in app.info)
    assert no_whole_reads == []


def test_opening_the_experiment_page_builds_its_search_index_in_the_background(
    app: AppTest, experiment_id: str
) -> None:
    service = core.service.get_service()
    store = service.store
    dataset_id = service.get_experiment(experiment_id).dataset_id
    with store.engine.connect() as connection:
        assert search_base(connection, dataset_id) is None  # the import indexed nothing
    show(app, "pages/experiment.py", experiment_id)
    assert store.results.search_indexer.wait(dataset_id, timeout_s=60)
    with store.engine.connect() as connection:
        assert search_base(connection, dataset_id) is not None  # whole before any search
    app.text_input(key="experiment.search").input("question 11")
    app.run()
    assert list(grid(app).value["item_id"]) == ["i011", *[f"i{n}" for n in range(110, ITEMS)]]
