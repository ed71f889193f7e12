"""Sharing and comparing in a real browser (Debian's Chromium driven by Playwright):

- the HTML report opened from disk (file://, as from an email attachment): its inline script
  renders, filters, sorts and drills into the items, the charts draw, hostile text stays text,
  and nothing but the file itself is requested;
- the dashboard: two exported experiments imported on the Compare page and compared (paired by
  id, the differing datasets warned about, word diffs), then the candidate's HTML report
  downloaded from the experiment page and opened from disk.

The dashboard tests share the session's dashboard with tests/browser/test_journeys.py."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from reporting._records import NOW, build_detail  # tests/ is on sys.path (rootdir)

from core.exchange.exports import experiment_json_text
from core.exchange.html import experiment_html
from core.records import (
    DatasetItem,
    ExperimentDetail,
    ExperimentInfo,
    RunCounts,
    ScorerOutcome,
)

from ._streamlit import TIMEOUT, open_page, rerun, watch_runs

HOSTILE = (
    "<img src=x onerror=alert(1)></script><script>alert(2)</script> <b>bold</b> "
    "[x](http://example.com) :red[warning] $x^2$ <a href=javascript:alert(3)>j</a>"
)


def watch(page: Any) -> dict[str, list[str]]:
    """Record dialogs (an alert would mean injected script ran), requests and errors."""
    seen: dict[str, list[str]] = {"dialogs": [], "requests": [], "errors": []}
    page.on("dialog", lambda dialog: (seen["dialogs"].append(dialog.message), dialog.dismiss()))
    page.on("request", lambda request: seen["requests"].append(request.url))
    page.on("pageerror", lambda error: seen["errors"].append(str(error)))
    page.on(
        "console",
        lambda message: message.type == "error" and seen["errors"].append(message.text),
    )
    return seen


def rows(page: Any) -> Any:
    return page.locator("#items-body tr")


def report_detail(items: int = 120) -> ExperimentDetail:
    """The hand-built experiment (judge records, failures) plus plain items to page through,
    with hostile text in the first item's output and reason."""
    detail = build_detail()
    extra = [
        DatasetItem(id=f"x{n:03d}", input=f"Question {n}", output=f"Answer {n}", ground_truth="")
        for n in range(items)
    ]
    tones = [
        ScorerOutcome(item_id=item.id, scorer_id="tone", status="success", score=(n % 10) / 10)
        for n, item in enumerate(extra)
    ]
    first = detail.items[0].model_copy(update={"output": HOSTILE})
    results = [
        o.model_copy(update={"reason": HOSTILE}) if o.item_id == "q1" else o for o in detail.results
    ]
    return detail.model_copy(
        update={
            "items": [first, *detail.items[1:], *extra],
            "results": [*results, *tones],
            "info": detail.info.model_copy(update={"total_items": 4 + items}),
        }
    )


@pytest.mark.parametrize("compress_over", [10**9, 0], ids=["plain", "compressed"])
def test_the_report_file_filters_sorts_and_drills_down(
    page: Any, tmp_path: Path, compress_over: int
) -> None:
    path = tmp_path / "report.html"
    path.write_text(experiment_html(report_detail(), compress_over=compress_over), "utf-8")
    seen = watch(page)
    page.goto(path.as_uri())
    page.get_by_text("Showing 1–50 of 124 matching items (124 in all)").wait_for()
    assert rows(page).count() == 50
    page.locator("#chart-scores svg.svg-chart").first.wait_for()  # inline SVG, no plotly.js

    page.locator("#filter").fill("question 1")  # x001, x010-x019, x100-x119
    page.get_by_text("of 31 matching items").wait_for()
    assert rows(page).count() == 31
    page.locator("#filter").fill("")
    page.locator("#failed-only").check()
    page.get_by_text("of 2 matching items").wait_for()
    assert rows(page).locator("td.id").all_text_contents() == ["q2", "q3"]
    page.locator("#failed-only").uncheck()

    page.locator("#score-scorer").select_option(label="tone")
    page.locator("#score-min").fill("0.85")
    page.get_by_text("of 12 matching items").wait_for()  # tone 0.9 on 12 of the 120
    page.locator("#score-min").fill("")
    page.get_by_role("button", name="relevancy").click()  # sort: 0.25, 1.0, then unscored
    assert rows(page).locator("td.id").all_text_contents()[:2] == ["q3", "q1"]
    page.get_by_role("button", name="relevancy").click()
    assert rows(page).locator("td.id").all_text_contents()[:2] == ["q1", "q3"]
    page.get_by_role("button", name="Next").click()
    page.get_by_text("Page 2 of 3").wait_for()

    page.get_by_role("button", name="Previous").click()
    rows(page).filter(has_text="q1").click()
    detail = page.locator("#detail")
    detail.get_by_text("Item q1").wait_for()
    assert detail.get_by_text(HOSTILE).count() >= 2  # output and reason, shown as text
    detail.get_by_text("analyze · prompt").click()
    detail.get_by_text("Judge execution: success").first.wait_for()
    assert page.locator("#detail img, #detail script, #detail b, .katex").count() == 0
    assert page.locator('a[href*="example.com"], a[href^="javascript"]').count() == 0
    assert seen["dialogs"] == [] and seen["errors"] == []
    assert seen["requests"] == [path.as_uri()]  # nothing else was loaded


# ---- in the dashboard ----


def exported(experiment_id: str, name: str, outputs: dict[str, str], scores: dict) -> bytes:
    """An experiment export with one code scorer `overlap`."""
    items = [
        DatasetItem(id=i, input=f"What is {i}?", output=o, ground_truth=f"{i} is a thing.")
        for i, o in outputs.items()
    ]
    info = ExperimentInfo(
        id=experiment_id,
        name=name,
        dataset_id="d",
        dataset_name=f"{name} data",
        dataset_fingerprint="unknown",
        scorer_ids=["overlap"],
        status="completed",
        total_items=len(items),
        counts=RunCounts(total=len(items), succeeded=len(scores)),
        created_at=NOW,
    )
    results = [
        ScorerOutcome(
            item_id=i,
            scorer_id="overlap",
            status="success",
            score=s,
            reason=f"overlap {s}",
            result={"runId": f"r-{i}", "score": s, "reason": f"overlap {s}"},
        )
        for i, s in scores.items()
    ]
    detail = ExperimentDetail(
        info=info, items=items, results=results, failures=[], failures_in_memory=True
    )
    return experiment_json_text(detail).encode()


def import_file(page: Any, path: Path, name: str) -> None:
    uploader = page.locator('[data-testid="stFileUploader"]')
    # The upload ends with a rerun carrying the new file: "Import" before it would import the
    # previous one.
    rerun(page, lambda: uploader.locator('input[type="file"]').set_input_files(str(path)))
    uploader.get_by_text(path.name, exact=True).wait_for()
    rerun(page, page.get_by_role("button", name="Import", exact=True).click)
    page.get_by_text(f"Imported {name} (imported)").wait_for()


@pytest.fixture(scope="module")
def compared(dashboard_url: str, browser: Any, tmp_path_factory: pytest.TempPathFactory) -> str:
    """Two exported experiments imported through the Compare page; returns the page's URL."""
    folder = tmp_path_factory.mktemp("exports")
    baseline = folder / "baseline.json"
    baseline.write_bytes(
        exported(
            "b",
            "Baseline export",
            {"a": "A is a thing.", "b": "B is a cat.", "c": "C is a thing.", "d": "D."},
            {"a": 1.0, "b": 0.2, "c": 1.0, "d": 0.5},
        )
    )
    candidate = folder / "candidate.json"
    candidate.write_bytes(
        exported(
            "c",
            "Candidate export",
            {"a": "A is a thing.", "b": "B is a thing.", "c": "C is a <b>dog</b>.", "e": "E."},
            {"a": 1.0, "b": 1.0, "c": 0.4, "e": 0.0},
        )
    )
    context = browser.new_context(viewport={"width": 1400, "height": 1600})
    page = context.new_page()
    page.set_default_timeout(30_000)
    watch_runs(page)
    open_page(page, dashboard_url)  # the router runs first: page links then go through it
    page.get_by_role("heading", name="Experiments").wait_for()
    open_page(page, f"{dashboard_url}/compare")
    page.get_by_role("heading", name="Compare experiments").wait_for()
    page.get_by_text("Import an exported experiment (JSON)").click()
    import_file(page, baseline, "Baseline export")
    import_file(page, candidate, "Candidate export")
    context.close()
    return f"{dashboard_url}/compare"


def test_compare_two_imported_experiments(page: Any, compared: str) -> None:
    # Item c through the page's link (`?item=`): the item picker's option list redraws itself
    # while it is typed in, and a click on it was lost now and then in CI.
    open_page(page, f"{compared}{'&' if '?' in compared else '?'}item=c")
    page.get_by_role("heading", name="Compare experiments").wait_for()
    title = re.compile(r"Candidate export \(imported\) vs Baseline export")
    page.get_by_role("heading", name=title).wait_for(timeout=TIMEOUT)
    page.get_by_text("The datasets differ").wait_for()
    counts = "3 items paired by id · 1 only in the baseline · 1 only in the candidate"
    page.get_by_text(counts).wait_for()
    assert re.search(r"baseline=[0-9a-f]+", page.url) and re.search(r"candidates=", page.url)
    # The markup in the output is shown as text.
    page.locator(".word-diff ins", has_text="<b>dog</b>.").first.wait_for()
    assert page.locator(".word-diff b").count() == 0
    assert page.locator('[data-testid="stException"]').count() == 0
    assert "item=c" in page.url  # the drill-down is in the link too


def test_download_the_report_and_open_it_from_disk(
    page: Any, compared: str, tmp_path: Path
) -> None:
    open_page(page, compared)
    page.get_by_text("The datasets differ").wait_for()
    candidate = re.search(r"candidates=([0-9a-f]+)", page.url)
    assert candidate, page.url
    open_page(page, compared.replace("/compare", f"/experiment?experiment={candidate.group(1)}"))
    page.get_by_role("heading", name="Experiment detail").wait_for()
    with page.expect_download(timeout=TIMEOUT) as download:
        page.get_by_role("button", name="HTML report").click()
    path = tmp_path / "report.html"
    download.value.save_as(path)
    seen = watch(page)
    page.goto(path.as_uri())
    page.get_by_text("Showing 1–4 of 4 matching items (4 in all)").wait_for()
    page.locator("#filter").fill("dog")
    page.get_by_text("Showing 1–1 of 1 matching items").wait_for()
    assert rows(page).count() == 1
    assert seen["requests"] == [path.as_uri()] and seen["dialogs"] == []
