"""Issue 19, hostile finding 3, in tables and option lists: a right-to-left override (U+202E)
and an icon shortcode (`:material/home:`) in a dataset's name, an experiment's name, a column
name, a metadata value and an output reach every dataframe cell, column label and option label
through `plain_text` (pages/ui/text.py): the override shown as its escape, the shortcode's
colon followed by a word joiner. (tests/pages/test_text.py tests `plain_text` itself.)"""

from __future__ import annotations

import json
from collections.abc import Iterable

import pandas as pd
import pytest
from grid_rows import grid  # tests/pages is on sys.path (no package)
from streamlit.testing.v1 import AppTest

import core.service
from core.records import ExperimentConfig, ScorerSpec
from pages.ui.text import plain_frame, plain_text

PAYLOAD = "x\u202efdp.exe :material/home: y"
SHOWN = plain_text(PAYLOAD)  # 'x\\u202efdp.exe :\u2060material/home: y'
COLUMN = f"topic {PAYLOAD}"
DATASET = f"data {PAYLOAD}"
EXPERIMENT = f"run {PAYLOAD}"
ITEMS = 4


def test_plain_text_shows_the_controls_and_keeps_shortcodes_text() -> None:
    assert SHOWN == "x\\u202efdp.exe :\u2060material/home: y"
    assert plain_text(":smile: and a:b") == ":\u2060smile: and a:b"  # only shortcodes change
    table = pd.DataFrame({COLUMN: [PAYLOAD, None], "n": [1, 2]}, index=[PAYLOAD, "b"])
    frame = plain_frame(table)
    assert list(frame.columns) == [plain_text(COLUMN), "n"]
    assert frame.iloc[0, 0] == SHOWN and pd.isna(frame.iloc[1, 0]) and list(frame["n"]) == [1, 2]
    assert list(frame.index) == [SHOWN, "b"]
    assert list(plain_frame(table, names=False).columns) == [COLUMN, "n"]  # for column_config
    assert table.iloc[0, 0] == PAYLOAD  # a copy: the page's own frame is left as it was


def _assert_neutral(texts: Iterable[object], where: str) -> None:
    """No override and no live shortcode in any of the texts, and the payload shown at least
    once, neutralised."""
    joined = "\n".join(str(text) for text in texts)
    assert "\u202e" not in joined, f"{where}: a raw U+202E"
    assert ":material/home:" not in joined, f"{where}: a live icon shortcode"
    assert SHOWN in joined, f"{where}: the payload is not shown neutralised"


def _cells(app: AppTest, having: str) -> list[object]:
    """Every cell and column name of the dataframes with a column `having`."""
    found: list[object] = []
    for frame in app.dataframe:
        value = frame.value
        if having in value.columns:
            found += [*value.columns, *value.to_numpy().ravel()]
    assert found, f"no dataframe with a column {having!r}"
    return found


def _labels(app: AppTest) -> list[str]:
    """The column labels the dataframes' column_config give (what their headers show)."""
    labels: list[str] = []
    for frame in app.dataframe:
        config = json.loads(frame.proto.columns or "{}")
        labels += [str(column.get("label", "")) for column in config.values()]
    return labels


def _options(app: AppTest) -> list[str]:
    return [
        str(option) for widget in [*app.selectbox, *app.multiselect] for option in widget.options
    ]


@pytest.fixture
def hostile(app: AppTest) -> tuple[AppTest, str]:
    service = core.service.get_service()
    lines = [f"id,question,answer,{COLUMN}"]
    lines += [
        f"i{n},question {n},right {PAYLOAD},{PAYLOAD if n % 2 else 'plain'}" for n in range(ITEMS)
    ]
    dataset = service.import_dataset(
        "hostile.csv", ("\n".join(lines) + "\n").encode(), name=DATASET
    )
    spec = ScorerSpec(scorer_id="checks.includes", options={"value": "right", "id": "right"})
    started = service.start_experiment(
        ExperimentConfig(name=EXPERIMENT, dataset_id=dataset.id, scorers=[spec])
    )
    assert service.wait(started, timeout=60).status == "completed"
    return app, started


def test_the_results_grid_and_its_pickers(hostile: tuple[AppTest, str]) -> None:
    app, started = hostile
    app.query_params["experiment"] = started
    app.switch_page("pages/experiment.py")
    app.run()
    assert not app.exception, app.exception
    table = grid(app)
    cells = [*table.value.to_numpy().ravel()]
    _assert_neutral([c for c in cells if "right" in str(c)], "grid output cells")
    _assert_neutral([c for c in cells if "fdp" in str(c) and "right" not in str(c)], "metadata")
    _assert_neutral([c["label"] for c in table.data["columns"]], "grid column labels")
    tooltips = "\n".join(c["help"] for c in table.data["columns"])
    assert "\u202e" not in tooltips and ":material/home:" not in tooltips
    _assert_neutral(_options(app), "the experiment picker, metadata filter, hidden columns")


def test_the_slices_pivot(hostile: tuple[AppTest, str]) -> None:
    app, started = hostile
    app.query_params["experiment"] = started
    app.query_params["tab"] = "slices"
    app.query_params["slice"] = COLUMN
    app.switch_page("pages/experiment.py")
    app.run()
    assert not app.exception, app.exception
    [pivot] = [frame.value for frame in app.dataframe if "value" in frame.value.columns]
    values = list(pivot["value"])
    assert "plain" in values
    _assert_neutral(values, "pivot values")
    _assert_neutral(_labels(app), "pivot column labels")
    _assert_neutral(_options(app), "the slice column picker")


def test_the_home_table_and_its_picker(hostile: tuple[AppTest, str]) -> None:
    app, _ = hostile
    app.switch_page("pages/home.py")
    app.run()
    assert not app.exception, app.exception
    names = [c for c in _cells(app, "name") if "run " in str(c)]
    _assert_neutral(names, "home table names")
    _assert_neutral(_options(app), "open an experiment")


def test_the_stored_datasets_and_a_look_inside(hostile: tuple[AppTest, str]) -> None:
    app, _ = hostile
    app.switch_page("pages/datasets.py")
    app.run()
    assert not app.exception, app.exception
    _assert_neutral([c for c in _cells(app, "Name") if "data " in str(c)], "dataset names")
    _assert_neutral(_cells(app, "output"), "the dataset's items")
    _assert_neutral(_options(app), "look inside")
