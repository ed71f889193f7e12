"""The dashboard's table of our own: an `st.components.v2` component (table.js, table.css)
drawing rows that Python sends ready to show, used where `st.dataframe` cost the reader time:
the experiment page's results grid (pages/ui/grid.py; docs/dashboard.md says what it saves).

What `draw_table` sends (`data`): `columns`, each `{key, label, help, kind}` (`kind`: `score`
and `number` right-aligned, `text` cut with an ellipsis and its text in a tooltip, `mark`
short); `rows`, each `{item, cells}` with a cell `{text, colour?, failed?}` per column;
`height` in pixels; `page`, a name of the rows shown (the table scrolls to its top on a new
one); `selected`, the item whose row is outlined. A click on a row, or Enter on a row reached
with Tab and the arrow keys, is the event `open`, carrying the row's `item`. The script writes
text through `textContent` only: a cell holding markup shows it as typed.

Tried for Compare's side-by-side grid too, and not kept: its 200 rows of 17 columns cost the
browser more than the canvas of `st.dataframe` (docs/dashboard.md)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import streamlit as st


@functools.cache
def _component() -> Any:
    """The table component, registered once."""
    here = Path(__file__).with_name("table")
    return st.components.v2.component(
        "scorelab_table",
        js=here.with_suffix(".js").read_text(encoding="utf-8"),
        css=here.with_suffix(".css").read_text(encoding="utf-8"),
    )


def _ignored() -> None:
    """The click's callback when the caller has none (one must be given for the event to be
    reported at all): the caller reads the click from the result."""


def draw_table(
    key: str, data: Mapping[str, Any], *, on_open: Callable[[], None] | None = None
) -> Any:
    """Draw the table `data` (module docstring) under the widget key `key`; returns the
    component's result, whose `open` is this run's click (None without one). `on_open` runs
    as the click's callback, before the run, reading the click from `clicked(key)`."""
    return _component()(
        key=key,
        data=dict(data),
        height=int(data["height"]) + 2,  # the border
        on_open_change=on_open or _ignored,
    )


def clicked(key: str) -> str | None:
    """From a callback of the table `key`: the item of the row opened, None without a click."""
    value = getattr(st.session_state.get(key), "open", None)
    return value if isinstance(value, str) and value else None
