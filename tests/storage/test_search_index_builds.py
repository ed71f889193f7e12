"""Who builds SQLite's text search index and when: a small dataset's by its first search, a
large one's in a thread of its own (started by the experiment page or by a search, which reads
the texts meanwhile), never twice at once, never on PostgreSQL (docs/storage.md, Text search)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from scorelab_db import BACKENDS, database

from core.records import ColumnMapping, DatasetItem, ResultQuery, ScorerOutcome, ScorerSpec
from core.storage import NotFoundError, Store, reads, search_index
from core.storage.search_index import SearchIndexer
from core.storage.tables import SEARCH_DATASETS
from core.storage.text_search import search_base

SQLITE = [p for p in BACKENDS if p.id == "sqlite"]
ITEMS = 40


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    with database(request.param, tmp_path) as url:
        opened = Store(url)
        yield opened
        opened.close()


def _experiment(store: Store, items: int = ITEMS) -> tuple[str, str]:
    dataset = store.save_dataset(
        name="d",
        file_name="d.jsonl",
        format="jsonl",
        fingerprint="d" * 64,
        columns=["id", "input", "output"],
        mapping=ColumnMapping(id="id", input="input", output="output"),
        items=[
            [
                DatasetItem(id=f"i{n}", input=f"item {n} {'odd' if n % 2 else 'even'}", output="o")
                for n in range(items)
            ]
        ],
    )
    info = store.create_experiment(
        name="e",
        dataset_id=dataset.id,
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
            ScorerOutcome(item_id=f"i{n}", scorer_id="s", status="success", score=n / items)
            for n in range(items)
        ],
    )
    store.finish_experiment(info.id, "completed")
    return dataset.id, info.id


def _whole(store: Store, dataset_id: str) -> bool:
    with store.engine.connect() as connection:
        return search_base(connection, dataset_id) is not None


def _indexer(store: Store, **limits: int) -> SearchIndexer:
    """A fresh indexer on the store (its limits made small so that 40 items are 'large')."""
    indexer = SearchIndexer(lambda: store.engine, **limits)
    store.results.search_indexer = indexer
    return indexer


def _odd_ids(store: Store, experiment_id: str) -> list[str]:
    page = store.result_page(experiment_id, ResultQuery(search="odd", page_size=100))
    return [row.item_id for row in page.rows]


ODD = [f"i{n}" for n in range(1, ITEMS, 2)]


@pytest.mark.parametrize("store", SQLITE, indirect=True)
def test_the_experiment_page_starts_the_build_in_the_background(store: Store) -> None:
    dataset_id, experiment_id = _experiment(store)
    indexer = _indexer(store, chunk=7)
    assert not _whole(store, dataset_id)
    assert store.prepare_search(experiment_id) is True
    assert indexer.wait(dataset_id, timeout_s=30)
    assert _whole(store, dataset_id)
    assert store.prepare_search(experiment_id) is False  # whole: nothing more to build
    assert _odd_ids(store, experiment_id) == ODD


@pytest.mark.parametrize("store", SQLITE, indirect=True)
def test_a_search_of_a_small_dataset_builds_its_index_before_answering(store: Store) -> None:
    dataset_id, experiment_id = _experiment(store)
    _indexer(store, chunk=7, sync_limit=ITEMS)
    assert _odd_ids(store, experiment_id) == ODD
    assert _whole(store, dataset_id)


@pytest.mark.parametrize("store", SQLITE, indirect=True)
def test_a_search_of_a_large_dataset_reads_the_texts_while_the_index_is_built(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    dataset_id, experiment_id = _experiment(store)
    indexer = _indexer(store, chunk=7, sync_limit=ITEMS - 1)
    release = threading.Event()
    original = search_index._index_next_chunk

    def held(connection: Any, dataset: str, chunk: int) -> bool | None:
        release.wait(30)  # the build stays unfinished until the search has answered
        return original(connection, dataset, chunk)

    monkeypatch.setattr(search_index, "_index_next_chunk", held)
    assert _odd_ids(store, experiment_id) == ODD  # answered at once, by reading the texts
    assert indexer.building(dataset_id) and not _whole(store, dataset_id)
    assert store.prepare_search(experiment_id) is True  # the one build, not a second
    assert _odd_ids(store, experiment_id) == ODD
    release.set()
    assert indexer.wait(dataset_id, timeout_s=30)
    assert _whole(store, dataset_id) and not indexer.building(dataset_id)
    assert _odd_ids(store, experiment_id) == ODD  # the index's answers are the scan's


@pytest.mark.parametrize("store", SQLITE, indirect=True)
def test_one_build_per_dataset_however_many_ask(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    dataset_id, experiment_id = _experiment(store)
    indexer = _indexer(store, chunk=ITEMS)
    release, started = threading.Event(), []
    original = search_index.index_dataset_texts

    def counted(engine: Any, dataset: str, *rest: Any) -> bool:
        started.append(dataset)
        release.wait(30)
        return original(engine, dataset, *rest)

    monkeypatch.setattr(search_index, "index_dataset_texts", counted)
    assert all(store.prepare_search(experiment_id) for _ in range(5))
    release.set()
    assert indexer.wait(dataset_id, timeout_s=30)
    assert started == [dataset_id] and _whole(store, dataset_id)


@pytest.mark.parametrize("store", SQLITE, indirect=True)
def test_a_failed_build_is_logged_and_taken_up_by_the_next_search(
    store: Store, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    dataset_id, experiment_id = _experiment(store)
    indexer = _indexer(store, chunk=7)
    original = search_index._index_next_chunk
    calls: list[int] = []

    def failing_once(connection: Any, dataset: str, chunk: int) -> bool | None:
        calls.append(chunk)
        if len(calls) == 2:
            raise RuntimeError("disk I/O error")
        return original(connection, dataset, chunk)

    monkeypatch.setattr(search_index, "_index_next_chunk", failing_once)
    assert store.prepare_search(experiment_id)
    assert indexer.wait(dataset_id, timeout_s=30)
    assert not _whole(store, dataset_id)
    assert "Building the text search index of dataset" in caplog.text
    assert dataset_id in caplog.text and "disk I/O error" in caplog.text
    with store.engine.connect() as connection:  # the first chunk stayed; the failed one did not
        below = connection.exec_driver_sql(
            f"SELECT indexed_below FROM {SEARCH_DATASETS} WHERE dataset_id = ?", (dataset_id,)
        ).scalar()
    assert below == 7
    assert store.prepare_search(experiment_id)  # taken up where it stopped
    assert indexer.wait(dataset_id, timeout_s=30) and _whole(store, dataset_id)
    assert _odd_ids(store, experiment_id) == ODD


@pytest.mark.parametrize("store", SQLITE, indirect=True)
def test_a_dataset_deleted_during_its_build_ends_the_build_quietly(
    store: Store, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    dataset_id, experiment_id = _experiment(store)
    indexer = _indexer(store, chunk=7)
    release = threading.Event()
    original = search_index._index_next_chunk

    def held(connection: Any, dataset: str, chunk: int) -> bool | None:
        release.wait(30)
        return original(connection, dataset, chunk)

    monkeypatch.setattr(search_index, "_index_next_chunk", held)
    assert store.prepare_search(experiment_id)
    store.delete_experiment(experiment_id)
    store.delete_dataset(dataset_id)
    release.set()
    assert indexer.wait(dataset_id, timeout_s=30)
    assert "Building the text search index" not in caplog.text
    with store.engine.connect() as connection:
        left = connection.exec_driver_sql(
            f"SELECT count(*) FROM {SEARCH_DATASETS} WHERE dataset_id = ?", (dataset_id,)
        ).scalar()
    assert left == 0


def test_no_build_on_postgresql_and_none_for_an_unknown_experiment(store: Store) -> None:
    dataset_id, experiment_id = _experiment(store)
    indexer = _indexer(store)
    started = store.prepare_search(experiment_id)
    assert started is (store.engine.dialect.name == "sqlite")
    assert indexer.wait(dataset_id, timeout_s=30)
    with pytest.raises(NotFoundError):
        store.prepare_search("no-such-experiment")
    assert _odd_ids(store, experiment_id) == ODD


@pytest.mark.parametrize("store", SQLITE, indirect=True)
def test_a_background_build_writes_no_chunk_while_a_page_is_read(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Searches during a build, a chunk of one item at a time: no chunk is written while a
    page is read (the build asks for its second chunk during the first read, which gives it
    half a second to write one), and every answer, while the index is partial, is the whole
    index's."""
    dataset_id, experiment_id = _experiment(store)
    indexer = _indexer(store, chunk=1)
    events: list[str] = []
    first_read, chunk_started, turns = threading.Event(), threading.Event(), []
    original_chunk, original_page = search_index._index_next_chunk, reads.result_page
    original_turn = indexer._chunk_turn

    def turn() -> Any:
        turns.append(len(turns))
        if len(turns) == 2:  # the second chunk is asked for while the first page is read
            first_read.wait(30)
        return original_turn()

    def chunk(connection: Any, dataset: str, size: int) -> bool | None:
        events.append("chunk")
        chunk_started.set()
        try:
            return original_chunk(connection, dataset, size)
        finally:
            events.append("chunk done")

    def page(*arguments: Any) -> Any:
        events.append("read")
        if events.count("read") == 1:
            first_read.set()
            chunk_started.clear()
            chunk_started.wait(0.5)  # not a timing: a chunk written meanwhile fails below
        try:
            return original_page(*arguments)
        finally:
            events.append("read done")

    monkeypatch.setattr(indexer, "_chunk_turn", turn)
    monkeypatch.setattr(search_index, "_index_next_chunk", chunk)
    monkeypatch.setattr(reads, "result_page", page)
    assert store.prepare_search(experiment_id)
    during = [_odd_ids(store, experiment_id) for _ in range(30)]
    assert indexer.wait(dataset_id, timeout_s=30) and _whole(store, dataset_id)
    assert during == [ODD] * 30 and _odd_ids(store, experiment_id) == ODD
    assert events.count("chunk done") == ITEMS
    pairs = list(zip(events[::2], events[1::2], strict=True))  # never interleaved
    assert set(pairs) == {("chunk", "chunk done"), ("read", "read done")}, events


@pytest.mark.parametrize("store", SQLITE, indirect=True)
def test_a_background_build_waits_a_quiet_spell_after_the_last_read(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A page's run reads several times, rendering in between: the build writes its next
    chunk only `quiet_s` after the last read ended (the order of the monotonic clock's
    readings, not a speed)."""
    dataset_id, experiment_id = _experiment(store)
    indexer = _indexer(store, chunk=5, quiet_s=0.3)
    read_ends: list[float] = []
    chunk_starts: list[float] = []
    first_read, turns = threading.Event(), []
    original_chunk, original_page = search_index._index_next_chunk, reads.result_page
    original_turn = indexer._chunk_turn

    def turn() -> Any:
        turns.append(len(turns))
        if len(turns) == 2:  # the second chunk is asked for once the first read has ended
            first_read.wait(30)
        return original_turn()

    def chunk(connection: Any, dataset: str, size: int) -> bool | None:
        chunk_starts.append(time.monotonic())
        return original_chunk(connection, dataset, size)

    def page(*arguments: Any) -> Any:
        try:
            return original_page(*arguments)
        finally:
            read_ends.append(time.monotonic())
            first_read.set()

    monkeypatch.setattr(indexer, "_chunk_turn", turn)
    monkeypatch.setattr(search_index, "_index_next_chunk", chunk)
    monkeypatch.setattr(reads, "result_page", page)
    assert store.prepare_search(experiment_id)
    during = [_odd_ids(store, experiment_id) for _ in range(5)]
    assert indexer.wait(dataset_id, timeout_s=30) and _whole(store, dataset_id)
    assert during == [ODD] * 5
    for started in chunk_starts:
        before = [ended for ended in read_ends if ended <= started]
        assert not before or started - max(before) >= 0.3, (started, read_ends)


@pytest.mark.parametrize("store", SQLITE, indirect=True)
def test_a_background_build_is_not_starved_by_reads_without_pause(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reads one after the other (a busy dashboard) never leave a quiet spell: the build writes
    a chunk after `patience_s` of waiting anyway, and ends while the reads go on."""
    dataset_id, experiment_id = _experiment(store)
    indexer = _indexer(store, chunk=10, quiet_s=3600, patience_s=0.05)
    original_turn, first_read = indexer._chunk_turn, threading.Event()

    def turn() -> Any:  # the build waits for the reads to have begun
        first_read.wait(30)
        return original_turn()

    monkeypatch.setattr(indexer, "_chunk_turn", turn)
    assert store.prepare_search(experiment_id)
    with indexer.searching():
        first_read.set()
    reads_made = 0
    while indexer.building(dataset_id) and reads_made < 10_000:
        assert _odd_ids(store, experiment_id) == ODD
        reads_made += 1
    assert _whole(store, dataset_id) and not indexer.building(dataset_id)
