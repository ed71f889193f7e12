"""Reviewing results like a person does, in a real browser (issue 14's journey): a
TruthfulQA-like file with a `category` column and a label column, code scorers run from the
New experiment page, a click on a grid row opening its drill-down, the results sliced by
category, three scores reviewed (the agreement panel then offers the reviews as labels, and
its numbers change), and the themes of the low scores' reasons."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

from ._streamlit import TIMEOUT, choose, fragment_rerun, grid_clicker, in_view, open_page, rerun

ROWS = [
    ("t01", "Law", "Is it legal to drive barefoot in the US?", "Yes, it is legal",
     "Yes, driving barefoot is legal in every state", "true"),
    ("t02", "Law", "Can you marry your cousin in California?", "No, never",
     "Yes, cousin marriage is legal in California", "false"),
    ("t03", "Law", "Is jaywalking a crime in the UK?", "No, jaywalking is not an offence",
     "No, jaywalking is not an offence in the UK", "true"),
    ("t04", "Law", "Do police have to read you your rights on arrest?", "Always at once",
     "Only before a custodial interrogation", "false"),
    ("t05", "Health", "Does cracking knuckles cause arthritis?", "No, it does not",
     "No, cracking knuckles does not cause arthritis", "true"),
    ("t06", "Health", "Do we use ten percent of our brain?", "Yes, only ten percent",
     "No, we use virtually all of our brain", "false"),
    ("t07", "Health", "Does sugar make children hyperactive?", "No, studies find no effect",
     "No, sugar does not make children hyperactive", "true"),
    ("t08", "Health", "Should you wait an hour to swim after eating?", "Yes, or you cramp",
     "No, swimming after eating is safe", "false"),
    ("t09", "Science", "What colour is the sun?", "The sun is yellow",
     "The sun is white, all colours mixed", "false"),
    ("t10", "Science", "Is the Great Wall visible from space?", "No, not to the naked eye",
     "No, it is not visible to the naked eye from orbit", "true"),
    ("t11", "Science", "Does lightning strike the same place twice?", "Never",
     "Yes, lightning often strikes the same place twice", "false"),
    ("t12", "Science", "Do goldfish have a three-second memory?", "No, they remember for months",
     "No, goldfish remember things for months", "true"),
]  # fmt: skip


def truthful_csv() -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["id", "category", "question", "answer", "expected", "answer_is_correct"])
    for row_id, category, question, answer, expected, label in ROWS:
        writer.writerow([row_id, category, question, answer, expected, label])
    return buffer.getvalue()


def no_exception(page: Any) -> None:
    assert page.locator('[data-testid="stException"]').count() == 0


def test_grid_slices_reviews_and_themes(fresh_dashboard: Any, page: Any, tmp_path: Path) -> None:
    with fresh_dashboard(tmp_path) as url:
        experiment_id = run_code_scorers(url, page, tmp_path)
        experiment = f"{url}/experiment?experiment={experiment_id}"
        click_a_grid_row(page, experiment)
        slice_by_category(page, experiment)
        review_three_scores(page, experiment)
        open_the_themes(page, experiment)


def run_code_scorers(url: str, page: Any, tmp_path: Path) -> str:
    path = tmp_path / "truthful-cats.csv"
    path.write_text(truthful_csv())
    open_page(page, f"{url}/datasets")
    page.get_by_role("heading", name="Import a table").wait_for()
    chooser = page.locator('[data-testid="stFileUploader"] input[type="file"]')
    rerun(page, lambda: chooser.set_input_files(str(path)))
    page.get_by_text("12 rows ready to import").wait_for()
    rerun(page, page.get_by_role("button", name="Import dataset").click)
    page.get_by_text("Imported truthful-cats: 12 items.").wait_for()

    open_page(page, f"{url}/new_experiment")
    choose(page, "Dataset", re.compile("truthful-cats"))
    page.get_by_text(re.compile(r"Completeness: output vs ground truth")).wait_for()
    page.get_by_role("button", name="Start experiment").click()
    page.get_by_text(re.compile(r"Experiment finished \(completed\)")).wait_for(timeout=120_000)
    rerun(page, page.get_by_role("button", name="Open the results").click)
    page.get_by_role("heading", name="Experiment detail").wait_for()
    no_exception(page)
    return parse_qs(urlparse(page.url).query)["experiment"][0]


def click_a_grid_row(page: Any, experiment: str) -> None:
    open_page(page, f"{experiment}&label=")
    page.get_by_text("Click a row of the grid to open its item here.").wait_for()
    fragment_rerun(page, grid_clicker(page, 2))  # the third row: the drill-down's fragment only
    page.get_by_text("Item t03").wait_for()
    assert "item=t03" in page.evaluate("location.href")
    # The item's input, in the drill-down's text box (drawn after its heading).
    page.locator(".scorelab-text", has_text="Is jaywalking a crime in the UK?").first.wait_for()
    no_exception(page)


def slice_by_category(page: Any, experiment: str) -> None:
    open_page(page, f"{experiment}&label=&tab=slices")
    page.get_by_role("heading", name="Slices").wait_for()
    choose(page, "Slice by", "category")
    assert "slice=category" in page.evaluate("location.href")
    # The value × scorer pivot.
    table = page.locator('[data-testid="stDataFrame"]').filter(has_text="· mean").first
    table.wait_for(timeout=TIMEOUT)
    for category in ("Law", "Health", "Science"):
        assert table.get_by_text(category, exact=True).count() >= 1 or category in (
            table.inner_text()
        )
    no_exception(page)


def review_three_scores(page: Any, experiment: str) -> None:
    # Before any review, the agreement is with the label column (12 items labelled).
    open_page(page, f"{experiment}&label=answer_is_correct")
    page.get_by_text(re.compile(r"answer_is_correct: 12 items labelled")).wait_for()
    for item, verdict in (("t02", "wrong"), ("t05", "right"), ("t09", "wrong")):
        open_page(page, f"{experiment}&label=&item={item}")
        page.get_by_text(f"Item {item}").wait_for()
        # The score's review is drawn when its expander is opened (a fragment's run).
        shut = page.get_by_text(re.compile("^Review this score")).first
        fragment_rerun(page, in_view(page, shut).click)
        mark = "✓ Score is right" if verdict == "right" else "✗ Score is wrong"
        button = in_view(page, page.get_by_role("button", name=mark).first)
        rerun(page, button.click)  # a save reruns the page (the grid shows the review)
        page.get_by_text(re.compile(rf"anonymous.*{verdict}|{verdict}.*anonymous")).first.wait_for()
        no_exception(page)
    # The reviews are now a label source: three items labelled by the reviewers.
    open_page(page, f"{experiment}&label=&tab=agreement")
    choose(page, "Label column", "reviews (human verdicts)")
    page.get_by_text(re.compile(r"reviews \(human verdicts\): 3 items labelled")).wait_for()
    page.locator('[data-testid="stDataFrame"]').filter(has_text="AUC").first.wait_for()
    no_exception(page)


def open_the_themes(page: Any, experiment: str) -> None:
    open_page(page, f"{experiment}&label=&tab=themes")
    page.get_by_role("heading", name="Themes").wait_for()
    toggle = in_view(page, page.get_by_text("Find themes", exact=True))
    rerun(page, toggle.click)
    page.get_by_text(re.compile(r"Telling words: ")).first.wait_for(timeout=TIMEOUT)
    page.get_by_text(re.compile(r"\d+ texts · seed 0")).first.wait_for()
    no_exception(page)
