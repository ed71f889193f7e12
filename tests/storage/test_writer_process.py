"""The result writer's own process (core/storage/writer_process.py, issue 22), on SQLite and
(when available) PostgreSQL: what it writes is committed and read back by the parent, the
store's refusals come back as errors naming the cause, and a database no other process can
open gets no process at all."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from scorelab_db import BACKENDS, database
from test_store import experiment, make_items, save, success

from core.records import RunCounts, ScorerOutcome
from core.storage import StorageError, Store
from core.storage.writer_process import WriterProcess


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    with database(request.param, tmp_path) as url:
        store = Store(url)
        try:
            yield store
        finally:
            store.close()


@pytest.fixture
def writer(store: Store) -> Iterator[WriterProcess]:
    writer = store.detached()
    assert writer is not None
    try:
        yield writer
    finally:
        writer.close()


def test_results_written_by_the_process_are_committed_for_the_parent(
    store: Store, writer: WriterProcess
) -> None:
    assert writer.pid != os.getpid()
    dataset = save(store, make_items(3))
    info = experiment(store, dataset.id)
    outcomes = [success(f"i{n}", "a", n / 2) for n in range(3)]
    assert writer.add_results(info.id, outcomes) == 3
    assert writer.add_results(info.id, outcomes[:1]) == 0  # a stored pair is skipped, once
    writer.update_experiment_progress(info.id, RunCounts(total=6, succeeded=3))
    stored = store.experiment_results(info.id)
    assert [(r.item_id, r.score, r.reason) for r in stored] == [
        ("i0", 0.0, "why"),
        ("i1", 0.5, "why"),
        ("i2", 1.0, "why"),
    ]
    got = store.get_experiment(info.id)
    assert (got.status, got.counts.done, got.counts.succeeded) == ("running", 3, 3)


def test_the_stores_refusals_come_back_naming_the_cause(
    store: Store, writer: WriterProcess
) -> None:
    dataset = save(store, make_items(1))
    info = experiment(store, dataset.id)
    failed = ScorerOutcome(item_id="i0", scorer_id="a", status="failed", error="boom")
    with pytest.raises(StorageError, match="accepts successful outcomes only"):
        writer.add_results(info.id, [failed])  # a failed run is never written
    assert store.result_count(info.id) == 0
    with pytest.raises(StorageError, match="nope"):
        writer.update_experiment_progress("nope", RunCounts())
    assert writer.add_results(info.id, [success("i0", "a", 1.0)]) == 1  # still serving


def test_a_closed_or_dead_process_is_a_storage_error(store: Store) -> None:
    writer = store.detached()
    assert writer is not None
    writer.close()
    with pytest.raises(StorageError, match="closed"):
        writer.heartbeat("any")
    writer = store.detached()
    assert writer is not None
    os.kill(writer.pid, 9)
    with pytest.raises(StorageError, match=rf"process \(pid {writer.pid}\) stopped"):
        writer.heartbeat("any")
    writer.close()


def test_sqlite_in_memory_gets_no_process() -> None:
    store = Store("sqlite://")
    try:
        assert store.detached() is None
    finally:
        store.close()


def test_a_database_the_child_cannot_open_is_refused_saying_why() -> None:
    with pytest.raises(StorageError, match=r"Cannot open the database .*127\.0\.0\.1:9") as error:
        WriterProcess("postgresql://nobody:secret@127.0.0.1:9/none")
    assert "secret" not in str(error.value)  # the URL sent in a frame, shown without it
