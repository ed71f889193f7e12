"""User text is text, on every page, in a real browser: a dataset whose ids, inputs, outputs,
ground truths, metadata values and column names hold Markdown links and images, Streamlit's
colour and icon directives, LaTeX, HTML, `javascript:` links, bare URLs and 5,000-character
unbroken strings; an experiment on it named with the same (code scorers, a check whose id is a
payload, every scorer failing on the item whose output is a JSON object); and an exported
experiment imported on the Compare page whose names, scorer ids, reasons, judge model, prompts,
raw outputs and errors hold them too.

Each page is then opened and its DOM read: no link whose href comes from the payload (in HTML
or in plotly's SVG), no image, no coloured text, no KaTeX, no `<b>` element, no icon from
`:material/bolt:`, no bold plotly text, no alert; the page does not scroll sideways; and the
payload is on screen as the characters it is made of.

The tests share one dashboard of their own (the server `fresh_dashboard` gives) and run in
file order: the first three build what the others look at."""

from __future__ import annotations

import json
import re
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from reporting._records import NOW, success_execution, usage  # tests/ is on sys.path

from core.exchange.exports import experiment_json_text
from core.records import (
    DatasetItem,
    ExperimentDetail,
    ExperimentInfo,
    RunCounts,
    ScorerOutcome,
)
from core.run_results import (
    ErrorSummary,
    JudgeExecutionFailure,
    JudgeStepResult,
    ScorerRunResult,
)

from ._streamlit import TIMEOUT, choose, fragment_rerun, in_view, open_page, rerun, settle
from .conftest import serve_dashboard

LINK = "[x](http://example.com)"
IMAGE = "![img](http://example.com/a.png)"
COLOUR = ":red[warning]"
ICON = ":material/bolt:"
MATHS = "$x^2$ and $$y$$"
HTML = "<b>bold</b> <a href=javascript:alert(1)>x</a> <img src=x onerror=alert(1)>"
JS_LINK = "[j](javascript:alert(1))"
BARE = "http://example.com/bare www.example.com ada@example.com"
EVERYTHING = " ".join([LINK, IMAGE, COLOUR, ICON, MATHS, HTML, JS_LINK, BARE])
LONG_ID = "L" * 5000

LABEL_COLUMN = f"{LINK} verdict"  # named like a label column: the page preselects it
DATASET = f"[data](http://example.com) {COLOUR} <img src=x onerror=alert(2)>"
EXPERIMENT = f"[run](http://example.com) {COLOUR} <b>run</b> $r$"
CHECK_ID = f"[check](http://example.com) {COLOUR} <b>c</b> $c$"
JUDGE_SCORER = f"[judge](http://example.com) {COLOUR} <b>j</b> $j$"
JUDGE_MODEL = "<a href=javascript:alert(3)>model</a> [m](http://example.com) <b>m</b>"
IMPORTED = f"[imported](http://example.com) {COLOUR} <b>i</b>"

ROWS: list[dict[str, Any]] = [
    {
        "id": f"{LINK} {COLOUR}",
        "question": f"**Hi** {EVERYTHING}",
        "answer": f"Hi {EVERYTHING}",
        "expected": f"Hi {IMAGE} {HTML}",
        "note": EVERYTHING,
        LABEL_COLUMN: True,
    },
    {
        "id": HTML,
        "question": f"{MATHS} {ICON}",
        "answer": f"Hi {JS_LINK} {BARE}",
        "expected": COLOUR,
        "note": JS_LINK,
        LABEL_COLUMN: False,
    },
    {  # an object where text is expected: every scorer fails on it, the error quotes it
        "id": f"{IMAGE} {MATHS}",
        "question": f"What is {LINK}?",
        "answer": {"text": EVERYTHING},
        "expected": "text",
        "note": ICON,
        LABEL_COLUMN: True,
    },
    {
        "id": LONG_ID,
        "question": "Q" * 5000,
        "answer": "x" * 5000,
        "expected": "y" * 5000,
        "note": "z" * 5000,
        LABEL_COLUMN: False,
    },
    {
        "id": "plain",
        "question": "A plain question",
        "answer": "Hi plain",
        "expected": "Hi",
        "note": "",
        LABEL_COLUMN: True,
    },
]
FIRST, FAILING = ROWS[0]["id"], ROWS[2]["id"]

FIND_MARKUP = r"""() => {
  const found = [];
  const payload = /example\.com|javascript:/i;
  const where = el => (el.closest('[data-testid]') || {dataset: {}}).dataset.testid;
  for (const a of document.querySelectorAll('a')) {
    const href = [a.getAttribute('href'), a.getAttribute('xlink:href'),
                  a.getAttributeNS('http://www.w3.org/1999/xlink', 'href')].join(' ');
    if (payload.test(href)) found.push(`link ${href.trim()} in ${where(a)}`);
  }
  for (const img of document.querySelectorAll('img, image, svg image')) {
    const src = [img.getAttribute('src'), img.getAttribute('href')].join(' ');
    if (payload.test(src) || img.getAttribute('src') === 'x') found.push(`image ${src}`);
  }
  for (const el of document.querySelectorAll('.stMarkdownColoredText, [class*="ColoredText"]')) {
    found.push(`coloured text "${el.textContent}" in ${where(el)}`);
  }
  for (const el of document.querySelectorAll('.katex, .katex-display, math')) {
    found.push(`maths "${el.textContent}" in ${where(el)}`);
  }
  for (const el of document.querySelectorAll('b')) found.push(`<b> "${el.textContent}"`);
  for (const el of document.querySelectorAll('[data-testid="stIconMaterial"]')) {
    if (el.textContent.trim() === 'bolt') found.push(`icon bolt in ${where(el)}`);
  }
  for (const el of document.querySelectorAll('svg tspan, svg text')) {
    const weight = el.style.fontWeight || el.getAttribute('font-weight') || '';
    const title = el.closest('.gtitle');  // Streamlit's theme sets the chart's own title bold
    if (!title && /bold|[6-9]00/.test(weight)) found.push(`bold chart text "${el.textContent}"`);
  }
  return found;
}"""

SIDEWAYS = r"""() => {
  const over = [];
  const root = document.documentElement;
  if (root.scrollWidth > window.innerWidth + 4) {
    over.push(`document ${root.scrollWidth} > ${window.innerWidth}`);
  }
  for (const id of ['stMain', 'stAppViewContainer', 'stMainBlockContainer', 'stSidebarContent']) {
    const el = document.querySelector(`[data-testid="${id}"]`);
    if (el && el.scrollWidth > el.clientWidth + 4) {
      over.push(`${id} ${el.scrollWidth} > ${el.clientWidth}`);
    }
  }
  return over;
}"""


# ---- the dashboard and what it holds ----


@pytest.fixture(scope="module")
def dashboard(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A dashboard of its own (`serve_dashboard`, as `fresh_dashboard` gives it)."""
    with serve_dashboard(tmp_path_factory.mktemp("user-text")) as url:
        yield url


STATE: dict[str, str] = {}
"""Ids the first tests make and the others visit: `run` (the dashboard's experiment) and
`imported`."""


@pytest.fixture
def seen(page: Any) -> Iterator[dict[str, list[str]]]:
    """Alerts shown on the page (one would mean a payload ran as script); none may be."""
    caught: dict[str, list[str]] = {"dialogs": []}
    page.on("dialog", lambda dialog: (caught["dialogs"].append(dialog.message), dialog.dismiss()))
    yield caught
    assert caught["dialogs"] == []


def text_only(page: Any, where: str, *shown: str) -> None:
    """The page's DOM holds no markup made of the payload and no sideways scroll, and each of
    `shown` is on screen as text."""
    settle(page)
    assert page.locator('[data-testid="stException"]').count() == 0, where
    for text in shown:
        # md_text puts invisible word joiners (U+2060) where a bare link or a shortcode
        # (`:material/bolt:`) would start: the reader sees the same characters.
        seen_as = re.compile("\u2060?".join(map(re.escape, text)))
        try:
            page.get_by_text(seen_as).filter(visible=True).first.wait_for()
        except PlaywrightTimeout:
            markup = page.evaluate(FIND_MARKUP)
            raise AssertionError(f"{where}: {text[:60]!r} is not on screen; {markup}") from None
    assert page.evaluate(FIND_MARKUP) == [], where
    assert page.evaluate(SIDEWAYS) == [], where


def dataset_file(folder: Path) -> Path:
    path = folder / "payloads.jsonl"
    path.write_text("\n".join(json.dumps(row) for row in ROWS) + "\n", "utf-8")
    return path


def imported_experiment(run_id: str) -> bytes:
    """An export of an experiment on the same items (so Compare pairs them), with payloads in
    its name, dataset, judge model, scorer ids, reasons, prompts, raw outputs and errors."""
    items = [
        DatasetItem(
            id=row["id"],
            input=row["question"],
            output=f"Candidate {EVERYTHING}" if n < 2 else row["answer"],
            ground_truth=row["expected"],
            metadata={"note": row["note"]},
        )
        for n, row in enumerate(ROWS)
    ]
    tone = [
        ScorerOutcome(
            item_id=item.id,
            scorer_id="tone-scorer",
            status="success",
            score=0.5,
            reason=f"Reason {EVERYTHING}",
            result={"runId": f"tone-{n}", "score": 0.5, "reason": f"Reason {EVERYTHING}"},
        )
        for n, item in enumerate(items)
    ]
    execution = success_execution(
        f"Prompt {EVERYTHING}",
        {"verdict": EVERYTHING},
        usage(100, 20),
        duration_ms=300,
        model=JUDGE_MODEL,
    )
    judged = ScorerRunResult(
        run_id="judge-0",
        input=items[0].input,
        output=items[0].output,
        score=1.0,
        reason=f"Judged {EVERYTHING}",
        analyze_step_result=execution.output,
        analyze_prompt=execution.prompt,
        judge={"analyze": JudgeStepResult(executions=(execution,))},
    )
    failed = JudgeExecutionFailure(
        prompt=f"Prompt {EVERYTHING}",
        judge_model_id=JUDGE_MODEL,
        judge_provider=f"provider {LINK}",
        attempt_count=1,
        model_call_count=1,
        duration_ms=200,
        error=ErrorSummary(name=f"Error {COLOUR}", message=f"Message {EVERYTHING}"),
        raw_output=f"Raw {EVERYTHING}",
        usage=usage(50, 10),
        finish_reason="stop",
    )
    judge = [
        ScorerOutcome(
            item_id=items[0].id,
            scorer_id=JUDGE_SCORER,
            status="success",
            score=1.0,
            reason=judged.reason,
            result=judged.to_dict(),
            usage=execution.usage,
            judge_calls=1,
            judge_attempts=1,
        ),
    ]
    failures = [
        ScorerOutcome(
            item_id=items[1].id,
            scorer_id=JUDGE_SCORER,
            status="failed",
            error=f"Scorer Run Failed: {EVERYTHING}",
            error_type="ScorerRunError",
            failed_step=f"analyze {LINK}",
            completed_steps=[f"preprocess {COLOUR}"],
            recovered_reason=f"Recovered {EVERYTHING}",
            failed_execution=failed,
            usage=failed.usage,
            judge_calls=1,
            judge_attempts=1,
        )
    ]
    info = ExperimentInfo(
        id=run_id,
        name=IMPORTED,
        dataset_id="d",
        dataset_name=DATASET,
        dataset_fingerprint=f"fp {LINK}",
        scorer_ids=["tone-scorer", JUDGE_SCORER],
        judge_model=JUDGE_MODEL,
        status="completed",
        total_items=len(items),
        counts=RunCounts(total=2 * len(items), succeeded=len(tone) + 1, failed=1),
        created_at=NOW,
    )
    detail = ExperimentDetail(
        info=info,
        items=items,
        results=[*tone, *judge],
        failures=failures,
        failures_in_memory=True,
    )
    return experiment_json_text(detail).encode()


def named(text: str) -> re.Pattern[str]:
    """A pattern matching `text` anywhere in a name (a `/` escaped too: Playwright sends the
    pattern to the browser as a JavaScript regex literal)."""
    return re.compile(re.escape(text).replace("/", r"\/"))


def experiment_url(
    dashboard: str, experiment_id: str, item: str | None = None, tab: str | None = None
) -> str:
    query = {
        "experiment": experiment_id,
        **({"item": item} if item is not None else {}),
        **({"tab": tab} if tab is not None else {}),
    }
    return f"{dashboard}/experiment?{urllib.parse.urlencode(query)}"


# ---- building it through the pages ----


def test_upload_and_import_the_payload_dataset(
    dashboard: str, page: Any, seen: dict, tmp_path: Path
) -> None:
    open_page(page, f"{dashboard}/datasets")
    chooser = page.locator('[data-testid="stFileUploader"] input[type="file"]')
    rerun(page, lambda: chooser.set_input_files(str(dataset_file(tmp_path))))
    page.get_by_text("5 rows ready to import").wait_for()
    # The mapping caption names the payload column; the preview shows the table.
    text_only(page, "the upload's mapping and preview", "metadata: note, [x](http")
    name = page.get_by_role("textbox", name="Dataset name")
    name.fill(DATASET)
    rerun(page, lambda: name.press("Enter"))
    rerun(page, page.get_by_role("button", name="Import dataset").click)
    page.get_by_text("Imported [data]").wait_for()
    text_only(page, "the import's message", f"{COLOUR} <img src=x onerror=alert(2)>: 5 items")
    choose(page, "Look inside", named(DATASET))
    text_only(page, "the stored dataset's preview")


def test_run_code_scorers_and_a_check_named_with_payloads(
    dashboard: str, page: Any, seen: dict
) -> None:
    open_page(page, f"{dashboard}/new_experiment")
    choose(page, "Dataset", named(DATASET))
    in_view(page, page.get_by_role("combobox", name="Scorers")).fill("includes")  # a virtual list
    rerun(page, page.get_by_role("option", name="Check: includes").click)
    page.keyboard.press("Escape")
    options = page.locator('[data-testid="stExpander"]').filter(
        has_text="Options of Check: includes"
    )
    options.get_by_text("Options of Check: includes").click()
    for label, value in (("value *", "Hi"), ("id", CHECK_ID)):
        box = options.get_by_role("textbox", name=label, exact=True)
        box.fill(value)
        rerun(page, lambda box=box: box.press("Enter"))
    name = page.get_by_role("textbox", name="Name (optional)")
    name.fill(EXPERIMENT)
    rerun(page, lambda: name.press("Enter"))
    page.get_by_text("30 scorer runs").wait_for()  # 5 items × 6 scorers
    text_only(page, "the new experiment form")
    page.get_by_role("button", name="Start experiment").click()
    page.get_by_text(re.compile(r"Experiment finished \(completed\)")).wait_for(timeout=120_000)
    text_only(page, "the finished experiment's message")
    found = re.search(r"experiment=([\w-]+)", page.url)
    assert found, page.url
    STATE["run"] = found.group(1)


def test_import_an_experiment_export_full_of_payloads(
    dashboard: str, page: Any, seen: dict, tmp_path: Path
) -> None:
    export = tmp_path / "hostile.json"
    export.write_bytes(imported_experiment("hostile"))
    open_page(page, f"{dashboard}/compare")
    page.get_by_text("Import an exported experiment (JSON)").click()
    uploader = page.locator('[data-testid="stFileUploader"]')
    rerun(page, lambda: uploader.locator('input[type="file"]').set_input_files(str(export)))
    uploader.get_by_text(export.name, exact=True).wait_for()
    rerun(page, page.get_by_role("button", name="Import", exact=True).click)
    page.get_by_text("results stored").wait_for()
    text_only(page, "the import on Compare", "Imported [imported](http")
    ids = {name: re.search(rf"{name}=([\w-]+)", page.url) for name in ("baseline", "candidates")}
    assert all(ids.values()), page.url
    (STATE["imported"],) = {match.group(1) for match in ids.values()} - {STATE["run"]}


# ---- every page ----


def test_experiments(dashboard: str, page: Any, seen: dict) -> None:
    open_page(page, dashboard)
    page.get_by_role("heading", name="Experiments").wait_for()
    text_only(page, "Experiments")
    page.get_by_role("combobox", name="Open an experiment").click()
    page.get_by_role("option", name=named(EXPERIMENT)).wait_for()
    text_only(page, "Experiments, the picker open")  # option labels are plain text


def open_tab(page: Any, name: str) -> None:
    """Open the drill-down's scorer tab named with `name`, waiting for the run drawing it (a
    click on the tab open already draws nothing new)."""
    tab = page.get_by_role("tab", name=re.compile(re.escape(name)))
    if tab.get_attribute("aria-selected") == "true":
        return
    fragment_rerun(page, tab.click)


def test_experiment_detail_and_the_payload_items(dashboard: str, page: Any, seen: dict) -> None:
    run = STATE["run"]
    open_page(page, experiment_url(dashboard, run, FIRST))
    page.get_by_role("heading", name="Item drill-down").wait_for()
    open_tab(page, "[check]")  # only the open tab is drawn: a fragment run
    text_only(page, "Experiment detail", f"Hi {LINK} {IMAGE} {COLOUR}")
    open_page(page, experiment_url(dashboard, run, tab="distributions"))  # one view at a time
    page.locator("svg.score-histograms text").first.wait_for()
    text_only(page, "Experiment detail, the distributions")
    open_page(page, experiment_url(dashboard, run, tab="agreement"))
    page.get_by_text(f"Labels from column {LABEL_COLUMN}").wait_for()  # the label picker's
    text_only(page, "Experiment detail, the agreement")
    open_page(page, experiment_url(dashboard, run, FAILING))
    open_tab(page, "[check]")  # only the open tab is drawn: a fragment run
    page.get_by_text("Failed at preprocess").filter(visible=True).first.wait_for()
    text_only(page, "Experiment detail, a failed item", "output must be a string")
    open_page(page, experiment_url(dashboard, run, LONG_ID))
    text_only(page, "Experiment detail, the long item", "x" * 200)


def test_experiment_detail_of_the_imported_experiment(
    dashboard: str, page: Any, seen: dict
) -> None:
    imported = STATE["imported"]
    open_page(page, experiment_url(dashboard, imported, FIRST))
    open_tab(page, "[judge]")
    page.get_by_text("analyze · prompt", exact=True).click()
    page.get_by_text("Judge execution").filter(visible=True).first.wait_for()
    text_only(page, "an imported item's judge steps", f"Judged {LINK}", f"Prompt {LINK}")
    open_page(page, experiment_url(dashboard, imported, ROWS[1]["id"]))
    open_tab(page, "[judge]")
    text_only(page, "an imported item's failure", "Failed at analyze [x](http")


def test_failures(dashboard: str, page: Any, seen: dict) -> None:
    for experiment_id in (STATE["run"], STATE["imported"]):
        open_page(page, f"{dashboard}/failures?experiment={experiment_id}")
        page.get_by_role("heading", name="Failures").wait_for()
        for title in page.locator('[data-testid="stExpander"] summary').all():
            title.click()
        shown = "got dict" if experiment_id == STATE["run"] else f"Recovered {LINK}"
        text_only(page, f"Failures of {experiment_id}", shown)


def test_judge_usage(dashboard: str, page: Any, seen: dict) -> None:
    open_page(page, f"{dashboard}/judge_usage?experiment={STATE['imported']}")
    page.get_by_role("heading", name="Judge usage").wait_for()
    charts = page.locator('[data-testid="stPlotlyChart"] .main-svg')
    charts.nth(3).wait_for()  # four: no price is known for the model, a sentence says so
    page.get_by_text("No price known for model").wait_for()
    text_only(page, "Judge usage")
    # The model, as text: on the bars' axis its label is shortened (whole in the hover).
    page.locator("svg").get_by_text(JUDGE_MODEL[:15]).first.wait_for()


def test_compare(dashboard: str, page: Any, seen: dict) -> None:
    query = urllib.parse.urlencode(
        {
            "baseline": STATE["imported"],
            "candidates": STATE["run"],
            "scorer": "tone-scorer",
            "item": FIRST,
        }
    )
    open_page(page, f"{dashboard}/compare?{query}")
    page.get_by_role("heading", name="Judge usage").wait_for()
    page.locator(".word-diff").first.wait_for()
    text_only(page, "Compare", EXPERIMENT[:5], f"Reason {LINK}")


def test_scorers_playground(dashboard: str, page: Any, seen: dict) -> None:
    open_page(page, f"{dashboard}/scorers")
    choose(page, "Scorer", "Exact Match")
    for label, value in (
        ("Input", EVERYTHING),
        ("Output", f"Hi {EVERYTHING}"),
        ("Ground truth (optional)", "x" * 5000),
    ):
        box = page.get_by_role("textbox", name=label, exact=True)
        box.fill(value)
        rerun(page, lambda box=box: box.press("Control+Enter"))
    rerun(page, page.get_by_role("button", name="Run", exact=True).click)
    page.get_by_text("does not equal the ground truth").wait_for(timeout=TIMEOUT)
    text_only(page, "the Scorers playground")


def test_datasets_page_with_the_payload_dataset(dashboard: str, page: Any, seen: dict) -> None:
    open_page(page, f"{dashboard}/datasets")
    choose(page, "Look inside", named(DATASET))
    text_only(page, "Datasets")
