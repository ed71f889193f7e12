"""Dataset import: CSV, TSV, JSONL, JSON (an array of objects), Excel (.xlsx) and Parquet files
into `DatasetItem`s, with the column mapping detected or given, and every problem reported with
its place.

Nothing is half-imported: a report with problems has no items. Large CSV files are checked with
vectorised pandas operations, so validation costs about as much as parsing.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Sequence
from pathlib import PurePath
from typing import Any

import pandas as pd

from core.experiment_records import (
    ColumnMapping,
    DatasetFormat,
    DatasetItem,
    ImportProblem,
    ImportReport,
)
from core.experiments._csv_reader import _read_csv, _read_tsv
from core.experiments._dataset_items import _item_columns, _ItemColumns, _items, _mapped_ids
from core.experiments._dataset_table import MAX_LISTED_PER_KIND as MAX_LISTED_PER_KIND
from core.experiments._dataset_table import _problem, _Table, _Unreadable
from core.experiments._dataset_values import Column as Column
from core.experiments._dataset_values import _plain
from core.experiments._fingerprint import _fingerprint, _start_fingerprint
from core.experiments._readers import _read_json, _read_jsonl, _read_parquet, _read_xlsx
from core.experiments._row_checks import _check_rows

__all__ = [
    "DEFAULT_SIZE_LIMIT_BYTES",
    "SUPPORTED_EXTENSIONS",
    "dataset_fingerprint",
    "propose_mapping",
    "read_dataset",
]

DEFAULT_SIZE_LIMIT_BYTES = 200 * 1024 * 1024

SUPPORTED_EXTENSIONS: dict[str, DatasetFormat] = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "json",
    ".xlsx": "xlsx",
    ".parquet": "parquet",
}

PREVIEW_ROWS = 20

# Column names recognised for each role, in order of preference (compared case-insensitively,
# ignoring spaces, hyphens and underscores).
ROLE_CANDIDATES: dict[str, tuple[str, ...]] = {
    "id": ("id", "item_id", "itemId"),
    "input": ("input", "question", "prompt", "query"),
    "output": ("output", "response", "answer", "completion"),
    "ground_truth": (
        "groundTruth",
        "ground_truth",
        "expected",
        "reference",
        "target",
        "__expected",
    ),
}

_ROLE_LABELS = {"id": "id", "input": "input", "output": "output", "ground_truth": "ground truth"}


_READERS: dict[DatasetFormat, Callable[[bytes], _Table]] = {
    "csv": _read_csv,
    "tsv": _read_tsv,
    "jsonl": _read_jsonl,
    "json": _read_json,
    "xlsx": _read_xlsx,
    "parquet": _read_parquet,
}


# ---- public functions ----


def propose_mapping(columns: Sequence[str]) -> ColumnMapping | None:
    """The mapping suggested by the column names, or None without an input and an output.

    Every column that plays no role is kept as metadata.
    """
    by_key: dict[str, str] = {}
    for column in columns:
        by_key.setdefault(_name_key(column), column)
    chosen: dict[str, str | None] = {}
    for role, candidates in ROLE_CANDIDATES.items():
        chosen[role] = next(
            (by_key[_name_key(c)] for c in candidates if _name_key(c) in by_key), None
        )
    if chosen["input"] is None or chosen["output"] is None:
        return None
    used = {name for name in chosen.values() if name is not None}
    return ColumnMapping(
        id=chosen["id"],
        input=chosen["input"],
        output=chosen["output"],
        ground_truth=chosen["ground_truth"],
        metadata=[c for c in columns if c not in used],
    )


def read_dataset(
    file_name: str,
    data: bytes,
    mapping: ColumnMapping | None = None,
    size_limit_bytes: int = DEFAULT_SIZE_LIMIT_BYTES,
) -> ImportReport:
    """Read a dataset file into items, or report everything wrong with it.

    The format comes from the extension. With no `mapping`, the proposed one is used.
    """
    report = {"file_name": file_name}
    if len(data) > size_limit_bytes:
        message = (
            f"The file is {_size(len(data))}, over the size limit of {_size(size_limit_bytes)}"
        )
        return ImportReport(**report, problems=[_problem("file_too_large", message)])
    fmt = SUPPORTED_EXTENSIONS.get(PurePath(file_name).suffix.lower())
    if fmt is None:
        return ImportReport(**report, problems=[_unknown_format(file_name)])
    try:
        table = _READERS[fmt](data)
    except _Unreadable as unreadable:
        return ImportReport(**report, format=fmt, problems=[unreadable.problem])
    return _validate(file_name, fmt, table, mapping)


def dataset_fingerprint(items: Sequence[DatasetItem]) -> str:
    """BLAKE3 of the items' canonical form: the same content always gives the same value (the
    same value `read_dataset` gives the file those items came from)."""
    names = list(dict.fromkeys(name for item in items for name in item.metadata))
    return _fingerprint(
        _ItemColumns(
            ids=[i.id for i in items],
            inputs=[i.input for i in items],
            outputs=[i.output for i in items],
            truths=[i.ground_truth for i in items],
            metadata={n: [i.metadata.get(n) for i in items] for n in names},
        )
    )


# ---- validation and mapping ----


def _validate(
    file_name: str, fmt: DatasetFormat, table: _Table, mapping: ColumnMapping | None
) -> ImportReport:
    proposed = propose_mapping(table.columns)
    used = mapping or proposed
    problems = list(table.problems)
    if not table.problems:
        problems += _mapping_problems(table, mapping, used)
    report = {
        "file_name": file_name,
        "format": fmt,
        "row_count": len(table.frame),
        "columns": table.columns,
        "proposed_mapping": proposed,
        "mapping_used": used,
    }
    if not problems and len(table.frame) == 0:
        problems.append(_problem("no_rows", "The file has no data rows"))
    if problems:
        return ImportReport(**report, preview=_preview(table.frame), problems=problems)
    assert used is not None  # no mapping problem means there is a mapping
    ids = _mapped_ids(table.frame, used)
    columns = _item_columns(table, used, ids)
    # The fingerprint is hashed while the rows are checked: both the hash and pyarrow's checks
    # run without the GIL.
    stop = threading.Event()
    fingerprint = _start_fingerprint(columns, stop)
    report["preview"] = _preview(table.frame)
    problems = _check_rows(table, used, ids)
    if problems:
        stop.set()  # nothing is imported: the hash is not needed
        return ImportReport(**report, problems=problems)
    report = ImportReport(**report, fingerprint=fingerprint.result())
    return report.with_items(lambda: _items(columns))


def _mapping_problems(
    table: _Table, given: ColumnMapping | None, used: ColumnMapping | None
) -> list[ImportProblem]:
    word, columns = table.field_word, table.columns
    listed = ", ".join(repr(c) for c in columns) or "none"
    if used is None:
        problems = []
        for role in ("input", "output"):
            if not any(
                _name_key(c) in {_name_key(n) for n in ROLE_CANDIDATES[role]} for c in columns
            ):
                names = ", ".join(ROLE_CANDIDATES[role])
                problems.append(
                    _problem(
                        f"no_{role}_column",
                        f"No {role} {word} found (looked for {names}); the file's {word}s are "
                        f"{listed}: choose the mapping by hand",
                    )
                )
        return problems
    if given is None:
        return []
    present = set(columns)
    problems = []
    wanted = [(r, getattr(given, r)) for r in ("id", "input", "output", "ground_truth")]
    wanted += [("metadata", c) for c in given.metadata]
    for role, column in wanted:
        if column is not None and column not in present:
            what = "a metadata" if role == "metadata" else f"the {_ROLE_LABELS[role]}"
            problems.append(
                _problem(
                    "missing_column",
                    f"The mapping names {word} {column!r} as {what} {word}, but the file has no "
                    f"such {word} (its {word}s are {listed})",
                    column=column,
                )
            )
    return problems


def _preview(frame: pd.DataFrame) -> list[dict[str, Any]]:
    head = frame.head(PREVIEW_ROWS)
    columns = [str(c) for c in head.columns]
    return [
        dict(zip(columns, (_plain(v) for v in row), strict=True))
        for row in head.itertuples(index=False, name=None)
    ]


# ---- messages ----


def _unknown_format(file_name: str) -> ImportProblem:
    suffix = PurePath(file_name).suffix
    supported = ", ".join(SUPPORTED_EXTENSIONS)
    what = f"type {suffix!r}" if suffix else "type (the name has no extension)"
    hint = "; save the workbook as .xlsx" if suffix.lower() == ".xls" else ""
    return _problem(
        "unknown_format",
        f"Unknown file {what} for {file_name!r}: supported are {supported}{hint}",
    )


def _name_key(name: str) -> str:
    return re.sub(r"[\s_\-]+", "", str(name)).lower()


def _size(n: int) -> str:
    if n < 1024:
        return f"{n} bytes"
    for unit, power in (("GB", 3), ("MB", 2), ("KB", 1)):
        if n >= 1024**power:
            return f"{n / 1024**power:.1f} {unit}".replace(".0 ", " ")
    return f"{n} bytes"
