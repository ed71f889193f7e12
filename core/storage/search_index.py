"""SQLite's trigram index of a dataset's texts (revision 0015), filled by the dataset's first
text search rather than by its import: an import of a million items pays nothing for a search
nobody may run, and the first search pays once, a chunk of items per transaction, so a run
writing its results at the same time waits at most one chunk for the write lock
(docs/storage.md, Text search)."""

from __future__ import annotations

from sqlalchemy.engine import Connection, Engine

from core.storage.tables import SEARCH_DATASETS, SEARCH_ROWID_SPAN, SEARCH_TABLE

__all__ = ["INDEX_CHUNK", "index_dataset_texts"]

INDEX_CHUNK = 20_000
"""Items indexed per transaction."""

_TEXTS = "item_id, input, output, ground_truth"


def index_dataset_texts(engine: Engine, dataset_id: str, chunk: int = INDEX_CHUNK) -> bool:
    """Index the texts of the dataset's items not indexed yet; True when the whole dataset is
    (then every later change of its items is kept by the triggers), False on PostgreSQL, on a
    SQLite without FTS5's trigrams, and for an unknown dataset. Another process indexing the
    same dataset at the same time is harmless: each chunk is one transaction that starts by
    taking the write lock, then reads how far the index has got."""
    if engine.dialect.name != "sqlite":
        return False
    with engine.connect() as connection:
        state = _state(connection, dataset_id)
    if state is None:
        return False
    while not state:
        with engine.begin() as connection:
            state = _index_next_chunk(connection, dataset_id, chunk)
        if state is None:
            return False
    return True


def _state(connection: Connection, dataset_id: str) -> bool | None:
    """Whether the dataset is wholly indexed (None: no index on this database)."""
    there = connection.exec_driver_sql(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (SEARCH_TABLE,)
    ).first()
    if there is None:
        return None
    done = connection.exec_driver_sql(
        f"SELECT complete FROM {SEARCH_DATASETS} WHERE dataset_id = ?", (dataset_id,)
    ).scalar()
    return bool(done)


def _index_next_chunk(connection: Connection, dataset_id: str, chunk: int) -> bool | None:
    """Index the next `chunk` items of the dataset; whether it is now wholly indexed (None for
    a dataset that is no more)."""
    # A write first: it takes the write lock (waiting its turn), so what is read next is not
    # a snapshot another writer could have moved past.
    connection.exec_driver_sql(
        f"INSERT OR IGNORE INTO {SEARCH_DATASETS} (dataset_id) "
        "SELECT id FROM datasets WHERE id = ?",
        (dataset_id,),
    )
    row = connection.exec_driver_sql(
        f"SELECT ordinal, indexed_below, complete FROM {SEARCH_DATASETS} WHERE dataset_id = ?",
        (dataset_id,),
    ).first()
    if row is None:
        return None
    ordinal, below, complete = row
    if complete:
        return True
    above = below + chunk
    connection.exec_driver_sql(
        f"INSERT INTO {SEARCH_TABLE} (rowid, {_TEXTS}) "
        f"SELECT ? * {SEARCH_ROWID_SPAN} + position, {_TEXTS} FROM dataset_items "
        "WHERE dataset_id = ? AND position >= ? AND position < ? ORDER BY position",
        (ordinal, dataset_id, below, above),
    )
    more = connection.exec_driver_sql(
        "SELECT 1 FROM dataset_items WHERE dataset_id = ? AND position >= ? LIMIT 1",
        (dataset_id, above),
    ).first()
    connection.exec_driver_sql(
        f"UPDATE {SEARCH_DATASETS} SET indexed_below = ?, complete = ? WHERE dataset_id = ?",
        (above, 0 if more else 1, dataset_id),
    )
    return more is None
