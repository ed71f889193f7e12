"""The dataset desk: uploads read, previewed and stored; datasets listed, deleted; samples."""

from __future__ import annotations

from collections.abc import Iterator

from core.datasets.library import import_parsed, import_samples
from core.datasets.upload import ParsedUpload, read_upload
from core.errors import ExperimentConfigError
from core.records import ColumnMapping, DatasetInfo, DatasetItem, ImportReport
from core.service.context import DeskContext

__all__ = ["DatasetsDesk"]


class DatasetsDesk:
    """`service.datasets`: uploads read, previewed and stored; datasets listed and deleted."""

    def __init__(self, context: DeskContext) -> None:
        self._ctx = context

    def read_upload(self, file_name: str, data: bytes) -> ParsedUpload:
        """Parse a file once; `preview` and `import_parsed` then map it without reading again."""
        return read_upload(file_name, data)

    def preview(self, parsed: ParsedUpload, mapping: ColumnMapping | None = None) -> ImportReport:
        """A parsed file under `mapping` (None: the proposed one): columns, preview, problems."""
        return parsed.map(mapping).report

    def import_parsed(
        self,
        parsed: ParsedUpload,
        mapping: ColumnMapping | None = None,
        *,
        name: str | None = None,
        reuse_existing: bool = False,
    ) -> DatasetInfo:
        """Store a parsed file as a dataset (whole or nothing); raises DatasetImportError."""
        return import_parsed(
            self._ctx.store, parsed, mapping, name=name, reuse_existing=reuse_existing
        )

    def preview_import(
        self, file_name: str, data: bytes, mapping: ColumnMapping | None = None
    ) -> ImportReport:
        """Read a file without storing it: columns, proposed mapping, preview and problems."""
        return self.preview(self.read_upload(file_name, data), mapping)

    def import_dataset(
        self,
        file_name: str,
        data: bytes,
        *,
        name: str | None = None,
        mapping: ColumnMapping | None = None,
        reuse_existing: bool = False,
    ) -> DatasetInfo:
        """`read_upload`, then `import_parsed`."""
        parsed = self.read_upload(file_name, data)
        return self.import_parsed(parsed, mapping, name=name, reuse_existing=reuse_existing)

    def list_datasets(self) -> list[DatasetInfo]:
        """Every stored dataset, newest first."""
        return self._ctx.store.list_datasets()

    def get_dataset(self, dataset_id: str) -> DatasetInfo:
        """One dataset; raises NotFoundError."""
        return self._ctx.store.get_dataset(dataset_id)

    def dataset_items(self, dataset_id: str, limit: int | None = None) -> list[DatasetItem]:
        """A dataset's items in file order (the first `limit`, when given)."""
        return self._ctx.store.dataset_items(dataset_id, limit)

    def iter_dataset_items(self, dataset_id: str) -> Iterator[DatasetItem]:
        """A dataset's items in file order, read a page at a time (for a large dataset)."""
        return self._ctx.store.iter_dataset_items(dataset_id)

    def delete_dataset(self, dataset_id: str) -> None:
        """Remove a dataset with its experiments and their results (`dataset_deletion` says
        how many); refused while one of its experiments runs here."""
        ids = self._ctx.store.experiment_ids_of(dataset_id)
        if set(ids) & set(self._ctx.jobs.running()):
            raise ExperimentConfigError(
                "Cancel the dataset's running experiments before deleting it"
            )
        self._ctx.store.delete_dataset(dataset_id)
        for experiment_id in ids:
            self._ctx.jobs.forget(experiment_id)

    def ensure_sample_datasets(self) -> list[DatasetInfo]:
        """The sample datasets, each file of the samples folder imported once (by fingerprint)."""
        return import_samples(self._ctx.store, self._ctx.samples_dir)
