"""Experiment detail, laid out by question: the summary on top (cards, each scorer's mean, the
status, a Resume button for an experiment stopped part-way, the downloads), then one view at a
time, picked in a segmented control kept in the URL (`tab`): Results (the grid with its
filters, kept in the URL by pages/ui/grid.py, and the drill-down of the row clicked beside it),
Distributions (score histograms in one SVG, pages/ui/score_histograms.py), Slices
(pages/ui/slices.py), Agreement (each scorer against a label column or the reviews), Themes
(pages/ui/themes.py) and Reviews (every review of the experiment). Only the view picked is drawn.

The results view is an `st.fragment` (key `RESULTS_FRAGMENT`): a filter or a page turn reruns
only it, never the summary or the picker. The drill-down beside the grid is a fragment nested
in it (pages/ui/drilldown.py): a row click and the previous/next item buttons (keys J and K)
rerun only the drill-down, not the grid (a 50-row styled table the browser would redraw);
previous/next past the page's ends turn the grid's page (a results run). The URL keeps the view
(`tab`), the item (`item`) and the grid's page (`page`); a link without `tab` opens the view its
other parameters ask for (`slice`: Slices; a `label` column: Agreement; else Results).

A module of functions: app.py's router runs the file as `__main__`, which calls `main()`;
imported (`pages.experiment`), it draws nothing, so each part can be tested alone. Text from the
dataset, the scorers and the judge goes through pages/ui/text.py."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from core.records import (
    ExperimentDetail,
    ExperimentInfo,
)
from core.service import RESUMABLE, ExperimentConfigError, NotFoundError
from core.service.pass_fail import PassFail
from core.service.views import (
    LabelAgreement,
    agreement_frame,
    experiment_cost,
    suggested_label_column,
)
from pages.ui import fmt, nav, review
from pages.ui.agreement import render_verdict
from pages.ui.data import Aggregates, agreement, experiment_aggregates, sampled_label_columns
from pages.ui.downloads import render_downloads
from pages.ui.drilldown import FRAGMENT as DRILLDOWN_FRAGMENT
from pages.ui.drilldown import GridPage, drilldown_view, opening_item
from pages.ui.grid import grid_columns, render_grid
from pages.ui.grid_filters import render_filters
from pages.ui.judge_key import judge_key_input
from pages.ui.manage import render_experiment_manage
from pages.ui.pass_fail import pass_column, render_pass_fail
from pages.ui.score_histograms import render_histograms
from pages.ui.services import service
from pages.ui.slices import render_slices
from pages.ui.text import md_short, md_text, plain_dataframe, plain_text
from pages.ui.themes import render_themes
from pages.ui.widgets import pick_experiment, running_experiments

KEY = "experiment"
# Comments, not attribute docstrings: this file runs as a Streamlit script, whose "magic"
# would draw a string literal standing alone on the page.
# This module's URL parameters (the grid's are in pages/ui/grid.py, the slice's in
# pages/ui/slices.py).
PARAMS = {"label": "label"}
# The views of the page, by their `tab` value in the URL, and the other parameters it reads.
TAB_PARAM = "tab"
ITEM_PARAM = "item"
SLICE_PARAM = "slice"  # pages/ui/slices.py's
RESULTS = "results"
TABS = {
    RESULTS: "Results",
    "distributions": "Distributions",
    "slices": "Slices",
    "agreement": "Agreement",
    "themes": "Themes",
    "reviews": "Reviews",
}
# Up to this many items the label agreement is computed as the page opens; above, on a
# toggle: it reads every item's scores (4 s at 10,000 items x 5 scorers,
# bench/browser_pages.py), which kept the page from opening within its 2 s.
AUTO_AGREEMENT_ITEMS = 5_000


def render_summary(info: ExperimentInfo, aggregates: Aggregates) -> None:
    """The summary cards, each scorer's mean with what it compared, and the experiment's
    status, dataset and judge (names shown escaped)."""
    duration = (
        (info.finished_at - info.started_at).total_seconds()
        if info.started_at and info.finished_at
        else None
    )
    # Two rows of three: a card a sixth of the page wide cut "4,085 / 4,085" (issue 14).
    cards = [*st.columns(3), *st.columns(3)]
    cards[0].metric("Items", fmt.count(info.total_items))
    cards[1].metric(
        "Scorer runs",
        f"{fmt.count(info.counts.done)} / {fmt.count(info.counts.total)}",
        help=f"{info.counts.done:,} of {info.counts.total:,} runs done",
    )
    cards[2].metric("Failed runs", fmt.count(info.counts.failed))
    cards[3].metric(
        "Judge tokens",
        fmt.count(info.counts.usage.total_tokens or 0),
        help=f"{fmt.tokens(info.counts.usage.total_tokens or 0)} tokens",
    )
    cards[4].metric(
        "Est. judge cost",
        fmt.money(experiment_cost(info)),
        help="An estimate from litellm's price table, not a bill (stored runs).",
    )
    cards[5].metric("Duration", fmt.duration(duration))
    means = st.columns(max(len(info.scorer_ids), 1))
    for column, scorer_id in zip(means, info.scorer_ids, strict=False):
        column.metric(f"mean · {md_short(scorer_id)}", fmt.score(info.scores.get(scorer_id)))
        column.caption(md_text(info.comparisons.get(scorer_id, "")))
    st.caption(
        f"Status **{md_text(info.status)}** · dataset "
        f"{md_short(info.dataset_name or info.dataset_id, 120)} "
        f"(fingerprint {md_text(info.dataset_fingerprint[:12])}) · judge "
        f"{md_short(info.judge_model or 'none', 120)}"
        + (" · judge cache on" if info.cache else "")
        + (f" · spend cap {fmt.money(info.max_cost)}" if info.max_cost is not None else "")
        + (
            f" · {info.counts.cached_calls:,} answers from the judge cache"
            if info.counts.cached_calls
            else ""
        )
    )
    if info.status == "budget_reached":
        st.warning(
            f"Stopped at the spend cap ({fmt.money(info.max_cost)}): "
            f"{info.counts.skipped:,} runs were not started; every finished result is kept."
        )


def render_resume(info: ExperimentInfo) -> bool:
    """For an experiment stopped part-way (interrupted, cancelled, budget reached) and not
    running here: what resuming does, a key field for its judge, and the Resume button.
    True when it was resumed by this click."""
    shared = service()
    if info.status not in RESUMABLE or info.id in shared.running_experiments():
        return False
    counts = info.counts
    st.info(
        f"This experiment stopped part-way ({md_text(info.status)}): {counts.succeeded:,} of "
        f"{counts.total:,} scorer runs have a stored result. Resuming runs only the others "
        "(failed ones included), with the same scorers, options and judge settings."
        + (f" {md_text(info.error)}" if info.error else ""),  # why it stopped (a full disk...)
        icon=":material/pause_circle:",
    )
    typed_key = (
        judge_key_input(f"{KEY}.resume", info.judge_model, info.api_base)
        if info.judge_model
        else None
    )
    if not st.button("Resume", key=f"{KEY}.resume", icon=":material/play_arrow:"):
        return False
    try:
        shared.resume_experiment(info.id, api_key=typed_key)
    except (ExperimentConfigError, NotFoundError) as error:
        st.error(md_text(error))
        return False
    st.toast(f"Resuming {md_text(info.name)}")
    return True


def pick_label_column(columns: list[str]) -> str | None:
    """The label column, from the URL's `label` (empty: none; absent or unknown: the column
    named like a label, if any), written back to it."""
    key = f"{KEY}.label"
    wanted = st.query_params.get(PARAMS["label"])
    if wanted == "":
        from_url = None
    elif wanted in columns:
        from_url = wanted
    else:
        from_url = suggested_label_column(columns)
    options: list[str | None] = [None, *columns]
    link_followed = wanted is not None and wanted != st.session_state.get(f"{key}.url")
    if key not in st.session_state or st.session_state[key] not in options or link_followed:
        st.session_state[key] = from_url
    chosen = st.selectbox(
        "Label column",
        options,
        key=key,
        format_func=lambda column: (
            "none" if column is None else plain_text(review.option_label(column))
        ),
        help="A metadata column holding a human verdict per item: true/false, yes/no, 0/1 or "
        "a number from 0 to 1 (binarised at 0.5).",
    )
    written = chosen or ""
    st.query_params[PARAMS["label"]] = written
    st.session_state[f"{key}.url"] = written
    return chosen


def render_label_agreement(info: ExperimentInfo) -> LabelAgreement | None:
    """The "Agreement with labels" panel; returns the agreement shown, if any. It reads every
    item's scores: for a large experiment, only when asked."""
    st.subheader("Agreement with labels")
    columns = [*review.label_sources(info), *sampled_label_columns(info)]
    if not columns:
        st.caption(
            "No metadata column of this dataset holds labels (true/false, yes/no, 0/1 or "
            "numbers from 0 to 1 in every non-empty cell), and no score was reviewed yet."
        )
        return None
    column = pick_label_column(columns)
    if column is None:
        return None
    if info.total_items > AUTO_AGREEMENT_ITEMS and not st.toggle(
        f"Compute the agreement over {info.total_items:,} items", key=f"{KEY}.agree"
    ):
        return None
    try:
        found = agreement(info, column)
    except ValueError as error:  # a value past the sampled items that is not a label
        st.warning(f"Column {md_text(column)} cannot be read as labels: {md_text(error)}")
        return None
    # Column names come from the file: st.text shows them as they are, never as markdown.
    st.text(
        plain_text(
            f"Labels from {review.source_label(column)}: {found.labelled_items:,} items "
            f"labelled, {found.unlabelled_items:,} without a label (left out)."
        )
    )
    review.source_note(column)
    render_verdict(found)
    plain_dataframe(
        agreement_frame(found, info.comparisons),
        hide_index=True,
        column_config={
            name: st.column_config.NumberColumn(name, format="%.3f")
            for name in ("AUC", "Spearman", "J", "kappa")
        },
    )
    # The reason is the table's last column, often off screen: say it where it is seen too.
    for entry in found.scorers:
        if not entry.defined:
            st.text(plain_text(f"{entry.scorer_id}: not defined: {entry.reason}"))
    st.caption(
        "ROC AUC of each scorer's scores against the labels (0.5 is chance; below it the "
        f"scorer ranks wrong answers higher), with a {found.confidence_level:.0%} "
        f"percentile bootstrap interval ({found.resamples:,} resamples, seed "
        f"{found.seed}); Spearman against the labels as given; at the score threshold "
        "maximising Youden's J, Cohen's kappa and the confusion matrix (a score ≥ threshold "
        "counts as positive). Runs that failed or were not scorable are left out of n."
    )
    return found


def tab_from_url() -> str:
    """The view the URL asks for: `tab` when it names one, else the one its other parameters
    point at (`slice`: Slices, a `label` column: Agreement), else Results."""
    wanted = st.query_params.get(TAB_PARAM)
    if wanted in TABS:
        return wanted
    if st.query_params.get(SLICE_PARAM):
        return "slices"
    if st.query_params.get(PARAMS["label"]):
        return "agreement"
    return RESULTS


def pick_tab() -> str:
    """The view shown, picked in a segmented control initialised from the URL (a link followed
    wins over the session's choice) and written back to its `tab`."""
    key = f"{KEY}.tab"
    from_url = tab_from_url()
    link_followed = st.query_params.get(TAB_PARAM) != st.session_state.get(f"{key}.url")
    if key not in st.session_state or st.session_state[key] not in TABS or link_followed:
        st.session_state[key] = from_url
    chosen = st.segmented_control(
        "View",
        list(TABS),
        key=key,
        format_func=TABS.__getitem__,
        required=True,
        label_visibility="collapsed",
    )
    tab = chosen if chosen in TABS else RESULTS
    st.query_params[TAB_PARAM] = tab
    st.session_state[f"{key}.url"] = tab
    return tab


GRID_HEIGHT = 36 * 22
"""The grid's height in pixels: its header and 21 rows."""
RESULTS_FRAGMENT = f"{KEY}.results"
"""The results view's fragment key (the drill-down reruns it to turn the grid's page)."""


def _open_in_drilldown() -> None:
    """The grid's click callback: rerun only the drill-down (the URL's `item` is written)."""
    st.rerun(DRILLDOWN_FRAGMENT)


def _prepare_search(experiment_id: str) -> None:
    """Once per experiment opened in this session: its dataset's text search index started in
    the background, so that the person's first search finds it built (docs/storage.md)."""
    key = f"{KEY}.search_prepared"
    if st.session_state.get(key) != experiment_id:
        service().prepare_search(experiment_id)
        st.session_state[key] = experiment_id


@st.fragment(key=RESULTS_FRAGMENT)
def results_view(info: ExperimentInfo, metadata_columns: list[str], passing: PassFail) -> None:
    """Filters, then the grid and, beside it, the drill-down of the item clicked: a fragment,
    so a filter or a page turn reruns only this; a row click or the next item only the
    drill-down (a fragment within)."""
    shared = service()
    _prepare_search(info.id)
    marks = {**review.grid_marks(info.id), **pass_column(passing)}
    columns = grid_columns(info, metadata_columns, list(marks))
    query = render_filters(info.scorer_ids, metadata_columns, info, columns)
    page = shared.result_page(info.id, query)
    ids = tuple(row.item_id for row in page.rows)
    turned_to = opening_item(ids)  # previous/next turned the page: its first or last item
    if turned_to is not None:
        st.query_params[ITEM_PARAM] = turned_to
    more = "+" if page.total_at_least else ""
    st.caption(
        f"{page.total:,}{more} of {info.total_items:,} items · page {page.page:,} of "
        f"{page.pages:,}{more}"
    )
    grid_side, item_side = st.columns([3, 2], gap="medium")
    with grid_side:
        render_grid(
            page, info, metadata_columns, marks, height=GRID_HEIGHT, on_open=_open_in_drilldown
        )  # writes a row clicked to the URL's `item`, which the drill-down reads
    more_pages = page.page < page.pages or page.total_at_least
    grid = GridPage(
        ids=ids,
        previous_page=page.page - 1 if page.page > 1 else None,
        next_page=page.page + 1 if more_pages else None,
        results_fragment=RESULTS_FRAGMENT,
    )
    with item_side, st.container(height=GRID_HEIGHT + 120, border=False):
        drilldown_view(info, grid)
    if info.counts.failed:
        st.page_link(
            nav.FAILURES,
            label=f"{info.counts.failed:,} failed runs",
            icon=":material/error:",
            query_params={nav.EXPERIMENT_PARAM: info.id},
        )


def reviews_view(info: ExperimentInfo) -> None:
    """Every review of the experiment, newest first; a row click opens its item in Results."""
    st.subheader("Reviews")
    found = sorted(service().reviews(info.id), key=lambda r: r.updated_at, reverse=True)
    if not found:
        st.caption(
            "No review yet: open an item in Results and mark its scores (or the whole item) "
            "right or wrong, or use the review queue."
        )
    else:
        frame = review.reviews_frame(found)
        event = plain_dataframe(
            frame,
            hide_index=True,
            on_select="rerun",
            selection_mode="single-row",
            key=f"{KEY}.reviews",
        )
        rows = list(getattr(event, "selection", {}).get("rows", []))
        if rows and 0 <= rows[0] < len(found):
            st.query_params[ITEM_PARAM] = found[rows[0]].item_id
            st.query_params[TAB_PARAM] = RESULTS  # a link followed: pick_tab takes it
            st.rerun()
        st.caption("Click a row to open its item in Results.")
    st.page_link(
        nav.REVIEW,
        label="Review queue: the items most worth a look first",
        icon=":material/rate_review:",
        query_params={nav.EXPERIMENT_PARAM: info.id},
    )


def _agreement_later(info: ExperimentInfo) -> Callable[[], LabelAgreement | None] | None:
    """For the downloads outside the Agreement view: the agreement with the label column the
    URL names (`label`), computed only when a file is built; None without one."""
    column = st.query_params.get(PARAMS["label"])
    if not column:
        return None

    def compute() -> LabelAgreement | None:
        try:
            return agreement(info, column)
        except ValueError:  # the column cannot be read as labels: the file goes without
            return None

    return compute


def render_view(
    tab: str, info: ExperimentInfo, aggregates: Aggregates, passing: PassFail
) -> LabelAgreement | None:
    """The view picked; returns the label agreement it showed (Agreement), if any."""
    shared = service()
    if tab == "distributions":
        render_histograms(aggregates.histograms, info.scores)
    elif tab == "slices":
        render_slices(info, shared.metadata_columns(info.id))
    elif tab == "agreement":
        return render_label_agreement(info)
    elif tab == "themes":
        render_themes(info)
    elif tab == "reviews":
        reviews_view(info)
    else:
        results_view(info, shared.metadata_columns(info.id), passing)
    return None


def main() -> None:
    """The page."""
    st.title("Experiment detail")
    shared = service()
    running_experiments(shared)
    info = pick_experiment(shared, f"{KEY}.picked")
    if info is None:
        return
    aggregates = experiment_aggregates(info)
    render_experiment_manage(info)
    render_summary(info, aggregates)
    passing = render_pass_fail(info)
    if render_resume(info):
        st.rerun()  # the progress panel takes over
    downloads = st.container()  # filled last: the files include the chosen label agreement
    load: Callable[[], ExperimentDetail] = lambda: shared.load_experiment(info.id)  # noqa: E731
    if info.total_items == 0:
        with downloads:
            render_downloads(load, name=info.name, experiment_id=info.id)
        st.info("No result yet.")
        return
    tab = pick_tab()
    found = render_view(tab, info, aggregates, passing)
    with downloads:
        later = found if tab == "agreement" else _agreement_later(info)
        render_downloads(load, later, name=info.name, experiment_id=info.id)


if __name__ == "__main__":  # run by the router (app.py), not on import
    main()
