"""Cell values of a parsed table, one column at a time: pyarrow text, emptiness, ids as text,
and plain JSON-ready Python values. Nothing here knows about mappings, rows or problems."""

from __future__ import annotations

import json
import math
from datetime import date, datetime, time
from typing import Any

import numpy as np
import pandas as pd


def arrow_text(series: pd.Series) -> Any:
    """The pyarrow ChunkedArray behind a text Series without nulls, else None."""
    chunked = text_chunks(series)
    return chunked if chunked is not None and not chunked.null_count else None


def text_chunks(series: pd.Series) -> Any:
    """The pyarrow ChunkedArray behind a text Series (nulls allowed), else None."""
    array = series.array
    if series.dtype == object or not hasattr(array, "__arrow_array__"):
        return None
    if not pd.api.types.is_string_dtype(series.dtype):
        return None
    chunked = array.__arrow_array__()
    return chunked if hasattr(chunked, "chunks") else None


def empty_mask(series: pd.Series) -> np.ndarray:
    """True where a value is missing, None, NaN, blank text or an empty list/dict."""
    chunked = text_chunks(series)
    if chunked is not None:
        # Same answer as `.str.strip().eq("")` (pyarrow's trim and is_space share one notion of
        # whitespace) without writing a trimmed copy of the column.
        import pyarrow.compute as pc

        def blank(chunk: Any) -> Any:
            # pyarrow compares with a Python int; its stubs want a pyarrow Scalar (the ignore).
            no_bytes = pc.equal(pc.binary_length(chunk), 0)  # type: ignore[call-overload]
            found = pc.or_(no_bytes, pc.utf8_is_space(chunk))
            return pc.fill_null(found, True) if chunk.null_count else found

        return chunkwise(chunked, blank)
    if is_text(series):
        return (series.isna() | series.str.strip().eq("")).to_numpy(dtype=bool)
    return np.fromiter((is_empty(v) for v in series.tolist()), dtype=bool, count=len(series))


def is_empty(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, float):
        return math.isnan(value)
    if isinstance(value, str):
        return not value.strip()
    if isinstance(value, list | tuple | dict | np.ndarray):
        return len(value) == 0
    return value is pd.NaT or value is pd.NA


def id_strings(series: pd.Series) -> pd.Series:
    """The values as trimmed text ("" for an empty one), as ids are compared and stored."""
    chunked = text_chunks(series)
    long_column = chunked is not None and len(chunked) > WHOLE_COLUMN_ROWS
    if long_column and not chunked.null_count and not _padded(chunked):
        return series  # a long column with nothing to trim is not copied
    if is_text(series):
        return series.fillna("").str.strip()
    return pd.Series([_id_text(v) for v in series.tolist()], dtype=object)


def _padded(chunked: Any) -> bool:
    """True when a text starts or ends with whitespace (what `str.strip` would remove)."""
    import pyarrow.compute as pc

    for chunk in chunked.chunks:
        for end in (pc.utf8_slice_codeunits(chunk, 0, 1), pc.utf8_slice_codeunits(chunk, -1)):
            if pc.any(pc.utf8_is_space(end)).as_py():
                return True
    return False


WHOLE_COLUMN_ROWS = 500_000
"""Up to this many rows a column is computed on whole (each call on a pyarrow chunk costs
time); a longer one a chunk at a time, so that no temporary is column-sized."""


def chunkwise(chunked: Any, test: Any) -> np.ndarray:
    """`test` (a pyarrow compute to booleans) over a column as one numpy array, computed a
    chunk at a time for a long column."""
    parts = [test(part).to_numpy(zero_copy_only=False) for part in _parts(chunked) if len(part)]
    return np.concatenate(parts).astype(bool, copy=False) if parts else np.zeros(0, dtype=bool)


def _parts(chunked: Any) -> list[Any]:
    return [chunked] if len(chunked) <= WHOLE_COLUMN_ROWS else list(chunked.chunks)


def _id_text(value: Any) -> str:
    if is_empty(value):
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))  # Excel and JSON give 3.0 for an id typed as 3
    plain_value = plain(value)
    if isinstance(plain_value, str):
        return plain_value.strip()
    return json.dumps(plain_value, default=str)


def plain_list(series: pd.Series) -> list[Any]:
    """The values as plain Python (`plain`), skipping the per-value work for text."""
    values = series.tolist()
    if is_text(series):
        return values if not series.hasnans else [plain(v) for v in values]
    return [plain(v) for v in values]


def plain(value: Any) -> Any:
    """A JSON-ready Python value (numpy and pandas scalars and arrays, dates, missing values)."""
    if value is None or isinstance(value, str | bool | int):
        return value
    if isinstance(value, float):
        return None if math.isnan(value) else value
    if isinstance(value, np.ndarray):
        return [plain(v) for v in value.tolist()]
    if isinstance(value, np.generic):
        return plain(value.item())
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if value is pd.NaT or value is pd.NA:
        return None
    if isinstance(value, datetime | date | time | pd.Timestamp):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return str(value)


def is_text(series: pd.Series) -> bool:
    """A pandas string dtype (pyarrow- or Python-backed), not an object column."""
    return series.dtype != object and pd.api.types.is_string_dtype(series.dtype)
