"""Browser fixtures: the dashboard served by a real `streamlit run`, driven by Playwright in
Debian's Chromium (/usr/bin/chromium; never a downloaded browser).

Without Chromium the browser tests skip with a message, except in CI (CI=true), where its
absence is a failure.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
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


def _require_chromium() -> None:
    if CHROMIUM.exists():
        return
    message = "Debian's chromium is not installed (/usr/bin/chromium): run .ci/chromium.sh"
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_healthy(url: str, process: subprocess.Popen[bytes], seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"streamlit exited early with code {process.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(f"streamlit did not become healthy at {url} within {seconds} s")


@contextlib.contextmanager
def serve_dashboard(
    folder: Path,
    *,
    address: str = "127.0.0.1",
    secrets: Path | None = None,
    script: Path = ROOT / "app.py",
) -> Iterator[str]:
    """`streamlit run app.py` on a free port of `address` (reached through 127.0.0.1), on a
    fresh SQLite database in `folder`. Its only secrets are `secrets` (default: none, whatever
    the developer keeps in ~/.streamlit or .streamlit); `script` replaces app.py."""
    _require_chromium()
    port = _free_port()
    environment = {
        **os.environ,
        "SCORELAB_DATABASE_URL": f"sqlite:///{folder / 'scorelab.db'}",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "OPENAI_API_KEY": "test-key",  # the fake judge accepts any key
    }
    command = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(script),
        "--server.headless=true",
        f"--server.port={port}",
        f"--server.address={address}",
        "--browser.gatherUsageStats=false",
        "--server.fileWatcherType=none",
        f"--secrets.files={secrets or folder / 'no-secrets.toml'}",
    ]
    with (folder / "streamlit.log").open("wb") as output:
        process = subprocess.Popen(command, cwd=ROOT, env=environment, stdout=output, stderr=output)
        url = f"http://127.0.0.1:{port}"
        try:
            _wait_healthy(url, process)
            yield url
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()


@pytest.fixture
def fresh_dashboard() -> Any:
    """`serve_dashboard`, for a test that needs a server of its own."""
    return serve_dashboard


@pytest.fixture(scope="session")
def dashboard_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The dashboard shared by the journeys (one server, one database, for the session)."""
    with serve_dashboard(tmp_path_factory.mktemp("dashboard")) as url:
        yield url


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """Debian's Chromium driven by Playwright."""
    _require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield instance
        instance.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A fresh browser page, closed after the test."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(30_000)
    yield page
    context.close()
