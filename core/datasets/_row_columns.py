"""Rows read one at a time (JSON Lines, JSON arrays, workbooks) gathered into compact columns.

Rows are kept as Python objects only for one chunk; then each column of the chunk becomes a
pyarrow string array when it holds nothing but text and nulls (the usual case: no Python object
per cell), else a list of its values. A file of a million rows thus never holds a million dicts
at once.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING, Any, Generic, TypeAlias, TypeVar

import pandas as pd

if TYPE_CHECKING:  # pyarrow is imported where it is used, for the start-up time
    import pyarrow as pa

CHUNK_ROWS = 20_000
"""Rows kept as Python objects before their columns are packed."""

Piece: TypeAlias = "pa.StringArray | list[Any]"
"""A chunk of one column: a pyarrow StringArray, or a list of Python values."""

Key = TypeVar("Key", bound=Hashable)
"""The rows' keys: object keys (JSON), column positions (workbooks)."""


class ColumnsBuilder(Generic[Key]):
    """Columns from rows given as `{key: value}` (a missing key is a null), keys in the order
    they first appear."""

    def __init__(self, chunk_rows: int = CHUNK_ROWS) -> None:
        self._chunk_rows = chunk_rows
        self._pieces: dict[Key, list[Piece]] = {}
        self._rows: list[dict[Key, Any]] = []
        self._packed = 0  # rows already packed into pieces

    @property
    def row_count(self) -> int:
        return self._packed + len(self._rows)

    def add(self, row: dict[Key, Any]) -> None:
        self._rows.append(row)
        if len(self._rows) >= self._chunk_rows:
            self._pack()

    def finish(self) -> tuple[list[Key], dict[Key, pd.Series]]:
        """The keys in order of first appearance and a Series per key: pyarrow-backed text
        (`str`) when every value is text or null, else an object Series of the values."""
        self._pack()
        columns: dict[Key, pd.Series] = {}
        for key, pieces in self._pieces.items():
            columns[key] = _series(pieces)
        self._pieces = {}
        return list(columns), columns

    def _pack(self) -> None:
        import pyarrow as pa

        rows, self._rows = self._rows, []
        if not rows:
            return
        before = [pa.nulls(self._packed, pa.string())] if self._packed else []
        for row in rows:
            for key in row:
                if key not in self._pieces:  # first seen: null in every row packed before
                    self._pieces[key] = list(before)
        for key, pieces in self._pieces.items():
            values = [row.get(key) for row in rows]
            if all(v is None or type(v) is str for v in values):
                pieces.append(pa.array(values, pa.string()))
            else:
                pieces.append(values)
        self._packed += len(rows)


def _series(pieces: list[Piece]) -> pd.Series:
    import pyarrow as pa

    if all(isinstance(piece, pa.Array) for piece in pieces):
        chunked = pa.chunked_array(pieces, pa.string())
        # pa.table takes a ChunkedArray as a column; pyarrow-stubs allow only arrays and lists.
        table = pa.table({"values": chunked})  # type: ignore[dict-item]
        return table.to_pandas()["values"]
    values: list[Any] = []
    for piece in pieces:
        values.extend(piece.to_pylist() if isinstance(piece, pa.Array) else piece)
    return pd.Series(values, dtype=object)
