"""Home: every experiment with its per-scorer means, counts, failures, judge tokens, estimated
cost, duration and status; open one.

A module of functions: app.py's router runs the file as `__main__`, which calls `main()`;
imported (`pages.home`), it draws nothing, so each part can be tested alone."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core.records import ExperimentInfo
from core.service.views import experiments_frame
from pages.ui import nav
from pages.ui.manage import filter_by_tags, with_notes
from pages.ui.services import service
from pages.ui.text import plain_frame, plain_text
from pages.ui.widgets import experiment_label, running_experiments

OPEN_KEY = "home.open"


NONE = "—"
"""What a missing value (no mean, no price, not finished) is shown as."""


def render_table(frame: pd.DataFrame) -> None:
    """The experiments table (a dataframe: names and scorer ids are shown as they are): the
    name, then the means (what a reader came for, before any scrolling), then the rest."""
    mean_columns = [c for c in frame.columns if c.startswith("mean · ")]
    rest = [c for c in frame.columns if c not in ("id", "name", *mean_columns)]
    shown = plain_frame(frame[["name", *mean_columns, *rest]], names=False)
    # A missing value shows as "—", not as the grid's "None" (a format per column: the
    # column_config formats do not apply to a styled frame).
    styled = (
        shown.style.format("{:.3f}", subset=mean_columns, na_rep=NONE)
        .format("${:.4f}", subset=["est_cost_usd"], na_rep=NONE)
        .format("{:.1f}", subset=["duration_s"], na_rep=NONE)
        .format("{:,}", subset=["items", "runs", "failed", "judge_tokens"])
        .format(lambda t: t.strftime("%Y-%m-%d %H:%M"), subset=["created_at"], na_rep=NONE)
    )
    st.dataframe(
        styled,
        hide_index=True,
        column_config={
            "name": st.column_config.TextColumn("Experiment", width="medium"),
            "tags": "Tags",
            "note": st.column_config.TextColumn("Note", width="medium"),
            "dataset": "Dataset",
            "status": "Status",
            "items": "Items",
            "runs": "Scorer runs",
            "failed": "Failed runs",
            "judge_tokens": "Judge tokens",
            "est_cost_usd": st.column_config.Column(
                "Est. judge cost (USD)", help="An estimate from litellm's prices"
            ),
            "duration_s": "Duration (s)",
            "created_at": "Created",
            **{
                column: st.column_config.Column(
                    plain_text(column.removeprefix("mean · ")), width="small"
                )
                for column in mean_columns
            },
        },
    )


def render_open(experiments: list[ExperimentInfo]) -> None:
    """A picker over the experiments and buttons to open one on a result page."""
    by_id = {info.id: info for info in experiments}
    if st.session_state.get(OPEN_KEY) in by_id:
        # Set again so the browser gets the label again after a status change (it keeps the
        # last label it was sent when only the label changed).
        st.session_state[OPEN_KEY] = st.session_state[OPEN_KEY]
    chosen = st.selectbox(
        "Open an experiment",
        list(by_id),
        key=OPEN_KEY,
        format_func=lambda i: experiment_label(by_id[i]),
    )
    detail, failures, usage = st.columns(3)
    if detail.button("Results", icon=":material/search:", width="stretch"):
        nav.open_experiment(nav.EXPERIMENT, chosen)
    if failures.button("Failures", icon=":material/error:", width="stretch"):
        nav.open_experiment(nav.FAILURES, chosen)
    if usage.button("Judge usage", icon=":material/token:", width="stretch"):
        nav.open_experiment(nav.JUDGE_USAGE, chosen)


def main() -> None:
    """The page."""
    st.title("Experiments")
    shared = service()
    running_experiments(shared)
    experiments = shared.list_experiments()
    if not experiments:
        st.info(
            "No experiment yet. The sample datasets are ready: start a first experiment with "
            "the code-based scorers, no API key needed."
        )
        st.page_link(nav.NEW_EXPERIMENT, label="New experiment", icon=":material/play_arrow:")
        return
    shown = filter_by_tags(experiments)
    if shown:
        render_table(with_notes(experiments_frame(shown), shown))
    else:
        st.info("No experiment holds every chosen tag.")
    render_open(shown or experiments)


if __name__ == "__main__":  # run by the router (app.py), not on import
    main()
