"""Experiments running in this process: the driver side of a run.

An `ExperimentJob` runs the engine in a worker thread and takes its outcomes one by one
(`record`): it keeps the counts and the failed runs in memory (failures are never stored) and
hands the successful outcomes to a `ResultWriter` (core/experiments/result_writer.py), which
writes them to the store in batches from its own thread. Since `record` does not care where an
outcome was produced, runs made elsewhere can feed the same driver.

A job can run part of an experiment: a resumed one runs only the pairs without a stored result
(`start(..., skip=StoredPairs(...))`), and `retry` runs its failed pairs again, each new run
taking the place of the failure it repeats.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Coroutine, Iterable, Iterator, Sequence, Sized
from datetime import UTC, datetime
from typing import Any

from core._sync import run_coroutine_sync
from core.experiments._heap import freeze_heap, refreeze_heap, thaw_heap
from core.experiments.engine import CancelToken, Run, Skip, run_experiment
from core.experiments.result_writer import ResultSink, ResultWriter
from core.judge.budget import JudgeBudget
from core.judge.rate_limit import rate_limited
from core.judge.secrets import mask_secrets
from core.records import (
    DatasetItem,
    ExperimentInfo,
    ExperimentProgress,
    ExperimentStatus,
    ExperimentSummary,
    RateLimit,
    RunCounts,
    ScorerOutcome,
)
from core.run_results import (
    JudgeUsage,
    ResultRow,
    database_json,
    fields_json,
    step_usage_json,
)
from core.scoring import RunParts, Scorer

__all__ = [
    "ExperimentJob",
    "Jobs",
    "Runner",
    "StoredPairs",
    "stored_progress",
]

logger = logging.getLogger(__name__)

_OWN_PROCESS_FROM = 50_000
"""Planned runs from which the writer writes from a process of its own (`Detachable`): its
start costs about a second of CPU (on another core, the thread writing meanwhile), and it
takes about 5 us per run off the scoring interpreter, which only a large experiment wins
back on a busy machine."""
_FREEZE_FROM = 20_000
"""Planned runs from which the heap is frozen from the run's start on
(core/experiments/_heap.py): a small run's collector passes cost little."""
_FREEZE_AFTER_RUNS = 200
"""Successful runs before the heap is frozen again: by then the scorers have loaded what they
load on their first runs (a lexicon), which is then frozen too."""
_REFREEZE_EVERY = 5_000
"""Successful runs between two freezes: what the run made since that lives on (a scorer's
caches grown with the items' words) is frozen in turn."""


Runner = Callable[..., Coroutine[Any, Any, ExperimentSummary]]
"""What runs an experiment's pairs, with `run_experiment`'s keyword arguments: the engine
itself, or a backend that spreads the same engine over workers (core/experiments/ray_backend.py)
and hands their outcomes to `on_outcome` in this process."""


class ExperimentJob:
    """One experiment of this process: its counts, its failed runs and its status, safe to
    read from any thread; `wait` blocks until it changes as asked."""

    def __init__(
        self,
        experiment_id: str,
        counts: RunCounts,
        *,
        status: ExperimentStatus = "pending",
        failures: Sequence[ScorerOutcome] = (),
    ) -> None:
        self.experiment_id = experiment_id
        self.cancel = CancelToken()
        self._changed = threading.Condition()
        self._watchers = 0  # waiters that look at the counts, not only at the end
        self._counts = counts
        # The failed runs alone: their judge totals are the part of the counts no stored
        # result accounts for.
        self._failures = {(f.item_id, f.scorer_id): f for f in failures}
        self._failed_counts = sum(
            (RunCounts().with_outcome(f) for f in self._failures.values()), RunCounts()
        )
        # Successful runs taken by `record_run`, counted in plain numbers (a record per run
        # cost as much as a fast scorer's run) and added to `_counts` when read.
        self._fast = threading.Lock()
        self._fast_succeeded = 0
        self._fast_calls = 0
        self._fast_attempts = 0
        self._fast_cached = 0
        self._fast_usage = JudgeUsage()
        self._freeze_at = 0  # `_fast_succeeded` at which this run freezes the heap (0: never)
        self._frozen = False
        self._status: ExperimentStatus = status
        self._error: str | None = None
        self._error_before_retry: str | None = None
        self._started: float | None = None
        self._elapsed_s = 0.0
        self._writer: ResultWriter | None = None
        self.runner: Runner = run_experiment
        """What runs the pairs (`start(..., runner=...)`; a retry uses the same)."""
        self.budget: JudgeBudget | None = None
        """The spend cap this experiment runs under, if any (its `spent_usd` is live)."""
        self.rate_limit: tuple[str, RateLimit] | None = None
        """(judge model, limit) its judge calls respect while it runs, if any."""

    # ---- reading ----

    @property
    def running(self) -> bool:
        """True until the experiment stopped (and its end was recorded)."""
        return self._status in ("pending", "running")

    def counts(self) -> RunCounts:
        """The counts so far."""
        with self._changed:
            return self._all_counts()

    def _all_counts(self) -> RunCounts:
        """`_counts` with the runs `record_run` counted (the caller holds `_changed`)."""
        with self._fast:
            if not self._fast_succeeded:
                return self._counts
            return self._counts + RunCounts(
                succeeded=self._fast_succeeded,
                usage=self._fast_usage,
                judge_calls=self._fast_calls,
                judge_attempts=self._fast_attempts,
                cached_calls=self._fast_cached,
            )

    def progress(self) -> ExperimentProgress:
        """Where the experiment is."""
        with self._changed:
            return self._progress()

    def tally(self) -> tuple[RunCounts, RunCounts]:
        """The counts so far, over every finished run and over the failed ones alone."""
        with self._changed:
            return self._all_counts(), self._failed_counts

    def failures(self) -> list[ScorerOutcome]:
        """The failed runs so far."""
        with self._changed:
            return list(self._failures.values())

    def wait(
        self,
        timeout: float | None = None,
        until: Callable[[ExperimentProgress], bool] | None = None,
    ) -> ExperimentProgress:
        """Block until the experiment stopped, or until `until(progress)` holds; raises
        TimeoutError after `timeout` seconds."""

        def reached() -> bool:
            progress = self._progress()
            return progress.finished or (until is not None and until(progress))

        with self._changed:
            self._watchers += until is not None
            try:
                if not self._changed.wait_for(reached, timeout):
                    raise TimeoutError(
                        f"Experiment {self.experiment_id} still running after {timeout} s"
                    )
                return self._progress()
            finally:
                self._watchers -= until is not None

    def _progress(self) -> ExperimentProgress:
        elapsed = self._elapsed_s
        if self._started is not None and self.running:
            elapsed = time.perf_counter() - self._started
        return ExperimentProgress.measured(
            self._status,
            self._all_counts(),
            elapsed,
            experiment_id=self.experiment_id,
            error=self._error,
            spent_usd=None if self.budget is None else self.budget.spent_usd,
        )

    # ---- running ----

    def start(
        self,
        sink: ResultSink,
        items: Iterable[DatasetItem],
        scorers: Sequence[Scorer],
        concurrency: int,
        item_count: int | None = None,
        skip: Skip | None = None,
        budget: JudgeBudget | None = None,
        rate_limit: tuple[str, RateLimit] | None = None,
        runner: Runner | None = None,
    ) -> None:
        """Run the experiment in a background thread. `items` may be an iterable read as the
        runs start (e.g. the store's paged reader), with `item_count` saying how many; `skip`
        leaves pairs out (`run_experiment`), e.g. those a resumed experiment has stored;
        `budget`: the judge spend cap its judge calls ask (`core.judge.budget`); `rate_limit`:
        (judge model, limit) its judge calls respect while it runs (`core.judge.rate_limit`);
        `runner`: what runs the pairs (default: the engine, in this process)."""
        self.budget = budget
        self.rate_limit = rate_limit
        if runner is not None:
            self.runner = runner
        self._launch(sink, items, scorers, concurrency, item_count, skip, None)

    def retry(
        self,
        sink: ResultSink,
        items: Iterable[DatasetItem],
        item_count: int,
        scorers: Sequence[Scorer],
        concurrency: int,
        skip: Skip | None = None,
    ) -> list[tuple[str, str]]:
        """Run the failed pairs again in a background thread; returns the (item id, scorer id)
        pairs retried. `items`: the failures' items (`item_count` of them), read as the runs
        start; `skip` may leave more pairs out (those stored meanwhile).

        Each new run replaces its pair's failure: a success is stored and its failure gone, a
        failure takes the old one's place. The experiment then ends as it was (a completed one
        stays completed, a cancelled one cancelled), unless the retry itself breaks. Raises
        RuntimeError while the experiment runs."""
        with self._changed:
            if self.running:
                raise RuntimeError(f"Experiment {self.experiment_id} is running")
            pairs = list(self._failures)
            before = self._status
            self._error_before_retry = self._error  # an experiment that broke stays explained
            self._status = "pending"  # running from now on, for whoever asks
            self.cancel = CancelToken()  # the last run's may have been used
        wanted = set(pairs)

        def left_out(item: DatasetItem, scorer_id: str) -> bool:
            if (item.id, scorer_id) not in wanted:
                return True
            return skip is not None and skip(item, scorer_id)

        self._launch(sink, items, scorers, concurrency, item_count, left_out, before)
        return pairs

    def _launch(
        self,
        sink: ResultSink,
        items: Iterable[DatasetItem],
        scorers: Sequence[Scorer],
        concurrency: int,
        item_count: int | None,
        skip: Skip | None,
        retried_from: ExperimentStatus | None,
    ) -> None:
        threading.Thread(
            target=self._run,
            args=(sink, items, scorers, concurrency, item_count, skip, retried_from),
            name=f"scorelab-experiment-{self.experiment_id[:8]}",
            daemon=True,
        ).start()

    def record(self, outcome: ScorerOutcome) -> None:
        """Take one finished run: count it, keep a failure in memory, queue a success for
        the writer. A run of a pair that failed before (a retry) replaces that failure."""
        key = (outcome.item_id, outcome.scorer_id)
        with self._changed:
            replaced = self._failures.pop(key, None) if self._failures else None
            if replaced is not None:
                self._counts = _without(self._counts, replaced)
                self._failed_counts = _without(self._failed_counts, replaced)
            self._counts = self._counts.with_outcome(outcome)
            if outcome.status != "success":
                self._failures[key] = outcome
                self._failed_counts = self._failed_counts.with_outcome(outcome)
            if self._watchers:  # waking a thread per run would slow the run down
                self._changed.notify_all()
        if outcome.status == "success" and self._writer is not None:
            self._writer.put(outcome)

    def record_run(self, run: Run) -> None:
        """Take one finished run of the engine (`on_run`): a success is counted and its row
        built once, straight from the run, for the writer; a failure, or a run of a pair that
        failed before (a retry), goes through `record` as its outcome."""
        failures = self._failures
        if run.error is not None or (failures and (run.item.id, run.scorer_id) in failures):
            self.record(run.outcome())
            return
        row = _row(run)
        with self._fast:
            self._fast_succeeded += 1
            if self._fast_succeeded == self._freeze_at:
                self._freeze_at += _REFREEZE_EVERY
                if self._frozen:
                    refreeze_heap()
                else:
                    freeze_heap()
                    self._frozen = True
            if run.judge_calls or run.judge_attempts or run.cached_calls:
                self._fast_usage = self._fast_usage + run.usage
                self._fast_calls += run.judge_calls
                self._fast_attempts += run.judge_attempts
                self._fast_cached += run.cached_calls
        if self._watchers:
            with self._changed:
                self._changed.notify_all()
        if self._writer is not None:
            self._writer.put(row)

    def _run(
        self,
        sink: ResultSink,
        items: Iterable[DatasetItem],
        scorers: Sequence[Scorer],
        concurrency: int,
        item_count: int | None,
        skip: Skip | None,
        retried_from: ExperimentStatus | None,
    ) -> None:
        planned = (item_count or 0) * len(scorers)
        writer = ResultWriter(
            sink,
            self.experiment_id,
            self.tally,
            lambda: self.cancel.cancel(abort_in_flight=True),
            own_process=planned >= _OWN_PROCESS_FROM,
        )
        self._writer = writer
        known = len(items) if item_count is None and isinstance(items, Sized) else item_count
        freezing = (known or 0) * len(scorers) >= _FREEZE_FROM
        status: ExperimentStatus = "error"
        error: BaseException | None = None
        try:
            if freezing:
                # Frozen before the first run as well: the scorers' first runs load their
                # lexicons (keyword coverage: 0.5 s of CPU), whose allocations brought full
                # passes over the whole heap (0.1 s each, three per run); the lexicons
                # themselves are frozen once the run is under way.
                freeze_heap()
                self._frozen = True
                self._freeze_at = self._fast_succeeded + _FREEZE_AFTER_RUNS
            sink.update_experiment_progress(self.experiment_id, *self.tally())
            self._publish("running")
            model, limit = self.rate_limit or ("", None)
            # The engine hands its runs over as they are (rows built without an outcome
            # record); another runner (Ray) hands over outcomes.
            taking: dict[str, Any] = (
                {"on_run": self.record_run}
                if self.runner is run_experiment
                else {"on_outcome": self.record}
            )
            with rate_limited(model, limit):
                summary = run_coroutine_sync(
                    self.runner(
                        items=items,
                        scorers=scorers,
                        concurrency=concurrency,
                        item_count=item_count,
                        cancel=self.cancel,
                        skip=skip,
                        budget=self.budget,
                        **taking,
                    )
                )
            status = self._end_status(summary.status, retried_from)
        except BaseException as failure:  # the worker must always record how it ended
            error = failure
        finally:
            writer.close()
            self._freeze_at = 0
            if self._frozen:
                self._frozen = False
                thaw_heap()
        self._finish(sink, status, error, writer.error)

    def _end_status(
        self, ran: ExperimentStatus, retried_from: ExperimentStatus | None
    ) -> ExperimentStatus:
        """The experiment's status once this run (maybe of part of it) ended as `ran`."""
        counts = self.counts()
        every_run_failed = bool(counts.total) and counts.failed == counts.total
        if retried_from is None:
            # The engine saw only the pairs it ran: "failed" is for when every pair failed,
            # and the skipped ones were stored successes.
            return "completed" if ran == "failed" and not every_run_failed else ran
        if retried_from in ("completed", "failed"):  # every pair was attempted, still is
            return "failed" if every_run_failed else "completed"
        return retried_from

    def _finish(
        self,
        sink: ResultSink,
        status: ExperimentStatus,
        error: BaseException | None,
        storage_error: BaseException | None = None,
    ) -> None:
        """Record the end, then show it: a waiter woken by the final status finds every
        result and the final row written.

        `error`: the run itself broke (`error`). `storage_error`: the results could not be
        written (a full disk, the database gone): the run stopped there with what was written
        kept, so it ends `interrupted`, resumable once the cause is gone, and says why."""
        message = self._error_before_retry if status in ("error", "interrupted") else None
        if error is not None:
            status = "error"
            message = _error_text(error)
            logger.error("Experiment %s stopped: %s", self.experiment_id, message)
        elif storage_error is not None:
            status = "interrupted"
            message = (
                "Stopped because the results could not be written to the database "
                f"({_error_text(storage_error)}); the results written before are kept: resume "
                "the experiment once the cause is gone (free disk space, the database back)"
            )
            logger.error("Experiment %s stopped: %s", self.experiment_id, message)
        try:
            counts, failed = self.tally()
            sink.finish_experiment(self.experiment_id, status, counts, error=message, failed=failed)
        except Exception as failure:  # nothing more can be done than say so
            failure_text = mask_secrets(str(failure))  # a database URL's password, say
            logger.error(
                "Could not record the end of experiment %s: %s", self.experiment_id, failure_text
            )
            if storage_error is not None and error is None:
                # The row still says running; once its heartbeat is stale it reads
                # `interrupted`, and a resume takes it.
                message = (
                    f"{message}. The end could not be recorded either ({failure_text}): it "
                    "shows as running until its heartbeat is stale, then it can be resumed"
                )
            else:
                status, message = "error", f"Could not record the end: {failure_text}"
        self._publish(status, message)

    def _publish(self, status: ExperimentStatus, error: str | None = None) -> None:
        with self._changed:
            now = time.perf_counter()
            if status == "running":
                self._started = now
            elif self._started is not None:
                self._elapsed_s = now - self._started
            self._status, self._error = status, error
            self._changed.notify_all()


def _error_text(error: BaseException) -> str:
    return mask_secrets(f"{type(error).__name__}: {error}" if str(error) else repr(error))


class Jobs:
    """The experiments of this process, by id (thread-safe)."""

    def __init__(self) -> None:
        self._jobs: dict[str, ExperimentJob] = {}
        self._lock = threading.Lock()

    def add(self, job: ExperimentJob) -> ExperimentJob:
        """Keep `job` (it replaces any job with the same id)."""
        with self._lock:
            self._jobs[job.experiment_id] = job
        return job

    def get(self, experiment_id: str) -> ExperimentJob | None:
        """The job of that experiment, if this process ran or imported it."""
        with self._lock:
            return self._jobs.get(experiment_id)

    def forget(self, experiment_id: str) -> None:
        """Drop the job of that experiment (its failures with it)."""
        with self._lock:
            self._jobs.pop(experiment_id, None)

    def running(self) -> list[str]:
        """Ids of the experiments still running, oldest first."""
        with self._lock:
            jobs = list(self._jobs.values())
        return [job.experiment_id for job in jobs if job.running]


class StoredPairs:
    """The `skip` of a resumed experiment: the (item, scorer) pairs that have a stored result,
    looked up a page of items at a time as the items are read, so neither the items nor the
    stored keys of a large experiment are ever held whole.

    `items()` gives the items (to hand to the engine) and records the stored pairs of each page
    before giving its first item; the engine asks about an item's pairs right after taking it,
    before it takes the next one."""

    def __init__(
        self,
        items: Iterable[DatasetItem],
        stored: Callable[[list[str]], set[tuple[str, str]]],
        page_size: int = 2_000,
    ) -> None:
        self._items = items
        self._stored = stored
        self._page_size = page_size
        self._page: set[tuple[str, str]] = set()

    def items(self) -> Iterator[DatasetItem]:
        """The items, a page of stored pairs looked up ahead of each page of items."""
        page: list[DatasetItem] = []
        for item in self._items:
            page.append(item)
            if len(page) == self._page_size:
                yield from self._looked_up(page)
                page = []
        yield from self._looked_up(page)

    def _looked_up(self, page: list[DatasetItem]) -> Iterator[DatasetItem]:
        if page:
            self._page = self._stored([item.id for item in page])
            yield from page

    def __call__(self, item: DatasetItem, scorer_id: str) -> bool:
        """True when the pair has a stored result."""
        return (item.id, scorer_id) in self._page


def _row(run: Run) -> ResultRow:
    """A successful run as the store writes it (`core.run_results.RESULT_ROW_COLUMNS`)."""
    produced = run.produced
    assert produced is not None
    if type(produced) is RunParts:
        return _parts_row(run, produced)
    # A run of function steps is encoded from its parts, never made a record.
    fields = produced.fields() if isinstance(produced, RunParts) else produced.__dict__
    score, reason, usage, item = fields["score"], fields["reason"], run.usage, run.item
    # The run saw the item's own texts (no prepare_run changed them): the stored result need
    # not echo them, the store rebuilds them from the item when it is read.
    echoes = (
        fields["input"] is item.input
        and fields["output"] is item.output
        and fields["ground_truth"] is item.ground_truth
        and fields["request_context"] is (item.metadata or None)
    )
    return (
        run.item.id,
        run.scorer_id,
        score if score is None or type(score) is float else float(score),
        "null" if reason is None else database_json(reason),
        fields_json(fields, without_item_texts=echoes),
        run.duration_ms,
        usage.input_tokens,
        usage.output_tokens,
        usage.total_tokens,
        usage.reasoning_tokens,
        usage.cached_input_tokens,
        usage.cache_creation_input_tokens,
        run.judge_calls,
        run.judge_attempts,
        run.cached_calls,
        echoes,
        step_usage_json(fields["judge"]),
    )


def _parts_row(run: Run, parts: RunParts) -> ResultRow:
    """`_row` of a run of function steps, from its parts (no judge execution: no step usage)."""
    # The records' fields read from their __dict__: a pydantic record's attribute goes
    # through its __getattr__ hook first.
    scored, item, usage = parts.run.__dict__, run.item.__dict__, run.usage.__dict__
    values = parts.values
    echoes = (
        scored["input"] is item["input"]
        and scored["output"] is item["output"]
        and scored["ground_truth"] is item["ground_truth"]
        and scored["request_context"] is (item["metadata"] or None)
    )
    score, reason = values.get("generateScore"), values.get("generateReason")
    return (
        item["id"],
        run.scorer_id,
        score if score is None or type(score) is float else float(score),
        "null" if reason is None else database_json(reason),
        parts.result_json(without_item_texts=echoes),
        run.duration_ms,
        usage["input_tokens"],
        usage["output_tokens"],
        usage["total_tokens"],
        usage["reasoning_tokens"],
        usage["cached_input_tokens"],
        usage["cache_creation_input_tokens"],
        run.judge_calls,
        run.judge_attempts,
        run.cached_calls,
        echoes,
        None,
    )


def _without(counts: RunCounts, outcome: ScorerOutcome) -> RunCounts:
    """`counts` less one finished run (a failure whose pair ran again)."""
    usage = {
        key: mine if theirs is None or mine is None else mine - theirs
        for key, mine, theirs in (
            (key, getattr(counts.usage, key), getattr(outcome.usage, key))
            for key in JudgeUsage.model_fields
        )
    }
    succeeded = outcome.status == "success"
    return RunCounts(
        total=counts.total,
        succeeded=counts.succeeded - succeeded,
        failed=counts.failed - (not succeeded),
        usage=JudgeUsage(**usage),
        judge_calls=counts.judge_calls - outcome.judge_calls,
        judge_attempts=counts.judge_attempts - outcome.judge_attempts,
    )


def stored_progress(info: ExperimentInfo) -> ExperimentProgress:
    """The progress of an experiment this process does not run, from its stored row."""
    end = info.finished_at or datetime.now(UTC)
    elapsed = (end - info.started_at).total_seconds() if info.started_at else 0.0
    return ExperimentProgress(
        experiment_id=info.id,
        status=info.status,
        counts=info.counts,
        elapsed_s=max(elapsed, 0.0),
        error=info.error,
    )
