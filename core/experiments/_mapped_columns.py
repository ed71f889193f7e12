"""A parsed table read through a mapping: the items' values column by column, and the
`DatasetItem`s built from them only when they are stored."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from core.experiment_records import ColumnMapping, DatasetItem
from core.experiments._cell_values import arrow_text, empty_mask, id_strings, plain_list
from core.experiments._dataset_table import Table

Column = list[Any] | pd.Series
"""Mapped values: a list, or (for CSV text columns) the pyarrow-backed Series itself, turned
into Python strings only when the items are built."""


@dataclass(frozen=True, slots=True)
class MappedColumns:
    """The items' values, column by column (building 100k `DatasetItem`s costs far more than
    the rest of an import, so it waits for `items()`)."""

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

    def items(self) -> list[DatasetItem]:
        """The items, in row order (a new list of new items at each call)."""
        names = list(self.metadata)
        metadata = [values(c) for c in self.metadata.values()]
        ids = values(self.ids)
        rows = zip(*metadata, strict=True) if metadata else ((),) * len(ids)
        return [
            DatasetItem(
                id=item_id,
                input=item_input,
                output=item_output,
                ground_truth=truth,
                metadata=dict(zip(names, row, strict=True)),
            )
            for item_id, item_input, item_output, truth, row in zip(
                ids,
                values(self.inputs),
                values(self.outputs),
                values(self.truths),
                rows,
                strict=True,
            )
        ]


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


def values(column: Column) -> list[Any]:
    """A mapped column as a list of Python values."""
    return column.tolist() if isinstance(column, pd.Series) else column


def _values_of(series: pd.Series) -> Column:
    """The Series itself when it holds only text in pyarrow (cheap to hash, converted later),
    else its values as plain Python."""
    return series if arrow_text(series) is not None else plain_list(series)


def _ids(frame: pd.DataFrame, column: str | None) -> Column:
    """The id column's values as trimmed text, else the 1-based row numbers."""
    if column is None:
        return [str(n) for n in range(1, len(frame) + 1)]
    return _values_of(id_strings(frame[column]))


def _truths(frame: pd.DataFrame, column: str | None) -> Column:
    """The ground truths, None where the value is empty (CSV has no null: an empty cell is
    none)."""
    if column is None:
        return [None] * len(frame)
    series = frame[column]
    empty = empty_mask(series)
    if not empty.any() and arrow_text(series) is not None:
        return series
    return [None if e else v for v, e in zip(plain_list(series), empty, strict=True)]


def _metadata(frame: pd.DataFrame, names: list[str]) -> dict[str, Column]:
    """Metadata values by name. A column named `metadata` holding objects (Mastra's item shape)
    is spread into its keys; a key that clashes with a column is kept as `metadata.<key>`."""
    columns = {c: _values_of(frame[c]) for c in dict.fromkeys(names)}
    nested = columns.get("metadata")
    if not isinstance(nested, list) or not all(v is None or isinstance(v, dict) for v in nested):
        return columns
    del columns["metadata"]
    keys = list(dict.fromkeys(k for value in nested if value for k in value))
    for key in keys:
        name = f"metadata.{key}" if key in columns else key
        columns[name] = [value.get(key) if value else None for value in nested]
    return columns
