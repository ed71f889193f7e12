"""The results grid's filters (pages/ui/grid.py draws the grid): search, sort and page above
it, then a "Filters" box (scorers, score range, failed only, a metadata value, hidden columns)
whose widgets are drawn only while it is open; every filter is kept in the URL, so a link
reproduces the view, and applies whether the box is open or shut. `render_filters` returns the
query of the grid's page."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import NamedTuple

import streamlit as st

from core.records import ExperimentInfo, ResultQuery
from core.service.views import NO_VALUE_LABEL
from pages.ui.services import service
from pages.ui.text import md_short, md_text, plain_text

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
PAGE_SIZE = 50
"""Items per page of the grid (read from the database a page at a time)."""
POSITION = "position"
PAGE_KEY = f"{KEY}.page"
"""Session key of the page number widget."""
TURN_KEY = f"{KEY}.turn"
"""Session key of a page to turn to (`turn_to`), applied as the filters are next drawn."""


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
            chosen = _filter_widgets(linked, scorer_ids, metadata_columns, info, columns or {})
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
    linked: Filters,
    scorer_ids: list[str],
    metadata_columns: Sequence[str],
    info: ExperimentInfo | None,
    columns: Mapping[str, str],
) -> Filters:
    """The box's widgets, each starting from the URL's filters (`linked`)."""
    left, middle, right = st.columns([2, 2, 1])
    chosen = left.multiselect(
        "Scorers", scorer_ids, default=linked.scorers, format_func=plain_text, key=f"{KEY}.scorers"
    )
    low, high = middle.slider(
        "Score range", 0.0, 1.0, (linked.low, linked.high), step=0.01, key=f"{KEY}.range"
    )
    failed_only = right.checkbox("Failed only", value=linked.failed_only, key=f"{KEY}.failed")
    metadata = _metadata_filter(metadata_columns, info) if info is not None else {}
    hidden = _hidden(list(columns), columns, linked.hidden) if columns else []
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


def _hidden(options: Sequence[str], labels: Mapping[str, str], linked: list[str]) -> list[str]:
    """The columns hidden, chosen in a multiselect starting from the URL's (`linked`)."""
    return st.multiselect(
        "Hide columns",
        list(options),
        default=linked,
        format_func=lambda c: plain_text(labels.get(c, c)),
        key=f"{KEY}.hide",
    )
