"""Slices by metadata: on the experiment page, the results grouped by a metadata column (per
value: items, each scorer's mean with its 95% t-interval, missing and failed runs, and a
chart); on Compare, each scorer's change of mean per value between the baseline and a
candidate, worst first. The database groups the items (`Service.slices`); each result is
cached per experiment state and column."""

from __future__ import annotations

import streamlit as st

from core.records import ExperimentInfo, SliceChange, SliceSummary
from core.service.views import CHART_VALUES, slice_changes_frame, slice_chart, slices_frame
from pages.ui.services import service
from pages.ui.text import chart_text, md_text

PARAM = "slice"
"""The URL parameter of the column sliced by (both pages)."""
INTERVAL_NOTE = (
    "Mean per value with its 95% Student t-interval (mean ± t(0.975, n−1)·sd/√n over the "
    "numeric scores of the value; none under two scores). Missing: items of the value without "
    "a stored run of the scorer (failed, or never run)."
)


def _version(info: ExperimentInfo) -> tuple[object, ...]:
    return (info.status, info.counts.done, info.counts.failed, info.finished_at)


@st.cache_resource(max_entries=16, show_spinner="Grouping the results…")
def _slices(experiment_id: str, column: str, version: tuple[object, ...]) -> list[SliceSummary]:
    return service().slices(experiment_id, column)


@st.cache_resource(max_entries=16, show_spinner="Grouping the results…")
def _changes(
    baseline: str, candidate: str, column: str, versions: tuple[object, ...]
) -> list[SliceChange]:
    return service().compare_slices(baseline, candidate, column)


def pick_column(columns: list[str], key: str, label: str = "Slice by") -> str | None:
    """A metadata column from the URL's `slice` (none when absent or unknown), written back."""
    options: list[str | None] = [None, *columns]
    wanted = st.query_params.get(PARAM) or None
    chosen = st.selectbox(
        label,
        options,
        index=options.index(wanted) if wanted in options else 0,
        format_func=lambda c: "none" if c is None else c,
        key=key,
        help="A metadata column of the dataset: the results grouped by its values.",
    )
    if chosen is None:
        st.query_params.pop(PARAM, None)
    else:
        st.query_params[PARAM] = chosen
    return chosen


def render_slices(info: ExperimentInfo, columns: list[str]) -> list[SliceSummary]:
    """The Slices section of the experiment page; returns the slices shown (none when no
    column is chosen)."""
    st.subheader("Slices")
    if not columns:
        st.caption("This dataset has no metadata column to group the results by.")
        return []
    column = pick_column(columns, "experiment.slice")
    if column is None:
        return []
    try:
        found = _slices(info.id, column, _version(info))
    except ValueError as error:  # a column name the database cannot read
        st.warning(md_text(error))
        return []
    frame = slices_frame(found)
    in_memory = any(s.failed is not None for summary in found for s in summary.scorers)
    number = st.column_config.NumberColumn
    st.dataframe(
        frame,
        hide_index=True,
        # Failed runs unknown here (not this process's run): no column of empty cells.
        column_order=[c for c in frame.columns if in_memory or c != "failed"],
        column_config={
            "value": st.column_config.TextColumn(column),
            "items": number("items", format="%d"),
            "scored": number("n", format="%d", help="Numeric scores (the mean's n)"),
            "mean": number("mean", format="%.3f"),
            "low": number("95% low", format="%.3f", help="Student t-interval"),
            "high": number("95% high", format="%.3f", help="Student t-interval"),
            "missing": number("missing", format="%d", help="Items without a stored run"),
            "failed": number("failed", format="%d", help="Failed runs held in memory"),
        },
    )
    titles = {s: chart_text(s) for s in info.scorer_ids}
    st.plotly_chart(
        slice_chart(found, titles, chart_text), width="stretch", key="experiment.slice_chart"
    )
    if len(found) > CHART_VALUES:
        st.caption(
            f"The chart draws the {CHART_VALUES} values with the most items of {len(found):,}."
        )
    st.caption(
        INTERVAL_NOTE
        + (
            " Failed: runs that failed, held by this process."
            if in_memory
            else " Failed runs per value are known only to the process that ran the experiment "
            "(not this one: a CLI run, another process, or a restart): missing counts them."
        )
    )
    return found


def render_slice_changes(baseline: ExperimentInfo, candidate: ExperimentInfo) -> None:
    """The Compare page's "Change per slice" of one candidate (under its scorer table): per
    scorer of both, the change of mean per value of a metadata column shared by both datasets,
    worst first. Every candidate's picker follows the URL's `slice`."""
    st.markdown("**Change per slice**")
    shared = service()
    mine = shared.metadata_columns(baseline.id)
    theirs = set(shared.metadata_columns(candidate.id))
    columns = [c for c in mine if c in theirs]
    if not columns:
        st.caption("The two datasets share no metadata column to slice by.")
        return
    column = pick_column(columns, f"compare.slice.{candidate.id}")
    if column is None:
        return
    versions = (_version(baseline), _version(candidate))
    try:
        changes = _changes(baseline.id, candidate.id, column, versions)
    except ValueError as error:
        st.warning(md_text(error))
        return
    if not changes:
        st.info("No scorer ran in both experiments.")
        return
    number = st.column_config.NumberColumn
    st.dataframe(
        slice_changes_frame(changes),
        hide_index=True,
        column_config={
            "scorer": "Scorer",
            "value": st.column_config.TextColumn(column),
            "baseline_n": number("n baseline", format="%d"),
            "baseline_mean": number("baseline mean", format="%.3f"),
            "candidate_n": number("n candidate", format="%d"),
            "candidate_mean": number("candidate mean", format="%.3f"),
            "change": number("Δ mean", format="%+.3f", help="candidate − baseline"),
        },
    )
    worst = changes[0]
    if worst.change is not None and worst.change < 0:
        st.caption(
            f"Largest drop: {md_text(worst.scorer_id)} on {md_text(column)} = "
            f"{md_text(worst.value or '(no value)')} ({worst.change:+.3f}). Means over each "
            "side's items of the value (not paired)."
        )
    else:
        st.caption("No slice regressed. Means over each side's items of the value (not paired).")
