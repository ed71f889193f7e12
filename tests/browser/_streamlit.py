"""What the browser tests share about driving a Streamlit page."""

from __future__ import annotations

from typing import Any

TIMEOUT = 60_000
"""Milliseconds to wait for something a script rerun or a judge call produces."""


def wait_idle(page: Any) -> None:
    """Wait for Streamlit to finish the current script run (after a short grace period for a
    rerun that was just asked for to start)."""
    page.wait_for_timeout(300)
    page.locator('[data-testid="stStatusWidget"]').wait_for(state="hidden", timeout=TIMEOUT)
