"""The writer of a running experiment's results: `ResultWriter` and the sinks it writes to.

An `ExperimentJob` (core/experiments/jobs.py) hands each successful run to a `ResultWriter`,
which writes them to a `ResultSink` (the store) in batches from its own thread, so the event
loop never waits for the database, and beats the experiment's heartbeat while no run finishes.
A `Detachable` sink can hand the writing to a process of its own (a `DetachedSink`,
core/storage/writer_process.py). How the batches reach the database: docs/storage.md.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from typing import Protocol, runtime_checkable

from core.records import ExperimentStatus, RunCounts, ScorerOutcome
from core.run_results import ResultRow

__all__ = ["Detachable", "DetachedSink", "ResultSink", "ResultWriter"]

logger = logging.getLogger(__name__)

_BATCH_SIZE = 500
_QUEUED_AT_MOST = 20 * _BATCH_SIZE
"""Outcomes waiting for the writer: when the database falls behind (a checkpoint, a slow
disk), the runs wait for it rather than pile their results up in memory."""
_FLUSH_EVERY_S = 0.5
_PROCESS_FIRST = False
"""True: a writer with a process of its own waits for it before its first batch, so the
process writes every result (the tests of that path, whatever the machine's load)."""
_HELD_WHILE_STARTING = 100_000
"""Rows a writer with a process of its own holds while that process starts (its imports take
seconds on a loaded machine; some 60 MB of rows at most), rather than writing them from this
interpreter meanwhile: only past that many does this thread write them itself."""
_START_WAIT_S = 120.0
"""At the end, how long a writer waits for its starting process before writing the rows it
holds itself."""
_PART_ROWS = 10_000
"""Rows per call to the sink when many were held (one commit, one frame to the process each)."""
_HEARTBEAT_EVERY_S = 5.0
"""How often a running experiment's row is touched even when no run finishes (a slow judge):
well within `core.storage.STALE_AFTER_S`, after which it would be reported as interrupted."""


class ResultSink(Protocol):
    """Where a running experiment's results and counts go (`core.storage.Store` is one)."""

    def add_results(self, experiment_id: str, outcomes: Iterable[ScorerOutcome]) -> int:
        """Write successful outcomes; returns how many were written."""
        ...

    def add_rows(self, experiment_id: str, rows: Sequence[ResultRow]) -> int:
        """Write successful runs as pre-encoded rows (`core.run_results.ResultRow`); returns
        how many were written."""
        ...

    def update_experiment_progress(
        self, experiment_id: str, counts: RunCounts, failed: RunCounts | None = None
    ) -> None:
        """Mark the experiment running with these counts (a heartbeat too): `counts` over every
        finished run, `failed` over the failed ones alone (never stored, so only counted)."""
        ...

    def heartbeat(self, experiment_id: str) -> None:
        """Record that the process running the experiment is alive."""
        ...

    def finish_experiment(
        self,
        experiment_id: str,
        status: ExperimentStatus,
        counts: RunCounts | None = None,
        error: str | None = None,
        failed: RunCounts | None = None,
    ) -> None:
        """Record the final status and counts (as in `update_experiment_progress`)."""
        ...


class DetachedSink(ResultSink, Protocol):
    """A sink writing from a process of its own (`core.storage.writer_process`)."""

    def close(self) -> None:
        """Finish what was asked and end the process."""
        ...


@runtime_checkable
class Detachable(Protocol):
    """A sink that can hand the writing to a process of its own."""

    def detached(self) -> DetachedSink | None:
        """A sink writing to the same database from a child process, or None when the
        database cannot be shared with one (SQLite in memory)."""
        ...


class ResultWriter:
    """Writes successful runs and the latest counts to a sink in batches, from its own thread.
    A sink that fails stops the writing: `error` holds why and `on_error` is called.

    What it is handed (`put`: a pre-encoded row, or an outcome record) waits in one queue,
    appended to without a lock; the writer takes all it holds at once, when `_BATCH_SIZE` are
    waiting or every `_FLUSH_EVERY_S`: one hand-off per batch, not per run.

    `own_process`: when the sink is `Detachable`, the batches are written by a child process
    of its own (the inserts, commits and index upkeep off this interpreter), this thread only
    handing them over and waiting for each to be committed; until the child is ready the
    rows wait for it (up to `_HELD_WHILE_STARTING`, then this thread writes them), and when
    it cannot start, this thread writes them itself; a child that dies stops the writing
    as a broken database does."""

    def __init__(
        self,
        sink: ResultSink,
        experiment_id: str,
        counts: Callable[[], tuple[RunCounts, RunCounts]],
        on_error: Callable[[], None],
        own_process: bool = False,
    ) -> None:
        self._sink = sink
        self._own_process = own_process
        self._detached: DetachedSink | None = None
        self._done = threading.Event()  # the writing is over: the process may end
        self._started = threading.Event()  # the process is ready, or will not be
        self._experiment_id = experiment_id
        self._counts = counts
        self._on_error = on_error
        # Appended to by the runs without a lock (a deque's append and popleft are atomic):
        # the writer takes what it holds by popping, never by swapping the container, so no
        # entry can land in one it already took.
        self._waiting: deque[ResultRow | ScorerOutcome] = deque()
        self._room = threading.Condition()  # the runs wait on it for room; guards `_closing`
        self._due = threading.Event()
        self._closing = False
        # True until the writer's process is ready (or will not be): the rows wait for it.
        self._starting = own_process and isinstance(sink, Detachable)
        # Meanwhile the runs may queue this many (`put`).
        self._queued_at_most = _HELD_WHILE_STARTING if self._starting else _QUEUED_AT_MOST
        self._written_counts: tuple[RunCounts, RunCounts] | None = None
        self._last_beat = time.monotonic()  # the experiment row was just written
        self.error: BaseException | None = None
        self.written = 0
        self._thread = threading.Thread(
            target=self._run, name=f"scorelab-writer-{experiment_id[:8]}", daemon=True
        )
        self._thread.start()

    def put(self, entry: ResultRow | ScorerOutcome) -> None:
        """Queue a successful run for writing: its row, or its outcome record. Waits while
        `_QUEUED_AT_MOST` are queued (`_HELD_WHILE_STARTING` while the writer's process
        starts; the writer thread always takes them, even after an error)."""
        waiting = self._waiting
        waiting.append(entry)
        queued = len(waiting)
        if queued == _BATCH_SIZE:
            self._due.set()
        if queued >= self._queued_at_most:
            with self._room:  # the writer notifies under it once it took what was queued
                while len(waiting) >= self._queued_at_most and not self._closing:
                    self._room.wait(_FLUSH_EVERY_S)

    def close(self) -> None:
        """Flush everything still queued and stop."""
        with self._room:
            self._closing = True
            self._room.notify_all()
        self._due.set()
        self._thread.join()

    @property
    def process_id(self) -> int | None:
        """The writing child's process id, while one writes."""
        detached = self._detached
        if detached is None or self._sink is not detached:
            return None
        return getattr(detached, "pid", None)

    def _run(self) -> None:
        helper: threading.Thread | None = None
        if self._own_process and isinstance(self._sink, Detachable):
            # Started beside the writing: until the child has opened the database (a second
            # or so of imports, on another core), the rows wait for it (`_holding`), up to
            # `_HELD_WHILE_STARTING` of them; past that, this thread writes them itself.
            helper = threading.Thread(
                target=self._keep_process,
                args=(self._sink,),
                name=f"{threading.current_thread().name}-process",
                daemon=True,
            )
            helper.start()
            if _PROCESS_FIRST:
                self._started.wait()
        try:
            self._loop()
        finally:
            self._done.set()
            if helper is not None:
                helper.join()

    def _keep_process(self, sink: Detachable) -> None:
        """Start the writer's process, hand it over, and end it once the writing is done. The
        process is started and ended from this thread, which lives as long as it does (the
        child ends with the thread that started it: core/storage/writer_process.py)."""
        try:
            detached = sink.detached()
        except Exception as error:  # the thread writes instead: slower, never wrong
            logger.warning("The result writer's process did not start (%s)", error)
            detached = None
        self._detached = detached  # taken by `_flush` between two batches
        self._started.set()
        if detached is None:
            return
        self._done.wait()
        try:
            detached.close()
        except Exception as error:  # pragma: no cover (nothing left to write)
            logger.warning("The result writer's process did not end cleanly: %s", error)

    def _loop(self) -> None:
        while True:
            self._due.wait(_FLUSH_EVERY_S)
            self._due.clear()
            with self._room:
                closing = self._closing  # read first: what was queued before it is taken now
            waiting = self._waiting
            if self._holding(closing, len(waiting)):
                self._flush([])  # the counts and the heartbeat, meanwhile
                continue
            batch = [waiting.popleft() for _ in range(len(waiting))]
            self._queued_at_most = _QUEUED_AT_MOST
            with self._room:
                self._room.notify_all()
            for start in range(0, max(len(batch), 1), _PART_ROWS):
                self._flush(batch[start : start + _PART_ROWS])
            if closing:
                return

    def _holding(self, closing: bool, queued: int) -> bool:
        """True while the rows wait for the writer's process (it is starting, fewer than
        `_HELD_WHILE_STARTING` are queued); at the end, the wait is for the process itself."""
        if not self._starting or self._started.is_set() or self.error is not None:
            return False
        if closing:
            self._started.wait(_START_WAIT_S)
            return False
        return queued < _HELD_WHILE_STARTING

    def _flush(self, batch: list[ResultRow | ScorerOutcome]) -> None:
        if self.error is not None:
            return
        detached = self._detached
        if detached is not None and self._sink is not detached:
            self._sink = detached  # every batch before was committed by this thread
        try:
            if batch:
                # Rows are tuples (the engine's runs), outcomes records (another runner's).
                rows = [entry for entry in batch if type(entry) is tuple]
                if len(rows) < len(batch):
                    outcomes = [entry for entry in batch if isinstance(entry, ScorerOutcome)]
                    self.written += self._sink.add_results(self._experiment_id, outcomes)
                if rows:
                    self.written += self._sink.add_rows(self._experiment_id, rows)
            counts = self._counts()
            if counts != self._written_counts:  # writes the heartbeat too
                self._sink.update_experiment_progress(self._experiment_id, *counts)
                self._written_counts = counts
                self._last_beat = time.monotonic()
            elif time.monotonic() - self._last_beat >= _HEARTBEAT_EVERY_S:
                self._sink.heartbeat(self._experiment_id)
                self._last_beat = time.monotonic()
        except Exception as error:  # a broken database stops the experiment, loudly
            self.error = error
            self._on_error()
