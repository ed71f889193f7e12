"""Records of datasets: items, column mapping, import report, stored info (docs/datasets.md)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import Field

from core.record_base import Record

__all__ = [
    "ColumnMapping",
    "DatasetFormat",
    "DatasetInfo",
    "DatasetItem",
    "ImportProblem",
    "ImportReport",
]


DatasetFormat = Literal["csv", "tsv", "jsonl", "json", "xlsx", "parquet"]

# ---- datasets ----


class DatasetItem(Record):
    """One row of a dataset: what was asked, what was answered, and what was expected."""

    id: str
    """The row's id: from the mapped id column, else its 1-based row number."""
    input: Any = None
    """What the evaluated system was asked."""
    output: Any = None
    """What it answered (the value the scorers score)."""
    ground_truth: Any = None
    """The expected answer, if the dataset has one."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    """The row's other columns, by column name."""


ItemValues = tuple[str, Any, Any, Any, dict[str, Any]]
"""A dataset item's values as a plain tuple: (id, input, output, ground truth, metadata), the
row a large import hands the store without building a `DatasetItem` per row (the same fields,
the same meaning)."""


class ColumnMapping(Record):
    """Which column of the file plays which role."""

    id: str | None = None
    """The id column; rows are numbered 1, 2, ... when None."""
    input: str
    """The input column."""
    output: str
    """The output column."""
    ground_truth: str | None = None
    """The ground-truth column, if any."""
    metadata: list[str] = Field(default_factory=list)
    """Columns kept with each item as metadata."""


class ImportProblem(Record):
    """One thing wrong with an imported file, with its place."""

    code: str
    """A stable code, e.g. `empty_output`, `malformed_row`, `duplicate_id`, `file_too_large`."""
    message: str
    """A plain sentence naming the place, e.g. "Row 17: the output (column 'answer') is empty"."""
    row: int | None = None
    """The 1-based data row (for JSONL, the line number), when the problem has one."""
    column: str | None = None
    """The column concerned, when there is one."""


class ImportReport(Record):
    """What reading a file under one mapping gave: its columns, the mappings, a preview, and its
    problems or its fingerprint. The items themselves come with it from the parsed upload
    (`core.datasets.upload.MappedUpload.items`), not in this record."""

    file_name: str
    """The file's name as given."""
    format: DatasetFormat | None = None
    """The format read (from the extension); None when unknown."""
    row_count: int = 0
    """Data rows read."""
    columns: list[str] = Field(default_factory=list)
    """Column names in file order."""
    proposed_mapping: ColumnMapping | None = None
    """The mapping detected from the column names, if input and output columns were found."""
    mapping_used: ColumnMapping | None = None
    """The mapping applied: the one given, else the proposed one."""
    problems: list[ImportProblem] = Field(default_factory=list)
    """Everything wrong; the import goes ahead only when this is empty."""
    preview: list[dict[str, Any]] = Field(default_factory=list)
    """The first rows as read (column name -> value)."""
    fingerprint: str | None = None
    """BLAKE3 of the mapped items' canonical form (the dataset's version); None with problems."""

    @property
    def ok(self) -> bool:
        """True when the file can be imported."""
        return not self.problems


class DatasetInfo(Record):
    """A stored dataset (without its items)."""

    id: str
    """The dataset's id."""
    name: str
    """Its display name."""
    file_name: str
    """The file it was imported from."""
    format: str
    """The file's format."""
    fingerprint: str
    """The content fingerprint (same items, same fingerprint)."""
    item_count: int
    """Number of items."""
    columns: list[str] = Field(default_factory=list)
    """The file's columns."""
    mapping: ColumnMapping
    """The mapping used at import."""
    created_at: datetime
    """When it was imported (UTC)."""
