"""Experiments on Ray (core/experiments/ray_backend.py): the same stored results, failures,
usage and summary as in-process, with a worker killed mid-run; failures sent back inline only;
the typed judge key never written by Ray; the judge rate limit shared by every worker."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import Cluster, _free_port, cluster_environment

from core.experiments.ray_backend import ray_target
from core.judge.rate_limit import RateLimit
from core.records import ExperimentConfig, ScorerSpec
from core.service import ExperimentConfigError, Service
from core.testing import FakeJudge
from core.testing.fake_judge import Reply, answer_from_schema

TYPED_KEY = "sk-typed-for-ray-0123456789abcdef"
ITEMS = 40
FAILING = (3, 17, 29)
"""Items whose answer is BROKEN: the judge never answers them with JSON, so their judge scorer
fails, on any backend."""
SCORERS = [ScorerSpec(scorer_id="answer-relevancy-scorer"), ScorerSpec(scorer_id="tone-scorer")]


def responder(request: dict[str, Any]) -> Reply:
    """The same answer for the same request, whoever sends it; a little slow (runs overlap)."""
    prompt = " ".join(str(m.get("content", "")) for m in request.get("messages", []))
    if "BROKEN" in prompt:
        return Reply("this is not JSON", delay=0.2)
    answer = answer_from_schema(request)
    assert isinstance(answer, Reply)
    return dataclasses.replace(answer, delay=0.2)


@pytest.fixture
def service(tmp_path: Path, judge_server: FakeJudge) -> Iterator[Service]:
    judge_server.responder = responder
    service = Service(f"sqlite:///{tmp_path / 'ray.db'}", samples_dir=tmp_path / "samples")
    yield service
    service.store.close()


def experiment(service: Service, judge_server: FakeJudge) -> ExperimentConfig:
    rows = b"question,answer\n" + b"".join(
        b"question %d,%s %d\n" % (n, b"BROKEN" if n in FAILING else b"answer", n)
        for n in range(ITEMS)
    )
    dataset = service.import_dataset("items.csv", rows, reuse_existing=True)
    return ExperimentConfig(
        dataset_id=dataset.id,
        scorers=SCORERS,
        judge_model="openai/fake-judge",
        api_base=judge_server.url,
        judge_settings={"num_retries": 0},
        concurrency=4,
    )


def stored(service: Service, experiment_id: str) -> dict[tuple[str, str], tuple[Any, ...]]:
    """The stored results by (item, scorer): what a run decides (not its timings)."""
    results = service.store.experiment_results(experiment_id)
    assert len(results) == len({(r.item_id, r.scorer_id) for r in results})  # none twice
    items = {
        item.id: item.input for item in service.dataset_items(_dataset(service, experiment_id))
    }
    return {
        (items[r.item_id], r.scorer_id): (r.score, r.reason, r.usage, r.judge_calls)
        for r in results
    }


def failed(service: Service, experiment_id: str) -> dict[tuple[str, str], tuple[Any, ...]]:
    items = {
        item.id: item.input for item in service.dataset_items(_dataset(service, experiment_id))
    }
    return {
        (items[f.item_id], f.scorer_id): (f.error_type, f.failed_step, f.usage, f.judge_attempts)
        for f in service.failures(experiment_id)
    }


def _dataset(service: Service, experiment_id: str) -> str:
    return service.get_experiment(experiment_id).dataset_id


def test_a_run_on_ray_with_a_worker_killed_stores_what_the_in_process_run_stores(
    service: Service, judge_server: FakeJudge, ray_cluster: Cluster
) -> None:
    config = experiment(service, judge_server)
    local_id = service.start_experiment(config, api_key=TYPED_KEY, ray_address="in-process")
    assert service.wait(local_id, timeout=300).status == "completed"
    local_requests = judge_server.call_count
    judge_server.reset()

    ray_id = service.start_experiment(
        config.model_copy(update={"name": "on ray"}),
        api_key=TYPED_KEY,
        ray_address=ray_cluster.address,
    )
    killed = _kill_a_chunk_worker(service, ray_id, ray_cluster)
    progress = service.wait(ray_id, timeout=600)

    assert progress.status == "completed", progress.error
    assert killed, "no worker was running a chunk to kill"
    assert stored(service, ray_id) == stored(service, local_id)
    assert failed(service, ray_id) == failed(service, local_id)
    assert len(service.failures(ray_id)) == len(FAILING)
    local, remote = service.get_experiment(local_id), service.get_experiment(ray_id)
    assert remote.counts.model_dump() == local.counts.model_dump()  # usage totals included
    assert [s.model_dump() for s in service.score_summaries(ray_id)] == [
        s.model_dump() for s in service.score_summaries(local_id)
    ]
    # Every request carried the typed key: it reached the workers (and the retried chunk
    # called again what the killed worker had started).
    assert set(judge_server.authorizations) == {f"Bearer {TYPED_KEY}"}
    assert judge_server.call_count >= local_requests
    assert not _files_holding(ray_cluster.temp_dir, TYPED_KEY.encode())
    assert not _files_holding(ray_cluster.temp_dir, b"this is not JSON")  # no failure on disk
    assert not any(ray_cluster.temp_dir.rglob("*spill*/**/*.*"))


def _kill_a_chunk_worker(service: Service, experiment_id: str, cluster: Cluster) -> int | None:
    """kill -9 a worker in the middle of a chunk, once some runs came back."""
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        progress = service.progress(experiment_id)
        if progress.finished:
            return None
        workers = cluster.chunk_workers()
        if workers and progress.counts.succeeded + progress.counts.failed >= 4:
            os.kill(workers[0], signal.SIGKILL)
            return workers[0]
        time.sleep(0.05)
    return None


def _files_holding(folder: Path, needle: bytes) -> list[Path]:
    found = []
    for path in folder.rglob("*"):
        try:
            if path.is_file() and not path.is_socket() and needle in path.read_bytes():
                found.append(path)
        except OSError:
            continue
    return found


def test_the_judge_rate_limit_holds_across_the_workers_of_the_cluster(
    ray_cluster: Cluster,
) -> None:
    import ray

    from core.experiments.ray_limiter import RayLimiterProxy, shared_limiter

    limit, window = 12, 2
    if not ray.is_initialized():  # an experiment's connection may be open still
        ray.init(address=ray_cluster.address, namespace="scorelab", log_to_driver=False)
    actor = shared_limiter({"openai/limited": RateLimit(requests_per_minute=limit)}, window)

    @ray.remote(num_cpus=1)
    def caller(actor: Any, calls: int) -> list[float]:
        import asyncio

        proxy = RayLimiterProxy(actor)

        async def go() -> list[float]:
            times = []
            for _ in range(calls):
                await proxy.acquire("openai/limited", 10)
                times.append(time.time())
            return times

        return asyncio.run(go())

    # One caller on each node (one CPU each): 30 requests against 12 per 2 s window.
    calls = ray.get([caller.remote(actor, 15), caller.remote(actor, 15)])
    times = sorted(calls[0] + calls[1])
    ray.kill(actor)
    assert len(times) == 30
    most = max(sum(1 for t in times if start <= t < start + window) for start in times)
    assert most <= limit + 1
    assert times[-1] - times[0] >= window  # the limit made them wait


def test_ray_addresses_are_read_or_refused_by_name() -> None:
    assert ray_target(None, {}) is None
    assert ray_target("in-process", {"SCORELAB_RAY_ADDRESS": "auto"}) is None
    assert ray_target(None, {"SCORELAB_RAY_ADDRESS": "auto"}).address == "auto"  # type: ignore[union-attr]
    assert ray_target("local:3", {}).local_workers == 3  # type: ignore[union-attr]
    assert ray_target("ray://head:10001", {}).address == "ray://head:10001"  # type: ignore[union-attr]
    assert ray_target("10.0.0.5:6379", {}).address == "10.0.0.5:6379"  # type: ignore[union-attr]
    with pytest.raises(ExperimentConfigError, match="local:N needs N"):
        ray_target("local:0", {})
    with pytest.raises(ExperimentConfigError, match="SCORELAB_RAY_ADDRESS 'http://x'"):
        ray_target(None, {"SCORELAB_RAY_ADDRESS": "http://x"})


PRICED = "openai/gpt-4o-mini"
"""A model in litellm's bundled price table (served by the fake judge at its API base)."""


def priced(request: dict[str, Any]) -> Reply:
    """A valid answer that reports 1,000 prompt and 500 answer tokens (a priced call)."""
    answer = answer_from_schema(request)
    assert isinstance(answer, Reply)
    return dataclasses.replace(
        answer, prompt_tokens=1_000, completion_tokens=500, total_tokens=1_500, delay=0.05
    )


def test_a_spend_cap_holds_across_the_workers_and_a_higher_cap_resumes_it(
    service: Service, judge_server: FakeJudge, ray_cluster: Cluster
) -> None:
    from core.judge.pricing import estimate_cost_usd

    judge_server.responder = priced
    base = experiment(service, judge_server).model_copy(
        update={"judge_model": PRICED, "scorers": [SCORERS[0]]}
    )
    # The answers hold no BROKEN item (the fake answers every prompt validly): no failure.
    local_id = service.start_experiment(base, api_key=TYPED_KEY, ray_address="in-process")
    assert service.wait(local_id, timeout=300).status == "completed"
    per_item = judge_server.call_count / ITEMS
    cost = estimate_cost_usd(PRICED, 1_000, 500)
    assert cost and per_item >= 1
    judge_server.reset()

    cap = 10.5 * per_item * cost  # room for about ten of the forty items
    ray_id = service.start_experiment(
        base.model_copy(update={"name": "capped on ray", "max_cost": cap}),
        api_key=TYPED_KEY,
        ray_address=ray_cluster.address,
    )
    progress = service.wait(ray_id, timeout=600)
    assert progress.status == "budget_reached", progress.error
    answered = judge_server.stats()["byStatus"]["200"]
    in_flight = 2 * base.concurrency  # two nodes of one chunk each, `concurrency` calls each
    assert answered * cost <= cap + in_flight * cost  # one budget for both nodes
    assert answered * cost >= cap - 2 * per_item * cost  # and the cap was used, not cut short
    assert progress.spent_usd == pytest.approx(answered * cost)  # the actor's figure, live
    counts = progress.counts
    assert counts.failed == 0 and counts.skipped > 0 and 0 < counts.succeeded < ITEMS
    kept = stored(service, ray_id)
    assert len(kept) == counts.succeeded  # every finished result kept, nothing half-written
    local = stored(service, local_id)
    assert all(kept[pair] == local[pair] for pair in kept)
    assert service.get_experiment(ray_id).status == "budget_reached"

    # A higher cap resumes it on Ray: only what is missing runs, to the in-process results.
    before = judge_server.call_count
    service.resume_experiment(
        ray_id, api_key=TYPED_KEY, max_cost=ITEMS * 3 * per_item * cost,
        ray_address=ray_cluster.address,
    )  # fmt: skip
    assert service.wait(ray_id, timeout=600).status == "completed"
    assert stored(service, ray_id) == local
    assert judge_server.call_count - before == per_item * (ITEMS - counts.succeeded)


def test_scorelab_run_takes_its_ray_address_and_refuses_a_bad_one(
    tmp_path: Path, ray_cluster: Cluster
) -> None:
    from cli_helpers import environment, items_file, scorelab

    env = {**environment(tmp_path), "RAY_AUTH_MODE": "disabled"}  # as the test cluster
    data = items_file(tmp_path, ["hello there", "fine, thanks", "goodbye"])
    out = tmp_path / "out.json"
    address = ray_cluster.address
    done = scorelab(env, "run", data, "--scorer", "tone-scorer", "--ray-address", address,
                    "--json", out, "--no-progress")  # fmt: skip
    assert done.returncode == 0, done.stderr
    items = json.loads(out.read_text())["items"]
    assert [type(item["results"]["tone-scorer"]["score"]) for item in items] == [float] * 3

    bad = scorelab(env, "run", data, "--scorer", "tone-scorer", "--ray-address", "http://head")
    assert bad.returncode != 0
    assert "'http://head' is not a Ray address" in bad.stderr


def test_a_run_cancelled_on_ray_resumes_on_ray_to_the_in_process_results(
    service: Service, judge_server: FakeJudge, ray_cluster: Cluster
) -> None:
    config = experiment(service, judge_server)
    local_id = service.start_experiment(config, api_key=TYPED_KEY, ray_address="in-process")
    assert service.wait(local_id, timeout=300).status == "completed"

    ray_id = service.start_experiment(
        config.model_copy(update={"name": "cancelled on ray"}),
        api_key=TYPED_KEY,
        ray_address=ray_cluster.address,
    )
    service.wait(ray_id, timeout=300, until=lambda p: p.counts.succeeded >= 4)
    service.cancel(ray_id)
    cancelled = service.wait(ray_id, timeout=300)
    assert cancelled.status == "cancelled"
    assert 0 < len(service.store.experiment_results(ray_id)) < ITEMS * len(SCORERS)

    service.resume_experiment(ray_id, api_key=TYPED_KEY, ray_address=ray_cluster.address)
    assert service.wait(ray_id, timeout=600).status == "completed"
    assert stored(service, ray_id) == stored(service, local_id)
    assert failed(service, ray_id) == failed(service, local_id)


def test_a_local_cluster_is_started_for_the_run_and_stopped_with_it(
    service: Service, judge_server: FakeJudge, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ray

    # Its workers inherit this environment: this checkout's code, as the cluster's nodes.
    monkeypatch.setenv("PYTHONPATH", cluster_environment()["PYTHONPATH"])
    config = experiment(service, judge_server)
    local_id = service.start_experiment(config, api_key=TYPED_KEY, ray_address="in-process")
    assert service.wait(local_id, timeout=300).status == "completed"
    ray_id = service.start_experiment(
        config.model_copy(update={"name": "local:2"}), api_key=TYPED_KEY, ray_address="local:2"
    )
    assert service.wait(ray_id, timeout=600).status == "completed"
    assert stored(service, ray_id) == stored(service, local_id)
    assert failed(service, ray_id) == failed(service, local_id)
    assert not ray.is_initialized()  # the throw-away cluster went with the run


def test_a_cancel_with_abort_stops_the_chunks_in_flight(
    service: Service, judge_server: FakeJudge, ray_cluster: Cluster
) -> None:
    config = experiment(service, judge_server)
    ray_id = service.start_experiment(
        config.model_copy(update={"name": "aborted on ray"}),
        api_key=TYPED_KEY,
        ray_address=ray_cluster.address,
    )
    service.wait(ray_id, timeout=300, until=lambda p: p.counts.succeeded >= 2)
    service.cancel(ray_id, abort_in_flight=True)
    progress = service.wait(ray_id, timeout=120)
    assert progress.status == "cancelled"
    kept = len(service.store.experiment_results(ray_id))
    assert kept < ITEMS * len(SCORERS)
    time.sleep(2)  # nothing arrives once it ended
    assert len(service.store.experiment_results(ray_id)) == kept


def test_an_experiments_rate_limit_holds_at_the_judge_when_it_runs_on_ray(
    tmp_path: Path, judge_server: FakeJudge, ray_cluster: Cluster, monkeypatch: Any
) -> None:
    """The experiment's own limit, through the service: the workers of both nodes share one
    count, measured where it matters, in the fake judge's request log."""
    import ray

    from core.experiments.ray_limiter import ACTOR_NAME
    from core.judge import rate_limit

    limit, window = 6, 2
    monkeypatch.setattr(rate_limit, "DEFAULT_WINDOW_S", window)
    if ray.is_initialized():  # a limiter left by another test keeps its own window
        with contextlib.suppress(ValueError):
            ray.kill(ray.get_actor(ACTOR_NAME, namespace="scorelab"))
    judge_server.responder = lambda request: answer_from_schema(request)
    service = Service(f"sqlite:///{tmp_path / 'limited.db'}", samples_dir=tmp_path / "samples")
    try:
        rows = b"question,answer\n" + b"".join(b"q %d,a %d\n" % (n, n) for n in range(8))
        dataset = service.import_dataset("limited.csv", rows)
        config = ExperimentConfig(
            dataset_id=dataset.id,
            scorers=[ScorerSpec(scorer_id="answer-relevancy-scorer")],
            judge_model="openai/fake-judge",
            api_base=judge_server.url,
            judge_settings={"num_retries": 0},
            concurrency=4,
            rate_limit=RateLimit(requests_per_minute=limit),
        )
        judge_server.reset()
        run_id = service.start_experiment(config, ray_address=ray_cluster.address)
        progress = service.wait(run_id, timeout=300)
    finally:
        service.store.close()
    assert progress.status == "completed", progress.error
    times = sorted(entry["at"] for entry in judge_server.stats()["log"])
    assert len(times) > 2 * limit  # enough requests that the limit had to hold them back
    busiest = max(sum(1 for t in times if start <= t < start + window) for start in times)
    assert busiest <= limit + 1
    assert times[-1] - times[0] >= window


def test_a_run_through_the_ray_client_scores_as_the_local_backend(
    service: Service, judge_server: FakeJudge, ray_cluster: Cluster
) -> None:
    from core.experiments.ray_backend import disconnect

    config = experiment(service, judge_server)
    local_id = service.start_experiment(config, api_key=TYPED_KEY, ray_address="in-process")
    assert service.wait(local_id, timeout=300).status == "completed"
    disconnect()  # a connection to the GCS address another test left open
    try:
        client_id = service.start_experiment(
            config.model_copy(update={"name": "through ray://"}),
            api_key=TYPED_KEY,
            ray_address=ray_cluster.client_address,
        )
        progress = service.wait(client_id, timeout=600)
    except ExperimentConfigError as error:  # what Ray's client servers said, to find why
        raise AssertionError(f"{error}\n{client_server_logs(ray_cluster)}") from error
    finally:
        disconnect()  # the next test connects to the GCS address again
    assert progress.status == "completed", progress.error
    assert stored(service, client_id) == stored(service, local_id)
    assert failed(service, client_id) == failed(service, local_id)
    assert [s.model_dump() for s in service.score_summaries(client_id)] == [
        s.model_dump() for s in service.score_summaries(local_id)
    ]


def client_server_logs(cluster: Cluster) -> str:
    """The tail of each Ray Client server log of the test cluster."""
    logs = sorted(cluster.temp_dir.glob("session_*/logs/ray_client_server*"))
    return "\n".join(f"--- {log.name}\n{log.read_text(errors='replace')[-3000:]}" for log in logs)


UNREACHABLE = ["ray://127.0.0.1:{port}", "127.0.0.1:{port}", "ray://no-such-host.invalid:10001"]
"""Addresses nothing answers at ({port}: a free port, nothing listens there)."""


@pytest.mark.parametrize("address", UNREACHABLE)
def test_a_ray_address_nothing_answers_at_is_refused_before_the_experiment_is_stored(
    service: Service, judge_server: FakeJudge, address: str
) -> None:
    where = address.format(port=_free_port())
    config = experiment(service, judge_server)
    with pytest.raises(ExperimentConfigError) as refused:
        service.start_experiment(config, ray_address=where)
    assert f"The Ray cluster at {where!r} could not be reached" in str(refused.value)
    assert service.list_experiments() == []
    assert judge_server.call_count == 0

    # A resume to it is refused the same way, the experiment left as the cap stopped it.
    from core.judge.pricing import estimate_cost_usd

    judge_server.responder = priced
    cost = estimate_cost_usd(PRICED, 1_000, 500)
    assert cost
    capped = config.model_copy(
        update={"judge_model": PRICED, "scorers": [SCORERS[0]], "max_cost": 2.5 * cost}
    )
    local_id = service.start_experiment(capped, ray_address="in-process", api_key=TYPED_KEY)
    assert service.wait(local_id, timeout=300).status == "budget_reached"
    calls = judge_server.call_count
    with pytest.raises(ExperimentConfigError, match=f"The Ray cluster at {where!r}"):
        service.resume_experiment(
            local_id, ray_address=where, api_key=TYPED_KEY, max_cost=100 * cost
        )
    assert service.get_experiment(local_id).status == "budget_reached"
    assert judge_server.call_count == calls


def test_scorelab_run_refuses_an_unreachable_ray_address_before_it_imports_the_file(
    tmp_path: Path,
) -> None:
    from cli_helpers import environment, items_file, scorelab

    env = {**environment(tmp_path), "RAY_AUTH_MODE": "disabled"}
    data = items_file(tmp_path, ["hello there", "fine, thanks"])
    where = f"127.0.0.1:{_free_port()}"
    done = scorelab(env, "run", data, "--scorer", "tone-scorer", "--ray-address", where)
    assert done.returncode != 0
    assert f"The Ray cluster at {where!r} could not be reached" in done.stderr
    shown = Service(env["SCORELAB_DATABASE_URL"])
    try:
        assert shown.list_datasets() == [] and shown.list_experiments() == []
    finally:
        shown.store.close()
