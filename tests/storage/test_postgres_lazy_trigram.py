"""PostgreSQL's per-dataset trigram index (revision 0016, core/storage/search_index.py): an
import builds none; the page hook or a search builds the dataset's in the background
(`CREATE INDEX CONCURRENTLY`), and every search before, during and after the build answers the
same; a deleted dataset's index goes with it; an interrupted build's INVALID leftover is built
again; an upgrade from 0015 drops only the global index; an id the store does not make never
reaches SQL (docs/storage.md, Text search)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy
from alembic import command
from scorelab_db import BACKENDS, database
from sqlalchemy import select

from core.records import ColumnMapping, DatasetItem, ResultQuery, ScorerOutcome, ScorerSpec
from core.storage import Store
from core.storage.schema import alembic_config
from core.storage.search_index import (
    SearchIndexer,
    build_postgres_index,
    drop_postgres_index,
    postgres_index_state,
)
from core.storage.tables import (
    DATASET_TRIGRAM_PREFIX,
    SEARCH_DATASETS,
    SEARCHED_TEXT_STATISTICS,
    TRIGRAM_INDEX,
)
from core.storage.tables import DatasetItemRow as Items
from core.storage.text_search import dataset_index_name, like_condition, literal_dataset_id

POSTGRES = [p for p in BACKENDS if p.id == "postgres"]
ITEMS = 300
RARE = 123
"""The one item holding "zebra crossing"."""
QUERY = ResultQuery(score_range=(0.1, 0.9), search="Paris River", page_size=1_000)


@pytest.fixture(params=BACKENDS)
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    with database(request.param, tmp_path) as made:
        yield made


@pytest.fixture
def store(url: str) -> Iterator[Store]:
    opened = Store(url)
    yield opened
    opened.close()


def _experiment(store: Store, items: int = ITEMS) -> tuple[str, str]:
    dataset = store.save_dataset(
        name="d",
        file_name="d.csv",
        format="csv",
        fingerprint="p" * 64,
        columns=["id", "question", "answer"],
        mapping=ColumnMapping(id="id", input="question", output="answer"),
        items=[
            [
                DatasetItem(
                    id=f"q{n}",
                    input=f"About item {n}"
                    + (" near the PARIS river" if n % 7 == 3 else "")
                    + (" by a zebra crossing" if n == RARE else ""),
                    output=f"Answer {n}.",
                )
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
            ScorerOutcome(item_id=f"q{n}", scorer_id="s", status="success", score=n / items)
            for n in range(items)
        ],
    )
    store.finish_experiment(info.id, "completed")
    return dataset.id, info.id


EXPECTED = [f"q{n}" for n in range(ITEMS) if n % 7 == 3 and 0.1 <= n / ITEMS <= 0.9]


def _answer(store: Store, experiment_id: str) -> tuple[list[str], int]:
    page = store.result_page(experiment_id, QUERY)
    return [row.item_id for row in page.rows], page.total


def _trigram_indexes(store: Store) -> list[str]:
    """The trigram indexes of the item table (this test's schema on PostgreSQL)."""
    with store.engine.connect() as connection:
        if store.engine.dialect.name == "sqlite":
            names = connection.exec_driver_sql("PRAGMA index_list(dataset_items)").all()
            return [row[1] for row in names if row[1].startswith(DATASET_TRIGRAM_PREFIX)]
        return list(
            connection.exec_driver_sql(
                "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() "
                "AND tablename = 'dataset_items' AND indexname LIKE %s",
                ("ix\\_trgm\\_%",),
            ).scalars()
        )


def _state(store: Store, dataset_id: str) -> str | None:
    with store.engine.connect() as connection:
        return postgres_index_state(connection, dataset_id)


def test_an_import_makes_no_trigram_index(store: Store) -> None:
    dataset_id, _ = _experiment(store)
    assert _trigram_indexes(store) == []
    if store.engine.dialect.name == "sqlite":  # nor fills SQLite's (revision 0015)
        with store.engine.connect() as connection:
            indexed = connection.exec_driver_sql(f"SELECT count(*) FROM {SEARCH_DATASETS}")
            assert indexed.scalar_one() == 0
    else:
        assert _state(store, dataset_id) == "missing"


@pytest.mark.parametrize("url", POSTGRES, indirect=True)
def test_searches_before_during_and_after_the_build_answer_the_same(store: Store) -> None:
    dataset_id, experiment_id = _experiment(store)
    indexer = SearchIndexer(lambda: store.engine, sync_limit=10)  # 300 items: "large"
    store.results.search_indexer = indexer
    before = _answer(store, experiment_id)  # starts the build too
    assert before == (EXPECTED, len(EXPECTED))
    assert indexer.wait(dataset_id, timeout_s=60)
    _drop(store, dataset_id)
    # A transaction holding an old snapshot: a concurrent build waits for it before its index
    # is valid, which holds the build half way (its index there, INVALID) while we search.
    holder = store.engine.connect()
    holder.exec_driver_sql("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
    holder.exec_driver_sql("SELECT count(*) FROM datasets").scalar_one()
    try:
        assert store.prepare_search(experiment_id) is True
        _wait_for(lambda: _state(store, dataset_id) == "invalid")
        assert indexer.building(dataset_id)
        assert _answer(store, experiment_id) == before  # during: the same statements scan
    finally:
        holder.rollback()
        holder.close()
    assert indexer.wait(dataset_id, timeout_s=60)
    assert _state(store, dataset_id) == "valid"
    assert _trigram_indexes(store) == [dataset_index_name(dataset_id)]
    assert _answer(store, experiment_id) == before  # after: from the index
    assert store.prepare_search(experiment_id) is False  # built: nothing more to do


@pytest.mark.parametrize("url", POSTGRES, indirect=True)
def test_the_built_index_serves_a_rare_needle_in_every_statement_the_page_sends(
    store: Store,
) -> None:
    dataset_id, experiment_id = _experiment(store, 2_000)
    assert build_postgres_index(store.engine, dataset_id)
    rare = "Zebra Crossing"  # one item of 2,000 (a common needle's page reads items in order)
    for query in (ResultQuery(search=rare), ResultQuery(search=rare, score_range=(0.0, 0.5))):
        sent = _sent(store, experiment_id, query)
        assert sent and all(f"dataset_id = '{dataset_id}'" in s for s, _ in sent)
        plans = _plans(store, sent)
        used = [f"Bitmap Index Scan on {dataset_index_name(dataset_id)}" in p for p in plans]
        assert all(used), plans


def _sent(store: Store, experiment_id: str, query: ResultQuery) -> list[tuple[str, object]]:
    """The statements (with their parameters) of the page that search the texts."""
    sent: list[tuple[str, object]] = []

    def record(
        conn: object, cursor: object, statement: str, parameters: object, *_: object
    ) -> None:
        if "ILIKE" in statement.upper():
            sent.append((statement, parameters))

    sqlalchemy.event.listen(store.engine, "before_cursor_execute", record)
    try:
        assert store.result_page(experiment_id, query).rows
    finally:
        sqlalchemy.event.remove(store.engine, "before_cursor_execute", record)
    return sent


def _plans(store: Store, sent: list[tuple[str, object]]) -> list[str]:
    plans = []
    with store.engine.connect() as connection:
        connection.exec_driver_sql("ANALYZE")
        # 2,000 items are cheaper scanned: without sequential scans the plan shows whether
        # the page's own statements can be answered from the dataset's partial index.
        connection.exec_driver_sql("SET enable_seqscan = off")
        for statement, parameters in sent:
            plan = connection.exec_driver_sql(f"EXPLAIN {statement}", parameters).all()
            plans.append("\n".join(row[0] for row in plan))
    return plans


@pytest.mark.parametrize("url", POSTGRES, indirect=True)
def test_the_planner_estimates_a_needles_matches_from_the_texts_statistics(store: Store) -> None:
    # The planner takes no statistics from a partial index: without revision 0016's extended
    # statistics a needle in one item of seven was estimated at a handful of matches, and the
    # page read them all through the index and sorted them (5 s at 1 M items).
    dataset_id, _ = _experiment(store, 2_000)
    assert build_postgres_index(store.engine, dataset_id)
    matching = len([n for n in range(2_000) if n % 7 == 3])
    items = Items.__table__
    condition = like_condition("Paris River", "postgresql", dataset_id)
    searched = select(items.c.item_id).where(condition)
    with store.engine.connect() as connection:
        connection.exec_driver_sql("ANALYZE dataset_items")
        compiled = searched.compile(connection)
        plan = connection.exec_driver_sql(
            f"EXPLAIN (FORMAT JSON) {compiled}", compiled.params
        ).scalar_one()
        assert len(connection.execute(searched).all()) == matching
    estimated = plan[0]["Plan"]["Plan Rows"]
    assert matching / 3 <= estimated <= matching * 3, plan


@pytest.mark.parametrize("url", POSTGRES, indirect=True)
def test_deleting_a_dataset_drops_its_index_and_no_other(store: Store) -> None:
    kept, _ = _experiment(store)
    deleted, _ = _experiment(store)
    assert build_postgres_index(store.engine, kept)
    assert build_postgres_index(store.engine, deleted)
    assert len(_trigram_indexes(store)) == 2
    store.delete_dataset(deleted)
    assert _trigram_indexes(store) == [dataset_index_name(kept)]
    assert not build_postgres_index(store.engine, deleted)  # no index for a dataset gone
    assert _trigram_indexes(store) == [dataset_index_name(kept)]


@pytest.mark.parametrize("url", POSTGRES, indirect=True)
def test_an_interrupted_builds_invalid_index_is_built_again(store: Store) -> None:
    dataset_id, experiment_id = _experiment(store)
    expected = _answer(store, experiment_id)
    _wait_for(lambda: not store.results.search_indexer.building(dataset_id))
    _drop(store, dataset_id)
    holder = store.engine.connect()
    holder.exec_driver_sql("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
    holder.exec_driver_sql("SELECT count(*) FROM datasets").scalar_one()
    builder = store.engine.connect().execution_options(isolation_level="AUTOCOMMIT")
    pid = builder.exec_driver_sql("SELECT pg_backend_pid()").scalar_one()
    failed: list[BaseException] = []
    statement = (
        f"CREATE INDEX CONCURRENTLY {dataset_index_name(dataset_id)} ON dataset_items "
        f"(item_id) WHERE dataset_id = '{dataset_id}'"
    )
    interrupted = threading.Thread(target=_run_expecting_cancel, args=(builder, statement, failed))
    interrupted.start()
    try:
        _wait_for(lambda: _state(store, dataset_id) == "invalid")
        with store.engine.connect() as connection:
            connection.exec_driver_sql("SELECT pg_cancel_backend(%s)", (pid,))
        interrupted.join(30)
    finally:
        holder.rollback()
        holder.close()
        builder.close()
    assert failed and "cancel" in str(failed[0]).lower()
    assert _state(store, dataset_id) == "invalid"  # the leftover
    assert build_postgres_index(store.engine, dataset_id)
    assert _state(store, dataset_id) == "valid"
    assert _trigram_indexes(store) == [dataset_index_name(dataset_id)]
    assert _answer(store, experiment_id) == expected


def _run_expecting_cancel(
    connection: sqlalchemy.Connection, statement: str, failed: list[BaseException]
) -> None:
    try:
        connection.exec_driver_sql(statement)
    except sqlalchemy.exc.DBAPIError as error:
        failed.append(error)


@pytest.mark.parametrize("url", POSTGRES, indirect=True)
def test_a_build_under_way_elsewhere_is_not_started_twice(store: Store) -> None:
    dataset_id, _ = _experiment(store)
    _wait_for(lambda: not store.results.search_indexer.building(dataset_id))
    lock = store.engine.connect()
    try:  # another process's build holds the dataset's advisory lock
        key = int(dataset_id[-8:], 16) - 2**31
        assert lock.exec_driver_sql("SELECT pg_try_advisory_lock(%s, %s)", (0x5C0E, key)).scalar()
        assert not build_postgres_index(store.engine, dataset_id)
        assert _state(store, dataset_id) == "missing"
        lock.exec_driver_sql("SELECT pg_advisory_unlock(%s, %s)", (0x5C0E, key))
    finally:
        lock.close()
    assert build_postgres_index(store.engine, dataset_id)
    assert build_postgres_index(store.engine, dataset_id)  # valid: left as it is


@pytest.mark.parametrize("url", POSTGRES, indirect=True)
def test_an_upgrade_from_0015_keeps_every_item_and_answer_and_drops_the_global_index(
    url: str,
) -> None:
    engine = sqlalchemy.create_engine(url)
    with engine.begin() as connection:
        command.upgrade(alembic_config(connection), "0015")
        connection.exec_driver_sql(
            "INSERT INTO datasets (id, name, file_name, format, fingerprint, item_count, "
            "columns, mapping, created_at) VALUES (%s, 'old', 'old.csv', 'csv', %s, 50, "
            "%s, %s, now())",
            (OLD, "f" * 64, '["id", "q", "a"]', '{"id": "id", "input": "q", "output": "a"}'),
        )
        connection.exec_driver_sql(
            "INSERT INTO dataset_items (dataset_id, position, item_id, input, output) "
            "VALUES (%s, %s, %s, %s, '\"answer\"')",
            [
                (OLD, n, f"o{n}", f'"old text {n}{" Paris" if n % 5 == 0 else ""}"')
                for n in range(50)
            ],
        )
        assert _global_index(connection)
        before = _searched(connection, "paris")
    engine.dispose()
    store = Store(url)  # upgrades to head
    try:
        with store.engine.connect() as connection:
            assert not _global_index(connection)
            assert _searched(connection, "paris") == before == [f"o{n}" for n in range(0, 50, 5)]
            assert connection.exec_driver_sql("SELECT count(*) FROM dataset_items").scalar() == 50
        assert _trigram_indexes(store) == []
        assert _statistics(connection_url=url) == {SEARCHED_TEXT_STATISTICS}
        assert build_postgres_index(store.engine, OLD)  # built lazily, as a new dataset's
        with store.engine.connect() as connection:
            assert _searched(connection, "paris") == before
    finally:
        store.close()
    engine = sqlalchemy.create_engine(url)
    with engine.begin() as connection:
        command.downgrade(alembic_config(connection), "0015")
        assert _global_index(connection)
        assert _searched(connection, "paris") == before
    engine.dispose()
    assert dataset_index_name(OLD) not in _names(url)
    assert _statistics(connection_url=url) == set()


def _statistics(connection_url: str) -> set[str]:
    """The extended statistics objects of this test's schema."""
    engine = sqlalchemy.create_engine(connection_url)
    with engine.connect() as connection:
        names = connection.exec_driver_sql(
            "SELECT stxname FROM pg_statistic_ext "
            "WHERE stxnamespace = current_schema()::regnamespace"
        ).scalars()
        found = set(names)
    engine.dispose()
    return found


OLD = "0123456789abcdef0123456789abcdef"


def _names(url: str) -> set[str]:
    engine = sqlalchemy.create_engine(url)
    with engine.connect() as connection:
        names = connection.exec_driver_sql(
            "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema()"
        ).scalars()
        found = set(names)
    engine.dispose()
    return found


def _global_index(connection: sqlalchemy.Connection) -> bool:
    found = connection.exec_driver_sql("SELECT to_regclass(%s)", (TRIGRAM_INDEX,)).scalar()
    return found is not None


def _searched(connection: sqlalchemy.Connection, needle: str) -> list[str]:
    items = Items.__table__
    found = select(items.c.item_id).where(
        items.c.dataset_id == OLD, like_condition(needle, "postgresql", OLD)
    )
    return list(connection.execute(found.order_by(items.c.position)).scalars())


HOSTILE = [
    "x'; DROP TABLE datasets; --",
    "0123456789abcdef0123456789abcdeF",
    "0123456789abcdef0123456789abcdef'",
    "mastra-d-0123456789abcdef0123456789abcde",
    "",
    "../0123456789abcdef0123456789abcdef",
]


@pytest.mark.parametrize("hostile", HOSTILE)
def test_an_id_the_store_does_not_make_never_reaches_sql(store: Store, hostile: str) -> None:
    assert literal_dataset_id(hostile) is None and dataset_index_name(hostile) is None
    condition = like_condition("paris", "postgresql", hostile)
    compiled = str(condition.compile(compile_kwargs={"literal_binds": False}))
    assert "dataset_id" not in compiled  # the search keeps its scan, the id stays a parameter
    assert not build_postgres_index(store.engine, hostile)
    with store.engine.begin() as connection:
        assert postgres_index_state(connection, hostile) is None
        drop_postgres_index(connection, hostile)
        assert connection.exec_driver_sql("SELECT count(*) FROM datasets").scalar() == 0
    assert _trigram_indexes(store) == []


def test_the_ids_the_store_makes_are_inlined() -> None:
    for made in ("0123456789abcdef0123456789abcdef", "mastra-d-0123456789abcdef0123456789abcdef"):
        assert literal_dataset_id(made) == f"'{made}'"
        name = dataset_index_name(made)
        assert name is not None and len(name) < 63  # PostgreSQL's longest name


def _drop(store: Store, dataset_id: str) -> None:
    """The dataset's index dropped (the indexer told it is not whole any more)."""
    with store.engine.begin() as connection:
        drop_postgres_index(connection, dataset_id)
    store.results.search_indexer._whole.discard(dataset_id)


def _wait_for(condition: object, timeout_s: float = 30.0) -> None:
    assert callable(condition)
    until = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < until, "timed out waiting"
        time.sleep(0.02)
