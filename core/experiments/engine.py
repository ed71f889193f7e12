"""`run_experiment`: every scorer on every item, each (item, scorer) run isolated.

Mastra's dataset-experiment semantics (scorer-core.md, end of §6.4): a failing scorer gives a
failed outcome with the error and, for a `ScorerRunError`, the recovered score and reason, the
failed step, the completed steps and the failed judge execution. The engine never touches
storage; the caller decides what to keep (the service writes only successful outcomes).
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from core.errors import ScorerRunError
from core.experiment_records import (
    DatasetItem,
    ExperimentProgress,
    ExperimentStatus,
    ExperimentSummary,
    ScorerOutcome,
)
from core.experiments._means import finite_mean
from core.run_results import JudgeExecutionFailure, JudgeUsage, ScorerRunResult
from core.scoring import Scorer

__all__ = ["CancelToken", "run_experiment", "run_outcome"]

OnOutcome = Callable[[ScorerOutcome], None]
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


@dataclass(slots=True)
class _Tally:
    """Running totals, for progress events and the summary."""

    total: int
    started: float = field(default_factory=time.perf_counter)
    succeeded: int = 0
    failed: int = 0
    usage: JudgeUsage = field(default_factory=JudgeUsage)
    judge_calls: int = 0
    judge_attempts: int = 0
    score_sums: dict[str, list[float]] = field(default_factory=dict)

    def add(self, outcome: ScorerOutcome) -> None:
        if outcome.status == "success":
            self.succeeded += 1
            if outcome.score is not None:
                self.score_sums.setdefault(outcome.scorer_id, []).append(outcome.score)
        else:
            self.failed += 1
        if not outcome.usage.is_empty():
            self.usage = self.usage + outcome.usage
        self.judge_calls += outcome.judge_calls
        self.judge_attempts += outcome.judge_attempts

    @property
    def done(self) -> int:
        return self.succeeded + self.failed

    def progress(self, status: ExperimentStatus) -> ExperimentProgress:
        elapsed = time.perf_counter() - self.started
        remaining = self.total - self.done
        eta = None
        if status == "running" and self.done:
            eta = elapsed / self.done * remaining
        return ExperimentProgress(
            status=status,
            total=self.total,
            done=self.done,
            succeeded=self.succeeded,
            failed=self.failed,
            usage=self.usage,
            judge_calls=self.judge_calls,
            judge_attempts=self.judge_attempts,
            elapsed_s=elapsed,
            eta_s=eta,
        )


async def run_experiment(
    *,
    items: Sequence[DatasetItem],
    scorers: Sequence[Scorer],
    concurrency: int = 8,
    on_outcome: OnOutcome | None = None,
    on_progress: OnProgress | None = None,
    cancel: CancelToken | None = None,
    progress_interval_s: float = 0.1,
) -> ExperimentSummary:
    """Run every scorer on every item, at most `concurrency` runs at once.

    `on_outcome` is called once per finished run (in the event loop's thread; it should be
    quick, e.g. put the outcome on a queue). `on_progress` is called at most every
    `progress_interval_s` seconds and once at the end. An exception raised by either callback
    stops the experiment and propagates.
    """
    _check_arguments(items, scorers, concurrency)
    started_at = datetime.now(UTC)
    tally = _Tally(total=len(items) * len(scorers))
    pairs = _pairs(items, scorers)
    last_progress = -math.inf

    def report(outcome: ScorerOutcome) -> None:
        nonlocal last_progress
        tally.add(outcome)
        if on_outcome is not None:
            on_outcome(outcome)
        now = time.perf_counter()
        if on_progress is not None and now - last_progress >= progress_interval_s:
            last_progress = now
            on_progress(tally.progress("running"))

    async def worker() -> None:
        for item, scorer in pairs:
            if cancel is not None and cancel.cancelled:
                return
            report(await run_outcome(item, scorer))

    aborted = await _run_workers(worker, concurrency, cancel)
    cancelled = aborted or (cancel is not None and cancel.cancelled and tally.done < tally.total)
    status = _final_status(tally, cancelled)
    if on_progress is not None:
        on_progress(tally.progress(status))
    return _summary(tally, status, len(items), started_at)


async def _run_workers(
    worker: Callable[[], Any], concurrency: int, cancel: CancelToken | None
) -> bool:
    """Run `concurrency` workers; True when `cancel(abort_in_flight=True)` cut them short."""
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
        results = await asyncio.gather(*tasks, return_exceptions=True)
    finally:
        remove()
        for task in tasks:
            task.cancel()
    errors = [r for r in results if isinstance(r, BaseException)]
    real = [e for e in errors if not isinstance(e, asyncio.CancelledError)]
    if real:
        raise real[0]
    if errors and not aborted:  # cancelled from outside: let the caller see it
        raise asyncio.CancelledError()
    return aborted


def _pairs(items: Sequence[DatasetItem], scorers: Sequence[Scorer]) -> Iterator[Any]:
    """(item, scorer) pairs, item by item, shared by the workers."""
    for item in items:
        for scorer in scorers:
            yield item, scorer


async def run_outcome(item: DatasetItem, scorer: Scorer) -> ScorerOutcome:
    """Run one scorer on one item; never raises for a scorer failure."""
    started = time.perf_counter()
    try:
        # The item's other columns are its request context: a `context` column is what the
        # faithfulness, hallucination and context-* scorers judge against.
        result = await scorer.run(
            input=item.input,
            output=item.output,
            ground_truth=item.ground_truth,
            request_context=item.metadata or None,
        )
    except asyncio.CancelledError:
        raise
    except Exception as error:
        return _failure(item, scorer, error, _elapsed_ms(started))
    return _success(item, scorer, result, _elapsed_ms(started))


def _success(
    item: DatasetItem, scorer: Scorer, result: ScorerRunResult, duration_ms: int
) -> ScorerOutcome:
    usage, calls, attempts = _judge_totals(result)
    return ScorerOutcome(
        item_id=item.id,
        scorer_id=scorer.id,
        status="success",
        score=result.score,
        reason=result.reason,
        result=result.to_dict(),
        duration_ms=duration_ms,
        usage=usage,
        judge_calls=calls,
        judge_attempts=attempts,
    )


def _failure(
    item: DatasetItem, scorer: Scorer, error: Exception, duration_ms: int
) -> ScorerOutcome:
    fields: dict[str, Any] = {}
    if isinstance(error, ScorerRunError):
        snapshot = error.result
        usage, calls, attempts = _judge_totals(snapshot)
        fields = {
            "recovered_score": snapshot.score if snapshot is not None else None,
            "recovered_reason": snapshot.reason if snapshot is not None else None,
            "failed_step": error.failed_step,
            "completed_steps": list(error.completed_steps),
            "failed_execution": _failed_execution(snapshot, error.failed_step),
            "snapshot": snapshot.to_dict() if snapshot is not None else None,
            "usage": usage,
            "judge_calls": calls,
            "judge_attempts": attempts,
        }
    return ScorerOutcome(
        item_id=item.id,
        scorer_id=scorer.id,
        status="failed",
        error=str(error) or type(error).__name__,
        error_type=type(error).__name__,
        duration_ms=duration_ms,
        **fields,
    )


def _failed_execution(
    snapshot: ScorerRunResult | None, failed_step: str
) -> JudgeExecutionFailure | None:
    if snapshot is None or not snapshot.judge or failed_step not in snapshot.judge:
        return None
    executions = snapshot.judge[failed_step].executions  # type: ignore[index]
    last = executions[-1] if executions else None
    return last if isinstance(last, JudgeExecutionFailure) else None


def _judge_totals(result: ScorerRunResult | None) -> tuple[JudgeUsage, int, int]:
    """Usage, model calls and attempts summed over every judge execution of a run."""
    usage, calls, attempts = JudgeUsage(), 0, 0
    if result is None or not result.judge:
        return usage, calls, attempts
    for step in result.judge.values():
        for execution in step.executions:
            if execution.usage is not None:
                usage = usage + execution.usage
            calls += execution.model_call_count
            attempts += execution.attempt_count
    return usage, calls, attempts


def _final_status(tally: _Tally, cancelled: bool) -> ExperimentStatus:
    if cancelled:
        return "cancelled"
    if tally.total and tally.failed == tally.total:
        return "failed"
    return "completed"


def _summary(
    tally: _Tally, status: ExperimentStatus, total_items: int, started_at: datetime
) -> ExperimentSummary:
    return ExperimentSummary(
        status=status,
        total_items=total_items,
        total_runs=tally.total,
        succeeded=tally.succeeded,
        failed=tally.failed,
        skipped=tally.total - tally.done,
        completed_with_errors=tally.failed > 0,
        scores={k: finite_mean(v) for k, v in tally.score_sums.items() if v},
        usage=tally.usage,
        judge_calls=tally.judge_calls,
        judge_attempts=tally.judge_attempts,
        started_at=started_at,
        finished_at=datetime.now(UTC),
    )


def _elapsed_ms(started: float) -> int:
    return round((time.perf_counter() - started) * 1000)


def _check_arguments(
    items: Sequence[DatasetItem], scorers: Sequence[Scorer], concurrency: int
) -> None:
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise ValueError(f"concurrency must be a positive integer, got {concurrency!r}")
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
    for position, item in enumerate(items):
        if not isinstance(item, DatasetItem):
            raise TypeError(f"items[{position}] must be a DatasetItem, not {type(item).__name__}")
