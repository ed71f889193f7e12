"""Experiment detail: summary cards, a Resume button for an experiment stopped part-way, score
distributions, each scorer's agreement with a label column (a human verdict), slices by a metadata
column (pages/ui/slices.py), the results grid with its filters, kept in the URL
(pages/ui/grid.py), and the drill-down into the item of the row clicked, step by step.

A module of functions: app.py's router runs the file as `__main__`, which calls `main()`;
imported (`pages.experiment`), it draws nothing, so each part can be tested alone. Text from the
dataset, the scorers and the judge goes through pages/ui/text.py."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from core.records import (
    ExperimentDetail,
    ExperimentInfo,
    ScorerOutcome,
)
from core.service import RESUMABLE, ExperimentConfigError, NotFoundError
from core.service.views import (
    LabelAgreement,
    agreement_frame,
    binned_histograms,
    item_outcomes,
    scored_label,
    step_views,
    suggested_label_column,
)
from pages.ui import fmt, nav, review
from pages.ui.data import Aggregates, agreement, experiment_aggregates, sampled_label_columns
from pages.ui.downloads import render_downloads
from pages.ui.grid import render_filters, render_grid
from pages.ui.judge_key import judge_key_input
from pages.ui.manage import render_experiment_manage
from pages.ui.services import service
from pages.ui.slices import render_slices
from pages.ui.text import chart_text, md_short, md_text, show_item_texts, show_text
from pages.ui.themes import render_themes
from pages.ui.widgets import pick_experiment, running_experiments

KEY = "experiment"
# Comments, not attribute docstrings: this file runs as a Streamlit script, whose "magic"
# would draw a string literal standing alone on the page.
# This module's URL parameters (the grid's are in pages/ui/grid.py, the slice's in
# pages/ui/slices.py).
PARAMS = {"label": "label"}
# Up to this many items the label agreement is computed as the page opens; above, on a
# toggle: it reads every item's scores (4 s at 10,000 items x 5 scorers,
# bench/browser_pages.py), which kept the page from opening within its 2 s.
AUTO_AGREEMENT_ITEMS = 5_000


def render_summary(info: ExperimentInfo, aggregates: Aggregates) -> None:
    """The summary cards, each scorer's mean with what it compared, and the experiment's
    status, dataset and judge (names shown escaped)."""
    costs = [u.est_cost_usd for u in aggregates.usage if u.est_cost_usd is not None]
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
        fmt.money(sum(costs) if costs else None),
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


def score_chart(info: ExperimentInfo, aggregates: Aggregates):
    """The score histograms from the database's bins, titled with entity-escaped ids."""
    titles = {s: chart_text(s) for s in info.scorer_ids}
    return binned_histograms(aggregates.histograms, titles, info.scores)


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
        format_func=lambda column: "none" if column is None else review.option_label(column),
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
        f"Labels from {review.source_label(column)}: {found.labelled_items:,} items labelled, "
        f"{found.unlabelled_items:,} without a label (left out)."
    )
    review.source_note(column)
    st.dataframe(
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
            st.text(f"{entry.scorer_id}: not defined: {entry.reason}")
    st.caption(
        "ROC AUC of each scorer's scores against the labels (0.5 is chance; below it the "
        f"scorer ranks wrong answers higher), with a {found.confidence_level:.0%} "
        f"percentile bootstrap interval ({found.resamples:,} resamples, seed "
        f"{found.seed}); Spearman against the labels as given; at the score threshold "
        "maximising Youden's J, Cohen's kappa and the confusion matrix (a score ≥ threshold "
        "counts as positive). Runs that failed or were not scorable are left out of n."
    )
    return found


def render_outcome(outcome: ScorerOutcome) -> None:
    """One scorer's run on one item: score and reason (or the failure), then each step."""
    if outcome.status == "failed":
        st.error(f"Failed at {md_text(outcome.failed_step)}: {md_text(outcome.error)}")
        st.caption(
            f"Completed steps: {md_text(', '.join(outcome.completed_steps) or 'none')} · "
            f"recovered score {fmt.score(outcome.recovered_score)} (kept in memory only)"
        )
    else:
        st.markdown(f"**Score** {fmt.score(outcome.score)}")
        show_text("Reason", outcome.reason)
    for step in step_views(outcome):
        label = f"{'❌ ' if step.failed else ''}{md_short(step.name)} · {md_text(step.kind)}"
        with st.expander(label, expanded=step.failed):
            if step.result is not None:
                show_text("Result", step.result, language="json")
            if step.prompt:
                show_text("Prompt", step.prompt)
            for execution in step.executions:
                render_execution(execution)


def render_execution(execution: dict) -> None:
    """One judge execution: who answered, what it cost, and its error or raw output."""
    usage = execution.get("usage") or {}
    st.markdown(
        f"Judge execution · **{md_text(execution.get('status'))}** · model "
        f"{md_text(execution.get('judgeModelId'))} "
        f"({md_text(execution.get('judgeProvider') or '?')}) · "
        f"attempts {md_text(execution.get('attemptCount'))} · "
        f"model calls {md_text(execution.get('modelCallCount'))} · "
        f"{md_text(execution.get('durationMs'))} ms · "
        f"tokens in {md_text(usage.get('inputTokens', '—'))} / "
        f"out {md_text(usage.get('outputTokens', '—'))} / "
        f"reasoning {md_text(usage.get('reasoningTokens', '—'))} / "
        f"cached {md_text(usage.get('cachedInputTokens', '—'))}"
    )
    error = execution.get("error")
    if error:
        st.error(f"{md_text(error.get('name'))}: {md_text(error.get('message'))}")
    if execution.get("rawOutput"):
        show_text("Raw output", execution["rawOutput"])


def render_drilldown(info: ExperimentInfo, item_id: str | None) -> None:
    """One item (the grid's row clicked, kept in the URL as `item`): its input, output and
    ground truth, and a tab per scorer; only that item's results are read."""
    st.subheader("Item drill-down")
    if item_id is None:
        st.info("Click a row of the grid to open its item here.")
        return
    try:
        detail = service().item_detail(info.id, item_id)
    except NotFoundError:
        st.warning(f"No item {md_text(item_id)} in this experiment's dataset.")
        return
    st.caption(f"Item {md_short(item_id, 120)}")
    item = detail.items[0]
    show_item_texts(item)
    outcomes = item_outcomes(detail, item_id)
    if not outcomes:
        st.info("No scorer result for this item yet.")
        return
    labels = [md_short(scored_label(info, scorer_id)) for scorer_id in outcomes]
    review.reviewer_field()
    for tab, outcome in zip(st.tabs(labels), outcomes.values(), strict=True):
        with tab:
            render_outcome(outcome)
            review.render_review(info, item_id, outcome.scorer_id)


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
    if render_resume(info):
        st.rerun()  # the progress panel takes over
    downloads = st.container()  # filled last: the files include the chosen label agreement
    load: Callable[[], ExperimentDetail] = lambda: shared.load_experiment(info.id)  # noqa: E731
    if info.total_items == 0:
        with downloads:
            render_downloads(load, name=info.name)
        st.info("No result yet.")
        return
    st.plotly_chart(score_chart(info, aggregates), width="stretch")
    found = render_label_agreement(info)
    with downloads:
        render_downloads(load, found, name=info.name)
    metadata_columns = shared.metadata_columns(info.id)
    render_slices(info, metadata_columns)
    st.subheader("Results")
    query = render_filters(info.scorer_ids, metadata_columns, info)
    page = shared.result_page(info.id, query)
    more = "+" if page.total_at_least else ""
    st.caption(
        f"{page.total:,}{more} of {info.total_items:,} items · page {page.page:,} of "
        f"{page.pages:,}{more}"
    )
    marks = review.grid_marks(info.id)
    render_drilldown(info, render_grid(page, info, metadata_columns, marks))
    render_themes(info)
    if info.counts.failed:
        st.page_link(
            nav.FAILURES,
            label=f"{info.counts.failed:,} failed runs",
            icon=":material/error:",
            query_params={nav.EXPERIMENT_PARAM: info.id},
        )


if __name__ == "__main__":  # run by the router (app.py), not on import
    main()
