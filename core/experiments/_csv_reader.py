"""CSV and TSV files through pyarrow's parser, with the csv module naming the malformed rows of a
file pyarrow rejects."""

from __future__ import annotations

import csv
import io
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from core.experiment_records import ImportProblem
from core.experiments._dataset_table import Table, blank_rows, drop_trailing_blank_rows
from core.experiments._file_text import decode, utf8_bytes
from core.experiments._import_problems import Unreadable, capped, join, problem


def read_csv(data: bytes, sep: str | None = None) -> Table:
    """CSV through pyarrow's parser (fast, every value kept as text); a file it finds malformed
    is read again with the csv module to say which rows and lines are wrong. Without `sep`, the
    separator is sniffed from the header line (comma, semicolon or tab)."""
    raw = utf8_bytes(data)
    if not raw or raw.isspace():
        raise Unreadable("empty_file", "The file is empty")
    end = raw.find(b"\n")
    first_line = decode(raw[: end if end >= 0 else len(raw)]).rstrip("\r")
    sep = sep or _sniff_separator(first_line)
    header = next(csv.reader([first_line], delimiter=sep), [])
    names = [name if name.strip() else f"Unnamed: {n}" for n, name in enumerate(header)]
    problems = _header_problems(header)
    frame = None if problems else _arrow_csv(raw, sep, names)
    if frame is None:
        # Slow path, for files known to be bad: decoding names a bad byte and its line.
        text = decode(raw)
        problems = problems or _csv_structure_problems(text, sep, len(names))
        empty = pd.DataFrame(columns=names)
        return Table(tuple(names), empty, _row_label, _row_number, problems=tuple(problems))
    blank = blank_rows(frame)
    frame = drop_trailing_blank_rows(frame, blank)
    table = Table(tuple(names), frame, _row_label, _row_number)
    # With one column a blank line is an empty value (reported as such), not a malformed row.
    rows = np.flatnonzero(blank[: len(frame)]) if len(names) > 1 else np.array([], dtype=int)
    if not len(rows):
        return table
    blanks = table.row_problems(
        rows, "malformed_row", lambda label: f"{label} is blank", "are blank"
    )
    return replace(table, problems=tuple(blanks))


def read_tsv(data: bytes) -> Table:
    return read_csv(data, sep="\t")


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
                problem("malformed_row", f"Row {r} (line {n}) is blank", row=r) for r, n in blank
            ]
            blank = []
            if len(record) != width:
                problems.append(
                    problem(
                        "malformed_row",
                        f"Row {row} (line {reader.line_num}): {len(record)} "
                        f"field{'s' * (len(record) != 1)}, but the header has {width}",
                        row=row,
                    )
                )
    except csv.Error as error:
        problems.append(
            problem(
                "malformed_file",
                f"The file is not valid CSV: {error} (line {reader.line_num})",
            )
        )
    if not problems:
        problems.append(problem("malformed_file", "The file is not valid CSV"))
    return capped(problems, "malformed_row", "more rows have the wrong number of fields")


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
        problem(
            "duplicate_column",
            f"Column {name!r} appears {len(places)} times in the header "
            f"(columns {join([str(p) for p in places], len(places))})",
            column=name,
        )
        for name, places in positions.items()
        if len(places) > 1
    ]
