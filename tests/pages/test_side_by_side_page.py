"""Compare's "Side by side" grid with three experiments: every item paired in all three, each
experiment's score per scorer and each candidate's change, sortable by any column, rises green
and drops red; and its shaping (core/reporting/side_by_side.py) on its own."""

from __future__ import annotations

import pytest
from streamlit import dataframe_util
from streamlit.testing.v1 import AppTest

import core.service
from core.records import ExperimentConfig, ScorerSpec
from pages.ui.side_by_side import FELL, ROSE

SCORERS = [ScorerSpec(scorer_id="checks.includes", options={"value": "right", "id": "right"})]


def csv(answers: dict[str, str]) -> bytes:
    lines = ["id,question,answer"] + [f"{i},Q {i},{a}" for i, a in answers.items()]
    return ("\n".join(lines) + "\n").encode()


def run(name: str, answers: dict[str, str]) -> str:
    service = core.service.get_service()
    dataset = service.import_dataset(f"{name}.csv", csv(answers))
    started = service.start_experiment(
        ExperimentConfig(name=name, dataset_id=dataset.id, scorers=SCORERS)
    )
    assert service.wait(started, timeout=60).status == "completed"
    return started


@pytest.fixture
def three(app: AppTest) -> tuple[str, str, str]:
    base = run("base", {"a": "right", "b": "wrong", "c": "right", "d": "right"})
    one = run("one", {"a": "wrong", "b": "right", "c": "right", "d": "right"})
    two = run("two", {"a": "right", "b": "right", "c": "wrong", "e": "right"})  # no d, new e
    return base, one, two


def grid(app: AppTest):
    (found,) = [d for d in app.dataframe if "right · base" in d.value.columns]
    return found


def test_three_experiments_side_by_side(app: AppTest, three: tuple[str, str, str]) -> None:
    base, one, two = three
    app.query_params["baseline"] = base
    app.query_params["candidates"] = f"{one},{two}"
    app.switch_page("pages/compare.py")
    app.run()
    assert not app.exception, app.exception
    table = grid(app).value
    assert list(table.columns) == [
        "item_id",
        "input",
        "right · base",
        "right · one",
        "right · one Δ",
        "right · two",
        "right · two Δ",
    ]
    assert set(table["item_id"]) == {"a", "b", "c"}  # d and e are not in all three
    # sorted by the first change, lowest first: a fell in "one"
    assert table["item_id"].iloc[0] == "a" and table["right · one Δ"].iloc[0] == -1.0
    styler = grid(app).proto.arrow_data.styler
    assert ROSE.split(": ")[1][1:] in styler.styles and FELL.split(": ")[1][1:] in styler.styles
    app.selectbox(key="compare.side.sort").set_value("right · two Δ")
    app.run()
    table = grid(app).value
    assert table["item_id"].iloc[0] == "c" and table["right · two Δ"].iloc[0] == -1.0
    app.toggle(key="compare.side.ascending").set_value(False)
    app.run()
    assert grid(app).value["item_id"].iloc[0] == "b"  # rose in "two"
    cells = dataframe_util.convert_arrow_bytes_to_pandas_df(
        grid(app).proto.arrow_data.styler.display_values
    )
    assert cells["right · two Δ"].iloc[0] == "+1.000"
    assert any("3 items paired in all 3 experiments" in c.value for c in app.caption)
