"""`run_experiment`: the one loop that runs scorers over items.

Every (item, scorer) run goes through here, whoever asks for it:

- the service's experiments: each run isolated, `concurrency` runs at once; a failing scorer
  gives a failed outcome with the error and, for a `ScorerRunError`, the recovered score and
  reason, the failed step, the completed steps and the failed judge execution (Mastra's
  dataset-experiment semantics; docs/core.md, Experiments);
- `run_evals` (`per_item=True`): `concurrency` items at once, each item's output produced by
  `prepare` (a target), its gates and then its scorers run in order, the first failure either
  raised (`on_error="raise"`) or failing the item (`on_error="fail_item"`).

The engine never touches storage: the caller decides what to keep from the outcomes it is
handed (the service writes only successful ones). What it counts is a `RunCounts`, the record
the store, the service and the pages share.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import math
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Iterator, Sequence, Sized
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from core._clock import elapsed_ms
from core.errors import ScorerRunError
from core.experiments._heap import freeze_heap, refreeze_heap, thaw_heap
from core.judge.budget import JudgeBudget, budget_refusal
from core.judge.secrets import secret_masker
from core.records import (
    DatasetItem,
    ExperimentProgress,
    ExperimentStatus,
    ExperimentSummary,
    RunCounts,
    ScorerOutcome,
)
from core.run_results import JudgeExecutionFailure, JudgeUsage, ScorerRunResult
from core.scoring import RunParts, Scorer

__all__ = [
    "MAX_CONCURRENCY",
    "CancelToken",
    "ErrorMode",
    "ItemRun",
    "OnRun",
    "Run",
    "RunFailed",
    "ScorerInput",
    "final_status",
    "run_experiment",
    "run_outcome",
]

MAX_CONCURRENCY = 256
"""The most runs (or items) an experiment runs at once: each is a task with its own memory, and a
judge server is better served with fewer (the dashboard's slider stops at 64)."""

JUDGED_FREEZE_FROM = 100
"""Planned units of work (runs, or items with `per_item`) from which a run whose scorers call a
judge keeps the heap out of the collector's full passes while it runs (core/experiments/
_heap.py): litellm brings some 460,000 long-lived objects that every full pass walks again. At
concurrency 32 against a loopback judge, the collector's share of a call fell from 0.21-0.26 ms
to 0.05-0.11 ms, of 2.8-3.0 ms of client CPU (bench/judge_throughput.py; docs/core.md)."""
JUDGED_REFREEZE_AFTER = 50
"""Finished runs after which the heap is frozen again: what the first judge calls loaded
(litellm's providers and clients, imported lazily) is then frozen too."""

ErrorMode = Literal["isolate", "raise", "fail_item"]
"""What a failing run does: `isolate` (it is a failed outcome, the rest go on), `raise` (the
experiment stops and raises `RunFailed`), `fail_item` (the item's remaining scorers are not
run; `per_item` only)."""

OnOutcome = Callable[[ScorerOutcome], None]
OnRun = Callable[["Run"], None]
"""Called with each finished run itself (before `on_outcome`): the caller builds what it keeps
straight from the run (a stored row) without the outcome record."""
Skip = Callable[[DatasetItem, str], bool]
"""(item, scorer id) -> True when that pair is not to run (a resumed experiment's stored one)."""
OnProgress = Callable[[ExperimentProgress], None]


class CancelToken:
    """Cooperative cancellation, usable from any thread.

    `cancel()` stops new runs from starting and lets the runs in flight finish;
    `cancel(abort_in_flight=True)` also cancels those (they produce no outcome).
    """

    def __init__(self) -> None:
        self._event = threading.Event()
        self._abort = threading.Event()
        self._listeners: list[Callable[[], None]] = []
        self._lock = threading.Lock()

    @property
    def cancelled(self) -> bool:
        """True once `cancel()` was called."""
        return self._event.is_set()

    def cancel(self, *, abort_in_flight: bool = False) -> None:
        """Ask the experiment to stop."""
        with self._lock:
            self._event.set()
            if abort_in_flight:
                self._abort.set()
            listeners = list(self._listeners) if abort_in_flight else []
        for listener in listeners:
            listener()

    def _on_abort(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Call `listener` on `cancel(abort_in_flight=True)` (now, if that already happened);
        returns the function that unregisters it."""
        with self._lock:
            already = self._abort.is_set()
            if not already:
                self._listeners.append(listener)
        if already:
            listener()

        def remove() -> None:
            with self._lock, contextlib.suppress(ValueError):
                self._listeners.remove(listener)

        return remove


@dataclass(frozen=True, slots=True)
class ScorerInput:
    """What an item's scorers are given."""

    input: Any = None
    output: Any = None
    ground_truth: Any = None
    request_context: Any = None

    @classmethod
    def of(cls, item: DatasetItem) -> ScorerInput:
        """A stored item as it is scored: its other columns are its request context (a
        `context` column is what the faithfulness, hallucination and context-* scorers judge
        against)."""
        return cls(item.input, item.output, item.ground_truth, item.metadata or None)


Prepare = Callable[[DatasetItem], Awaitable[ScorerInput]]


@dataclass(slots=True)
class Run:
    """One scorer on one item: its result, or the error it raised."""

    item: DatasetItem
    scorer_id: str
    produced: ScorerRunResult | RunParts | None
    """What the scorer returned: its result, or the parts of a run of function steps, whose
    result is built only when `result` is read (a stored run's row needs none)."""
    error: Exception | None
    duration_ms: int
    usage: JudgeUsage = field(default_factory=JudgeUsage)
    judge_calls: int = 0
    judge_attempts: int = 0
    cached_calls: int = 0

    @property
    def ok(self) -> bool:
        """True when the scorer returned a result."""
        return self.error is None

    @property
    def result(self) -> ScorerRunResult | None:
        """The scorer's result (None when it raised)."""
        produced = self.produced
        return produced.record() if isinstance(produced, RunParts) else produced

    def outcome(self) -> ScorerOutcome:
        """The run as an outcome record (success with the Mastra-format result, or failure
        with what was recovered)."""
        totals: dict[str, Any] = {
            "item_id": self.item.id,
            "scorer_id": self.scorer_id,
            "duration_ms": self.duration_ms,
            "usage": self.usage,
            "judge_calls": self.judge_calls,
            "judge_attempts": self.judge_attempts,
            "cached_calls": self.cached_calls,
        }
        if self.error is None:
            assert self.result is not None
            return ScorerOutcome(
                status="success",
                score=self.result.score,
                reason=self.result.reason,
                result=self.result.to_dict(),
                **totals,
            )
        # Any error may quote a key (a judge's echo, a scorer's own message): a failure record
        # never holds a secret the process has (judge records are masked when made).
        masker = secret_masker()
        masker.exception(self.error)
        return masker.record(
            ScorerOutcome(
                status="failed",
                error=str(self.error) or type(self.error).__name__,
                error_type=type(self.error).__name__,
                **_recovered(self.error),
                **totals,
            )
        )


@dataclass(slots=True)
class ItemRun:
    """What happened to one item (`per_item`): handed to `on_item` once it is done."""

    item: DatasetItem
    given: ScorerInput | None
    """What its scorers were given; None when `prepare` failed."""
    runs: list[Run] = field(default_factory=list)
    """Its scorers' runs in order (with `fail_item`, up to the first failure)."""
    gates: list[Run] = field(default_factory=list)
    """Its gates' runs in order."""
    error: Exception | None = None
    """The error `prepare` raised, if it did."""


class RunFailed(Exception):
    """`on_error="raise"`: the first failure, with its item and scorer (None when `prepare`
    failed); the original error is `error` and the `__cause__`."""

    def __init__(self, item: DatasetItem, scorer_id: str | None, error: Exception) -> None:
        super().__init__(f"item {item.id!r}, {scorer_id or 'prepare'}: {error}")
        self.item = item
        self.scorer_id = scorer_id
        self.error = error


OnItem = Callable[[ItemRun], Awaitable[None] | None]


@dataclass(slots=True)
class _Totals:
    """The counts and the running mean score per scorer, kept in plain numbers (a record per
    finished run cost as much as a fast scorer's run) and made a `RunCounts` when read."""

    total: int
    succeeded: int = 0
    failed: int = 0
    usage: JudgeUsage = field(default_factory=JudgeUsage)
    judge_calls: int = 0
    judge_attempts: int = 0
    cached_calls: int = 0
    means: dict[str, list[float]] = field(default_factory=dict)  # id -> [runs, mean]
    left_out: int = 0
    """Pairs `skip` left out, taken off the planned total when the counts are read."""

    def current(self) -> RunCounts:
        """The counts, with the pairs left out off the total."""
        self.total -= self.left_out
        self.left_out = 0
        return RunCounts(
            total=self.total,
            succeeded=self.succeeded,
            failed=self.failed,
            usage=self.usage,
            judge_calls=self.judge_calls,
            judge_attempts=self.judge_attempts,
            cached_calls=self.cached_calls,
        )

    def add(self, run: Run) -> None:
        usage = run.usage
        if (
            run.judge_calls
            or run.judge_attempts
            or (usage is not _NO_USAGE and not usage.is_empty())
        ):
            self.usage = self.usage + run.usage
            self.judge_calls += run.judge_calls
            self.judge_attempts += run.judge_attempts
        self.cached_calls += run.cached_calls
        if run.error is not None:
            self.failed += 1
            return
        self.succeeded += 1
        score = run.produced.score if run.produced is not None else None
        if isinstance(score, int | float) and math.isfinite(score):
            entry = self.means.get(run.scorer_id)
            if entry is None:
                entry = self.means[run.scorer_id] = [0, 0.0]
            entry[0] += 1
            # Each share is at most max/n, so the mean of scores near the largest double
            # stays finite where a plain sum would overflow.
            entry[1] += score / entry[0] - entry[1] / entry[0]


async def run_experiment(
    *,
    items: Iterable[DatasetItem],
    scorers: Sequence[Scorer],
    concurrency: int = 8,
    item_count: int | None = None,
    on_outcome: OnOutcome | None = None,
    on_run: OnRun | None = None,
    on_progress: OnProgress | None = None,
    cancel: CancelToken | None = None,
    progress_interval_s: float = 0.1,
    on_error: ErrorMode = "isolate",
    per_item: bool = False,
    prepare: Prepare | None = None,
    gates: Sequence[Scorer] = (),
    on_item: OnItem | None = None,
    skip: Skip | None = None,
    budget: JudgeBudget | None = None,
) -> ExperimentSummary:
    """Run every scorer on every item.

    `items` may be any iterable (e.g. a store's paged reader), consumed once as the runs start:
    then `item_count` says how many it gives (a sequence's length is used otherwise).

    At most `concurrency` runs at once (`MAX_CONCURRENCY` at most); with `per_item`,
    `concurrency` items at once, each running `prepare` (what its scorers are given; default:
    the item's own fields), then its `gates` and its scorers in order, then `on_item`. Gate
    runs go to `on_item` only (neither counted nor handed to `on_outcome`), and never fail the
    item or the experiment.

    `on_outcome` is called once per finished scorer run (in the event loop's thread; it should
    be quick, e.g. put the outcome on a queue); `on_run` too, with the `Run` itself, for a
    caller that needs no outcome record (a job building its stored rows). `on_progress` is
    called at most every `progress_interval_s` seconds and once at the end. An exception raised
    by a callback stops the experiment and propagates; so does the first failure with
    `on_error="raise"`, as `RunFailed`.

    `skip(item, scorer_id)`, asked once per pair as the items are read, leaves out the pairs
    for which it is True: neither run nor counted (the planned total shrinks by one each), so
    resuming an experiment runs only what it lacks (an item left with no scorer is skipped whole).

    `budget`: a spend cap every judge call asks before it starts (core/judge/budget.py). A run
    whose judge call it refuses is not finished (neither counted nor handed on: it is skipped),
    no run starts after that, and the status is `budget_reached`.
    """
    _check_arguments(items, scorers, concurrency)
    _check_item_options(on_error, per_item, prepare, gates, on_item)
    if item_count is None:
        if not isinstance(items, Sized):
            raise TypeError("items is not a sequence: pass item_count, how many it gives")
        item_count = len(items)
    started_at = datetime.now(UTC)
    started = time.perf_counter()
    totals = _Totals(total=item_count * len(scorers))
    last_progress = -math.inf
    units_count = item_count if per_item else item_count * len(scorers)
    freezing = units_count >= JUDGED_FREEZE_FROM and any(
        scorer.has_judge_steps for scorer in (*scorers, *gates)
    )
    finished = 0

    def report(run: Run) -> None:
        nonlocal last_progress, finished
        totals.add(run)
        if freezing:
            finished += 1
            if finished == JUDGED_REFREEZE_AFTER:
                refreeze_heap()
        if on_run is not None:
            on_run(run)
        if on_outcome is not None:
            on_outcome(run.outcome())
        if on_progress is not None:
            now = time.perf_counter()
            if now - last_progress >= progress_interval_s:
                last_progress = now
                counts = totals.current()
                on_progress(ExperimentProgress.measured("running", counts, now - started))

    def pair_done(run: Run) -> None:
        """One pair's run finished (not `per_item`: no prepare, gate or on_item, which need
        it)."""
        if run.error is not None:
            if budget is not None and budget_refusal(run.error) is not None:
                return  # not finished: the cap stopped it before its judge call
            report(run)
            if on_error == "raise":
                raise RunFailed(run.item, run.scorer_id, run.error) from run.error
            return
        report(run)

    async def run_unit(item: DatasetItem, unit: tuple[Scorer, ...]) -> None:
        try:
            given = ScorerInput.of(item) if prepare is None else await prepare(item)
        except asyncio.CancelledError:
            raise
        except Exception as error:
            if on_error == "raise":
                raise RunFailed(item, None, error) from error
            await _call(on_item, ItemRun(item, None, error=error))
            return
        done = ItemRun(item, given, gates=[await _run(item, gate, given) for gate in gates])
        for scorer in unit:
            run = await _run(item, scorer, given)
            if budget is not None and budget_refusal(run.error) is not None:
                return  # not finished: the cap stopped it before its judge call
            report(run)
            done.runs.append(run)
            if run.error is not None and on_error == "raise":
                raise RunFailed(item, scorer.id, run.error) from run.error
            if run.error is not None and on_error == "fail_item":
                break
        await _call(on_item, done)

    def skipped(item: DatasetItem, scorer: Scorer) -> bool:
        if skip is None or not skip(item, scorer.id):
            return False
        totals.left_out += 1
        return True

    units = _units(items, scorers, per_item, skipped if skip is not None else None)

    async def worker() -> None:
        for item, unit in units:
            if cancel is not None and cancel.cancelled:
                return
            if budget is not None and budget.reached:
                return
            if per_item:
                await run_unit(item, unit)
                continue
            # A pair: begun here, awaited only when the scorer has something to await.
            run = _start(item, unit[0])
            pair_done(run if isinstance(run, Run) else await run)

    # No more workers than units of work: each is a task, and idle ones cost memory too.
    workers = max(1, min(concurrency, units_count))
    if freezing:
        freeze_heap()
    try:
        with budget.active() if budget is not None else contextlib.nullcontext():
            # The workers are created in here: each task copies the context, budget included.
            aborted = await _run_workers(worker, workers, cancel)
    finally:
        if freezing:
            thaw_heap()
    counts = totals.current()
    cancelled = aborted or (cancel is not None and cancel.cancelled and counts.skipped > 0)
    capped = budget is not None and budget.reached and counts.skipped > 0
    status = final_status(counts, cancelled, capped)
    if on_progress is not None:
        on_progress(ExperimentProgress.measured(status, counts, time.perf_counter() - started))
    return ExperimentSummary(
        status=status,
        counts=counts,
        scores={scorer_id: mean for scorer_id, (_, mean) in totals.means.items()},
        started_at=started_at,
        finished_at=datetime.now(UTC),
    )


async def run_outcome(item: DatasetItem, scorer: Scorer) -> ScorerOutcome:
    """Run one scorer on one item as an experiment does; never raises for a scorer failure."""
    return (await _run(item, scorer, ScorerInput.of(item))).outcome()


async def _run(item: DatasetItem, scorer: Scorer, given: ScorerInput | None = None) -> Run:
    """One scorer on one item (given `given`, else the item's own fields, as
    `ScorerInput.of` gives them); a scorer failure is returned in the run, never raised."""
    run = _start(item, scorer, given)
    return run if isinstance(run, Run) else await run


def _start(
    item: DatasetItem, scorer: Scorer, given: ScorerInput | None = None
) -> Run | Coroutine[Any, Any, Run]:
    """`_run` begun here: a run with nothing to await (a code scorer's) is finished and
    returned without a coroutine made for it; any other gives the coroutine that finishes it."""
    started = time.perf_counter()
    if given is None:  # the item's own fields, without a ScorerInput made for each run
        # Read from its __dict__: a pydantic record's attribute goes through its __getattr__
        # hook first, four times a run.
        own = item.__dict__
        texts = (own["input"], own["output"], own["ground_truth"], own["metadata"] or None)
    else:
        texts = (given.input, given.output, given.ground_truth, given.request_context)
    try:
        produced = scorer.start_parts(
            input=texts[0], output=texts[1], ground_truth=texts[2], request_context=texts[3]
        )
    except Exception as error:
        return _failed(item, scorer.id, error, started)
    if isinstance(produced, RunParts):  # function steps alone: no judge call to count
        return Run(item, scorer.id, produced, None, elapsed_ms(started), _NO_USAGE)
    if isinstance(produced, ScorerRunResult):
        return _succeeded(item, scorer.id, produced, started)
    return _finish(item, scorer.id, produced, started)


async def _finish(
    item: DatasetItem,
    scorer_id: str,
    pending: Coroutine[Any, Any, ScorerRunResult | RunParts],
    started: float,
) -> Run:
    """The rest of a run that had something to await (a judge call, an async step)."""
    try:
        produced = await pending
    except asyncio.CancelledError:
        raise
    except Exception as error:
        return _failed(item, scorer_id, error, started)
    if isinstance(produced, RunParts):
        return Run(item, scorer_id, produced, None, elapsed_ms(started), _NO_USAGE)
    return _succeeded(item, scorer_id, produced, started)


def _succeeded(item: DatasetItem, scorer_id: str, result: ScorerRunResult, started: float) -> Run:
    usage, calls, attempts = result.judge_totals()
    return Run(
        item, scorer_id, result, None, elapsed_ms(started), usage, calls, attempts,
        result.cached_calls(),
    )  # fmt: skip


def _failed(item: DatasetItem, scorer_id: str, error: Exception, started: float) -> Run:
    """A scorer that raised: the run keeps its error and what its snapshot counted."""
    snapshot = error.result if isinstance(error, ScorerRunError) else None
    usage, calls, attempts = snapshot.judge_totals() if snapshot else (JudgeUsage(), 0, 0)
    cached = snapshot.cached_calls() if snapshot else 0
    return Run(item, scorer_id, None, error, elapsed_ms(started), usage, calls, attempts, cached)


_NO_USAGE = JudgeUsage()  # frozen: one serves every run without a judge


def _recovered(error: Exception) -> dict[str, Any]:
    """What a `ScorerRunError` kept: the score and reason computed before the failure, the
    failed step, the steps before it and the failed judge execution."""
    if not isinstance(error, ScorerRunError):
        return {}
    snapshot = error.result
    return {
        "recovered_score": snapshot.score if snapshot is not None else None,
        "recovered_reason": snapshot.reason if snapshot is not None else None,
        "failed_step": error.failed_step,
        "completed_steps": list(error.completed_steps),
        "failed_execution": _failed_execution(snapshot, error.failed_step),
        "snapshot": snapshot.to_dict() if snapshot is not None else None,
    }


def _failed_execution(
    snapshot: ScorerRunResult | None, failed_step: str
) -> JudgeExecutionFailure | None:
    if snapshot is None or not snapshot.judge or failed_step not in snapshot.judge:
        return None
    executions = snapshot.judge[failed_step].executions
    last = executions[-1] if executions else None
    return last if isinstance(last, JudgeExecutionFailure) else None


async def _call(callback: OnItem | None, item_run: ItemRun) -> None:
    if callback is None:
        return
    value = callback(item_run)
    if inspect.isawaitable(value):
        await value


def _units(
    items: Iterable[DatasetItem],
    scorers: Sequence[Scorer],
    per_item: bool,
    skipped: Callable[[DatasetItem, Scorer], bool] | None,
) -> Iterator[tuple[DatasetItem, tuple[Scorer, ...]]]:
    """The work, shared by the workers: an item with all its scorers, or one (item, scorer)
    pair at a time, item by item (the items of an iterable are checked as they come), less the
    pairs `skipped` leaves out (None: none is)."""
    everyone = tuple(scorers)
    singles = tuple((scorer,) for scorer in everyone)  # one unit per scorer, made once
    checked = isinstance(items, Sequence)  # a sequence's items were checked up front
    for position, item in enumerate(items):
        if not checked and not isinstance(item, DatasetItem):
            raise TypeError(f"items[{position}] must be a DatasetItem, not {type(item).__name__}")
        if per_item:
            unit = tuple(
                scorer for scorer in everyone if skipped is None or not skipped(item, scorer)
            )
            if unit or not everyone:  # no scorer at all: the item still runs its gates
                yield item, unit
        elif skipped is None:
            for single in singles:
                yield item, single
        else:
            for single in singles:
                if not skipped(item, single[0]):
                    yield item, single


async def _run_workers(
    worker: Callable[[], Awaitable[None]], concurrency: int, cancel: CancelToken | None
) -> bool:
    """Run `concurrency` workers; the first error cancels the others and is raised. True when
    `cancel(abort_in_flight=True)` cut them short."""
    loop = asyncio.get_running_loop()
    tasks = [asyncio.ensure_future(worker()) for _ in range(concurrency)]
    aborted = False

    def abort() -> None:
        nonlocal aborted
        aborted = True
        for task in tasks:
            loop.call_soon_threadsafe(task.cancel)

    remove = cancel._on_abort(abort) if cancel is not None else (lambda: None)
    try:
        done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    finally:
        remove()
        for task in tasks:
            task.cancel()
    # The error that stopped the others first, then any raised while they stopped.
    for task in sorted(tasks, key=lambda task: task not in done):
        if not task.cancelled() and (error := task.exception()) is not None:
            raise error
    if not aborted and any(task.cancelled() for task in tasks):
        raise asyncio.CancelledError()  # cancelled from outside: let the caller see it
    return aborted


def final_status(counts: RunCounts, cancelled: bool, capped: bool = False) -> ExperimentStatus:
    """How a run of `counts` ended: cancelled, stopped by the spend cap, failed (every run
    failed) or completed; the one rule of every backend (in-process, Ray)."""
    if cancelled:
        return "cancelled"
    if capped:
        return "budget_reached"
    if counts.total and counts.failed == counts.total:
        return "failed"
    return "completed"


def _check_arguments(
    items: Iterable[DatasetItem], scorers: Sequence[Scorer], concurrency: int
) -> None:
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise ValueError(f"concurrency must be a positive integer, got {concurrency!r}")
    if concurrency > MAX_CONCURRENCY:
        raise ValueError(f"concurrency must be at most {MAX_CONCURRENCY}, got {concurrency:,}")
    for position, scorer in enumerate(scorers):
        if not isinstance(scorer, Scorer):
            raise TypeError(f"scorers[{position}] must be a Scorer, not {type(scorer).__name__}")
    ids = [scorer.id for scorer in scorers]
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    if repeated:
        raise ValueError(
            f"each scorer id must be unique (results are keyed by id); repeated: "
            f"{', '.join(repeated)}"
        )
    if not isinstance(items, Sequence):
        return  # checked as they are consumed (`_units`)
    for position, item in enumerate(items):
        if not isinstance(item, DatasetItem):
            raise TypeError(f"items[{position}] must be a DatasetItem, not {type(item).__name__}")


def _check_item_options(
    on_error: Any, per_item: bool, prepare: Any, gates: Sequence[Any], on_item: Any
) -> None:
    if on_error not in ("isolate", "raise", "fail_item"):
        raise ValueError(f"on_error must be 'isolate', 'raise' or 'fail_item', got {on_error!r}")
    item_only = {
        "prepare": prepare is not None,
        "gates": bool(gates),
        "on_item": on_item is not None,
        "on_error='fail_item'": on_error == "fail_item",
    }
    given = [name for name, used in item_only.items() if used]
    if given and not per_item:
        # An item's runs are spread over the workers otherwise: nothing sees the whole item.
        raise ValueError(f"{', '.join(given)} work item by item: pass per_item=True")
    for position, gate in enumerate(gates):
        if not isinstance(gate, Scorer):
            raise TypeError(f"gates[{position}] must be a Scorer, not {type(gate).__name__}")
