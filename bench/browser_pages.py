"""How fast the dashboard answers in a real browser (Debian's Chromium through Playwright), at
817 items × 5 code scorers (TruthfulQA-sized, with a `category` metadata column) and at
10,000 × 5:

- the home page on a freshly started `scorelab serve` (first paint to idle);
- for every page, a page switch (a click on its sidebar link until the script run it asked
  for has ended), twice: the first visit since the start, then a second one;
- one interaction per page (a picker changed, a filter typed), until its run has ended;
- on the experiment page (issue 21): a grid row clicked until its drill-down (beside the grid,
  a fragment's run) is drawn, the next item by its button, the next item past the grid's
  page (its next page's first item), a switch to each view (tab), and in the Slices view a
  column sliced by and the chart's scorer changed; `--repeat N` does each N times and prints
  the median (and the fastest);
- on Compare: a second candidate added to the comparison (N = 2 → 3 experiments);
- page switches between the experiment page and Compare, Judge usage and the home page
  (Experiments), there and back, `--repeat` times each (with `--layout-only` too).

"Idle" is what the browser tests wait for (tests/browser/_streamlit.py): the server said the
run the click asked for has finished and no other run follows, then the browser drew a frame.

    python bench/browser_pages.py [--sizes 817,10000] [--data DIR] [--layout-only]
        [--repeat N] [--root CHECKOUT] [--against CHECKOUT [--rounds N]]

Each figure comes with the CPU seconds the server process and the browser (Chromium's
processes) used meanwhile (from /proc): on a machine shared with other work the wall clock
varies twofold from run to run, the CPU time much less. `--root` serves another checkout of the
project (e.g. main's, exported with `git archive`) with this file's measurements, so two
versions can be timed alternately in one session; `--against CHECKOUT` serves this checkout and
another at once and times the experiment page's steps on each in turn (`--rounds` turns, the
order swapped each turn), printing both side by side; `--layout-only` times only the
experiment page (issue 21), not the tour of every page.

Targets (issue 14): a page switch < 1.0 s and an interaction < 0.5 s at 817 × 5; < 2 s and
< 1 s at 10,000 × 5; the home page after a restart < 3 s. Issue 21: a row click to the
drill-down drawn < 0.3 s / < 0.5 s, a tab switch < 0.5 s / < 1 s, a slice < 0.5 s / < 1 s,
Compare at N = 3 < 1 s / < 2 s. The load average is printed
with the figures: on a busy 2-core machine they mean little without it.

The databases are built through the service (three experiments of five code scorers on one
dataset, so Compare has a pair and a third to add); `--data DIR` keeps them there and reuses
them on the next run.
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
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
import weakref
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SERVED = [ROOT]
"""The checkout served and used to build the databases (`--root`; this one by default)."""

from tests.browser._streamlit import (  # noqa: E402
    fragment_rerun,
    next_frame,
    open_page,
    rerun,
    watch_runs,
)

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
TIMEOUT = 60_000
"""Milliseconds a row click may take to open its item before the run is an error."""
DRILL_TARGETS = {817: 0.3, 10_000: 0.5}
"""Items → the target of a row click (or next item) to its drill-down drawn, in seconds."""
TAB_TARGETS = {817: 0.5, 10_000: 1.0}
"""Items → the target of a switch to another view of the experiment page, in seconds (and of a
slice picked in the Slices view)."""
COMPARE_TARGETS = {817: 1.0, 10_000: 2.0}
"""Items → the target of Compare at N = 3 (a second candidate added), in seconds."""
EXPERIMENTS = ("baseline", "candidate", "candidate 2")
"""The experiments built on each database (all of the same five scorers)."""
IN_FRAGMENT = {"Experiment detail"}
"""Pages whose timed interaction reruns a fragment, not the page."""
VIEWS = ("Distributions", "Slices", "Agreement", "Themes", "Reviews", "Results")
ROW_HEIGHT = 35
"""Pixels per row (and for the header) of Streamlit's dataframe."""


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
for name in {EXPERIMENTS!r}:
    started = time.perf_counter()
    experiment = service.start_experiment(ExperimentConfig(
        dataset_id=dataset.id, name=f"{{name}} {items}",
        scorers=[ScorerSpec(scorer_id=s) for s in {CODE_SCORERS!r}], concurrency=8))
    progress = service.wait(experiment, timeout=3600)
    print(f"  {{name}}: {{progress.counts.done:,}} runs in {{time.perf_counter() - started:.1f}} s")
"""
    Path(str(path) + ".csv").write_bytes(truthfulqa_like(items))
    served = SERVED[-1]
    env = {**os.environ, "SCORELAB_DATABASE_URL": f"sqlite:///{path}", "PYTHONPATH": str(served)}
    subprocess.run([sys.executable, "-c", code], check=True, env=env, cwd=served)


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
        "PYTHONPATH": str(SERVED[-1]),  # this checkout's core, whatever the venv's install
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


class BrowserClock:
    """CPU seconds the browser has used: every process descending from this one (Playwright's
    driver and Chromium's processes) but the server's."""

    def __init__(self, serve_pid: int) -> None:
        self.serve_pid = serve_pid
        self.tick = os.sysconf("SC_CLK_TCK")

    def _children(self, pid: int) -> list[int]:
        found: list[int] = []
        for task in Path(f"/proc/{pid}/task").glob("*"):
            try:
                found += [int(c) for c in (task / "children").read_text().split()]
            except OSError:  # gone meanwhile
                continue
        return found

    def __call__(self) -> float:
        total, todo = 0, self._children(os.getpid())
        while todo:
            pid = todo.pop()
            if pid == self.serve_pid:
                continue
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            total += int(fields[11]) + int(fields[12])
            todo += self._children(pid)
        return total / self.tick


BROWSER: list[BrowserClock] = []
"""The clock of the browser (beside the server's)."""
Timing = tuple[float, float, float]
"""Wall seconds, server CPU seconds, browser CPU seconds."""


def timed(page: Any, action: Callable[[], object]) -> Timing:
    """Seconds from `action` to the end of the run it asked for, and a frame drawn; and the
    server's and the browser's CPU seconds meanwhile."""
    clock, browser = CLOCK[-1], BROWSER[-1]
    started, cpu, drawing = time.perf_counter(), clock(), browser()
    rerun(page, action, timeout=300_000)
    next_frame(page)
    return time.perf_counter() - started, clock() - cpu, browser() - drawing


def pick_other(
    page: Any, label: str | re.Pattern[str], skip: str | None = None
) -> Callable[[], object]:
    """Open the selectbox `label` and click an option that is not the chosen one (nor `skip`)."""

    def act() -> None:
        box = page.get_by_role("combobox", name=label).first
        box.evaluate("element => element.scrollIntoView({block: 'center'})")
        box.click()
        options = page.get_by_role("option")
        options.first.wait_for()
        for n in range(options.count()):
            option = options.nth(n)
            if option.get_attribute("aria-selected") != "true" and (
                skip is None or option.inner_text() != skip
            ):
                option.click()
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


Row = tuple[str, float, float, float]
"""What was timed, wall seconds, server CPU seconds, browser CPU seconds."""


def timed_fragment(
    page: Any, action: Callable[[], object], shown: str | None = None, timeout: float = 300_000
) -> Timing:
    """Seconds from `action` (a click in a fragment) to the end of the fragment's run and
    `shown` (if given) on screen, a frame drawn; and the server's and the browser's CPU
    seconds meanwhile. A full-page run on the way is an error: the drill-down must open
    without one."""
    clock, browser = CLOCK[-1], BROWSER[-1]
    started, cpu, drawing = time.perf_counter(), clock(), browser()
    full_runs = fragment_rerun(page, action, timeout=timeout)
    if shown is not None:
        page.get_by_text(shown, exact=True).first.wait_for()
    next_frame(page)
    if full_runs:
        raise RuntimeError(f"{full_runs} full-page run(s) on the way to {shown!r}")
    return time.perf_counter() - started, clock() - cpu, browser() - drawing


def median_of(name: str, timings: list[Timing]) -> Row:
    """One row for repeated timings: the median of each figure (the fastest wall in the
    name when there were several)."""
    if not timings:
        return (name, float("nan"), float("nan"), float("nan"))
    wall, server, browser = (statistics.median(column) for column in zip(*timings, strict=True))
    fastest = min(t[0] for t in timings)
    several = f" [{len(timings)}×, min {fastest:.2f}]" if len(timings) > 1 else ""
    if len(timings) > 1 and os.environ.get("BENCH_EACH"):  # each timing, to see the spread
        print(f"  {name.strip()}: " + ", ".join(f"{w:.2f}/{c:.2f}/{b:.2f}" for w, c, b in timings))
    return (f"{name}{several}", wall, server, browser)


def server_idle(timeout: float = 120.0) -> float:
    """Wait until the server uses less than 2% of a core over half a second (its start-up
    warm-up, a background thread after the first page, has ended: before, each click paid
    for it and for the garbage collections it made slow); returns the seconds waited."""
    clock, started = CLOCK[-1], time.perf_counter()
    while time.perf_counter() - started < timeout:
        before = clock()
        time.sleep(0.5)
        if clock() - before < 0.01:
            break
    return time.perf_counter() - started


def browser_idle(timeout: float = 30.0) -> float:
    """Wait until the browser uses at most one clock tick (10 ms) over 0.3 s (a page just loaded
    goes on drawing after its run has ended: the grid, the fonts); returns the seconds
    waited. Without it the first step after a page load was charged with that drawing."""
    clock, started = BROWSER[-1], time.perf_counter()
    while time.perf_counter() - started < timeout:
        before = clock()
        time.sleep(0.3)
        if clock() - before < 0.015:
            break
    return time.perf_counter() - started


_SENT: weakref.WeakKeyDictionary[Any, list[float]] = weakref.WeakKeyDictionary()


def sent_times(page: Any) -> list[float]:
    """When the browser sent each message on the page's Streamlit websocket (perf_counter
    seconds), recorded from the first call on (before the page's next load)."""
    if page not in _SENT:
        sent: list[float] = []

        def attach(socket: Any) -> None:
            if socket.url.endswith("/_stcore/stream"):
                socket.on("framesent", lambda _payload: sent.append(time.perf_counter()))

        page.on("websocket", attach)
        _SENT[page] = sent
    return _SENT[page]


def first_sent_after(page: Any, started: float) -> float:
    """Seconds from `started` to the first message the browser sent after it (NaN: none)."""
    later = [moment for moment in sent_times(page) if moment >= started]
    return min(later) - started if later else float("nan")


def measure_layout(page: Any, url: str, repeat: int = 1) -> list[Row]:
    """The experiment page's drill-down and views (issue 21), on the first experiment, each
    timed `repeat` times, once the server is idle. "row click → its message sent" is the
    part of a row click before the server hears of it: Streamlit's dataframe sent a selection
    150 ms after the last change (a debounce in its frontend); the grid's own table sends the
    click at once (docs/dashboard.md). Either grid is clicked where it draws the row."""
    rows: list[Row] = []
    sent_times(page)  # before the page loads: its websocket is the next one
    open_page(page, f"{url}/experiment?tab=results", timeout=300_000)
    print(f"  (server idle after {server_idle():.1f} s)")
    page.get_by_text("Click a row of the grid to open its item here.").wait_for()
    browser_idle()
    own_grid = page.locator("div.grid").count() > 0  # the table of our own, or st.dataframe
    grid = page.locator("div.grid" if own_grid else '[data-testid="stDataFrame"]').last
    clicks: list[Timing] = []
    sends: list[Timing] = []
    steps: list[Timing] = []
    row = 2
    for turn in range(repeat):  # row clicks one after another: rows 2, 5, 8...
        row = 2 + 3 * (turn % 5)
        grid.evaluate("element => element.scrollIntoView({block: 'start'})")
        next_frame(page)
        if own_grid:  # the row's id cell, where the pointer lands as a person's would
            box = grid.locator("tbody tr").nth(row).locator("td").nth(1).bounding_box()
            x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
        else:
            box = grid.bounding_box()
            x = box["x"] + box["width"] / 2
            y = box["y"] + ROW_HEIGHT * (row + 1) + ROW_HEIGHT / 2
        click = lambda x=x, y=y: page.mouse.click(x, y)  # noqa: E731
        started = time.perf_counter()
        clicks.append(timed_fragment(page, click, f"Item q{row:05d}", timeout=TIMEOUT))
        sends.append((first_sent_after(page, started), float("nan"), float("nan")))
    # Then "next item" as many times. (Not mixed: after a click on "next" the grid ignores its
    # first click, main's page too; the row clicks come first.)
    next_button = page.get_by_role("button", name=re.compile("^Next item"))
    for turn in range(repeat):
        steps.append(timed_fragment(page, next_button.click, f"Item q{row + 1 + turn:05d}"))
    rows.append(median_of("  row click → drill-down", clicks))
    rows.append(median_of("  row click → its message sent", sends))
    rows.append(median_of("  next item → drill-down", steps))
    crossings: list[Timing] = []
    for _ in range(repeat):  # the next item past the grid's first page (50 rows)
        open_page(page, f"{url}/experiment?tab=results&item=q00049&page=1", timeout=300_000)
        page.get_by_text("Item q00049", exact=True).first.wait_for()
        browser_idle()  # the page load's drawing is not the crossing's
        next_button = page.get_by_role("button", name=re.compile("^Next item"))
        if not next_button.is_enabled():  # a version where next stops at the page's end
            print("  next item past the grid's page: disabled in this version")
            break
        crossings.append(timed_fragment(page, next_button.click, "Item q00050"))
    rows.append(median_of("  next item → next page's drill-down", crossings))
    views = page.locator('[data-testid="stButtonGroup"]').first
    tabs: dict[str, list[Timing]] = {view: [] for view in VIEWS}
    for _ in range(repeat):
        for view in VIEWS:
            tabs[view].append(timed(page, views.get_by_text(view, exact=True).click))
    rows += [median_of(f"  tab → {view}", tabs[view]) for view in VIEWS]
    return rows + measure_slices(page, views, repeat)


def measure_slices(page: Any, views: Any, repeat: int) -> list[Row]:
    """In the Slices view: a metadata column picked to slice by (each time the other of
    `category` and `answer_is_correct`, so the first two are computed, the later ones
    cached), then the chart's scorer changed, each until the page's run has ended."""
    rerun(page, views.get_by_text("Slices", exact=True).click)
    browser_idle()
    picks: list[Timing] = []
    charts: list[Timing] = []
    for _ in range(max(repeat, 2)):
        picks.append(timed(page, pick_other(page, "Slice by", skip="none")))
        charts.append(timed(page, pick_other(page, "Chart of scorer")))
    rerun(page, views.get_by_text("Results", exact=True).click)
    return [
        median_of("  slice by a column", picks),
        median_of("  slice: chart of another scorer", charts),
    ]


def measure_compare(page: Any, repeat: int) -> list[Row]:
    """On Compare (its default pair: the newest experiment against the one before): the third
    experiment added as a second candidate (N = 3), `repeat` times, the page reloaded with
    its default pair between (untimed)."""
    rerun(page, sidebar_click(page, "Compare"))
    browser_idle()
    default = page.url
    added: list[Timing] = []
    for _ in range(repeat):
        added.append(timed(page, pick_other(page, "Candidates")))
        open_page(page, default, timeout=300_000)
        browser_idle()
    return [median_of("  Compare: a second candidate added (N = 3)", added)]


SWITCHES = ("Compare", "Judge usage", "Experiments")
"""The pages timed back and forth from the experiment page (`measure_switches`)."""


def measure_switches(page: Any, repeat: int = 1) -> list[Row]:
    """Page switches by the sidebar between the experiment page and each of `SWITCHES`, there
    and back, each `repeat` times (after the tour of the experiment page: every page has been
    visited once, so these are the switches a person makes all afternoon)."""
    there: dict[str, list[Timing]] = {title: [] for title in SWITCHES}
    back: dict[str, list[Timing]] = {title: [] for title in SWITCHES}
    for _ in range(repeat):
        for title in SWITCHES:
            there[title].append(timed(page, sidebar_click(page, title)))
            back[title].append(timed(page, sidebar_click(page, "Experiment detail")))
    rows: list[Row] = []
    for title in SWITCHES:
        rows.append(median_of(f"  switch experiment → {title}", there[title]))
        rows.append(median_of(f"  switch {title} → experiment", back[title]))
    return rows


def measure(
    browser: Any,
    database: Path,
    folder: Path,
    items: int,
    layout_only: bool = False,
    repeat: int = 1,
) -> list[Row]:
    rows: list[Row] = []
    with serve(database, folder / f"serve-{items}.log") as (url, start, pid):
        CLOCK.append(ServerClock(pid))
        BROWSER.append(BrowserClock(pid))
        rows.append(("server start (health answers)", start, CLOCK[-1](), float("nan")))
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = context.new_page()
        page.set_default_timeout(60_000)
        watch_runs(page)
        began, cpu, drawing = time.perf_counter(), CLOCK[-1](), BROWSER[-1]()
        open_page(page, url, timeout=300_000)
        next_frame(page)
        rows.append(
            (
                "home after restart",
                time.perf_counter() - began,
                CLOCK[-1]() - cpu,
                BROWSER[-1]() - drawing,
            )
        )
        for visit in () if layout_only else ("1st", "2nd"):
            for title, what, interaction in PAGES:
                rows.append(
                    (f"switch to {title} ({visit})", *timed(page, sidebar_click(page, title)))
                )
                if visit == "1st":
                    # The experiment page's filters are in the grid's fragment (issue 21).
                    clocked = timed_fragment if title in IN_FRAGMENT else timed
                    try:
                        timing = clocked(page, interaction(page))
                    except Exception as error:  # a page without the widget: say so, go on
                        print(f"  {title}: {what} failed: {str(error).splitlines()[0]}")
                        seconds = used = drawn = float("nan")
                    else:
                        seconds, used, drawn = timing
                    rows.append((f"  {title}: {what}", seconds, used, drawn))
        rows.append(("experiment page (issue 21)", float("nan"), float("nan"), float("nan")))
        rows += measure_layout(page, url, repeat)
        rows.append(("page switches (issue 21)", float("nan"), float("nan"), float("nan")))
        rows += measure_switches(page, repeat)
        rows.append(("Compare (issue 21)", float("nan"), float("nan"), float("nan")))
        rows += measure_compare(page, repeat)
        context.close()
    return rows


def measure_side_by_side(
    browser: Any, database: Path, folder: Path, other: Path, rounds: int, repeat: int
) -> dict[str, dict[str, list[Timing]]]:
    """The experiment page's steps (`measure_layout`) on this checkout and on `other`, both
    served at once and timed in turn, `rounds` times (the order swapped each round), so that
    both see the same load; each round's median per step, by version."""
    versions = {"this": SERVED[-1], "other": other.resolve()}
    found: dict[str, dict[str, list[Timing]]] = {name: {} for name in versions}
    with ExitStack() as stack:
        served = {}
        for name, root in versions.items():
            SERVED.append(root)
            url, _, pid = stack.enter_context(serve(database, folder / f"serve-{name}.log"))
            context = browser.new_context(viewport={"width": 1400, "height": 1000})
            page = context.new_page()
            page.set_default_timeout(60_000)
            watch_runs(page)
            served[name] = (url, page, ServerClock(pid), BrowserClock(pid))
        for turn in range(rounds):
            for name in list(versions)[:: 1 if turn % 2 == 0 else -1]:
                url, page, clock, drawing = served[name]
                CLOCK.append(clock)
                BROWSER.append(drawing)
                for row_name, *timing in measure_layout(page, url, repeat):
                    step = row_name.strip().split(" [")[0]
                    found[name].setdefault(step, []).append(tuple(timing))  # type: ignore[arg-type]
    return found


def print_side_by_side(found: dict[str, dict[str, list[Timing]]], other: Path) -> None:
    """Wall and browser CPU seconds per step, this checkout beside the other (medians)."""
    print(f"  {'':<40} {'other wall / browser':>22} {'this wall / browser':>22}   (other: {other})")
    for step in found["this"]:
        cells = []
        for name in ("other", "this"):
            timings = found[name].get(step, [])
            wall = statistics.median(t[0] for t in timings) if timings else float("nan")
            drawn = statistics.median(t[2] for t in timings) if timings else float("nan")
            cells.append(f"{wall:6.2f} s / {drawn:5.2f} s")
        print(f"  {step:<40} {cells[0]:>22} {cells[1]:>22}")


def verdict(name: str, seconds: float, items: int) -> str:
    switch, interaction = TARGETS.get(items, (2.0, 1.0))
    if name.startswith(("server", "experiment page", "page switches", "Compare (")) or (
        "sent" in name
    ):
        return ""  # no target of its own: a part of the step above it
    limit = (
        HOME_TARGET
        if name.startswith("home")
        else switch
        if name.startswith("switch")
        else DRILL_TARGETS.get(items, 0.5)
        if "drill-down" in name
        else TAB_TARGETS.get(items, 1.0)
        if name.startswith(("tab →", "slice"))
        else COMPARE_TARGETS.get(items, 2.0)
        if name.startswith("Compare: a second")
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
    parser.add_argument(
        "--layout-only", action="store_true", help="only the experiment page (issue 21)"
    )
    parser.add_argument("--repeat", type=int, default=1, help="times each layout step")
    parser.add_argument("--root", type=Path, help="serve this checkout instead of this one")
    parser.add_argument(
        "--against",
        type=Path,
        help="time the experiment page here and on this other checkout, served side by side "
        "and measured in turn (--rounds times, --repeat each)",
    )
    parser.add_argument("--rounds", type=int, default=2, help="turns of each with --against")
    arguments = parser.parse_args()
    if arguments.root is not None:
        SERVED.append(arguments.root.resolve())
    print(f"serving {SERVED[-1]}")
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
                # Named for its three experiments: a --data folder of before held two.
                database = data / f"pages{len(EXPERIMENTS)}-{items}.db"
                if not database.exists():
                    print(
                        f"building {items:,} items × {len(CODE_SCORERS)} scorers, "
                        f"{len(EXPERIMENTS)} times…"
                    )
                    build_database(database, items)
                load_before = os.getloadavg()
                if arguments.against is not None:
                    found = measure_side_by_side(
                        browser,
                        database,
                        folder,
                        arguments.against,
                        arguments.rounds,
                        arguments.repeat,
                    )
                    load_after = os.getloadavg()
                    print(
                        f"\n{items:,} items, side by side (load average before "
                        f"{load_before[0]:.2f}, after {load_after[0]:.2f}; {os.cpu_count()} cores)"
                    )
                    print_side_by_side(found, arguments.against)
                    continue
                results[items] = measure(
                    browser, database, folder, items, arguments.layout_only, arguments.repeat
                )
                load_after = os.getloadavg()
                print(
                    f"\n{items:,} items × {len(CODE_SCORERS)} code scorers "
                    f"(load average before {load_before[0]:.2f} / {load_before[1]:.2f} / "
                    f"{load_before[2]:.2f}, after {load_after[0]:.2f} / {load_after[1]:.2f} / "
                    f"{load_after[2]:.2f}; {os.cpu_count()} cores)"
                )
                print(f"  {'':<58} {'wall':>7}   {'server CPU':>10}  {'browser CPU':>11}")
                for name, seconds, used, drawn in results[items]:
                    if seconds != seconds and not name.startswith(" "):  # a heading
                        print(f"  {name}")
                        continue
                    print(
                        f"  {name:<58} {seconds:6.2f} s  {used:8.2f} s  {drawn:9.2f} s  "
                        f"{verdict(name.strip(), seconds, items)}"
                    )
            browser.close()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
