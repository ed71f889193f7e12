"""Storing parsed uploads as datasets, whole or nothing (docs/datasets.md).

The store is reached through `DatasetShelf`, a protocol it satisfies, so that dataset import and
storage never import each other.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from pathlib import Path, PurePath
from typing import Protocol

from core.datasets.upload import SUPPORTED_EXTENSIONS, ParsedUpload, read_upload
from core.records import ColumnMapping, DatasetInfo, DatasetItem, ImportReport, ItemValues

__all__ = ["DatasetImportError", "DatasetShelf", "import_parsed", "import_samples"]

logger = logging.getLogger(__name__)


class DatasetImportError(ValueError):
    """A file that cannot be imported; `report.problems` says why and where."""

    def __init__(self, report: ImportReport) -> None:
        self.report = report
        problems = report.problems
        first = problems[0].message if problems else "unknown problem"
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        super().__init__(f"{report.file_name}: {first}{more}")


class DatasetShelf(Protocol):
    """Where datasets are kept (the store)."""

    def find_dataset(self, fingerprint: str) -> DatasetInfo | None: ...

    def save_dataset(
        self,
        *,
        name: str,
        file_name: str,
        format: str,
        fingerprint: str,
        columns: Sequence[str],
        mapping: ColumnMapping,
        items: Iterable[DatasetItem] | Iterable[Sequence[DatasetItem | ItemValues]],
    ) -> DatasetInfo:
        """Store the items (given one by one, or in chunks of items or of their values as
        `ItemValues` tuples; consumed once), whole or nothing."""
        ...


def import_parsed(
    shelf: DatasetShelf,
    parsed: ParsedUpload,
    mapping: ColumnMapping | None = None,
    *,
    name: str | None = None,
    reuse_existing: bool = False,
) -> DatasetInfo:
    """Store a parsed file as a new dataset under `mapping` (the proposed one when None).

    Raises DatasetImportError listing the problems (nothing is stored then). With
    `reuse_existing`, a stored dataset with the same content fingerprint is returned instead of
    a copy.
    """
    mapped = parsed.map(mapping)
    report = mapped.report
    if not report.ok or report.fingerprint is None or report.mapping_used is None:
        raise DatasetImportError(report)
    if reuse_existing:
        existing = shelf.find_dataset(report.fingerprint)
        if existing is not None:
            return existing
    file_name = parsed.file_name
    return shelf.save_dataset(
        name=(name or "").strip() or PurePath(file_name).stem or file_name,
        file_name=file_name,
        format=report.format or "",
        fingerprint=report.fingerprint,
        columns=report.columns,
        mapping=report.mapping_used,
        items=mapped.value_chunks(),  # a chunk at a time, as they are inserted
    )


def import_samples(shelf: DatasetShelf, folder: Path) -> list[DatasetInfo]:
    """Each supported file of `folder` not stored yet (by fingerprint), imported; the sample
    datasets. A sample that cannot be read is logged and skipped."""
    if not folder.is_dir():
        return []
    found = []
    for path in sorted(folder.iterdir()):
        if path.suffix.lower() not in SUPPORTED_EXTENSIONS or not path.is_file():
            continue
        try:
            parsed = read_upload(path.name, path.read_bytes())
            found.append(import_parsed(shelf, parsed, reuse_existing=True))
        except DatasetImportError as error:
            logger.warning("Sample dataset %s was not imported: %s", path, error)
    return found
