"""The mapped values, column by column, and the `DatasetItem`s built from them when needed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from core.experiment_records import ColumnMapping, DatasetItem
from core.experiments._dataset_table import _Table
from core.experiments._dataset_values import (
    Column,
    _arrow_text,
    _column,
    _empty_mask,
    _id_strings,
    _plain_list,
    _values,
)


def _mapped_ids(frame: pd.DataFrame, mapping: ColumnMapping) -> Column:
    """The items' ids: the id column's values as trimmed text, else the 1-based row numbers."""
    if mapping.id is None:
        return [str(n) for n in range(1, len(frame) + 1)]
    return _column(_id_strings(frame[mapping.id]))


@dataclass(frozen=True, slots=True)
class _ItemColumns:
    """The mapped values, column by column (items are built from them only when needed)."""

    ids: Column
    inputs: Column
    outputs: Column
    truths: Column
    metadata: dict[str, Column]


def _item_columns(table: _Table, mapping: ColumnMapping, ids: Column) -> _ItemColumns:
    frame = table.frame
    if mapping.ground_truth is None:
        truths: Column = [None] * len(frame)
    else:
        column = frame[mapping.ground_truth]
        empty = _empty_mask(column)
        if not empty.any() and _arrow_text(column) is not None:
            truths = column
        else:
            truths = [None if e else v for v, e in zip(_plain_list(column), empty, strict=True)]
    return _ItemColumns(
        ids=ids,
        inputs=_column(frame[mapping.input]),
        outputs=_column(frame[mapping.output]),
        truths=truths,
        metadata=_metadata_columns(frame, mapping.metadata),
    )


def _metadata_columns(frame: pd.DataFrame, names: list[str]) -> dict[str, list[Any]]:
    """Metadata values by name. A column named `metadata` holding objects (Mastra's item shape)
    is spread into its keys; a key that clashes with a column is kept as `metadata.<key>`."""
    columns = {c: _column(frame[c]) for c in dict.fromkeys(names)}
    nested = columns.get("metadata")
    if not isinstance(nested, list) or not all(v is None or isinstance(v, dict) for v in nested):
        return columns
    del columns["metadata"]
    keys = list(dict.fromkeys(k for value in nested if value for k in value))
    for key in keys:
        name = f"metadata.{key}" if key in columns else key
        columns[name] = [value.get(key) if value else None for value in nested]
    return columns


def _items(columns: _ItemColumns) -> list[DatasetItem]:
    names = list(columns.metadata)
    values = [_values(c) for c in columns.metadata.values()]
    ids = _values(columns.ids)
    rows = zip(*values, strict=True) if values else ((),) * len(ids)
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
            _values(columns.inputs),
            _values(columns.outputs),
            _values(columns.truths),
            rows,
            strict=True,
        )
    ]
