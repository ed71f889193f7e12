"""Compare: a baseline against one or more candidates, items paired by id. Per scorer, the mean
change with a 95% bootstrap interval and the improved / regressed / unchanged counts; the items
that changed most, one item side by side with word diffs; each scorer's change of mean per
value of a metadata column, worst first (pages/ui/slices.py); judge usage of every side. The
choices live in the URL, so a link reproduces the view. Also imports an exported experiment.

A module of functions: app.py's router runs the file as `__main__`, which calls `main()`;
imported (`pages.compare`), it draws nothing. Names, ids, outputs and reasons of both sides go
through pages/ui/text.py (an imported file can hold anything)."""

from __future__ import annotations

import streamlit as st

from core.records import ExperimentInfo
from core.service import ExperimentFileError, Service, StorageError
from core.service.views import (
    Comparison,
    compare_experiments,
    comparison_words,
    diff_html,
    item_changes,
    item_pair,
    mismatched_comparisons,
    scorer_table,
    usage_side_by_side,
)
from pages.ui import fmt
from pages.ui.data import bulk_load
from pages.ui.services import service
from pages.ui.side_by_side import render_side_by_side
from pages.ui.slices import render_slice_changes
from pages.ui.text import (
    md_short,
    md_text,
    plain_dataframe,
    plain_frame,
    plain_text,
    show_text,
)
from pages.ui.widgets import experiment_label

KEY = "compare"
PARAMS = {
    "baseline": "baseline",
    "candidates": "candidates",
    "vs": "vs",
    "scorer": "scorer",
    "item": "item",
}
ITEMS_LISTED = 2_000
TEXT_PREVIEW = 120
PREVIEWED = ("baseline_reason", "candidate_reason", "baseline_output", "candidate_output")
"""The change table's text columns cut to `TEXT_PREVIEW` characters (and the input)."""


def _version(info: ExperimentInfo) -> tuple[str, str, int, int]:
    return (info.id, info.status, info.counts.done, info.counts.failed)


@st.cache_resource(max_entries=4, show_spinner="Pairing items and bootstrapping…")
def _comparisons(
    _baseline: ExperimentInfo, _candidates: tuple[ExperimentInfo, ...], versions: tuple
) -> list[Comparison]:
    # Read light for pairing (scores, reasons, judge records: `Service.compare_sides`), the
    # dataset's items once for every side over it; never the experiments loaded whole.
    with bulk_load():
        base, *others = service().compare_sides([_baseline.id, *(c.id for c in _candidates)])
    return compare_experiments(base, others)


def _follow_url(key: str, wanted: str | None, valid: bool, fallback: object) -> None:
    """Set the widget `key` from the URL when the URL holds a new value (a link just opened, or
    back/forward), else keep the user's choice unless it is no longer valid."""
    if valid and wanted != st.session_state.get(f"{key}.url"):
        st.session_state[key] = wanted.split(",") if isinstance(fallback, list) else wanted
    elif key not in st.session_state:
        st.session_state[key] = fallback


def _to_url(key: str, param: str, value: str) -> None:
    st.query_params[param] = value
    st.session_state[f"{key}.url"] = value


def render_import(shared: Service) -> None:
    """An uploader and a button importing an exported experiment (JSON)."""
    with st.expander("Import an exported experiment (JSON)"):
        upload = st.file_uploader(
            "An experiment's JSON export (the experiment page's JSON download, or "
            "`scorelab run --json`)",
            type=["json"],
            key=f"{KEY}.upload",
        )
        if not st.button("Import", key=f"{KEY}.import", disabled=upload is None):
            return
        try:
            new_id = shared.import_experiment_json(upload.getvalue())
        except (ExperimentFileError, StorageError) as error:
            st.error(f"{md_text(upload.name)}: {md_text(error)}")
            return
        info = shared.get_experiment(new_id)
        failed = (
            f"; {info.counts.failed:,} failed runs kept in memory only (never in the score storage)"
            if info.counts.failed
            else ""
        )
        st.success(
            f"Imported **{md_text(info.name)}**: {info.counts.succeeded:,} results stored{failed}."
        )


def pick_sides(experiments: list[ExperimentInfo]) -> tuple[ExperimentInfo, list[ExperimentInfo]]:
    """The baseline and the candidates, following and updating the URL."""
    by_id = {info.id: info for info in experiments}
    ids = list(by_id)
    label = {"format_func": lambda i: experiment_label(by_id[i])}
    base_key, cand_key = f"{KEY}.baseline", f"{KEY}.candidates"
    wanted = st.query_params.get(PARAMS["baseline"])
    _follow_url(base_key, wanted, wanted in by_id, ids[1])  # newest first: latest vs previous
    if st.session_state[base_key] not in by_id:
        st.session_state[base_key] = ids[1]
    previous = st.session_state.get(f"{base_key}.url")
    baseline = st.selectbox("Baseline", ids, key=base_key, **label)
    _to_url(base_key, PARAMS["baseline"], baseline)
    others = [i for i in ids if i != baseline]
    wanted = st.query_params.get(PARAMS["candidates"])
    asked = [i for i in (wanted or "").split(",") if i]
    valid = bool(asked) and all(i in others for i in asked)
    _follow_url(cand_key, wanted, valid, others[:1])
    kept = [i for i in st.session_state[cand_key] if i in others]
    if not kept and st.session_state[cand_key] and previous in others:
        kept = [previous]  # the candidate became the baseline: swap the sides
    st.session_state[cand_key] = kept
    chosen = st.multiselect("Candidates", others, key=cand_key, **label)
    _to_url(cand_key, PARAMS["candidates"], ",".join(chosen))
    return by_id[baseline], [by_id[i] for i in chosen]


def render_pairing(comparison: Comparison) -> None:
    """How the items were paired, with a warning for each reason to doubt the pairing."""
    pairing, base, cand = comparison.pairing, comparison.baseline, comparison.candidate
    if pairing.fingerprints_differ:
        st.warning(
            f"The datasets differ (fingerprints {md_text(base.dataset_fingerprint[:12])} and "
            f"{md_text(cand.dataset_fingerprint[:12])}): items are paired by id only, so check "
            "that the same id means the same question on both sides."
        )
    if pairing.input_mismatches:
        shown = md_text(", ".join(pairing.input_mismatches[:10]))
        st.warning(
            f"{len(pairing.input_mismatches):,} paired items have a different input on each side "
            f"(e.g. {shown})."
        )
    duplicates = [*pairing.baseline_duplicates, *pairing.candidate_duplicates]
    if duplicates:
        st.warning(
            f"{len(duplicates):,} ids appear more than once on a side and are left unpaired "
            f"(e.g. {md_text(', '.join(duplicates[:10]))})."
        )
    st.caption(
        f"{len(pairing.paired_ids):,} items paired by id · {len(pairing.baseline_only):,} only "
        f"in the baseline · {len(pairing.candidate_only):,} only in the candidate · "
        f"{len(pairing.baseline_duplicates) + len(pairing.candidate_duplicates):,} duplicated ids"
    )


def render_scorers(comparison: Comparison) -> None:
    """Per scorer: the paired mean change with its interval and the item counts."""
    for scorer_id in mismatched_comparisons(comparison):
        st.warning(
            f"{md_text(scorer_id)} compared different things on the two sides "
            f"({md_text(comparison_words(comparison, scorer_id))}): its change is not a change of "
            "the system under test."
        )
    number = st.column_config.NumberColumn
    plain_dataframe(
        scorer_table(comparison),
        hide_index=True,
        column_config={
            "scorer_id": "Scorer",
            "compares": "Compares",
            "baseline_mean": number("Baseline mean", format="%.3f"),
            "candidate_mean": number("Candidate mean", format="%.3f"),
            "mean_change": number("Δ (paired)", format="%+.3f"),
            "ci_low": number("95% CI low", format="%+.3f", help="Percentile bootstrap"),
            "ci_high": number("95% CI high", format="%+.3f", help="Percentile bootstrap"),
            "improved": number("Improved", format="%d"),
            "regressed": number("Regressed", format="%d"),
            "unchanged": number("Unchanged", format="%d"),
            "baseline_n": number("n baseline", format="%d"),
            "candidate_n": number("n candidate", format="%d"),
            "paired_n": number("n paired", format="%d"),
        },
    )


def _choose(label: str, options: list[str], param: str, name: str, **extra: object) -> str:
    """A selectbox following `?param=` in the URL (and writing it back)."""
    key = f"{KEY}.{name}"
    wanted = st.query_params.get(param)
    _follow_url(key, wanted, wanted in options, options[0])
    if st.session_state[key] not in options:
        st.session_state[key] = options[0]
    value = st.selectbox(label, options, key=key, **extra)
    _to_url(key, param, value)
    return value


def pick_focus(comparisons: list[Comparison]) -> tuple[Comparison, str]:
    """The candidate and the scorer whose items are listed."""
    by_id = {c.candidate.id: c for c in comparisons}
    chosen = comparisons[0]
    if len(comparisons) > 1:
        names = {"format_func": lambda i: plain_text(by_id[i].candidate.name)}
        chosen = by_id[_choose("Candidate", list(by_id), PARAMS["vs"], "vs", **names)]
    scorer_ids = chosen.scorer_ids
    return chosen, _choose("Scorer", scorer_ids, PARAMS["scorer"], "scorer", format_func=plain_text)


def render_items(comparison: Comparison, scorer_id: str) -> None:
    """The paired items by size of change, and the one picked side by side."""
    # The items the picker below lists, not every pair: at 10,000 pairs the table's texts
    # took a third of the page's first visit.
    shown = item_changes(comparison, scorer_id, limit=ITEMS_LISTED)
    for column in (*PREVIEWED, "input"):
        shown[column] = shown[column].str.slice(0, TEXT_PREVIEW)
    plain_dataframe(  # each text cell through plain_text, once
        shown,
        hide_index=True,
        height=360,
        column_config={
            "baseline_score": st.column_config.NumberColumn("baseline", format="%.3f"),
            "candidate_score": st.column_config.NumberColumn("candidate", format="%.3f"),
            "change": st.column_config.NumberColumn("Δ", format="%+.3f"),
        },
    )
    ids = shown["item_id"].tolist()
    if not ids:
        st.info("No paired item.")
        return
    paired = len(comparison.pairing.paired_ids)
    if paired > len(shown):
        st.caption(f"The {len(shown):,} largest changes of {paired:,} paired items.")
    _item_follows_focus(comparison, scorer_id, ids[0])
    item_id = _choose("Item (largest change first)", ids, PARAMS["item"], "item")
    render_pair(comparison, scorer_id, item_id)


def _item_follows_focus(comparison: Comparison, scorer_id: str, largest: str) -> None:
    """Another pair of experiments or another scorer lists other changes: the item picked for
    the last ones (or left in the URL by them) gives way to the largest change of the new list,
    which an item unchanged under the new scorer could otherwise hide. A link opened with its
    own `?item=` keeps it (the first run has no focus yet)."""
    focus = (comparison.baseline.id, comparison.candidate.id, scorer_id)
    key = f"{KEY}.item"
    last = st.session_state.get(f"{key}.focus")
    st.session_state[f"{key}.focus"] = focus
    if last is not None and last != focus:
        st.session_state[key] = largest
        _to_url(key, PARAMS["item"], largest)


def render_pair(comparison: Comparison, scorer_id: str, item_id: str) -> None:
    """One item on both sides: scores, reasons, word diffs against the ground truth and of
    the outputs (HTML built by core.reporting, every text in it escaped)."""
    pair = item_pair(comparison, item_id)
    show_text("Input", pair.baseline.input)
    sides = zip(
        st.columns(2),
        ("Baseline", "Candidate"),
        pair.outcomes.get(scorer_id, (None, None)),
        (pair.baseline_vs_truth, pair.candidate_vs_truth),
        strict=True,
    )
    for column, title, outcome, versus_truth in sides:
        with column:
            st.markdown(f"**{title}** · {md_text(scorer_id)}")
            if outcome is None:
                st.caption("No run.")
            elif outcome.status == "failed":
                st.error(f"Failed at {md_text(outcome.failed_step)}: {md_text(outcome.error)}")
            else:
                st.metric("Score", fmt.score(outcome.score))
                show_text(None, outcome.reason, empty="(no reason)")
            st.markdown("Output against the ground truth (deleted: missing from the output)")
            st.html(diff_html(versus_truth))
    st.markdown("**Output: baseline → candidate** (word diff)")
    st.html(diff_html(pair.output_diff))


def render_usage(comparisons: list[Comparison]) -> None:
    """Judge usage of every side, in one table."""
    st.subheader("Judge usage")
    st.caption("Sums over every judge execution, failed runs included; the cost is an estimate.")
    usage = plain_frame(usage_side_by_side(comparisons))
    costs = [label for label in usage.index if "cost" in label]
    styled = usage.style.format("{:,.0f}", na_rep="—").format(
        "${:,.4f}", na_rep="— (no known price)", subset=(costs, usage.columns)
    )
    st.dataframe(styled, height=35 * (len(usage) + 1) + 3)  # every row, no scrolling


def main() -> None:
    """The page."""
    st.title("Compare experiments")
    shared = service()
    render_import(shared)
    experiments = shared.list_experiments()
    if len(experiments) < 2:
        st.info("Comparing needs two experiments: run another one, or import an exported one.")
        return
    baseline, candidates = pick_sides(experiments)
    if not candidates:
        st.info("Choose at least one candidate to compare with the baseline.")
        return
    versions = tuple(_version(info) for info in [baseline, *candidates])
    comparisons = _comparisons(baseline, tuple(candidates), versions)
    for comparison in comparisons:
        st.subheader(
            f"{md_short(comparison.candidate.name, 120)} vs {md_short(baseline.name, 120)}"
        )
        render_pairing(comparison)
        render_scorers(comparison)
        render_slice_changes(comparison)
    render_side_by_side(comparisons)
    st.subheader("Items, by size of change")
    focus, scorer_id = pick_focus(comparisons)
    render_items(focus, scorer_id)
    render_usage(comparisons)


if __name__ == "__main__":  # run by the router (app.py), not on import
    main()
