"""The results grid in a real browser: a click on a cell of a row opens that item's drill-down
and puts it in the URL (AppTest sets a selection; only a browser clicks the canvas grid)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from core.records import ExperimentConfig, ScorerSpec
from core.service import Service

from ._streamlit import fragment_rerun, in_view, open_page

ROW_HEIGHT = 35
"""Pixels per row (and for the header) of Streamlit's dataframe at its default size."""


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
        grid = in_view(page, page.locator('[data-testid="stDataFrame"]').last)
        box = grid.bounding_box()
        row = 3
        x = box["x"] + box["width"] / 2
        y = box["y"] + ROW_HEIGHT * (row + 1) + ROW_HEIGHT / 2  # below the header
        assert fragment_rerun(page, lambda: page.mouse.click(x, y)) == 0  # the page not rerun
        page.get_by_text("Item i003").wait_for()
        assert "item=i003" in page.evaluate("location.href")
        # The item's input, in the drill-down beside the grid (its texts' boxes).
        page.locator(".scorelab-text", has_text="question 3").first.wait_for()
