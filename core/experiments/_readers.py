"""Readers for JSONL, JSON, Excel and Parquet files, and what the CSV reader shares with them:
UTF-8 decoding that names a bad byte and its line, and blank rows at the end of a file."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from core.experiment_records import ImportProblem
from core.experiments._dataset_table import _capped, _problem, _Table, _Unreadable
from core.experiments._dataset_values import _arrow_text


def _read_jsonl(data: bytes) -> _Table:
    text = _decode(data)
    rows: list[dict[str, Any]] = []
    lines: list[int] = []
    problems: list[ImportProblem] = []
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as error:
            problems.append(
                _problem(
                    "malformed_row",
                    f"Line {number}: not valid JSON ({error.msg} at column {error.colno})",
                    row=number,
                )
            )
            continue
        if not isinstance(value, dict):
            problems.append(
                _problem(
                    "malformed_row",
                    f"Line {number}: expected a JSON object, found {_json_kind(value)}",
                    row=number,
                )
            )
            continue
        rows.append(value)
        lines.append(number)
    if not rows and not problems:
        raise _Unreadable("empty_file", "The file is empty")
    table = _records_table(rows, lambda i: f"Line {lines[i]}", lambda i: lines[i])
    table.problems = _capped(problems, "malformed_row", "more lines are malformed")
    return table


def _read_json(data: bytes) -> _Table:
    text = _decode(data)
    if not text.strip():
        raise _Unreadable("empty_file", "The file is empty")
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise _Unreadable(
            "malformed_file",
            f"The file is not valid JSON: {error.msg} at line {error.lineno}, column {error.colno}",
        ) from error
    if not isinstance(value, list):
        raise _Unreadable(
            "not_an_array",
            f"The JSON file must hold an array of objects, but it holds {_json_kind(value)}",
        )
    problems = [
        _problem(
            "malformed_row",
            f"Item {n}: expected an object, found {_json_kind(entry)}",
            row=n,
        )
        for n, entry in enumerate(value, start=1)
        if not isinstance(entry, dict)
    ]
    if problems:
        table = _records_table([], lambda i: f"Item {i + 1}", lambda i: i + 1)
        table.problems = _capped(problems, "malformed_row", "more items are not objects")
        return table
    return _records_table(value, lambda i: f"Item {i + 1}", lambda i: i + 1)


def _read_xlsx(data: bytes) -> _Table:
    try:
        frame = pd.read_excel(io.BytesIO(data), sheet_name=0, dtype=object, engine="openpyxl")
    except ImportError as error:  # openpyxl is a declared dependency; say so if it is missing
        raise _Unreadable(
            "unsupported_format", f"Reading .xlsx files needs openpyxl: {error}"
        ) from error
    except Exception as error:  # openpyxl raises many kinds for a corrupt workbook
        raise _Unreadable(
            "unreadable_file", f"The file is not a readable .xlsx workbook ({_error_text(error)})"
        ) from error
    frame = _drop_trailing_blank_rows(frame)
    frame.columns = [str(c) for c in frame.columns]
    return _Table(
        columns=list(frame.columns),
        frame=frame.astype(object),
        label=lambda i: f"Row {i + 1} (sheet row {i + 2})",
        row_number=lambda i: i + 1,
    )


def _read_parquet(data: bytes) -> _Table:
    try:
        frame = pd.read_parquet(io.BytesIO(data))
    except ImportError as error:
        raise _Unreadable(
            "unsupported_format", f"Reading Parquet files needs pyarrow: {error}"
        ) from error
    except Exception as error:  # pyarrow raises ArrowInvalid, OSError, ... for a bad file
        raise _Unreadable(
            "unreadable_file", f"The file is not a readable Parquet file ({_error_text(error)})"
        ) from error
    frame.columns = [str(c) for c in frame.columns]
    return _Table(
        columns=list(frame.columns),
        frame=frame.astype(object),
        label=lambda i: f"Row {i + 1}",
        row_number=lambda i: i + 1,
    )


def _records_table(
    rows: list[dict[str, Any]], label: Callable[[int], str], row_number: Callable[[int], int]
) -> _Table:
    """A table from JSON objects: the columns are every key, in order of first appearance."""
    columns = list(dict.fromkeys(key for row in rows for key in row))
    frame = pd.DataFrame(
        {c: pd.Series([row.get(c) for row in rows], dtype=object) for c in columns},
        columns=columns,
    )
    return _Table(columns, frame, label, row_number, field_word="key")


def _decode(data: bytes) -> str:
    """UTF-8 text (a BOM is allowed); anything else is reported with its byte and line."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError as error:
            raise _Unreadable(
                "bad_encoding", f"The file is not valid UTF-16: {error.reason}"
            ) from error
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        byte = data[error.start : error.start + 1].hex().upper()
        raise _Unreadable(
            "bad_encoding",
            f"The file is not valid UTF-8: byte 0x{byte} at position {error.start:,} "
            f"(line {line}) cannot be decoded; save the file as UTF-8",
        ) from error


def _blank_rows(frame: pd.DataFrame) -> np.ndarray:
    """True for rows whose every field is missing or empty text (a blank line reads as either,
    depending on the number of columns)."""
    if frame.empty:
        return np.zeros(len(frame), dtype=bool)
    texts = [_arrow_text(frame.iloc[:, n]) for n in range(frame.shape[1])]
    if all(t is not None for t in texts):
        # Text without nulls (every CSV): a field is blank when it has no bytes.
        import pyarrow.compute as pc

        blank = np.ones(len(frame), dtype=bool)
        for chunked in texts:
            blank &= pc.equal(pc.binary_length(chunked), 0).to_numpy()
            if not blank.any():  # the usual case: decided by the first column
                break
        return blank
    return (frame.isna() | frame.eq("")).all(axis=1).to_numpy(dtype=bool)


def _drop_trailing_blank_rows(frame: pd.DataFrame, blank: np.ndarray | None = None) -> pd.DataFrame:
    """Blank lines at the end of a file are not data. `blank`: `_blank_rows(frame)`, when
    already known."""
    blank = _blank_rows(frame) if blank is None else blank
    if not len(blank) or not blank[-1]:
        return frame
    keep = len(blank) - int(np.argmin(blank[::-1])) if not blank.all() else 0
    return frame.iloc[:keep]


def _json_kind(value: Any) -> str:
    kinds = {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}
    if value is None:
        return "null"
    if isinstance(value, int | float) and not isinstance(value, bool):
        return "a number"
    return kinds.get(type(value), type(value).__name__)


def _error_text(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
