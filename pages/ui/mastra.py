"""The Datasets page's "Open a Mastra store" section (docs/mastra.md): a LibSQL file path or a
PostgreSQL URL → the store's datasets, experiments and live scores with their counts → import
the chosen ones (again: only what is new). Names from the store go through pages/ui/text.py."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core.service import MastraStoreError, StorageError
from pages.ui.services import service
from pages.ui.text import md_text, plain_dataframe, plain_text

__all__ = ["render_mastra_store"]

LOCATION_KEY = "datasets.mastra.location"
SUMMARY_KEY = "datasets.mastra.summary"  # (location opened, its summary)
PICK_DATASETS_KEY = "datasets.mastra.datasets"
PICK_EXPERIMENTS_KEY = "datasets.mastra.experiments"
LIVE_KEY = "datasets.mastra.live"
OUTCOME_KEY = "datasets.mastra.outcome"


def render_mastra_store() -> None:
    """The section."""
    st.subheader("Open a Mastra store")
    st.caption(
        "A Mastra project's own storage: the LibSQL file (`file:./mastra.db`) or the PostgreSQL "
        "URL (`postgresql://user:password@host/db`, `?schema=NAME` for a schemaName)."
    )
    with st.form("datasets.mastra.open"):
        location = st.text_input("Store", key=LOCATION_KEY, placeholder="file:./mastra.db")
        opened = st.form_submit_button("Open")
    if opened:
        st.session_state.pop(OUTCOME_KEY, None)
        try:
            st.session_state[SUMMARY_KEY] = (location, service().mastra_summary(location))
        except MastraStoreError as error:
            st.session_state.pop(SUMMARY_KEY, None)
            st.error(md_text(str(error)))
            return
    opened_store = st.session_state.get(SUMMARY_KEY)
    if opened_store is None:
        return
    location, summary = opened_store
    plain_dataframe(
        pd.DataFrame(
            [
                {
                    "Kind": "dataset",
                    "Name": d.name,
                    "Version": d.version,
                    "Items": d.item_count,
                    "Scores": None,
                    "Status": "",
                }
                for d in summary.datasets
            ]
            + [
                {
                    "Kind": "experiment",
                    "Name": e.name,
                    "Version": None,
                    "Items": e.result_count,
                    "Scores": e.score_count,
                    "Status": e.status,
                }
                for e in summary.experiments
            ]
            + [
                {
                    "Kind": f"live {v.entity_type.lower()}",
                    "Name": v.entity_id,
                    "Version": None,
                    "Items": None,
                    "Scores": v.score_count,
                    "Status": "",
                }
                for v in summary.live
            ],
            columns=["Kind", "Name", "Version", "Items", "Scores", "Status"],
        ),
        hide_index=True,
    )
    datasets = {d.id: d for d in summary.datasets}
    experiments = {e.id: e for e in summary.experiments}
    chosen_datasets = st.multiselect(
        "Datasets",
        list(datasets),
        default=list(datasets),
        key=PICK_DATASETS_KEY,
        format_func=lambda i: plain_text(f"{datasets[i].name} v{datasets[i].version}"),
    )
    chosen_experiments = st.multiselect(
        "Experiments",
        list(experiments),
        default=list(experiments),
        key=PICK_EXPERIMENTS_KEY,
        format_func=lambda i: plain_text(experiments[i].name),
    )
    live = st.checkbox(
        "Live scores", value=bool(summary.live), key=LIVE_KEY, disabled=not summary.live
    )
    if st.button("Import the chosen ones", type="primary"):
        try:
            st.session_state[OUTCOME_KEY] = service().import_mastra(
                summary.location
                if "***" not in summary.location
                else st.session_state[LOCATION_KEY],
                datasets=chosen_datasets,
                experiments=chosen_experiments,
                live=live,
            )
        except (MastraStoreError, StorageError) as error:
            st.error(md_text(str(error)))
            return
    outcome = st.session_state.get(OUTCOME_KEY)
    if outcome is not None:
        st.success(
            f"Imported {outcome.new_datasets} new datasets, {outcome.new_experiments} new "
            f"experiments, {outcome.new_items} items and {outcome.new_scores} scores "
            "(what was there already is not imported twice)."
        )
        if outcome.skipped_columns:
            st.caption(md_text(f"Not imported: {', '.join(outcome.skipped_columns)}"))
