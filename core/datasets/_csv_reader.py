"""CSV and TSV files through pyarrow's parser, with the csv module naming the malformed rows of a
file pyarrow rejects. Lines may end with LF, CRLF or CR alone; the row and cell limits are
checked on the parsed text columns, before any Python object is made per cell (a big file's
rows are counted before it is parsed)."""

from __future__ import annotations

import csv
import io
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Literal, TypedDict

import numpy as np
import pandas as pd

from core.datasets._cell_values import text_chunks
from core.datasets._dataset_table import Table, blank_rows, drop_trailing_blank_rows
from core.datasets._file_text import decode, utf8_bytes
from core.datasets._import_problems import (
    MAX_LISTED_PER_KIND,
    Unreadable,
    capped,
    join,
    problem,
)
from core.datasets._limits import DEFAULT_LIMITS, ImportLimits, size_text
from core.records import ImportProblem

if TYPE_CHECKING:  # pyarrow is imported where it is used, for the start-up time
    import pyarrow as pa
    import pyarrow.csv as pa_csv

_COUNT_LINES_FROM_BYTES = 32 * 1024 * 1024
"""A file larger than this has its lines counted before the parse (about 6 ms per 10 MB): with
more lines than the row limit allows, it is parsed block by block, counting the rows, and
refused as soon as they pass the limit. A smaller file cannot parse into much, so its rows are
counted once parsed."""


def read_csv(
    data: bytes, limits: ImportLimits = DEFAULT_LIMITS, *, sep: str | None = None
) -> Table:
    """CSV through pyarrow's parser (fast, every value kept as text); a file it finds malformed
    is read again with the csv module to say which rows and lines are wrong. Without `sep`, the
    separator is sniffed from the header line (comma, semicolon or tab)."""
    raw = utf8_bytes(data)
    if not raw or raw.isspace():
        raise Unreadable("empty_file", "The file is empty")
    first_line = decode(raw[: _line_end(raw)])
    sep = sep or _sniff_separator(first_line)
    try:
        header = next(csv.reader([first_line], delimiter=sep), [])
    except csv.Error as error:
        raise Unreadable(
            "malformed_file", f"The file is not valid CSV: {error} (line 1, the header)"
        ) from None
    names = [name if name.strip() else f"Unnamed: {n}" for n, name in enumerate(header)]
    problems = _header_problems(header)
    stream = len(raw) > _COUNT_LINES_FROM_BYTES and _lines(raw) > limits.rows + 1
    frame = None if problems else _arrow_csv(raw, sep, names, limits if stream else None)
    if frame is None:
        # Slow path, for files known to be bad: decoding names a bad byte and its line.
        text = decode(raw)
        problems = problems or _csv_structure_problems(text, sep, len(names), limits)
        empty = pd.DataFrame(columns=names)
        return Table(tuple(names), empty, _row_label, _row_number, problems=tuple(problems))
    blank = blank_rows(frame)
    frame = drop_trailing_blank_rows(frame, blank)
    if len(frame) > limits.rows:
        raise _too_many_rows(f"{len(frame):,} rows", limits)
    table = Table(tuple(names), frame, _row_label, _row_number, may_hold_nul=b"\x00" in raw)
    if len(raw) > limits.cell_bytes:  # else no value can be over the cell limit
        large = _cell_problems(table, limits)
        if large:
            return replace(table, problems=tuple(large))
    # With one column a blank line is an empty value (reported as such), not a malformed row.
    rows = np.flatnonzero(blank[: len(frame)]) if len(names) > 1 else np.array([], dtype=int)
    if not len(rows):
        return table
    blanks = table.row_problems(
        rows, "malformed_row", lambda label: f"{label} is blank", "are blank"
    )
    return replace(table, problems=tuple(blanks))


def read_tsv(data: bytes, limits: ImportLimits = DEFAULT_LIMITS) -> Table:
    return read_csv(data, limits, sep="\t")


def _line_end(raw: bytes) -> int:
    """Where the first line ends: at its LF, CRLF or lone CR (old Mac files)."""
    newline = raw.find(b"\n")
    newline = len(raw) if newline < 0 else newline
    carriage_return = raw.find(b"\r", 0, newline)
    return newline if carriage_return < 0 else carriage_return


def _lines(raw: bytes) -> int:
    """How many lines the file has at most (a quoted line break adds one)."""
    return (raw.count(b"\n") or raw.count(b"\r")) + 1


def _too_many_rows(found: str, limits: ImportLimits) -> Unreadable:
    return Unreadable(
        "too_many_rows",
        f"The file has {found}, over the row limit of {limits.rows:,}; split it into smaller files",
    )


def _cell_problems(table: Table, limits: ImportLimits) -> list[ImportProblem]:
    """The rows with a value over the cell limit, column by column (vectorised)."""
    import pyarrow.compute as pc

    limit = size_text(limits.cell_bytes)
    problems: list[ImportProblem] = []
    for name in table.columns:
        lengths = pc.binary_length(text_chunks(table.frame[name]))
        if (pc.max(lengths).as_py() or 0) <= limits.cell_bytes:
            continue
        sizes = lengths.to_numpy()
        rows = np.flatnonzero(sizes > limits.cell_bytes)
        problems += [
            problem(
                "cell_too_large",
                f"{table.label(int(r))}: the value in column {name!r} is "
                f"{size_text(int(sizes[r]))}, over the cell limit of {limit}",
                row=table.row_number(int(r)),
                column=name,
            )
            for r in rows[:MAX_LISTED_PER_KIND]
        ]
        if len(rows) > MAX_LISTED_PER_KIND:
            more = len(rows) - MAX_LISTED_PER_KIND
            problems.append(
                problem(
                    "cell_too_large",
                    f"{more:,} more rows have a value in column {name!r} over the cell limit "
                    f"of {limit}",
                    column=name,
                )
            )
    return problems


def _row_label(index: int) -> str:
    return f"Row {index + 1}"


def _row_number(index: int) -> int:
    return index + 1


def _arrow_csv(
    raw: bytes, sep: str, names: list[str], stream: ImportLimits | None = None
) -> pd.DataFrame | None:
    """The rows as text columns, or None when pyarrow finds any malformed row (or bytes that
    are not UTF-8). With `stream` (the limits), the file is parsed block by block and refused
    as soon as its rows pass the row limit."""
    import pyarrow as pa

    block_size: int | None = None
    while True:
        invalid: list[pa_csv.InvalidRow] = []
        try:
            table = _parse(raw, sep, names, invalid, block_size, stream)
        except pa.ArrowInvalid as error:
            # A value longer than a parse block (1 MB): parse the file as one block.
            if "straddl" in str(error) and block_size is None:
                block_size = len(raw) + 1
                continue
            return None
        break
    if invalid:
        return None
    frame: pd.DataFrame = table.to_pandas()
    frame.columns = names
    return frame


class _CsvOptions(TypedDict):
    """The options of pyarrow's CSV reader, whole or streaming."""

    read_options: pa_csv.ReadOptions
    parse_options: pa_csv.ParseOptions
    convert_options: pa_csv.ConvertOptions


def _parse(
    raw: bytes,
    sep: str,
    names: list[str],
    invalid: list[pa_csv.InvalidRow],
    block_size: int | None,
    stream: ImportLimits | None,
) -> pa.Table:
    import pyarrow as pa
    import pyarrow.csv as pa_csv

    def on_invalid(row: pa_csv.InvalidRow) -> Literal["skip"]:
        invalid.append(row)
        return "skip"

    read_options = pa_csv.ReadOptions(column_names=names, skip_rows=1)
    if block_size is not None:
        read_options.block_size = block_size
    options: _CsvOptions = {
        "read_options": read_options,
        "parse_options": pa_csv.ParseOptions(
            delimiter=sep,
            newlines_in_values=True,
            ignore_empty_lines=False,
            invalid_row_handler=on_invalid,
        ),
        "convert_options": pa_csv.ConvertOptions(
            # 64-bit offsets from the start: pandas keeps large_string, so none is converted.
            column_types={name: pa.large_string() for name in names},
            strings_can_be_null=False,
            quoted_strings_can_be_null=False,
        ),
    }
    # BufferReader reads the bytes in place, where io.BytesIO would copy them. pyarrow reads
    # any NativeFile; its stubs allow only a path or a Python file (hence the ignores).
    if stream is None:
        return pa_csv.read_csv(pa.BufferReader(raw), **options)  # type: ignore[arg-type]
    batches = []
    rows = 0
    for batch in pa_csv.open_csv(pa.BufferReader(raw), **options):  # type: ignore[arg-type]
        batches.append(batch)
        rows += batch.num_rows
        if rows > stream.rows and not _blank_after(batch, rows - stream.rows):
            raise _too_many_rows(f"more than {stream.rows:,} rows", stream)
    schema = pa.schema([(name, pa.large_string()) for name in names])
    return pa.Table.from_batches(batches, schema=schema)


def _blank_after(batch: Any, extra: int) -> bool:
    """True when the last `extra` rows of `batch` (those past the row limit) are all blank:
    blank lines at the end of a file are not rows."""
    import pyarrow.compute as pc

    tail = batch.slice(max(batch.num_rows - extra, 0))
    return all(pc.max(pc.binary_length(column)).as_py() in (0, None) for column in tail.columns)


def _csv_structure_problems(
    text: str, sep: str, width: int, limits: ImportLimits
) -> list[ImportProblem]:
    """Rows whose field count differs from the header's, found with the csv module (slow, but
    only run on a file already known to be malformed)."""
    # The csv module's own field limit is 128 KB; values up to the cell limit are valid.
    csv.field_size_limit(max(csv.field_size_limit(), limits.cell_bytes + 1))
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
        what = str(error)
        if what.startswith("field larger than field limit"):
            what = f"a value is over the cell limit of {size_text(limits.cell_bytes)}"
        problems.append(
            problem("malformed_file", f"The file is not valid CSV: {what} (line {reader.line_num})")
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
