"""The exports' last line: an experiment whose records still hold a key this process has (one
stored before masking existed, say) is exported with it masked, in JSON, in the HTML report
(its markup and its data, compressed or not) and in CSV, even when the key has characters
these formats escape."""

from __future__ import annotations

import base64
import gzip
import re

import pytest

from core.exchange.exports import experiment_json_text, masked_export, results_csv
from core.exchange.html import experiment_html
from core.records import ExperimentDetail

PLAIN = "sk-canary-export-0123456789"
ESCAPED = 'pa<ss&"word\\-0123456789'
"""A secret (a URL password, say) holding characters JSON, HTML and CSV write escaped."""


def leaky(detail: ExperimentDetail) -> ExperimentDetail:
    """`detail` with both secrets in an item's input, a reason and a failure's error."""
    leak = f"{PLAIN} / {ESCAPED}"
    item = detail.items[0].model_copy(update={"input": f"asked with {leak}"})
    result = detail.results[0].model_copy(update={"reason": f"because {leak}"})
    failure = detail.failures[0].model_copy(update={"error": f"refused {leak}"})
    return detail.model_copy(
        update={
            "items": [item, *detail.items[1:]],
            "results": [result, *detail.results[1:]],
            "failures": [failure, *detail.failures[1:]],
        }
    )


@pytest.fixture
def secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", PLAIN)
    monkeypatch.setenv("DATABASE_PASSWORD", ESCAPED)


def unpacked_report(page: str) -> str:
    """The report with its data block inflated, when it is compressed."""
    packed = re.search(r'data-encoding="gzip\+base64">([^<]+)<', page)
    if packed is None:
        return page
    return page + gzip.decompress(base64.b64decode(packed.group(1))).decode("utf-8")


@pytest.mark.parametrize("compress_over", [2_000_000, 0])
def test_every_export_masks_every_form_of_a_secret(
    secrets: None, detail: ExperimentDetail, compress_over: int
) -> None:
    leaked = leaky(detail)
    report = unpacked_report(experiment_html(leaked, compress_over=compress_over))
    exports = {"json": experiment_json_text(leaked), "csv": results_csv(leaked), "html": report}
    forms = [
        PLAIN,
        ESCAPED,
        'pa<ss&\\"word\\\\-0123456789',  # JSON
        'pa\\u003css\\u0026\\"word\\\\-0123456789',  # JSON in a <script>
        "pa&lt;ss&amp;&quot;word\\-0123456789",  # HTML
        'pa<ss&""word\\-0123456789',  # CSV
    ]
    found = {name: [f for f in forms if f in text] for name, text in exports.items()}
    assert found == {"json": [], "csv": [], "html": []}
    for text in exports.values():
        assert "***" in text


def test_text_without_secrets_is_unchanged(secrets: None) -> None:
    assert masked_export('{"reason": "fine"}') == '{"reason": "fine"}'
