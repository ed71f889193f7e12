"""Dataset import: a CSV, TSV, JSONL, JSON (an array of objects), Excel (.xlsx) or Parquet file
into `DatasetItem`s, with the column mapping detected or given, and every problem reported with
its place (docs/datasets.md).

The pipeline, in the order of this module:

1. read (`read_upload`): the size limit, the format from the extension, the parse into a table
   of columns -> a `ParsedUpload`, never changed afterwards;
2. columns: the table's column names and the mapping they suggest (`propose_mapping`);
3. mapping (`ParsedUpload.map`): the mapping given, else the proposed one, checked against the
   columns;
4. row checks: empty inputs, outputs and ids, repeated ids;
5. items: the mapped values column by column, turned into `DatasetItem`s only by
   `MappedUpload.item_chunks()` (a few thousand at a time, as they are stored: 100k items cost
   far more than the rest of an import, and a million would not fit in memory at once);
6. fingerprint: BLAKE3 of the mapped values. It needs the mapped values of step 5, so those
   are taken before the rows are checked, and the hash runs in a worker thread meanwhile.

A file is parsed once: its `ParsedUpload` gives the report and the items of any mapping without
reading the bytes again. Nothing is half-imported: a report with problems has no items. Large
CSV files are checked with vectorised pyarrow and pandas operations, so validation costs about
as much as parsing. The limits (`ImportLimits`: file size, rows, decompressed size, cell size,
nesting) are checked while the file is read; a reader that fails anyway is reported as an
unreadable file, never raised.
"""

from __future__ import annotations

import importlib
import logging
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import PurePath
from typing import TYPE_CHECKING

from core.datasets._column_mapping import mapping_problems, propose_mapping
from core.datasets._import_problems import Unreadable, problem
from core.datasets._limits import DEFAULT_LIMITS, ImportLimits, size_text
from core.records import (
    ColumnMapping,
    DatasetFormat,
    DatasetItem,
    ImportProblem,
    ImportReport,
    ItemValues,
)

if TYPE_CHECKING:  # the readers and the columns (pandas, pyarrow) are imported on first use:
    # importing this module (the CLI's `experiments`, `export`) loads neither
    from core.datasets._dataset_table import Table
    from core.datasets._mapped_columns import MappedColumns

__all__ = [
    "DEFAULT_LIMITS",
    "DEFAULT_SIZE_LIMIT_BYTES",
    "ITEM_CHUNK",
    "SUPPORTED_EXTENSIONS",
    "ImportLimits",
    "MappedUpload",
    "ParsedUpload",
    "dataset_fingerprint",
    "propose_mapping",
    "read_dataset",
    "read_upload",
    "release_unused_memory",
]

logger = logging.getLogger(__name__)

DEFAULT_SIZE_LIMIT_BYTES = DEFAULT_LIMITS.file_bytes

ITEM_CHUNK = 5_000
"""Items built at a time when a dataset is stored."""

SUPPORTED_EXTENSIONS: dict[str, DatasetFormat] = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "json",
    ".xlsx": "xlsx",
    ".parquet": "parquet",
}

_READERS: dict[DatasetFormat, tuple[str, str]] = {
    "csv": ("_csv_reader", "read_csv"),
    "tsv": ("_csv_reader", "read_tsv"),
    "jsonl": ("_json_readers", "read_jsonl"),
    "json": ("_json_readers", "read_json"),
    "xlsx": ("_binary_readers", "read_xlsx"),
    "parquet": ("_binary_readers", "read_parquet"),
}
"""Each format's reader: its module of core.datasets and its name there."""


def _reader(fmt: DatasetFormat) -> Callable[[bytes, ImportLimits], Table]:
    module, name = _READERS[fmt]
    found: Callable[[bytes, ImportLimits], Table] = getattr(
        importlib.import_module(f"core.datasets.{module}"), name
    )
    return found


# ---- 1. read ----


def read_upload(
    file_name: str,
    data: bytes,
    size_limit_bytes: int | None = None,
    *,
    limits: ImportLimits = DEFAULT_LIMITS,
) -> ParsedUpload:
    """Parse a file once (the format comes from its extension), within `limits`
    (`size_limit_bytes`, when given, replaces their file size); what cannot be read is in the
    result's `problems`, never raised."""
    limit = limits.file_bytes if size_limit_bytes is None else size_limit_bytes
    if len(data) > limit:
        message = f"The file is {size_text(len(data))}, over the size limit of {size_text(limit)}"
        return ParsedUpload(file_name, problems=(problem("file_too_large", message),))
    fmt = SUPPORTED_EXTENSIONS.get(PurePath(file_name).suffix.lower())
    if fmt is None:
        return ParsedUpload(file_name, problems=(_unknown_format(file_name),))
    try:
        table = _reader(fmt)(data, limits)
    except Unreadable as unreadable:
        return ParsedUpload(file_name, fmt, problems=(unreadable.problem,))
    except Exception as error:  # RecursionError and MemoryError included
        # A reader's own checks should have caught it; say what it was rather than crash (a
        # hostile file must never show a traceback), and log where for whoever runs the app.
        logger.warning("Reading %r failed unexpectedly", file_name, exc_info=True)
        return ParsedUpload(file_name, fmt, problems=(_unexpected(fmt, error),))
    finally:
        if len(data) >= _RELEASE_FROM_BYTES:
            _release_parse_memory()
    # 2. columns
    return ParsedUpload(file_name, fmt, table, proposed_mapping=propose_mapping(table.columns))


@dataclass(frozen=True, eq=False)
class ParsedUpload:
    """A file read once: its table and proposed mapping, or why it could not be read.

    `map` previews or imports it under any mapping without reading the file again.
    """

    file_name: str
    """The file's name as given (its extension chose the format)."""
    format: DatasetFormat | None = None
    """The format read; None when the extension is unknown or the file too large."""
    table: Table | None = None
    """The parsed values; None when the file could not be read at all."""
    problems: tuple[ImportProblem, ...] = ()
    """Why the file could not be read (then there is no table)."""
    proposed_mapping: ColumnMapping | None = None
    """The mapping detected from the column names, if input and output columns were found."""

    @property
    def columns(self) -> list[str]:
        """Column names in file order (none when the file could not be read)."""
        return list(self.table.columns) if self.table is not None else []

    @property
    def row_count(self) -> int:
        return self.table.row_count if self.table is not None else 0

    def map(self, mapping: ColumnMapping | None = None) -> MappedUpload:
        """Steps 3 to 6 under `mapping` (the proposed one when None): the report, with the items
        when it has no problem."""
        if self.table is None:
            return MappedUpload(_report(self, problems=list(self.problems)))
        table = self.table
        # 3. mapping (parse problems first: a malformed file is not worth mapping)
        used = mapping or self.proposed_mapping
        problems = list(table.problems) or mapping_problems(
            table.columns, table.field_word, mapping, used
        )
        if not problems and table.row_count == 0:
            problems = [problem("no_rows", "The file has no data rows")]
        if problems:
            return MappedUpload(_report(self, used, problems=problems))
        assert used is not None  # no mapping problem means there is a mapping
        from core.datasets._fingerprint import start_fingerprint
        from core.datasets._mapped_columns import map_columns
        from core.datasets._row_checks import check_rows

        # 5. the items' values, and 6. their fingerprint, hashed while 4. the rows are checked
        # (both the hash and pyarrow's checks run without the GIL)
        columns = map_columns(table, used)
        stop = threading.Event()
        hashing = start_fingerprint(columns, stop)
        problems = check_rows(table, used, columns)
        if table.row_count >= _RELEASE_FROM_ROWS:
            _release_parse_memory()  # the checks' temporaries
        if problems:
            stop.set()  # nothing is imported: the hash is not needed
            return MappedUpload(_report(self, used, problems=problems))
        return MappedUpload(_report(self, used, fingerprint=hashing.result()), columns)


@dataclass(frozen=True, eq=False)
class MappedUpload:
    """A parsed upload under one mapping: its report and, when the report has no problem, the
    items' values."""

    report: ImportReport
    """Columns, mappings, preview, problems and fingerprint."""
    columns: MappedColumns | None = None
    """The items' values column by column; None when the report has problems."""

    def items(self) -> list[DatasetItem]:
        """The items, built at each call; empty whenever there are problems. For a large file,
        `item_chunks` keeps only a few thousand at a time."""
        return [item for chunk in self.item_chunks() for item in chunk]

    def item_chunks(self, size: int = ITEM_CHUNK) -> Iterator[list[DatasetItem]]:
        """The items in row order, `size` at a time, each chunk built when asked for."""
        if self.columns is not None:
            yield from self.columns.chunks(size)

    def value_chunks(self, size: int = ITEM_CHUNK) -> Iterator[list[ItemValues]]:
        """The items' values as plain tuples (`ItemValues`), `size` at a time: what the store
        writes, without a `DatasetItem` per row (1 M rows imported at the speed of the rows)."""
        if self.columns is not None:
            yield from self.columns.value_chunks(size)


def read_dataset(
    file_name: str,
    data: bytes,
    mapping: ColumnMapping | None = None,
    size_limit_bytes: int | None = None,
    *,
    limits: ImportLimits = DEFAULT_LIMITS,
) -> ImportReport:
    """The report of a file under `mapping` (the proposed one when None): `read_upload` then
    `map`, for a caller that reads the file for one mapping only."""
    return read_upload(file_name, data, size_limit_bytes, limits=limits).map(mapping).report


def dataset_fingerprint(items: Sequence[DatasetItem]) -> str:
    """BLAKE3 of the items' canonical form: the same content always gives the same value (the
    same value the report of the file those items came from has)."""
    from core.datasets._fingerprint import columns_fingerprint
    from core.datasets._mapped_columns import MappedColumns

    return columns_fingerprint(MappedColumns.from_items(items))


# ---- the report ----


def _report(
    parsed: ParsedUpload,
    used: ColumnMapping | None = None,
    *,
    problems: list[ImportProblem] | None = None,
    fingerprint: str | None = None,
) -> ImportReport:
    table = parsed.table
    if table is None:
        return ImportReport(
            file_name=parsed.file_name, format=parsed.format, problems=problems or []
        )
    return ImportReport(
        file_name=parsed.file_name,
        format=parsed.format,
        row_count=table.row_count,
        columns=list(table.columns),
        proposed_mapping=parsed.proposed_mapping,
        mapping_used=used,
        preview=table.preview(),
        problems=problems or [],
        fingerprint=fingerprint,
    )


def _unknown_format(file_name: str) -> ImportProblem:
    suffix = PurePath(file_name).suffix
    supported = ", ".join(SUPPORTED_EXTENSIONS)
    what = f"type {suffix!r}" if suffix else "type (the name has no extension)"
    hint = "; save the workbook as .xlsx" if suffix.lower() == ".xls" else ""
    return problem(
        "unknown_format",
        f"Unknown file {what} for {file_name!r}: supported are {supported}{hint}",
    )


_RELEASE_FROM_BYTES = 32 * 1024 * 1024
_RELEASE_FROM_ROWS = 500_000
"""Below these, what the parse and the checks freed stays with pyarrow: handing it back costs
the next parse its page faults (a few milliseconds), for memory that does not matter."""


def release_unused_memory() -> None:
    """Hand back to the system what parsed files used and no longer use (pyarrow keeps freed
    memory for reuse): for a caller that goes on to other work, such as an experiment, once a
    file is stored."""
    _release_parse_memory()


def _release_parse_memory() -> None:
    """Hand back to the system what the parse (or the checks) used and freed: pyarrow's
    allocator keeps it for reuse otherwise, and the Python objects made next (the items) would
    stack on it."""
    import pyarrow as pa

    pa.default_memory_pool().release_unused()


def _unexpected(fmt: DatasetFormat, error: BaseException) -> ImportProblem:
    known: dict[type[BaseException], str] = {
        RecursionError: "values nested too deeply",
        MemoryError: "more data than fits in memory",
    }
    what = known.get(type(error), f"{type(error).__name__}: {' '.join(str(error).split())[:200]}")
    return problem("unreadable_file", f"The file cannot be read as {fmt.upper()}: {what}")
