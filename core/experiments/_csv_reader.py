"""CSV and TSV files through pyarrow's parser, with the csv module naming the malformed rows of a
file pyarrow rejects."""

from __future__ import annotations

import csv
import io
from typing import Any

import numpy as np
import pandas as pd

from core.experiment_records import ImportProblem
from core.experiments._dataset_table import (
    _capped,
    _join,
    _listed_rows,
    _problem,
    _Table,
    _Unreadable,
)
from core.experiments._readers import _blank_rows, _decode, _drop_trailing_blank_rows


def _read_csv(data: bytes, sep: str | None = None) -> _Table:
    """CSV through pyarrow's parser (fast, every value kept as text); a file it finds malformed
    is read again with the csv module to say which rows and lines are wrong."""
    raw = _utf8_bytes(data)
    if not raw or raw.isspace():
        raise _Unreadable("empty_file", "The file is empty")
    end = raw.find(b"\n")
    first_line = _decode(raw[: end if end >= 0 else len(raw)]).rstrip("\r")
    sep = sep or _sniff_separator(first_line)
    header = next(csv.reader([first_line], delimiter=sep), [])
    names = [name if name.strip() else f"Unnamed: {n}" for n, name in enumerate(header)]
    problems = _header_problems(header)
    frame = None if problems else _arrow_csv(raw, sep, names)
    if frame is None:
        # Slow path, for files known to be bad: decoding names a bad byte and its line.
        text = _decode(raw)
        problems = problems or _csv_structure_problems(text, sep, len(names))
        return _Table(
            names, pd.DataFrame(columns=names), _row_label, _row_number, "column", problems
        )
    blank = _blank_rows(frame)
    frame = _drop_trailing_blank_rows(frame, blank)
    table = _Table(names, frame, _row_label, _row_number)
    # With one column a blank line is an empty value (reported as such), not a malformed row.
    rows = np.flatnonzero(blank[: len(frame)]) if len(names) > 1 else np.array([], dtype=int)
    table.problems = _listed_rows(table, rows, "malformed_row", "{label} is blank", "are blank")
    return table


def _row_label(index: int) -> str:
    return f"Row {index + 1}"


def _row_number(index: int) -> int:
    return index + 1


def _arrow_csv(raw: bytes, sep: str, names: list[str]) -> pd.DataFrame | None:
    """The rows as text columns, or None when pyarrow finds any malformed row (or bytes that
    are not UTF-8)."""
    import pyarrow as pa
    import pyarrow.csv as pa_csv

    invalid: list[Any] = []

    def on_invalid(row: Any) -> str:
        invalid.append(row)
        return "skip"

    try:
        table = pa_csv.read_csv(
            pa.BufferReader(raw),  # reads the bytes in place, where io.BytesIO copies them
            read_options=pa_csv.ReadOptions(column_names=names, skip_rows=1),
            parse_options=pa_csv.ParseOptions(
                delimiter=sep,
                newlines_in_values=True,
                ignore_empty_lines=False,
                invalid_row_handler=on_invalid,
            ),
            convert_options=pa_csv.ConvertOptions(
                column_types={name: pa.string() for name in names},
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
            ),
        )
    except pa.ArrowInvalid:
        return None
    if invalid:
        return None
    frame = table.to_pandas()
    frame.columns = names
    return frame


def _csv_structure_problems(text: str, sep: str, width: int) -> list[ImportProblem]:
    """Rows whose field count differs from the header's, found with the csv module (slow, but
    only run on a file already known to be malformed)."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=sep, strict=True)
    problems: list[ImportProblem] = []
    blank: list[tuple[int, int]] = []
    try:
        next(reader, None)
        for row, record in enumerate(reader, start=1):
            if not record:
                blank.append((row, reader.line_num))
                continue
            problems += [
                _problem("malformed_row", f"Row {r} (line {n}) is blank", row=r) for r, n in blank
            ]
            blank = []
            if len(record) != width:
                problems.append(
                    _problem(
                        "malformed_row",
                        f"Row {row} (line {reader.line_num}): {len(record)} "
                        f"field{'s' * (len(record) != 1)}, but the header has {width}",
                        row=row,
                    )
                )
    except csv.Error as error:
        problems.append(
            _problem(
                "malformed_file",
                f"The file is not valid CSV: {error} (line {reader.line_num})",
            )
        )
    if not problems:
        problems.append(_problem("malformed_file", "The file is not valid CSV"))
    return _capped(problems, "malformed_row", "more rows have the wrong number of fields")


def _read_tsv(data: bytes) -> _Table:
    return _read_csv(data, sep="\t")


def _utf8_bytes(data: bytes) -> bytes:
    """The file as UTF-8 bytes without a BOM (UTF-16 files are converted)."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return _decode(data).encode("utf-8")
    return data[3:] if data.startswith(b"\xef\xbb\xbf") else data


def _sniff_separator(first_line: str) -> str:
    # Spreadsheets in many locales save "CSV" with semicolons.
    if "," not in first_line and ";" in first_line:
        return ";"
    if "," not in first_line and "\t" in first_line:
        return "\t"
    return ","


def _header_problems(names: list[str]) -> list[ImportProblem]:
    positions: dict[str, list[int]] = {}
    for position, name in enumerate(names, start=1):
        if name.strip():
            positions.setdefault(name, []).append(position)
    return [
        _problem(
            "duplicate_column",
            f"Column {name!r} appears {len(places)} times in the header "
            f"(columns {_join([str(p) for p in places], len(places))})",
            column=name,
        )
        for name, places in positions.items()
        if len(places) > 1
    ]
