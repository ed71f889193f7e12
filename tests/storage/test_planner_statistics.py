"""PostgreSQL's planner statistics refreshed after a large write (`Database.refresh_statistics`):
a dataset just imported, or an experiment just finished, is planned on its rows at once, not
on the empty table the schema's upgrade analysed until autovacuum comes by minutes later (a
search under a score filter of a million items just imported took over 2 minutes, 16 ms once
analysed). SQLite keeps no statistics and gets none."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from scorelab_db import BACKENDS, database
from sqlalchemy import event

from core.records import ColumnMapping, DatasetItem, ScorerOutcome, ScorerSpec
from core.storage import Store
from core.storage import database as storage_database

POSTGRES = [p for p in BACKENDS if p.id == "postgres"]
SQLITE = [p for p in BACKENDS if p.id == "sqlite"]


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    with database(request.param, tmp_path) as url:
        opened = Store(url)
        yield opened
        opened.close()


def _dataset(store: Store, items: int) -> str:
    return store.save_dataset(
        name="d",
        file_name="d.csv",
        format="csv",
        fingerprint="s" * 64,
        columns=["id", "question", "answer"],
        mapping=ColumnMapping(id="id", input="question", output="answer"),
        items=[[DatasetItem(id=f"q{n}", input=f"question {n}", output="a") for n in range(items)]],
    ).id


def _planned_rows(store: Store, table: str) -> float:
    """The rows PostgreSQL's planner believes `table` holds (`pg_class.reltuples`, which
    ANALYZE sets at once; -1 or 0 before any analysis that saw rows)."""
    with store.engine.connect() as connection:
        return float(
            connection.exec_driver_sql(
                "SELECT reltuples FROM pg_class WHERE oid = %s::regclass", (table,)
            ).scalar_one()
        )


def _all_visible_pages(store: Store, table: str) -> int:
    """The pages of `table` a VACUUM marked all-visible (`pg_class.relallvisible`, which an
    ANALYZE alone leaves as it was)."""
    with store.engine.connect() as connection:
        return int(
            connection.exec_driver_sql(
                "SELECT relallvisible FROM pg_class WHERE oid = %s::regclass", (table,)
            ).scalar_one()
        )


@pytest.mark.parametrize("store", POSTGRES, indirect=True)
def test_a_large_import_is_analysed_at_once(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(storage_database, "STATISTICS_AFTER_ROWS", 60)
    _dataset(store, 59)  # under the threshold: left to autovacuum
    assert _planned_rows(store, "dataset_items") < 59
    _dataset(store, 60)
    assert _planned_rows(store, "dataset_items") == 119


@pytest.mark.parametrize("store", POSTGRES, indirect=True)
def test_a_large_experiment_is_analysed_when_it_finishes(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(storage_database, "STATISTICS_AFTER_ROWS", 40)
    dataset_id = _dataset(store, 40)
    info = store.create_experiment(
        name="e",
        dataset_id=dataset_id,
        scorers=[ScorerSpec(scorer_id="keyword-coverage-scorer")],
        scorer_ids=["s"],
        judge_model=None,
        api_base=None,
        judge_settings={},
        concurrency=1,
    )
    store.add_results(
        info.id,
        [
            ScorerOutcome(item_id=f"q{n}", scorer_id="s", status="success", score=n / 40)
            for n in range(40)
        ],
    )
    assert _planned_rows(store, "scorer_results") < 40  # written, not yet analysed
    assert _all_visible_pages(store, "scorer_results") == 0
    store.finish_experiment(info.id, "completed")  # the results counted by its totals
    assert _planned_rows(store, "scorer_results") == 40
    # Vacuumed too: the pages' index-only scans read no table row for them.
    assert _all_visible_pages(store, "scorer_results") >= 1
    with store.engine.connect() as connection:
        # The index's plan, as a million results get (40 rows could be read another way).
        connection.exec_driver_sql("SET LOCAL enable_seqscan = off")
        connection.exec_driver_sql("SET LOCAL enable_bitmapscan = off")
        plan = "\n".join(
            row[0]
            for row in connection.exec_driver_sql(
                "EXPLAIN (ANALYZE, COSTS OFF) SELECT scorer_id, score FROM scorer_results "
                "WHERE experiment_id = %s ORDER BY scorer_id, score",
                (info.id,),
            )
        )
    assert "Index Only Scan" in plan and "Heap Fetches: 0" in plan, plan


@pytest.mark.parametrize("store", SQLITE, indirect=True)
def test_sqlite_gets_no_statistics(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(storage_database, "STATISTICS_AFTER_ROWS", 1)
    _dataset(store, 5)
    with store.engine.connect() as connection:
        stat = connection.exec_driver_sql(
            "SELECT 1 FROM sqlite_master WHERE name = 'sqlite_stat1'"
        ).first()
    assert stat is None  # no ANALYZE: SQLite's plans here are made without statistics


@pytest.mark.parametrize("store", BACKENDS, indirect=True)
def test_only_the_tables_written_in_bulk_are_analysed(store: Store) -> None:
    with pytest.raises(ValueError, match="experiments; DROP"):
        store.database.refresh_statistics("experiments; DROP TABLE datasets", 10**6)


@pytest.mark.parametrize("store", POSTGRES, indirect=True)
def test_an_import_does_not_wait_on_an_index_being_built(
    store: Store, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A trigram index built CONCURRENTLY holds the table's SHARE UPDATE EXCLUSIVE lock (a
    minute at a million items), which ANALYZE needs: the import gives up the ANALYZE after
    its wait (`_ANALYZE_WAIT_PAST_DEADLOCK_MS` past the deadlock check) instead of waiting,
    and is stored whole."""
    monkeypatch.setattr(storage_database, "STATISTICS_AFTER_ROWS", 10)
    saved: list[str] = []
    with store.engine.connect() as holder:
        holder.exec_driver_sql("LOCK TABLE dataset_items IN SHARE UPDATE EXCLUSIVE MODE")
        with caplog.at_level(logging.WARNING, logger="core.storage.database"):
            importing = threading.Thread(target=lambda: saved.append(_dataset(store, 10)))
            importing.start()
            importing.join(timeout=10)
            waiting = importing.is_alive()
            holder.rollback()  # the lock let go: a waiting import then finishes
            importing.join()
    assert not waiting, "the import waited for the lock"
    assert any("ANALYZE dataset_items skipped" in r.getMessage() for r in caplog.records)
    assert len(store.dataset_items(saved[0])) == 10
    assert _planned_rows(store, "dataset_items") < 10  # not analysed: left to autovacuum


@pytest.mark.parametrize("store", POSTGRES, indirect=True)
def test_the_analyze_outwaits_the_deadlock_check_that_cancels_autovacuum(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Autovacuum holds the same lock while it vacuums a table (for minutes after a large
    deletion), and PostgreSQL cancels it for a waiting statement only at that statement's
    deadlock check (`deadlock_timeout`). A wait that ends first gives up every time. Only the
    server's own autovacuum workers are cancelled so (a test cannot start one on demand), so
    this reads the wait in force when the ANALYZE runs, in its own transaction."""
    monkeypatch.setattr(storage_database, "STATISTICS_AFTER_ROWS", 10)
    seen: list[tuple[str, str]] = []

    def after(connection: Any, cursor: Any, statement: str, *_: Any) -> None:
        if statement.startswith("ANALYZE"):
            driver = connection.connection.dbapi_connection
            lock = driver.execute("SHOW lock_timeout").fetchone()[0]
            deadlock = driver.execute("SHOW deadlock_timeout").fetchone()[0]
            seen.append((lock, deadlock))

    event.listen(store.engine, "after_cursor_execute", after)
    try:
        _dataset(store, 10)
    finally:
        event.remove(store.engine, "after_cursor_execute", after)
    assert len(seen) == 1
    lock, deadlock = (_milliseconds(value) for value in seen[0])
    assert deadlock < lock <= deadlock + 1_000
    with store.engine.connect() as connection:  # SET LOCAL: nothing left in the session
        assert connection.exec_driver_sql("SHOW lock_timeout").scalar_one() == "0"


def _milliseconds(setting: str) -> int:
    """A PostgreSQL duration as SHOW gives it ('1s', '2000ms', '1min') in milliseconds."""
    for unit, scale in (("ms", 1), ("min", 60_000), ("s", 1_000)):
        if setting.endswith(unit):
            return int(setting.removesuffix(unit)) * scale
    return int(setting)
