"""The HTML report of an experiment: one self-contained file to send by email.

It holds everything: the summary, per-scorer score charts and judge usage charts (inline SVG
drawn here, no plotly.js: a small experiment's report is well under 1 MB, and no dashboard
theme reaches its colours), the item table with client-side filter, sort and pagination, each
item's reasons and step results, the failures and the judge usage. It opens offline and loads
nothing: a Content-Security-Policy forbids any fetch, and only the report's script (by
its sha256) may run.

Every piece of text from a dataset, a scorer or a judge is escaped: `html.escape` in the markup;
in the embedded JSON every `<`, `>` and `&` is a `\\u` escape (so `</script>` or `<!--` in a
reason cannot end the data block); the inline script writes data with `textContent` only; chart
labels are escaped in the SVG markup like the rest.

Past `COMPRESS_OVER` bytes the data is gzip-compressed and base64-encoded, and the script
inflates it (DecompressionStream, in every current browser): a 10,000-item report is a few MB.
"""

from __future__ import annotations

import base64
import codecs
import hashlib
import io
import json
import math
import tempfile
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from html import escape
from typing import IO, Any

from core.exchange._report_assets import REPORT_SCRIPT, REPORT_STYLE
from core.exchange._review_html import reviews_section
from core.exchange.exports import finite_values, masked_export
from core.exchange.svg_charts import histograms_of, score_mean, usage_svgs
from core.records import ExperimentDetail, ExperimentInfo, Review, ScorerOutcome
from core.reporting.agreement import (
    REVIEWS_SOURCE,
    LabelAgreement,
    ScorerAgreement,
    agreement_verdict,
    ranked_scorers,
    scorer_verdict,
)
from core.reporting.table_rows import (
    TOKEN_COLUMNS,
    FailureGroup,
    ItemRows,
    experiment_cost,
    failure_group_rows,
    grouped_sums,
    item_rows,
    step_views,
    usage_columns,
)
from core.visible_text import without_bidi_controls

__all__ = ["COMPRESS_OVER", "experiment_html", "script_json", "write_experiment_html"]

_FAILURE_IDS_SHOWN = 20

COMPRESS_OVER = 2_000_000
"""Embedded data larger than this (bytes of JSON) is gzip-compressed in the report."""


def experiment_html(
    detail: ExperimentDetail,
    *,
    generated_at: datetime | None = None,
    compress_over: int = COMPRESS_OVER,
    agreement: LabelAgreement | None = None,
    thresholds: Sequence[Mapping[str, Any]] | None = None,
) -> str:
    """The report as one HTML string (UTF-8; see the module docstring for what it holds).

    With `agreement`, an "Agreement with labels" section follows the summary: per scorer, n,
    ROC AUC with its interval, Spearman, the Youden threshold, J, kappa and the confusion
    matrix, or why they are not defined. With reviews in `detail.reviews`, a "Reviews" section
    (per scorer, right and wrong counts and the items reviewed, then the notes: docs/review.md).

    When the embedded data is larger than `compress_over` bytes it is gzip-compressed and
    base64-encoded (the report's script inflates it in the browser): a 10,000-item report
    shrinks from about 30 MB to a few, small enough to send by email.

    Raises ValueError when a scorer id is also the name of a fixed item-table column.
    """
    out = io.StringIO()
    write_experiment_html(
        out.write,
        detail.info,
        [detail],
        reviews=detail.reviews,
        generated_at=generated_at,
        compress_over=compress_over,
        agreement=agreement,
        thresholds=thresholds,
    )
    return out.getvalue()


def write_experiment_html(
    write: Callable[[str], object],
    info: ExperimentInfo,
    pages: Iterable[ExperimentDetail],
    *,
    reviews: Sequence[Review] = (),
    generated_at: datetime | None = None,
    compress_over: int = COMPRESS_OVER,
    agreement: LabelAgreement | None = None,
    thresholds: Sequence[Mapping[str, Any]] | None = None,
    advance: Callable[[int], None] | None = None,
) -> None:
    """`experiment_html` of an experiment given a page of items at a time (each page: some of
    its items in order, with their results and failures), written through `write` in pieces:
    the same report, byte for byte, as from the whole experiment at once, in memory bounded
    by a page (docs/scale.md). One pass over the pages sums what the summary, the charts and
    the judge usage show (a float per score, judge usage per scorer and step) while each
    item's data goes to a temporary file; the markup is then written, then that data (gzip +
    base64 past `compress_over` bytes, streamed), then the script. `reviews`: every review
    of the experiment (the pages' own are not read); `advance(n)` is called after each page
    of `n` items. The failures are the pages' (`failures_in_memory`: any page's)."""
    gathered = _Gathered(list(info.scorer_ids))
    with tempfile.TemporaryFile() as items, tempfile.TemporaryFile() as details:
        for page in pages:
            rows = item_rows(page)
            gathered.add(page, rows)
            payload = _payload(page, rows)
            _spool(items, payload["items"])
            _spool(details, payload["details"])
            if advance is not None:
                advance(len(page.items))
        summary = ExperimentDetail(
            info=info,
            items=[],
            results=[],
            failures=gathered.failures,
            failures_in_memory=gathered.in_memory,
            reviews=list(reviews),
        )
        usage = gathered.usage()
        charts = [histograms_of(gathered.scores(), info.scorer_ids), *usage_svgs(usage)]
        scripts = (REPORT_SCRIPT,)
        write(
            "\n".join(
                [
                    "<!DOCTYPE html>",
                    '<html lang="en"><head><meta charset="utf-8">',
                    f'<meta http-equiv="Content-Security-Policy" content="{_policy(scripts)}">',
                    '<meta name="viewport" content="width=device-width, initial-scale=1">',
                    _markup(summary, gathered, usage, charts, generated_at, agreement, thresholds),
                    "",
                ]
            )
        )
        _write_data(write, info.scorer_ids, items, details, compress_over)
        write(f'\n<script id="report-app">{scripts[0]}</script>\n</body></html>')


def _markup(
    summary: ExperimentDetail,
    gathered: _Gathered,
    usage: list[dict[str, Any]],
    charts: list[str],
    generated_at: datetime | None,
    agreement: LabelAgreement | None,
    thresholds: Sequence[Mapping[str, Any]] | None,
) -> str:
    info = summary.info
    return masked_export(
        "\n".join(
            [
                f"<title>{_e(info.name)} · scorelab report</title>",
                f"<style>{REPORT_STYLE}</style></head><body><main>",
                _header(
                    summary, generated_at or datetime.now(UTC), with_labels=agreement is not None
                ),
                _summary(summary, gathered),
                _thresholds_section(thresholds) if thresholds else "",
                _agreement_section(agreement) if agreement is not None else "",
                reviews_section(summary),
                _charts_section(charts),
                _items_section(info.scorer_ids),
                _failures_section(summary),
                _usage_section(usage, experiment_cost(info)),
                "</main>",
            ]
        )
    )


class _Gathered:
    """What the report's summary, charts and judge usage show, summed a page at a time: each
    scorer's scores (one float each), its failed runs' item count, the failures this process
    holds, and the judge executions summed per (scorer, step, status, cached), the successful
    runs' apart from the failed ones' (the whole report lists the results' first)."""

    def __init__(self, scorer_ids: list[str]) -> None:
        self.scorer_ids = scorer_ids
        self._scores: dict[str, list[float]] = {s: [] for s in scorer_ids}
        self.failed_items = dict.fromkeys(scorer_ids, 0)
        self.failures: list[ScorerOutcome] = []
        self.in_memory = False
        self._results_usage: list[dict[str, Any]] = []
        self._failures_usage: list[dict[str, Any]] = []

    def add(self, page: ExperimentDetail, rows: ItemRows) -> None:
        for scorer_id in self.scorer_ids:
            self._scores[scorer_id] += [v for v in rows.scores[scorer_id] if not math.isnan(v)]
        failed = [text.split(",") for text in rows.failed]
        for scorer_id in self.scorer_ids:
            self.failed_items[scorer_id] += sum(scorer_id in ids for ids in failed)
        self.failures += page.failures
        self.in_memory = self.in_memory or page.failures_in_memory
        self._results_usage += _compact(usage_columns(page.results, priced=False))
        self._failures_usage += _compact(usage_columns(page.failures, priced=False))

    def scores(self) -> dict[str, list[float]]:
        """Each scorer's scores (NaN left out), in item order."""
        return self._scores

    def usage(self) -> list[dict[str, Any]]:
        """The judge executions summed (`_compact`, a page at a time), in the order the whole
        report meets them: every successful run's, then every failed run's."""
        return [*self._results_usage, *self._failures_usage]


_USAGE_KEYS = ("scorer_id", "step", "status", "cached")
_USAGE_SUMS = ("model_calls", "attempts", "duration_ms", *TOKEN_COLUMNS)


def _compact(usage: dict[str, list[Any]]) -> list[dict[str, Any]]:
    """`usage_columns` summed per (scorer, step, status, cached), groups in the order first
    met, with `executions` (the executions summed): what the report's usage tables and charts
    sum, without a row per execution."""
    rows = [dict(zip(usage, values, strict=True)) for values in zip(*usage.values(), strict=True)]
    sums = grouped_sums(
        [row | {"executions": 1} for row in rows], _USAGE_KEYS, [*_USAGE_SUMS, "executions"]
    )
    return [
        dict(zip(_USAGE_KEYS, key, strict=True))
        | dict(zip([*_USAGE_SUMS, "executions"], values, strict=True))
        for key, values in sums.items()
    ]


def _spool(file: IO[bytes], values: list[Any]) -> None:
    """Append each value as the report's JSON (masked), a comma before each."""
    for value in values:
        piece = masked_export(script_json(value))
        file.write(b"," if file.tell() else b"")
        file.write(piece.encode("utf-8"))


_CHUNK = 3 * (1 << 18)
"""Bytes read from a spooled file at once (a multiple of 3: base64 of each chunk joins up)."""


def _write_data(
    write: Callable[[str], object],
    scorer_ids: Sequence[str],
    items: IO[bytes],
    details: IO[bytes],
    compress_over: int,
) -> None:
    """The data block: `{"scorers": [...], "items": [...], "details": [...]}` from the
    spooled pieces, as JSON, or gzip + base64 past `compress_over` bytes."""
    head = ('{"scorers":' + masked_export(script_json(list(scorer_ids))) + ',"items":[').encode()
    parts: list[bytes | IO[bytes]] = [head, items, b'],"details":[', details, b"]}"]
    size = len(head) + items.tell() + details.tell() + len(b'],"details":[') + len(b"]}")

    def chunks() -> Iterator[bytes]:
        for part in parts:
            if isinstance(part, bytes):
                yield part
                continue
            part.seek(0)
            while chunk := part.read(_CHUNK):
                yield chunk

    if size <= compress_over:
        write('<script type="application/json" id="report-data">')
        decoder = codecs.getincrementaldecoder("utf-8")()
        for chunk in chunks():
            write(decoder.decode(chunk))
        write(decoder.decode(b"", final=True) + "</script>")
        return
    write('<script type="application/octet-stream" id="report-data" data-encoding="gzip+base64">')
    packer = zlib.compressobj(6, zlib.DEFLATED, 31)  # what gzip.compress(mtime=0) writes
    pending = b""
    for chunk in chunks():
        pending += packer.compress(chunk)
        whole = len(pending) - len(pending) % 3
        if whole:
            write(base64.b64encode(pending[:whole]).decode("ascii"))
            pending = pending[whole:]
    write(base64.b64encode(pending + packer.flush()).decode("ascii") + "</script>")


# ---- safety ----


def script_json(value: Any) -> str:
    """JSON safe inside a `<script>` element: `<`, `>` and `&` (hence `</script>` and `<!--`)
    and the JavaScript line separators become `\\u` escapes; NaN and infinities become null
    (JSON has no such numbers)."""
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except ValueError:  # a NaN somewhere in a step result: rare, so only then walk the data
        text = json.dumps(finite_values(value), ensure_ascii=False, separators=(",", ":"))
    for char, code in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        text = text.replace(char, code)
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def _policy(scripts: Sequence[str]) -> str:
    """Nothing may be fetched; only our scripts run (by hash, so no injected handler or
    script could); the SVG charts use inline styles."""
    hashes = " ".join(f"'sha256-{_sha256(script)}'" for script in scripts)
    return (
        f"default-src 'none'; script-src {hashes}; style-src 'unsafe-inline'; "
        "img-src data: blob:; font-src data:; base-uri 'none'; form-action 'none'"
    )


def _sha256(script: str) -> str:
    return base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")


def _e(value: Any) -> str:
    """User text for the page's HTML: escaped, its bidi controls shown as escapes."""
    return escape(without_bidi_controls(str(value)), quote=True)


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


# ---- data for the script ----


def _payload(detail: ExperimentDetail, rows: ItemRows) -> dict[str, Any]:
    scorer_ids = list(detail.info.scorer_ids)
    column = {scorer_id: k for k, scorer_id in enumerate(scorer_ids)}
    by_item = _outcomes_by_item(detail)
    items, details = [], []
    for row, item in enumerate(detail.items):
        outcomes = by_item.get(item.id, {})
        failed = sorted(column[s] for s, o in outcomes.items() if o.status == "failed")
        items.append(
            [
                item.id,
                rows.input[row],
                rows.output[row],
                rows.ground_truth[row],
                rows.judge_tokens[row],
                [_score(rows.scores[scorer_id][row]) for scorer_id in scorer_ids],
                failed,
            ]
        )
        details.append([_entry(outcomes.get(scorer_id)) for scorer_id in scorer_ids])
    return {
        "scorers": scorer_ids,
        "items": items,
        "details": details,
    }


def _outcomes_by_item(detail: ExperimentDetail) -> dict[str, dict[str, ScorerOutcome]]:
    known = set(detail.info.scorer_ids)
    found: dict[str, dict[str, ScorerOutcome]] = {}
    for outcome in [*detail.results, *detail.failures]:
        if outcome.scorer_id in known:
            found.setdefault(outcome.item_id, {})[outcome.scorer_id] = outcome
    return found


def _score(value: float) -> float | None:
    return None if math.isnan(value) else float(value)


def _entry(outcome: ScorerOutcome | None) -> dict[str, Any] | None:
    """One scorer's run on one item: score, reason or failure, and its steps."""
    if outcome is None:
        return None
    entry: dict[str, Any] = {"status": outcome.status}
    if outcome.status == "success":
        entry.update(score=outcome.score, reason=outcome.reason)
    else:
        entry.update(
            error=outcome.error,
            failedStep=outcome.failed_step,
            completedSteps=list(outcome.completed_steps),
            recoveredScore=outcome.recovered_score,
            reason=outcome.recovered_reason,
        )
    entry["steps"] = [_step(view, entry.get("reason")) for view in step_views(outcome)]
    return {key: value for key, value in entry.items() if value is not None}


def _step(view: Any, reason: Any) -> dict[str, Any]:
    step: dict[str, Any] = {"name": view.name, "kind": view.kind}
    if view.failed:
        step["failed"] = True
    if view.result is not None and not (view.name == "generateReason" and view.result == reason):
        step["result"] = view.result  # the reason is already shown once above the steps
    if view.prompt is not None:
        step["prompt"] = view.prompt
    step["executions"] = [_execution(e, view) for e in view.executions]
    return step


def _execution(execution: dict[str, Any], view: Any) -> dict[str, Any]:
    """The execution without what its step already shows (the same prompt, the same output):
    at 10,000 items those copies would double the file."""
    slim = dict(execution)
    if slim.get("prompt") == view.prompt:
        slim.pop("prompt", None)
    if "output" in slim and slim["output"] == view.result:
        slim.pop("output")
    return slim


# ---- charts ----


# ---- sections ----


def _header(detail: ExperimentDetail, generated_at: datetime, *, with_labels: bool) -> str:
    labels = '<a href="#labels">Agreement with labels</a>' if with_labels else ""
    return (
        f"<header><h1>{_e(detail.info.name)}</h1>"
        f'<p class="note">scorelab experiment report · generated {_e(generated_at.isoformat())}'
        " · a self-contained file: it works offline and loads nothing.</p>"
        f'<nav><a href="#summary">Summary</a>{labels}<a href="#charts">Charts</a>'
        '<a href="#items-section">Items</a><a href="#failures">Failures</a>'
        '<a href="#usage">Judge usage</a></nav></header>'
    )


def _summary(detail: ExperimentDetail, gathered: _Gathered) -> str:
    info, counts = detail.info, detail.info.counts
    usage = counts.usage
    rows = [
        ("Experiment id", info.id),
        ("Dataset", f"{info.dataset_name or info.dataset_id} ({info.total_items} items)"),
        ("Dataset fingerprint", info.dataset_fingerprint),
        ("Status", info.status),
        ("Scorers", ", ".join(info.scorer_ids)),
        ("Judge model", info.judge_model or "none"),
        (
            "Runs",
            f"{counts.succeeded} succeeded, {counts.failed} failed of {counts.total}",
        ),
        ("Judge tokens", f"{usage.input_tokens or 0} in, {usage.output_tokens or 0} out"),
        ("Judge calls", f"{counts.judge_calls} calls, {counts.judge_attempts} attempts"),
        ("Started", info.started_at.isoformat() if info.started_at else ""),
        ("Finished", info.finished_at.isoformat() if info.finished_at else ""),
    ]
    body = "".join(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in rows)
    return (
        f'<section id="summary"><h2>Summary</h2><table>{body}</table>'
        f"{_means(info.scorer_ids, gathered, info.comparisons)}</section>"
    )


def _means(scorer_ids: Sequence[str], gathered: _Gathered, comparisons: Mapping[str, str]) -> str:
    if not scorer_ids:
        return "<p>No scorer.</p>"
    scored = gathered.scores()
    rows = []
    for scorer_id in scorer_ids:
        scores = scored[scorer_id]
        mean = f"{score_mean(scores):.4f}" if scores else "—"
        failures = gathered.failed_items[scorer_id]
        rows.append(
            f"<tr><td>{_e(scorer_id)}</td><td>{_e(comparisons.get(scorer_id, ''))}</td>"
            f'<td class="num">{mean}</td>'
            f'<td class="num">{len(scores)}</td><td class="num">{failures}</td></tr>'
        )
    return (
        "<h3>Scores per scorer</h3><table><tr><th>Scorer</th><th>Compares</th>"
        "<th class=num>Mean</th>"
        "<th class=num>Items scored</th><th class=num>Failed runs</th></tr>"
        f"{''.join(rows)}</table>"
    )


def _thresholds_section(results: Sequence[Mapping[str, Any]]) -> str:
    """Pass/fail: each thresholded scorer's mean against its bounds (`ThresholdResult`s as
    JSON, the export's `summary.thresholdResults`) and the verdict."""
    passed = all(bool(result.get("passed")) for result in results)
    rows = []
    for result in results:
        bounds = result.get("threshold") or {}
        low, high = bounds.get("min"), bounds.get("max")
        shown = " and ".join(
            part
            for part in (
                f"≥ {low:g}" if isinstance(low, int | float) else "",
                f"≤ {high:g}" if isinstance(high, int | float) else "",
            )
            if part
        )
        mean = result.get("averageScore")
        ok = bool(result.get("passed"))
        rows.append(
            f"<tr><td>{_e(result.get('id'))}</td>"
            f'<td class="verdict-{"separates" if ok else "inverted"}">'
            f"{'✓ passed' if ok else '✗ failed'}</td>"
            f'<td class="num">{_e("—" if mean is None else f"{mean:.3f}")}</td>'
            f"<td>{_e(shown)}</td>"
            f'<td class="num">{_e(result.get("failedRuns", 0))} of '
            f"{_e(result.get('totalRuns', 0))}</td></tr>"
        )
    verdict = "Passed every threshold." if passed else "Failed: a scorer is outside its bounds."
    return (
        f'<section id="pass-fail"><h2>Pass/fail</h2><p class="verdict">{_e(verdict)}</p>'
        "<p class=note>A scorer passes when its mean is within its bounds (inclusive) and "
        "none of its runs failed (the rule of scorelab run --threshold).</p>"
        "<table><tr><th>Scorer</th><th>Verdict</th><th class=num>Mean</th><th>Bounds</th>"
        f"<th class=num>Failed or missing runs</th></tr>{''.join(rows)}</table></section>"
    )


def _agreement_section(agreement: LabelAgreement) -> str:
    level = f"{agreement.confidence_level:.0%}"
    source = (
        "the reviews (docs/review.md)"
        if agreement.label_column == REVIEWS_SOURCE
        else f"the column “{_e(agreement.label_column)}”"
    )
    note = (
        f"<p class=note>Labels from {source}: "
        f"{agreement.labelled_items} items labelled, {agreement.unlabelled_items} without a "
        "label (left out). Labels are binarised at &gt;= 0.5 for AUC, J, kappa and the "
        f"confusion matrix; the AUC interval is a {level} percentile bootstrap "
        f"({agreement.resamples} stratified resamples, seed {agreement.seed}). The threshold "
        "maximises Youden's J (a score &gt;= threshold counts as positive). Items whose run "
        "failed or was not scorable are left out of that scorer's n.</p>"
    )
    verdict = f'<p class="verdict">{_e(agreement_verdict(agreement))}</p>'
    head = (
        "<tr><th>Scorer</th><th>Verdict</th><th class=num>n</th><th class=num>AUC</th>"
        f"<th class=num>AUC {_e(level)} interval</th><th class=num>Spearman</th>"
        "<th class=num>Threshold</th><th class=num>J</th><th class=num>Kappa</th>"
        "<th class=num>TP</th><th class=num>FP</th><th class=num>TN</th><th class=num>FN</th>"
        "<th>Left out</th></tr>"
    )
    rows = "".join(_agreement_row(entry) for entry in ranked_scorers(agreement))
    return (
        f'<section id="labels"><h2>Agreement with labels</h2>{verdict}{note}'
        f"<table>{head}{rows}</table></section>"
    )


def _agreement_row(entry: ScorerAgreement) -> str:
    left_out = (
        f"{entry.left_out_no_label} without a label, {entry.left_out_no_score} without a score"
    )
    verdict = scorer_verdict(entry)
    start = (
        f'<tr><td>{_e(entry.scorer_id)}</td><td class="verdict-{verdict.replace(" ", "-")}">'
        f'{_e(verdict)}</td><td class="num">{entry.n}</td>'
    )
    if not entry.defined or entry.confusion is None:
        return (
            f'{start}<td colspan="10" class="text">not defined: {_e(entry.reason)}</td>'
            f"<td>{_e(left_out)}</td></tr>"
        )
    confusion = entry.confusion
    cells = [
        f"{entry.auc:.3f}",
        f"[{entry.auc_low:.3f}, {entry.auc_high:.3f}]",
        f"{entry.spearman:.3f}",
        f"{entry.threshold:.4g}",
        f"{entry.youden_j:.3f}",
        f"{entry.kappa:.3f}",
        *(str(count) for count in (confusion.tp, confusion.fp, confusion.tn, confusion.fn)),
    ]
    numbers = "".join(f'<td class="num">{_e(cell)}</td>' for cell in cells)
    return f"{start}{numbers}<td>{_e(left_out)}</td></tr>"


def _charts_section(charts: list[str]) -> str:
    boxes = "".join(f'<div class="chart">{chart}</div>' for chart in charts)
    return f'<section id="charts"><h2>Charts</h2>{boxes}</section>'


def _items_section(scorer_ids: Sequence[str]) -> str:
    headers = [
        ("0", "Item id", ""),
        ("1", "Input", ""),
        ("2", "Output", ""),
        ("3", "Ground truth", ""),
        *[(f"s{k}", scorer_id, "num") for k, scorer_id in enumerate(scorer_ids)],
        ("tokens", "Judge tokens", "num"),
    ]
    head = "".join(
        f'<th class="{css}" aria-sort="none"><button type="button" data-sort="{key}">'
        f"{_e(label)}</button></th>"
        for key, label, css in headers
    )
    return (
        '<section id="items-section"><h2>Items</h2>'
        "<noscript><p>The item table needs JavaScript; the summary, failures and judge usage "
        "are readable without it.</p></noscript>"
        '<p id="report-status" class="note">Loading the report\'s data…</p>'
        '<div id="items-ui" hidden><div class="controls">'
        '<input id="filter" type="search" aria-label="Filter items" '
        'placeholder="Filter: id, input, output, ground truth, reasons">'
        '<label>Scores of <select id="score-scorer"><option value="-1">any scorer</option>'
        "</select></label>"
        '<label>from <input id="score-min" type="number" step="0.01"></label>'
        '<label>to <input id="score-max" type="number" step="0.01"></label>'
        '<label><input id="failed-only" type="checkbox"> failed runs only</label></div>'
        '<p id="count" class="note" aria-live="polite"></p>'
        f'<table id="items"><thead><tr>{head}</tr></thead><tbody id="items-body"></tbody></table>'
        '<div class="pager"><button type="button" id="prev">Previous</button>'
        '<span id="page"></span><button type="button" id="next">Next</button></div>'
        '<p class="note">Click a row (or press Enter on it) for the item\'s reasons and steps.</p>'
        '<section id="detail" hidden></section></div></section>'
    )


def _failures_section(detail: ExperimentDetail) -> str:
    title = '<section id="failures"><h2>Failures</h2>'
    if not detail.failures_in_memory and detail.info.counts.failed:
        return (
            f"{title}<p>{detail.info.counts.failed} scorer runs failed. Failed runs are kept in "
            "memory only by the process that ran the experiment, never in the score storage, "
            "and are not in this report.</p></section>"
        )
    if not detail.failures:
        return f"{title}<p>No scorer run failed.</p></section>"
    rows = "".join(_failure_row(group) for group in failure_group_rows(detail.failures))
    return (
        f"{title}<p class=note>Failed scorer runs are kept in memory only, never in the score "
        "storage; each item's details above show its failed step, completed steps and the "
        "failed judge execution.</p><table><tr><th>Scorer</th><th>Failed step</th><th>Error</th>"
        f"<th class=num>Runs</th><th>Items</th></tr>{rows}</table></section>"
    )


def _failure_row(group: FailureGroup) -> str:
    ids = group.item_ids
    shown = ", ".join(ids[:_FAILURE_IDS_SHOWN])
    more = f" and {len(ids) - _FAILURE_IDS_SHOWN} more" if len(ids) > _FAILURE_IDS_SHOWN else ""
    return (
        f"<tr><td>{_e(group.scorer_id)}</td><td>{_e(group.failed_step or '—')}</td>"
        f'<td class="text">{_e(group.error)}</td><td class="num">{group.runs}</td>'
        f"<td>{_e(shown + more)}</td></tr>"
    )


_USAGE_LABELS: tuple[tuple[str, str], ...] = (
    ("executions", "Judge executions"),
    ("failed", "Failed executions"),
    ("model_calls", "Model calls"),
    ("attempts", "Attempts"),
    ("input_tokens", "Input tokens"),
    ("output_tokens", "Output tokens"),
    ("reasoning_tokens", "Reasoning tokens"),
    ("cached_input_tokens", "Cached input tokens"),
    ("total_tokens", "Total tokens"),
    ("duration_ms", "Judge time (ms, summed)"),
)


def _usage_section(usage: list[dict[str, Any]], cost: float | None) -> str:
    title = '<section id="usage"><h2>Judge usage</h2>'
    if not usage:
        return f"{title}<p>No judge call.</p></section>"
    totals = _usage_totals(usage)
    rows = "".join(
        f'<tr><th>{label}</th><td class="num">{totals[key]:,.0f}</td></tr>'
        for key, label in _USAGE_LABELS
    )
    cost_text = "unknown (no price for the judge model)" if cost is None else f"${cost:,.4f}"
    rows += f"<tr><th>Estimated cost (an estimate, not a bill)</th><td>{_e(cost_text)}</td></tr>"
    note = "<p class=note>Sums over every judge execution, failed ones included.</p>"
    return f"{title}{note}<table>{rows}</table>{_usage_by_step(usage)}</section>"


def _usage_totals(usage: list[dict[str, Any]]) -> dict[str, float]:
    """`usage_totals` over the summed executions (`_compact`)."""
    totals = {name: float(sum(row[name] for row in usage)) for name in _USAGE_SUMS}
    totals["executions"] = float(sum(row["executions"] for row in usage))
    totals["failed"] = float(sum(row["executions"] for row in usage if row["status"] == "failed"))
    return totals


_BY_STEP = ("model_calls", "attempts", "input_tokens", "output_tokens", "total_tokens")


def _usage_by_step(usage: list[dict[str, Any]]) -> str:
    sums = grouped_sums(usage, ("scorer_id", "step"), _BY_STEP)
    head = (
        "<tr><th>Scorer</th><th>Step</th><th class=num>Model calls</th>"
        "<th class=num>Attempts</th><th class=num>Input tokens</th>"
        "<th class=num>Output tokens</th><th class=num>Total tokens</th></tr>"
    )
    rows = "".join(
        f"<tr><td>{_e(scorer)}</td><td>{_e(step)}</td>"
        + "".join(f'<td class="num">{v:,}</td>' for v in values)
        + "</tr>"
        for (scorer, step), values in sums.items()
    )
    return f"<h3>By scorer and step</h3><table>{head}{rows}</table>"
