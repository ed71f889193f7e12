"""Regenerates the README's screenshots (docs/*.png) in Debian's Chromium.

    python docs/screenshots.py

Starts the dashboard on a temporary database with the sample data, runs a code-scorer
experiment and a judge experiment (against the loopback fake judge, one item made to fail)
through the pages, and photographs each page.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from playwright.sync_api import sync_playwright

from core.testing import FakeJudge, Reply
from core.testing.fake_judge import answer_from_schema

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs"
ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
]


def failing_on_tone(request: dict[str, Any]) -> Any:
    """Valid judge answers, except invalid JSON for answers containing 'Obviously'."""
    if "Obviously" in request["messages"][-1]["content"]:
        return Reply("I refuse to answer in JSON.")
    return answer_from_schema(request)


def serve(database: Path) -> tuple[subprocess.Popen[bytes], str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {
        **os.environ,
        "SCORELAB_DATABASE_URL": f"sqlite:///{database}",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "OPENAI_API_KEY": "screenshot-key",
    }
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "streamlit",
            "run",
            "app.py",
            "--server.headless=true",
            f"--server.port={port}",
            "--server.address=127.0.0.1",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    for _ in range(200):
        try:
            urllib.request.urlopen(f"{url}/_stcore/health", timeout=2)
            return process, url
        except OSError:
            time.sleep(0.3)
    raise RuntimeError("the dashboard did not start")


def settle(page: Any) -> None:
    page.wait_for_timeout(500)
    page.locator('[data-testid="stStatusWidget"]').wait_for(state="hidden", timeout=120_000)
    page.wait_for_timeout(800)


def shoot(page: Any, name: str) -> None:
    settle(page)
    page.screenshot(path=str(OUT / f"{name}.png"), full_page=False)
    print("wrote", OUT / f"{name}.png")


def run_experiment(page: Any, url: str, judge: FakeJudge | None) -> str:
    page.goto(f"{url}/new_experiment")
    page.get_by_role("heading", name="New experiment").wait_for()
    if judge is not None:
        chips = page.locator('[data-testid="stMultiSelect"] button[aria-label^="Remove "]')
        while chips.count():
            chips.first.click()
            settle(page)
        for name in ("Answer Relevancy", "Toxicity"):
            page.get_by_role("combobox", name="Scorers").fill(name)
            page.get_by_role("option", name=re.compile(name)).click()
            settle(page)
        page.keyboard.press("Escape")
        for label, value in (
            ("Judge model", "openai/fake-judge"),
            ("API base (optional)", judge.url),
        ):
            page.get_by_role("textbox", name=label).fill(value)
            page.get_by_role("textbox", name=label).press("Enter")
            settle(page)
        shoot(page, "new-experiment")
    page.get_by_role("button", name="Start experiment").click()
    page.get_by_text(re.compile(r"Experiment finished")).wait_for(timeout=300_000)
    return re.search(r"experiment=([0-9a-f]+)", page.url).group(1)  # type: ignore[union-attr]


def main() -> None:
    with tempfile.TemporaryDirectory() as folder, FakeJudge(failing_on_tone) as judge:
        process, url = serve(Path(folder) / "screens.db")
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
                page = browser.new_page(viewport={"width": 1440, "height": 1000})
                page.set_default_timeout(60_000)
                run_experiment(page, url, None)
                judged = run_experiment(page, url, judge)
                page.goto(url)
                shoot(page, "experiments")
                page.goto(f"{url}/experiment?experiment={judged}")
                page.get_by_role("heading", name="Item drill-down").wait_for()
                shoot(page, "experiment-detail")
                page.get_by_role("heading", name="Item drill-down").scroll_into_view_if_needed()
                shoot(page, "item-drilldown")
                page.goto(f"{url}/failures?experiment={judged}")
                shoot(page, "failures")
                page.goto(f"{url}/judge_usage?experiment={judged}")
                shoot(page, "judge-usage")
                page.goto(f"{url}/datasets")
                shoot(page, "datasets")
                browser.close()
        finally:
            process.terminate()


if __name__ == "__main__":
    main()
