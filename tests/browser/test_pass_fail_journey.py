"""Issue 21 item 4 in a real browser: a threshold set on the experiment page gives the verdict and
the pass rate above the grid and a ✓/✗ column in it, and stays with the experiment (a reload, a
second threshold)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from core.records import ExperimentConfig, ScorerSpec
from core.service import Service

from ._streamlit import GRID, open_page, rerun

DATA = b"id,question,answer\na,q,right\nb,q,right\nc,q,right\nd,q,wrong\n"


def _marks(page: Any) -> dict[str, str]:
    """Each grid row's item id and its pass mark (the grid's columns: pass, score, id...)."""
    # The table draws after the page's run has ended: its marks, once there, are this run's.
    page.locator(f"{GRID} td", has_text=re.compile("^[✓✗]$")).first.wait_for()
    rows = page.locator(f"{GRID} tbody tr")
    found: dict[str, str] = {}
    for n in range(rows.count()):
        cells = [c.strip() for c in rows.nth(n).locator("td").all_inner_texts()]
        mark = next(c for c in cells if c in ("✓", "✗"))
        found[next(c for c in cells if c in ("a", "b", "c", "d"))] = mark
    return found


def _save_minimum(page: Any, value: str) -> None:
    field = page.get_by_label("r · min")
    field.fill(value)
    rerun(page, page.get_by_role("button", name="Save thresholds").click)


def test_a_threshold_set_on_the_page_marks_the_grid_and_says_the_verdict(
    page: Any, tmp_path: Path, fresh_dashboard: Any
) -> None:
    service = Service(f"sqlite:///{tmp_path / 'scorelab.db'}")
    dataset = service.import_dataset("pf.csv", DATA)
    experiment_id = service.start_experiment(
        ExperimentConfig(
            name="pf",
            dataset_id=dataset.id,
            scorers=[
                ScorerSpec(scorer_id="checks.includes", options={"value": "right", "id": "r"})
            ],
        )
    )
    assert service.wait(experiment_id, timeout=60).status == "completed"
    with fresh_dashboard(tmp_path) as url:
        open_page(page, f"{url}/experiment?experiment={experiment_id}&tab=results")
        page.locator(GRID).first.wait_for()
        assert page.get_by_text(re.compile("pass rate")).count() == 0  # no threshold yet
        rerun(page, page.get_by_text("Pass/fail thresholds", exact=True).click)
        _save_minimum(page, "0.8")
        verdict = page.get_by_text(re.compile(r"Failed.*pass rate 75\.0% of items"))
        verdict.first.wait_for()
        assert _marks(page) == {"a": "✓", "b": "✓", "c": "✓", "d": "✗"}
        assert service.thresholds(experiment_id)["r"].min == 0.8
        # Kept with the experiment: a reload shows the same verdict and marks.
        open_page(page, f"{url}/experiment?experiment={experiment_id}&tab=results")
        page.get_by_text(re.compile(r"Failed.*pass rate 75\.0% of items")).first.wait_for()
        assert _marks(page) == {"a": "✓", "b": "✓", "c": "✓", "d": "✗"}
        # A lower minimum: the mean 0.75 passes.
        rerun(page, page.get_by_text("Pass/fail thresholds", exact=True).click)
        _save_minimum(page, "0.7")
        page.get_by_text(re.compile("Passed")).first.wait_for()
        assert service.thresholds(experiment_id)["r"].min == 0.7
        assert page.locator('[data-testid="stException"]').count() == 0
    service.store.close()
