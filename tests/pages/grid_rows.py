"""Driving the experiment page's results grid from AppTest (tests/pages is on sys.path)."""

from __future__ import annotations

import json
from typing import Any

import pandas as pd
from streamlit.components.v2.bidi_component.main import _make_trigger_id
from streamlit.testing.v1 import AppTest

GRID = "experiment.grid"
"""The grid table's widget key (pages/ui/grid.py)."""


class Grid:
    """The grid's table as AppTest holds it (an element it does not know): `data`, what the
    component was sent; `value`, its cells' texts as a frame keyed by column key; `columns`,
    the column keys shown in order; `cells`, per column, each row's cell (text, colour,
    failed)."""

    def __init__(self, element: Any) -> None:
        self.element = element
        self.data = json.loads(element.proto.json)
        self.columns = [c["key"] for c in self.data["columns"]]
        self.cells = {
            key: [row["cells"][n] for row in self.data["rows"]]
            for n, key in enumerate(self.columns)
        }
        self.value = pd.DataFrame(
            {key: [cell["text"] for cell in cells] for key, cells in self.cells.items()},
            columns=self.columns,
        )
        self.items = [row["item"] for row in self.data["rows"]]


def _drawn(app: AppTest) -> list[Any]:
    return [e for e in app.get("bidi_component") if e.proto.id.endswith(f"-{GRID}")]


def grid(app: AppTest) -> Grid:
    """The grid's table (after a click, rerun the page to see it again)."""
    found = _drawn(app)
    assert len(found) == 1, f"{len(found)} result grids on the page"
    # Kept on the AppTest: a click reruns only the drill-down's fragment, after which
    # AppTest's tree holds the fragment alone.
    app.last_grid = Grid(found[0])  # type: ignore[attr-defined]
    return app.last_grid  # type: ignore[attr-defined,no-any-return]


def _last(app: AppTest) -> Grid:
    return grid(app) if _drawn(app) else app.last_grid  # type: ignore[attr-defined,no-any-return]


def click_item(app: AppTest, item_id: str) -> None:
    """Open `item_id` as a click on its row does, and rerun. AppTest cannot click a component:
    the next run gets the event the table's script sends (a trigger value), so the page's own
    click callback runs (and reruns the drill-down alone, as in the browser)."""
    element_id = _last(app).element.proto.id
    tree = app._tree
    plain = tree.get_widget_states

    def with_click() -> Any:
        states = plain()
        state = states.widgets.add()
        state.id = _make_trigger_id(element_id, "events")
        state.json_trigger_value = json.dumps([{"event": "open", "value": item_id}])
        return states

    tree.get_widget_states = with_click  # type: ignore[method-assign]
    try:
        app.run()
    finally:
        tree.get_widget_states = plain  # type: ignore[method-assign]
    assert not app.exception, app.exception


def click_row(app: AppTest, row: int) -> None:
    """Open the item of the grid's row `row` (from 0), as a click on it does, and rerun."""
    click_item(app, _last(app).items[row])


def url(app: AppTest, name: str) -> Any:
    """A URL parameter's value (AppTest gives a list or a string)."""
    value = app.query_params.get(name)
    return value[0] if isinstance(value, list) and len(value) == 1 else value


def open_scorer_tab(app: AppTest, experiment_id: str, index: int) -> None:
    """Open the drill-down's tab of its `index`th scorer (only the open tab is drawn), as a
    click on it does: the tabs' state set, then a rerun."""
    labels = [t.label for t in app.tabs]
    app.session_state[f"experiment.scorer_tab.{experiment_id}"] = labels[index]
    app.run()
    assert not app.exception, app.exception


SCORE_REVIEW = "experiment.score_review"
"""The drill-down's review expander of the open scorer (pages/ui/drilldown.py)."""


def open_score_review(app: AppTest) -> None:
    """Open the drill-down's review of the open scorer's score, as a click on its expander
    does (its form is drawn only when open), and rerun."""
    app.session_state[SCORE_REVIEW] = True
    app.run()
    assert not app.exception, app.exception


FILTERS = "experiment.filters_open"
"""The grid's "Filters" box (pages/ui/grid_filters.py): its widgets are drawn only while it is
open."""


def open_filters(app: AppTest) -> None:
    """Open the "Filters" box, as a click on it does, and rerun."""
    app.session_state[FILTERS] = True
    app.run()
    assert not app.exception, app.exception
