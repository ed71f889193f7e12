"""Reading back an experiment exported by `experiment_json` (the JSON export), so the app can
import it as an experiment: its items, its successful results (Mastra format) and its failures.

Pure parsing and validation: the service stores what this returns. Every problem is a
`ExperimentFileError` naming the place, e.g. `items[3] (id 'q4'): results['tone']: ...`.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, get_args

from pydantic import ValidationError

from core.records import (
    DatasetItem,
    ExperimentStatus,
    ReviewInput,
    ScorerOutcome,
    ScorerSpec,
)
from core.reporting.reviews import WHOLE_ITEM
from core.run_results import JudgeExecutionFailure, JudgeUsage, ScorerRunResult

__all__ = ["ExperimentFileError", "ExportedExperiment", "read_experiment_json"]

_FINISHED: tuple[str, ...] = ("completed", "failed", "cancelled", "budget_reached", "error")


class ExperimentFileError(ValueError):
    """A file that is not a readable experiment export; the message names the place."""


@dataclass(frozen=True)
class ExportedExperiment:
    """What an experiment export holds."""

    name: str
    """The experiment's name in the file."""
    experiment_id: str | None
    """Its id where it was exported (a new one is given on import)."""
    status: ExperimentStatus
    """Its status; an export taken while it was pending or running reads as `cancelled`
    (stopped, finished runs kept)."""
    dataset_name: str | None
    """The dataset's name, if the file has it."""
    dataset_fingerprint: str | None
    """The dataset's fingerprint as exported, if the file has it."""
    scorer_ids: list[str]
    """The scorer ids: `summary.scorerIds`, else the order they first appear in results."""
    scorers: list[ScorerSpec]
    """The catalog specs behind the scorer ids (`summary.scorers`, one per id, in order), so
    what each scorer compared is known; empty in exports that did not record them."""
    judge_model: str | None
    """The judge model, if any."""
    items: list[DatasetItem]
    """The items in file order."""
    results: list[ScorerOutcome]
    """Successful runs, rebuilt from their Mastra-format results."""
    failures: list[ScorerOutcome]
    """Failed runs (never to be written to the score storage)."""
    reviews: list[ReviewInput]
    """The human reviews of its scores (`reviews`; empty in exports from before reviews), each
    of an item of the file and a scorer of `scorer_ids`; their range is checked on import."""
    usage: JudgeUsage
    """Judge usage over every run: `summary.judgeUsage`, else summed over the results."""
    judge_calls: int
    """Judge calls over every run."""
    judge_attempts: int
    """Judge attempts over every run."""


def read_experiment_json(data: bytes) -> ExportedExperiment:
    """Parse and check an export; raises ExperimentFileError naming what is wrong and where.

    The checks: UTF-8 JSON; an object with an `items` list; each item an object with a text
    `id` found once in the file; each `results` entry an object keyed by scorer id, either a
    Mastra result (validated as `ScorerRunResult`, with a numeric or null `score`) or a failure
    entry (`status: "failed"` with an `error`).
    """
    document = _document(data)
    items_data = document.get("items")
    if not isinstance(items_data, list):
        raise ExperimentFileError(
            f"The file has no `items` list (found {_kind(items_data)}): is it a scorelab "
            "experiment export?"
        )
    summary = _mapping(document.get("summary"), "summary", optional=True)
    items, results, failures = _read_items(items_data)
    return ExportedExperiment(
        name=_text(document.get("name"), "name") or "imported experiment",
        experiment_id=_text(document.get("experimentId"), "experimentId"),
        status=_status(summary.get("status")),
        dataset_name=_text(summary.get("datasetName"), "summary.datasetName"),
        dataset_fingerprint=_text(summary.get("datasetFingerprint"), "summary.datasetFingerprint"),
        scorer_ids=(scorer_ids := _scorer_ids(summary, results, failures)),
        scorers=_scorer_specs(summary.get("scorers"), scorer_ids),
        judge_model=_text(summary.get("judgeModel"), "summary.judgeModel"),
        items=items,
        results=results,
        failures=failures,
        reviews=_reviews(document.get("reviews"), items, scorer_ids),
        **_usage(summary, [*results, *failures]),
    )


def _document(data: bytes) -> dict[str, Any]:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise ExperimentFileError(
            f"The file is not UTF-8 text (byte {error.start}: {error.reason})"
        ) from None
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise ExperimentFileError(
            f"The file is not valid JSON: line {error.lineno}, column {error.colno}: {error.msg}"
        ) from None
    except RecursionError:
        raise ExperimentFileError(_TOO_DEEP) from None
    except ValueError:  # an integer with more digits than Python reads from text
        found = re.search(rf"\d{{{sys.get_int_max_str_digits() + 1},}}", text)
        line = f" (line {text.count(chr(10), 0, found.start()) + 1})" if found else ""
        raise ExperimentFileError(
            f"The file holds a number with more than {sys.get_int_max_str_digits():,} digits"
            f"{line}, which cannot be read"
        ) from None
    if _deeper_than(document, _MAX_NESTING):
        raise ExperimentFileError(_TOO_DEEP)
    if not isinstance(document, dict):
        raise ExperimentFileError(
            f"The file holds {_kind(document)}, not an exported experiment (an object with `items`)"
        )
    return document


_MAX_NESTING = 128
"""Levels of lists and objects an export may hold: an item's values are at most 100 deep (the
dataset import's limit, docs/datasets.md), and the export wraps them in a few more."""
_TOO_DEEP = (
    f"The file is nested deeper than {_MAX_NESTING} levels of lists and objects: not an "
    "experiment export"
)


def _deeper_than(value: Any, limit: int) -> bool:
    """True when lists and objects nest more than `limit` levels (without recursing, so a
    hostile file cannot exhaust the stack here)."""
    stack = [(value, 1)]
    while stack:
        current, depth = stack.pop()
        if depth > limit:
            return True
        children = current.values() if isinstance(current, dict) else current
        stack.extend((c, depth + 1) for c in children if isinstance(c, dict | list))
    return False


def _read_items(
    items_data: list[Any],
) -> tuple[list[DatasetItem], list[ScorerOutcome], list[ScorerOutcome]]:
    items: list[DatasetItem] = []
    results: list[ScorerOutcome] = []
    failures: list[ScorerOutcome] = []
    first_seen: dict[str, int] = {}
    for index, raw in enumerate(items_data):
        item = _item(raw, f"items[{index}]")
        place = f"items[{index}] (id {item.id!r})"
        if item.id in first_seen:
            raise ExperimentFileError(
                f"{place}: the id is already used by items[{first_seen[item.id]}]; ids must be "
                "unique"
            )
        first_seen[item.id] = index
        items.append(item)
        entries = _mapping(raw.get("results"), f"{place}: results", optional=True)
        for scorer_id, entry in entries.items():
            where = f"{place}: results[{scorer_id!r}]"
            outcome = _outcome(item.id, str(scorer_id), entry, where)
            (results if outcome.status == "success" else failures).append(outcome)
    return items, results, failures


def _reviews(raw: Any, items: list[DatasetItem], scorer_ids: list[str]) -> list[ReviewInput]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise ExperimentFileError(f"`reviews` must be a list, got {_kind(raw)}")
    known = {item.id for item in items}
    reviews = []
    for index, entry in enumerate(raw):
        place = f"reviews[{index}]"
        if not isinstance(entry, dict):
            raise ExperimentFileError(f"{place}: a review must be an object, got {_kind(entry)}")
        fields = {k: entry[k] for k in _REVIEW_FIELDS if entry.get(k) is not None}
        try:
            review = ReviewInput.model_validate(fields)
        except ValidationError as error:
            raise ExperimentFileError(f"{place}: not a review: {_first(error)}") from None
        if review.item_id not in known:
            raise ExperimentFileError(f"{place}: no item {review.item_id!r} in the file")
        if review.scorer_id not in scorer_ids and review.scorer_id != WHOLE_ITEM:
            raise ExperimentFileError(f"{place}: no scorer {review.scorer_id!r} in the file")
        reviews.append(review)
    return reviews


_REVIEW_FIELDS = ("itemId", "scorerId", "verdict", "score", "note", "reviewer")


def _item(raw: Any, place: str) -> DatasetItem:
    if not isinstance(raw, dict):
        raise ExperimentFileError(f"{place}: an item must be an object, got {_kind(raw)}")
    item_id = raw.get("id")
    if not isinstance(item_id, str) or not item_id:
        raise ExperimentFileError(f"{place}: `id` must be a non-empty text, got {_kind(item_id)}")
    metadata = _mapping(raw.get("metadata"), f"{place} (id {item_id!r}): metadata", optional=True)
    return DatasetItem(
        id=item_id,
        input=raw.get("input"),
        output=raw.get("output"),
        ground_truth=raw.get("groundTruth"),
        metadata=dict(metadata),
    )


def _outcome(item_id: str, scorer_id: str, entry: Any, place: str) -> ScorerOutcome:
    if not isinstance(entry, dict):
        raise ExperimentFileError(f"{place}: must be a result object, got {_kind(entry)}")
    if entry.get("status") == "failed":
        return _failure(item_id, scorer_id, entry, place)
    return _success(item_id, scorer_id, entry, place)


def _success(item_id: str, scorer_id: str, entry: dict[str, Any], place: str) -> ScorerOutcome:
    try:
        result = ScorerRunResult.model_validate(entry)
    except ValidationError as error:
        raise ExperimentFileError(f"{place}: not a Mastra scorer result: {_first(error)}") from None
    score = result.score
    if score is not None and _number(score) is None:
        raise ExperimentFileError(f"{place}: `score` must be a number or null, got {score!r}")
    usage, calls, attempts = result.judge_totals()
    return ScorerOutcome(
        item_id=item_id,
        scorer_id=scorer_id,
        status="success",
        score=score,
        reason=result.reason,
        result=result.to_dict(),
        usage=usage,
        judge_calls=calls,
        judge_attempts=attempts,
        cached_calls=result.cached_calls(),
    )


def _failure(item_id: str, scorer_id: str, entry: dict[str, Any], place: str) -> ScorerOutcome:
    error = entry.get("error")
    if not isinstance(error, str):
        raise ExperimentFileError(f"{place}: a failed run needs an `error` text")
    steps = entry.get("completedSteps") or []
    if not isinstance(steps, list) or not all(isinstance(s, str) for s in steps):
        raise ExperimentFileError(f"{place}: `completedSteps` must be a list of step names")
    execution = None
    if entry.get("failedJudgeExecution") is not None:
        try:
            execution = JudgeExecutionFailure.model_validate(entry["failedJudgeExecution"])
        except ValidationError as failure:
            raise ExperimentFileError(
                f"{place}: `failedJudgeExecution` is not a failed judge execution: "
                f"{_first(failure)}"
            ) from None
    judge = _failure_judge(entry.get("judge"), place)
    if judge is not None:
        usage, calls, attempts = judge.judge_totals()
    else:  # an export from before `judge` was kept: the failed execution is all there is
        usage = execution.usage if execution and execution.usage else JudgeUsage()
        calls = execution.model_call_count if execution else 0
        attempts = execution.attempt_count if execution else 0
    recovered = entry.get("score")
    return ScorerOutcome(
        item_id=item_id,
        scorer_id=scorer_id,
        status="failed",
        error=error,
        error_type=_text(entry.get("errorType"), f"{place}: errorType"),
        recovered_score=_number(recovered),
        recovered_reason=entry.get("reason"),
        failed_step=_text(entry.get("failedStep"), f"{place}: failedStep"),
        completed_steps=steps,
        failed_execution=execution,
        snapshot={"judge": judge.to_dict()["judge"]} if judge is not None else None,
        usage=usage,
        judge_calls=calls,
        judge_attempts=attempts,
    )


def _failure_judge(value: Any, place: str) -> ScorerRunResult | None:
    """A failed run's judge record (every execution of every step), as a result snapshot."""
    if value is None:
        return None
    try:
        return ScorerRunResult.model_validate({"runId": "", "judge": value})
    except ValidationError as error:
        raise ExperimentFileError(
            f"{place}: `judge` is not a judge record: {_first(error)}"
        ) from None


def _usage(summary: Mapping[str, Any], outcomes: list[ScorerOutcome]) -> dict[str, Any]:
    """The file's totals when it has them (they count failed runs' executions that a failure
    entry no longer lists), else sums over the outcomes."""
    usage = JudgeUsage()
    for outcome in outcomes:
        usage = usage + outcome.usage
    calls = sum(o.judge_calls for o in outcomes)
    attempts = sum(o.judge_attempts for o in outcomes)
    stored = summary.get("judgeUsage")
    if isinstance(stored, dict):
        try:
            usage = JudgeUsage.model_validate(stored)
        except ValidationError as error:
            raise ExperimentFileError(f"summary.judgeUsage: {_first(error)}") from None
    return {
        "usage": usage,
        "judge_calls": _count(summary.get("judgeCalls"), calls),
        "judge_attempts": _count(summary.get("judgeAttempts"), attempts),
    }


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def _count(value: Any, default: int) -> int:
    return (
        value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else default
    )


def _scorer_ids(
    summary: Mapping[str, Any], results: list[ScorerOutcome], failures: list[ScorerOutcome]
) -> list[str]:
    found = list(dict.fromkeys(o.scorer_id for o in [*results, *failures]))
    listed = summary.get("scorerIds")
    if isinstance(listed, list) and all(isinstance(s, str) for s in listed):
        return list(dict.fromkeys([*listed, *found]))
    return found


def _scorer_specs(value: Any, scorer_ids: list[str]) -> list[ScorerSpec]:
    """The specs listed in the file, when there is one per scorer id; else none."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise ExperimentFileError(f"summary.scorers: must be an array, got {_kind(value)}")
    specs = []
    for index, raw in enumerate(value):
        try:
            specs.append(ScorerSpec.model_validate(raw))
        except ValidationError as error:
            raise ExperimentFileError(f"summary.scorers[{index}]: {_first(error)}") from None
    return specs if len(specs) == len(scorer_ids) else []


def _status(value: Any) -> ExperimentStatus:
    if value in _FINISHED:
        finished: ExperimentStatus = value
        return finished
    if value in get_args(ExperimentStatus):
        return "cancelled"  # exported while still running: what is in the file is all there is
    return "completed"


def _mapping(value: Any, place: str, *, optional: bool = False) -> Mapping[str, Any]:
    if value is None and optional:
        return {}
    if not isinstance(value, dict):
        raise ExperimentFileError(f"{place}: must be an object, got {_kind(value)}")
    return value


def _text(value: Any, place: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise ExperimentFileError(f"{place}: must be a text, got {_kind(value)}")


def _kind(value: Any) -> str:
    names = {dict: "an object", list: "an array", str: "a text", bool: "a boolean"}
    if value is None:
        return "null"
    if type(value) in names:
        return names[type(value)]
    if isinstance(value, int | float):
        return f"the number {value!r}"
    return type(value).__name__


def _first(error: ValidationError) -> str:
    problem = error.errors()[0]
    where = ".".join(str(part) for part in problem["loc"])
    more = f" (and {error.error_count() - 1} more)" if error.error_count() > 1 else ""
    return f"{where}: {problem['msg']}{more}" if where else f"{problem['msg']}{more}"
