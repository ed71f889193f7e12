"""Home: every experiment with its per-scorer means, counts, failures, judge tokens, estimated
cost, duration and status; open one.

A module of functions: app.py's router runs the file as `__main__`, which calls `main()`;
imported (`pages.home`), it draws nothing, so each part can be tested alone."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core.experiment_records import ExperimentInfo
from core.service.views import experiments_frame
from pages.ui import nav
from pages.ui.manage import filter_by_tags, with_notes
from pages.ui.services import service
from pages.ui.widgets import experiment_label, running_experiments

OPEN_KEY = "home.open"


def render_table(frame: pd.DataFrame) -> None:
    """The experiments table (a dataframe: names and scorer ids are shown as they are)."""
    mean_columns = [c for c in frame.columns if c.startswith("mean · ")]
    st.dataframe(
        frame.drop(columns=["id"]),
        hide_index=True,
        column_config={
            "name": st.column_config.TextColumn("Experiment", width="large"),
            "tags": "Tags",
            "note": st.column_config.TextColumn("Note", width="medium"),
            "dataset": "Dataset",
            "status": "Status",
            "items": st.column_config.NumberColumn("Items", format="%d"),
            "runs": st.column_config.NumberColumn("Scorer runs", format="%d"),
            "failed": st.column_config.NumberColumn("Failed runs", format="%d"),
            "judge_tokens": st.column_config.NumberColumn("Judge tokens", format="%d"),
            "est_cost_usd": st.column_config.NumberColumn(
                "Est. judge cost (USD)", format="$%.4f", help="An estimate from litellm's prices"
            ),
            "duration_s": st.column_config.NumberColumn("Duration (s)", format="%.1f"),
            "created_at": st.column_config.DatetimeColumn("Created", format="YYYY-MM-DD HH:mm"),
            **{
                column: st.column_config.NumberColumn(column.removeprefix("mean · "), format="%.3f")
                for column in mean_columns
            },
        },
    )


def render_open(experiments: list[ExperimentInfo]) -> None:
    """A picker over the experiments and buttons to open one on a result page."""
    by_id = {info.id: info for info in experiments}
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
