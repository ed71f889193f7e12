"""A finished experiment's totals kept in `experiment_totals` (revision 0013): summed once when
it finished, read by any later process's first render instead of a pass over its results, and
never used once the experiment changed (results added, resumed) or was deleted."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy
from scorelab_db import BACKENDS, database

from core.records import ColumnMapping, DatasetItem, ScorerOutcome, ScorerSpec
from core.run_results import JudgeUsage
from core.storage import Store


@pytest.fixture(params=BACKENDS)
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    with database(request.param, tmp_path) as database_url:
        yield database_url


def _outcome(n: int, scorer_id: str, score: float) -> ScorerOutcome:
    judged = scorer_id == "judge"
    return ScorerOutcome(
        item_id=f"q{n}",
        scorer_id=scorer_id,
        status="success",
        score=score,
        usage=JudgeUsage(input_tokens=10 + n, output_tokens=2, total_tokens=12 + n)
        if judged
        else JudgeUsage(),
        judge_calls=int(judged),
        judge_attempts=int(judged),
        duration_ms=n,
    )


def _finished(store: Store, items: int) -> str:
    dataset = store.save_dataset(
        name="d",
        file_name="d.csv",
        format="csv",
        fingerprint="k" * 64,
        columns=["id", "question", "answer"],
        mapping=ColumnMapping(id="id", input="question", output="answer"),
        items=[[DatasetItem(id=f"q{n}", input=f"in {n}", output=f"out {n}") for n in range(items)]],
    )
    info = store.create_experiment(
        name="e",
        dataset_id=dataset.id,
        scorers=[ScorerSpec(scorer_id="keyword-coverage-scorer")],
        scorer_ids=["code", "judge"],
        judge_model="openai/gpt-4o-mini",
        api_base=None,
        judge_settings={},
        concurrency=1,
    )
    store.add_results(
        info.id,
        [_outcome(n, s, (n % 7) / 6) for n in range(items - 1) for s in ("code", "judge")],
    )
    store.finish_experiment(info.id, "completed")
    return info.id


def _reads_of_results(store: Store) -> tuple[list[str], Any]:
    seen: list[str] = []

    def record(conn: Any, cursor: Any, statement: str, *_: Any) -> None:
        if "scorer_results" in statement:
            seen.append(statement)

    sqlalchemy.event.listen(store.engine, "before_cursor_execute", record)
    return seen, record


def _pages(store: Store, experiment_id: str) -> tuple[Any, ...]:
    return (
        store.score_summaries(experiment_id),
        store.score_histograms(experiment_id),
        store.judge_usage(experiment_id),
        store.get_experiment(experiment_id).counts,
    )


def test_a_later_process_reads_the_kept_totals_not_the_results(url: str) -> None:
    writer = Store(url)
    experiment_id = _finished(writer, 60)
    with writer.engine.connect() as connection:  # what a GROUP BY gives, summed afresh
        writer._settled.clear()
        connection.exec_driver_sql("DELETE FROM experiment_totals")
        connection.commit()
    expected = _pages(writer, experiment_id)
    writer.finish_experiment(experiment_id, "completed")  # kept again
    expected_counts = writer.get_experiment(experiment_id).counts
    writer.close()

    reader = Store(url)  # a fresh process: nothing cached in memory
    seen, record = _reads_of_results(reader)
    try:
        found = _pages(reader, experiment_id)
    finally:
        sqlalchemy.event.remove(reader.engine, "before_cursor_execute", record)
    assert found[:3] == expected[:3] and found[3] == expected_counts
    assert [s.count for s in found[0]] == [59, 59]
    assert sum(found[1][0].counts) == 59
    assert found[2][1].usage.input_tokens == sum(10 + n for n in range(59))
    assert seen == []  # not one statement over the results
    reader.close()


def test_results_added_or_a_resume_make_the_kept_totals_stale(url: str) -> None:
    store = Store(url)
    experiment_id = _finished(store, 30)
    store.add_results(experiment_id, [_outcome(29, "code", 1.0)])
    fresh = Store(url)
    (code, _judge) = fresh.score_summaries(experiment_id)
    assert code.count == 30 and code.max == 1.0  # summed again, the new row counted
    assert fresh.score_histograms(experiment_id)[0].counts[-1] == len(range(6, 29, 7)) + 1
    fresh.close()

    store.finish_experiment(experiment_id, "completed")
    with store.engine.connect() as connection:  # a stale row: kept for another state
        connection.exec_driver_sql(
            "UPDATE experiment_totals SET settled = '[\"completed\", null, 0, 0]'"
        )
        connection.commit()
    fresh = Store(url)
    seen, record = _reads_of_results(fresh)
    fresh.score_summaries(experiment_id)
    sqlalchemy.event.remove(fresh.engine, "before_cursor_execute", record)
    assert seen  # not trusted: summed from the results
    fresh.close()
    store.close()


def test_deleting_the_experiment_deletes_what_was_kept(url: str) -> None:
    store = Store(url)
    experiment_id = _finished(store, 5)
    count = "SELECT count(*) FROM experiment_totals"
    with store.engine.connect() as connection:
        assert connection.exec_driver_sql(count).scalar_one() == 1
    store.delete_experiment(experiment_id)
    with store.engine.connect() as connection:
        assert connection.exec_driver_sql(count).scalar_one() == 0
    store.close()
