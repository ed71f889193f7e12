"""How fast the dashboard answers in a real browser (Debian's Chromium through Playwright), at
817 items × 5 code scorers (TruthfulQA-sized, with a `category` metadata column) and at
10,000 × 5:

- the home page on a freshly started `scorelab serve` (first paint to idle);
- for every page, a page switch (a click on its sidebar link until the script run it asked
  for has ended), twice: the first visit since the start, then a second one;
- one interaction per page (a picker changed, a filter typed), until its run has ended.

"Idle" is what the browser tests wait for (tests/browser/_streamlit.py): the server said the
run the click asked for has finished and no other run follows, then the browser drew a frame.

    python bench/browser_pages.py [--sizes 817,10000] [--data DIR]

Each figure comes with the CPU seconds the server process used meanwhile (from /proc): on a
machine shared with other work the wall clock varies twofold from run to run, the CPU time
much less.

Targets (issue 14): a page switch < 1.0 s and an interaction < 0.5 s at 817 × 5; < 2 s and
< 1 s at 10,000 × 5; the home page after a restart < 3 s. The load average is printed with the
figures: on a busy 2-core machine they mean little without it.

The databases are built through the service (two experiments of five code scorers on one
dataset, so Compare has a pair); `--data DIR` keeps them there and reuses them on the next run.
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.browser._streamlit import next_frame, open_page, rerun, watch_runs  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SCORELAB = Path(sys.executable).with_name("scorelab")
CODE_SCORERS = (
    "keyword-coverage-scorer",
    "completeness-scorer",
    "content-similarity-scorer",
    "textual-difference-scorer",
    "tone-scorer",
)
CATEGORIES = (
    "Misconceptions",
    "Law",
    "Health",
    "Sociology",
    "Economics",
    "Fiction",
    "Paranormal",
    "Conspiracies",
    "Stereotypes",
    "History",
    "Language",
    "Psychology",
    "Weather",
    "Nutrition",
)
TEXT = (
    "the people who study this say that most claims about it are wrong and the evidence "
    "shows a simple answer with some exceptions depending on where you live and when"
)
WORDS = TEXT.split()
TARGETS = {817: (1.0, 0.5), 10_000: (2.0, 1.0)}
"""Items → (page switch, interaction) targets in seconds."""
HOME_TARGET = 3.0


def truthfulqa_like(items: int, seed: int = 3) -> bytes:
    """Question, best answer, correct answer, `category` and `answer_is_correct` columns."""
    rng = random.Random(seed)
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["id", "question", "answer", "expected", "category", "answer_is_correct"])

    def sentence(low: int, high: int) -> str:
        return " ".join(rng.choice(WORDS) for _ in range(rng.randint(low, high))).capitalize()

    for n in range(items):
        writer.writerow(
            [
                f"q{n:05d}",
                sentence(6, 18) + "?",
                sentence(5, 30) + ".",
                sentence(5, 20) + ".",
                rng.choice(CATEGORIES),
                rng.choice(("true", "false")),
            ]
        )
    return out.getvalue().encode()


def build_database(path: Path, items: int) -> None:
    """A dataset of `items` rows and two finished experiments of the five code scorers on it,
    made in a child process (the service is process-wide, one database per process)."""
    code = f"""
import os, time
import core.service
from core.records import ExperimentConfig, ScorerSpec
service = core.service.get_service()
data = open({str(path) + ".csv"!r}, "rb").read()
dataset = service.import_dataset("truthfulqa-{items}.csv", data)
for name in ("baseline", "candidate"):
    started = time.perf_counter()
    experiment = service.start_experiment(ExperimentConfig(
        dataset_id=dataset.id, name=f"{{name}} {items}",
        scorers=[ScorerSpec(scorer_id=s) for s in {CODE_SCORERS!r}], concurrency=8))
    progress = service.wait(experiment, timeout=3600)
    print(f"  {{name}}: {{progress.counts.done:,}} runs in {{time.perf_counter() - started:.1f}} s")
"""
    Path(str(path) + ".csv").write_bytes(truthfulqa_like(items))
    env = {**os.environ, "SCORELAB_DATABASE_URL": f"sqlite:///{path}", "PYTHONPATH": str(ROOT)}
    subprocess.run([sys.executable, "-c", code], check=True, env=env, cwd=ROOT)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def serve(database: Path, log: Path) -> Iterator[tuple[str, float, int]]:
    """`scorelab serve` on `database`, started from another folder than the checkout (the
    project's .streamlit/config.toml must still apply); yields its URL and its start time."""
    port = _free_port()
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),  # this checkout's core, whatever the venv's editable install
        "SCORELAB_DATABASE_URL": f"sqlite:///{database}",
    }
    started = time.perf_counter()
    process = subprocess.Popen(
        [str(SCORELAB), "serve", "--server.headless", "true", "--server.port", str(port)],
        cwd=log.parent,
        env=env,
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its Streamlit child is stopped with it (a process group)
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2):
                    break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"scorelab serve did not start: see {log}") from None
                time.sleep(0.05)
        yield url, time.perf_counter() - started, process.pid
    finally:
        # `scorelab serve` waits on `streamlit run`: stopping the parent alone left the
        # server running (and loading the machine) after the benchmark.
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        for _ in range(100):  # the Streamlit child, until it has gone
            try:
                os.killpg(process.pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.1)
        else:
            os.killpg(process.pid, signal.SIGKILL)


class ServerClock:
    """CPU seconds the Streamlit server process has used (user + system, from /proc): a
    figure a busy machine disturbs far less than the wall clock."""

    def __init__(self, serve_pid: int) -> None:
        children = Path(f"/proc/{serve_pid}/task/{serve_pid}/children").read_text().split()
        self.pid = int(children[0]) if children else serve_pid
        self.tick = os.sysconf("SC_CLK_TCK")

    def __call__(self) -> float:
        fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / self.tick


CLOCK: list[ServerClock] = []
"""The clock of the server being measured."""


def timed(page: Any, action: Callable[[], object]) -> tuple[float, float]:
    """Seconds from `action` to the end of the run it asked for, and a frame drawn; and the
    server's CPU seconds meanwhile."""
    clock = CLOCK[-1]
    started, cpu = time.perf_counter(), clock()
    rerun(page, action, timeout=300_000)
    next_frame(page)
    return time.perf_counter() - started, clock() - cpu


def pick_other(page: Any, label: str | re.Pattern[str]) -> Callable[[], object]:
    """Open the selectbox `label` and click an option that is not the chosen one."""

    def act() -> None:
        box = page.get_by_role("combobox", name=label).first
        box.evaluate("element => element.scrollIntoView({block: 'center'})")
        box.click()
        options = page.get_by_role("option")
        options.first.wait_for()
        for n in range(options.count()):
            if options.nth(n).get_attribute("aria-selected") != "true":
                options.nth(n).click()
                return
        raise RuntimeError(f"{label}: no other option")

    return act


def type_search(page: Any) -> Callable[[], object]:
    def act() -> None:
        box = page.get_by_role("textbox", name=re.compile("^Search")).first
        box.fill("Health")
        box.press("Enter")

    return act


PAGES: list[tuple[str, str, Callable[[Any], Callable[[], object]]]] = [
    ("Experiments", "pick an experiment", lambda p: pick_other(p, "Open an experiment")),
    ("New experiment", "pick a dataset", lambda p: pick_other(p, "Dataset")),
    ("Experiment detail", "search 'Health'", type_search),
    ("Failures", "pick an experiment", lambda p: pick_other(p, "Experiment")),
    ("Judge usage", "pick an experiment", lambda p: pick_other(p, "Experiment")),
    ("Compare", "pick the baseline", lambda p: pick_other(p, "Baseline")),
    ("Datasets", "look inside another", lambda p: pick_other(p, "Look inside")),
    ("Scorers", "pick a scorer", lambda p: pick_other(p, "Scorer")),
]


def sidebar_click(page: Any, title: str) -> Callable[[], object]:
    link = page.locator('[data-testid="stSidebarNavLink"]').filter(
        # The link's text starts with its icon's ligature name ("science").
        has_text=re.compile(f"{re.escape(title)}$")
    )
    return lambda: link.first.click()


Row = tuple[str, float, float]
"""What was timed, wall seconds, server CPU seconds."""


def measure(browser: Any, database: Path, folder: Path, items: int) -> list[Row]:
    rows: list[Row] = []
    with serve(database, folder / f"serve-{items}.log") as (url, start, pid):
        CLOCK.append(ServerClock(pid))
        rows.append(("server start (health answers)", start, CLOCK[-1]()))
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = context.new_page()
        page.set_default_timeout(60_000)
        watch_runs(page)
        began, cpu = time.perf_counter(), CLOCK[-1]()
        open_page(page, url, timeout=300_000)
        next_frame(page)
        rows.append(("home after restart", time.perf_counter() - began, CLOCK[-1]() - cpu))
        for visit in ("1st", "2nd"):
            for title, what, interaction in PAGES:
                rows.append(
                    (f"switch to {title} ({visit})", *timed(page, sidebar_click(page, title)))
                )
                if visit == "1st":
                    try:
                        seconds, used = timed(page, interaction(page))
                    except Exception as error:  # a page without the widget: say so, go on
                        print(f"  {title}: {what} failed: {str(error).splitlines()[0]}")
                        seconds = used = float("nan")
                    rows.append((f"  {title}: {what}", seconds, used))
        context.close()
    return rows


def verdict(name: str, seconds: float, items: int) -> str:
    switch, interaction = TARGETS.get(items, (2.0, 1.0))
    if name.startswith("server"):
        return ""
    limit = (
        HOME_TARGET
        if name.startswith("home")
        else switch
        if name.startswith("switch")
        else interaction
    )
    if seconds != seconds:
        return "n/a"
    return f"{'ok  ' if seconds < limit else 'SLOW'} (< {limit:g} s)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes", default="817,10000", help="items per experiment, comma-separated"
    )
    parser.add_argument("--data", type=Path, help="keep the databases here and reuse them")
    arguments = parser.parse_args()
    sizes = [int(size) for size in arguments.sizes.split(",")]
    from playwright.sync_api import sync_playwright

    folder = Path(tempfile.mkdtemp(prefix="browser-pages-"))
    data = arguments.data or folder
    data.mkdir(parents=True, exist_ok=True)
    try:
        results: dict[int, list[Row]] = {}
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            for items in sizes:
                database = data / f"pages-{items}.db"
                if not database.exists():
                    print(f"building {items:,} items × {len(CODE_SCORERS)} scorers, twice…")
                    build_database(database, items)
                load_before = os.getloadavg()
                results[items] = measure(browser, database, folder, items)
                load_after = os.getloadavg()
                print(
                    f"\n{items:,} items × {len(CODE_SCORERS)} code scorers "
                    f"(load average before {load_before[0]:.2f} / {load_before[1]:.2f} / "
                    f"{load_before[2]:.2f}, after {load_after[0]:.2f} / {load_after[1]:.2f} / "
                    f"{load_after[2]:.2f}; {os.cpu_count()} cores)"
                )
                print(f"  {'':<46} {'wall':>7}   {'server CPU':>10}")
                for name, seconds, used in results[items]:
                    print(
                        f"  {name:<46} {seconds:6.2f} s  {used:8.2f} s  "
                        f"{verdict(name.strip(), seconds, items)}"
                    )
            browser.close()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
