"""A link to a page, opened as the very first request to a fresh server, is served by app.py's
router (sections, every page), not by Streamlit's legacy `pages/` folder mode."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ._streamlit import open_page


def test_first_request_to_a_deep_link_goes_through_the_router(
    page: Any, tmp_path: Path, fresh_dashboard: Any
) -> None:
    with fresh_dashboard(tmp_path) as url:
        open_page(page, f"{url}/failures?experiment=none")
        page.get_by_role("heading", name="Failures").wait_for()
        sidebar = page.locator('[data-testid="stSidebar"]')
        sidebar.get_by_text("Setup", exact=True).wait_for()
        # Each link's text is its icon's name, then its title.
        titles = [
            text.split("\n")[-1]
            for text in sidebar.locator('[data-testid="stSidebarNavLink"]').all_inner_texts()
        ]
        assert {"Experiment detail", "Scorers", "Failures"} <= set(titles)
        assert "app" not in titles
