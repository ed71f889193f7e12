"""What the foreign key `scorer_results.experiment_id -> experiments.id` guaranteed, kept by the
store now that PostgreSQL has none (revision 0017; docs/storage.md, "The write path"), on SQLite
and (when available) PostgreSQL: results for an unknown experiment are refused naming it,
nothing written; deleting an experiment or a dataset takes its results, also those of a batch
being written at the same time; the revision's upgrade and downgrade keep the stored rows."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy
from alembic import command
from alembic.script import ScriptDirectory
from scorelab_db import BACKENDS, database

from core.records import ColumnMapping, DatasetItem, ScorerOutcome, ScorerSpec
from core.storage import NotFoundError, StorageError, Store, result_rows
from core.storage._rows import _score_row
from core.storage.schema import alembic_config, head_revisions, revisions
from core.storage.tables import ExperimentRow


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


def new_dataset(store: Store, items: int = 4) -> str:
    return store.save_dataset(
        name="set",
        file_name="set.csv",
        format="csv",
        fingerprint="f" * 64,
        columns=["input", "output"],
        mapping=ColumnMapping(input="input", output="output"),
        items=[DatasetItem(id=f"i{n}", input=f"q{n}", output=f"a{n}") for n in range(items)],
    ).id


def new_experiment(store: Store, dataset_id: str) -> str:
    return store.create_experiment(
        name="exp",
        dataset_id=dataset_id,
        scorers=[ScorerSpec(scorer_id="a")],
        scorer_ids=["a"],
        judge_model=None,
        api_base=None,
        judge_settings={},
        concurrency=1,
    ).id


def success(item_id: str) -> ScorerOutcome:
    return ScorerOutcome(item_id=item_id, scorer_id="a", status="success", score=0.5)


def all_result_ids(store: Store) -> list[str]:
    with store.engine.connect() as connection:
        query = "SELECT experiment_id FROM scorer_results ORDER BY experiment_id"
        return [row[0] for row in connection.exec_driver_sql(query)]


def result_keys(store: Store) -> list[tuple[str, str]]:
    with store.engine.connect() as connection:
        query = "SELECT experiment_id, item_id FROM scorer_results ORDER BY experiment_id, item_id"
        return [(row[0], row[1]) for row in connection.exec_driver_sql(query)]


def result_foreign_keys(engine: sqlalchemy.Engine) -> list[dict[str, Any]]:
    # A connection of its own: SQLite's PRAGMA foreign_key_list answers from the connection's
    # cached schema, which a pooled connection opened before the upgrade may lack.
    fresh = sqlalchemy.create_engine(engine.url)
    try:
        keys = sqlalchemy.inspect(fresh).get_foreign_keys("scorer_results")
    finally:
        fresh.dispose()
    return [key for key in keys if key["referred_table"] == "experiments"]


def test_results_for_an_unknown_experiment_are_refused_naming_it(store: Store) -> None:
    known = new_experiment(store, new_dataset(store))
    with pytest.raises(NotFoundError, match="'no-such-experiment'"):
        store.add_results("no-such-experiment", [success("i0"), success("i1")])
    with pytest.raises(NotFoundError, match="'no-such-experiment'"):
        store.add_rows("no-such-experiment", [_score_row(success("i0"))])
    assert all_result_ids(store) == []
    # A batch of two experiments, one of them unknown: refused whole, the known one's rows too.
    mixed = [(known, *_score_row(success("i0"))), ("gone", *_score_row(success("i1")))]
    with pytest.raises(NotFoundError, match="'gone'"), store.engine.begin() as connection:
        result_rows.insert_rows(connection, mixed)
    assert all_result_ids(store) == []
    assert store.add_results(known, [success("i0"), success("i1")]) == 2
    assert all_result_ids(store) == [known, known]


def test_results_for_a_deleted_experiment_are_refused(store: Store) -> None:
    experiment_id = new_experiment(store, new_dataset(store))
    store.add_results(experiment_id, [success("i0")])
    store.delete_experiment(experiment_id)
    with pytest.raises(NotFoundError, match=repr(experiment_id)):
        store.add_results(experiment_id, [success("i1")])
    assert all_result_ids(store) == []


def test_deleting_an_experiment_or_a_dataset_takes_its_results_only(store: Store) -> None:
    first_set, second_set = new_dataset(store), new_dataset(store)
    first, second, third = (
        new_experiment(store, first_set),
        new_experiment(store, first_set),
        new_experiment(store, second_set),
    )
    for experiment_id in (first, second, third):
        store.add_results(experiment_id, [success(f"i{n}") for n in range(4)])
    store.delete_experiment(first)
    assert sorted(set(all_result_ids(store))) == sorted([second, third])
    store.delete_dataset(first_set)
    assert all_result_ids(store) == [third] * 4


def test_postgresql_has_no_results_key_and_sqlite_keeps_its_own(store: Store) -> None:
    keys = result_foreign_keys(store.engine)
    if store.engine.dialect.name == "postgresql":
        assert keys == []
    else:  # still enforced by SQLite itself
        assert [key["constrained_columns"] for key in keys] == [["experiment_id"]]
        with pytest.raises(sqlalchemy.exc.IntegrityError), store.engine.begin() as connection:
            statement = (
                "INSERT INTO scorer_results (experiment_id, item_id, scorer_id, duration_ms, "
                "judge_calls, judge_attempts) VALUES ('gone', 'i0', 'a', 0, 0, 0)"
            )
            connection.exec_driver_sql(statement)


def waiting_for_a_lock(engine: sqlalchemy.Engine, statement_start: str) -> bool:
    """Whether a backend whose statement starts so waits for a lock (pg_stat_activity)."""
    query = (
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
        "AND wait_event_type = 'Lock' AND query LIKE %(start)s"
    )
    with engine.connect() as connection:
        found = connection.exec_driver_sql(query, {"start": f"{statement_start}%"}).scalar_one()
    return bool(found)


def wait_until(condition: Any, what: str) -> None:
    """Poll `condition` (no timing asserted: the bound only ends a hung test)."""
    event = threading.Event()
    for _ in range(6000):
        if condition():
            return
        event.wait(0.01)
    raise AssertionError(f"never saw: {what}")


def postgres_only(store: Store) -> None:
    if store.engine.dialect.name != "postgresql":
        pytest.skip("SQLite has one writer at a time and keeps its foreign key")


def test_a_deletion_waits_for_a_batch_being_written_then_takes_it(store: Store) -> None:
    postgres_only(store)
    experiment_id = new_experiment(store, new_dataset(store))
    store.add_results(experiment_id, [success("i0")])
    errors: list[BaseException] = []

    def delete() -> None:
        try:
            store.delete_experiment(experiment_id)
        except BaseException as error:  # reported by the test's thread
            errors.append(error)

    deleter = threading.Thread(target=delete)
    with store.engine.connect() as writer:
        with writer.begin():
            rows = [(experiment_id, *_score_row(success(f"i{n}"))) for n in (1, 2, 3)]
            assert result_rows.insert_rows(writer, rows) == 3
            deleter.start()
            wait_until(  # whichever of its statements waits: the batch's rows must go too
                lambda: waiting_for_a_lock(store.engine, ""),
                "the deletion waiting for the batch's lock",
            )
        deleter.join()
    assert errors == []
    assert all_result_ids(store) == []
    assert [e.id for e in store.list_experiments()] == []


def test_a_batch_waits_for_a_deletion_then_is_refused(store: Store) -> None:
    postgres_only(store)
    experiment_id = new_experiment(store, new_dataset(store))
    errors: list[BaseException] = []

    def write() -> None:
        try:
            store.add_results(experiment_id, [success("i0"), success("i1")])
        except BaseException as error:  # reported by the test's thread
            errors.append(error)

    writer = threading.Thread(target=write)
    table = ExperimentRow.__table__
    with store.engine.begin() as deleter:  # as delete_experiment does, held open here
        result_rows.lock_experiments(deleter, table.c.id == experiment_id)
        writer.start()
        wait_until(
            lambda: waiting_for_a_lock(store.engine, "SELECT experiments.id"),
            "the batch waiting for the deletion's lock",
        )
        deleter.execute(sqlalchemy.delete(table).where(table.c.id == experiment_id))
    writer.join()
    assert len(errors) == 1 and isinstance(errors[0], NotFoundError), errors
    assert repr(experiment_id) in str(errors[0])
    assert all_result_ids(store) == []


def this_revision() -> tuple[str, str]:
    """(revision 0017's id, the one before it), by what the revision drops, not by number (the
    number may change when revisions are merged)."""
    scripts = ScriptDirectory.from_config(alembic_config())
    for script in scripts.walk_revisions():
        if getattr(script.module, "FOREIGN_KEY", None) == "scorer_results_experiment_id_fkey":
            down = script.down_revision
            assert isinstance(down, str)
            return script.revision, down
    raise AssertionError("no revision drops the results' foreign key")


def test_the_revision_downgrades_and_upgrades_a_database_holding_results(url: str) -> None:
    store = Store(url)
    dataset_id = new_dataset(store)
    experiments = [new_experiment(store, dataset_id) for _ in range(2)]
    for experiment_id in experiments:
        store.add_results(experiment_id, [success(f"i{n}") for n in range(4)])
    stored = result_keys(store)
    postgres = store.engine.dialect.name == "postgresql"
    store.close()
    _, before = this_revision()
    engine = sqlalchemy.create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
    try:
        with engine.begin() as connection:
            command.downgrade(alembic_config(connection), before)
        assert revisions(engine) == {before}
        keys = result_foreign_keys(engine)
        assert [(key["constrained_columns"], key["referred_columns"]) for key in keys] == [
            (["experiment_id"], ["id"])
        ]
        if postgres:  # the key is back, and enforced
            with pytest.raises(sqlalchemy.exc.IntegrityError), engine.begin() as connection:
                connection.exec_driver_sql(
                    "INSERT INTO scorer_results (experiment_id, item_id, scorer_id, "
                    "duration_ms, judge_calls, judge_attempts) VALUES ('gone', 'i0', 'a', 0, 0, 0)"
                )
    finally:
        engine.dispose()
    store = Store(url)  # the store upgrades it again
    try:
        assert revisions(store.engine) == head_revisions()
        assert result_keys(store) == stored
        assert (result_foreign_keys(store.engine) == []) is postgres
        assert store.add_results(experiments[0], [success("i9")]) == 1
        with pytest.raises(NotFoundError, match="'gone'"):
            store.add_results("gone", [success("i0")])
    finally:
        store.close()


def test_a_mastra_import_into_an_unknown_experiment_is_refused(store: Store) -> None:
    from core.storage.mastra_shelf import add_scored_rows

    row = {"item_id": "i0", "scorer_id": "a", "score": 0.5, "reason_json": "null"}
    with pytest.raises(NotFoundError, match="'gone'"):
        add_scored_rows(store, "gone", [{**row, "result_json": "{}"}])
    assert all_result_ids(store) == []


def test_the_writer_process_reports_an_unknown_experiment_naming_it(store: Store) -> None:
    writer = store.detached()
    assert writer is not None  # a file or a server: a process of its own
    try:
        with pytest.raises(StorageError, match=r"NotFoundError: .*'gone'"):
            writer.add_rows("gone", [_score_row(success("i0"))])
        experiment_id = new_experiment(store, new_dataset(store))
        assert writer.add_rows(experiment_id, [_score_row(success("i0"))]) == 1  # still serving
    finally:
        writer.close()
    assert all_result_ids(store) == [experiment_id]
