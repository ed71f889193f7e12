"""Download buttons for an experiment's exports: the self-contained HTML report, the
Mastra-format JSON (which the Compare page can import back) and the spreadsheet-safe CSV.

Each file is built by `core.reporting` only when its button is clicked (Streamlit runs the
callable then), so showing the page never pays for loading a large experiment or building its
report. The HTML report is built a page of items at a time (`write_experiment_html`, as
`scorelab export --html` builds it: the same bytes as from the whole experiment), so a large
experiment's report never holds every result in memory at once.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

import streamlit as st

from core.records import ExperimentDetail
from core.service import NotFoundError
from core.service.views import (
    LabelAgreement,
    experiment_html,
    experiment_json_text,
    results_csv,
    write_experiment_html,
)
from pages.ui.services import service

if TYPE_CHECKING:
    from core.service import Service

__all__ = ["KEY", "file_stem", "html_download", "json_download", "render_downloads"]

KEY = "downloads"
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")


def file_stem(name: str) -> str:
    """A file name from an experiment name: letters, digits, `.`, `_` and `-` only."""
    stem = _UNSAFE_NAME.sub("-", name).strip("-.")[:80]
    return stem or "experiment"


def _with_thresholds(
    detail: ExperimentDetail, write: Callable[..., str], agreement: LabelAgreement | None
) -> str:
    """The file, with the pass/fail thresholds kept with the experiment (their results: the
    JSON's `summary.thresholdResults`, the report's Pass/fail section) when it has any."""
    try:
        results = service().pass_fail(detail.info.id).json()
    except NotFoundError:  # an experiment deleted meanwhile: the file without them
        results = []
    return write(detail, agreement=agreement, thresholds=results or None)


def html_download(
    source: Service, experiment_id: str, agreement: LabelAgreement | None = None
) -> str:
    """The HTML report download, built a page of items at a time from `source` (the same
    bytes as `experiment_html` of the whole experiment, its thresholds' Pass/fail section and
    `agreement`'s section included), the experiment read as it is when the button is
    clicked."""
    info = source.get_experiment(experiment_id)
    try:
        thresholds = source.pass_fail(experiment_id).json() or None
    except NotFoundError:  # an experiment deleted meanwhile: the file without them
        thresholds = None
    out = io.StringIO()
    write_experiment_html(
        out.write,
        info,
        source.experiment_pages(experiment_id),
        reviews=source.reviews(experiment_id),
        agreement=agreement,
        thresholds=thresholds,
    )
    return out.getvalue()


def json_download(detail: ExperimentDetail, agreement: LabelAgreement | None = None) -> str:
    """The JSON download: the same text as `scorelab export ID --json` for the experiment
    (its thresholds' results and its judge usage per prompt step included), plus the
    scorers' agreement with a label column when `agreement` is given. The failed runs this
    process holds are in it, as in the files of the process that ran the experiment."""
    try:
        thresholds = service().pass_fail(detail.info.id).json() or None
        usage = service().judge_usage(detail.info.id, priced=False)
    except NotFoundError:  # an experiment deleted meanwhile: the file without them
        thresholds, usage = None, None
    return experiment_json_text(detail, agreement=agreement, thresholds=thresholds, usage=usage)


def render_downloads(
    load: Callable[[], ExperimentDetail],
    agreement: LabelAgreement | Callable[[], LabelAgreement | None] | None = None,
    *,
    name: str = "experiment",
    experiment_id: str | None = None,
) -> None:
    """Three download buttons: HTML report, JSON, CSV; the HTML and the JSON include the
    scorers' agreement with a label column when `agreement` is given (or a callable giving it,
    called only when a file is built). The experiment is
    loaded (`load()`) only when a button is clicked, never to show the page; `name` names the
    files. With `experiment_id`, the HTML report is built a page of items at a time
    (`html_download`) instead of from `load()`."""
    stem = file_stem(name)
    later = agreement if callable(agreement) else (lambda: agreement)

    def report() -> str:
        if experiment_id is not None:
            return html_download(service(), experiment_id, later())
        return _with_thresholds(load(), experiment_html, later())

    # One row, not three columns: four elements redrawn on every run of the page, not seven.
    html = json_file = csv_file = st.container(horizontal=True, gap="small")
    html.download_button(
        "HTML report",
        data=report,
        file_name=f"{stem}.html",
        mime="text/html",
        icon=":material/description:",
        key=f"{KEY}.html",
        on_click="ignore",
        help="One file with the summary, charts, items, reasons, failures and judge usage; "
        "opens offline.",
    )
    json_file.download_button(
        "JSON (Mastra format)",
        data=lambda: json_download(load(), later()),
        file_name=f"{stem}.json",
        mime="application/json",
        icon=":material/data_object:",
        key=f"{KEY}.json",
        on_click="ignore",
        help="Every item with its Mastra-format results; the Compare page can import it back.",
    )
    csv_file.download_button(
        "CSV",
        data=lambda: results_csv(load()),
        file_name=f"{stem}.csv",
        mime="text/csv",
        icon=":material/table_view:",
        key=f"{KEY}.csv",
        on_click="ignore",
        help="One row per item and scorer; cells that a spreadsheet would run as formulas are "
        "prefixed with a quote.",
    )
