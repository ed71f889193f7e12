"""Resume and re-run failed (issue 13, points 1 and 2), through the service, on SQLite and (when
SCORELAB_TEST_POSTGRES_URL is set) PostgreSQL.

Resume: a separate Python process runs an experiment and is killed with SIGKILL mid-run; this
process resumes it: every result stored before the kill stays as it was, every missing pair
runs exactly once, and the counts equal those of a run that never died. Re-run failed: a pair
that failed once succeeds when run again, is stored, and leaves the in-memory failures.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy
from resume_worker import CALLS, CATALOG, FAIL_ALWAYS, FAIL_ONCE, reset, slow_spec
from scorelab_db import BACKENDS, database

from core.records import ExperimentConfig, RunCounts, ScorerSpec
from core.service import ExperimentConfigError, NotFoundError, Service, StorageError
from core.storage.tables import ExperimentRow, ScoreRow

ROOT = Path(__file__).resolve().parents[2]
DEADLINE = 60.0
"""Seconds any wait of these tests may take before it fails (none waits a fixed time)."""


@pytest.fixture(params=BACKENDS)
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    with database(request.param, tmp_path) as url:
        yield url


@pytest.fixture
def service(database_url: str, tmp_path: Path) -> Iterator[Service]:
    reset()
    service = Service(database_url, catalog=CATALOG, samples_dir=tmp_path / "samples")
    yield service
    for experiment_id in service.running_experiments():
        service.cancel(experiment_id, abort_in_flight=True)
        service.wait(experiment_id, timeout=DEADLINE)
    service.store.close()
    reset()


def rows_of(count: int) -> bytes:
    return b"question,answer\n" + b"".join(b"q%d,answer %d\n" % (n, n * 7) for n in range(count))


def stored_rows(service: Service, experiment_id: str) -> dict[tuple[str, str], tuple[Any, ...]]:
    """Every stored result of the experiment, by pair: its row id and values."""
    table = ScoreRow.__table__
    query = sqlalchemy.select(table).where(table.c.experiment_id == experiment_id)
    with service.store.engine.connect() as connection:
        found = [row._mapping for row in connection.execute(query)]
    by_pair = {(row["item_id"], row["scorer_id"]): tuple(row.values()) for row in found}
    assert len(by_pair) == len(found), "a pair is stored twice"
    return by_pair


def make_stale(service: Service, experiment_id: str) -> None:
    """Its last heartbeat a while ago, as a killed process leaves it once time has passed."""
    table = ExperimentRow.__table__
    with service.store.engine.begin() as connection:
        connection.execute(
            sqlalchemy.update(table)
            .where(table.c.id == experiment_id)
            .values(heartbeat_at=datetime.now(UTC) - timedelta(minutes=5))
        )


def comparable(counts: RunCounts) -> tuple[Any, ...]:
    return (
        counts.total,
        counts.succeeded,
        counts.failed,
        counts.usage,
        counts.judge_calls,
        counts.judge_attempts,
    )


def run_clean(service: Service, dataset_id: str, *specs: ScorerSpec) -> str:
    experiment_id = service.start_experiment(
        ExperimentConfig(dataset_id=dataset_id, scorers=list(specs), concurrency=4)
    )
    assert service.wait(experiment_id, timeout=DEADLINE).finished
    return experiment_id


# ---- resume after kill -9 ----


def process_alive(pid: int) -> bool:
    """True while `pid` runs (a zombie, dead but not yet reaped, counts as ended)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def start_worker(
    database_url: str, dataset_id: str, delay_s: float, fail_on: str, writer: str = "thread"
) -> Any:
    environment = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'tests'}"}
    return subprocess.Popen(
        [
            sys.executable,
            str(ROOT / "tests" / "resume_worker.py"),
            database_url,
            dataset_id,
            str(delay_s),
            fail_on,
            writer,
        ],
        stdout=subprocess.PIPE,
        text=True,
        env=environment,
        cwd=ROOT,
    )


@pytest.mark.parametrize("writer", ["thread", "process"])
def test_an_experiment_killed_mid_run_resumes_to_the_counts_of_a_clean_run(
    service: Service, database_url: str, writer: str
) -> None:
    items = 200
    dataset = service.import_dataset("set.csv", rows_of(items))
    worker = start_worker(database_url, dataset.id, 0.03, fail_on="q150", writer=writer)
    try:
        assert worker.stdout is not None
        experiment_id = worker.stdout.readline().strip()
        assert experiment_id, "the worker did not start its experiment"
        child = int(worker.stdout.readline()) if writer == "process" else None
        deadline = time.monotonic() + DEADLINE
        while service.store.result_count(experiment_id) < 40:
            assert worker.poll() is None, "the worker ended before it was killed"
            assert time.monotonic() < deadline, "the worker stored nothing"
            time.sleep(0.02)
        worker.send_signal(signal.SIGKILL)
        assert worker.wait(timeout=DEADLINE) == -signal.SIGKILL
        if child is not None:  # the writer's process ends with it, writing nothing after
            while process_alive(child):
                assert time.monotonic() < deadline, "the writer's process outlived its parent"
                time.sleep(0.01)
    finally:
        if worker.poll() is None:
            worker.kill()
        worker.wait()
    before = stored_rows(service, experiment_id)
    assert 40 <= len(before) < items, "killed after it finished: nothing left to resume"
    with pytest.raises(ExperimentConfigError, match=r"is running: only an experiment stopped"):
        service.resume_experiment(experiment_id)  # its heartbeat is fresh: it may be alive
    make_stale(service, experiment_id)
    assert service.get_experiment(experiment_id).status == "interrupted"

    assert service.resume_experiment(experiment_id) == experiment_id
    progress = service.wait(experiment_id, timeout=DEADLINE)
    after = stored_rows(service, experiment_id)

    assert progress.status == "completed"
    assert {pair: after[pair] for pair in before} == before  # the same rows, untouched
    assert set(after) == {(f"{n}", "slow") for n in range(1, items + 1)} - {("151", "slow")}
    missing = {f"q{int(item) - 1}" for item, _ in set(after) - set(before)} | {"q150"}
    assert dict(CALLS) == dict.fromkeys(missing, 1)  # each missing pair once, no other
    [failure] = service.failures(experiment_id)
    assert failure.item_id == "151" and failure.error.endswith("cannot score q150")

    clean = run_clean(service, dataset.id, slow_spec(fail_on="q150"))
    resumed, reference = service.get_experiment(experiment_id), service.get_experiment(clean)
    assert comparable(resumed.counts) == comparable(reference.counts)
    assert comparable(service.progress(experiment_id).counts) == comparable(reference.counts)
    assert resumed.scores == pytest.approx(reference.scores, rel=1e-12)  # AVG in any order
    assert resumed.status == "completed"


def test_a_second_resume_while_the_first_runs_is_refused_and_duplicates_nothing(
    service: Service,
) -> None:
    dataset = service.import_dataset("set.csv", rows_of(30))
    experiment_id = service.start_experiment(
        ExperimentConfig(dataset_id=dataset.id, scorers=[slow_spec(0.02)], concurrency=1)
    )
    service.wait(experiment_id, timeout=DEADLINE, until=lambda p: p.counts.done >= 5)
    service.cancel(experiment_id)
    assert service.wait(experiment_id, timeout=DEADLINE).status == "cancelled"
    done = set(stored_rows(service, experiment_id))

    service.resume_experiment(experiment_id)
    with pytest.raises(ExperimentConfigError, match=r"is running"):
        service.resume_experiment(experiment_id)
    assert service.wait(experiment_id, timeout=DEADLINE).status == "completed"
    assert len(stored_rows(service, experiment_id)) == 30
    assert sum(CALLS.values()) == 30 and set(CALLS.values()) == {1}
    assert len(done) < 30  # the resume had work to do
    with pytest.raises(ExperimentConfigError, match=r"is completed: only an experiment"):
        service.resume_experiment(experiment_id)


def test_a_resume_racing_a_writer_of_the_same_pairs_stores_each_once(service: Service) -> None:
    """The old process still alive (stale heartbeat, then back): its results for pairs the
    resume also runs are skipped by the database, never an error."""
    dataset = service.import_dataset("set.csv", rows_of(20))
    experiment_id = service.start_experiment(
        ExperimentConfig(dataset_id=dataset.id, scorers=[slow_spec()], concurrency=1)
    )
    service.wait(experiment_id, timeout=DEADLINE)
    results = service.store.experiment_results(experiment_id)
    table = ScoreRow.__table__
    with service.store.engine.begin() as connection:  # as if the old process had stopped
        connection.execute(sqlalchemy.delete(table).where(table.c.item_id.in_(["5", "6", "7"])))
        connection.execute(
            sqlalchemy.update(ExperimentRow.__table__)
            .where(ExperimentRow.__table__.c.id == experiment_id)
            .values(status="cancelled")
        )
    CALLS.clear()
    service.resume_experiment(experiment_id)
    # ... and the old process writes its late results for those pairs meanwhile.
    late = [r for r in results if r.item_id in ("5", "6", "7")]
    service.store.add_results(experiment_id, late)
    assert service.wait(experiment_id, timeout=DEADLINE).status == "completed"
    assert len(stored_rows(service, experiment_id)) == 20
    assert service.get_experiment(experiment_id).counts.succeeded == 20


@pytest.mark.parametrize("status", ["cancelled", "budget_reached", "interrupted"])
def test_every_resumable_status_resumes_with_the_stored_options(
    service: Service, status: str
) -> None:
    dataset = service.import_dataset("set.csv", rows_of(6))
    experiment_id = run_clean(service, dataset.id, slow_spec(fail_on="q2"))
    table = ScoreRow.__table__
    with service.store.engine.begin() as connection:
        connection.execute(sqlalchemy.delete(table).where(table.c.item_id.in_(["1", "2"])))
        values: dict[str, Any] = {"status": status}
        if status == "interrupted":  # a dead process's row: running, without heartbeat
            values = {"status": "running", "heartbeat_at": datetime.now(UTC) - timedelta(hours=1)}
        connection.execute(
            sqlalchemy.update(ExperimentRow.__table__)
            .where(ExperimentRow.__table__.c.id == experiment_id)
            .values(**values)
        )
    assert service.get_experiment(experiment_id).status == status
    CALLS.clear()
    service.resume_experiment(experiment_id)
    assert service.wait(experiment_id, timeout=DEADLINE).status == "completed"
    # Items 1 and 2 (inputs q0, q1) ran again, and q2 (failed, never stored) too: its
    # stored option `fail_on` made it fail again.
    assert dict(CALLS) == {"q0": 1, "q1": 1, "q2": 1}
    assert [f.item_id for f in service.failures(experiment_id)] == ["3"]
    counts = service.get_experiment(experiment_id).counts
    assert (counts.total, counts.succeeded, counts.failed) == (6, 5, 1)


def test_resume_refuses_bad_inputs(service: Service) -> None:
    with pytest.raises(NotFoundError, match="nope"):
        service.resume_experiment("nope")
    dataset = service.import_dataset("set.csv", rows_of(2))
    experiment_id = run_clean(service, dataset.id, slow_spec())
    with pytest.raises(ExperimentConfigError, match=r"is completed: only an experiment stopped"):
        service.resume_experiment(experiment_id)
    FAIL_ALWAYS.update({"q0", "q1"})
    every = run_clean(service, dataset.id, ScorerSpec(scorer_id="flaky"))
    assert service.get_experiment(every).status == "failed"
    with pytest.raises(ExperimentConfigError, match=r"is failed: only an experiment stopped"):
        service.resume_experiment(every)


def test_resume_refuses_an_experiment_whose_scorers_cannot_be_rebuilt(
    service: Service, database_url: str
) -> None:
    dataset = service.import_dataset("set.csv", rows_of(2))
    experiment_id = run_clean(service, dataset.id, slow_spec())
    table = ExperimentRow.__table__
    with service.store.engine.begin() as connection:
        connection.execute(
            sqlalchemy.update(table)
            .where(table.c.id == experiment_id)
            .values(status="cancelled", scorer_ids=["slow", "gone"])
        )
    with pytest.raises(ExperimentConfigError, match=r"slow, gone\) cannot be rebuilt"):
        service.resume_experiment(experiment_id)
    assert service.get_experiment(experiment_id).status == "cancelled"  # untouched


# ---- re-run failed ----


def test_a_pair_that_failed_once_succeeds_when_run_again(service: Service) -> None:
    dataset = service.import_dataset("set.csv", rows_of(5))
    FAIL_ONCE.add("q3")
    experiment_id = run_clean(service, dataset.id, ScorerSpec(scorer_id="flaky"))
    [failure] = service.failures(experiment_id)
    assert failure.item_id == "4" and service.get_experiment(experiment_id).counts.failed == 1
    clean = run_clean(service, dataset.id, ScorerSpec(scorer_id="flaky"))
    CALLS.clear()

    assert service.retry_failed(experiment_id) == 1
    assert service.wait(experiment_id, timeout=DEADLINE).status == "completed"
    assert dict(CALLS) == {"q3": 1}  # that pair only
    assert service.failures(experiment_id) == []
    assert ("4", "flaky") in stored_rows(service, experiment_id)
    retried, reference = service.get_experiment(experiment_id), service.get_experiment(clean)
    assert comparable(retried.counts) == comparable(reference.counts)
    assert comparable(service.progress(experiment_id).counts) == comparable(reference.counts)
    with pytest.raises(ExperimentConfigError, match=r"no failed run to re-run"):
        service.retry_failed(experiment_id)


def test_a_pair_that_fails_again_replaces_its_failure(service: Service) -> None:
    dataset = service.import_dataset("set.csv", rows_of(4))
    FAIL_ALWAYS.add("q1")
    FAIL_ONCE.add("q2")
    experiment_id = run_clean(service, dataset.id, ScorerSpec(scorer_id="flaky"))
    errors = sorted(f.error.split(": ")[-1] for f in service.failures(experiment_id))
    assert errors == ["flaky on q1, run 1", "flaky on q2, run 1"]
    assert service.retry_failed(experiment_id) == 2
    assert service.wait(experiment_id, timeout=DEADLINE).status == "completed"
    [failure] = service.failures(experiment_id)
    assert failure.item_id == "2" and failure.error.endswith("flaky on q1, run 2")
    counts = service.get_experiment(experiment_id).counts
    assert (counts.total, counts.succeeded, counts.failed) == (4, 3, 1)
    assert len(stored_rows(service, experiment_id)) == 3  # failures never stored


def test_a_retry_of_a_cancelled_experiment_keeps_its_status(service: Service) -> None:
    dataset = service.import_dataset("set.csv", rows_of(40))
    FAIL_ONCE.add("q0")
    experiment_id = service.start_experiment(
        ExperimentConfig(
            dataset_id=dataset.id, scorers=[ScorerSpec(scorer_id="flaky")], concurrency=1
        )
    )
    service.wait(experiment_id, timeout=DEADLINE, until=lambda p: p.counts.done >= 1)
    service.cancel(experiment_id)
    assert service.wait(experiment_id, timeout=DEADLINE).status in ("cancelled", "completed")
    status = service.get_experiment(experiment_id).status
    assert service.retry_failed(experiment_id) == 1
    assert service.wait(experiment_id, timeout=DEADLINE).status == status
    assert service.get_experiment(experiment_id).status == status
    assert service.failures(experiment_id) == []


def test_retry_refuses_bad_inputs(service: Service, database_url: str) -> None:
    with pytest.raises(NotFoundError, match="nope"):
        service.retry_failed("nope")
    dataset = service.import_dataset("set.csv", rows_of(3))
    FAIL_ALWAYS.add("q0")
    experiment_id = run_clean(service, dataset.id, ScorerSpec(scorer_id="flaky"))
    restarted = Service(database_url, catalog=CATALOG)  # another process: no failure held
    try:
        with pytest.raises(ExperimentConfigError, match=r"1 failed runs were kept by a process"):
            restarted.retry_failed(experiment_id)
    finally:
        restarted.store.close()
    slow_failure = run_clean(service, dataset.id, slow_spec(0.3, fail_on="q0"))
    assert service.retry_failed(slow_failure) == 1
    with pytest.raises(ExperimentConfigError, match=r"is running: re-run its failed runs once"):
        service.retry_failed(slow_failure)  # the retry itself is running
    assert service.wait(slow_failure, timeout=DEADLINE).status == "completed"


def test_a_retry_of_an_experiment_that_broke_keeps_its_status_and_why(
    service: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    dataset = service.import_dataset("set.csv", rows_of(3))
    FAIL_ONCE.add("q0")

    def broken(experiment_id: str, outcomes: Any) -> int:
        raise RuntimeError("the disk is full")

    with monkeypatch.context() as patched:
        patched.setattr(service.store, "add_rows", broken)
        experiment_id = run_clean(service, dataset.id, ScorerSpec(scorer_id="flaky"))
    broke = service.get_experiment(experiment_id)
    # A storage error leaves the run resumable (issue 19): `interrupted`, saying why.
    assert broke.status == "interrupted" and "the disk is full" in (broke.error or "")
    assert service.retry_failed(experiment_id) == 1
    progress = service.wait(experiment_id, timeout=DEADLINE)
    assert progress.status == "interrupted" and "the disk is full" in (progress.error or "")
    assert service.get_experiment(experiment_id).error == broke.error
    assert service.failures(experiment_id) == []
    assert ("1", "flaky") in stored_rows(service, experiment_id)


# ---- a storage error mid-run (a full disk): the run ends resumable ----


def test_a_run_stopped_by_a_storage_error_is_resumable_once_the_cause_is_gone(
    service: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 19, hostile finding 5: the writer fails mid-run as a full disk makes SQLite fail;
    the run stops with what was written kept, ends `interrupted` (not `error`, which resume
    refuses) saying why, and a resume once the disk has room runs the missing pairs."""
    dataset = service.import_dataset("set.csv", rows_of(12))
    real_add = service.store.add_rows  # the writer's path
    writes: list[int] = []

    def fills_the_disk(experiment_id: str, rows: Any) -> int:
        if writes:
            raise StorageError("Could not write the results: database or disk is full")
        writes.append(real_add(experiment_id, rows))
        return writes[-1]

    with monkeypatch.context() as patched:
        patched.setattr(service.store, "add_rows", fills_the_disk)
        experiment_id = service.start_experiment(
            ExperimentConfig(dataset_id=dataset.id, scorers=[slow_spec(delay_s=0.3)])
        )
        progress = service.wait(experiment_id, timeout=DEADLINE)
    assert progress.status == "interrupted"
    assert "could not be written to the database" in (progress.error or "")
    assert "database or disk is full" in (progress.error or "")
    assert "resume" in (progress.error or "")
    info = service.get_experiment(experiment_id)
    assert info.status == "interrupted" and info.error == progress.error
    kept = stored_rows(service, experiment_id)
    assert 0 < len(kept) == writes[0] < 12
    CALLS.clear()
    service.resume_experiment(experiment_id)
    assert service.wait(experiment_id, timeout=DEADLINE).status == "completed"
    assert stored_rows(service, experiment_id).keys() >= kept.keys()
    assert len(stored_rows(service, experiment_id)) == 12
    assert sum(CALLS.values()) == 12 - len(kept)  # only the missing pairs ran again
    assert service.get_experiment(experiment_id).error is None


# ---- the writer's own process (issue 22) ----


@pytest.fixture
def writer_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every experiment's results written by a child process, whatever its size."""
    from core.experiments import jobs, result_writer

    monkeypatch.setattr(jobs, "_OWN_PROCESS_FROM", 0)
    monkeypatch.setattr(result_writer, "_PROCESS_FIRST", True)


def test_a_run_whose_writer_process_dies_stops_interrupted_and_resumes_to_every_pair_once(
    service: Service, writer_process: None
) -> None:
    """The child writing the results is killed (`kill -9`) mid-run: the run stops
    `interrupted` saying the writer's process stopped, what it committed is kept once, nothing
    failed was written, and a resume runs exactly the pairs without a stored result."""
    items = 200
    dataset = service.import_dataset("set.csv", rows_of(items))
    experiment_id = service.start_experiment(
        ExperimentConfig(
            dataset_id=dataset.id, scorers=[slow_spec(delay_s=0.05, fail_on="q3")], concurrency=1
        )
    )
    job = service.context.jobs.get(experiment_id)
    assert job is not None
    deadline = time.monotonic() + DEADLINE
    while (writer := job._writer) is None or writer.process_id is None:  # the child writes
        assert time.monotonic() < deadline, "the writer's process never took the writing"
        time.sleep(0.01)
    while service.store.result_count(experiment_id) < 10:
        assert time.monotonic() < deadline, "nothing was stored"
        time.sleep(0.02)
    assert writer.process_id is not None
    assert writer.process_id != os.getpid()
    assert job.running, "finished before the writer's process was killed: make the runs slower"
    os.kill(writer.process_id, signal.SIGKILL)
    progress = service.wait(experiment_id, timeout=DEADLINE)

    assert progress.status == "interrupted"
    assert "result writer's process" in (progress.error or "")
    assert "resume" in (progress.error or "")
    kept = stored_rows(service, experiment_id)  # asserts no pair is stored twice
    assert 10 <= len(kept) < items
    assert ("4", "slow") not in kept  # q3 failed: never written
    CALLS.clear()
    service.resume_experiment(experiment_id)
    assert service.wait(experiment_id, timeout=DEADLINE).status == "completed"
    after = stored_rows(service, experiment_id)
    assert {pair: after[pair] for pair in kept} == kept  # the same rows, untouched
    assert set(after) == {(f"{n}", "slow") for n in range(1, items + 1)} - {("4", "slow")}
    ran_again = {f"q{int(item) - 1}" for item, _ in set(after) - set(kept)} | {"q3"}
    assert dict(CALLS) == dict.fromkeys(ran_again, 1)  # each missing pair once, no other


def test_a_run_written_by_the_writer_process_stores_what_the_thread_stores(
    service: Service, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The same experiment written by the thread and by the child process: the same stored
    results (scores, reasons, result JSON, counts), the failure kept in memory only."""
    from core.experiments import jobs, result_writer

    dataset = service.import_dataset("set.csv", rows_of(40))
    spec = slow_spec(fail_on="q7")
    by_thread = run_clean(service, dataset.id, spec)
    monkeypatch.setattr(jobs, "_OWN_PROCESS_FROM", 0)
    monkeypatch.setattr(result_writer, "_PROCESS_FIRST", True)
    by_process = run_clean(service, dataset.id, spec)
    assert "did not start" not in caplog.text  # the process wrote them all

    def without_run_id(result: Any) -> Any:
        assert isinstance(result, dict) and result.pop("runId")  # each run has its own
        return result

    def stored(experiment_id: str) -> list[tuple[Any, ...]]:
        return sorted(
            (r.item_id, r.scorer_id, r.score, r.reason, without_run_id(r.result))
            for r in service.store.experiment_results(experiment_id)
        )

    assert len(stored(by_process)) == 39
    assert stored(by_process) == stored(by_thread)
    thread_info, process_info = (service.get_experiment(e) for e in (by_thread, by_process))
    assert comparable(process_info.counts) == comparable(thread_info.counts)
    assert process_info.status == thread_info.status == "completed"
    assert [f.item_id for f in service.failures(by_process)] == ["8"]
