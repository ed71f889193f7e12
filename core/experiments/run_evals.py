"""`run_evals`: run scorers (and gates) over many items, average per scorer, check thresholds.

Mastra's `runEvals` semantics for flat scorer lists: a target or scorer failure rejects the
whole batch (`on_error="raise"`), or, with `on_error="record"`, is recorded per item and left out
of the averages. The runs themselves go through the experiment engine (`run_experiment`, item
by item); this module turns its item runs into Mastra's result.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import math
import numbers
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import Field

from core._sync import run_coroutine_sync
from core.errors import MastraError, error_code
from core.experiments._means import finite_mean
from core.experiments._validation import (
    DataItem,
    ScorerEntry,
    validate_data,
    validate_options,
    validate_scorers,
)
from core.experiments.engine import ItemRun, Run, RunFailed, ScorerInput, run_experiment
from core.experiments.thresholds import (
    GateResult,
    ThresholdResult,
    Verdict,
    check_threshold,
    failures_within,
    parse_max_failure_rate,
    verdict,
)
from core.judge.secrets import mask_secrets
from core.record_base import Record
from core.records import DatasetItem
from core.run_results import ErrorSummary
from core.scoring import Scorer

__all__ = [
    "DataItem",
    "ItemOutcome",
    "RunEvalsResult",
    "RunEvalsSummary",
    "run_evals",
    "run_evals_sync",
]

logger = logging.getLogger(__name__)

OnError = Literal["raise", "record"]
Target = Callable[[Any], Any]
OnItemComplete = Callable[..., Any]


class ItemOutcome(Record):
    """What happened to one item (`on_error="record"` only)."""

    index: int
    """The item's position in `data`."""
    id: str | int | None = None
    """The item's id, if it had one."""
    status: Literal["success", "failed"]
    """Whether the target and every scorer succeeded."""
    phase: Literal["target", "scorer"] | None = None
    """Where a failed item failed."""
    scorer_id: str | None = None
    """The scorer that failed, when `phase` is `scorer`."""
    error: ErrorSummary | None = None
    """The failure, for a failed item."""


class RunEvalsSummary(Record):
    """Counts over the items."""

    total_items: int
    """Items that went through the whole pipeline."""
    failed_items: int = 0
    """Items recorded as failed (`on_error="record"`)."""


class RunEvalsResult(Record):
    """What `run_evals` returns."""

    scores: dict[str, float]
    """Mean score per scorer id over numeric scores; scorers with none are left out."""
    summary: RunEvalsSummary
    """Item counts."""
    verdict: Verdict | None = None
    """`failed` (a gate failed, or more items failed than `max_failure_rate` allows) > `scored`
    (a threshold failed) > `passed`; None when there are neither gates nor thresholds."""
    threshold_results: list[ThresholdResult] | None = None
    """One per scorer with a threshold; None when none had one."""
    gate_results: list[GateResult] | None = None
    """One per gate; None when there are no gates."""
    items: list[ItemOutcome] | None = Field(default=None)
    """Per-item outcomes in data order (`on_error="record"` only)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready camelCase dict without None values."""
        from core.run_results import json_ready

        ready: dict[str, Any] = json_ready(self)  # a record becomes a dict
        return ready


@dataclass(slots=True)
class _ItemRecord:
    """Scores of one finished item, or why it failed."""

    scores: dict[str, Any] = field(default_factory=dict)
    gate_scores: dict[str, float] = field(default_factory=dict)
    outcome: ItemOutcome | None = None


async def run_evals(
    *,
    data: Sequence[Mapping[str, Any] | DataItem],
    scorers: Sequence[Scorer | Mapping[str, Any]],
    target: Target | None = None,
    on_item_complete: OnItemComplete | None = None,
    concurrency: int = 1,
    gates: Sequence[Scorer] | None = None,
    on_error: OnError = "raise",
    max_failure_rate: float = 0.0,
) -> RunEvalsResult:
    """Run every scorer (and gate) on every item, `concurrency` items at a time.

    With `on_error="record"`, a failed item leaves every scorer's mean; thresholds and the
    verdict then fail unless at most `max_failure_rate` of the items failed (0 by default: any
    failure fails them, since a mean over the survivors can hide half the runs failing).
    """
    items = validate_data(data, needs_output=target is None)
    entries = validate_scorers(scorers, gates)
    gate_list = list(gates or [])
    validate_options(concurrency, on_error, target, on_item_complete)
    allowed = parse_max_failure_rate(max_failure_rate)
    records: list[_ItemRecord | None] = [None] * len(items)

    async def prepare(position: DatasetItem) -> ScorerInput:
        item = items[int(position.id)]
        output = await _call(target, item.input) if target is not None else item.output
        return ScorerInput(item.input, output, item.ground_truth, item.request_context)

    async def on_item(done: ItemRun) -> None:
        index = int(done.item.id)
        record = _record(index, items[index], done)
        if record.outcome is not None and record.outcome.status == "success" and on_item_complete:
            await _call_keywords(
                on_item_complete,
                item=data[index],
                target_result=done.given.output if target is not None and done.given else None,
                scorer_results={run.scorer_id: run.result for run in done.runs},
            )
        records[index] = record

    try:
        await run_experiment(
            # The engine knows an item by its id: here, its position in `data`.
            items=[DatasetItem(id=str(index)) for index in range(len(items))],
            scorers=[entry.scorer for entry in entries],
            concurrency=concurrency,
            on_error="raise" if on_error == "raise" else "fail_item",
            per_item=True,
            prepare=prepare,
            gates=gate_list,
            on_item=on_item,
        )
    except RunFailed as failed:
        index = int(failed.item.id)
        if failed.scorer_id is None:
            raise _target_error(index, data[index], failed.error) from failed.error
        raise _scorer_error(index, data[index], failed.scorer_id, failed.error) from failed.error
    return _summarise([r for r in records if r is not None], entries, gate_list, on_error, allowed)


def run_evals_sync(
    *,
    data: Sequence[Mapping[str, Any] | DataItem],
    scorers: Sequence[Scorer | Mapping[str, Any]],
    target: Target | None = None,
    on_item_complete: OnItemComplete | None = None,
    concurrency: int = 1,
    gates: Sequence[Scorer] | None = None,
    on_error: OnError = "raise",
    max_failure_rate: float = 0.0,
) -> RunEvalsResult:
    """`run_evals`, blocking (works inside Jupyter or Streamlit too)."""
    return run_coroutine_sync(
        run_evals(
            data=data,
            scorers=scorers,
            target=target,
            on_item_complete=on_item_complete,
            concurrency=concurrency,
            gates=gates,
            on_error=on_error,
            max_failure_rate=max_failure_rate,
        )
    )


def _record(index: int, item: DataItem, done: ItemRun) -> _ItemRecord:
    """The item's scores, or its first failure: that fails the item, and its scorers that
    finished before are left out too."""
    if done.error is not None:
        return _ItemRecord(outcome=_failed(index, item, "target", None, done.error))
    record = _ItemRecord(gate_scores=_gate_scores(done.gates, index))
    failure = next((run for run in done.runs if run.error is not None), None)
    if failure is not None and failure.error is not None:  # the second test is for mypy
        record.outcome = _failed(index, item, "scorer", failure.scorer_id, failure.error)
        return record
    record.scores = {run.scorer_id: run.result.score for run in done.runs if run.result}
    record.outcome = ItemOutcome(index=index, id=item.id, status="success")
    return record


def _gate_scores(runs: list[Run], index: int) -> dict[str, float]:
    """Each gate's numeric score; a gate that raised counts as 0 (and is logged)."""
    scores = {}
    for run in runs:
        if run.error is not None:
            logger.warning(
                "Gate %r threw on item %d and was scored 0: %s",
                run.scorer_id,
                index,
                mask_secrets(str(run.error)),
            )
            scores[run.scorer_id] = 0.0
        elif run.result is not None and _is_number(run.result.score):
            scores[run.scorer_id] = run.result.score
    return scores


async def _call(function: Callable[[Any], Any], argument: Any) -> Any:
    if inspect.iscoroutinefunction(function):
        return await function(argument)
    # A blocking target (say, a synchronous model client) must not stall the other items.
    value = await asyncio.to_thread(function, argument)
    return await value if inspect.isawaitable(value) else value


async def _call_keywords(function: Callable[..., Any], **arguments: Any) -> None:
    value = function(**arguments)
    if inspect.isawaitable(value):
        await value


def _failed(
    index: int,
    item: DataItem,
    phase: Literal["target", "scorer"],
    scorer_id: str | None,
    error: BaseException,
) -> ItemOutcome:
    return ItemOutcome(
        index=index,
        id=item.id,
        status="failed",
        phase=phase,
        scorer_id=scorer_id,
        error=ErrorSummary(name=type(error).__name__, message=str(error), code=error_code(error)),
    )


def _target_error(index: int, item: Any, error: BaseException) -> MastraError:
    return MastraError(
        id="RUN_EXPERIMENT_TARGET_FAILED_TO_GENERATE_RESULT",
        message=f"Failed to run experiment: Error generating result from target (item {index}): "
        f"{error}",
        details={"item": _item_json(item), "itemIndex": index},
        cause=error,
    )


def _scorer_error(index: int, item: Any, scorer_id: str, error: BaseException) -> MastraError:
    return MastraError(
        id="RUN_EXPERIMENT_SCORER_FAILED_TO_SCORE_RESULT",
        message=f"Failed to run experiment: Error running scorer {scorer_id} (item {index}): "
        f"{error}",
        details={"scorerId": scorer_id, "item": _item_json(item), "itemIndex": index},
        cause=error,
    )


def _item_json(item: Any) -> str:
    plain = item.model_dump(by_alias=True, exclude_none=True) if isinstance(item, Record) else item
    return json.dumps(plain, default=str, ensure_ascii=False)


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)


_mean = finite_mean


def _summarise(
    records: list[_ItemRecord],
    entries: list[ScorerEntry],
    gates: list[Scorer],
    on_error: OnError,
    max_failure_rate: float,
) -> RunEvalsResult:
    succeeded = [r for r in records if r.outcome is not None and r.outcome.status == "success"]
    # A failed item loses every scorer's result (its finished scorers' too): each scorer
    # counts it as a failed run.
    failed = len(records) - len(succeeded)
    scores: dict[str, float] = {}
    for entry in entries:
        mean = _mean(
            [
                r.scores[entry.scorer.id]
                for r in succeeded
                if _is_number(r.scores.get(entry.scorer.id))
            ]
        )
        if mean is not None:
            scores[entry.scorer.id] = mean
    threshold_results = [
        check_threshold(
            entry.scorer.id,
            entry.threshold,
            scores.get(entry.scorer.id),
            failed_runs=failed,
            total_runs=len(records),
            max_failure_rate=max_failure_rate,
        )
        for entry in entries
        if entry.threshold is not None
    ]
    gate_results = []
    for gate in gates:
        average = (
            _mean([r.gate_scores[gate.id] for r in succeeded if gate.id in r.gate_scores]) or 0.0
        )
        gate_results.append(GateResult(id=gate.id, passed=average >= 1.0, score=average))
    judged = bool(gate_results or threshold_results)
    failures_ok = failures_within(failed, len(records), max_failure_rate)
    return RunEvalsResult(
        scores=scores,
        summary=RunEvalsSummary(total_items=len(succeeded), failed_items=failed),
        verdict=verdict(gate_results, threshold_results, failures_ok=failures_ok)
        if judged
        else None,
        threshold_results=threshold_results or None,
        gate_results=gate_results or None,
        items=[r.outcome for r in records if r.outcome is not None]
        if on_error == "record"
        else None,
    )
