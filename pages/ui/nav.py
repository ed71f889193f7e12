"""The dashboard's pages, in one place, so any page can link to any other.

Each page is a file of functions ending in `if __name__ == "__main__": main()`. The router
(app.py) gives `st.navigation` an `st.Page` per file path: Streamlit runs the chosen file as a
module named `__main__`, so `main()` draws the page, and the URL path is the file's name
(`/experiment`, `/failures`, ...), which keeps deep links and `st.switch_page(path)` working.
Imported as `pages.<name>` (by a test, say), a page draws nothing."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

PAGES_DIR = Path(__file__).resolve().parents[1]

HOME = "pages/home.py"
NEW_EXPERIMENT = "pages/new_experiment.py"
EXPERIMENT = "pages/experiment.py"
FAILURES = "pages/failures.py"
JUDGE_USAGE = "pages/judge_usage.py"
DATASETS = "pages/datasets.py"
SCORERS = "pages/scorers.py"
REVIEW = "pages/review.py"

EXPERIMENT_PARAM = "experiment"
"""Query parameter holding the experiment a page shows, so a link reproduces the view."""


def sections() -> dict[str, list[st.Page]]:
    """The navigation menu."""
    return {
        "Experiments": [
            st.Page(HOME, title="Experiments", icon=":material/science:", default=True),
            st.Page(NEW_EXPERIMENT, title="New experiment", icon=":material/play_arrow:"),
            st.Page(EXPERIMENT, title="Experiment detail", icon=":material/search:"),
            st.Page(FAILURES, title="Failures", icon=":material/error:"),
            st.Page(REVIEW, title="Review queue", icon=":material/rate_review:"),
            st.Page(JUDGE_USAGE, title="Judge usage", icon=":material/token:"),
            st.Page("pages/compare.py", title="Compare", icon=":material/compare_arrows:"),
        ],
        "Setup": [
            st.Page(DATASETS, title="Datasets", icon=":material/table:"),
            st.Page(SCORERS, title="Scorers", icon=":material/straighten:"),
        ],
    }


def open_experiment(page: str, experiment_id: str) -> None:
    """Go to `page` showing `experiment_id`."""
    st.switch_page(page, query_params={EXPERIMENT_PARAM: experiment_id})
