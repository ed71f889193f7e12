"""Slices by metadata: on the experiment page, the results grouped by a metadata column as one
value × scorer pivot (items, per scorer n, mean and its 95% t-interval clipped to the scorer's
range), worst first, and one scorer's chart of its worst values; on Compare, each scorer's
change of mean per value over the paired items, with its 95% interval, a minimum size and
Holm's correction, significant drops first. The database groups the items (`Service.slices`);
each result is cached per experiment state and column."""

from __future__ import annotations

from typing import Any

import streamlit as st

from core.records import ExperimentInfo, SliceSummary
from core.service.views import (
    CHART_TOP,
    CORRECTION,
    MIN_SLICE,
    Comparison,
    PairedSliceChange,
    paired_slice_changes,
    paired_slice_frame,
    scorer_range,
    slice_pivot,
    worst_values,
)
from pages.ui.services import service
from pages.ui.slice_chart import render_slice_chart
from pages.ui.text import md_text, plain_frame, plain_text

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


def pick_column(columns: list[str], key: str, label: str = "Slice by") -> str | None:
    """A metadata column from the URL's `slice` (none when absent or unknown), written back."""
    options: list[str | None] = [None, *columns]
    wanted = st.query_params.get(PARAM) or None
    chosen = st.selectbox(
        label,
        options,
        index=options.index(wanted) if wanted in options else 0,
        format_func=lambda c: "none" if c is None else plain_text(c),
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
    in_memory = any(s.failed is not None for summary in found for s in summary.scorers)
    render_pivot(info, found, column, in_memory)
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


def render_pivot(
    info: ExperimentInfo, found: list[SliceSummary], column: str, in_memory: bool
) -> None:
    """The slices as one value × scorer pivot (n, mean, 95% interval clipped to the scorer's
    range), worst first, then one scorer's chart of its worst values (a scorer picked)."""
    ranges = {s: scorer_range(info, s) for s in info.scorer_ids}
    pivot = plain_frame(slice_pivot(found, ranges), names=False)
    number = st.column_config.NumberColumn
    config: dict[str, Any] = {
        "value": st.column_config.TextColumn(plain_text(column)),
        "items": number("items", format="%d"),
        "missing": number("missing", format="%d", help="Runs without a stored result"),
        "failed": number("failed", format="%d", help="Failed runs held in memory"),
    }
    for scorer_id in info.scorer_ids:
        shown = plain_text(scorer_id)
        config[f"{scorer_id} · n"] = number(f"{shown} · n", format="%d")
        for part in ("mean", "low", "high"):
            config[f"{scorer_id} · {part}"] = number(f"{shown} · {part}", format="%.3f")
    st.dataframe(
        pivot,
        hide_index=True,
        column_config=config,
        # Failed runs unknown here (not this process's run): no column of empty cells.
        column_order=[c for c in pivot.columns if in_memory or c != "failed"],
        key="experiment.slice_pivot",
    )
    st.caption(
        "Worst first: by the value's lowest mean (relative to each scorer's range). Low and "
        "high: the 95% interval, clipped to the scorer's range."
    )
    if not info.scorer_ids:
        return
    scorer_id = st.selectbox(
        "Chart of scorer",
        info.scorer_ids,
        key="experiment.slice_scorer",
        format_func=plain_text,
        help=f"One scorer at a time: its {CHART_TOP} worst values.",
    )
    bounds = ranges[scorer_id]
    render_slice_chart(worst_values(found, scorer_id, bounds), bounds, scorer_id)
    if len(found) > CHART_TOP:
        st.caption(f"The chart draws the {CHART_TOP} worst values of {len(found):,}.")


@st.cache_resource(max_entries=16, show_spinner="Pairing the slices…")
def _paired(
    _comparison: Comparison, column: str, versions: tuple[object, ...]
) -> list[PairedSliceChange]:
    return paired_slice_changes(_comparison, column)


def render_slice_changes(comparison: Comparison) -> None:
    """The Compare page's "Change per slice" of one candidate (under its scorer table): per
    scorer of both and value of a metadata column shared by both datasets, the change of mean
    over the same (paired) items with its 95% interval; slices of at least `MIN_SLICE` pairs
    are tested (paired t-test) with Holm's correction; significant drops first. Every
    candidate's picker follows the URL's `slice`."""
    baseline, candidate = comparison.baseline, comparison.candidate
    st.markdown("**Change per slice** (paired on the same items)")
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
    versions = (baseline.id, candidate.id, _version(baseline), _version(candidate))
    try:
        changes = _paired(comparison, column, versions)
    except ValueError as error:
        st.warning(md_text(error))
        return
    if not changes:
        st.info("No scorer ran on paired items in both experiments.")
        return
    number = st.column_config.NumberColumn
    st.dataframe(
        plain_frame(paired_slice_frame(changes), names=False),
        hide_index=True,
        key=f"compare.slice_changes.{candidate.id}",
        column_config={
            "scorer": "Scorer",
            "value": st.column_config.TextColumn(plain_text(column)),
            "n": number("n paired", format="%d"),
            "baseline_mean": number("baseline mean", format="%.3f"),
            "candidate_mean": number("candidate mean", format="%.3f"),
            "change": number("Δ mean", format="%+.3f", help="candidate − baseline, paired"),
            "low": number("95% low", format="%+.3f", help="Student t-interval of Δ"),
            "high": number("95% high", format="%+.3f", help="Student t-interval of Δ"),
            "adjusted_p": number("p (Holm)", format="%.3g"),
            "verdict": "Verdict",
        },
    )
    drops = [c for c in changes if c.significant and c.change < 0]
    correction = CORRECTION.format(n=MIN_SLICE)
    if drops:
        worst = drops[0]
        st.caption(
            f"Largest significant drop: {md_text(worst.scorer_id)} on {md_text(column)} = "
            f"{md_text(worst.value or '(no value)')} ({worst.change:+.3f}, 95% interval "
            f"{worst.low:+.3f} to {worst.high:+.3f}, n = {worst.n}). {correction}"
        )
    else:
        st.caption(f"No slice dropped significantly. {correction}")
