"""Driving the experiment page's results grid from AppTest (tests/pages is on sys.path)."""

from __future__ import annotations

from typing import Any

from streamlit.testing.v1 import AppTest

GRID = "experiment.grid."
"""Prefix of the grid's widget key (one key per page of items: pages/ui/grid.py)."""


def grid(app: AppTest) -> Any:
    """The grid's dataframe element."""
    return next(d for d in app.dataframe if d.key and d.key.startswith(GRID))


def click_row(app: AppTest, row: int) -> None:
    """Select the grid's row `row` (from 0) as a click does, and rerun. AppTest cannot click a
    table: a read-only dataframe's selection is set through its session state."""
    app.session_state[grid(app).key] = {"selection": {"rows": [row], "columns": [], "cells": []}}
    app.run()
    assert not app.exception, app.exception


def click_cell(app: AppTest, row: int, column: str) -> None:
    """Select one cell of the grid (a click on it, not on the row's checkbox), and rerun."""
    state = {"selection": {"rows": [], "columns": [], "cells": [[row, column]]}}
    app.session_state[grid(app).key] = state
    app.run()
    assert not app.exception, app.exception


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
