"""The service: import, catalog, experiments in a background worker; successful results in the
database, failures in memory only; cancel keeps finished rows; no key is ever stored."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy
from scorelab_db import BACKENDS, database

import core.service
import core.service.datasets_desk
from core import JudgeConfig, PromptStep, Scorer, create_scorer
from core.records import (
    ColumnMapping,
    ExperimentConfig,
    FailureCounts,
    ResultQuery,
    RunCounts,
    ScorerOutcome,
    ScorerSpec,
)
from core.scorers import PREBUILT, PrebuiltScorer, ScorerOptions
from core.service import (
    DatasetImportError,
    ExperimentConfigError,
    NotFoundError,
    Service,
    StorageError,
    get_service,
)
from core.storage import Store
from core.storage.tables import ExperimentRow
from core.testing import FakeJudge, Fault

SECRET = "sk-test-never-stored-0123456789"
DATA = (
    b"id,question,answer,expected\n"
    b"a,question 0,answer 0,truth 0\n"
    b"b,question 1,answer 1,truth 1\n"
    b"c,question 2,answer 2,truth 2\n"
)


def fragile(fail_on: str = "question 2") -> Scorer:
    def score(ctx: Any) -> float:
        if ctx.run.input == fail_on:
            raise RuntimeError(f"cannot score {fail_on}")
        return 0.5

    return create_scorer(id="fragile", description="raises on one item").generate_score(score)


DEADLINE = 30.0
"""Seconds any wait of these tests may take before it fails (none waits a fixed time)."""


class Turnstile:
    """Holds every run of the `gated` scorer until the test lets it through, so no run ends on
    its own timing and the tests never guess how long anything takes."""

    def __init__(self) -> None:
        self._permits = threading.Semaphore(0)
        self._open = threading.Event()
        self._changed = threading.Condition()
        self.held = 0
        self.passed = 0

    def let_through(self, runs: int) -> None:
        self._permits.release(runs)

    def open(self) -> None:
        """Let every run through, now and from now on."""
        self._open.set()
        self._permits.release(10_000)

    def wait_until(self, condition: Callable[[Turnstile], bool]) -> None:
        with self._changed:
            assert self._changed.wait_for(lambda: condition(self), DEADLINE), "turnstile"

    async def enter(self) -> None:
        await asyncio.to_thread(self._enter)

    def _enter(self) -> None:  # in a worker thread: it blocks
        self._count(held=1)
        try:
            if not self._open.is_set() and not self._permits.acquire(timeout=DEADLINE):
                raise TimeoutError("the test never let this run through")
        finally:
            self._count(held=-1, passed=1)

    def _count(self, held: int = 0, passed: int = 0) -> None:
        with self._changed:
            self.held += held
            self.passed += passed
            self._changed.notify_all()


_turnstile = Turnstile()


def gated() -> Scorer:
    turnstile = _turnstile  # the current test's

    async def score(ctx: Any) -> float:
        await turnstile.enter()
        return 1.0

    return create_scorer(id="gated", description="waits for the test").generate_score(score)


def judged(model: JudgeConfig, options: dict[str, Any] | None = None) -> Scorer:
    judge = model.model_copy(update={"instructions": "You are a strict grader."})
    return (
        create_scorer(id="judged", description="judge score and reason", judge=judge)
        .generate_score(PromptStep(description="Score", create_prompt=lambda ctx: "score this"))
        .generate_reason(PromptStep(description="Why", create_prompt=lambda ctx: "explain this"))
    )


class FragileOptions(ScorerOptions):
    fail_on: str = "question 2"
    """input to fail on"""


CATALOG = {
    **PREBUILT,
    "fragile": PrebuiltScorer(
        "fragile", "Fragile", "Raises on one item", fragile, False, FragileOptions
    ),
    "gated": PrebuiltScorer("gated", "Gated", "Waits for the test", gated, False),
    "judged": PrebuiltScorer("judged", "Judged", "An LLM judge", judged, True),
}


@pytest.fixture(params=BACKENDS)
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    with database(request.param, tmp_path) as url:
        yield url


@pytest.fixture
def turnstile(monkeypatch: pytest.MonkeyPatch) -> Iterator[Turnstile]:
    fresh = Turnstile()
    monkeypatch.setitem(globals(), "_turnstile", fresh)
    yield fresh
    fresh.open()  # never leave a run (or its thread) held


@pytest.fixture
def service(database_url: str, tmp_path: Path, turnstile: Turnstile) -> Iterator[Service]:
    service = Service(database_url, catalog=CATALOG, samples_dir=tmp_path / "samples")
    yield service
    turnstile.open()
    for info in service.list_experiments():
        if not service.progress(info.id).finished:
            service.cancel(info.id, abort_in_flight=True)
            service.wait(info.id, timeout=DEADLINE)
    service.store.close()


def many(count: int) -> bytes:
    return b"question,answer\n" + b"".join(b"q%d,a%d\n" % (n, n) for n in range(count))


def start_gated(service: Service, items: int, concurrency: int = 1) -> str:
    dataset = service.import_dataset(f"{items}.csv", many(items))
    return service.start_experiment(
        ExperimentConfig(
            dataset_id=dataset.id, scorers=[ScorerSpec(scorer_id="gated")], concurrency=concurrency
        )
    )


def run(service: Service, dataset_id: str, *specs: ScorerSpec, **config: Any) -> str:
    experiment_id = service.start_experiment(
        ExperimentConfig(dataset_id=dataset_id, scorers=list(specs), **config)
    )
    assert service.wait(experiment_id, timeout=60).finished
    return experiment_id


def dump_database(url: str) -> str:
    """Every value of every table, as text (to look for secrets)."""
    engine = sqlalchemy.create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
    text = []
    with engine.connect() as connection:
        for table in ("datasets", "dataset_items", "experiments", "scorer_results"):
            text += [
                repr(tuple(row))
                for row in connection.execute(sqlalchemy.text(f"SELECT * FROM {table}"))
            ]
    engine.dispose()
    return "\n".join(text)


# ---- datasets ----


def test_import_and_preview(service: Service) -> None:
    report = service.preview_import("qa.csv", DATA)
    assert report.ok and report.row_count == 3 and service.list_datasets() == []
    info = service.import_dataset("qa.csv", DATA)
    assert (info.name, info.item_count, info.format) == ("qa", 3, "csv")
    assert [i.id for i in service.dataset_items(info.id)] == ["a", "b", "c"]
    named = service.import_dataset("qa.csv", DATA, name="Mine")
    assert named.name == "Mine" and named.id != info.id
    assert service.import_dataset("qa.csv", DATA, reuse_existing=True).id in {info.id, named.id}


def test_import_with_an_explicit_mapping(service: Service) -> None:
    mapping = ColumnMapping(input="answer", output="question", metadata=["expected"])
    info = service.import_dataset("qa.csv", DATA, mapping=mapping)
    first = service.dataset_items(info.id)[0]
    assert (first.id, first.input, first.output) == ("1", "answer 0", "question 0")
    assert first.metadata == {"expected": "truth 0"}


def test_a_parsed_upload_is_previewed_and_imported_without_reading_it_again(
    service: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    parsed = service.read_upload("qa.csv", DATA)

    def no_second_read(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("the file was read again")

    monkeypatch.setattr(core.service.datasets_desk, "read_upload", no_second_read)
    proposed = service.preview(parsed)
    assert proposed.ok and proposed.mapping_used is not None
    assert proposed.mapping_used.input == "question"
    swapped = ColumnMapping(id="id", input="answer", output="question", metadata=["expected"])
    report = service.preview(parsed, swapped)
    assert report.ok and report.mapping_used == swapped
    assert report.fingerprint != proposed.fingerprint
    wrong = ColumnMapping(input="answer", output="reply")
    with pytest.raises(DatasetImportError) as raised:
        service.import_parsed(parsed, wrong)
    assert [p.code for p in raised.value.report.problems] == ["missing_column"]
    info = service.import_parsed(parsed, swapped, name="Swapped")
    assert (info.name, info.file_name, info.fingerprint) == (
        "Swapped",
        "qa.csv",
        report.fingerprint,
    )
    first = service.dataset_items(info.id)[0]
    assert (first.id, first.input, first.output) == ("a", "answer 0", "question 0")
    assert service.import_parsed(parsed, swapped, reuse_existing=True).id == info.id


def test_a_bad_file_raises_with_its_problems_and_stores_nothing(service: Service) -> None:
    with pytest.raises(DatasetImportError) as raised:
        service.import_dataset("qa.csv", b"id,question,answer\na,q,\na,q,x\n")
    problems = raised.value.report.problems
    assert [p.code for p in problems] == ["empty_output", "duplicate_id"]
    assert str(raised.value) == "qa.csv: Row 1: the output (column 'answer') is empty (and 1 more)"
    assert service.list_datasets() == []


def test_sample_datasets_are_imported_once(service: Service) -> None:
    samples = service.samples_dir
    assert service.ensure_sample_datasets() == []
    samples.mkdir()
    (samples / "one.csv").write_bytes(DATA)
    (samples / "two.jsonl").write_bytes(b'{"input": "a", "output": "b"}\n')
    (samples / "README.md").write_text("not a dataset")
    (samples / "broken.csv").write_bytes(b"foo,bar\n1,2\n")
    first = service.ensure_sample_datasets()
    assert sorted(d.name for d in first) == ["one", "two"]
    again = service.ensure_sample_datasets()
    assert sorted(d.id for d in again) == sorted(d.id for d in first)
    assert len(service.list_datasets()) == 2


# ---- catalog ----


def test_scorer_catalog_and_estimates(service: Service) -> None:
    catalog = {entry.id: entry for entry in service.scorer_catalog()}
    assert catalog["judged"].calls_judge and not catalog["tone-scorer"].calls_judge
    assert [s.kind for s in catalog["judged"].steps] == ["prompt", "prompt"]
    assert catalog["checks.includes"].steps[-1].name == "generateScore"
    assert catalog["fragile"].options[0].name == "fail_on"
    dataset = service.import_dataset("qa.csv", DATA)
    assert service.estimate_judge_calls(dataset.id, ["judged", "tone-scorer"]) == 6
    assert service.estimate_judge_calls(dataset.id, ["tone-scorer"]) == 0


# ---- experiments ----


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
    assert "0.25" not in stored  # the recovered score is never written
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


def test_get_service_is_one_per_process(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import core.service as module

    monkeypatch.setattr(module, "_service", None)
    monkeypatch.setenv("SCORELAB_DATABASE_URL", f"sqlite:///{tmp_path / 'one.db'}")
    assert get_service() is get_service()
    assert get_service().store.url.endswith("one.db")


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
    import core.experiments.jobs as jobs

    monkeypatch.setattr(jobs, "_HEARTBEAT_EVERY_S", 0.1)
    monkeypatch.setattr(jobs, "_FLUSH_EVERY_S", 0.05)
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


def test_a_large_experiment_is_read_a_page_and_an_aggregate_at_a_time(
    service: Service, database_url: str
) -> None:
    dataset = service.import_dataset("qa.csv", DATA)
    experiment_id = run(
        service,
        dataset.id,
        ScorerSpec(scorer_id="fragile"),
        ScorerSpec(scorer_id="checks.includes", options={"value": "answer"}),
    )
    page = service.result_page(experiment_id, ResultQuery(page_size=2))
    assert (page.total, page.pages, [r.item_id for r in page.rows]) == (3, 2, ["a", "b"])
    assert page.rows[0].scores == {"fragile": 0.5, "checks.includes": 1.0}
    last = service.result_page(experiment_id, ResultQuery(page_size=2, page=2))
    assert [(r.item_id, r.failed) for r in last.rows] == [("c", ["fragile"])]  # from memory
    failed = service.result_page(experiment_id, ResultQuery(failed_only=True))
    assert [r.item_id for r in failed.rows] == ["c"]
    narrowed = ResultQuery(failed_only=True, scorer_ids=["checks.includes"])
    assert service.result_page(experiment_id, narrowed).total == 0
    assert service.failure_counts(experiment_id) == FailureCounts(
        total=1, in_memory=1, by_scorer={"fragile": 1}, details_in_memory=True
    )
    summaries = {s.scorer_id: s for s in service.score_summaries(experiment_id)}
    assert (summaries["fragile"].count, summaries["fragile"].mean) == (2, 0.5)
    histograms = {h.scorer_id: h.counts for h in service.score_histograms(experiment_id)}
    assert histograms == {"fragile": [0] * 5 + [2] + [0] * 4, "checks.includes": [0] * 9 + [3]}
    assert {u.scorer_id: u.runs for u in service.judge_usage(experiment_id)} == {
        "fragile": 0,  # code scorers: no run called the judge
        "checks.includes": 0,
    }
    one = service.item_detail(experiment_id, "c")
    assert [i.id for i in one.items] == ["c"]
    assert [(r.scorer_id, r.item_id) for r in one.results] == [("checks.includes", "c")]
    assert [(f.scorer_id, f.item_id) for f in one.failures] == [("fragile", "c")]
    with pytest.raises(NotFoundError, match="No item 'zz'"):
        service.item_detail(experiment_id, "zz")
    # Another process knows the stored count of failures, not their details.
    other = Service(database_url, catalog=CATALOG)
    assert other.failure_counts(experiment_id) == FailureCounts(
        total=1, in_memory=0, details_in_memory=False
    )
    assert other.result_page(experiment_id, ResultQuery(failed_only=True)).total == 0
    other.store.close()


def test_judge_usage_is_priced_by_the_service(
    service: Service, judge_server: FakeJudge, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCORELAB_JUDGE_API_KEY", SECRET)
    dataset = service.import_dataset("qa.csv", DATA)
    experiment_id = run(
        service,
        dataset.id,
        ScorerSpec(scorer_id="judged"),
        judge_model="openai/gpt-4o-mini",  # a model litellm's price table knows
        api_base=judge_server.url,
    )
    (usage,) = service.judge_usage(experiment_id)
    results = service.store.experiment_results(experiment_id)
    assert usage.judge_calls == sum(r.judge_calls for r in results) > 0
    assert usage.usage.input_tokens == sum(r.usage.input_tokens or 0 for r in results)
    assert usage.est_cost_usd is not None and usage.est_cost_usd > 0
