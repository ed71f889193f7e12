"""The self-contained HTML report: hostile text stays text, nothing is loaded, no plotly.js (the
charts are inline SVG), only the report's own script may run, and the embedded data is the
experiment."""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import re
from datetime import UTC, datetime
from html import escape as html_escape
from html.parser import HTMLParser
from typing import Any

import pytest

from core.exchange.html import experiment_html, script_json
from core.records import DatasetItem, ExperimentDetail, ScorerOutcome
from core.run_results import ErrorSummary, JudgeExecutionFailure

from ._records import build_detail, build_items

SCRIPT_TAG = "<script>alert('xss')</script>"
HANDLER = '<img src=x onerror="alert(1)">'
JS_URL = "javascript:alert(document.cookie)"
END_SCRIPT = "</script><script>alert(2)</script><!--"
HOSTILE_SCORER = "<svg onload=alert(3)>"
ALLOWED_TAGS = {
    "html", "head", "meta", "title", "style", "body", "main", "header", "nav", "a", "h1", "h2",
    "h3", "p", "section", "table", "thead", "tbody", "tr", "th", "td", "div", "span", "noscript",
    "input", "label", "select", "option", "button", "script",
    "svg", "rect", "line", "text",  # the charts (inline SVG, ours: class svg-chart)
}  # fmt: skip


class Page(HTMLParser):
    """Every start tag with its attributes, and the text of each script element."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[tuple[dict[str, str | None], str]] = []
        self._script: dict[str, str | None] | None = None
        self.feed(html)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag == "script":
            self._script = dict(attrs)
            self.scripts.append((self._script, ""))

    def handle_data(self, data: str) -> None:
        if self._script is not None:
            attrs, text = self.scripts[-1]
            self.scripts[-1] = (attrs, text + data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._script = None

    def script(self, script_id: str) -> str:
        found = [text for attrs, text in self.scripts if attrs.get("id") == script_id]
        assert len(found) == 1, f"{len(found)} scripts with id {script_id!r}"
        return found[0]


def hostile_detail() -> ExperimentDetail:
    """The hand-built experiment with attacker-controlled text in every place a dataset, a
    scorer or a judge can put some."""
    detail = build_detail()
    q1, q2, q3, q4 = build_items()
    items = [
        q1.model_copy(update={"input": SCRIPT_TAG, "output": HANDLER, "ground_truth": JS_URL}),
        q2,
        q3.model_copy(update={"metadata": {"note": END_SCRIPT}}),
        q4,
        DatasetItem(id=HANDLER, input="<a href='javascript:alert(4)'>click</a>", output="ok"),
    ]
    results = [
        o.model_copy(update={"reason": END_SCRIPT}) if o.item_id == "q1" else o
        for o in detail.results
    ]
    evil = ScorerOutcome(
        item_id=HANDLER,
        scorer_id=HOSTILE_SCORER,
        status="failed",
        error=f"boom {END_SCRIPT}",
        failed_step="generateScore",
        failed_execution=JudgeExecutionFailure(
            prompt=SCRIPT_TAG,
            judge_model_id="<b>model</b>",
            attempt_count=1,
            model_call_count=1,
            duration_ms=5,
            error=ErrorSummary(name="E", message=HANDLER),
            raw_output=END_SCRIPT,
            finish_reason="stop",
        ),
    )
    info = detail.info.model_copy(
        update={
            "name": f"Report {SCRIPT_TAG}",
            "dataset_name": HANDLER,
            "judge_model": JS_URL,
            "scorer_ids": [*detail.info.scorer_ids, HOSTILE_SCORER],
        }
    )
    return detail.model_copy(
        update={
            "info": info,
            "items": items,
            "results": results,
            "failures": [*detail.failures, evil],
        }
    )


@pytest.fixture(scope="module")
def html() -> str:
    return experiment_html(hostile_detail(), generated_at=datetime(2026, 3, 1, tzinfo=UTC))


@pytest.fixture(scope="module")
def page(html: str) -> Page:
    return Page(html)


def data(page: Page) -> dict[str, Any]:
    return json.loads(page.script("report-data"))


def test_hostile_text_never_becomes_markup(page: Page) -> None:
    tags = {tag for tag, _ in page.tags}
    assert tags <= ALLOWED_TAGS, tags - ALLOWED_TAGS  # no img, svg, b, ... from the data
    for tag, attrs in page.tags:
        assert not [name for name in attrs if name.startswith("on")], (tag, attrs)
        for value in attrs.values():
            assert not (value or "").strip().lower().startswith("javascript:"), (tag, attrs)
        if tag == "a":
            assert (attrs.get("href") or "").startswith("#"), attrs
        if tag == "svg":  # only the report's own charts
            assert attrs.get("class") == "svg-chart", attrs


def test_only_the_reports_two_scripts_exist(page: Page) -> None:
    ids = [attrs.get("id") for attrs, _ in page.scripts]
    assert ids == ["report-data", "report-app"]  # </script> in a reason ended none
    assert all("src" not in attrs for attrs, _ in page.scripts)
    assert page.scripts[0][0]["type"] == "application/json"  # data, never run


def test_hostile_text_is_escaped_in_the_markup(html: str) -> None:
    assert "<title>Report &lt;script&gt;alert(&#x27;xss&#x27;)&lt;/script&gt;" in html
    assert "&lt;svg onload=alert(3)&gt;" in html  # the scorer id, in tables
    assert "boom &lt;/script&gt;&lt;script&gt;alert(2)&lt;/script&gt;&lt;!--" in html
    for raw in (SCRIPT_TAG, HANDLER, HOSTILE_SCORER, "<b>model</b>"):
        assert raw not in html


def test_embedded_data_escapes_script_endings_and_round_trips(page: Page) -> None:
    raw = page.script("report-data")
    assert "<" not in raw and ">" not in raw and "&" not in raw
    loaded = data(page)
    first = loaded["items"][0]
    assert first[1:4] == [SCRIPT_TAG, HANDLER, JS_URL]
    assert loaded["details"][0][0]["reason"] == END_SCRIPT
    assert loaded["scorers"][-1] == HOSTILE_SCORER
    failed = loaded["details"][4][2]
    assert failed["error"] == f"boom {END_SCRIPT}"
    execution = failed["steps"][0]["executions"][0]
    assert execution["rawOutput"] == END_SCRIPT and execution["error"]["message"] == HANDLER


def test_chart_labels_are_escaped(html: str, page: Page) -> None:
    charts = html[html.index('<section id="charts">') :]
    charts = charts[: charts.index("</section>")]
    assert "&lt;svg onload=alert(3)&gt;" in charts  # the hostile scorer, in the charts
    assert HOSTILE_SCORER not in charts
    ids = {attrs.get("id") for tag, attrs in page.tags if attrs.get("id", "").startswith("chart")}
    assert {"chart-scores", "chart-tokens", "chart-calls"} <= ids  # the judge was called


def test_loads_nothing_remote(html: str, page: Page) -> None:
    ours = html
    for needle in ('src="http', "src='http", 'href="http', "href='http", "@import", "url("):
        assert needle not in ours, needle
    for tag in ("link", "img", "iframe", "object", "embed", "base", "form"):
        assert not any(t == tag for t, _ in page.tags), tag
    policy = next(a["content"] for t, a in page.tags if a.get("http-equiv"))
    assert policy is not None and "default-src 'none'" in policy
    assert "connect-src" not in policy  # default-src 'none' forbids every fetch
    assert "'unsafe-inline'" not in policy.split("script-src")[1].split(";")[0]


def test_only_the_reports_own_scripts_may_run(page: Page) -> None:
    policy = next(a["content"] for t, a in page.tags if a.get("http-equiv")) or ""
    allowed = set(re.findall(r"'sha256-([A-Za-z0-9+/=]+)'", policy))
    executable = [text for attrs, text in page.scripts if attrs.get("type") is None]
    digests = {
        base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() for text in executable
    }
    assert len(executable) == 1 and allowed == digests


def test_no_plotly_js_and_a_small_report_is_small(html: str) -> None:
    assert "Plotly" not in html and "plotly" not in html.lower()
    assert len(html.encode()) < 200_000  # plotly.js alone was 4.6 MB


def test_sections_summary_failures_and_usage(html: str) -> None:
    for section in ("summary", "charts", "items-section", "failures", "usage"):
        assert f'id="{section}"' in html
    assert "kept in memory only" in html
    assert "Scorer Run Failed: invalid JSON" in html  # a failure group
    assert "Estimated cost (an estimate, not a bill)" in html
    assert '<input id="filter" type="search"' in html


def test_an_experiment_without_failures_or_judge(page: Page) -> None:
    detail = build_detail()
    plain = detail.model_copy(
        update={"results": [o for o in detail.results if o.scorer_id == "tone"], "failures": []}
    )
    html = experiment_html(plain)
    assert "No scorer run failed." in html and "No judge call." in html
    lost = plain.model_copy(update={"failures_in_memory": False})
    assert "not in this report" in experiment_html(lost)


def test_large_data_is_compressed_and_still_the_same(page: Page) -> None:
    compressed = Page(experiment_html(hostile_detail(), compress_over=0))
    attrs = next(a for a, _ in compressed.scripts if a.get("id") == "report-data")
    assert attrs["data-encoding"] == "gzip+base64"
    assert attrs["type"] == "application/octet-stream"
    packed = compressed.script("report-data")
    assert re.fullmatch(r"[A-Za-z0-9+/=]+", packed)
    assert json.loads(gzip.decompress(base64.b64decode(packed))) == data(page)


def test_script_json_escapes_what_could_end_a_script() -> None:
    text = script_json({"a": "</script><!-- \u2028 & >", "b": float("nan"), "c": [float("inf")]})
    assert "<" not in text and ">" not in text and "&" not in text and "\u2028" not in text
    assert json.loads(text) == {"a": "</script><!-- \u2028 & >", "b": None, "c": [None]}


# ---- the dashboard's payloads (tests/browser/test_user_text.py) in the report ----

MARKUP_PAYLOADS = (
    "[x](http://example.com)",
    "![img](http://example.com/a.png)",
    ":red[warning]",
    ":material/bolt:",
    "$x^2$ and $$y$$",
    "<b>bold</b>",
    "<a href=javascript:alert(1)>x</a>",
    "<img src=x onerror=alert(1)>",
    "[j](javascript:alert(1))",
    "http://example.com/bare www.example.com ada@example.com",
)
PAYLOAD = " ".join(MARKUP_PAYLOADS)
LONG = "L" * 5000


def payload_detail() -> ExperimentDetail:
    """The hand-built experiment with the payloads in its names, ids, texts, metadata, reasons,
    scorer ids, judge model, prompts, raw outputs and errors, and 5,000-character strings."""
    detail = build_detail()
    q1, q2, q3, q4 = build_items()
    items = [
        q1.model_copy(
            update={"input": PAYLOAD, "output": f"{PAYLOAD} {LONG}", "ground_truth": LONG}
        ),
        q2.model_copy(update={"metadata": {"note": PAYLOAD, PAYLOAD: LONG}}),
        q3,
        q4,
        DatasetItem(id=PAYLOAD, input=LONG, output={"text": PAYLOAD}),
    ]
    results = [o.model_copy(update={"reason": PAYLOAD}) for o in detail.results]
    failure = ScorerOutcome(
        item_id=PAYLOAD,
        scorer_id=PAYLOAD,
        status="failed",
        error=f"Scorer Run Failed: {PAYLOAD}",
        failed_step=f"analyze {PAYLOAD}",
        recovered_reason=PAYLOAD,
        failed_execution=JudgeExecutionFailure(
            prompt=PAYLOAD,
            judge_model_id=PAYLOAD,
            attempt_count=1,
            model_call_count=1,
            duration_ms=5,
            error=ErrorSummary(name=PAYLOAD, message=PAYLOAD),
            raw_output=PAYLOAD,
            finish_reason="stop",
        ),
    )
    info = detail.info.model_copy(
        update={
            "name": PAYLOAD,
            "dataset_name": PAYLOAD,
            "dataset_fingerprint": PAYLOAD,
            "judge_model": PAYLOAD,
            "scorer_ids": [*detail.info.scorer_ids, PAYLOAD],
        }
    )
    return detail.model_copy(
        update={
            "info": info,
            "items": items,
            "results": results,
            "failures": [*detail.failures, failure],
        }
    )


@pytest.fixture(scope="module")
def payload_html() -> str:
    return experiment_html(payload_detail(), generated_at=datetime(2026, 3, 1, tzinfo=UTC))


def outside_scripts(html: str, page: Page) -> str:
    """The markup without the text of its script elements (the data and the code)."""
    for _, text in page.scripts:
        if text:
            html = html.replace(text, "")
    return html


def test_payloads_make_no_element_link_or_image(payload_html: str) -> None:
    page = Page(payload_html)
    assert {tag for tag, _ in page.tags} <= ALLOWED_TAGS  # no b, img, svg, math, ...
    for tag, attrs in page.tags:
        assert not [name for name in attrs if name.startswith("on")], (tag, attrs)
        for value in attrs.values():
            assert "example.com" not in (value or ""), (tag, attrs)
            assert not (value or "").strip().lower().startswith("javascript:"), (tag, attrs)
        if tag == "a":
            assert (attrs.get("href") or "").startswith("#"), attrs
        if tag == "svg":  # only the report's own charts
            assert attrs.get("class") == "svg-chart", attrs
    assert len(page.scripts) == 2  # a payload's </script> ended none


def test_payloads_are_escaped_where_the_markup_shows_them(payload_html: str) -> None:
    markup = outside_scripts(payload_html, Page(payload_html))
    for raw in ("<b>bold", "<img src=x", "<a href=javascript", "<a href=j"):
        assert raw not in markup, raw
    escaped = html_escape(PAYLOAD, quote=True)
    assert f"<title>{escaped}" in markup  # the name, shown as its characters
    assert markup.count(escaped) >= 3  # and the dataset, the judge model, a scorer id, ...
    # Markdown means nothing in the report: the brackets and colons stay as they are.
    assert "[x](http://example.com)" in markup and ":red[warning]" in markup


def test_payloads_round_trip_in_the_embedded_data(payload_html: str) -> None:
    page = Page(payload_html)
    raw = page.script("report-data")
    assert "<" not in raw and ">" not in raw and "&" not in raw
    loaded = json.loads(raw)
    first = loaded["items"][0]
    assert first[1:4] == [PAYLOAD, f"{PAYLOAD} {LONG}", LONG]
    assert loaded["scorers"][-1] == PAYLOAD
    assert any(row[0] == PAYLOAD for row in loaded["items"])  # the id
    policy = next(a["content"] for t, a in page.tags if a.get("http-equiv")) or ""
    assert "default-src 'none'" in policy  # the CSP stays


def test_payloads_in_chart_labels_are_escaped(payload_html: str) -> None:
    text = payload_html[payload_html.index('<section id="charts">') :]
    text = text[: text.index("</section>")]
    assert "<b>" not in text and "<a href" not in text and "<img" not in text
    assert html_escape("<b>bold</b>") in text
