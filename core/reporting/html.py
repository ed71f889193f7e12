"""A first, simple HTML report of an experiment: one self-contained page that loads nothing
from the network and escapes every piece of text."""

from __future__ import annotations

import json
from html import escape
from typing import Any

from core.records import ExperimentDetail
from core.reporting.exports import result_rows

__all__ = ["experiment_html"]

_STYLE = """
body{font-family:system-ui,sans-serif;margin:2rem;color:#222}
table{border-collapse:collapse;margin:1rem 0;font-size:.9rem}
th,td{border:1px solid #ccc;padding:.3rem .5rem;vertical-align:top;text-align:left}
th{background:#f3f3f3}
td.text{max-width:28rem;white-space:pre-wrap;overflow-wrap:anywhere}
.failed{background:#fff1f0}
.note{color:#555;font-size:.9rem}
"""


def experiment_html(detail: ExperimentDetail) -> str:
    """The report as one HTML string (a Content-Security-Policy forbids any loading)."""
    info = detail.info
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta http-equiv="Content-Security-Policy" '
        "content=\"default-src 'none'; style-src 'unsafe-inline'\">",
        f"<title>{_e(info.name)} · scorelab</title><style>{_STYLE}</style></head><body>",
        f"<h1>{_e(info.name)}</h1>",
        _summary(detail),
        _means(detail),
        "<h2>Results</h2>",
        _results_table(detail),
        "</body></html>",
    ]
    return "\n".join(parts)


def _summary(detail: ExperimentDetail) -> str:
    info = detail.info
    usage = info.usage
    rows = [
        ("Experiment id", info.id),
        ("Dataset", f"{info.dataset_name or info.dataset_id} ({info.total_items} items)"),
        ("Dataset fingerprint", info.dataset_fingerprint),
        ("Status", info.status),
        ("Scorers", ", ".join(info.scorer_ids)),
        ("Judge model", info.judge_model or "none"),
        (
            "Runs",
            f"{info.succeeded_runs} succeeded, {info.failed_runs} failed of {info.total_runs}",
        ),
        ("Judge tokens", f"{usage.input_tokens or 0} in, {usage.output_tokens or 0} out"),
        ("Judge calls", f"{info.judge_calls} calls, {info.judge_attempts} attempts"),
        ("Started", info.started_at.isoformat() if info.started_at else ""),
        ("Finished", info.finished_at.isoformat() if info.finished_at else ""),
    ]
    body = "".join(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in rows)
    note = (
        "Failed scorer runs are kept in memory only, never in the score storage."
        if detail.failures_in_memory
        else "Failed scorer runs were kept in memory by the process that ran the experiment "
        "and are not in this report."
    )
    return f'<table>{body}</table><p class="note">{_e(note)}</p>'


def _means(detail: ExperimentDetail) -> str:
    if not detail.info.scores:
        return "<p>No numeric scores.</p>"
    body = "".join(
        f"<tr><td>{_e(scorer_id)}</td><td>{mean:.4f}</td></tr>"
        for scorer_id, mean in detail.info.scores.items()
    )
    return f"<h2>Mean scores</h2><table><tr><th>Scorer</th><th>Mean</th></tr>{body}</table>"


def _results_table(detail: ExperimentDetail) -> str:
    columns = ("itemId", "scorerId", "status", "score", "reason", "error", "input", "output")
    head = "".join(f"<th>{_e(c)}</th>" for c in columns)
    rows = []
    for row in result_rows(detail):
        css = ' class="failed"' if row["status"] == "failed" else ""
        cells = "".join(f'<td class="text">{_e(_text(row.get(c)))}</td>' for c in columns)
        rows.append(f"<tr{css}>{cells}</tr>")
    return f"<table><tr>{head}</tr>{''.join(rows)}</table>"


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def _e(value: Any) -> str:
    return escape(str(value), quote=True)
