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
import threading
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ._streamlit import watch_runs

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


READY = b"You can now view your Streamlit app"
"""What `streamlit run` prints once its server listens."""


class _ServerOutput(threading.Thread):
    """Copies the server's output to its log file, line by line, and says when it is ready."""

    def __init__(self, process: subprocess.Popen[bytes], log: Path) -> None:
        super().__init__(daemon=True)
        self.process = process
        self.log = log
        self.ready = threading.Event()

    def run(self) -> None:
        assert self.process.stdout is not None
        with self.log.open("wb") as output:
            for line in self.process.stdout:
                output.write(line)
                output.flush()
                if READY in line:
                    self.ready.set()
        self.ready.set()  # the server exited: whoever waits must look


def _wait_ready(url: str, server: _ServerOutput, seconds: float = 60) -> None:
    """Wait (at most `seconds`) until the server says it listens, then check its health once."""
    if not server.ready.wait(seconds):
        raise RuntimeError(f"streamlit did not start at {url} within {seconds} s")
    if server.process.poll() is not None:
        raise RuntimeError(f"streamlit exited early with code {server.process.returncode}")
    with urllib.request.urlopen(f"{url}/_stcore/health", timeout=10) as response:
        assert response.status == 200, response.status


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
    process = subprocess.Popen(
        command, cwd=ROOT, env=environment, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    server = _ServerOutput(process, folder / "streamlit.log")
    server.start()
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_ready(url, server)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
        server.join(timeout=10)  # the log is whole once the output is read to its end


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
    watch_runs(page)  # the waits read the page's script runs (tests/browser/_streamlit.py)
    yield page
    context.close()
