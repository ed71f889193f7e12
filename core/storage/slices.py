"""An experiment's results grouped by a metadata column, and the metadata filters of its item
table, in SQL on SQLite and PostgreSQL alike (docs/storage.md, Slices by metadata).

A metadata value is compared and grouped as text (`metadata_text`): a string as it is, a JSON
true/false as `true`/`false`, a number as written; no value (absent, JSON null, or an empty
string) is SQL NULL, which records carry as "". Each database reads a key of the item's JSON
metadata with its own function (SQLite's `json_extract`/`json_type`, PostgreSQL's
`json_extract_path_text`), so the grouping runs in the database over the items' rows: 10,000
items are one GROUP BY.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import Connection, String, and_, case, cast, func, literal, or_, select

from core.records import SliceScorer, SliceSummary
from core.storage.tables import DatasetItemRow, ScoreRow

__all__ = ["NO_VALUE", "item_values", "metadata_filter", "metadata_text", "slice_summaries"]

NO_VALUE = ""
"""The text standing for an item without a value in a metadata column."""

_items = DatasetItemRow.__table__
_results = ScoreRow.__table__


def metadata_text(column: str, dialect: str, table: Any = None) -> Any:
    """The SQL text of the item's metadata value under `column` (NULL when absent, null or
    the empty string). Any column name reads: it is bound as a parameter (PostgreSQL's key,
    SQLite's JSON path or, for a name no path can spell, the key of `json_each`)."""
    metadata = (_items if table is None else table).c.item_metadata
    if dialect == "sqlite":
        if _PATH_SAFE.fullmatch(column):
            path = literal(f'$."{column}"')
            kind: Any = func.json_type(metadata, path)
            value: Any = func.json_extract(metadata, path)
            found: Any = _as_text(kind, value)
        else:
            # A double quote, a backslash or a control character: SQLite's JSON path has no
            # escape for them, so the key is matched as a bound value among the object's keys.
            keys = func.json_each(metadata).table_valued("key", "value", "type")
            found = (
                select(_as_text(keys.c.type, keys.c.value))
                .where(keys.c.key == literal(column))
                .limit(1)
                .scalar_subquery()
            )
    else:
        found = func.json_extract_path_text(metadata, literal(column))
    return func.nullif(found, "")  # an empty cell of a CSV file is no value too


_PATH_SAFE = re.compile(r'[^"\\\x00-\x1f\x7f]*')
"""A name SQLite's quoted JSON path label `$."name"` reads as it is."""


def _as_text(kind: Any, value: Any) -> Any:
    """SQLite: a JSON value of type `kind` as text (true/false as words, null as NULL)."""
    return case(
        (kind == "true", literal("true")),
        (kind == "false", literal("false")),
        (kind == "null", None),
        else_=cast(value, String),
    )


def metadata_filter(filters: Mapping[str, Sequence[str]], dialect: str) -> list[Any]:
    """The WHERE conditions keeping the items whose every filtered column holds one of its
    values ("" matching no value)."""
    conditions = []
    for column, values in filters.items():
        text = metadata_text(column, dialect)
        named = [value for value in values if value != NO_VALUE]
        either = []
        if named:
            either.append(text.in_(named))
        if NO_VALUE in values:
            either.append(text.is_(None))
        conditions.append(or_(*either) if either else literal(False))
    return conditions


def slice_summaries(
    connection: Connection,
    experiment_id: str,
    dataset_id: str,
    scorer_ids: Sequence[str],
    column: str,
) -> list[SliceSummary]:
    """Per value of `column` among the dataset's items (most items first, then by value): its
    item count and, per scorer, its stored runs, numeric scores, mean and sample standard
    deviation (from SUM and SUM of squares: two GROUP BYs). The intervals and the in-memory
    failures are left for the caller."""
    value = metadata_text(column, connection.dialect.name).label("value")
    counted = (
        select(value, func.count().label("items"))
        .where(_items.c.dataset_id == dataset_id)
        .group_by(value)
    )
    items = {row.value: int(row.items) for row in connection.execute(counted)}
    # Each item's value read once (a materialised CTE), not once per result joined to it:
    # half the time on SQLite at 10,000 items x 5 scorers (bench/slices.py).
    grouped = (
        select(_items.c.item_id, value)
        .where(_items.c.dataset_id == dataset_id)
        .cte("grouped")
        .prefix_with("MATERIALIZED")
    )
    score = _results.c.score
    summed = (
        select(
            grouped.c.value,
            _results.c.scorer_id,
            func.count().label("runs"),
            func.count(score).label("scored"),
            func.sum(score).label("total"),
            func.sum(score * score).label("squares"),
        )
        .join(
            _results,
            and_(
                _results.c.experiment_id == experiment_id,
                _results.c.item_id == grouped.c.item_id,
            ),
        )
        .group_by(grouped.c.value, _results.c.scorer_id)
    )
    sums: dict[tuple[Any, str], Any] = {
        (row.value, row.scorer_id): row for row in connection.execute(summed)
    }
    ordered = sorted(items, key=lambda v: (-items[v], v is not None, str(v)))
    return [
        SliceSummary(
            column=column,
            value=NO_VALUE if group is None else str(group),
            items=items[group],
            scorers=[_scorer(s, items[group], sums.get((group, s))) for s in scorer_ids],
        )
        for group in ordered
    ]


def _scorer(scorer_id: str, items: int, row: Any) -> SliceScorer:
    if row is None:
        return SliceScorer(scorer_id=scorer_id, missing=items)
    scored = int(row.scored)
    mean = float(row.total) / scored if scored else None
    sd = None
    if scored >= 2 and mean is not None:
        # Scores lie in a small range: the sum of squares loses nothing that matters here.
        variance = (float(row.squares) - scored * mean * mean) / (scored - 1)
        sd = math.sqrt(max(variance, 0.0))
    return SliceScorer(
        scorer_id=scorer_id,
        runs=int(row.runs),
        scored=scored,
        mean=mean,
        sd=sd,
        missing=max(items - int(row.runs), 0),
    )


def item_values(
    connection: Connection, dataset_id: str, column: str, item_ids: Sequence[str]
) -> dict[str, str]:
    """The `column` value (as text, "" for none) of each of the given items of a dataset."""
    value = metadata_text(column, connection.dialect.name).label("value")
    found: dict[str, str] = {}
    ids = list(dict.fromkeys(item_ids))
    for start in range(0, len(ids), 5_000):  # a statement binds some thousands at most
        query = select(_items.c.item_id, value).where(
            _items.c.dataset_id == dataset_id, _items.c.item_id.in_(ids[start : start + 5_000])
        )
        for row in connection.execute(query):
            found[row.item_id] = NO_VALUE if row.value is None else str(row.value)
    return found
