"""The dataset file of `scorelab run`: read (a bar of the bytes read), parsed once and stored
(or found stored), its columns mapped by the --*-column options, its label column checked."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from core.cli._errors import CliError
from core.cli._progress import Bar
from core.records import ColumnMapping, DatasetInfo, DatasetItem, ImportReport

if TYPE_CHECKING:
    from core.service import DatasetImportError, Service

__all__ = ["check_label_column", "import_file"]

_CHUNK = 1 << 20
"""Bytes read at a time, so that the bar moves."""


def import_file(arguments: argparse.Namespace, service: Service, *, show: bool) -> DatasetInfo:
    """The file read, parsed once and stored (or found stored); its bytes and parsed table are
    dropped on return, before the experiment runs."""
    from core.service import DatasetImportError

    name: str = arguments.data
    data = _read_file(name, show=show)
    with Bar("parsing", unit=None, show=show):
        parsed = service.read_upload(Path(name).name, data)
    del data
    mapping = _mapping(arguments, lambda: service.preview(parsed))
    try:
        with Bar("storing", unit=None, show=show):
            return service.import_parsed(parsed, mapping, reuse_existing=True)
    except DatasetImportError as error:
        raise CliError(_import_message(name, error)) from None


def _read_file(name: str, *, show: bool) -> bytes:
    path = Path(name)
    if not path.exists():
        raise CliError(f"{name}: no such file")
    if path.is_dir():
        raise CliError(f"{name}: is a directory, not a dataset file")
    try:
        with path.open("rb") as source:
            size = path.stat().st_size
            if not show:
                return source.read()
            chunks: list[bytes] = []
            with Bar("reading", total=size, unit="bytes", show=show) as bar:
                read = 0
                while chunk := source.read(_CHUNK):
                    chunks.append(chunk)
                    read += len(chunk)
                    bar.update(read)
            return b"".join(chunks)
    except OSError as error:
        raise CliError(f"{name}: cannot read it ({error.strerror or error})") from None


def _import_message(name: str, error: DatasetImportError) -> str:
    problems = error.report.problems
    more = len(problems) - 1
    suffix = f" (and {more} more problem{'s' * (more != 1)})" if more > 0 else ""
    return f"{name}: {problems[0].message}{suffix}"


def _mapping(
    arguments: argparse.Namespace, read_preview: Callable[[], ImportReport]
) -> ColumnMapping | None:
    """The mapping from --*-column options over the detected one; None when none is given."""
    given = (
        arguments.input_column,
        arguments.output_column,
        arguments.ground_truth_column,
        arguments.id_column,
    )
    if all(value is None for value in given):
        return None
    preview = read_preview()
    proposed = preview.proposed_mapping
    input_column = _chosen(arguments.input_column, proposed.input if proposed else None)
    output_column = _chosen(arguments.output_column, proposed.output if proposed else None)
    if input_column is None or output_column is None:
        role = "input" if input_column is None else "output"
        raise CliError(f"{arguments.data}: no {role} column found; name it with --{role}-column")
    truth = _chosen(arguments.ground_truth_column, proposed.ground_truth if proposed else None)
    id_column = _chosen(arguments.id_column, proposed.id if proposed else None)
    used = {input_column, output_column, truth, id_column}
    return ColumnMapping(
        input=input_column,
        output=output_column,
        ground_truth=truth,
        id=id_column,
        metadata=[c for c in preview.columns if c not in used],
    )


def _chosen(given: str | None, proposed: str | None) -> str | None:
    return given if given is not None else proposed


def check_label_column(
    arguments: argparse.Namespace,
    dataset: DatasetInfo,
    items: list[DatasetItem],
    *,
    source: str | None = None,
) -> None:
    """Refuse, before anything runs, a label column that is not in the file, plays another
    role, or holds a value that is not a label. `source` names where the items come from in
    the messages (default: the file given, `arguments.data`)."""
    from core.service.terminal import LabelError, label_values

    column: str = arguments.label_column
    where = f"{source or arguments.data}: --label-column {column!r}"
    if column not in dataset.columns:
        raise CliError(f"{where}: no such column (columns: {', '.join(dataset.columns)})")
    mapping = dataset.mapping
    for role, label in (
        ("input", "input"),
        ("output", "output"),
        ("ground_truth", "ground-truth"),
        ("id", "id"),
    ):
        if getattr(mapping, role) == column:
            raise CliError(f"{where}: it is the {label} column; the labels must be another column")
    try:
        label_values(items, column)
    except LabelError as error:
        place = f"item {error.item_id!r} (row {error.row}): " if error.item_id else ""
        raise CliError(f"{where}: {place}{error.problem}") from None
