"""The store's rows turned into records and back: datasets, experiments, counts, results."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar

import orjson
from pydantic import ValidationError
from sqlalchemy import (
    Text,
    select,
    type_coerce,
)
from sqlalchemy import cast as sql_cast
from sqlalchemy.engine import RowMapping

from core.records import (
    ColumnMapping,
    DatasetInfo,
    DatasetItem,
    ItemValues,
    RunCounts,
    ScorerOutcome,
)
from core.run_results import (
    ITEM_TEXT_KEYS,
    JudgeUsage,
    ResultRow,
    database_json,
    step_usage_of_dict,
)
from core.storage import result_rows
from core.storage._info import (
    _LIVE_STATUSES,
    _USAGE_COLUMNS,
    _utc,
)
from core.storage.tables import DatasetItemRow

if TYPE_CHECKING:  # reads imports this module: a runtime import would make a cycle
    from sqlalchemy.engine import Connection

    from core.storage import reads

_RESULT_KEY = ("experiment_id", "item_id", "scorer_id")
"""The unique key of `scorer_results`: one stored result per (experiment, item, scorer)."""
_KEY_PAGE = 500
"""Item ids per `IN (...)` query (well below SQLite's limit on bound parameters)."""
_INSERT_BATCH = 5_000
_ITEM_PAGE = 2_000
"""Items read per query by `iter_dataset_items`."""


# ---- rows <-> records ----

_RowFields: TypeAlias = RowMapping | Mapping[str, Any]
"""A row read back (its `_mapping`), or the dict a row was written from."""


def _dataset_info(row: _RowFields) -> DatasetInfo:
    return DatasetInfo(
        id=row["id"],
        name=row["name"],
        file_name=row["file_name"],
        format=row["format"],
        fingerprint=row["fingerprint"],
        item_count=row["item_count"],
        columns=row["columns"] or [],
        mapping=ColumnMapping.model_validate(row["mapping"]),
        created_at=_utc(row["created_at"]),
    )


def _stored_counts(totals: reads.ScorerTotals) -> RunCounts:
    return RunCounts(
        succeeded=totals.count,
        usage=totals.usage,
        judge_calls=totals.judge_calls,
        judge_attempts=totals.judge_attempts,
        cached_calls=totals.cached_calls,
    )


def _settled_key(row: _RowFields) -> tuple[Any, ...] | None:
    """What identifies the stored results of a finished experiment (None while it may still
    get results): its status, end and counters, which any later write to it changes."""
    if row["status"] in _LIVE_STATUSES:
        return None
    return (row["status"], row["finished_at"], row["done_runs"], row["succeeded_runs"])


def _counts_values(counts: RunCounts, failed: RunCounts | None) -> dict[str, Any]:
    failed = failed or RunCounts()
    values = {
        "done_runs": counts.done,
        "succeeded_runs": counts.succeeded,
        "failed_runs": counts.failed,
        "judge_calls": counts.judge_calls,
        "judge_attempts": counts.judge_attempts,
        "failed_judge_calls": failed.judge_calls,
        "failed_judge_attempts": failed.judge_attempts,
        "cached_calls": counts.cached_calls,
        "failed_cached_calls": failed.cached_calls,
    }
    values.update({k: getattr(counts.usage, k) for k in _USAGE_COLUMNS})
    values.update({f"failed_{k}": getattr(failed.usage, k) for k in _USAGE_COLUMNS})
    return values


def _score_row(outcome: ScorerOutcome) -> ResultRow:
    """An outcome as a stored row (`core.run_results.RESULT_ROW_COLUMNS`)."""
    usage = outcome.usage
    return (
        outcome.item_id,
        outcome.scorer_id,
        outcome.score,
        database_json(outcome.reason),
        database_json(outcome.result),
        outcome.duration_ms,
        usage.input_tokens,
        usage.output_tokens,
        usage.total_tokens,
        usage.reasoning_tokens,
        usage.cached_input_tokens,
        usage.cache_creation_input_tokens,
        outcome.judge_calls,
        outcome.judge_attempts,
        outcome.cached_calls,
        False,  # an outcome's result is whole: it echoes its item
        step_usage_of_dict((outcome.result or {}).get("judge")),
    )


def _with_item_texts(result: dict[str, Any], row: _RowFields) -> dict[str, Any]:
    """A result stored without its item's texts, with them back where `to_dict` puts them
    (after `runId`; a None one absent, as `to_dict` leaves it out)."""
    texts = (
        row["item_input"],
        row["item_output"],
        row["item_ground_truth"],
        row["item_metadata"] or None,  # an item without metadata ran without request context
    )
    rebuilt = {"runId": result["runId"]} if "runId" in result else {}
    rebuilt.update(
        (key, value) for key, value in zip(ITEM_TEXT_KEYS, texts, strict=True) if value is not None
    )
    rebuilt.update(result)
    return rebuilt


def _outcome(row: _RowFields) -> ScorerOutcome:
    result = row.get("result")
    if row.get("item_texts") and isinstance(result, dict):
        result = _with_item_texts(result, row)
    return ScorerOutcome(
        item_id=row["item_id"],
        scorer_id=row["scorer_id"],
        status="success",
        score=row["score"],
        reason=row["reason"],
        result=result,
        duration_ms=row["duration_ms"],
        usage=JudgeUsage(**{k: row[k] for k in _USAGE_COLUMNS}),
        judge_calls=row["judge_calls"],
        judge_attempts=row["judge_attempts"],
        cached_calls=row.get("cached_calls") or 0,
    )


_Row = TypeVar("_Row")


def _batches(rows: Iterable[_Row]) -> Iterator[list[_Row]]:
    """`rows` in lists of `_INSERT_BATCH` (consumed as they come)."""
    batch: list[_Row] = []
    for row in rows:
        batch.append(row)
        if len(batch) >= _INSERT_BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


def _flat(
    items: Iterable[DatasetItem] | Iterable[Sequence[DatasetItem | ItemValues]],
) -> Iterator[DatasetItem | ItemValues]:
    """Items given one by one or in chunks (of items or of `ItemValues`), one by one."""
    for entry in items:
        if isinstance(entry, DatasetItem):
            yield entry
        else:
            yield from entry


def _item_rows(
    dataset_id: str, first: int, items: list[DatasetItem | ItemValues]
) -> list[tuple[Any, ...]]:
    """Items (or their `ItemValues`) as the rows `result_rows.insert_items` writes (JSON encoded
    once, by orjson). Values are checked as a `DatasetItem` would check them: a text id and a
    mapping of metadata, else a ValueError naming the row."""
    text = result_rows.json_text
    rows: list[tuple[Any, ...]] = []
    for position, item in enumerate(items, start=first):
        if isinstance(item, DatasetItem):
            values: tuple[Any, ...] = (
                item.id,
                item.input,
                item.output,
                item.ground_truth,
                item.metadata,
            )
        else:
            values = item
            if len(values) != 5 or type(values[0]) is not str or type(values[4]) is not dict:
                values = _checked_values(position, values)
        item_id, item_input, output, truth, metadata = values
        rows.append(
            (
                dataset_id,
                position,
                item_id,
                text(item_input),
                text(output),
                text(truth),
                text(metadata),
            )
        )
    return rows


def _checked_values(position: int, values: Sequence[Any]) -> tuple[Any, ...]:
    """`ItemValues` whose id is not a `str` or metadata not a `dict`: validated as a
    `DatasetItem` (which takes a str subclass, a mapping...), else a ValueError naming the row
    (its 1-based position in the dataset)."""
    if len(values) != 5:
        raise ValueError(
            f"Item {position + 1}: expected (id, input, output, ground truth, metadata), got "
            f"{len(values)} values"
        )
    try:
        item = DatasetItem(
            id=values[0],
            input=values[1],
            output=values[2],
            ground_truth=values[3],
            metadata=values[4],
        )
    except ValidationError as error:
        raise ValueError(f"Item {position + 1} ({values[0]!r}): {error}") from error
    return (item.id, item.input, item.output, item.ground_truth, item.metadata)


def _items_query(
    dataset_id: str, first: Any, limit: int | None, *, as_text: bool = False, cast: bool = False
) -> Any:
    """Items from position `first` on (a number, or a bound parameter), in order (`limit` of
    them, when given); `as_text`: the JSON columns as their text, for `_items(...,
    decode=True)`: as SQLite gives them, or `cast` to text in SQL (PostgreSQL, whose driver
    would decode each with the standard library's `json.loads`: four times the time per item)."""
    table = DatasetItemRow.__table__
    data = [table.c.input, table.c.output, table.c.ground_truth, table.c.item_metadata]
    query = (
        select(
            table.c.position,
            table.c.item_id,
            *(_as_text(column, cast) if as_text else column for column in data),
        )
        .where(table.c.dataset_id == dataset_id, table.c.position >= first)
        .order_by(table.c.position)
    )
    return query if limit is None else query.limit(limit)


def _as_text(column: Any, cast: bool) -> Any:
    """A JSON column read as its text: a `CAST` in SQL, or only typed as text (SQLite, where a
    cast would turn a bare number, which its numeric affinity keeps a number, into text)."""
    return sql_cast(column, Text) if cast else type_coerce(column, Text)


def _items(rows: Iterable[Sequence[Any]], *, decode: bool = False) -> list[DatasetItem]:
    """Items from rows of `_items_query` (`decode`: its JSON columns came as text). Built by
    validation, which pydantic-core does in half the time of `model_construct`."""
    if decode:
        return [
            DatasetItem(
                id=item_id,
                input=_loads(item_input),
                output=_loads(output),
                ground_truth=_loads(truth),
                metadata=_loads(metadata) or {},
            )
            for _, item_id, item_input, output, truth, metadata in rows
        ]
    return [
        DatasetItem(
            id=item_id, input=item_input, output=output, ground_truth=truth, metadata=metadata or {}
        )
        for _, item_id, item_input, output, truth, metadata in rows
    ]


def _item_stream(rows: Iterable[Sequence[Any]], *, decode: bool = False) -> Iterator[DatasetItem]:
    """`_items`, one item at a time as it is taken: a page of a large experiment's items is
    held as the driver's tuples (of text, which the collector stops tracking), never as a page
    of models, which lived long enough to reach the oldest generation and made each of the
    collector's full passes over the scorers' lexicons come sooner (docs/storage.md). Each
    item is made by `_stored_item`, without a validation per item."""
    if decode:
        loads = _loads
        for _, item_id, item_input, output, truth, metadata in rows:
            # Most items have no ground truth or no metadata: their JSON is read as it is.
            yield _stored_item(
                item_id,
                loads(item_input),
                loads(output),
                None if truth is None or truth == "null" else loads(truth),
                {} if metadata is None or metadata == "{}" else (loads(metadata) or {}),
            )
        return
    for _, item_id, item_input, output, truth, metadata in rows:
        yield _stored_item(item_id, item_input, output, truth, metadata or {})


_new_record = object.__new__
_set_slot = object.__setattr__  # a frozen record's own fields are set through object
_ITEM_FIELDS = set(DatasetItem.model_fields)


def _stored_item(
    item_id: Any, item_input: Any, output: Any, ground_truth: Any, metadata: Any
) -> DatasetItem:
    """A `DatasetItem` of a stored item's values, the record `DatasetItem(id=..., ...)` makes
    (every field given, no extra, no private attribute), without its validation when the
    values need none: its id is text and its metadata a dict (of text keys: decoded JSON, or
    the driver's), the other fields take anything. Any other value (a number for an id,
    metadata that is a list: a database written by something else) is validated, so it is
    refused with pydantic's error naming the field, as it always was."""
    if type(item_id) is not str or type(metadata) is not dict:
        return DatasetItem(
            id=item_id, input=item_input, output=output, ground_truth=ground_truth,
            metadata=metadata,
        )  # fmt: skip
    item = _new_record(DatasetItem)
    _set_slot(
        item,
        "__dict__",
        {
            "id": item_id,
            "input": item_input,
            "output": output,
            "ground_truth": ground_truth,
            "metadata": metadata,
        },
    )
    _set_slot(item, "__pydantic_fields_set__", _ITEM_FIELDS.copy())
    _set_slot(item, "__pydantic_extra__", None)
    _set_slot(item, "__pydantic_private__", None)
    return item


def _loads(text: str | float | None) -> Any:
    """A JSON column's text as its value (SQL NULL as None): orjson, or the standard library
    for what orjson refuses (an integer over 64 bits). SQLite gives a JSON column numeric
    affinity, so a bare number (an output of 42) comes back as the number itself."""
    if not isinstance(text, str):  # None, or a number (an int or a float)
        return text
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)


def _now() -> datetime:
    return datetime.now(UTC)


def _first_line(error: BaseException) -> str:
    text = str(getattr(error, "orig", None) or error)
    return text.strip().splitlines()[0] if text.strip() else type(error).__name__


def _driver_rows(connection: Connection, query: Any) -> list[Any]:
    """The rows of `query` as the driver gives them (tuples), the statement compiled by
    SQLAlchemy with its parameters bound for the driver's paramstyle."""
    return _compiled_rows(connection, query.compile(dialect=connection.dialect))


def _compiled_rows(
    connection: Connection, compiled: Any, values: dict[str, Any] | None = None
) -> list[Any]:
    """The rows of a compiled statement as the driver gives them, `values` replacing the
    parameters of those names."""
    parameters: Any = compiled.params if values is None else {**compiled.params, **values}
    if compiled.positiontup is not None:  # qmark (SQLite), format: in their order
        parameters = tuple(parameters[name] for name in compiled.positiontup)
    # The DBAPI cursor's own fetch: plain tuples, not SQLAlchemy rows made from them.
    cursor: Any = connection.connection.cursor()
    try:
        cursor.execute(compiled.string, parameters)
        return list(cursor.fetchall())
    finally:
        cursor.close()
