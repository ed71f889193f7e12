"""The write path of scorer results: pre-encoded rows (`core.run_results.ResultRow`) inserted
by the database driver itself (docs/storage.md, "The write path").

A stored run arrives here as a tuple whose JSON columns are already text, so nothing per result
is left to SQLAlchemy (no parameter dict, no bind processor, no compiled-statement bookkeeping):
one `executemany` of the driver per batch, `INSERT ... ON CONFLICT DO NOTHING` on the table's
unique key, as before (a pair already stored is skipped, never an error); on PostgreSQL, `COPY`
(psycopg's `copy`) instead of the `executemany`, for results and dataset items alike: straight
into the table, the round trip through a temporary table only for a batch that meets a stored
pair (docs/storage.md, "The write path")."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Sequence
from typing import Any

from sqlalchemy import ColumnElement, select
from sqlalchemy.engine import Connection
from sqlalchemy.exc import DBAPIError

from core.run_results import RESULT_ROW_COLUMNS, database_json
from core.storage.tables import ExperimentRow

__all__ = [
    "ROW_BATCH",
    "insert_item_batches",
    "insert_items",
    "insert_rows",
    "json_text",
    "lock_experiments",
    "refuse_unknown_experiments",
]

ROW_BATCH = 5_000
"""Rows per `executemany`."""

_COLUMNS = ("experiment_id", *RESULT_ROW_COLUMNS)
_KEY = "experiment_id, item_id, scorer_id"


def insert_rows(connection: Connection, rows: Sequence[tuple[Any, ...]]) -> int:
    """Insert `rows` (each `(experiment_id, *ResultRow)`) in batches of `ROW_BATCH`; returns how
    many were written (how many were sent when the driver reports no count for a batch).

    On PostgreSQL the rows are streamed with `COPY` straight into the table, in key order, under
    a savepoint; when a pair of them is stored already (COPY cannot skip it: the unique key
    refuses the whole batch), the savepoint is rolled back and the batch goes through a
    temporary table and one `INSERT ... SELECT ... ON CONFLICT DO NOTHING` instead.

    Raises NotFoundError naming the experiment, writing nothing, when a row's experiment does
    not exist (`refuse_unknown_experiments`: PostgreSQL has no foreign key for it)."""
    if not rows:
        return 0
    refuse_unknown_experiments(connection, {row[0] for row in rows})
    if connection.dialect.name == "postgresql":
        return _copy_rows(connection, rows)
    statement = _statement(connection.dialect.name, connection.dialect.paramstyle)
    written = 0
    for batch in _batches(rows):
        counted = connection.exec_driver_sql(statement, batch).rowcount
        written += counted if counted >= 0 else len(batch)
    return written


def refuse_unknown_experiments(connection: Connection, experiment_ids: Collection[str]) -> None:
    """Raise NotFoundError naming the first of `experiment_ids` that is not stored: its results
    would belong to nothing. What the foreign key of `scorer_results` checked per row (dropped on
    PostgreSQL by revision 0017: 30-40% of the server's time for a COPYed batch), checked once
    per batch, one lookup of the primary key per experiment.

    On PostgreSQL the experiments found are locked `FOR KEY SHARE`, as the key's trigger locked
    them, until the transaction ends: a deletion of one of them (which locks it `FOR UPDATE`
    first: core/storage/experiments.py) waits for the batch and then deletes its results too,
    or, when it came first, this lookup waits for it and finds the experiment gone."""
    from core.storage.database import NotFoundError  # database imports this module (via _rows)

    wanted = sorted(experiment_ids)  # the locks taken in one order
    table = ExperimentRow.__table__
    query = select(table.c.id).where(table.c.id.in_(wanted))
    if connection.dialect.name == "postgresql":
        query = query.with_for_update(read=True, key_share=True)
    found = set(connection.execute(query).scalars())
    missing = [experiment_id for experiment_id in wanted if experiment_id not in found]
    if missing:
        raise NotFoundError(
            f"Cannot store scorer results for experiment {missing[0]!r}: no experiment has "
            "that id (it was deleted, or never created); nothing was written"
        )


def lock_experiments(connection: Connection, which: ColumnElement[bool]) -> None:
    """Lock the `which` experiment rows `FOR UPDATE` (PostgreSQL; SQLite has one writer at a
    time, and keeps its foreign key) before a deletion takes their results: a batch of results
    being written for one of them (which holds it `FOR KEY SHARE`: `refuse_unknown_experiments`)
    is waited for, then deleted with the rest, instead of being left behind the experiment."""
    table = ExperimentRow.__table__
    connection.execute(select(table.c.id).where(which).order_by(table.c.id).with_for_update())


_ITEM_COLUMNS = (
    "dataset_id",
    "position",
    "item_id",
    "input",
    "output",
    "ground_truth",
    "item_metadata",
)


def insert_items(connection: Connection, rows: Sequence[tuple[Any, ...]]) -> None:
    """Insert dataset items given as `(dataset_id, position, item_id, input, output,
    ground_truth, metadata)`, the last four already JSON text (`json_text`), in one
    `executemany` of the driver (a dataset import's rows take the results' path)."""
    if connection.dialect.name == "postgresql" and rows:
        _copy(connection, f"COPY dataset_items ({', '.join(_ITEM_COLUMNS)}) FROM STDIN", rows)
        return
    marker = "?" if connection.dialect.paramstyle == "qmark" else "%s"
    statement = (
        f"INSERT INTO dataset_items ({', '.join(_ITEM_COLUMNS)}) "
        f"VALUES ({', '.join(marker for _ in _ITEM_COLUMNS)})"
    )
    connection.exec_driver_sql(statement, rows)


def insert_item_batches(
    connection: Connection, batches: Iterable[Sequence[tuple[Any, ...]]]
) -> int:
    """Insert batches of dataset items (rows as in `insert_items`) made as they are consumed;
    returns how many rows were inserted.

    On PostgreSQL every batch goes into one `COPY`: the server indexes the rows already sent
    while the next batch is read and encoded here, instead of each `COPY` waiting for the
    server before the next batch is made. Elsewhere, one `insert_items` per batch."""
    count = 0
    if connection.dialect.name != "postgresql":
        for batch in batches:
            if batch:
                insert_items(connection, batch)
            count += len(batch)
        return count

    def counted() -> Iterator[tuple[Any, ...]]:
        nonlocal count
        for batch in batches:
            yield from batch
            count += len(batch)

    _copy(connection, f"COPY dataset_items ({', '.join(_ITEM_COLUMNS)}) FROM STDIN", counted())
    return count


_STAGED = "scorelab_staged_results"
"""The temporary table `COPY` fills on PostgreSQL (one per connection, emptied at each commit)."""


_UNIQUE_VIOLATION = "23505"
"""PostgreSQL's SQLSTATE for a row refused by a unique key."""


def _copy_rows(connection: Connection, rows: Sequence[tuple[Any, ...]]) -> int:
    """A fresh experiment's batch meets no stored pair: COPY alone writes it, with neither the
    staging table's write and read nor a speculative insertion per row (100,000 rows in one
    transaction: 1.2 s of server time instead of 1.7 to 2.2 s). A resumed run's first batches
    may meet some and take the staged path."""
    # Key order (code points: COLLATE "C" below): two writers of one experiment (a resume
    # racing its old process) wait for each other's keys in one order, and none deadlocks.
    ordered = sorted(rows, key=_row_key)
    savepoint = connection.begin_nested()
    try:
        _copy(connection, f"COPY scorer_results ({', '.join(_COLUMNS)}) FROM STDIN", ordered)
    except DBAPIError as error:
        savepoint.rollback()
        if getattr(error.orig, "sqlstate", None) != _UNIQUE_VIOLATION:
            raise
        return _staged_rows(connection, ordered)
    savepoint.commit()
    return len(rows)


def _row_key(row: tuple[Any, ...]) -> tuple[Any, ...]:
    return row[:3]  # experiment_id, item_id, scorer_id


def _staged_rows(connection: Connection, rows: Sequence[tuple[Any, ...]]) -> int:
    """The rows COPYed into a temporary table of this transaction, then moved by one
    `INSERT ... SELECT ... ON CONFLICT DO NOTHING` in key order: a stored pair is skipped."""
    columns = ", ".join(_COLUMNS)
    connection.exec_driver_sql(
        f"CREATE TEMPORARY TABLE IF NOT EXISTS {_STAGED} ON COMMIT DELETE ROWS AS "
        f"SELECT {columns} FROM scorer_results WITH NO DATA"
    )
    connection.exec_driver_sql(f"TRUNCATE {_STAGED}")  # a rolled-back batch left nothing, still
    _copy(connection, f"COPY {_STAGED} ({columns}) FROM STDIN", rows)
    in_key_order = ", ".join(f'{column} COLLATE "C"' for column in _KEY.split(", "))
    moved = connection.exec_driver_sql(
        f"INSERT INTO scorer_results ({columns}) SELECT {columns} FROM {_STAGED} "
        f"ORDER BY {in_key_order} ON CONFLICT ({_KEY}) DO NOTHING"
    ).rowcount
    return moved if moved >= 0 else len(rows)


def _copy(connection: Connection, statement: str, rows: Iterable[tuple[Any, ...]]) -> None:
    """`COPY ... FROM STDIN` of `rows` through psycopg's own connection (in the transaction)."""
    driver: Any = connection.connection.driver_connection
    try:
        with driver.cursor() as cursor, cursor.copy(statement) as copy:
            for row in rows:
                copy.write_row(row)
    except driver.Error as error:  # as SQLAlchemy's own statements report theirs
        raise DBAPIError.instance(statement, None, error, driver.Error) from error


def json_text(value: Any) -> str:
    """A JSON column's text (`database_json`; None is JSON null, as SQLAlchemy's JSON type
    wrote it)."""
    return "null" if value is None else database_json(value)


def _statement(dialect: str, paramstyle: str) -> str:
    marker = "?" if paramstyle == "qmark" else "%s"
    columns = ", ".join(_COLUMNS)
    values = ", ".join(marker for _ in _COLUMNS)
    statement = f"INSERT INTO scorer_results ({columns}) VALUES ({values})"
    if dialect in ("sqlite", "postgresql"):
        statement += f" ON CONFLICT ({_KEY}) DO NOTHING"
    return statement


def _batches(rows: Sequence[tuple[Any, ...]]) -> Iterator[Sequence[tuple[Any, ...]]]:
    for start in range(0, len(rows), ROW_BATCH):
        yield rows[start : start + ROW_BATCH]
