"""The label agreement in the exports: the JSON's `labelAgreement` (still re-importable) and the
HTML report's "Agreement with labels" section (escaped, under the same strict policy)."""

from __future__ import annotations

import json

from core.exchange.experiment_file import read_experiment_json
from core.exchange.exports import experiment_json, experiment_json_text
from core.exchange.html import experiment_html
from core.records import ExperimentDetail
from core.reporting import label_agreement

from .test_agreement import detail_of
from .test_html_report import ALLOWED_TAGS, Page

HOSTILE = "<script>alert('label')</script>"


def labelled_detail(column: str = "verdict", scorer: str = "s") -> ExperimentDetail:
    return detail_of(
        ["yes", "no", "yes", "no", ""],
        {scorer: [0.9, 0.2, 0.7, 0.4, 0.5], "flat": [0.5] * 5},
        column=column,
        failed={scorer: [3]},
    )


def test_the_json_has_label_agreement_and_reads_back() -> None:
    detail = labelled_detail()
    agreement = label_agreement(detail, "verdict", resamples=300)
    document = experiment_json(detail, agreement=agreement)
    assert set(document["labelAgreement"]) == {"s", "flat"}
    entry = document["labelAgreement"]["s"]
    assert (entry["n"], entry["leftOutNoLabel"], entry["leftOutNoScore"]) == (3, 1, 1)
    assert entry["auc"] == 1.0 and entry["confusion"] == {"tp": 2, "fp": 0, "tn": 1, "fn": 0}
    assert document["labelAgreement"]["flat"]["defined"] is False
    assert "same score" in document["labelAgreement"]["flat"]["reason"]
    assert document["summary"]["labelAgreement"]["labelColumn"] == "verdict"
    assert document["summary"]["labelAgreement"]["resamples"] == 300

    text = experiment_json_text(detail, agreement=agreement)
    assert json.loads(text)["labelAgreement"] == document["labelAgreement"]
    exported = read_experiment_json(text.encode())
    assert [item.id for item in exported.items] == [item.id for item in detail.items]
    assert exported.items[0].metadata == {"verdict": "yes"}
    assert {(o.item_id, o.score) for o in exported.results} == {
        (o.item_id, o.score) for o in detail.results
    }
    assert len(exported.failures) == 1


def test_without_labels_the_json_has_no_agreement() -> None:
    document = experiment_json(labelled_detail())
    assert "labelAgreement" not in document and "labelAgreement" not in document["summary"]


def test_the_html_report_has_an_escaped_agreement_section() -> None:
    detail = labelled_detail(column=HOSTILE, scorer=HOSTILE)
    agreement = label_agreement(detail, HOSTILE, resamples=300)
    html = experiment_html(detail, agreement=agreement)
    page = Page(html)
    assert {tag for tag, _ in page.tags} <= ALLOWED_TAGS
    assert HOSTILE not in html
    section = html.split('<section id="labels">', 1)[1].split("</section>", 1)[0]
    assert "<h2>Agreement with labels</h2>" in section
    assert "&lt;script&gt;alert(&#x27;label&#x27;)&lt;/script&gt;" in section  # column, scorer
    assert '<td class="num">1.000</td>' in section  # the AUC
    assert "not defined: the scorer gave every item the same score (0.5)" in section
    assert "1 without a label, 1 without a score" in section
    assert '<a href="#labels">Agreement with labels</a>' in html
    policy = next(a["content"] for t, a in page.tags if a.get("http-equiv"))
    assert policy.startswith("default-src 'none'; script-src 'sha256-")


def test_without_labels_the_html_report_has_no_agreement_section() -> None:
    html = experiment_html(labelled_detail())
    assert 'id="labels"' not in html and "Agreement with labels" not in html
