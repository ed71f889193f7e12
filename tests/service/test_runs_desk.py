"""The run desk through the Service: experiments in a background worker; successful results in
the database, failures in memory only; cancel keeps finished rows; heartbeats; no key stored."""

from __future__ import annotations

import json
import re
import threading
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import sqlalchemy
from service_kit import (
    CATALOG,
    DATA,
    DEADLINE,
    SECRET,
    Turnstile,
    dump_database,
    run,
    start_gated,
)

from core.records import (
    ExperimentConfig,
    RunCounts,
    ScorerOutcome,
    ScorerSpec,
)
from core.service import (
    ExperimentConfigError,
    NotFoundError,
    Service,
    StorageError,
)
from core.storage import Store
from core.storage.tables import ExperimentRow
from core.testing import FakeJudge, Fault


def test_failed_runs_stay_in_memory_and_never_reach_the_database(
    service: Service, database_url: str
) -> None:
    dataset = service.import_dataset("qa.csv", DATA)
    experiment_id = run(
        service,
        dataset.id,
        ScorerSpec(scorer_id="fragile"),
        ScorerSpec(scorer_id="checks.includes", options={"value": "answer"}),
    )
    detail = service.load_experiment(experiment_id)
    assert detail.info.status == "completed"
    assert (detail.info.counts.succeeded, detail.info.counts.failed) == (5, 1)
    assert {(r.item_id, r.scorer_id) for r in detail.results} == {
        ("a", "fragile"),
        ("b", "fragile"),
        ("a", "checks.includes"),
        ("b", "checks.includes"),
        ("c", "checks.includes"),
    }
    assert [(f.item_id, f.scorer_id, f.status) for f in detail.failures] == [
        ("c", "fragile", "failed")
    ]
    assert detail.failures_in_memory
    assert service.failures(experiment_id) == detail.failures
    assert "cannot score question 2" not in dump_database(database_url)
    assert detail.info.scores == {"fragile": 0.5, "checks.includes": 1.0}
    # Another process (here: another service) sees the stored results, not the failures.
    other = Service(database_url, catalog=CATALOG)
    reloaded = other.load_experiment(experiment_id)
    assert reloaded.failures == [] and not reloaded.failures_in_memory
    assert reloaded.results == detail.results
    assert other.progress(experiment_id).status == "completed"
    other.store.close()


def test_judge_failure_keeps_recovered_score_in_memory_only(
    service: Service,
    database_url: str,
    judge_server: FakeJudge,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SCORELAB_JUDGE_API_KEY", SECRET)
    dataset = service.import_dataset("qa.csv", DATA)
    answers = iter(
        [
            '{"score": 0.75}',
            "Fine.",
            '{"score": 0.25}',
            Fault(status=400, message="reason provider failed"),
            '{"score": 1}',
            "Good.",
        ]
    )
    judge_server.responder = lambda request: next(answers)
    experiment_id = run(
        service,
        dataset.id,
        ScorerSpec(scorer_id="judged"),
        judge_model="openai/fake-judge",
        api_base=judge_server.url,
        concurrency=1,
        judge_settings={"num_retries": 0},
    )
    detail = service.load_experiment(experiment_id)
    [failure] = detail.failures
    assert failure.recovered_score == 0.25 and failure.failed_step == "generateReason"
    assert failure.failed_execution is not None
    assert sorted(r.score for r in detail.results) == [0.75, 1.0]
    assert detail.info.scores == {"judged": 0.875}
    info = detail.info
    assert info.judge_model == "openai/fake-judge" and info.api_base == judge_server.url
    assert info.counts.judge_attempts == 6 and info.counts.judge_calls == 5
    assert info.counts.usage.input_tokens == 50  # failed runs' usage is counted too
    stored = dump_database(database_url)
    assert SECRET not in stored
    # The recovered score is never written: the number 0.25 nowhere (times and longer numbers
    # such as 00:08:30.252033 may hold the digits).
    untimed = re.sub(r"\d{4}-\d\d-\d\d[ T][\d:.]+", "<time>", stored)
    assert not re.search(r"(?<![\d.])0\.25(?![\d])", untimed)
    requests = judge_server.requests
    assert requests and requests[0]["messages"][0]["content"] == "You are a strict grader."


def test_judge_attempts_equal_the_requests_the_judge_server_received(
    service: Service,
    judge_server: FakeJudge,
    retry_waits: list[float],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SCORELAB_JUDGE_API_KEY", SECRET)
    rows = b"question,answer\n" + b"".join(b"q%d,a%d\n" % (n, n) for n in range(6))
    dataset = service.import_dataset("faults.csv", rows)
    # Whatever run meets them: transport faults (retried: the service's default num_retries is
    # 2), malformed answers (the fallback), a client error (not retried) and three 500s in a row
    # (one call out of retries, if one run gets them all). Then the default answer.
    judge_server.script(
        Fault(500),
        Fault(429, "slow down", retry_after="1"),
        "not JSON",
        Fault(503),
        '{"score": NaN}',
        Fault(400, "bad request"),
        Fault(500),
        Fault(500),
        Fault(500),
        '{"score": "high"}',
    )
    experiment_id = run(
        service,
        dataset.id,
        ScorerSpec(scorer_id="judged"),
        judge_model="openai/fake-judge",
        api_base=judge_server.url,
        concurrency=2,
    )

    info = service.get_experiment(experiment_id)
    stats = judge_server.stats()
    assert info.counts.judge_attempts == stats["requests"] == judge_server.call_count
    assert info.counts.judge_calls == stats["byStatus"]["200"]  # calls that returned a response
    assert stats["requests"] > 12  # 6 runs x 2 steps, plus the faults' extra requests
    assert retry_waits  # the transport faults were retried


def test_a_judge_answering_nan_stores_only_finite_scores(
    service: Service, judge_server: FakeJudge, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCORELAB_JUDGE_API_KEY", SECRET)
    dataset = service.import_dataset("qa.csv", DATA)
    judge_server.script(
        '{"score": 0.75}', "Fine.", '{"score": NaN}', '{"score": Infinity}', '{"score": 1}', "Good."
    )
    experiment_id = run(
        service,
        dataset.id,
        ScorerSpec(scorer_id="judged"),
        judge_model="openai/fake-judge",
        api_base=judge_server.url,
        concurrency=1,
        judge_settings={"num_retries": 0},
    )

    detail = service.load_experiment(experiment_id)
    assert sorted(r.score for r in detail.results) == [0.75, 1.0]
    assert detail.info.scores == {"judged": 0.875}
    [failure] = detail.failures
    assert failure.failed_step == "generateScore" and failure.recovered_score is None
    assert failure.failed_execution is not None
    assert failure.failed_execution.error.code == "JUDGE_OUTPUT_INVALID_JSON"
    for outcome in [*detail.results, *detail.failures]:
        json.dumps(outcome.model_dump(mode="json", by_alias=True), allow_nan=False)
    json.dumps(detail.info.model_dump(mode="json"), allow_nan=False)


def test_cancel_mid_run_keeps_finished_rows(service: Service, turnstile: Turnstile) -> None:
    experiment_id = start_gated(service, 60, concurrency=2)
    turnstile.let_through(6)
    service.wait(experiment_id, timeout=DEADLINE, until=lambda p: p.counts.done >= 6)
    service.cancel(experiment_id)
    turnstile.open()  # the runs in flight finish; no new one starts
    final = service.wait(experiment_id, timeout=DEADLINE)
    assert final.status == "cancelled"
    stored = service.store.result_count(experiment_id)
    assert 6 <= stored <= 8 and stored == final.counts.succeeded  # 6 + at most 2 in flight
    info = service.get_experiment(experiment_id)
    assert info.status == "cancelled" and info.counts.succeeded == stored


def test_progress_while_running_and_completed_only_once_everything_is_written(
    service: Service, turnstile: Turnstile, monkeypatch: pytest.MonkeyPatch
) -> None:
    writes = threading.Event()
    add_rows = service.store.add_rows

    def held_back(experiment_id: str, rows: Any) -> int:
        assert writes.wait(DEADLINE), "the test never let the writes through"
        return add_rows(experiment_id, rows)

    monkeypatch.setattr(service.store, "add_rows", held_back)
    experiment_id = start_gated(service, 20)
    turnstile.wait_until(lambda t: t.held == 1)
    running = service.progress(experiment_id)
    assert (running.status, running.counts.done, running.counts.total) == ("running", 0, 20)
    turnstile.open()
    service.wait(experiment_id, timeout=DEADLINE, until=lambda p: p.counts.done == 20)
    # Every run finished, but the results are not written yet: not completed.
    assert service.progress(experiment_id).status == "running"
    writes.set()
    final = service.wait(experiment_id, timeout=DEADLINE)
    assert (final.status, final.counts.done, final.counts.total) == ("completed", 20, 20)
    assert final.eta_s is None and final.elapsed_s > 0
    assert service.store.result_count(experiment_id) == 20
    assert service.get_experiment(experiment_id).status == "completed"


@pytest.mark.parametrize(
    ("specs", "config", "message"),
    [
        ([], {}, "Choose at least one scorer"),
        ([ScorerSpec(scorer_id="nope")], {}, "Unknown scorer 'nope'; known: "),
        ([ScorerSpec(scorer_id="judged")], {}, "calls an LLM judge: choose a judge model"),
        (
            [ScorerSpec(scorer_id="judged")],
            {"judge_model": "openai/x", "judge_settings": {"api_key": "k"}},
            "Judge setting 'api_key' is not allowed",
        ),
        (
            [ScorerSpec(scorer_id="judged")],
            {"judge_model": "openai/x", "judge_settings": {"extra_headers": {"A": "b"}}},
            "keys come from the environment, or are typed for one experiment",
        ),
        (
            [ScorerSpec(scorer_id="tone-scorer", options={"loud": True})],
            {},
            "Scorer 'tone-scorer' has no option 'loud' (its options: reference, reference_tone)",
        ),
        ([ScorerSpec(scorer_id="checks.includes")], {}, "Cannot build scorer 'checks.includes'"),
        (
            [ScorerSpec(scorer_id="checks.calledTool", options={"name": "x", "times": "many"})],
            {},
            "Cannot build scorer 'checks.calledTool': option 'times': Input should be a valid int",
        ),
        (
            [ScorerSpec(scorer_id="tone-scorer"), ScorerSpec(scorer_id="tone-scorer")],
            {},
            "is chosen twice",
        ),
        ([ScorerSpec(scorer_id="tone-scorer")], {"concurrency": 0}, "positive integer"),
        (
            [ScorerSpec(scorer_id="judged")],
            {"judge_model": "gpt4-typo"},
            "litellm cannot route the judge model 'gpt4-typo'",
        ),
    ],
)
def test_bad_configurations_start_nothing(
    service: Service, specs: list[ScorerSpec], config: dict[str, Any], message: str
) -> None:
    dataset = service.import_dataset("qa.csv", DATA)
    with pytest.raises(
        ExperimentConfigError, match=message.replace("(", r"\(").replace(")", r"\)")
    ):
        service.start_experiment(ExperimentConfig(dataset_id=dataset.id, scorers=specs, **config))
    assert service.list_experiments() == []


def test_unknown_ids(service: Service) -> None:
    with pytest.raises(NotFoundError):
        service.start_experiment(
            ExperimentConfig(dataset_id="nope", scorers=[ScorerSpec(scorer_id="tone-scorer")])
        )
    with pytest.raises(NotFoundError):
        service.progress("nope")
    with pytest.raises(NotFoundError):
        service.cancel("nope")


def test_a_database_failure_stops_the_experiment_resumable(
    service: Service, turnstile: Turnstile, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(experiment_id: str, outcomes: Any) -> int:
        raise StorageError("Could not store the scorer results: disk I/O error")

    monkeypatch.setattr(service.store, "add_rows", broken)
    experiment_id = start_gated(service, 30)
    turnstile.let_through(1)  # one result to write; the next run waits until the end
    final = service.wait(experiment_id, timeout=DEADLINE)
    # Stopped by storage, not broken: `interrupted`, so a resume takes it (issue 19).
    assert final.status == "interrupted"
    assert final.error is not None
    assert "(StorageError: Could not store the scorer results: disk I/O error)" in final.error
    assert final.error.startswith("Stopped because the results could not be written")
    assert final.counts.done == 1  # stopped at once, the held run aborted
    info = service.get_experiment(experiment_id)
    assert info.status == "interrupted" and "disk I/O error" in (info.error or "")


# ---- heartbeats ----


def test_a_run_waiting_on_a_slow_scorer_keeps_beating(
    service: Service, turnstile: Turnstile, monkeypatch: pytest.MonkeyPatch
) -> None:
    import core.experiments.result_writer as result_writer

    monkeypatch.setattr(result_writer, "_HEARTBEAT_EVERY_S", 0.1)
    monkeypatch.setattr(result_writer, "_FLUSH_EVERY_S", 0.05)
    beats = threading.Condition()
    beaten = 0
    heartbeat = service.store.heartbeat

    def counted(experiment_id: str) -> None:
        nonlocal beaten
        heartbeat(experiment_id)
        with beats:
            beaten += 1
            beats.notify_all()

    monkeypatch.setattr(service.store, "heartbeat", counted)
    # Another process's view, with a threshold the held run outlives.
    stale_after = 1.0
    observer = Store(service.store.url, stale_after_s=stale_after)
    try:
        experiment_id = start_gated(service, 1)
        turnstile.wait_until(lambda t: t.held == 1)  # from now on no run finishes
        held_since = time.monotonic()
        with beats:
            outlived = beats.wait_for(
                lambda: beaten >= 3 and time.monotonic() - held_since > stale_after, DEADLINE
            )
        assert outlived
        assert observer.get_experiment(experiment_id).status == "running"
        turnstile.open()
        assert service.wait(experiment_id, timeout=DEADLINE).status == "completed"
        assert observer.get_experiment(experiment_id).status == "completed"
    finally:
        observer.close()


def test_an_experiment_whose_process_died_shows_as_interrupted(
    service: Service, database_url: str
) -> None:
    """A CLI run killed mid-way: what it wrote stays, and a later process sees it stopped."""
    dataset = service.import_dataset("qa.csv", DATA)
    [item, *_] = service.dataset_items(dataset.id)
    killed = Store(database_url)  # the dead process's store
    info = killed.create_experiment(
        name="killed",
        dataset_id=dataset.id,
        scorers=[ScorerSpec(scorer_id="gated")],
        scorer_ids=["gated"],
        judge_model=None,
        api_base=None,
        judge_settings={},
        concurrency=1,
    )
    killed.update_experiment_progress(info.id, RunCounts(total=3, succeeded=1))
    killed.add_results(
        info.id, [ScorerOutcome(item_id=item.id, scorer_id="gated", status="success", score=1.0)]
    )
    table = ExperimentRow.__table__
    with killed.engine.begin() as connection:  # its last heartbeat, two minutes ago
        connection.execute(
            sqlalchemy.update(table)
            .where(table.c.id == info.id)
            .values(heartbeat_at=datetime.now(UTC) - timedelta(minutes=2))
        )
    killed.close()

    restarted = Service(database_url, catalog=CATALOG)
    try:
        [listed] = restarted.list_experiments()
        assert listed.status == "interrupted" and listed.counts.succeeded == 1
        progress = restarted.progress(info.id)
        assert progress.status == "interrupted" and progress.finished
        detail = restarted.load_experiment(info.id)
        assert [r.item_id for r in detail.results] == [item.id]
        assert detail.info.scores == {"gated": 1.0}
    finally:
        restarted.store.close()


def test_running_experiments_lists_only_live_runs_of_this_process(
    service: Service, turnstile: Turnstile
) -> None:
    assert service.running_experiments() == []
    experiment_id = start_gated(service, 1)
    assert service.running_experiments() == [experiment_id]
    turnstile.open()
    assert service.wait(experiment_id, timeout=DEADLINE).status == "completed"
    assert service.running_experiments() == []


def test_wait_gives_up_at_its_deadline(service: Service, turnstile: Turnstile) -> None:
    experiment_id = start_gated(service, 1)
    turnstile.wait_until(lambda t: t.held == 1)
    with pytest.raises(TimeoutError, match=r"still running after 0\.01 s"):
        service.wait(experiment_id, timeout=0.01)
    turnstile.open()
    assert service.wait(experiment_id, timeout=DEADLINE).status == "completed"
