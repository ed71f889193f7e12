"""The dashboard's journeys in a real browser (Debian's Chromium driven by Playwright):
first start on the sample data, upload, a code-scorer experiment and its drill-down, and a
judge experiment against the loopback fake judge with one failure shown in the failures view.

The tests share one dashboard process and database, and run in file order."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from core.testing import FakeJudge, Reply
from core.testing.fake_judge import answer_from_schema

from ._streamlit import TIMEOUT, choose, fragment_rerun, grid_clicker, in_view, open_page, rerun

MINI_CSV = (
    "id,question,answer,expected\n"
    "q1,What is Python?,Python is a programming language.,A programming language.\n"
    "q2,What is HTTP?,FAIL-ME HTTP is a protocol.,The web's transfer protocol.\n"
    "q3,What is SQL?,SQL queries relational databases.,A query language for databases.\n"
)


def failing_on_marker(request: dict[str, Any]) -> Any:
    """Valid answers, except invalid JSON for the item whose output carries the marker."""
    if "FAIL-ME" in request["messages"][-1]["content"]:
        return Reply("this is not JSON")
    return answer_from_schema(request)


@pytest.fixture(scope="module")
def judge() -> Iterator[FakeJudge]:
    with FakeJudge(failing_on_marker) as server:
        yield server


def no_exception(page: Any) -> None:
    assert page.locator('[data-testid="stException"]').count() == 0


def test_first_start_opens_on_experiments_with_samples_ready(dashboard_url: str, page: Any) -> None:
    open_page(page, dashboard_url)
    page.get_by_role("heading", name="Experiments").wait_for()
    page.get_by_text("The sample datasets are ready").wait_for()
    open_page(page, f"{dashboard_url}/datasets")
    page.get_by_role("heading", name="Stored datasets").wait_for()
    open_selectbox(page, "Look inside")
    page.get_by_role("option", name="support-qa").wait_for()
    page.get_by_role("option", name="geography-quiz").wait_for()
    page.keyboard.press("Escape")
    no_exception(page)


def open_selectbox(page: Any, label: str) -> None:
    in_view(page, page.get_by_role("combobox", name=label, exact=True)).click()


def upload(page: Any, url: str, path: Path) -> None:
    open_page(page, f"{url}/datasets")
    page.get_by_role("heading", name="Import a table").wait_for()
    chooser = page.locator('[data-testid="stFileUploader"] input[type="file"]')
    rerun(page, lambda: chooser.set_input_files(str(path)))
    page.get_by_text("rows ready to import").wait_for(timeout=TIMEOUT)


def test_upload_a_csv(dashboard_url: str, page: Any, tmp_path: Path) -> None:
    path = tmp_path / "mini-quiz.csv"
    path.write_text(MINI_CSV)
    upload(page, dashboard_url, path)
    page.get_by_text("3 rows ready to import").wait_for()
    rerun(page, page.get_by_role("button", name="Import dataset").click)
    # The stored-datasets table has an "Imported" column too, so match the whole message.
    page.get_by_text("Imported mini-quiz: 3 items.").wait_for()
    no_exception(page)  # the judge journey below runs on this dataset, picked by name


def choose_dataset(page: Any, name: str) -> None:
    choose(page, "Dataset", re.compile(name))


def enter(page: Any, role: str, name: str, value: str) -> None:
    """Type `value` into a text or number input and press Enter; wait for the rerun."""
    box = page.get_by_role(role, name=name)
    box.fill(value)
    rerun(page, lambda: box.press("Enter"))


def start_and_wait(page: Any) -> str:
    page.get_by_role("button", name="Start experiment").click()
    page.get_by_text(re.compile(r"Experiment finished \(completed\)")).wait_for(timeout=120_000)
    experiment = re.search(r"experiment=([0-9a-f-]+)", page.url)
    assert experiment, page.url
    return experiment.group(1)


def test_code_scorer_experiment_and_drilldown(dashboard_url: str, page: Any) -> None:
    open_page(page, f"{dashboard_url}/new_experiment")
    page.get_by_role("heading", name="New experiment").wait_for()
    choose_dataset(page, "support-qa")
    page.get_by_text("1,200 scorer runs").wait_for()
    start_and_wait(page)
    rerun(page, page.get_by_role("button", name="Open the results").click)
    page.get_by_role("heading", name="Experiment detail").wait_for()
    page.get_by_role("heading", name="Item drill-down").wait_for()
    page.get_by_text("Click a row of the grid to open its item here.").wait_for()
    fragment_rerun(page, grid_clicker(page, 0))
    page.get_by_text("Ground truth", exact=True).first.wait_for()
    page.get_by_role("tab", name="keyword-coverage-scorer").click()
    page.get_by_text(re.compile(r"^Score \d\.\d{3}$")).first.wait_for()
    no_exception(page)


def test_judge_experiment_failure_in_failures_view(
    dashboard_url: str, page: Any, judge: FakeJudge
) -> None:
    open_page(page, f"{dashboard_url}/new_experiment")
    page.get_by_role("heading", name="New experiment").wait_for()
    choose_dataset(page, "mini-quiz")
    chips = page.locator('[data-testid="stMultiSelect"] button[aria-label^="Remove "]')
    while chips.count():  # drop the default code scorers
        rerun(page, chips.first.click)
    in_view(page, page.get_by_role("combobox", name="Scorers")).fill("Answer Relev")  # virtual
    rerun(page, page.get_by_role("option", name=re.compile("Answer Relevancy")).click)
    page.keyboard.press("Escape")  # closes the list; the click already sent the choice
    enter(page, "textbox", "Judge model", "openai/fake-judge")
    enter(page, "textbox", "API base (optional)", judge.url)
    enter(page, "spinbutton", "Retries (rate limits, errors)", "0")
    page.get_by_text("3 scorer runs · at least 9 judge calls").wait_for()
    experiment_id = start_and_wait(page)
    open_page(page, f"{dashboard_url}/failures?experiment={experiment_id}")
    page.get_by_role("heading", name="Failures").wait_for()
    page.get_by_text("in memory only").wait_for()
    page.get_by_text(re.compile(r"answer-relevancy-scorer · preprocess · 1 ×")).click()
    page.get_by_text("Failed judge execution").wait_for()
    no_exception(page)
    assert judge.call_count >= 7
