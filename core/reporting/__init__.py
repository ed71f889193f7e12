"""Pure shaping of experiment results: JSON, CSV and HTML exports (no Streamlit, no database)."""

from core.reporting.exports import (
    experiment_json,
    failure_entry,
    neutralise_cell,
    result_rows,
    results_csv,
)
from core.reporting.html import experiment_html

__all__ = [
    "experiment_html",
    "experiment_json",
    "failure_entry",
    "neutralise_cell",
    "result_rows",
    "results_csv",
]
