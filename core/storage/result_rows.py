"""The write path of scorer results: pre-encoded rows (`core.run_results.ResultRow`) inserted
by the database driver itself (docs/storage.md, "The write path").

A stored run arrives here as a tuple whose JSON columns are already text, so nothing per result
is left to SQLAlchemy (no parameter dict, no bind processor, no compiled-statement bookkeeping):
one `executemany` of the driver per batch, `INSERT ... ON CONFLICT DO NOTHING` on the table's
unique key, as before (a pair already stored is skipped, never an error); on PostgreSQL, `COPY`
(psycopg's `copy`) instead of the `executemany`, for results and dataset items alike."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from sqlalchemy.engine import Connection
from sqlalchemy.exc import DBAPIError

from core.run_results import RESULT_ROW_COLUMNS, database_json

__all__ = ["ROW_BATCH", "insert_items", "insert_rows", "json_text"]

ROW_BATCH = 5_000
"""Rows per `executemany`."""

_COLUMNS = ("experiment_id", *RESULT_ROW_COLUMNS)
_KEY = "experiment_id, item_id, scorer_id"


def insert_rows(connection: Connection, rows: Sequence[tuple[Any, ...]]) -> int:
    """Insert `rows` (each `(experiment_id, *ResultRow)`) in batches of `ROW_BATCH`; returns how
    many were written (how many were sent when the driver reports no count for a batch).

    On PostgreSQL the rows are streamed with `COPY` into a temporary table of this transaction,
    then moved by one `INSERT ... SELECT ... ON CONFLICT DO NOTHING` in key order (COPY itself
    cannot skip a stored pair): one statement per batch instead of one per row."""
    if connection.dialect.name == "postgresql" and rows:
        return _copy_rows(connection, rows)
    statement = _statement(connection.dialect.name, connection.dialect.paramstyle)
    written = 0
    for batch in _batches(rows):
        counted = connection.exec_driver_sql(statement, batch).rowcount
        written += counted if counted >= 0 else len(batch)
    return written


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


_STAGED = "scorelab_staged_results"
"""The temporary table `COPY` fills on PostgreSQL (one per connection, emptied at each commit)."""


def _copy_rows(connection: Connection, rows: Sequence[tuple[Any, ...]]) -> int:
    columns = ", ".join(_COLUMNS)
    connection.exec_driver_sql(
        f"CREATE TEMPORARY TABLE IF NOT EXISTS {_STAGED} ON COMMIT DELETE ROWS AS "
        f"SELECT {columns} FROM scorer_results WITH NO DATA"
    )
    connection.exec_driver_sql(f"TRUNCATE {_STAGED}")  # a rolled-back batch left nothing, still
    _copy(connection, f"COPY {_STAGED} ({columns}) FROM STDIN", rows)
    # In key order: two writers of one experiment (a resume racing its old process) wait for
    # each other's keys in one order, and none deadlocks.
    moved = connection.exec_driver_sql(
        f"INSERT INTO scorer_results ({columns}) SELECT {columns} FROM {_STAGED} "
        f"ORDER BY {_KEY} ON CONFLICT ({_KEY}) DO NOTHING"
    ).rowcount
    return moved if moved >= 0 else len(rows)


def _copy(connection: Connection, statement: str, rows: Sequence[tuple[Any, ...]]) -> None:
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
