"""A parsed table read through a mapping: the items' values column by column, and the
`DatasetItem`s built from them a chunk at a time, only when they are stored."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from core.datasets._cell_values import empty_mask, id_strings, is_text, plain_list
from core.datasets._dataset_table import Table
from core.records import ColumnMapping, DatasetItem, ItemValues

Column = list[Any] | pd.Series
"""Mapped values: a list, or a pyarrow-backed text Series (nulls allowed), turned into Python
strings only a chunk at a time, when the items are built."""


@dataclass(frozen=True, slots=True)
class MappedColumns:
    """The items' values, column by column (building 100k `DatasetItem`s costs far more than
    the rest of an import, so it waits for `chunks()`)."""

    ids: Column
    inputs: Column
    outputs: Column
    truths: Column
    metadata: dict[str, Column]

    @classmethod
    def from_items(cls, items: Sequence[DatasetItem]) -> MappedColumns:
        """The columns of items already built (the metadata names in order of appearance)."""
        names = list(dict.fromkeys(name for item in items for name in item.metadata))
        return cls(
            ids=[i.id for i in items],
            inputs=[i.input for i in items],
            outputs=[i.output for i in items],
            truths=[i.ground_truth for i in items],
            metadata={n: [i.metadata.get(n) for i in items] for n in names},
        )

    def __len__(self) -> int:
        return len(self.ids)

    def items(self) -> list[DatasetItem]:
        """The items, in row order (a new list of new items at each call)."""
        return [item for chunk in self.chunks(max(len(self), 1)) for item in chunk]

    def chunks(self, size: int) -> Iterator[list[DatasetItem]]:
        """The items in row order, `size` at a time: only one chunk's Python values exist at
        once (the columns stay in pyarrow)."""
        names = list(self.metadata)
        for start in range(0, len(self), size):
            stop = min(start + size, len(self))
            metadata = [values(c, start, stop) for c in self.metadata.values()]
            rows = zip(*metadata, strict=True) if metadata else ((),) * (stop - start)
            yield [
                DatasetItem(
                    id=item_id,
                    input=item_input,
                    output=item_output,
                    ground_truth=truth,
                    metadata=dict(zip(names, row, strict=True)),
                )
                for item_id, item_input, item_output, truth, row in zip(
                    values(self.ids, start, stop),
                    values(self.inputs, start, stop),
                    values(self.outputs, start, stop),
                    values(self.truths, start, stop),
                    rows,
                    strict=True,
                )
            ]

    def value_chunks(self, size: int) -> Iterator[list[ItemValues]]:
        """The items' values in row order as plain tuples (`ItemValues`), `size` at a time:
        what `chunks` gives, without a `DatasetItem` per row (the store's import path)."""
        names = list(self.metadata)
        for start in range(0, len(self), size):
            stop = min(start + size, len(self))
            metadata = [values(c, start, stop) for c in self.metadata.values()]
            if metadata:
                rows = zip(*metadata, strict=True)
                extra: Any = (dict(zip(names, row, strict=True)) for row in rows)
            else:
                extra = ({} for _ in range(stop - start))
            yield list(
                zip(
                    values(self.ids, start, stop),
                    values(self.inputs, start, stop),
                    values(self.outputs, start, stop),
                    values(self.truths, start, stop),
                    extra,
                    strict=True,
                )
            )


def map_columns(table: Table, mapping: ColumnMapping) -> MappedColumns:
    """The table's values under `mapping` (whose columns the table has)."""
    frame = table.frame
    return MappedColumns(
        ids=_ids(frame, mapping.id),
        inputs=_values_of(frame[mapping.input]),
        outputs=_values_of(frame[mapping.output]),
        truths=_truths(frame, mapping.ground_truth),
        metadata=_metadata(frame, mapping.metadata),
    )


def values(column: Column, start: int = 0, stop: int | None = None) -> list[Any]:
    """A mapped column (or rows `start` to `stop` of it) as a list of Python values; a missing
    text is None."""
    if not isinstance(column, pd.Series):
        return column if start == 0 and stop is None else column[start:stop]
    part = column if start == 0 and stop is None else column.iloc[start:stop]
    texts = part.tolist()
    if part.hasnans:
        return [None if isinstance(v, float) and math.isnan(v) else v for v in texts]
    return texts


def _values_of(series: pd.Series) -> Column:
    """The Series itself when it holds only text and nulls in pyarrow (cheap to check and hash,
    converted a chunk at a time), else its values as plain Python."""
    return series if is_text(series) else plain_list(series)


def _ids(frame: pd.DataFrame, column: str | None) -> Column:
    """The id column's values as trimmed text, else the 1-based row numbers (as text)."""
    if column is None:
        import numpy as np
        import pyarrow as pa

        numbers = pa.array(np.arange(1, len(frame) + 1, dtype=np.int64)).cast(pa.string())
        return pa.table({"id": numbers}).to_pandas()["id"]
    return _values_of(id_strings(frame[column]))


def _truths(frame: pd.DataFrame, column: str | None) -> Column:
    """The ground truths, None where the value is empty (CSV has no null: an empty cell is
    none)."""
    if column is None:
        return [None] * len(frame)
    series = frame[column]
    empty = empty_mask(series)
    if is_text(series):
        return series.where(~empty) if empty.any() else series
    return [None if e else v for v, e in zip(plain_list(series), empty, strict=True)]


def _metadata(frame: pd.DataFrame, names: list[str]) -> dict[str, Column]:
    """Metadata values by name. A column named `metadata` holding objects (Mastra's item shape)
    is spread into its keys; a key that clashes with a column is kept as `metadata.<key>`."""
    columns = {c: _values_of(frame[c]) for c in dict.fromkeys(names)}
    nested = columns.get("metadata")
    if isinstance(nested, pd.Series) and nested.isna().all():
        nested = [None] * len(nested)  # nothing but nulls: no key to spread
    if not isinstance(nested, list) or not all(v is None or isinstance(v, dict) for v in nested):
        return columns
    del columns["metadata"]
    keys = list(dict.fromkeys(k for value in nested if value for k in value))
    for key in keys:
        name = f"metadata.{key}" if key in columns else key
        columns[name] = [value.get(key) if value else None for value in nested]
    return columns
