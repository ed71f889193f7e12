"""Issue 21 items 1, 6 and 8 in a real browser: the experiment page's views (a tab switch), a
row click opening the drill-down beside the grid without rerunning the page (nor the grid: the
drill-down's own fragment), the next item by button and by key, previous/next across the
grid's pages, the reviewer's name kept across a reload, and the New experiment page's
duplicate-start guard."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from core.records import ExperimentConfig, ScorerSpec
from core.service import Service
from core.service.views import WHOLE_ITEM

from ._streamlit import (
    GRID,
    TIMEOUT,
    choose,
    fragment_rerun,
    fragments_rerun,
    grid_clicker,
    in_view,
    open_page,
    rerun,
)

ROW_HEIGHT = 35
"""Pixels per row (and for the header) of the results grid (pages/ui/table.css)."""
DATA = b"id,question,answer,category\n" + b"".join(
    b"i%03d,question %d,%s %d,%s\n"
    % (n, n, b"right" if n % 2 else b"wrong", n, [b"Law", b"Health"][n % 2])
    for n in range(30)
)


def no_exception(page: Any) -> None:
    assert page.locator('[data-testid="stException"]').count() == 0


def stored_experiment(tmp_path: Path, data: bytes = DATA) -> str:
    service = Service(f"sqlite:///{tmp_path / 'scorelab.db'}")
    dataset = service.import_dataset("layout.csv", data)
    experiment_id = service.start_experiment(
        ExperimentConfig(
            dataset_id=dataset.id,
            scorers=[ScorerSpec(scorer_id="checks.includes", options={"value": "right"})],
        )
    )
    assert service.wait(experiment_id, timeout=60).status == "completed"
    service.store.close()
    return experiment_id


def row_clicker(page: Any, row: int) -> Any:
    """A click on the grid's row `row` (from 0), the grid scrolled into view first."""
    return grid_clicker(page, row)


def click_row(page: Any, row: int) -> int:
    """Click the grid's row `row` (from 0); returns the full-page runs it caused."""
    return fragment_rerun(page, row_clicker(page, row))


def item_input(page: Any, text: str) -> None:
    page.locator(".scorelab-text", has_text=re.compile(f"^{text}$")).first.wait_for()


def test_tabs_drilldown_beside_the_grid_and_next_item(
    page: Any, tmp_path: Path, fresh_dashboard: Any
) -> None:
    with fresh_dashboard(tmp_path) as url:
        experiment_id = stored_experiment(tmp_path)
        open_page(page, f"{url}/experiment?experiment={experiment_id}")
        page.get_by_text("Click a row of the grid to open its item here.").wait_for()
        assert "tab=results" in page.url

        # A tab switch: only that view is drawn, and the URL keeps it.
        def view(name: str) -> Any:
            views = page.locator('[data-testid="stButtonGroup"]').first
            return views.get_by_text(name, exact=True)

        rerun(page, view("Distributions").click)
        page.locator("svg.score-histograms rect").first.wait_for()  # one SVG, no plotly
        assert page.locator(GRID).count() == 0
        assert "tab=distributions" in page.url
        rerun(page, view("Results").click)
        page.get_by_text("Click a row of the grid to open its item here.").wait_for()

        # A row click opens the item beside the grid, rerunning the drill-down's fragment
        # only: not the one of the results view (the grid), which a filter reruns.
        clicked = fragments_rerun(page, row_clicker(page, 3))
        page.get_by_text("Item i003").wait_for()
        item_input(page, "question 3")
        assert "item=i003" in page.url
        grid = page.locator(GRID).bounding_box()
        heading = page.get_by_role("heading", name="Item drill-down").bounding_box()
        assert heading["x"] >= grid["x"] + grid["width"]  # to its right, not below it
        assert heading["y"] < grid["y"] + grid["height"]  # level with it, not under it
        assert grid["height"] >= ROW_HEIGHT * 21  # 20 rows and more in sight

        # Next item by button, then by key (J), previous by K.
        next_button = page.get_by_role("button", name=re.compile("^Next item"))
        assert fragments_rerun(page, next_button.click) == clicked  # the drill-down again
        page.get_by_text("Item i004").wait_for()
        item_input(page, "question 4")
        assert "item=i004" in page.url
        page.evaluate("document.activeElement && document.activeElement.blur()")
        assert fragment_rerun(page, lambda: page.keyboard.press("j")) == 0
        page.get_by_text("Item i005").wait_for()
        assert fragment_rerun(page, lambda: page.keyboard.press("k")) == 0
        page.get_by_text("Item i004").wait_for()
        assert "item=i004" in page.url and "tab=results" in page.url

        # The Filters box opens (its widgets are drawn only then), and a filter reruns the
        # results view: another fragment than a row click's. The box stays open meanwhile.
        assert page.get_by_text("Failed only", exact=True).count() == 0
        opened = fragments_rerun(page, in_view(page, page.get_by_text("Filters", exact=True)).click)
        assert opened != clicked
        failed_only = page.get_by_text("Failed only", exact=True)
        assert fragments_rerun(page, failed_only.click) == opened
        assert "failed=1" in page.url and failed_only.is_visible()
        assert fragments_rerun(page, failed_only.click) == opened  # back to every item
        assert "failed=0" in page.url

        # The URL reproduces the view: the item open again after a reload.
        open_page(page, page.url)
        page.get_by_text("Item i004").wait_for()
        no_exception(page)


def test_a_row_click_right_after_next_opens_its_item(
    page: Any, tmp_path: Path, fresh_dashboard: Any
) -> None:
    """The audit's bug: after previous/next moved the item, the next row click (a pointer
    coming straight from the button) was ignored: it opened nothing."""
    with fresh_dashboard(tmp_path) as url:
        experiment_id = stored_experiment(tmp_path)
        open_page(page, f"{url}/experiment?experiment={experiment_id}")
        page.get_by_text("Click a row of the grid to open its item here.").wait_for()
        assert click_row(page, 2) == 0
        page.get_by_text("Item i002").wait_for()
        next_button = page.get_by_role("button", name=re.compile("^Next item"))
        assert fragment_rerun(page, next_button.click) == 0
        page.get_by_text("Item i003").wait_for()
        # One click on another row, right after: its item opens.
        assert click_row(page, 6) == 0
        page.get_by_text("Item i006", exact=True).wait_for(timeout=10_000)
        assert "item=i006" in page.url
        # Back to the row of the first click (the grid's selection then): it opens again.
        assert fragment_rerun(page, next_button.click) == 0
        page.get_by_text("Item i007").wait_for()
        assert click_row(page, 2) == 0
        page.get_by_text("Item i002", exact=True).wait_for(timeout=10_000)
        # And the row of the item open (selected in the grid before "next"): it opens too.
        assert fragment_rerun(page, next_button.click) == 0
        page.get_by_text("Item i003").wait_for()
        assert click_row(page, 2) == 0
        page.get_by_text("Item i002", exact=True).wait_for(timeout=10_000)
        no_exception(page)


PAGED = b"id,question,answer,category\n" + b"".join(
    b"i%03d,question %d,%s %d,Law\n" % (n, n, b"right" if n % 2 else b"wrong", n) for n in range(60)
)
"""60 items: two pages of the grid (50 a page)."""


def test_previous_and_next_cross_the_grid_pages(
    page: Any, tmp_path: Path, fresh_dashboard: Any
) -> None:
    with fresh_dashboard(tmp_path) as url:
        experiment_id = stored_experiment(tmp_path, PAGED)
        open_page(page, f"{url}/experiment?experiment={experiment_id}&tab=results&item=i049")
        page.get_by_text("Item i049").wait_for()  # the first page's last row
        page.get_by_text("60 of 60 items · page 1 of 2").wait_for()

        # Next at the page's last row: the next page's first item, the grid on that page.
        next_button = page.get_by_role("button", name=re.compile("^Next item"))
        assert fragment_rerun(page, next_button.click) == 0  # the results view, not the page
        page.get_by_text("Item i050").wait_for()
        item_input(page, "question 50")
        page.get_by_text("60 of 60 items · page 2 of 2").wait_for()
        page_box = page.get_by_role("spinbutton", name="Page")
        assert page_box.input_value() == "2"
        assert all(part in page.url for part in ("item=i050", "page=2", "tab=results"))

        # Previous at the page's first row: back to the first page's last item.
        previous = page.get_by_role("button", name=re.compile("^Previous item"))
        assert fragment_rerun(page, previous.click) == 0
        page.get_by_text("Item i049").wait_for()
        page.get_by_text("60 of 60 items · page 1 of 2").wait_for()
        assert page_box.input_value() == "1"
        assert all(part in page.url for part in ("item=i049", "page=1", "tab=results"))

        # Within a page, previous/next step as before (the drill-down only).
        assert fragment_rerun(page, previous.click) == 0
        page.get_by_text("Item i048").wait_for()

        # The URL reproduces it: page 2 and its item after a reload.
        assert fragment_rerun(page, next_button.click) == 0
        assert fragment_rerun(page, next_button.click) == 0
        page.get_by_text("Item i050").wait_for()
        open_page(page, page.url)
        page.get_by_text("Item i050").wait_for()
        page.get_by_text("60 of 60 items · page 2 of 2").wait_for()
        no_exception(page)


FIRST_PAINT = """
window.firstNames = [];
window.reviewingAs = [];
new MutationObserver(() => {
  for (const field of document.querySelectorAll('input[aria-label^="Your name"]')) {
    if (!field.dataset.seen) {
      field.dataset.seen = "1";
      requestAnimationFrame(() => window.firstNames.push(field.value));
    }
  }
  for (const button of document.querySelectorAll('button')) {
    if (!button.dataset.seen && button.textContent.includes("Reviewing as")) {
      button.dataset.seen = "1";
      requestAnimationFrame(() => window.reviewingAs.push(button.textContent));
    }
  }
}).observe(document, {subtree: true, childList: true});
"""
"""Records, at the first frame drawn after it appears, each "Your name" field's value and
each "Reviewing as" button's text: what a person sees first, not what a later moment fills."""


def test_the_reviewer_name_is_kept_across_a_reload(
    page: Any, tmp_path: Path, fresh_dashboard: Any
) -> None:
    with fresh_dashboard(tmp_path) as url:
        experiment_id = stored_experiment(tmp_path)
        open_page(page, f"{url}/experiment?experiment={experiment_id}&item=i002")
        page.get_by_text("Item i002").wait_for()
        name = page.get_by_role("textbox", name="Your name (for your reviews)")
        name.fill("Ana Ng")
        fragment_rerun(page, lambda: name.press("Enter"))
        page.wait_for_function(
            "() => document.cookie.includes('scorelab_reviewer=Ana%20Ng')", timeout=TIMEOUT
        )
        page.add_init_script(FIRST_PAINT)
        open_page(page, f"{url}/experiment?experiment={experiment_id}&item=i002")  # a reload
        page.get_by_text("Item i002").wait_for()
        # Drawn with the name on its first paint: the name as a button's label (Streamlit's
        # text field is drawn empty, then filled), no empty name field on the way.
        page.get_by_role("button", name=re.compile("Reviewing as Ana Ng")).wait_for()
        page.wait_for_function("() => window.reviewingAs.length > 0")
        drawn = page.evaluate("window.reviewingAs")  # with its icons' ligature names
        assert drawn and all("Reviewing as Ana Ng" in text for text in drawn), drawn
        assert page.evaluate("window.firstNames") == []
        # The field, in the button's popover, holds it too (to change it).
        page.get_by_role("button", name=re.compile("Reviewing as Ana Ng")).click()
        field = page.get_by_role("textbox", name="Your name (for your reviews)")
        assert field.input_value() == "Ana Ng"
        page.keyboard.press("Escape")
        # The whole item's verdict is shut at first (its form drawn only when open).
        shut = in_view(page, page.get_by_text("Verdict on the whole item", exact=True))
        fragment_rerun(page, shut.click)
        verdict = in_view(page, page.get_by_role("button", name="✗ Item is wrong"))
        # A save reruns the page, not only the drill-down (a fragment nested in the grid's):
        # the grid's `reviewed` column must show the verdict just given. `rerun` waits for a
        # full-page run after the click (none: a timeout).
        rerun(page, verdict.click)
        page.get_by_text("Verdict on the whole item · yours: wrong").wait_for()
        service = Service(f"sqlite:///{tmp_path / 'scorelab.db'}")
        (saved,) = service.reviews(experiment_id, "i002")
        assert (saved.scorer_id, saved.verdict, saved.reviewer) == (WHOLE_ITEM, "wrong", "Ana Ng")
        service.store.close()
        no_exception(page)


def test_a_second_start_of_a_running_configuration_asks_first(
    page: Any, tmp_path: Path, fresh_dashboard: Any
) -> None:
    with fresh_dashboard(tmp_path) as url:
        service = Service(f"sqlite:///{tmp_path / 'scorelab.db'}")
        rows = b"".join(b"q%d,answer number %d\n" % (n, n) for n in range(40_000))
        service.import_dataset("long.csv", b"question,answer\n" + rows)
        before = len(service.list_experiments())
        open_page(page, f"{url}/new_experiment")
        choose(page, "Dataset", re.compile("long"))
        page.get_by_text(re.compile("scorer runs")).first.wait_for()
        start = page.get_by_role("button", name="Start experiment")
        start.dblclick()  # two clicks at once: one run
        page.get_by_role("heading", name="Running").wait_for(timeout=TIMEOUT)
        assert len(service.list_experiments()) == before + 1
        # The progress is drawn under the Start button, not at the top of the page.
        progress = page.get_by_role("heading", name="Running").bounding_box()
        button = page.get_by_role("button", name="Start experiment").bounding_box()
        assert progress["y"] > button["y"]
        # Start again while it runs: a question, not a second run.
        rerun(page, page.get_by_role("button", name="Start experiment").click)
        page.get_by_text(re.compile("is running with this same configuration")).wait_for()
        assert page.get_by_role("button", name="Start experiment").is_disabled()
        assert len(service.list_experiments()) == before + 1
        rerun(page, page.get_by_role("button", name="Don't start").click)
        assert page.get_by_text(re.compile("same configuration")).count() == 0
        assert len(service.list_experiments()) == before + 1
        page.get_by_role("button", name="Cancel").first.click()  # free the machine
        service.store.close()
        no_exception(page)
