"""Experiment detail: summary cards, a Resume button for an experiment stopped part-way, score
distributions, each scorer's agreement with a label column (a human verdict), the per-item table
with filters (kept in the URL), and the drill-down into one item's runs, step by step.

A module of functions: app.py's router runs the file as `__main__`, which calls `main()`;
imported (`pages.experiment`), it draws nothing, so each part can be tested alone. Text from the
dataset, the scorers and the judge goes through pages/ui/text.py."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core.experiment_records import ExperimentDetail, ExperimentInfo, ScorerOutcome
from core.service import RESUMABLE, ExperimentConfigError, NotFoundError
from core.service.views import (
    LabelAgreement,
    agreement_frame,
    filter_items,
    item_outcomes,
    scored_label,
    step_views,
    suggested_label_column,
)
from pages.ui import fmt, nav
from pages.ui.data import ExperimentView, experiment_view
from pages.ui.downloads import render_downloads
from pages.ui.judge_key import judge_key_input
from pages.ui.services import service
from pages.ui.text import md_short, md_text, show_text
from pages.ui.widgets import pick_experiment, running_experiments

KEY = "experiment"
PARAMS = {
    "scorers": "scorer",
    "low": "min",
    "high": "max",
    "failed": "failed",
    "search": "q",
    "label": "label",
}
TEXT_PREVIEW = 160


def _param(name: str, default: str = "") -> str:
    return st.query_params.get(PARAMS[name], default)


def render_summary(info: ExperimentInfo, view: ExperimentView) -> None:
    """The summary cards, each scorer's mean with what it compared, and the experiment's
    status, dataset and judge (names shown escaped)."""
    usage = view.usage_totals
    duration = (
        (info.finished_at - info.started_at).total_seconds()
        if info.started_at and info.finished_at
        else None
    )
    cards = st.columns(6)
    cards[0].metric("Items", f"{info.total_items:,}")
    cards[1].metric("Scorer runs", f"{info.counts.done:,} / {info.counts.total:,}")
    cards[2].metric("Failed runs", f"{info.counts.failed:,}")
    cards[3].metric("Judge tokens", fmt.tokens(usage.get("total_tokens", 0)))
    cards[4].metric(
        "Est. judge cost",
        fmt.money(usage.get("est_cost_usd")),
        help="An estimate from litellm's price table, not a bill.",
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
        "(failed ones included), with the same scorers, options and judge settings.",
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


def render_filters(scorer_ids: list[str]) -> dict:
    """Filter widgets, initialised from the URL and written back to it; returns the keyword
    arguments of `filter_items`."""
    chosen_default = [s for s in _param("scorers").split(",") if s in scorer_ids]
    left, middle, right = st.columns([2, 2, 1])
    chosen = left.multiselect("Scorers", scorer_ids, default=chosen_default, key=f"{KEY}.scorers")
    low, high = middle.slider(
        "Score range",
        0.0,
        1.0,
        (float(_param("low", "0")), float(_param("high", "1"))),
        step=0.01,
        key=f"{KEY}.range",
    )
    failed_only = right.checkbox("Failed only", value=_param("failed") == "1", key=f"{KEY}.failed")
    search = st.text_input(
        "Search input, output, ground truth and reasons",
        value=_param("search"),
        key=f"{KEY}.search",
    )
    st.query_params.update(
        {
            PARAMS["scorers"]: ",".join(chosen),
            PARAMS["low"]: f"{low:g}",
            PARAMS["high"]: f"{high:g}",
            PARAMS["failed"]: "1" if failed_only else "0",
            PARAMS["search"]: search,
        }
    )
    return {
        "scorer_ids": chosen or None,
        "score_range": None if (low, high) == (0.0, 1.0) else (low, high),
        "failed_only": failed_only,
        "search": search,
    }


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
        format_func=lambda column: "none" if column is None else column,
        help="A metadata column holding a human verdict per item: true/false, yes/no, 0/1 or "
        "a number from 0 to 1 (binarised at 0.5).",
    )
    written = chosen or ""
    st.query_params[PARAMS["label"]] = written
    st.session_state[f"{key}.url"] = written
    return chosen


def render_label_agreement(view: ExperimentView) -> LabelAgreement | None:
    """The "Agreement with labels" panel; returns the agreement shown, if any."""
    st.subheader("Agreement with labels")
    columns = view.label_columns
    if not columns:
        st.caption(
            "No metadata column of this dataset holds labels (true/false, yes/no, 0/1 or "
            "numbers from 0 to 1 in every non-empty cell)."
        )
        return None
    column = pick_label_column(columns)
    if column is None:
        return None
    with st.spinner("Computing AUC intervals…"):
        agreement = view.agreement(column)
    # Column names come from the file: st.text shows them as they are, never as markdown.
    st.text(
        f"Labels from column {column}: {agreement.labelled_items:,} items labelled, "
        f"{agreement.unlabelled_items:,} without a label (left out)."
    )
    st.dataframe(
        agreement_frame(agreement, view.detail.info.comparisons),
        hide_index=True,
        column_config={
            name: st.column_config.NumberColumn(name, format="%.3f")
            for name in ("AUC", "Spearman", "J", "kappa")
        },
    )
    # The reason is the table's last column, often off screen: say it where it is seen too.
    for entry in agreement.scorers:
        if not entry.defined:
            st.text(f"{entry.scorer_id}: not defined: {entry.reason}")
    st.caption(
        "ROC AUC of each scorer's scores against the labels (0.5 is chance; below it the "
        f"scorer ranks wrong answers higher), with a {agreement.confidence_level:.0%} "
        f"percentile bootstrap interval ({agreement.resamples:,} resamples, seed "
        f"{agreement.seed}); Spearman against the labels as given; at the score threshold "
        "maximising Youden's J, Cohen's kappa and the confusion matrix (a score ≥ threshold "
        "counts as positive). Runs that failed or were not scorable are left out of n."
    )
    return agreement


def render_table(frame: pd.DataFrame, info: ExperimentInfo) -> None:
    """The item table (a dataframe: its cells and headers read no Markdown)."""
    shown = frame.drop(columns=["search_text"]).copy()
    for column in ("input", "output", "ground_truth"):
        shown[column] = shown[column].str.slice(0, TEXT_PREVIEW)
    st.dataframe(
        shown,
        hide_index=True,
        height=420,
        column_config={
            **{
                s: st.column_config.NumberColumn(scored_label(info, s), format="%.3f")
                for s in info.scorer_ids
            },
            "judge_tokens": st.column_config.NumberColumn("judge tokens", format="%d"),
        },
    )


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


def render_drilldown(detail: ExperimentDetail, filtered: pd.DataFrame) -> None:
    """One item (picked among the filtered ones, kept in the URL as `item`): its input, output
    and ground truth, and a tab per scorer."""
    st.subheader("Item drill-down")
    ids = filtered["item_id"].tolist()
    if not ids:
        st.info("No item matches the filters.")
        return
    wanted = st.query_params.get("item")
    index = ids.index(wanted) if wanted in ids else 0
    item_id = st.selectbox("Item", ids[:2000], index=min(index, 1999), key=f"{KEY}.item")
    st.query_params["item"] = item_id
    item = next(i for i in detail.items if i.id == item_id)
    columns = st.columns(3)
    for column, title, value in zip(
        columns,
        ("Input", "Output", "Ground truth"),
        (item.input, item.output, item.ground_truth),
        strict=True,
    ):
        show_text(title, value, where=column)
    if item.metadata:
        with st.expander("Metadata"):
            st.json(item.metadata, expanded=True)
    outcomes = item_outcomes(detail, item_id)
    if not outcomes:
        st.info("No scorer result for this item yet.")
        return
    labels = [md_short(scored_label(detail.info, scorer_id)) for scorer_id in outcomes]
    for tab, outcome in zip(st.tabs(labels), outcomes.values(), strict=True):
        with tab:
            render_outcome(outcome)


def main() -> None:
    """The page."""
    st.title("Experiment detail")
    shared = service()
    running_experiments(shared)
    info = pick_experiment(shared, f"{KEY}.picked")
    if info is None:
        return
    view = experiment_view(info)
    detail, frame = view.detail, view.items
    render_summary(info, view)
    if render_resume(info):
        st.rerun()  # the progress panel takes over
    downloads = st.container()  # filled last: the files include the chosen label agreement
    if frame.empty:
        with downloads:
            render_downloads(detail)
        st.info("No result yet.")
        return
    st.plotly_chart(view.score_chart(), width="stretch")
    agreement = render_label_agreement(view)
    with downloads:
        render_downloads(detail, agreement)
    filters = render_filters(info.scorer_ids)
    filtered = filter_items(frame, **filters)
    st.caption(f"{len(filtered):,} of {len(frame):,} items")
    render_table(filtered, info)
    render_drilldown(detail, filtered)
    if detail.failures:
        st.page_link(
            nav.FAILURES,
            label=f"{len(detail.failures):,} failed runs",
            icon=":material/error:",
            query_params={nav.EXPERIMENT_PARAM: info.id},
        )


if __name__ == "__main__":  # run by the router (app.py), not on import
    main()
