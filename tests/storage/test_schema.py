"""The schema's migrations (docs/storage.md), on SQLite and (when available) PostgreSQL: a new
database made at the head revision, exactly the tables of core/storage/tables.py; a database of
the version before migrations adopted and stamped; a database at head left alone; and twenty
processes opening one new database at once."""

from __future__ import annotations

import multiprocessing
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from scorelab_db import BACKENDS, database

from core.records import RunCounts
from core.storage import StorageError, Store
from core.storage._engines import make_engine
from core.storage.schema import alembic_config, head_revisions, revisions
from core.storage.tables import TABLES, include_object


@pytest.fixture(params=BACKENDS)
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    with database(request.param, tmp_path) as database_url:
        yield database_url


def version_rows(engine: sqlalchemy.Engine) -> list[str]:
    with engine.connect() as connection:
        return [r[0] for r in connection.exec_driver_sql("SELECT version_num FROM alembic_version")]


def test_a_new_database_is_made_at_head_with_exactly_the_declared_tables(url: str) -> None:
    store = Store(url)
    try:
        assert revisions(store.engine) == head_revisions() and len(head_revisions()) == 1
        assert version_rows(store.engine) == sorted(head_revisions())
        with store.engine.connect() as connection:
            opts = {"compare_type": True, "include_object": include_object}
            context = MigrationContext.configure(connection, opts=opts)
            differences = compare_metadata(context, TABLES[0].metadata)
        # Any difference means tables.py changed without a migration (docs/storage.md).
        assert differences == []
    finally:
        store.close()


def old_version_database(url: str, *, heartbeat: bool) -> sqlalchemy.Engine:
    """A database as the version before migrations left it: the first revision's tables (with or
    without the heartbeat column, added in that version's life) and no `alembic_version`."""
    engine = make_engine(url)
    with engine.begin() as connection:
        command.upgrade(alembic_config(connection), "0001")
        connection.exec_driver_sql("DROP TABLE alembic_version")
        if not heartbeat:
            connection.exec_driver_sql("ALTER TABLE experiments DROP COLUMN heartbeat_at")
    return engine


def old_experiment(engine: sqlalchemy.Engine, experiment_id: str, **values: object) -> None:
    now = datetime.now(UTC)
    row = {
        "id": experiment_id,
        "name": experiment_id,
        "dataset_id": "d1",
        "dataset_fingerprint": "f" * 64,
        "scorers": [{"scorerId": "a", "options": {}}],
        "scorer_ids": ["a"],
        "concurrency": 1,
        "status": "completed",
        "total_items": 3,
        "total_runs": 3,
        "done_runs": 0,
        "succeeded_runs": 0,
        "failed_runs": 0,
        "judge_calls": 0,
        "judge_attempts": 0,
        "created_at": now,
        "started_at": now,
        "finished_at": now,
        **values,
    }
    experiments = sqlalchemy.Table("experiments", sqlalchemy.MetaData(), autoload_with=engine)
    with engine.begin() as connection:
        connection.execute(sqlalchemy.insert(experiments), [row])


def old_result(engine: sqlalchemy.Engine, experiment_id: str, item_id: str, tokens: int) -> None:
    results = sqlalchemy.Table("scorer_results", sqlalchemy.MetaData(), autoload_with=engine)
    row = {
        "experiment_id": experiment_id,
        "item_id": item_id,
        "scorer_id": "a",
        "score": 0.5,
        "duration_ms": 1,
        "input_tokens": tokens,
        "judge_calls": 1,
        "judge_attempts": 1,
    }
    with engine.begin() as connection:
        connection.execute(sqlalchemy.insert(results), [row])


@pytest.mark.parametrize("heartbeat", [False, True], ids=["before-heartbeats", "with-heartbeats"])
def test_a_database_of_the_version_before_migrations_is_upgraded_and_stamped(
    url: str, heartbeat: bool
) -> None:
    engine = old_version_database(url, heartbeat=heartbeat)
    datasets = sqlalchemy.Table("datasets", sqlalchemy.MetaData(), autoload_with=engine)
    an_hour_ago = datetime.now(UTC) - timedelta(hours=1)
    with engine.begin() as connection:
        connection.execute(
            sqlalchemy.insert(datasets),
            [
                {
                    "id": "d1",
                    "name": "old set",
                    "file_name": "old.jsonl",
                    "format": "jsonl",
                    "fingerprint": "f" * 64,
                    "item_count": 3,
                    "columns": ["input", "output"],
                    "mapping": {"input": "input", "output": "output"},
                    "created_at": an_hour_ago,
                }
            ],
        )
    # Finished: 2 of 3 runs stored; the failed one cost 5 input tokens and 2 judge calls.
    old_experiment(
        engine,
        "done",
        done_runs=3,
        succeeded_runs=2,
        failed_runs=1,
        input_tokens=25,
        judge_calls=4,
        judge_attempts=5,
    )
    old_result(engine, "done", "i0", 10)
    old_result(engine, "done", "i1", 10)
    # Running when its process died an hour ago, its row behind its one stored result.
    old_experiment(
        engine,
        "dead",
        status="running",
        created_at=an_hour_ago,
        started_at=an_hour_ago,
        finished_at=None,
    )
    old_result(engine, "dead", "i0", 7)
    engine.dispose()

    store = Store(url)
    try:
        assert version_rows(store.engine) == sorted(head_revisions())  # stamped
        columns = {c["name"] for c in sqlalchemy.inspect(store.engine).get_columns("experiments")}
        assert {"heartbeat_at", "failed_judge_calls", "failed_input_tokens"} <= columns
        listed = {info.id: info for info in store.list_experiments()}
        done = listed["done"].counts
        assert (done.succeeded, done.failed, done.total) == (2, 1, 3)
        # The failed run's cost is what the stored results do not account for.
        assert done.usage.input_tokens == 25 and done.judge_calls == 4
        assert done.judge_attempts == 5 and listed["done"].scores == {"a": 0.5}
        dead = listed["dead"]
        assert dead.status == "interrupted" and dead.finished_at == an_hour_ago
        assert dead.counts.succeeded == 1 and dead.counts.usage.input_tokens == 7
        assert store.get_dataset("d1").name == "old set"
        store.update_experiment_progress("dead", RunCounts(total=3, succeeded=1))
        assert store.get_experiment("dead").status == "running"  # it writes the new columns
    finally:
        store.close()


def test_a_database_at_head_is_only_read(url: str) -> None:
    Store(url).close()
    statements: list[str] = []

    def seen(_conn: object, _cursor: object, statement: str, *_args: object) -> None:
        statements.append(" ".join(statement.split()).upper())

    sqlalchemy.event.listen(sqlalchemy.Engine, "before_cursor_execute", seen)
    try:
        Store(url).close()
    finally:
        sqlalchemy.event.remove(sqlalchemy.Engine, "before_cursor_execute", seen)
    assert statements, "the revision was not even read"
    writes = [s for s in statements if not s.startswith(("SELECT", "PRAGMA", "WITH"))]
    assert writes == [] and not any("ADVISORY" in s for s in statements), statements


PROCESSES = 20


def open_at_once(url: str, barrier: Any, answers: Any) -> None:
    """In a child process: wait for the others, then open the database."""
    barrier.wait(timeout=60)
    try:
        Store(url).close()
    except Exception as error:
        answers.put(f"failed: {type(error).__name__}: {error}")
    else:
        answers.put("opened")


def test_twenty_processes_open_one_new_database_at_once(url: str) -> None:
    # Forked: each child has its own interpreter state and its own connections, and starts
    # with everything imported, so the barrier lets all twenty go at the same moment.
    context = multiprocessing.get_context("fork")
    barrier, answers = context.Barrier(PROCESSES), context.Queue()
    children = [
        context.Process(target=open_at_once, args=(url, barrier, answers)) for _ in range(PROCESSES)
    ]
    for child in children:
        child.start()
    try:
        opened = [answers.get(timeout=120) for _ in children]
    finally:
        for child in children:
            child.join(timeout=30)
    assert opened == ["opened"] * PROCESSES, [a for a in opened if a != "opened"]
    assert [child.exitcode for child in children] == [0] * PROCESSES
    store = Store(url)
    try:
        assert version_rows(store.engine) == sorted(head_revisions())
    finally:
        store.close()


def test_the_developers_command_line_finds_no_missing_migration(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from core.storage.migrations.__main__ import main

    assert main(["check"]) == 0  # on a scratch database at head: tables.py needs nothing new
    assert "No new upgrade operations detected" in capsys.readouterr().out
    assert main(["heads"]) == 0
    assert capsys.readouterr().out.split() == [*sorted(head_revisions()), "(head)"]


def test_a_database_upgraded_by_a_newer_version_is_refused_clearly(url: str) -> None:
    store = Store(url)
    with store.engine.begin() as connection:
        connection.exec_driver_sql("UPDATE alembic_version SET version_num = '9999'")
    store.close()
    with pytest.raises(StorageError, match=r"revision 9999, made by a newer version of scorelab"):
        Store(url)
    engine = make_engine(url)
    try:
        assert version_rows(engine) == ["9999"]  # left as it was
    finally:
        engine.dispose()
