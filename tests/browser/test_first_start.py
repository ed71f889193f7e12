"""The dashboard opens in a real browser."""

from __future__ import annotations

from typing import Any


def test_dashboard_opens_and_runs_a_scorer(dashboard_url: str, page: Any) -> None:
    page.goto(dashboard_url)
    page.get_by_role("heading", name="scorelab").wait_for()
    page.get_by_text("answer-length score").wait_for()
    assert page.locator('[data-testid="stException"]').count() == 0
