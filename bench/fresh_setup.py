"""Fresh-clone set-up: seconds from `make dashboard` on a new clone, with empty package caches,
to the first page drawn in Chromium.

    python bench/fresh_setup.py [--ref REV] [--keep]

Clones this repository at REV (default HEAD) into a temporary folder, runs `make dashboard` there
with empty pip and uv caches (so every package is downloaded, as on a new machine) and a free
port, then waits for the server's health check and for the Experiments page to be drawn in
Debian's Chromium. Prints the install, server-start and first-page times. The README promises
under a minute on this machine. Needs the network to the package registries.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=1) as response:
            return response.status == 200
    except OSError:
        return False


def first_page_seconds(url: str) -> float:
    from playwright.sync_api import sync_playwright

    started = time.perf_counter()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=["--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update",
                  "--disable-sync"],
        )  # fmt: skip
        page = browser.new_page()
        page.goto(url)
        page.get_by_role("heading", name="Experiments").wait_for(timeout=120_000)
        browser.close()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ref", default="HEAD", help="the commit to clone (default HEAD)")
    parser.add_argument("--keep", action="store_true", help="keep the clone and its caches")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="scorelab-fresh-"))
    clone = work / "scorelab"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    subprocess.run(["git", "-C", str(clone), "checkout", "-q", args.ref], check=True)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    environment = {
        **os.environ,
        "PIP_CACHE_DIR": str(work / "pip-cache"),
        "UV_CACHE_DIR": str(work / "uv-cache"),
        "STREAMLIT_SERVER_PORT": str(port),
        "STREAMLIT_SERVER_ADDRESS": "127.0.0.1",
    }
    environment.pop("VIRTUAL_ENV", None)
    print(f"load before: {Path('/proc/loadavg').read_text().strip()}")
    started = time.perf_counter()
    log = (work / "make.log").open("wb")
    process = subprocess.Popen(
        ["make", "dashboard"], cwd=clone, env=environment, stdout=log, stderr=log,
        start_new_session=True,
    )  # fmt: skip
    installed = None
    try:
        while not healthy(url):
            stamps = (clone / ".venv" / ".runtime", clone / ".venv" / ".installed")
            if installed is None and any(stamp.exists() for stamp in stamps):
                installed = time.perf_counter() - started  # make's stamp: install finished
            if process.poll() is not None:
                sys.exit(f"make dashboard exited with {process.returncode}; see {work}/make.log")
            time.sleep(0.2)
        serving = time.perf_counter() - started
        page = first_page_seconds(url)
        total = time.perf_counter() - started
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)
    commit = subprocess.check_output(
        ["git", "-C", str(clone), "log", "-1", "--format=%h %s"], text=True
    ).strip()
    print(f"ref {args.ref}: {commit[:90]}")
    print(f"  packages installed                      {installed or float('nan'):6.1f} s")
    print(f"  server healthy                          {serving:6.1f} s")
    print(f"  first page drawn in Chromium            {total:6.1f} s  (page itself {page:.1f} s)")
    print(f"  target: under 60 s -> {'ok' if total < 60 else 'MISSED'}")
    print(f"load after: {Path('/proc/loadavg').read_text().strip()}")
    if args.keep:
        print(f"kept: {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
