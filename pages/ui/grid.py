"""The results grid of the experiment page: filters, sort and page (kept in the URL), then a
page of items read from the database, scores first.

Columns, left to right: one per scorer (coloured from red at 0 to green at 1; a failed run
reads "failed" on red), the item id, the dataset's metadata columns, input / output / ground
truth cut to `TEXT_PREVIEW` characters (the whole text is in the drill-down), the failed
scorers and the judge tokens. A multiselect hides columns (URL `hide`, repeated); the sort
(URL `sort`: `position`, or `asc:<scorer>` / `desc:<scorer>`) runs in the database over every
matching item, not over the page. Clicking a row (or Enter on a row focused by Tab and the
arrow keys) opens its item (URL `item`) in the page's drill-down.

The table is our own (pages/ui/table.py), not st.dataframe: a click reaches the server at
once, where st.dataframe's selection waited 150 ms, and a page of 50 rows is plain HTML that the
browser draws in a few milliseconds. Python sends each cell's text and colour ready to show.

`render_grid(..., extra_columns=...)` takes more columns per item id (e.g. a review mark),
placed after the scores; `render_grid(..., on_open=...)` calls `on_open` from the click's
callback, before any rerun (the experiment page reruns only its drill-down's fragment from it,
so a click does not redraw the grid)."""

from __future__ import annotations

import functools
import hashlib
import json
import math
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any, NamedTuple

import pandas as pd
import streamlit as st

from core.records import ExperimentInfo, ResultPage, ResultQuery
from core.service.views import NO_VALUE_LABEL, page_frame, scored_label
from pages.ui.services import service
from pages.ui.table import clicked, draw_table
from pages.ui.text import cell_text, md_short, md_text, plain_text

KEY = "experiment"
PARAMS = {
    "scorers": "scorer",
    "low": "min",
    "high": "max",
    "failed": "failed",
    "search": "q",
    "sort": "sort",
    "page": "page",
    "hide": "hide",
    "meta_column": "mcol",
    "meta_values": "mval",
}
TEXT_PREVIEW = 160
"""Characters of input, output and ground truth shown in a cell."""
PAGE_SIZE = 50
"""Items per page of the grid (read from the database a page at a time)."""
POSITION = "position"
TEXTS = ("input", "output", "ground_truth")
META = "meta: "
"""Prefix of a metadata column's key in the grid's frame (a metadata column may share its
name with a scorer or a fixed column); its header is the bare name."""
FAILED = "failed"
PAGE_KEY = f"{KEY}.page"
"""Session key of the page number widget."""
TURN_KEY = f"{KEY}.turn"
"""Session key of a page to turn to (`turn_to`), applied as the filters are next drawn."""
ITEM_PARAM = "item"
"""The URL parameter of the item open."""
_LOW, _HIGH = (248, 105, 107), (99, 190, 123)  # red at 0, green at 1 (light enough to read)


def _param(name: str, default: str = "") -> str:
    return st.query_params.get(PARAMS[name], default)


MAX_PAGE = 1_000_000
"""The highest page a link may ask for (50 items a page: far more than any dataset holds);
SQLite refuses an offset past 2**63, so a larger one is clamped here."""


def _int(text: str) -> int:
    """A page number from the URL: 1 for anything that is not a whole number, clamped to
    [1, MAX_PAGE]."""
    try:
        return min(max(1, int(text)), MAX_PAGE)
    except ValueError:  # not a number, or longer than Python reads
        return 1


def turn_to(page: int) -> None:
    """Show page `page` of the grid when its filters are next drawn (from a callback: the
    drill-down's previous/next past the page's ends)."""
    st.session_state[TURN_KEY] = page


def _score_bound(text: str, default: float) -> float:
    """A score bound from the URL (`?min=`, `?max=`): `default` for what is not a finite
    number, clamped to [0, 1] (the slider's range)."""
    try:
        value = float(text)
    except ValueError:
        return default
    return min(max(value, 0.0), 1.0) if math.isfinite(value) else default


def _sort_label(value: str) -> str:
    if value == POSITION:
        return "dataset order"
    direction, _, scorer_id = value.partition(":")
    return f"{plain_text(scorer_id)}: {'lowest' if direction == 'asc' else 'highest'} score first"


class Filters(NamedTuple):
    """The filters of the grid's "Filters" box: what its widgets hold, or what the URL holds
    while it is shut."""

    scorers: list[str]
    low: float
    high: float
    failed_only: bool
    metadata: dict[str, list[str]]
    hidden: list[str]


FILTERS_KEY = f"{KEY}.filters_open"
"""Session key of the "Filters" expander (open or shut; its widgets are drawn only when open)."""


def render_filters(
    scorer_ids: list[str],
    metadata_columns: Sequence[str],
    info: ExperimentInfo | None = None,
    columns: Mapping[str, str] | None = None,
) -> ResultQuery:
    """Search, sort and page, then the "Filters" box (scorers, score range, failed only, a
    metadata value and, with `columns` (key -> label), the columns hidden), all initialised
    from the URL and written back to it; returns the query of the grid's page (the page goes
    back to 1 when a filter changes). The box's widgets are drawn only while it is open: shut,
    a caption under it says what it filters, and the URL holds the filters."""
    search_box, sort_box, page_box = st.columns([3, 2, 1])
    search = search_box.text_input(
        "Search item id, input, output and ground truth",
        value=_param("search"),
        key=f"{KEY}.search",
    )
    sorts = [POSITION, *(f"{d}:{s}" for s in scorer_ids for d in ("asc", "desc"))]
    wanted_sort = _param("sort", POSITION)
    sort = sort_box.selectbox(
        "Sort",
        sorts,
        index=sorts.index(wanted_sort) if wanted_sort in sorts else 0,
        format_func=_sort_label,
        key=f"{KEY}.sort",
        help="By a scorer's score, over every matching item (not only this page): the items "
        "it gave a score, in score order.",
    )
    linked = _linked_filters(scorer_ids, metadata_columns, info, columns or {})
    # Drawn only when open (a click on it reruns the results view): its five widgets were a
    # fifth of the time of every page turn and every visit to the Results view. Its label is
    # part of its identity, so it stays "Filters": a label saying what is filtered would shut
    # the box on each change made in it.
    box = st.expander("Filters", key=FILTERS_KEY, on_change="rerun")
    if box.open:
        with box:
            chosen = _filter_widgets(scorer_ids, metadata_columns, info, columns or {})
    else:
        chosen = linked
        summary = _filters_said(linked)
        if summary:
            st.caption(f"Filtered: {summary}")
    filters = (
        tuple(chosen.scorers),
        chosen.low,
        chosen.high,
        chosen.failed_only,
        search,
        sort,
        json.dumps(chosen.metadata),
    )
    if st.session_state.get(f"{KEY}.filters", filters) != filters:
        st.session_state[PAGE_KEY] = 1  # another selection: its first page
    st.session_state[f"{KEY}.filters"] = filters
    turned = st.session_state.pop(TURN_KEY, None)
    if turned is not None:
        # Set here, before the widget, not in the callback that asked: a value set in a
        # callback followed by a fragment's rerun did not reach the browser's number box.
        st.session_state[PAGE_KEY] = _int(str(turned))
    if PAGE_KEY not in st.session_state:
        st.session_state[PAGE_KEY] = _int(_param("page", "1"))
    page = page_box.number_input("Page", min_value=1, max_value=MAX_PAGE, step=1, key=PAGE_KEY)
    st.query_params.update(
        {
            PARAMS["scorers"]: ",".join(chosen.scorers),
            PARAMS["low"]: f"{chosen.low:g}",
            PARAMS["high"]: f"{chosen.high:g}",
            PARAMS["failed"]: "1" if chosen.failed_only else "0",
            PARAMS["search"]: search,
            PARAMS["sort"]: sort,
            PARAMS["page"]: str(page),
        }
    )
    if columns:
        st.query_params[PARAMS["hide"]] = chosen.hidden
    direction, _, sort_scorer = sort.partition(":")
    return ResultQuery(
        scorer_ids=chosen.scorers,
        score_range=None if (chosen.low, chosen.high) == (0.0, 1.0) else (chosen.low, chosen.high),
        failed_only=chosen.failed_only,
        search=search,
        sort="position" if sort == POSITION else f"score_{direction}",
        sort_scorer=sort_scorer or None,
        page=int(page),
        page_size=PAGE_SIZE,
        metadata=chosen.metadata,
    )


def _url_range() -> tuple[float, float]:
    low = _score_bound(_param("low", "0"), 0.0)
    high = _score_bound(_param("high", "1"), 1.0)
    return (low, high) if low <= high else (high, low)


def _linked_filters(
    scorer_ids: Sequence[str],
    metadata_columns: Sequence[str],
    info: ExperimentInfo | None,
    columns: Mapping[str, str],
) -> Filters:
    """The filters the URL gives, each checked as its widget would (a scorer, value or column
    the experiment does not have is dropped)."""
    low, high = _url_range()
    metadata: dict[str, list[str]] = {}
    column = _param("meta_column")
    if info is not None and column in metadata_columns:
        try:
            values = set(_values(info.id, column, _version(info)))
        except ValueError:  # a column name the database cannot read (said when it is open)
            values = set()
        kept = [v for v in st.query_params.get_all(PARAMS["meta_values"]) if v in values]
        metadata = {column: kept} if kept else {}
    return Filters(
        scorers=[s for s in _param("scorers").split(",") if s in scorer_ids],
        low=low,
        high=high,
        failed_only=_param("failed") == "1",
        metadata=metadata,
        hidden=[c for c in st.query_params.get_all(PARAMS["hide"]) if c in columns],
    )


def _filters_said(chosen: Filters) -> str:
    """What the shut "Filters" box filters, in a line of Markdown ("" for nothing)."""
    said: list[str] = []
    if (chosen.low, chosen.high) != (0.0, 1.0):
        on = ", ".join(md_short(s) for s in chosen.scorers) or "any scorer"
        said.append(f"score {chosen.low:g}–{chosen.high:g} on {on}")
    elif chosen.scorers:
        said.append(f"scored by {', '.join(md_short(s) for s in chosen.scorers)}")
    if chosen.failed_only:
        said.append("failed only")
    for column, values in chosen.metadata.items():
        shown = ", ".join(NO_VALUE_LABEL if v == "" else md_short(v) for v in values[:3])
        more = f" and {len(values) - 3} more" if len(values) > 3 else ""
        said.append(f"{md_short(column)}: {shown}{more}")
    if chosen.hidden:
        said.append(f"{len(chosen.hidden)} column{'s' if len(chosen.hidden) > 1 else ''} hidden")
    return " · ".join(said)


def _filter_widgets(
    scorer_ids: list[str],
    metadata_columns: Sequence[str],
    info: ExperimentInfo | None,
    columns: Mapping[str, str],
) -> Filters:
    """The box's widgets, each starting from the URL."""
    chosen_default = [s for s in _param("scorers").split(",") if s in scorer_ids]
    left, middle, right = st.columns([2, 2, 1])
    chosen = left.multiselect(
        "Scorers", scorer_ids, default=chosen_default, format_func=plain_text, key=f"{KEY}.scorers"
    )
    low, high = middle.slider("Score range", 0.0, 1.0, _url_range(), step=0.01, key=f"{KEY}.range")
    failed_only = right.checkbox("Failed only", value=_param("failed") == "1", key=f"{KEY}.failed")
    metadata = _metadata_filter(metadata_columns, info) if info is not None else {}
    hidden = _hidden(list(columns), columns) if columns else []
    return Filters(chosen, low, high, failed_only, metadata, hidden)


def _version(info: ExperimentInfo) -> tuple[object, ...]:
    """What the metadata values depend on: a running experiment gains values."""
    return (info.status, info.counts.done, info.finished_at)


@st.cache_resource(max_entries=16, show_spinner=False)
def _values(experiment_id: str, column: str, version: tuple[object, ...]) -> list[str]:
    return [s.value for s in service().slices(experiment_id, column)]


def _metadata_filter(columns: Sequence[str], info: ExperimentInfo) -> dict[str, list[str]]:
    """A metadata column and the values kept (URL `mcol`, `mval` repeated); {} for none."""
    if not columns:
        return {}
    options: list[str | None] = [None, *columns]
    wanted = _param("meta_column") or None
    left, right = st.columns([1, 2])
    column = left.selectbox(
        "Metadata filter",
        options,
        index=options.index(wanted) if wanted in options else 0,
        format_func=lambda c: "none" if c is None else plain_text(c),
        key=f"{KEY}.mcol",
        help="Keep the items whose value in this metadata column is one of those chosen.",
    )
    if column is None:
        st.query_params.pop(PARAMS["meta_column"], None)
        st.query_params.pop(PARAMS["meta_values"], None)
        return {}
    try:
        values = _values(info.id, column, _version(info))
    except ValueError as error:  # a column name the database cannot read
        right.warning(md_text(error))
        return {}
    from_url = [v for v in st.query_params.get_all(PARAMS["meta_values"]) if v in values]
    chosen = right.multiselect(
        f"Values of {md_short(column)}",
        values,
        default=from_url,
        format_func=lambda v: NO_VALUE_LABEL if v == "" else plain_text(v),
        key=f"{KEY}.mval.{column}",
        help="None chosen: every value.",
    )
    st.query_params[PARAMS["meta_column"]] = column
    st.query_params[PARAMS["meta_values"]] = chosen
    return {column: chosen} if chosen else {}


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


def _hidden(options: Sequence[str], labels: Mapping[str, str]) -> list[str]:
    """The columns hidden (URL `hide`, repeated), chosen in a multiselect."""
    from_url = [c for c in st.query_params.get_all(PARAMS["hide"]) if c in options]
    hidden = st.multiselect(
        "Hide columns",
        list(options),
        default=from_url,
        format_func=lambda c: plain_text(labels.get(c, c)),
        key=f"{KEY}.hide",
    )
    return hidden


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
    labels = {
        **{s: plain_text(s) for s in info.scorer_ids},
        **{META + plain_text(name): name for name in metadata_columns},
        "item_id": "id",
        "ground_truth": "ground truth",
        "judge_tokens": "judge tokens",
    }
    # The header is the scorer's id (what it compared is in its tooltip): a long header
    # widened the score columns until the id and metadata went off screen.
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
