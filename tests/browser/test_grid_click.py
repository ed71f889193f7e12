"""The results grid in a real browser: a click on a cell of a row opens that item's drill-down
and puts it in the URL; so does Enter on a row reached by the keyboard (AppTest sends the
click's event; only a browser clicks the table)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from core.records import ExperimentConfig, ScorerSpec
from core.service import Service

from ._streamlit import GRID, fragment_rerun, grid_clicker, grid_row, open_page


def test_a_click_on_a_grid_cell_opens_its_item(
    page: Any, tmp_path: Path, fresh_dashboard: Any
) -> None:
    with fresh_dashboard(tmp_path) as url:
        service = Service(f"sqlite:///{tmp_path / 'scorelab.db'}")
        data = b"id,question,answer,category\n" + b"".join(
            b"i%03d,question %d,%s %d,%s\n"
            % (n, n, b"right" if n % 2 else b"wrong", n, [b"Law", b"Health"][n % 2])
            for n in range(12)
        )
        data += b"i012,<img src=x onerror=document.title='x'> <b>bold</b>,right,Law\n"
        dataset = service.import_dataset("grid.csv", data)
        experiment_id = service.start_experiment(
            ExperimentConfig(
                dataset_id=dataset.id,
                scorers=[ScorerSpec(scorer_id="checks.includes", options={"value": "right"})],
            )
        )
        assert service.wait(experiment_id, timeout=60).status == "completed"
        service.store.close()
        open_page(page, f"{url}/experiment?experiment={experiment_id}&label=")
        page.get_by_text("Click a row of the grid to open its item here.").wait_for()
        assert fragment_rerun(page, grid_clicker(page, 3)) == 0  # the page not rerun
        page.get_by_text("Item i003").wait_for()
        assert "item=i003" in page.evaluate("location.href")
        # The item's input, in the drill-down beside the grid (its texts' boxes).
        page.locator(".scorelab-text", has_text="question 3").first.wait_for()
        # The row opened is marked; its score cell drawn as the grid colours it.
        assert "open" in (grid_row(page, 3).get_attribute("class") or "")
        score = grid_row(page, 3).locator("td").first
        assert score.inner_text() == "1.000"  # i003: "right 3" includes "right"
        assert score.evaluate("td => getComputedStyle(td).backgroundColor") == "rgb(99, 190, 123)"
        assert grid_row(page, 2).locator("td").first.inner_text() == "0.000"
        # The keyboard: Tab reaches a row, the arrows move along, Enter opens.
        grid_row(page, 5).focus()
        page.keyboard.press("ArrowDown")
        page.keyboard.press("ArrowDown")
        assert grid_row(page, 7).evaluate("tr => tr === tr.getRootNode().activeElement")
        assert fragment_rerun(page, lambda: page.keyboard.press("Enter")) == 0
        page.get_by_text("Item i007").wait_for()
        assert "item=i007" in page.evaluate("location.href")
        # A cell's text is drawn as text: markup shows as typed, and nothing of it runs.
        markup = page.locator(f"{GRID} td", has_text="<img src=x onerror=")
        assert markup.count() == 1 and "<b>bold</b>" in markup.inner_text()
        assert page.locator(f"{GRID} img, {GRID} b").count() == 0
        assert page.title() != "x"
