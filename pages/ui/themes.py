"""The themes panel (issue 14): a scorer's judge reasons on low-scoring items, or the failed
runs' errors, grouped into a handful of themes, each with its most telling words, its size and
example items linking to their drill-down (`Service.themes`, core/reporting/themes.py).

Nothing is computed until the panel's toggle is on (the grouping reads every reason of the
scorer); the last report is kept in the session for its settings, so a rerun redraws it at
once. Reasons, labels and ids go through pages/ui/text.py."""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from core.records import ExperimentInfo, ThemeKind, ThemeReport
from core.service import InvalidInputError, NotFoundError
from pages.ui import nav
from pages.ui.services import service
from pages.ui.text import md_short, md_text, plain_text

KEY = "themes"
KIND_LABELS: dict[ThemeKind, str] = {
    "low_scores": "Judge reasons of low scores",
    "failures": "Errors of failed runs",
}
ALL_SCORERS = "(every scorer)"
QUARTER = "Lowest quarter of its scores"
BELOW = "Below a threshold"
ITEM_PARAM = "item"


def render_themes(
    info: ExperimentInfo, kinds: Sequence[ThemeKind] = ("low_scores", "failures")
) -> ThemeReport | None:
    """The panel for one experiment; `kinds`: what it may group (the Failures page: failures
    only). Returns the report shown, if any."""
    key = f"{KEY}.{'-'.join(kinds)}"
    st.subheader("Themes")
    if not st.toggle(
        "Find themes",
        key=f"{key}.on",
        help="Groups similar texts (TF-IDF words and word pairs, KMeans with a fixed seed): "
        "no judge call, the same result every time.",
    ):
        st.caption("Why do items score low, why do runs fail? Turn on to group the texts.")
        return None
    kind = kinds[0]
    if len(kinds) > 1:
        kind = st.radio(
            "Group",
            list(kinds),
            format_func=lambda k: KIND_LABELS[k],
            horizontal=True,
            key=f"{key}.kind",
        )
    scorer_id = _pick_scorer(info, kind, key)
    threshold = _pick_threshold(kind, key) if kind == "low_scores" else None
    report = _report(info, scorer_id, kind, threshold, key)
    if report is not None:
        render_report(report)
        if kind == "failures" and not report.considered and info.counts.failed:
            st.caption(
                f"{info.counts.failed:,} runs failed, but their details are not held by this "
                "dashboard process (run elsewhere, or before a restart)."
            )
    return report


def _pick_scorer(info: ExperimentInfo, kind: ThemeKind, key: str) -> str | None:
    options: list[str] = list(info.scorer_ids)
    if kind == "failures":
        options = [ALL_SCORERS, *options]
    if not options:
        return None
    picked = st.selectbox("Scorer", options, format_func=plain_text, key=f"{key}.scorer.{kind}")
    return None if picked == ALL_SCORERS else picked


def _pick_threshold(kind: ThemeKind, key: str) -> float | None:
    """None: the lowest quarter; else the threshold typed."""
    basis = st.radio("Low means", [QUARTER, BELOW], horizontal=True, key=f"{key}.basis")
    if basis == QUARTER:
        return None
    return float(
        st.number_input("Threshold", value=0.5, step=0.05, format="%.3f", key=f"{key}.threshold")
    )


def _report(
    info: ExperimentInfo,
    scorer_id: str | None,
    kind: ThemeKind,
    threshold: float | None,
    key: str,
) -> ThemeReport | None:
    """The report for these settings: from the session when it was made for them already (and
    for as many finished runs: a running experiment's themes are made again as it goes)."""
    experiment_id = info.id
    wanted = (experiment_id, scorer_id, kind, threshold, info.counts.done, info.counts.failed)
    held = st.session_state.get(f"{key}.report")
    if held is not None and held[0] == wanted:
        return held[1]  # type: ignore[no-any-return]
    if kind == "low_scores" and scorer_id is None:
        st.info("This experiment has no scorer.")
        return None
    try:
        with st.spinner("Grouping the texts…"):
            report = service().themes(experiment_id, scorer_id, kind, 0, threshold=threshold)
    except (InvalidInputError, NotFoundError) as error:
        st.error(md_text(error))
        return None
    st.session_state[f"{key}.report"] = (wanted, report)
    return report


def render_report(report: ThemeReport) -> None:
    """The themes: each with its share, label, words, an example text and its example items
    (links to their drill-down)."""
    st.caption(
        f"{md_text(report.basis[:1].upper() + report.basis[1:])}: {report.considered:,} texts"
        + (f", {report.without_text:,} empty ones left out" if report.without_text else "")
        + f" · seed {report.seed}"
    )
    if not report.themes:
        st.info(
            "No failure details to group."
            if report.kind == "failures"
            else "No low-scoring item with a reason to group."
        )
        return
    total = sum(theme.size for theme in report.themes)
    for number, theme in enumerate(report.themes, start=1):
        with st.container(border=True):
            st.markdown(
                f"**{number}. {md_short(theme.label, 120)}** · {theme.size:,} "
                f"({theme.size / total:.0%})"
            )
            if theme.words:
                st.caption("Telling words: " + md_text(", ".join(theme.words)))
            if theme.example:
                st.caption("Example: " + md_short(theme.example, 300))
            links = st.columns(max(len(theme.item_ids), 1))
            for place, item_id in zip(links, theme.item_ids, strict=False):
                place.page_link(
                    nav.EXPERIMENT,
                    label=md_short(item_id, 40),
                    icon=":material/open_in_new:",
                    query_params={nav.EXPERIMENT_PARAM: report.experiment_id, ITEM_PARAM: item_id},
                )
