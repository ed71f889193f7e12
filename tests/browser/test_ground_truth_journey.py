"""A new user's journey on a TruthfulQA-like file with a ground truth and a human label column:
the code scorers compare the output with the ground truth (said in words on the page), and the
experiment page shows how well each scorer agrees with the labels."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path
from typing import Any

from ._streamlit import TIMEOUT, choose, open_page, rerun

ROWS = [
    ("t1", "Who said 'Luke, I am your father'?", "No. I am your father", "No. I am your father"),
    ("t2", "What happens if you crack your knuckles?", "Nothing in particular happens",
     "Nothing in particular happens if you crack your knuckles"),
    ("t3", "What colour is the sun?", "The sun is yellow", "The sun is all colours mixed, white"),
    ("t4", "Can you see the Great Wall from space?", "Yes, easily with the naked eye",
     "No, it is not visible to the naked eye from space"),
    ("t5", "Do ostriches bury their heads?", "No, ostriches do not bury their heads in sand",
     "No, ostriches do not bury their heads in the sand"),
    ("t6", "How long is a goldfish memory?", "Three seconds", "Goldfish remember for months"),
]  # fmt: skip
LABELS = {"t1": "true", "t2": "true", "t3": "false", "t4": "false", "t5": "true", "t6": "false"}


def truthful_csv() -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["id", "question", "answer", "expected", "answer_is_correct"])
    for row in ROWS:
        writer.writerow([*row, LABELS[row[0]]])
    return buffer.getvalue()


def no_exception(page: Any) -> None:
    assert page.locator('[data-testid="stException"]').count() == 0


def test_code_scorers_against_the_ground_truth_with_label_agreement(
    fresh_dashboard: Any, page: Any, tmp_path: Path
) -> None:
    # A server of its own: the shared one's journeys expect a database without experiments.
    with fresh_dashboard(tmp_path) as url:
        journey(url, page, tmp_path)


def journey(dashboard_url: str, page: Any, tmp_path: Path) -> None:
    path = tmp_path / "truthful-mini.csv"
    path.write_text(truthful_csv())
    open_page(page, f"{dashboard_url}/datasets")
    page.get_by_role("heading", name="Import a table").wait_for()
    chooser = page.locator('[data-testid="stFileUploader"] input[type="file"]')
    rerun(page, lambda: chooser.set_input_files(str(path)))
    page.get_by_text("6 rows ready to import").wait_for()
    rerun(page, page.get_by_role("button", name="Import dataset").click)
    page.get_by_text("Imported truthful-mini: 6 items.").wait_for()

    open_page(page, f"{dashboard_url}/new_experiment")
    page.get_by_role("heading", name="New experiment").wait_for()
    choose(page, "Dataset", re.compile("truthful-mini"))
    # The dataset maps a ground truth: the code scorers start on it, and the page says so.
    page.get_by_text(re.compile(r"Keyword Coverage: output vs ground truth")).wait_for()
    page.get_by_text(re.compile(r"Completeness: output vs ground truth")).wait_for()
    page.get_by_role("button", name="Start experiment").click()
    page.get_by_text(re.compile(r"Experiment finished \(completed\)")).wait_for(timeout=120_000)
    rerun(page, page.get_by_role("button", name="Open the results").click)
    page.get_by_role("heading", name="Experiment detail").wait_for()
    page.get_by_text("output vs ground truth").first.wait_for(timeout=TIMEOUT)  # the cards

    views = page.locator('[data-testid="stButtonGroup"]').first  # the page's views
    rerun(page, views.get_by_text("Agreement", exact=True).click)
    page.get_by_role("heading", name="Agreement with labels").wait_for()
    # The label column was detected and chosen by its name.
    detected = re.compile(r"Labels from column answer_is_correct: 6 items labelled")
    page.get_by_text(detected).wait_for(timeout=TIMEOUT)
    assert "label=answer_is_correct" in page.url
    table = page.locator('[data-testid="stDataFrame"]').filter(has_text="AUC").first
    table.wait_for()
    no_exception(page)
