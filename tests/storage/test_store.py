"""The store, on SQLite and (when available) PostgreSQL: datasets whole or nothing, experiments,
successful results only, per-scorer means in SQL."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import sqlalchemy
from scorelab_db import BACKENDS, database

from core.records import (
    ColumnMapping,
    DatasetItem,
    RunCounts,
    ScorerOutcome,
    ScorerSpec,
)
from core.run_results import JudgeUsage
from core.storage import NotFoundError, StorageError, Store, _rows, default_database_url
from core.storage.tables import ExperimentRow

MAPPING = ColumnMapping(input="input", output="output", metadata=["tag"])


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    with database(request.param, tmp_path) as url:
        store = Store(url)
        try:
            yield store
        finally:
            store.close()


def make_items(count: int) -> list[DatasetItem]:
    return [
        DatasetItem(
            id=f"i{n}",
            input=[{"role": "user", "content": f"q{n}"}],
            output=f"a{n} – ünïcode",
            ground_truth=None if n % 2 else f"t{n}",
            metadata={"tag": n},
        )
        for n in range(count)
    ]


def save(store: Store, items: list[DatasetItem], name: str = "set", fingerprint: str = "f" * 64):
    return store.save_dataset(
        name=name,
        file_name=f"{name}.jsonl",
        format="jsonl",
        fingerprint=fingerprint,
        columns=["input", "output", "tag"],
        mapping=MAPPING,
        items=items,
    )


def experiment(store: Store, dataset_id: str, scorer_ids=("a", "b")):  # type: ignore[no-untyped-def]
    return store.create_experiment(
        name="exp",
        dataset_id=dataset_id,
        scorers=[ScorerSpec(scorer_id=s) for s in scorer_ids],
        scorer_ids=list(scorer_ids),
        judge_model="openai/gpt-4o-mini",
        api_base="http://127.0.0.1:1/v1",
        judge_settings={"temperature": 0},
        concurrency=4,
    )


def success(item_id: str, scorer_id: str, score: float | None, tokens: int = 0) -> ScorerOutcome:
    return ScorerOutcome(
        item_id=item_id,
        scorer_id=scorer_id,
        status="success",
        score=score,
        reason="why",
        result={"runId": "r", "score": score, "judge": {"generateScore": {"executions": []}}},
        duration_ms=3,
        usage=JudgeUsage(input_tokens=tokens, total_tokens=tokens),
        judge_calls=1,
        judge_attempts=1,
    )


def test_dataset_round_trip(store: Store) -> None:
    items = make_items(3)
    info = save(store, items)
    assert info.item_count == 3 and info.mapping == MAPPING
    assert store.dataset_items(info.id) == items
    assert store.get_dataset(info.id) == info
    assert [d.id for d in store.list_datasets()] == [info.id]
    assert store.find_dataset("f" * 64) == info
    assert store.find_dataset("0" * 64) is None


def test_bare_numbers_and_values_come_back_as_they_were(store: Store) -> None:
    """SQLite gives a JSON column numeric affinity: a bare number is stored as a number, and
    the items read for a run (iter_dataset_items) must still give it back as it was."""
    items = [
        DatasetItem(id="n", input="q", output=42, ground_truth=1.5, metadata={}),
        DatasetItem(id="b", input=True, output="42", ground_truth=[1, "x"], metadata={"k": 0}),
    ]
    info = save(store, items)
    assert store.dataset_items(info.id) == items
    assert list(store.iter_dataset_items(info.id)) == items


def test_a_dataset_is_stored_whole_or_not_at_all(store: Store) -> None:
    items = make_items(3)
    duplicated = [*items, items[0]]  # the unique (dataset, item id) constraint fails
    with pytest.raises(StorageError, match="Could not save the dataset"):
        save(store, duplicated)
    assert store.list_datasets() == []


def test_unknown_ids(store: Store) -> None:
    with pytest.raises(NotFoundError, match="No dataset with id 'nope'"):
        store.dataset_items("nope")
    with pytest.raises(NotFoundError, match="No experiment with id 'nope'"):
        store.get_experiment("nope")
    with pytest.raises(NotFoundError):
        store.update_experiment_progress("nope", RunCounts())


def test_experiment_lifecycle_and_means_in_sql(store: Store) -> None:
    dataset = save(store, make_items(2))
    info = experiment(store, dataset.id)
    assert (info.status, info.total_items, info.counts.total) == ("pending", 2, 4)
    assert info.dataset_fingerprint == dataset.fingerprint and info.dataset_name == "set"
    store.add_results(info.id, [success("i0", "a", 1.0, 5), success("i1", "a", 0.5, 7)])
    store.add_results(info.id, [success("i0", "b", None)])  # a not-scorable run: no score
    counts = RunCounts(
        total=4,
        succeeded=3,
        failed=1,
        judge_calls=4,
        judge_attempts=5,
        usage=JudgeUsage(
            input_tokens=12,
            output_tokens=3,
            total_tokens=15,
            reasoning_tokens=1,
            cached_input_tokens=2,
        ),
    )
    # The failed run's share of the judge totals (the successes' share is in their results).
    failed = RunCounts(
        failed=1,
        judge_calls=1,
        judge_attempts=2,
        usage=JudgeUsage(
            output_tokens=3, total_tokens=3, reasoning_tokens=1, cached_input_tokens=2
        ),
    )
    store.update_experiment_progress(info.id, counts, failed)
    running = store.get_experiment(info.id)
    assert running.status == "running" and running.started_at is not None
    store.finish_experiment(info.id, "completed", counts, failed=failed)
    done = store.list_experiments()[0]
    assert done.status == "completed" and done.finished_at is not None
    assert done.scores == {"a": 0.75}  # b has no numeric score
    assert done.counts == counts
    assert (done.counts.succeeded, done.counts.failed, done.counts.done) == (3, 1, 4)
    assert done.judge_settings == {"temperature": 0}
    assert done.api_base == "http://127.0.0.1:1/v1"


def test_the_counts_shown_come_from_the_stored_results(store: Store) -> None:
    """A process killed between writing results and its experiment row leaves the row's
    counters behind: what is shown of the successes is counted from the results themselves."""
    dataset = save(store, make_items(3))
    info, other = experiment(store, dataset.id), experiment(store, dataset.id)
    failed = RunCounts(failed=1, judge_calls=2, judge_attempts=3, usage=JudgeUsage(input_tokens=4))
    written = RunCounts(
        total=6,
        succeeded=1,
        failed=1,
        judge_calls=3,
        judge_attempts=4,
        usage=JudgeUsage(input_tokens=14, total_tokens=10),
    )
    store.add_results(info.id, [success("i0", "a", 1.0, 10)])
    store.update_experiment_progress(info.id, written, failed)
    # Then four more results, and the process dies before the row follows.
    store.add_results(
        info.id,
        [success("i1", "a", 0.0, 10), success("i2", "a", 0.5, 10), success("i0", "b", None, 1)],
    )
    store.add_results(info.id, [success("i1", "b", 0.25, 2)])
    store.add_results(other.id, [success("i0", "a", 0.0, 100)])  # counted for its own only
    set_columns(store, info.id, succeeded_runs=1, done_runs=2, judge_calls=3, input_tokens=14)

    for shown in (store.get_experiment(info.id), store.list_experiments()[1]):
        assert shown.id == info.id
        counts = shown.counts
        assert (counts.total, counts.succeeded, counts.failed, counts.done) == (6, 5, 1, 6)
        assert counts.judge_calls == 5 + 2 and counts.judge_attempts == 5 + 3
        assert counts.usage.input_tokens == 10 + 10 + 10 + 1 + 2 + 4
        assert counts.usage.total_tokens == 10 + 10 + 10 + 1 + 2  # failures reported none
        assert counts.usage.output_tokens is None  # reported by no run at all
        assert shown.scores == {"a": 0.5, "b": 0.25}
    assert store.get_experiment(other.id).counts.succeeded == 1
    assert store.get_experiment(other.id).counts.usage.input_tokens == 100
    fresh = experiment(store, dataset.id)
    assert store.get_experiment(fresh.id).counts == RunCounts(total=6)


def test_results_keep_the_full_result_json(store: Store) -> None:
    dataset = save(store, make_items(1))
    info = experiment(store, dataset.id)
    outcome = success("i0", "a", 0.25, 9)
    store.add_results(info.id, [outcome])
    [stored] = store.experiment_results(info.id)
    assert stored == outcome
    [light] = store.experiment_results(info.id, with_result=False)
    assert light.result is None and light.score == 0.25
    assert store.experiment_results(info.id, scorer_id="b") == []
    assert store.result_count(info.id) == 1


def test_non_finite_numbers_in_step_results_are_kept_readable(store: Store) -> None:
    dataset = save(store, make_items(1))
    info = experiment(store, dataset.id)
    outcome = success("i0", "a", 1.0).model_copy(
        update={"result": {"analyzeStepResult": {"ratio": float("nan"), "max": float("inf")}}}
    )
    store.add_results(info.id, [outcome])
    [stored] = store.experiment_results(info.id)
    assert stored.result == {"analyzeStepResult": {"ratio": "NaN", "max": "Infinity"}}


def test_failed_outcomes_are_refused_and_nothing_is_written(store: Store) -> None:
    dataset = save(store, make_items(2))
    info = experiment(store, dataset.id)
    failed = ScorerOutcome(
        item_id="i1", scorer_id="a", status="failed", error="boom", recovered_score=0.0
    )
    with pytest.raises(ValueError, match="successful outcomes only"):
        store.add_results(info.id, [success("i0", "a", 1.0), failed])
    assert store.experiment_results(info.id) == []


def test_bulk_insert_of_many_results(store: Store) -> None:
    dataset = save(store, make_items(1))
    info = experiment(store, dataset.id, scorer_ids=[f"s{n}" for n in range(12_000)])
    outcomes = [success("i0", f"s{n}", n / 12_000) for n in range(12_000)]
    assert store.add_results(info.id, outcomes) == 12_000
    assert store.result_count(info.id) == 12_000


def test_delete_experiment_and_dataset(store: Store) -> None:
    dataset = save(store, make_items(1))
    info = experiment(store, dataset.id)
    store.add_results(info.id, [success("i0", "a", 1.0)])
    store.delete_experiment(info.id)
    assert store.list_experiments() == [] and store.result_count(info.id) == 0
    other = experiment(store, dataset.id)
    store.delete_dataset(dataset.id)
    assert store.list_datasets() == []
    with pytest.raises(NotFoundError):
        store.get_experiment(other.id)


def test_sqlite_uses_wal(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'x.db'}")
    with store.engine.connect() as connection:
        mode = connection.exec_driver_sql("PRAGMA journal_mode").scalar()
    assert mode == "wal"
    store.close()


def test_default_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCORELAB_DATABASE_URL", "sqlite:////tmp/elsewhere.db")
    assert default_database_url() == "sqlite:////tmp/elsewhere.db"
    monkeypatch.delenv("SCORELAB_DATABASE_URL")
    assert default_database_url().endswith("/data/scorelab.db")


def test_an_unreachable_database_is_a_clear_error() -> None:
    with pytest.raises(StorageError, match="Cannot open the database"):
        Store("postgresql://nobody:secret@127.0.0.1:1/none")


# ---- heartbeats: experiments whose process died ----


def set_columns(store: Store, experiment_id: str, **values: object) -> None:
    """Write an experiment row's columns directly (as a process that died left them)."""
    table = ExperimentRow.__table__
    with store.engine.begin() as connection:
        connection.execute(
            sqlalchemy.update(table).where(table.c.id == experiment_id).values(**values)
        )


def test_a_running_experiment_without_heartbeat_is_reported_interrupted(store: Store) -> None:
    dataset = save(store, make_items(2))
    dead, alive, pending = (experiment(store, dataset.id) for _ in range(3))
    for info in (dead, alive):
        store.update_experiment_progress(info.id, RunCounts(total=4, succeeded=1))
    store.add_results(dead.id, [success("i0", "a", 0.5)])
    last_beat = datetime.now(UTC) - timedelta(minutes=5)
    set_columns(store, dead.id, heartbeat_at=last_beat)
    set_columns(store, pending.id, heartbeat_at=last_beat)

    listed = {info.id: info for info in store.list_experiments()}
    assert listed[dead.id].status == "interrupted"
    assert listed[dead.id].finished_at == last_beat  # its last sign of life
    assert listed[pending.id].status == "interrupted"  # died before its first run
    assert listed[alive.id].status == "running" and listed[alive.id].finished_at is None
    assert store.get_experiment(dead.id).status == "interrupted"
    # What was written before the crash stays and is shown.
    assert listed[dead.id].scores == {"a": 0.5} and listed[dead.id].counts.succeeded == 1
    assert [o.item_id for o in store.experiment_results(dead.id)] == ["i0"]

    store.heartbeat(dead.id)  # the process was only stalled: it is running again
    assert store.get_experiment(dead.id).status == "running"


def test_finished_experiments_never_become_interrupted(store: Store) -> None:
    dataset = save(store, make_items(1))
    info = experiment(store, dataset.id)
    store.finish_experiment(info.id, "completed", RunCounts(total=2, succeeded=2))
    set_columns(store, info.id, heartbeat_at=datetime.now(UTC) - timedelta(days=1))
    assert store.get_experiment(info.id).status == "completed"


def test_the_staleness_threshold_is_configurable(store: Store) -> None:
    dataset = save(store, make_items(1))
    info = experiment(store, dataset.id)
    set_columns(store, info.id, heartbeat_at=datetime.now(UTC) - timedelta(seconds=10))
    assert store.get_experiment(info.id).status == "pending"  # default threshold: 60 s
    impatient = Store(store.url, stale_after_s=5)
    try:
        assert impatient.get_experiment(info.id).status == "interrupted"
    finally:
        impatient.close()
    with pytest.raises(NotFoundError):
        store.heartbeat("nope")


def test_a_dataset_given_as_item_values_is_stored_as_its_items_would_be(store: Store) -> None:
    """Issue 22: an import hands the store plain (id, input, output, truth, metadata) tuples,
    in chunks, without a DatasetItem per row; what is stored and read back is the same."""
    items = make_items(7)
    values = [(i.id, i.input, i.output, i.ground_truth, i.metadata) for i in items]
    as_items = save(store, items, name="items", fingerprint="a" * 64)
    as_values = save(store, [values[:3], values[3:]], name="values", fingerprint="b" * 64)  # type: ignore[list-item]
    assert as_values.item_count == as_items.item_count == 7
    assert store.dataset_items(as_values.id) == store.dataset_items(as_items.id) == items


def test_item_values_that_are_not_an_items_are_refused_naming_the_row(store: Store) -> None:
    good = [("i0", "q", "a", None, {}), ("i1", "q", "a", None, {"tag": 1})]
    with pytest.raises(ValueError, match=r"Item 3 \(7\):.*id"):
        save(store, [[*good, (7, "q", "a", None, {})]])  # type: ignore[list-item]
    with pytest.raises(ValueError, match=r"Item 2: expected \(id, input, output"):
        save(store, [[good[0], ("i1", "q")]])  # type: ignore[list-item]
    assert store.list_datasets() == []  # whole or nothing


def test_a_dataset_of_many_batches_is_stored_whole_and_in_order(store: Store) -> None:
    """On PostgreSQL every batch of an import goes into one COPY (core/storage/result_rows.py,
    `insert_item_batches`): each row lands at its position, none twice, none missing."""
    count = 2 * _rows._INSERT_BATCH + 3
    values = [(f"i{n}", f"q{n}", f"a{n}", None, {"n": n}) for n in range(count)]
    chunks = [values[start : start + 1_234] for start in range(0, count, 1_234)]
    info = save(store, chunks)  # type: ignore[arg-type]
    assert info.item_count == count
    stored = store.dataset_items(info.id)
    assert [item.id for item in stored] == [f"i{n}" for n in range(count)]
    assert stored[-1].metadata == {"n": count - 1} and stored[-1].output == f"a{count - 1}"


def test_a_bad_row_in_a_later_batch_stores_nothing_of_the_dataset(store: Store) -> None:
    """The one COPY of an import is abandoned mid-stream: the error names the row, and the
    rows already sent are rolled back with the dataset."""
    count = _rows._INSERT_BATCH + 10
    values: list[tuple[object, ...]] = [(f"i{n}", "q", "a", None, {}) for n in range(count)]
    values[count - 2] = (7, "q", "a", None, {})
    with pytest.raises(ValueError, match=rf"Item {count - 1} \(7\):.*id"):
        save(store, [values])  # type: ignore[list-item]
    assert store.list_datasets() == []
    with store.engine.connect() as connection:
        left = connection.execute(sqlalchemy.text("SELECT count(*) FROM dataset_items")).scalar()
    assert left == 0
