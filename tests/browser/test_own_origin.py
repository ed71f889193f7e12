"""The dashboard makes no request outside its own origin (issue 19, hostile finding 7), like the
HTML report: every page is opened in Chromium with every request it makes logged (documents,
scripts, fonts, images, the favicon, websockets), and each one goes to the dashboard's own
scheme, host and port. A favicon from a public font server (what `page_icon=":material/…:"`
loads) or any CDN would tell a third party about each page view and break offline use."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ._streamlit import TIMEOUT, open_page

PATHS = [
    "",
    "new_experiment",
    "experiment",
    "failures",
    "review",
    "judge_usage",
    "compare",
    "datasets",
    "scorers",
]


def test_every_page_requests_only_the_dashboards_own_origin(
    page: Any, tmp_path: Path, fresh_dashboard: Any
) -> None:
    requested: list[tuple[str, str]] = []
    page.on("request", lambda request: requested.append((request.url, request.resource_type)))
    page.on("websocket", lambda socket: requested.append((socket.url, "websocket")))
    with fresh_dashboard(tmp_path) as url:
        own = urlsplit(url)
        for path in PATHS:
            open_page(page, f"{url}/{path}")
            page.locator('[data-testid="stSidebarNavLink"]').first.wait_for(timeout=TIMEOUT)
            # The favicon is set by the page's script once it runs: wait until it is there.
            page.wait_for_function(
                "() => !!document.querySelector('link[rel~=icon]')", timeout=TIMEOUT
            )
            page.wait_for_load_state("networkidle", timeout=TIMEOUT)
        icon = page.evaluate("() => document.querySelector('link[rel~=icon]').href")
    outside = sorted(
        {
            (address, kind)
            for address, kind in requested
            if not address.startswith(("data:", "blob:"))
            and (urlsplit(address).hostname, urlsplit(address).port) != (own.hostname, own.port)
        }
    )
    assert outside == []
    assert len(requested) > len(PATHS)  # the log saw the pages' requests
    assert urlsplit(icon).hostname in (own.hostname, None) or icon.startswith("data:")
