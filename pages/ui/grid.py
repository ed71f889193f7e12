"""The results grid of the experiment page: a page of items read from the database, scores
first; its search, sort, page and filters are pages/ui/grid_filters.py's.

Columns, left to right: one per scorer (coloured from red at 0 to green at 1; a failed run
reads "failed" on red), the item id, the dataset's metadata columns, input / output / ground
truth cut to `TEXT_PREVIEW` characters (the whole text is in the drill-down), the failed
scorers and the judge tokens; the columns hidden in the Filters box (URL `hide`, repeated) are
left out. Clicking a row (or Enter on a row focused by Tab and the arrow keys) opens its item
(URL `item`) in the page's drill-down.

The table is our own (pages/ui/table.py), not st.dataframe: a click reaches the server at
once, where st.dataframe's selection waited 150 ms, and a page of 50 rows is plain HTML that the
script builds again on a new page. Python sends each cell's text and colour ready to show.

`render_grid(..., extra_columns=...)` takes more columns per item id (e.g. a review mark),
placed after the scores; `render_grid(..., on_open=...)` calls `on_open` from the click's
callback, before any rerun (the experiment page reruns only its drill-down's fragment from it,
so a click does not redraw the grid)."""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

import pandas as pd
import streamlit as st

from core.records import ExperimentInfo, ResultPage
from core.service.views import page_frame, scored_label
from pages.ui.grid_filters import KEY, PARAMS
from pages.ui.table import clicked, draw_table
from pages.ui.text import cell_text, plain_text

TEXT_PREVIEW = 160
"""Characters of input, output and ground truth shown in a cell."""
TEXTS = ("input", "output", "ground_truth")
META = "meta: "
"""Prefix of a metadata column's key in the grid's frame (a metadata column may share its
name with a scorer or a fixed column); its header is the bare name."""
FAILED = "failed"
ITEM_PARAM = "item"
"""The URL parameter of the item open."""
_LOW, _HIGH = (248, 105, 107), (99, 190, 123)  # red at 0, green at 1 (light enough to read)


def grid_frame(
    page: ResultPage,
    info: ExperimentInfo,
    metadata_columns: Sequence[str],
    extra_columns: Mapping[str, Mapping[str, Any]] | None = None,
) -> pd.DataFrame:
    """The page as the grid shows it: scores, the extra columns, `item_id`, metadata
    (`META` + the name through `plain_text`), texts cut to `TEXT_PREVIEW`, `failed`,
    `judge_tokens`. `extra_columns` maps a column name to a value per item id (items without
    one: empty); a name the grid uses already is a ValueError."""
    taken = {*info.scorer_ids, "item_id", *TEXTS, FAILED, "judge_tokens"}
    clashes = sorted(taken.intersection(extra_columns or {}))
    if clashes:
        raise ValueError(f"grid_frame: extra columns {clashes} clash with the grid's own columns")
    frame = page_frame(page, info.scorer_ids)
    for text in TEXTS:
        frame[text] = frame[text].str.slice(0, TEXT_PREVIEW).map(cell_text)
    ids = frame["item_id"].tolist()
    extras = {name: [values.get(i) for i in ids] for name, values in (extra_columns or {}).items()}
    metadata = {
        META + plain_text(name): [_meta(row.metadata.get(name)) for row in page.rows]
        for name in metadata_columns
    }
    ordered = {
        **{s: frame[s] for s in info.scorer_ids},
        **extras,
        "item_id": frame["item_id"].map(cell_text),
        **metadata,
        **{text: frame[text] for text in TEXTS},
        FAILED: frame[FAILED],
        "judge_tokens": frame["judge_tokens"],
    }
    return pd.DataFrame(ordered, index=frame.index)


def _meta(value: Any) -> str:
    if value is None or value == "":
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return plain_text(value)
    return plain_text(json.dumps(value, ensure_ascii=False))


def _colour(value: float) -> str:
    share = min(max(value, 0.0), 1.0)
    red, green, blue = (round(a + (b - a) * share) for a, b in zip(_LOW, _HIGH, strict=True))
    return f"#{red:02x}{green:02x}{blue:02x}"


def _kind(column: str, scorer_ids: Sequence[str], extra: Sequence[str]) -> str:
    """How the table draws a column: `score` (coloured, right-aligned), `number`
    (right-aligned), `mark` (short: an extra column) or `text` (cut with an ellipsis, the cell's
    text in its tooltip)."""
    if column in scorer_ids:
        return "score"
    if column == "judge_tokens":
        return "number"
    return "mark" if column in extra else "text"


def _cell(value: Any, kind: str, failed: bool) -> dict[str, Any]:
    """One cell as the table draws it: its text, and a score's colour (a failed run: "failed"
    on red; no score: an em dash)."""
    if kind == "score":
        if failed:
            return {"text": FAILED, "failed": True}
        if value is None or pd.isna(value):
            return {"text": "—"}
        return {"text": f"{float(value):.3f}", "colour": _colour(float(value))}
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return {"text": ""}
    if kind == "number":
        return {"text": str(int(value))}
    return {"text": str(value)}


def table_data(
    frame: pd.DataFrame,
    ids: Sequence[str],
    failed: Sequence[Collection[str]],
    scorer_ids: Sequence[str],
    shown: Sequence[str],
    labels: Mapping[str, str],
    helps: Mapping[str, str],
    extra: Sequence[str] = (),
) -> dict[str, Any]:
    """What the grid's table (pages/ui/table.py) draws: the `shown` columns (label, tooltip, kind)
    and, per row, its item id (`ids`, in the frame's order: the id as stored, where the frame's
    cell is cleaned for display) and each shown cell's text and colour (`failed`: per row, the
    scorers whose run failed)."""
    kinds = {c: _kind(c, scorer_ids, extra) for c in shown}
    columns = [
        {
            "key": c,
            "label": plain_text(labels.get(c, c)),
            "help": helps.get(c, ""),
            "kind": kinds[c],
        }
        for c in shown
    ]
    values = {c: frame[c].tolist() for c in shown}
    rows = [
        {
            "item": item_id,
            "cells": [_cell(values[c][n], kinds[c], c in failed[n]) for c in shown],
        }
        for n, item_id in enumerate(ids)
    ]
    return {"columns": columns, "rows": rows}


def grid_columns(
    info: ExperimentInfo, metadata_columns: Sequence[str], extra_names: Sequence[str] = ()
) -> dict[str, str]:
    """The grid's columns in order (the keys of `grid_frame`'s frame), each with the label
    "Hide columns" offers: a scorer's says what it compared."""
    return {
        **{s: scored_label(info, s) for s in info.scorer_ids},
        **{name: name for name in extra_names},
        "item_id": "id",
        **{META + plain_text(name): name for name in metadata_columns},
        "input": "input",
        "output": "output",
        "ground_truth": "ground truth",
        FAILED: FAILED,
        "judge_tokens": "judge tokens",
    }


def render_grid(
    page: ResultPage,
    info: ExperimentInfo,
    metadata_columns: Sequence[str],
    extra_columns: Mapping[str, Mapping[str, Any]] | None = None,
    height: int = 420,
    on_open: Callable[[], None] | None = None,
) -> str | None:
    """The grid of the page's items, `height` pixels tall; returns the item id of the row
    clicked (written to the URL's `item`), else the URL's `item` (None without one). With
    `on_open`, a click in the browser writes the URL's `item` in the click's callback and
    calls `on_open` there (which may rerun one fragment: `st.rerun(key)`); this run is then
    not the click's."""
    frame = grid_frame(page, info, metadata_columns, extra_columns)
    # The header is the scorer's id (what it compared is in its tooltip): a long header
    # widened the score columns until the id and metadata went off screen.
    labels = {
        **grid_columns(info, metadata_columns, list(extra_columns or {})),
        **{s: s for s in info.scorer_ids},
    }
    cut = f"First {TEXT_PREVIEW} characters; click the row for the whole text."
    helps = {
        **{
            s: f"{plain_text(scored_label(info, s))}: red 0 → green 1; failed: the run failed"
            for s in info.scorer_ids
        },
        **{text: cut for text in TEXTS},
    }
    hidden = set(st.query_params.get_all(PARAMS["hide"]))  # the Filters box's choice
    shown = [c for c in frame.columns if c not in hidden]
    ids = [row.item_id for row in page.rows]
    failed = [set(row.failed) for row in page.rows]
    data = table_data(
        frame, ids, failed, info.scorer_ids, shown, labels, helps, list(extra_columns or {})
    )
    data.update(
        height=height, selected=st.query_params.get(ITEM_PARAM, ""), page=grid_key(info.id, page)
    )
    result = draw_table(
        GRID_KEY,
        data,
        on_open=functools.partial(_opened, on_open) if on_open else None,
    )
    item = getattr(result, "open", None)
    if on_open is None and isinstance(item, str) and item in ids:
        st.query_params[ITEM_PARAM] = item
        return item
    return st.query_params.get(ITEM_PARAM) or None


GRID_KEY = f"{KEY}.grid"
"""Widget key of the grid's table (one for every page: a click is an event, not a selection
kept, so a new page needs no new key)."""


def _opened(on_open: Callable[[], None]) -> None:
    """The table's click callback (a row opened in the browser): its item written to the URL's
    `item`, then `on_open`."""
    item = clicked(GRID_KEY)
    if item is not None:
        st.query_params[ITEM_PARAM] = item
        on_open()


def grid_key(experiment_id: str, page: ResultPage) -> str:
    """A name of the page of items shown (the table scrolls back to its top on a new one)."""
    ids = "\n".join(row.item_id for row in page.rows)
    digest = hashlib.blake2b(f"{experiment_id}\n{ids}".encode(), digest_size=6).hexdigest()
    return f"{KEY}.grid.{digest}"
