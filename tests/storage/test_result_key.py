"""One stored result per (experiment, item, scorer), on SQLite and (when available) PostgreSQL:
racing writers store a pair once and never fail; revision 0003 repairs a database without the
key (keeping the latest row of each key); `reopen_experiment` lets one resumer in."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import sqlalchemy
from alembic import command
from scorelab_db import BACKENDS, database

from core.records import (
    ColumnMapping,
    DatasetItem,
    RunCounts,
    ScorerOutcome,
    ScorerSpec,
)
from core.run_results import JudgeUsage
from core.storage import Store
from core.storage.schema import alembic_config, head_revisions, revisions
from core.storage.tables import ExperimentRow, ScoreRow

RESUMABLE = ("interrupted", "cancelled", "budget_reached")


@pytest.fixture(params=BACKENDS)
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    with database(request.param, tmp_path) as database_url:
        yield database_url


@pytest.fixture
def store(url: str) -> Iterator[Store]:
    store = Store(url)
    try:
        yield store
    finally:
        store.close()


def new_experiment(store: Store, items: int = 4) -> str:
    dataset = store.save_dataset(
        name="set",
        file_name="set.csv",
        format="csv",
        fingerprint="f" * 64,
        columns=["input", "output"],
        mapping=ColumnMapping(input="input", output="output"),
        items=[DatasetItem(id=f"i{n}", input=f"q{n}", output=f"a{n}") for n in range(items)],
    )
    return store.create_experiment(
        name="exp",
        dataset_id=dataset.id,
        scorers=[ScorerSpec(scorer_id="a")],
        scorer_ids=["a"],
        judge_model=None,
        api_base=None,
        judge_settings={},
        concurrency=1,
    ).id


def success(item_id: str, score: float = 0.5, tokens: int = 1) -> ScorerOutcome:
    return ScorerOutcome(
        item_id=item_id,
        scorer_id="a",
        status="success",
        score=score,
        usage=JudgeUsage(input_tokens=tokens),
        judge_calls=1,
        judge_attempts=1,
    )


def rows(store: Store, experiment_id: str) -> list[tuple[str, str, float]]:
    table = ScoreRow.__table__
    query = (
        sqlalchemy.select(table.c.item_id, table.c.scorer_id, table.c.score)
        .where(table.c.experiment_id == experiment_id)
        .order_by(table.c.item_id)
    )
    with store.engine.connect() as connection:
        return [tuple(row) for row in connection.execute(query)]


def test_a_pair_stored_again_is_skipped_not_an_error(store: Store) -> None:
    experiment_id = new_experiment(store)
    assert store.add_results(experiment_id, [success("i0", 0.1), success("i1", 0.2)]) == 2
    # The same pairs again with other scores, and one new pair: only the new one is written
    # (and counted: each driver's executemany sums its rows written, psycopg's too).
    again = [success("i0", 0.9), success("i1", 0.9), success("i2", 0.3)]
    assert store.add_results(experiment_id, again) == 1
    assert rows(store, experiment_id) == [("i0", "a", 0.1), ("i1", "a", 0.2), ("i2", "a", 0.3)]
    counts = store.get_experiment(experiment_id).counts
    assert counts.succeeded == 3 and counts.usage.input_tokens == 3


def test_a_batch_holding_a_pair_twice_stores_it_once(store: Store) -> None:
    """On PostgreSQL a batch is COPYed straight into the table; the unique key refuses this
    one, and it is written again through the staging table, skipping the second copy (the
    first in key order wins, as `ON CONFLICT DO NOTHING` keeps the first it meets)."""
    experiment_id = new_experiment(store)
    assert store.add_results(experiment_id, [success("i0", 0.1), success("i1", 0.2)]) == 2
    twice = [success("i2", 0.3), success("i3", 0.4), success("i3", 0.4)]
    assert store.add_results(experiment_id, twice) == 2
    stored = rows(store, experiment_id)
    assert stored == [("i0", "a", 0.1), ("i1", "a", 0.2), ("i2", "a", 0.3), ("i3", "a", 0.4)]
    assert store.get_experiment(experiment_id).counts.succeeded == 4


def test_two_writers_storing_the_same_pairs_leave_one_row_per_pair(url: str) -> None:
    first, second = Store(url), Store(url)
    try:
        experiment_id = new_experiment(first, items=0)
        outcomes = [success(f"i{n}", tokens=n) for n in range(2_000)]
        start = threading.Barrier(2)
        written: list[int] = []
        errors: list[BaseException] = []

        def write(store: Store, batch: list[ScorerOutcome]) -> None:
            start.wait()
            try:
                written.append(store.add_results(experiment_id, batch))
            except BaseException as error:  # the test fails below with it
                errors.append(error)

        # Overlapping halves in opposite orders: each writer meets the other's rows.
        threads = [
            threading.Thread(target=write, args=(first, outcomes[:1_500])),
            threading.Thread(target=write, args=(second, outcomes[500:][::-1])),
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        assert errors == []
        if first.engine.dialect.name == "sqlite":  # psycopg counts no batch: see add_results
            assert sum(written) == 2_000  # each pair written by exactly one of them
        stored = rows(first, experiment_id)
        assert len(stored) == len({(i, s) for i, s, _ in stored}) == 2_000
        assert first.get_experiment(experiment_id).counts.usage.input_tokens == sum(range(2_000))
    finally:
        first.close()
        second.close()


def test_stored_pairs_names_the_pairs_with_a_result(store: Store) -> None:
    experiment_id = new_experiment(store)
    store.add_results(experiment_id, [success("i0"), success("i2")])
    other = new_experiment(store)
    store.add_results(other, [success("i1")])
    ids = [f"i{n}" for n in range(1_200)]  # more than one IN (...) page
    assert store.stored_pairs(experiment_id, ids) == {("i0", "a"), ("i2", "a")}
    assert store.stored_pairs(experiment_id, []) == set()


def without_the_key(url: str) -> None:
    """Take the database back to revision 0002 with a `scorer_results` lacking its unique
    key, as a table made by hand or restored without its constraints would be."""
    engine = sqlalchemy.create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
    with engine.begin() as connection:  # the later revisions undone: the columns of 0002
        command.downgrade(alembic_config(connection), "0002")
    keyless = sqlalchemy.MetaData()
    reflected = sqlalchemy.Table("scorer_results", sqlalchemy.MetaData(), autoload_with=engine)
    rebuilt = sqlalchemy.Table("scorer_results", keyless, *[c._copy() for c in reflected.columns])
    for index in reflected.indexes:  # the plain indexes of 0002 stay; no unique one
        if not index.unique:
            columns = [rebuilt.c[column.name] for column in index.columns]
            sqlalchemy.Index(index.name, *columns)
    with engine.begin() as connection:
        connection.exec_driver_sql("DROP TABLE scorer_results")
        keyless.create_all(connection)
    engine.dispose()


def test_revision_0003_keeps_the_latest_row_of_each_key_and_enforces_it(url: str) -> None:
    store = Store(url)
    experiment_id = new_experiment(store)
    store.close()
    without_the_key(url)
    engine = sqlalchemy.create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
    table = sqlalchemy.Table("scorer_results", sqlalchemy.MetaData(), autoload_with=engine)
    base = {"experiment_id": experiment_id, "scorer_id": "a", "duration_ms": 1}
    base.update(judge_calls=0, judge_attempts=0)
    with engine.begin() as connection:  # written in this order: ids ascend
        for item_id, score in (("i0", 0.1), ("i1", 0.7), ("i0", 0.2), ("i0", 0.3), ("i1", 0.8)):
            row = {**base, "item_id": item_id, "score": score}
            connection.execute(sqlalchemy.insert(table), [row])
        connection.execute(sqlalchemy.insert(table), [{**base, "item_id": "i2", "score": 0.5}])
    engine.dispose()

    store = Store(url)
    try:
        assert revisions(store.engine) == head_revisions()
        assert rows(store, experiment_id) == [("i0", "a", 0.3), ("i1", "a", 0.8), ("i2", "a", 0.5)]
        indexes = sqlalchemy.inspect(store.engine).get_indexes("scorer_results")
        assert any(i["name"] == "uq_scorer_results_key" and i["unique"] for i in indexes)
        with pytest.raises(sqlalchemy.exc.IntegrityError), store.engine.begin() as connection:
            connection.execute(sqlalchemy.insert(table), [{**base, "item_id": "i2", "score": 1}])
        store.add_results(experiment_id, [success("i2", 0.9), success("i3")])
        assert store.get_experiment(experiment_id).counts.succeeded == 4
        assert ("i2", "a", 0.5) in rows(store, experiment_id)
    finally:
        store.close()


def test_a_database_with_the_key_gets_no_second_one(store: Store) -> None:
    indexes = sqlalchemy.inspect(store.engine).get_indexes("scorer_results")
    assert "uq_scorer_results_key" not in {index["name"] for index in indexes}


def set_columns(store: Store, experiment_id: str, **values: object) -> None:
    table = ExperimentRow.__table__
    with store.engine.begin() as connection:
        connection.execute(
            sqlalchemy.update(table).where(table.c.id == experiment_id).values(**values)
        )


def test_reopen_lets_one_resumer_in_and_restarts_the_failed_counts(store: Store) -> None:
    experiment_id = new_experiment(store)
    store.add_results(experiment_id, [success("i0", tokens=4)])
    failed = RunCounts(failed=2, usage=JudgeUsage(input_tokens=9), judge_calls=3)
    store.finish_experiment(
        experiment_id, "cancelled", RunCounts(total=4, succeeded=1) + failed, failed=failed
    )
    assert store.reopen_experiment(experiment_id, RESUMABLE)
    assert not store.reopen_experiment(experiment_id, RESUMABLE)  # running now: taken
    info = store.get_experiment(experiment_id)
    assert info.status == "running" and info.finished_at is None and info.error is None
    assert (info.counts.total, info.counts.succeeded, info.counts.failed) == (4, 1, 0)
    assert info.counts.usage.input_tokens == 4 and info.counts.judge_calls == 1


@pytest.mark.parametrize("status", ["completed", "failed", "error", "running", "pending"])
def test_reopen_refuses_an_experiment_that_is_not_stopped_midway(store: Store, status: str) -> None:
    experiment_id = new_experiment(store)
    set_columns(store, experiment_id, status=status, heartbeat_at=datetime.now(UTC))
    assert not store.reopen_experiment(experiment_id, RESUMABLE)
    assert store.get_experiment(experiment_id).status == status


def test_reopen_takes_a_live_status_whose_heartbeat_is_stale(store: Store) -> None:
    experiment_id = new_experiment(store)
    set_columns(
        store, experiment_id, status="running", heartbeat_at=datetime.now(UTC) - timedelta(hours=1)
    )
    assert store.get_experiment(experiment_id).status == "interrupted"
    assert not store.reopen_experiment(experiment_id, ("cancelled",))
    assert store.reopen_experiment(experiment_id, RESUMABLE)
    assert store.get_experiment(experiment_id).status == "running"


def test_items_by_id_come_in_file_order(store: Store) -> None:
    experiment_id = new_experiment(store, items=3)
    dataset_id = store.get_experiment(experiment_id).dataset_id
    found = store.dataset_items_by_id(dataset_id, ["i2", "i0", "missing", "i2"])
    assert [item.id for item in found] == ["i0", "i2"] and found[0].input == "q0"


def test_unfinished_items_are_those_missing_a_scorers_result(store: Store) -> None:
    experiment_id = new_experiment(store, items=5)
    dataset_id = store.get_experiment(experiment_id).dataset_id
    both = [success(f"i{n}") for n in (0, 1, 3)]
    store.add_results(experiment_id, both)
    other = [o.model_copy(update={"scorer_id": "b"}) for o in both if o.item_id != "i1"]
    store.add_results(experiment_id, other)
    count, items = store.iter_unfinished_items(experiment_id, dataset_id, 2, page_size=1)
    assert count == 3 and [item.id for item in items] == ["i1", "i2", "i4"]
    count, items = store.iter_unfinished_items(experiment_id, dataset_id, 1)
    assert count == 2 and [item.id for item in items] == ["i2", "i4"]


@pytest.mark.parametrize("stopped_by", ["finished_at", "heartbeat_at"])
def test_a_resumed_experiments_duration_is_its_running_time(store: Store, stopped_by: str) -> None:
    # Ran 10 s, then sat cancelled (or crashed, last seen by its heartbeat) for 90 s.
    experiment_id = new_experiment(store)
    now = datetime.now(UTC)
    stop = {"finished_at": now - timedelta(seconds=90)} if stopped_by == "finished_at" else {}
    set_columns(
        store,
        experiment_id,
        status="cancelled" if stop else "running",
        started_at=now - timedelta(seconds=100),
        heartbeat_at=now - timedelta(seconds=90),
        **stop,
    )
    assert store.reopen_experiment(experiment_id, RESUMABLE)
    store.finish_experiment(experiment_id, "completed", RunCounts(total=4, succeeded=4))
    info = store.get_experiment(experiment_id)
    assert info.started_at is not None and info.finished_at is not None
    ran = (info.finished_at - info.started_at).total_seconds()
    assert 10 <= ran < 20  # not the 100 s since it first started
