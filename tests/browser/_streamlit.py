"""What the browser tests share about driving a Streamlit page: waiting for script runs by what
the server says, never by the clock.

Streamlit tells the browser over its websocket (`/_stcore/stream`) when a run starts (a
`new_session` message) and when it ends (`script_finished`), each with the run's id and, for a
fragment's run, the fragment ids. `Runs` reads those messages as Playwright sees them, so a test
can wait for "the run this click asked for has finished" (`rerun`), "the page opened and its
first run has finished" (`open_page`) or "no run is going on" (`settle`), each bounded by a
deadline. Fragment runs (the progress panel refreshing every second, the experiment page's grid
and drill-down) are not the page's runs: they are counted apart (`Runs.fragments`), and
`fragment_rerun` waits for one.
"""

from __future__ import annotations

import contextlib
import re
import time
import weakref
from collections.abc import Callable
from typing import Any

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

TIMEOUT = 60_000
"""Milliseconds to wait for something a script rerun or a judge call produces."""

POLL_MS = 250
"""Longest single wait for the server's next message before the state is looked at again."""

_ENDED = {ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_WITH_COMPILE_ERROR}
"""How a run ends when no other run follows it (an exception in the script is a success: the
exception is an element of the page)."""

_FRAGMENT_ENDED = {ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY, *_ENDED}
"""How a fragment's run ends."""

_WATCHED: weakref.WeakKeyDictionary[Any, Runs] = weakref.WeakKeyDictionary()


class Runs:
    """The full-app script runs of one browser page, in the order they started, across page
    loads (each load opens a new websocket)."""

    def __init__(self, page: Any) -> None:
        self._page = page
        self._socket: Any = None
        self.started: list[str] = []
        """Ids of the runs started, oldest first."""
        self.ended: dict[str, int] = {}
        """How each ended run ended (a ForwardMsg.ScriptFinishedStatus)."""
        self.fragments: list[str] = []
        """Ids of the fragment runs started, oldest first."""
        self.fragments_ended: dict[str, int] = {}
        """How each ended fragment run ended."""
        self.fragment_ids: dict[str, tuple[str, ...]] = {}
        """The fragments each fragment run reran (their ids, as the server names them)."""
        page.on("websocket", self._attach)

    def _attach(self, socket: Any) -> None:
        if socket.url.endswith("/_stcore/stream"):
            self._socket = socket
            socket.on("framereceived", self._received)

    def _received(self, payload: str | bytes) -> None:
        if isinstance(payload, str):
            return
        message = ForwardMsg.FromString(payload)
        kind = message.WhichOneof("type")
        run = message.metadata.run
        if kind not in ("new_session", "script_finished"):
            return
        if run.fragment_ids:
            if kind == "new_session":
                self.fragments.append(run.script_run_id)
                self.fragment_ids[run.script_run_id] = tuple(run.fragment_ids)
            elif self.fragments:
                self.fragments_ended[run.script_run_id or self.fragments[-1]] = (
                    message.script_finished
                )
            return
        if kind == "new_session":
            self.started.append(run.script_run_id)
        elif self.started:  # a finish without a run id ends the latest run
            self.ended[run.script_run_id or self.started[-1]] = message.script_finished

    def mark(self) -> int:
        """A point in the page's history of runs, for `wait_since`."""
        return len(self.started)

    def settled_since(self, mark: int) -> bool:
        """A run started after `mark`, and the latest run has ended without asking for another."""
        return len(self.started) > mark and self.ended.get(self.started[-1]) in _ENDED

    def wait_since(self, mark: int, timeout: float = TIMEOUT) -> None:
        """Wait until a run that started after `mark` has ended and no other run is going on."""
        self._wait(lambda: self.settled_since(mark), timeout)

    def fragment_mark(self) -> int:
        """A point in the page's history of fragment runs, for `wait_fragment_since`."""
        return len(self.fragments)

    def wait_fragment_since(self, mark: int, timeout: float = TIMEOUT) -> None:
        """Wait until a fragment run that started after `mark` has ended (its last one)."""
        self._wait(
            lambda: (
                len(self.fragments) > mark
                and self.fragments_ended.get(self.fragments[-1]) in _FRAGMENT_ENDED
            ),
            timeout,
        )

    def _wait(self, done: Callable[[], bool], timeout: float) -> None:
        deadline = time.monotonic() + timeout / 1000
        while not done():
            left = (deadline - time.monotonic()) * 1000
            if left <= 0:
                raise AssertionError(
                    f"no script run settled within {timeout / 1000:.0f} s: started "
                    f"{self.started}, ended {self.ended}"
                )
            # Short waits, each followed by a look: a frame Playwright had already taken in
            # before the wait began is handed to `_received` during it, but does not end it
            # (seen: a run's end arrived that way and the wait sat out its whole 60 s).
            self._next_message(min(left, POLL_MS))

    def _next_message(self, timeout: float) -> None:
        """Block until the server sends something (or a new websocket opens)."""
        socket = self._socket
        if socket is None or socket.is_closed():
            with contextlib.suppress(PlaywrightTimeout):  # the caller's deadline says
                self._page.wait_for_event("websocket", timeout=timeout)
            return
        try:
            socket.wait_for_event("framereceived", timeout=timeout)
        except PlaywrightTimeout:
            return  # the caller's deadline says what timed out
        except PlaywrightError:
            if not socket.is_closed():
                raise  # a closed socket is a page load: the next one is attached


def watch_runs(page: Any) -> Runs:
    """Start reading `page`'s script runs; call before its first `goto`."""
    runs = Runs(page)
    _WATCHED[page] = runs
    return runs


def runs_of(page: Any) -> Runs:
    """The runs of a page given to `watch_runs`."""
    return _WATCHED[page]


def open_page(page: Any, url: str, timeout: float = TIMEOUT) -> None:
    """Go to `url` and wait until the page's first run (and any rerun it asked for) ended."""
    runs = runs_of(page)
    mark = runs.mark()
    page.goto(url)
    runs.wait_since(mark, timeout)


def rerun(page: Any, action: Callable[[], object], timeout: float = TIMEOUT) -> None:
    """Do `action` (a click, an Enter, a file chosen), which makes Streamlit rerun the script,
    and wait until that run has ended and no other is going on."""
    runs = runs_of(page)
    mark = runs.mark()
    action()
    runs.wait_since(mark, timeout)


def fragment_rerun(page: Any, action: Callable[[], object], timeout: float = TIMEOUT) -> int:
    """Do `action` (a click in a fragment), which makes Streamlit rerun that fragment only, and
    wait until a fragment run started since has ended; returns how many full-app runs started
    meanwhile (0 when the page itself was not rerun)."""
    runs = runs_of(page)
    mark, fragment_mark = runs.mark(), runs.fragment_mark()
    action()
    runs.wait_fragment_since(fragment_mark, timeout)
    return runs.mark() - mark


def fragments_rerun(page: Any, action: Callable[[], object], timeout: float = TIMEOUT) -> set[str]:
    """Like `fragment_rerun`, but returns the ids of the fragments rerun since `action`
    (which fragment a click reran: the same set for two clicks that rerun the same part); a
    full-app run on the way is an AssertionError. Only runs carried out count: a run that
    ended early for another (a callback's `st.rerun("<fragment key>")` replacing the click's
    own run before its body) drew nothing."""
    runs = runs_of(page)
    fragment_mark = runs.fragment_mark()
    full_runs = fragment_rerun(page, action, timeout)
    assert full_runs == 0, f"{full_runs} full-app run(s) where a fragment's run was expected"
    return {
        fragment
        for run in runs.fragments[fragment_mark:]
        if runs.fragments_ended.get(run) in _FRAGMENT_ENDED
        for fragment in runs.fragment_ids.get(run, ())
    }


def settle(page: Any, timeout: float = TIMEOUT) -> None:
    """Wait until no run is going on. Call it once something the current run draws is on
    screen: that run has started, so it is the one waited for."""
    runs = runs_of(page)
    runs.wait_since(0, timeout)


def next_frame(page: Any) -> None:
    """Wait for the browser to draw twice, so that events a scroll or a layout change queued
    (a scroll closes an open dropdown) have been dispatched."""
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")


def in_view(page: Any, locator: Any) -> Any:
    """`locator` scrolled to the middle of the window, the scroll's events dispatched. A
    selectbox's or multiselect's list closes on a scroll: opened by Playwright's own
    scroll-then-click it would close at once, and opened at the window's bottom edge its
    options would need a scroll to be clicked."""
    locator.evaluate("element => element.scrollIntoView({block: 'center'})")
    next_frame(page)
    return locator


def choose(page: Any, label: str, option: str | re.Pattern[str]) -> None:
    """Pick `option` (the first so named) in the selectbox labelled `label`, and wait for the
    rerun it asks for; none comes when it was the chosen one already (the list just closes)."""
    in_view(page, page.get_by_role("combobox", name=label, exact=True)).click()
    item = page.get_by_role("option", name=option).first
    if item.get_attribute("aria-selected") == "true":
        page.keyboard.press("Escape")
        return
    rerun(page, item.click)


GRID = "div.grid"
"""The experiment page's results grid: a table of our own (pages/ui/table.js)."""


def grid_row(page: Any, row: int) -> Any:
    """The grid's row `row` (from 0, on the page of items shown)."""
    return page.locator(f"{GRID} tbody tr").nth(row)


def grid_clicker(page: Any, row: int, column: int = 1) -> Callable[[], None]:
    """A click on the cell `column` (from 0) of the grid's row `row`, the row scrolled into
    view first (so the click is only the click)."""
    cell = in_view(page, grid_row(page, row).locator("td").nth(column))
    return lambda: cell.click()
