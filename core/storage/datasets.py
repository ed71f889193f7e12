"""The store's datasets: a dataset and its items written whole, read whole, by id or by page."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from sqlalchemy import (
    Integer,
    bindparam,
    delete,
    func,
    insert,
    select,
    update,
)
from sqlmodel import col

from core.records import (
    ColumnMapping,
    DatasetInfo,
    DatasetItem,
    ItemValues,
)
from core.storage import result_rows, reviews, thresholds, totals
from core.storage._rows import (
    _ITEM_PAGE,
    _KEY_PAGE,
    _batches,
    _compiled_rows,
    _dataset_info,
    _driver_rows,
    _flat,
    _item_rows,
    _item_stream,
    _items,
    _items_query,
    _now,
)
from core.storage.database import Database, NotFoundError
from core.storage.search_index import drop_postgres_index
from core.storage.tables import DatasetItemRow, DatasetRow, ExperimentRow, ScoreRow

__all__ = ["DatasetStore"]


class DatasetStore:
    """`store.datasets`: the datasets and their items."""

    def __init__(self, database: Database) -> None:
        self._db = database

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
        """Store a dataset and its items in one transaction (whole or nothing).

        `items`: the items, or chunks of them (lists, e.g. `MappedUpload.item_chunks()`) or
        of their values (`ItemValues` tuples, `MappedUpload.value_chunks()`: no `DatasetItem`
        per row), consumed once and inserted a batch at a time: never all held at once. Values
        that are not an item's (an id that is not text) raise ValueError naming the row,
        storing nothing.
        """
        dataset_id = uuid.uuid4().hex
        row = {
            "id": dataset_id,
            "name": name,
            "file_name": file_name,
            "format": format,
            "fingerprint": fingerprint,
            "item_count": 0,
            "columns": list(columns),
            "mapping": mapping.model_dump(mode="json", by_alias=True),
            "created_at": _now(),
        }
        with self._db.transaction("save the dataset") as connection:
            connection.execute(insert(DatasetRow), [row])
            count = result_rows.insert_item_batches(connection, _item_batches(dataset_id, items))
            connection.execute(
                update(DatasetRow.__table__)
                .where(DatasetRow.__table__.c.id == dataset_id)
                .values(item_count=count)
            )
        self._db.refresh_statistics("dataset_items", count)
        return _dataset_info({**row, "item_count": count})

    def list_datasets(self) -> list[DatasetInfo]:
        """Every dataset, newest first."""
        query = select(DatasetRow.__table__).order_by(col(DatasetRow.created_at).desc())
        with self._db.engine.connect() as connection:
            return [_dataset_info(r._mapping) for r in connection.execute(query)]

    def get_dataset(self, dataset_id: str) -> DatasetInfo:
        """One dataset; raises NotFoundError."""
        query = select(DatasetRow.__table__).where(col(DatasetRow.id) == dataset_id)
        with self._db.engine.connect() as connection:
            row = connection.execute(query).first()
        if row is None:
            raise NotFoundError(f"No dataset with id {dataset_id!r}")
        return _dataset_info(row._mapping)

    def find_dataset(self, fingerprint: str) -> DatasetInfo | None:
        """The newest dataset with this content fingerprint, if any."""
        query = (
            select(DatasetRow.__table__)
            .where(col(DatasetRow.fingerprint) == fingerprint)
            .order_by(col(DatasetRow.created_at).desc())
        )
        with self._db.engine.connect() as connection:
            row = connection.execute(query).first()
        return None if row is None else _dataset_info(row._mapping)

    def dataset_items(self, dataset_id: str, limit: int | None = None) -> list[DatasetItem]:
        """A dataset's items in file order (the first `limit` only, when given); raises
        NotFoundError. A large dataset is better read with `iter_dataset_items`."""
        self.get_dataset(dataset_id)
        sqlite = self._db.engine.dialect.name == "sqlite"
        query = _items_query(dataset_id, 0, limit, as_text=True, cast=not sqlite)
        with self._db.engine.connect() as connection:
            # The driver's tuples, their JSON decoded by orjson (`_item_pages`): through
            # SQLAlchemy's rows and JSON type, Compare's read of 10,000 items took 0.33 s.
            rows = _driver_rows(connection, query)
        return list(_item_stream(rows, decode=True))

    def iter_dataset_items(
        self, dataset_id: str, page_size: int = _ITEM_PAGE
    ) -> Iterator[DatasetItem]:
        """A dataset's items in file order, read `page_size` at a time (one short query per
        page, keyed on the position: no connection or transaction stays open between pages).
        Raises NotFoundError at once for an unknown dataset."""
        self.get_dataset(dataset_id)
        return self._item_pages(dataset_id, page_size)

    def iter_unfinished_items(
        self,
        experiment_id: str,
        dataset_id: str,
        scorer_count: int,
        page_size: int = _ITEM_PAGE,
    ) -> tuple[int, Iterator[DatasetItem]]:
        """The items of an experiment's dataset (`dataset_id`) with fewer than `scorer_count`
        stored results (those a resume must run again), in file order, read a page at a time
        as `iter_dataset_items` does; with how many there are."""
        results, items = ScoreRow.__table__, DatasetItemRow.__table__
        stored = (
            select(func.count())
            .where(results.c.experiment_id == experiment_id, results.c.item_id == items.c.item_id)
            .scalar_subquery()
        )
        unfinished = stored < scorer_count
        count = (
            select(func.count())
            .select_from(items)
            .where(items.c.dataset_id == dataset_id, unfinished)
        )
        with self._db.engine.connect() as connection:
            total = int(connection.execute(count).scalar_one())
        return total, self._item_pages(dataset_id, page_size, unfinished)

    def _item_pages(
        self, dataset_id: str, page_size: int, where: Any = None
    ) -> Iterator[DatasetItem]:
        position = 0
        # The JSON columns come as their text, decoded here by orjson: SQLite gives it as it
        # is (SQLAlchemy's json.loads per column cost a tenth of a stored run), PostgreSQL
        # casts it (psycopg decoding them with json.loads: 9.5 us per item read instead of 2.2).
        sqlite = self._db.engine.dialect.name == "sqlite"
        first = bindparam("first_position", type_=Integer)
        query = _items_query(dataset_id, first, page_size, as_text=True, cast=not sqlite)
        if where is not None:
            query = query.where(where)
        # Compiled once, each page binding only where it starts.
        statement = query.compile(dialect=self._db.engine.dialect)
        while True:
            with self._db.engine.connect() as connection:
                # The driver's own rows (plain tuples): SQLAlchemy's result rows cost more
                # than the items built from them.
                rows = _compiled_rows(connection, statement, {"first_position": position})
            yield from _item_stream(rows, decode=True)
            if len(rows) < page_size:
                return
            position = rows[-1][0] + 1  # the first column: the position

    def dataset_items_by_id(self, dataset_id: str, item_ids: Iterable[str]) -> list[DatasetItem]:
        """The items of a dataset with these ids, in file order (unknown ids are left out);
        raises NotFoundError for an unknown dataset."""
        self.get_dataset(dataset_id)
        table = DatasetItemRow.__table__
        wanted = list(dict.fromkeys(item_ids))
        rows: list[Any] = []
        with self._db.engine.connect() as connection:
            for start in range(0, len(wanted), _KEY_PAGE):
                query = _items_query(dataset_id, 0, None).where(
                    table.c.item_id.in_(wanted[start : start + _KEY_PAGE])
                )
                rows += connection.execute(query).all()
        rows.sort(key=lambda row: row.position)
        return _items(rows)

    def delete_dataset(self, dataset_id: str) -> None:
        """Remove a dataset, its items, and its experiments with their results; refused
        (ExperimentConfigError) while some process runs one of its experiments."""
        experiments = select(col(ExperimentRow.id)).where(
            col(ExperimentRow.dataset_id) == dataset_id
        )
        with self._db.transaction("delete the dataset") as connection:
            result_rows.lock_experiments(connection, col(ExperimentRow.dataset_id) == dataset_id)
            self._db.refuse_live_runs(connection, "dataset", dataset_id=dataset_id)
            reviews.delete_reviews_of(connection, experiments)
            thresholds.delete_thresholds_of(connection, experiments)
            totals.forget(connection, experiments)
            connection.execute(delete(ScoreRow).where(col(ScoreRow.experiment_id).in_(experiments)))
            connection.execute(
                delete(ExperimentRow).where(col(ExperimentRow.dataset_id) == dataset_id)
            )
            connection.execute(
                delete(DatasetItemRow).where(col(DatasetItemRow.dataset_id) == dataset_id)
            )
            connection.execute(delete(DatasetRow).where(col(DatasetRow.id) == dataset_id))
            drop_postgres_index(connection, dataset_id)

    def dataset_item(self, dataset_id: str, item_id: str) -> DatasetItem:
        """One item of a dataset by its id; raises NotFoundError."""
        table = DatasetItemRow.__table__
        query = _items_query(dataset_id, 0, 1).where(table.c.item_id == item_id)
        with self._db.engine.connect() as connection:
            found = _items(connection.execute(query))
        if not found:
            raise NotFoundError(f"No item {item_id!r} in dataset {dataset_id!r}")
        return found[0]


def _item_batches(
    dataset_id: str, items: Iterable[DatasetItem] | Iterable[Sequence[DatasetItem | ItemValues]]
) -> Iterator[list[tuple[Any, ...]]]:
    """The items' rows a batch at a time, each made when the writer asks for it."""
    position = 0
    for batch in _batches(_flat(items)):
        yield _item_rows(dataset_id, position, batch)
        position += len(batch)
