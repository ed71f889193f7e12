"""Where an import from a Mastra store lands in scorelab's store (docs/mastra.md).

Imported datasets and experiments keep ids derived from Mastra's (the translation in
`core/exchange/mastra_import.py` makes them), so importing the same store again finds them:
`merge_dataset` adds only the items not stored yet, `merge_experiment` creates the experiment
once and then refreshes its status and counts, and `add_scored_rows` adds the scores, skipping
every (item, scorer) already stored. Each call is one
transaction: whole or nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import func, insert, select, update

from core.records import ColumnMapping, DatasetInfo, DatasetItem, ExperimentStatus, ItemValues
from core.storage import result_rows
from core.storage._rows import _item_rows
from core.storage.store import Store
from core.storage.tables import DatasetItemRow, DatasetRow, ExperimentRow, ScoreRow

__all__ = ["add_scored_rows", "merge_dataset", "merge_experiment", "set_run_counts"]

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
    with store.database.transaction(f"store the Mastra dataset {name!r}") as connection:
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
            batch: list[DatasetItem | ItemValues] = list(new[start : start + _BATCH])
            result_rows.insert_items(connection, _item_rows(dataset_id, position + 1, batch))
            position += len(batch)
        merged_columns = list(dict.fromkeys([*stored_columns, *columns]))
        merged_mapping = mapping.model_copy(
            update={
                "metadata": [
                    c for c in merged_columns if c not in {"id", "input", "output", "ground_truth"}
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
    with store.database.transaction(f"store the Mastra experiment {name!r}") as connection:
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


def add_scored_rows(store: Store, experiment_id: str, rows: Iterable[dict[str, Any]]) -> int:
    """Insert imported scores into `scorer_results` in one transaction, a batch at a time,
    skipping every (item, scorer) already stored (the first of two given for one pair wins);
    returns how many were added.

    Each row: `item_id`, `scorer_id`, `score`, `reason_json` and `result_json`, the reason and
    the result as JSON text, passed to the driver as they are (an import decodes and encodes no
    message twice; bench/mastra_import.py)."""
    postgres = store.engine.dialect.name == "postgresql"
    mark = "%s" if postgres else "?"
    json_mark = "%s::json" if postgres else "?"
    columns = [
        "experiment_id",
        "item_id",
        "scorer_id",
        "score",
        "reason",
        "result",
        *_SCORE_DEFAULTS,
    ]
    values = [mark, mark, mark, mark, json_mark, json_mark, *([mark] * len(_SCORE_DEFAULTS))]
    sql = (
        f"INSERT INTO {ScoreRow.__tablename__} ({', '.join(columns)}) VALUES "
        f"({', '.join(values)}) ON CONFLICT (experiment_id, item_id, scorer_id) DO NOTHING"
    )
    defaults = tuple(_SCORE_DEFAULTS.values())
    before = store.result_count(experiment_id)
    with store.database.transaction("store the imported scores") as connection:
        # No foreign key checks it on PostgreSQL (revision 0017): refused here, once.
        result_rows.refuse_unknown_experiments(connection, [experiment_id])
        if not postgres:  # the indexes of 100,000 rows stay in memory while they grow
            connection.exec_driver_sql("PRAGMA cache_size = -131072")
        batch: list[tuple[Any, ...]] = []
        for row in rows:
            batch.append(
                (
                    experiment_id,
                    row["item_id"],
                    row["scorer_id"],
                    row["score"],
                    row["reason_json"],
                    row["result_json"],
                    *defaults,
                )
            )
            if len(batch) >= _BATCH:
                connection.exec_driver_sql(sql, batch)
                batch = []
        if batch:
            connection.exec_driver_sql(sql, batch)
    return store.result_count(experiment_id) - before


_SCORE_DEFAULTS: dict[str, Any] = {
    "duration_ms": 0,
    "judge_calls": 0,
    "judge_attempts": 0,
    "cached_calls": 0,
    "input_tokens": None,
    "output_tokens": None,
    "total_tokens": None,
    "reasoning_tokens": None,
    "cached_input_tokens": None,
    "cache_creation_input_tokens": None,
}
