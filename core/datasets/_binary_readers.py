"""Excel workbooks (.xlsx, the first sheet) and Parquet files, read with their limits checked
before and while they are decompressed (docs/datasets.md, "Limits").

A workbook: the sizes its zip directory declares (zipfile never inflates an entry past its
declared size), then the sheet row by row through openpyxl's streaming reader, counting rows
and measuring each value. A Parquet file: its metadata (rows, uncompressed size, nesting), then
batch by batch with text columns kept dictionary-encoded until their decoded size and longest
value are known, so a file of one repeated value cannot expand unnoticed.
"""

from __future__ import annotations

import io
import math
import zipfile
from collections.abc import Hashable
from typing import Any

import numpy as np
import pandas as pd

from core.datasets._dataset_table import Table
from core.datasets._import_problems import MAX_LISTED_PER_KIND, Unreadable, problem
from core.datasets._limits import DEFAULT_LIMITS, INT_DIGITS, ImportLimits, size_text
from core.datasets._row_columns import ColumnsBuilder
from core.datasets._value_checks import might_exceed, text_bytes
from core.records import ImportProblem

_PARQUET_BATCH_ROWS = 65_536


# ---- Excel ----


def read_xlsx(data: bytes, limits: ImportLimits = DEFAULT_LIMITS) -> Table:
    """The first sheet; its first row is the header, so data row n is sheet row n + 1."""
    _check_unzipped_size(data, limits)
    try:
        from openpyxl import load_workbook
    except ImportError as error:  # openpyxl is a declared dependency; say so if it is missing
        raise Unreadable(
            "unsupported_format", f"Reading .xlsx files needs openpyxl: {error}"
        ) from error
    try:
        book = load_workbook(io.BytesIO(data), read_only=True, data_only=True, keep_links=False)
    except Exception as error:  # openpyxl raises many kinds for a corrupt workbook
        raise _unreadable_workbook(error) from error
    try:
        return _sheet_table(book.worksheets[0], limits)
    finally:
        book.close()


def _check_unzipped_size(data: bytes, limits: ImportLimits) -> None:
    """The declared sizes against the decompressed limit, then every XML part unzipped a block
    at a time, looking for a text too long to be a value within the cell limit: openpyxl would
    hold it whole (twice) before any cell could be measured."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            entries = archive.infolist()
            unzipped = sum(entry.file_size for entry in entries)
            if unzipped > limits.decompressed_bytes:
                raise Unreadable(
                    "too_large_decompressed",
                    f"The workbook unzips to {size_text(unzipped)}, over the limit of "
                    f"{size_text(limits.decompressed_bytes)} (checked before reading it)",
                )
            for entry in entries:
                if entry.filename.endswith(".xml") and entry.file_size > _XML_TEXT_FACTOR * (
                    limits.cell_bytes
                ):
                    _check_text_runs(archive, entry.filename, limits)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, RuntimeError) as error:
        raise _unreadable_workbook(error) from error


_XML_TEXT_FACTOR = 6
"""An escaped character takes at most 6 bytes of XML (`&quot;`): an XML text longer than 6 times
the cell limit cannot be a value within it."""


def _check_text_runs(archive: zipfile.ZipFile, name: str, limits: ImportLimits) -> None:
    """Refuse a part holding a text (the bytes between two `<`) over 6 times the cell limit,
    found a block at a time."""
    most = _XML_TEXT_FACTOR * limits.cell_bytes
    run = 0
    with archive.open(name) as part:
        while block := part.read(1 << 20):
            pieces = block.split(b"<")
            run += len(pieces[0])
            longest = max([run, *(len(piece) for piece in pieces[1:-1])])
            if len(pieces) > 1:
                run = len(pieces[-1])
            if max(longest, run) > most:
                raise Unreadable(
                    "cell_too_large",
                    f"The workbook's {name} holds a text of more than {size_text(most)}, so a "
                    f"value over the cell limit of {size_text(limits.cell_bytes)} (found before "
                    "reading it)",
                )


def _sheet_table(sheet: Any, limits: ImportLimits) -> Table:
    sheet.reset_dimensions()  # a declared size may be wrong: find the real one while reading
    rows = sheet.iter_rows()
    sheet_row = 1
    try:
        header = [_cell(cell) for cell in next(rows, ())]
        while header and header[-1] is None:  # trailing empty header cells name no column
            header.pop()
        builder = ColumnsBuilder[int]()
        problems: list[ImportProblem] = []
        blank = 0  # blank rows not added yet: those at the end of the sheet are no data
        for sheet_row, cells in enumerate(rows, start=2):
            values = {n: v for n, cell in enumerate(cells) if (v := _cell(cell)) is not None}
            if builder.row_count + blank >= limits.rows:
                raise Unreadable(
                    "too_many_rows",
                    f"The sheet has more than {limits.rows:,} rows, over the row limit (sheet "
                    f"row {sheet_row:,}); split it into smaller files",
                )
            if not values:
                blank += 1
                continue
            for _ in range(blank):
                builder.add({})
            blank = 0
            problems += _large_cells(values, header, builder.row_count, limits)
            builder.add(values)
    except Unreadable:
        raise
    except ValueError as error:
        raise Unreadable(
            "unreadable_file",
            f"Sheet row {sheet_row:,} cannot be read: {_value_error(error)}",
        ) from error
    except Exception as error:
        raise _unreadable_workbook(error) from error
    return _workbook_table(header, builder, problems)


def _cell(cell: Any) -> Any:
    """A cell's value as pandas would read it: integral numbers as int, errors as missing."""
    value = getattr(cell, "value", None)
    if value is None or getattr(cell, "data_type", None) == "e":
        return None
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    return value


def _large_cells(
    values: dict[int, Any], header: list[Any], index: int, limits: ImportLimits
) -> list[ImportProblem]:
    problems = []
    for position, value in list(values.items()):
        if might_exceed(value, limits.cell_bytes) and text_bytes(value) > limits.cell_bytes:
            name = _column_name(header, position)
            problems.append(
                problem(
                    "cell_too_large",
                    f"Row {index + 1} (sheet row {index + 2}): the value in column {name!r} is "
                    f"{size_text(text_bytes(value))}, over the cell limit of "
                    f"{size_text(limits.cell_bytes)}",
                    row=index + 1,
                    column=name,
                )
            )
            values[position] = None  # not kept: nothing is imported anyway
    return problems


def _workbook_table(
    header: list[Any], builder: ColumnsBuilder[int], found: list[ImportProblem]
) -> Table:
    positions, series = builder.finish()
    width = max([len(header), *(int(p) + 1 for p in positions)])
    names = _unique([_column_name(header, n) for n in range(width)])
    rows = builder.row_count
    empty = pd.Series([None] * rows, dtype=object)
    frame = pd.DataFrame(
        {name: series.get(n, empty) for n, name in enumerate(names)}, columns=names
    )
    problems = found[:MAX_LISTED_PER_KIND]
    if len(found) > MAX_LISTED_PER_KIND:
        more = len(found) - MAX_LISTED_PER_KIND
        problems.append(problem("cell_too_large", f"{more:,} more values are over the cell limit"))
    return Table(
        columns=tuple(names),
        frame=frame,
        label=lambda i: f"Row {i + 1} (sheet row {i + 2})",
        row_number=lambda i: i + 1,
        problems=tuple(problems),
    )


def _column_name(header: list[Any], position: int) -> str:
    value = header[position] if position < len(header) else None
    return f"Unnamed: {position}" if value is None or value == "" else str(value)


def _unique(names: list[str]) -> list[str]:
    """Repeated header names made unique as pandas does: `id`, `id.1`, `id.2`..."""
    seen: set[str] = set()
    unique = []
    for name in names:
        candidate, n = name, 0
        while candidate in seen:
            n += 1
            candidate = f"{name}.{n}"
        seen.add(candidate)
        unique.append(candidate)
    return unique


def _unreadable_workbook(error: BaseException) -> Unreadable:
    return Unreadable(
        "unreadable_file", f"The file is not a readable .xlsx workbook ({_error_text(error)})"
    )


def _value_error(error: ValueError) -> str:
    if "digits" in str(error):
        return f"a number has more than {INT_DIGITS:,} digits"
    return _error_text(error)


# ---- Parquet ----


def read_parquet(data: bytes, limits: ImportLimits = DEFAULT_LIMITS) -> Table:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as error:
        raise Unreadable(
            "unsupported_format", f"Reading Parquet files needs pyarrow: {error}"
        ) from error
    try:
        plain = pq.ParquetFile(pa.BufferReader(data))
        known, dictionary_columns = _check_parquet_metadata(plain, limits)
        table, problems = _read_parquet_batches(data, plain, limits, known, dictionary_columns)
    except Unreadable:
        raise
    except Exception as error:  # pyarrow raises ArrowInvalid, OSError, ... for a bad file
        raise Unreadable(
            "unreadable_file", f"The file is not a readable Parquet file ({_error_text(error)})"
        ) from error
    frame = table.to_pandas()
    frame.columns = [str(c) for c in frame.columns]
    return Table(
        columns=tuple(frame.columns),
        frame=frame,
        label=lambda i: f"Row {i + 1}",
        row_number=lambda i: i + 1,
        problems=tuple(problems),
    )


_FIXED_WIDTH = {"BOOLEAN": 1, "INT32": 4, "INT64": 8, "INT96": 12, "FLOAT": 4, "DOUBLE": 8}
"""Bytes per value once decoded, by Parquet physical type (a boolean counted as a byte)."""


def _check_parquet_metadata(parquet: Any, limits: ImportLimits) -> tuple[int, list[str]]:
    """Rows, nesting and decoded size from the footer, before any value is read. Returns the
    decoded bytes the footer tells and the text columns whose size only their dictionaries
    tell (a dictionary page can stand for any number of copies of a long value)."""
    metadata = parquet.metadata
    if metadata.num_rows > limits.rows:
        raise Unreadable(
            "too_many_rows",
            f"The file has {metadata.num_rows:,} rows, over the row limit of {limits.rows:,}; "
            "split it into smaller files",
        )
    for field in parquet.schema_arrow:
        if _type_depth(field.type) > limits.nesting:
            raise Unreadable(
                "too_deeply_nested",
                f"Column {field.name!r} is nested deeper than the limit of {limits.nesting} levels",
            )
    known = 0
    dictionary_columns: dict[str, None] = {}
    for group in range(metadata.num_row_groups):
        row_group = metadata.row_group(group)
        for index in range(row_group.num_columns):
            chunk = row_group.column(index)
            kind = chunk.physical_type
            if kind == "BYTE_ARRAY" and chunk.has_dictionary_page:
                dictionary_columns[chunk.path_in_schema] = None
                known += 8 * chunk.num_values  # the offsets; the text is counted as read
            elif kind == "BYTE_ARRAY":
                known += chunk.total_uncompressed_size  # plain text: never more once decoded
            elif kind == "FIXED_LEN_BYTE_ARRAY":
                known += chunk.num_values * max(parquet.schema.column(index).length or 0, 1)
            else:
                # Run-length and delta encodings store a repeated number in a few bytes.
                known += chunk.num_values * _FIXED_WIDTH.get(kind, 8)
    if known > limits.decompressed_bytes:
        raise _too_large(known, limits, "from the file's metadata, before reading it")
    return known, list(dictionary_columns)


def _read_parquet_batches(
    data: bytes,
    plain: Any,
    limits: ImportLimits,
    known: int,
    dictionary_columns: list[str],
) -> tuple[Any, list[ImportProblem]]:
    """The file's values, decoded batch by batch once the decoded size of its dictionary-encoded
    text and its longest text are known to be within the limits."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    text_leaves = {
        column.path
        for column in plain.schema
        if str(column.logical_type) in ("String", "None", "JSON", "Enum", "BSON")
    }
    encoded = pq.ParquetFile(
        pa.BufferReader(data),
        read_dictionary=[path for path in dictionary_columns if path in text_leaves],
    )
    schema = pa.schema(
        [
            pa.field(f.name, _column_type(f.type), f.nullable)
            for f in plain.schema_arrow
            if not _is_pandas_index(f.name)
        ]
    )
    encoded_batches = []
    problems: list[ImportProblem] = []
    decoded = known
    start = 0
    batches = encoded.iter_batches(
        batch_size=_PARQUET_BATCH_ROWS, columns=schema.names, use_threads=False
    )
    for batch in batches:
        decoded += sum(_dictionary_text_bytes(column) for column in batch.columns)
        if decoded > limits.decompressed_bytes:
            raise _too_large(decoded, limits, "found before decoding them")
        problems += _long_texts(batch, start, limits, len(problems))
        encoded_batches.append(batch)
        start += batch.num_rows
    if problems:  # nothing is imported: the values are not needed
        return pa.Table.from_batches([], schema=schema), problems
    # Only now, every size known, are the values decoded, one batch at a time.
    decoded_batches = []
    while encoded_batches:
        batch = encoded_batches.pop(0)
        columns = [_decode(batch.column(f.name), f.type) for f in schema]
        decoded_batches.append(pa.record_batch(columns, schema=schema))
    return pa.Table.from_batches(decoded_batches, schema=schema), problems


def _too_large(size: int, limits: ImportLimits, how: str) -> Unreadable:
    return Unreadable(
        "too_large_decompressed",
        f"The file's values take more than {size_text(size)} once decompressed ({how}), over "
        f"the limit of {size_text(limits.decompressed_bytes)}",
    )


def _long_texts(batch: Any, start: int, limits: ImportLimits, listed: int) -> list[ImportProblem]:
    """Values over the cell limit in the top-level text columns of a batch."""
    problems: list[ImportProblem] = []
    for name, column in zip(batch.schema.names, batch.columns, strict=True):
        lengths = _text_lengths(column)
        if lengths is None or (lengths.max() if len(lengths) else 0) <= limits.cell_bytes:
            continue
        for row in np.flatnonzero(lengths > limits.cell_bytes):
            if listed + len(problems) >= MAX_LISTED_PER_KIND:
                return problems
            problems.append(
                problem(
                    "cell_too_large",
                    f"Row {start + row + 1}: the value in column {name!r} is "
                    f"{size_text(int(lengths[row]))}, over the cell limit of "
                    f"{size_text(limits.cell_bytes)}",
                    row=int(start + row + 1),
                    column=name,
                )
            )
    return problems


def _text_lengths(column: Any) -> np.ndarray | None:
    """The byte length of each value of a text column (dictionary-encoded or not), 0 for a
    null; None for other columns."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if pa.types.is_dictionary(column.type):
        if not _is_text_type(column.type.value_type):
            return None
        lengths = pc.take(pc.binary_length(column.dictionary), column.indices)
    elif _is_text_type(column.type):
        lengths = pc.binary_length(column)
    else:
        return None
    filled: np.ndarray = pc.fill_null(lengths, 0).to_numpy().astype(np.int64, copy=False)
    return filled


def _dictionary_text_bytes(array: Any) -> int:
    """The bytes of the text its dictionaries stand for, once decoded (nested types included;
    other values are counted from the metadata)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    kind = array.type
    if pa.types.is_dictionary(kind):
        if not _is_text_type(kind.value_type):
            return 0
        lengths = pc.take(pc.binary_length(array.dictionary), array.indices)
        return int(pc.sum(lengths).as_py() or 0)
    if pa.types.is_struct(kind):
        return sum(_dictionary_text_bytes(child) for child in array.flatten())
    if (
        pa.types.is_list(kind)
        or pa.types.is_large_list(kind)
        or pa.types.is_map(kind)
        or pa.types.is_fixed_size_list(kind)
    ):
        return _dictionary_text_bytes(array.flatten())
    return 0


def _decode(array: Any, kind: Any) -> Any:
    import pyarrow.compute as pc

    return array if array.type == kind else pc.cast(array, kind)


def _column_type(kind: Any) -> Any:
    """What a column is decoded to: without dictionaries, and text with the 64-bit offsets
    pandas keeps (so no column is converted again)."""
    import pyarrow as pa

    dense = _without_dictionaries(kind)
    return pa.large_string() if pa.types.is_string(dense) else dense


def _without_dictionaries(kind: Any) -> Any:
    import pyarrow as pa

    if pa.types.is_dictionary(kind):
        return _without_dictionaries(kind.value_type)
    if pa.types.is_struct(kind):
        return pa.struct(
            [pa.field(f.name, _without_dictionaries(f.type), f.nullable) for f in kind]
        )
    if pa.types.is_map(kind):
        return pa.map_(_without_dictionaries(kind.key_type), _without_dictionaries(kind.item_type))
    if pa.types.is_large_list(kind):
        return pa.large_list(_without_dictionaries(kind.value_type))
    if pa.types.is_list(kind):
        return pa.list_(_without_dictionaries(kind.value_type))
    if pa.types.is_fixed_size_list(kind):
        return pa.list_(_without_dictionaries(kind.value_type), kind.list_size)
    return kind


def _type_depth(kind: Any) -> int:
    """Levels of lists, maps and structs in a type (without recursion)."""
    import pyarrow as pa

    deepest = 0
    stack = [(kind, 0)]
    while stack:
        current, depth = stack.pop()
        deepest = max(deepest, depth)
        if pa.types.is_struct(current):
            stack.extend((f.type, depth + 1) for f in current)
        elif pa.types.is_map(current):
            stack.extend([(current.key_type, depth + 1), (current.item_type, depth + 1)])
        elif (
            pa.types.is_list(current)
            or pa.types.is_large_list(current)
            or pa.types.is_fixed_size_list(current)
        ):
            stack.append((current.value_type, depth + 1))
        elif pa.types.is_dictionary(current):
            stack.append((current.value_type, depth))
    return deepest


def _is_text_type(kind: Any) -> bool:
    import pyarrow as pa

    return bool(
        pa.types.is_string(kind)
        or pa.types.is_large_string(kind)
        or pa.types.is_binary(kind)
        or pa.types.is_large_binary(kind)
    )


def _is_pandas_index(name: Hashable) -> bool:
    """pandas stores a DataFrame's unnamed index as `__index_level_0__`: no data column."""
    text = str(name)
    return text.startswith("__index_level_") and text.endswith("__")


def _error_text(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
