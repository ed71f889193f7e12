"""Validation of `run_evals` arguments: everything is checked before anything runs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from core.errors import MastraError
from core.experiments.thresholds import Threshold, parse_threshold
from core.record_base import Record
from core.scoring import Scorer

__all__ = ["DataItem", "ScorerEntry", "validate_data", "validate_options", "validate_scorers"]


class DataItem(Record):
    """One item to score: the input, and the output unless a target produces it."""

    input: Any = None
    """What the evaluated system is asked (passed to the target, if any)."""
    output: Any = None
    """The output to score when there is no target (the uploaded-table case)."""
    ground_truth: Any = None
    """The expected answer, if any."""
    request_context: Any = None
    """Extra context passed to the scorers."""
    id: str | int | None = None
    """The item's id, if it has one."""
    metadata: dict[str, Any] | None = None
    """Anything else the user wants to keep with the item."""


@dataclass(frozen=True, slots=True)
class ScorerEntry:
    """A scorer and its optional threshold."""

    scorer: Scorer
    threshold: Threshold | None


_ITEM_KEYS = {
    "input": "input",
    "output": "output",
    "groundTruth": "ground_truth",
    "ground_truth": "ground_truth",
    "requestContext": "request_context",
    "request_context": "request_context",
    "id": "id",
    "metadata": "metadata",
}


def validate_data(
    data: Sequence[Mapping[str, Any] | DataItem], *, needs_output: bool
) -> list[DataItem]:
    if isinstance(data, str | bytes) or not isinstance(data, Sequence):
        raise MastraError(
            id="INVALID_DATA",
            message="Failed to run experiment: data must be a list of items, "
            f"not {type(data).__name__}",
        )
    if not data:
        raise MastraError(
            id="RUN_EXPERIMENT_FAILED_NO_DATA_PROVIDED",
            message="Failed to run experiment: Data array is empty",
        )
    return [_validate_item(index, raw, needs_output) for index, raw in enumerate(data)]


def _validate_item(index: int, raw: Any, needs_output: bool) -> DataItem:
    if isinstance(raw, DataItem):
        fields = raw.model_fields_set
        item = raw
    elif isinstance(raw, Mapping):
        unknown = sorted(str(key) for key in raw if key not in _ITEM_KEYS)
        if unknown:
            _invalid_item(
                index,
                f"has unknown key(s) {', '.join(map(repr, unknown))}; known keys: "
                "input, output, groundTruth, requestContext, id, metadata",
            )
        if "groundTruth" in raw and "ground_truth" in raw:
            _invalid_item(index, "has both 'groundTruth' and 'ground_truth'")
        if "requestContext" in raw and "request_context" in raw:
            _invalid_item(index, "has both 'requestContext' and 'request_context'")
        fields = {_ITEM_KEYS[key] for key in raw}
        try:
            item = DataItem(**{_ITEM_KEYS[key]: value for key, value in raw.items()})
        except ValueError as error:
            _invalid_item(index, f"is malformed: {error}")
    else:
        _invalid_item(index, f"must be a dict or a DataItem, not {type(raw).__name__}")
    if "input" not in fields:
        _invalid_item(index, "needs an 'input' property")
    if needs_output and "output" not in fields:
        _invalid_item(index, "needs an 'output' property (there is no target to produce one)")
    return item


def _invalid_item(index: int, problem: str) -> None:
    raise MastraError(
        id="INVALID_DATA_ITEM",
        message=f"Invalid data item at index {index}: it {problem}",
        details={"itemIndex": index},
    )


def validate_scorers(
    scorers: Sequence[Scorer | Mapping[str, Any]], gates: Sequence[Scorer] | None
) -> list[ScorerEntry]:
    if isinstance(scorers, Scorer | Mapping) or not isinstance(scorers, Sequence):
        raise MastraError(
            id="INVALID_SCORERS",
            message="scorers must be a list of scorers or "
            "{'scorer': ..., 'threshold': ...} entries",
        )
    entries = [_scorer_entry(position, entry) for position, entry in enumerate(scorers)]
    for position, gate in enumerate(gates or []):
        if not isinstance(gate, Scorer):
            raise MastraError(
                id="INVALID_GATES",
                message=f"gates[{position}] must be a Scorer, not {type(gate).__name__}",
            )
    if not entries and not gates:
        raise MastraError(
            id="NO_SCORERS_PROVIDED",
            message="Failed to run experiment: At least one scorer or gate must be provided",
        )
    for kind, ids in (
        ("scorer", [e.scorer.id for e in entries]),
        ("gate", [g.id for g in gates or []]),
    ):
        duplicates = sorted({scorer_id for scorer_id in ids if ids.count(scorer_id) > 1})
        if duplicates:
            raise MastraError(
                id="DUPLICATE_SCORER_ID",
                message=f"Each {kind} id must be unique (results are keyed by id); repeated: "
                f"{', '.join(duplicates)}",
            )
    return entries


def _scorer_entry(position: int, entry: Any) -> ScorerEntry:
    if isinstance(entry, Scorer):
        return ScorerEntry(entry, None)
    if isinstance(entry, Mapping) and isinstance(entry.get("scorer"), Scorer):
        unknown = set(entry) - {"scorer", "threshold"}
        if unknown:
            raise MastraError(
                id="INVALID_SCORERS",
                message=f"scorers[{position}] has unknown key(s) "
                f"{', '.join(sorted(map(str, unknown)))}",
            )
        scorer = entry["scorer"]
        threshold = entry.get("threshold")
        return ScorerEntry(
            scorer, None if threshold is None else parse_threshold(scorer.id, threshold)
        )
    raise MastraError(
        id="INVALID_SCORERS",
        message=f"scorers[{position}] must be a Scorer or {{'scorer': Scorer, 'threshold': ...}}, "
        f"not {type(entry).__name__}",
    )


def validate_options(concurrency: Any, on_error: Any, target: Any, on_item_complete: Any) -> None:
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise MastraError(
            id="INVALID_CONCURRENCY",
            message=f"concurrency must be a positive integer, got {concurrency!r}",
        )
    if on_error not in ("raise", "record"):
        raise MastraError(
            id="INVALID_ON_ERROR",
            message=f"on_error must be 'raise' or 'record', got {on_error!r}",
        )
    for name, value in (("target", target), ("on_item_complete", on_item_complete)):
        if value is not None and not callable(value):
            raise MastraError(id="INVALID_CALLBACK", message=f"{name} must be callable")
