"""Where an import from a Mastra store lands in scorelab's store (docs/mastra.md).

Imported datasets and experiments keep ids derived from Mastra's (the translation in
`core/exchange/mastra_import.py` makes them), so importing the same store again finds them:
`merge_dataset` adds only the items not stored yet, `merge_experiment` creates the experiment
once and then refreshes its status and counts, and the scores go in through
`Store.add_results`, which skips every (item, scorer) already stored. Each call is one
transaction: whole or nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import func, insert, select, update
from sqlalchemy.exc import SQLAlchemyError

from core.experiment_records import ColumnMapping, DatasetInfo, DatasetItem, ExperimentStatus
from core.storage.store import StorageError, Store
from core.storage.tables import DatasetItemRow, DatasetRow, ExperimentRow

__all__ = ["merge_dataset", "merge_experiment"]

_BATCH = 5_000


def merge_dataset(
    store: Store,
    *,
    dataset_id: str,
    name: str,
    file_name: str,
    fingerprint: str,
    columns: Sequence[str],
    mapping: ColumnMapping,
    items: Sequence[DatasetItem],
) -> tuple[DatasetInfo, int]:
    """The dataset `dataset_id`, created when missing, with every item of `items` whose id it
    lacks appended (in the given order); returns it and how many items were added. Its columns
    become the union of the stored ones and `columns`."""
    datasets, rows = DatasetRow.__table__, DatasetItemRow.__table__
    try:
        with store.engine.begin() as connection:
            found = connection.execute(
                select(datasets.c.columns).where(datasets.c.id == dataset_id)
            ).first()
            if found is None:
                connection.execute(
                    insert(datasets),
                    [
                        {
                            "id": dataset_id,
                            "name": name,
                            "file_name": file_name,
                            "format": "mastra",
                            "fingerprint": fingerprint,
                            "item_count": 0,
                            "columns": list(columns),
                            "mapping": mapping.model_dump(mode="json", by_alias=True),
                            "created_at": datetime.now(UTC),
                        }
                    ],
                )
                stored_columns: list[str] = []
            else:
                stored_columns = list(found[0] or [])
            known = {
                str(r[0])
                for r in connection.execute(
                    select(rows.c.item_id).where(rows.c.dataset_id == dataset_id)
                )
            }
            last = connection.execute(
                select(func.max(rows.c.position)).where(rows.c.dataset_id == dataset_id)
            ).scalar_one()
            position = -1 if last is None else int(last)
            new = [item for item in items if item.id not in known]
            for start in range(0, len(new), _BATCH):
                batch = new[start : start + _BATCH]
                connection.execute(
                    insert(rows),
                    [
                        {
                            "dataset_id": dataset_id,
                            "position": position + offset,
                            "item_id": item.id,
                            "input": item.input,
                            "output": item.output,
                            "ground_truth": item.ground_truth,
                            "item_metadata": item.metadata,
                        }
                        for offset, item in enumerate(batch, start=1)
                    ],
                )
                position += len(batch)
            merged_columns = list(dict.fromkeys([*stored_columns, *columns]))
            merged_mapping = mapping.model_copy(
                update={
                    "metadata": [
                        c
                        for c in merged_columns
                        if c not in {"id", "input", "output", "ground_truth"}
                    ]
                }
            )
            connection.execute(
                update(datasets)
                .where(datasets.c.id == dataset_id)
                .values(
                    item_count=len(known) + len(new),
                    columns=merged_columns,
                    mapping=merged_mapping.model_dump(mode="json", by_alias=True),
                )
            )
    except SQLAlchemyError as error:
        raise StorageError(f"Cannot store the Mastra dataset {name!r}: {error}") from error
    return store.get_dataset(dataset_id), len(new)


def merge_experiment(
    store: Store,
    *,
    experiment_id: str,
    name: str,
    dataset_id: str,
    scorer_ids: Sequence[str],
    status: ExperimentStatus,
    failed_runs: int,
    note: str | None,
    tags: Sequence[str],
    origin: dict[str, Any],
    created_at: datetime | None,
    started_at: datetime | None,
    finished_at: datetime | None,
) -> bool:
    """The experiment `experiment_id` over `dataset_id`, created when missing (True), else its
    scorers, status, counts and times refreshed (False). `origin` (where it came from: the Mastra
    store, its ids) is kept in its settings; the run counters are what is stored plus
    `failed_runs`. Never a judge: an imported experiment cannot be resumed."""
    table = ExperimentRow.__table__
    dataset = store.get_dataset(dataset_id)
    values: dict[str, Any] = {
        "name": name,
        "dataset_id": dataset_id,
        "dataset_fingerprint": dataset.fingerprint,
        "scorers": [{"scorerId": s, "options": {}} for s in scorer_ids],
        "scorer_ids": list(scorer_ids),
        "judge_settings": {"importedFrom": origin},
        "status": status,
        "total_items": dataset.item_count,
        "total_runs": dataset.item_count * len(scorer_ids),
        "failed_runs": failed_runs,
        "started_at": started_at,
        "finished_at": finished_at,
        "heartbeat_at": finished_at or started_at,
    }
    try:
        with store.engine.begin() as connection:
            stored = connection.execute(
                select(table.c.scorer_ids).where(table.c.id == experiment_id)
            ).first()
            if stored is None:
                connection.execute(
                    insert(table),
                    [
                        {
                            **values,
                            "id": experiment_id,
                            "concurrency": 1,
                            "note": note,
                            "tags": list(tags) or None,
                            "created_at": created_at or datetime.now(UTC),
                        }
                    ],
                )
            else:
                merged = list(dict.fromkeys([*(stored[0] or []), *scorer_ids]))
                values["scorer_ids"] = merged
                values["scorers"] = [{"scorerId": s, "options": {}} for s in merged]
                values["total_runs"] = dataset.item_count * len(merged)
                connection.execute(update(table).where(table.c.id == experiment_id).values(values))
    except SQLAlchemyError as error:
        raise StorageError(f"Cannot store the Mastra experiment {name!r}: {error}") from error
    return stored is None


def set_run_counts(store: Store, experiment_id: str) -> None:
    """The experiment's done and succeeded runs set to its stored results (an import has no
    process counting them)."""
    table = ExperimentRow.__table__
    stored = store.result_count(experiment_id)
    with store.engine.begin() as connection:
        connection.execute(
            update(table)
            .where(table.c.id == experiment_id)
            .values(done_runs=stored + table.c.failed_runs, succeeded_runs=stored)
        )
