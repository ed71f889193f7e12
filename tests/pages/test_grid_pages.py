"""The experiment page's results grid and slices, and Compare's change per slice, on a real
experiment of a dataset with a `category` metadata column: a row click opens its drill-down
and the URL follows, columns hide, the sort runs over every item, the metadata filter keeps
one category, the slices give each category's mean and interval, and Compare lists the
category that regressed first."""

from __future__ import annotations

from typing import Any

import pytest
import streamlit as st
from grid_rows import (  # tests/pages is on sys.path (no package)
    click_item,
    click_row,
    grid,
    open_filters,
    url,
)
from streamlit.testing.v1 import AppTest

import core.service
from core import Scorer, create_scorer
from core.records import ExperimentConfig, ResultQuery, ScorerSpec
from core.scorers import PREBUILT, PrebuiltScorer
from core.scorers.catalog import ScorerCatalog

ITEMS = 60
CATEGORIES = ["Law", "Health", "Misconceptions"]


def rows(wrong_in: str = "Law") -> bytes:
    """Item n: category CATEGORIES[n % 3]; its answer is wrong (score 0) in the `wrong_in`
    category on every other item, right (score 1) elsewhere."""
    lines = [b"id,question,answer,category"]
    for n in range(ITEMS):
        category = CATEGORIES[n % 3]
        wrong = category == wrong_in and n % 2 == 0
        answer = f"{'wrong' if wrong else 'right'} answer {n} " + "long text " * 30
        lines.append(f"i{n:03d},question {n},{answer},{category}".encode())
    return b"\n".join(lines) + b"\n"


def run(name: str, data: bytes) -> str:
    service = core.service.get_service()
    dataset = service.import_dataset(f"{name}.csv", data)
    started = service.start_experiment(
        ExperimentConfig(
            name=name,
            dataset_id=dataset.id,
            scorers=[
                ScorerSpec(scorer_id="checks.includes", options={"value": "right", "id": "right"})
            ],
        )
    )
    assert service.wait(started, timeout=60).status == "completed"
    return started


@pytest.fixture
def experiment_id(app: AppTest) -> str:
    return run("sliced", rows())


def show(app: AppTest, experiment_id: str, **params: str | list[str]) -> AppTest:
    app.query_params["experiment"] = experiment_id
    for name, value in params.items():
        app.query_params[name] = value
    app.switch_page("pages/experiment.py")
    app.run()
    assert not app.exception, app.exception
    return app


def drilldown_text(app: AppTest) -> str:
    return " ".join(str(e.value) for e in [*app.markdown, *app.code, *app.text, *app.caption])


def test_the_grid_puts_scores_first_then_id_metadata_and_cut_texts(
    app: AppTest, experiment_id: str
) -> None:
    show(app, experiment_id)
    table = grid(app).value
    assert list(table.columns)[:3] == ["right", "item_id", "meta: category"]
    assert list(table["meta: category"][:3]) == CATEGORIES
    assert table["output"].str.len().max() == 160  # cut; the whole text is in the drill-down
    assert table.loc[0, "right"] == "0.000" and table.loc[1, "right"] == "1.000"
    cells = grid(app).cells["right"]
    assert cells[0]["colour"] == "#f8696b" and cells[1]["colour"] == "#63be7b"  # red 0, green 1
    assert [c["kind"] for c in grid(app).data["columns"]][:3] == ["score", "text", "text"]


def test_a_row_click_opens_its_drilldown_and_the_url_follows(
    app: AppTest, experiment_id: str
) -> None:
    show(app, experiment_id)
    assert "Click a row of the grid to open its item here." in [i.value for i in app.info]
    assert "question 7" not in drilldown_text(app)
    click_row(app, 7)
    assert url(app, "item") == "i007"
    assert "question 7" in drilldown_text(app)
    assert "long text " * 30 in drilldown_text(app)  # the whole output, not the grid's cut
    click_row(app, 2)
    assert url(app, "item") == "i002" and "question 2" in drilldown_text(app)
    click_item(app, "i004")
    assert url(app, "item") == "i004" and "question 4" in drilldown_text(app)
    app.run()  # a rerun without a click keeps the item, and the grid marks its row
    assert url(app, "item") == "i004" and grid(app).data["selected"] == "i004"
    click_item(app, "i004")  # a second click on the same row is an event too
    assert url(app, "item") == "i004"


def test_a_link_to_an_item_opens_it_even_off_the_page(app: AppTest, experiment_id: str) -> None:
    show(app, experiment_id, item="i055")  # page 2 of the grid
    assert url(app, "item") == "i055" and "question 55" in drilldown_text(app)
    show(app, experiment_id, item="nope")
    assert any("No item nope" in w.value for w in app.warning)


def test_columns_hide_and_the_url_keeps_them(app: AppTest, experiment_id: str) -> None:
    show(app, experiment_id)
    assert "input" in grid(app).columns
    open_filters(app)
    app.multiselect(key="experiment.hide").set_value(["input", "meta: category"])
    app.run()
    order = grid(app).columns
    assert "input" not in order and "meta: category" not in order
    assert order[:2] == ["right", "item_id"] and "output" in order
    assert app.query_params["hide"] == ["input", "meta: category"]
    # A link with the same URL hides the same columns.
    other = AppTest.from_file(app._script_path, default_timeout=60)
    show(other, experiment_id, hide=["output"])
    assert "output" not in grid(other).columns
    assert "Filtered: 1 column hidden" in [c.value for c in other.caption]  # the box shut
    assert app.multiselect(key="experiment.hide").value == ["input", "meta: category"]


def test_the_sort_by_a_score_runs_over_every_item(app: AppTest, experiment_id: str) -> None:
    show(app, experiment_id)
    app.selectbox(key="experiment.sort").set_value("asc:right")
    app.run()
    wrong = [f"i{n:03d}" for n in range(0, ITEMS, 6)]  # Law and even: every 6th item
    assert list(grid(app).value["item_id"][: len(wrong)]) == wrong
    assert url(app, "sort") == "asc:right"
    app.selectbox(key="experiment.sort").set_value("desc:right")
    app.run()
    assert set(grid(app).value["right"]) == {"1.000"}  # the 50 highest of 60 are all right


def test_a_metadata_filter_keeps_the_values_chosen(app: AppTest, experiment_id: str) -> None:
    show(app, experiment_id)
    open_filters(app)
    app.selectbox(key="experiment.mcol").set_value("category")
    app.run()
    values = app.multiselect(key="experiment.mval.category")
    assert sorted(values.options) == sorted(CATEGORIES)
    values.set_value(["Health", "Law"])
    app.run()
    kept = list(grid(app).value["meta: category"])
    assert set(kept) == {"Health", "Law"} and len(kept) == 40
    assert url(app, "mcol") == "category" and app.query_params["mval"] == ["Health", "Law"]
    assert any(c.value.startswith("40 of 60 items") for c in app.caption)
    linked = AppTest.from_file(app._script_path, default_timeout=60)
    show(linked, experiment_id, mcol="category", mval="Misconceptions")  # a link, opened
    assert set(grid(linked).value["meta: category"]) == {"Misconceptions"}


def test_slices_by_category(app: AppTest, experiment_id: str) -> None:
    show(app, experiment_id, tab="slices")
    app.selectbox(key="experiment.slice").set_value("category")
    app.run()
    assert not app.exception, app.exception
    table = next(d.value for d in app.dataframe if "missing" in d.value.columns)
    by_value = table.set_index("value")
    assert dict(by_value["items"]) == {"Law": 20, "Health": 20, "Misconceptions": 20}
    assert by_value.loc["Law", "right · mean"] == pytest.approx(0.5)
    assert by_value.loc["Law", "right · low"] < 0.5 < by_value.loc["Law", "right · high"]
    assert by_value.loc["Law", "right · low"] >= 0.0  # clipped to the scorer's range
    assert by_value.loc["Health", "right · mean"] == 1.0
    assert by_value.loc["Health", "failed"] == 0
    assert table["value"].iloc[0] == "Law"  # worst first
    assert url(app, "slice") == "category"
    assert not app.get("plotly_chart")  # the chart is one inline SVG: no plotly.js to mount
    (chart,) = [m.value for m in app.markdown if "slice-chart-box" in m.value]
    assert chart.count("<rect ") == 3  # a bar per value of the chart's scorer
    assert ">Law (n=20)</text>" in chart
    assert any("Student t-interval" in c.value for c in app.caption)
    shown = next(d for d in app.dataframe if "missing" in d.value.columns)
    assert "failed" in shown.proto.column_order  # this process ran it: its failures are known


def test_slices_of_an_experiment_run_elsewhere_say_failures_are_unknown(
    app: AppTest, experiment_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(core.service, "_service", None)  # as after a restart: nothing in memory
    st.cache_resource.clear()
    show(app, experiment_id, slice="category")
    table = next(d for d in app.dataframe if "missing" in d.value.columns)
    assert table.value["failed"].isna().all()
    assert "failed" not in table.proto.column_order and "missing" in table.proto.column_order
    assert any("missing counts them" in c.value for c in app.caption)


def fragile() -> Scorer:
    """Scores 0.25, but raises on question 1."""

    def score(ctx: Any) -> float:
        if ctx.run.input == "question 1":
            raise RuntimeError("cannot score question 1")
        return 0.25

    return create_scorer(id="fragile", description="raises on one item").generate_score(score)


def test_a_failed_run_reads_failed_in_its_score_cell(
    app: AppTest, monkeypatch: pytest.MonkeyPatch
) -> None:
    service = core.service.get_service()
    entry = PrebuiltScorer("fragile", "Fragile", "Raises on one item", fragile, False)
    monkeypatch.setattr(service, "catalog", ScorerCatalog({**PREBUILT, "fragile": entry}))
    few = b"\n".join(rows().split(b"\n")[:4]) + b"\n"  # the header and 3 items
    dataset = service.import_dataset("few.csv", few)
    started = service.start_experiment(
        ExperimentConfig(dataset_id=dataset.id, scorers=[ScorerSpec(scorer_id="fragile")])
    )
    assert service.wait(started, timeout=60).counts.failed == 1
    show(app, started)
    cells = grid(app).cells["fragile"][:3]
    assert [c["text"] for c in cells] == ["0.250", "failed", "0.250"]
    assert [c.get("failed", False) for c in cells] == [False, True, False]  # drawn on red
    assert list(grid(app).value["failed"][:2]) == ["", "fragile"]


def test_compare_lists_the_category_that_regressed_first(app: AppTest) -> None:
    baseline = run("before", rows(wrong_in="Law"))
    candidate = run("after", rows(wrong_in="Health"))
    app.query_params["baseline"] = baseline
    app.query_params["candidates"] = candidate
    app.switch_page("pages/compare.py")
    app.run()
    assert not app.exception, app.exception
    app.selectbox(key=f"compare.slice.{candidate}").set_value("category")
    app.run()
    assert not app.exception, app.exception
    table = next(d.value for d in app.dataframe if {"value", "change"} <= set(d.value.columns))
    assert list(table["value"]) == ["Health", "Misconceptions", "Law"]
    assert list(table["change"]) == pytest.approx([-0.5, 0.0, 0.5])
    assert list(table["n"]) == [20, 20, 20]  # paired on the same items
    assert list(table["verdict"]) == ["drop", "no clear change", "rise"]
    health = table.iloc[0]
    assert health["low"] < -0.5 < health["high"] < 0  # its 95% interval excludes 0
    (said,) = [c.value for c in app.caption if "Largest significant drop" in c.value]
    assert "right on category = Health" in said and "Holm" in said


def test_summary_card_numbers_are_short() -> None:
    from pages.ui import fmt

    assert [fmt.count(n) for n in (0, 817, 4_085, 9_999)] == ["0", "817", "4,085", "9,999"]
    assert [fmt.count(n) for n in (10_000, 40_850, 999_949)] == ["10.0k", "40.9k", "999.9k"]
    assert [fmt.count(n) for n in (1_000_000, 4_085_000, 123_456_789)] == ["1M", "4.08M", "123M"]


def test_extra_columns_follow_the_scores(app: AppTest, experiment_id: str) -> None:
    from pages.ui.grid import grid_columns, grid_frame

    service = core.service.get_service()
    info = service.get_experiment(experiment_id)
    page = service.result_page(experiment_id, ResultQuery(page_size=3))
    frame = grid_frame(page, info, ["category"], {"review": {"i001": "wrong"}})
    assert list(frame.columns)[:4] == ["right", "review", "item_id", "meta: category"]
    assert list(frame["review"].fillna("")) == ["", "wrong", ""]
    # "Hide columns" offers the grid's columns, in its order, before any page is read.
    assert list(grid_columns(info, ["category"], ["review"])) == list(frame.columns)
    with pytest.raises(ValueError, match=r"extra columns \['right'\] clash"):
        grid_frame(page, info, [], {"right": {}})


def test_a_column_named_with_a_quote_slices_and_filters(app: AppTest) -> None:
    """Issue 19: any column name the import accepts reads in slices and the grid's filter."""
    data = b'id,question,answer,"x""y"\na,q,right,1\nb,q,wrong,2\n'
    started = run("quoted", data)
    show(app, started, slice='x"y')
    assert not app.warning, [w.value for w in app.warning]
    assert {s.value for s in core.service.get_service().slices(started, 'x"y')} == {"1", "2"}
    app.segmented_control(key="experiment.tab").set_value("results")
    app.run()
    open_filters(app)
    app.selectbox(key="experiment.mcol").set_value('x"y')
    app.run()
    assert not app.exception, app.exception
    assert not app.warning and list(grid(app).value["item_id"]) == ["a", "b"]
