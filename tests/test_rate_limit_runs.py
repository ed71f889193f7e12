"""The judge rate limit of an experiment (scorelab issue 15, point 3), from the service and from
`scorelab run --rpm/--tpm`: measured on the fake judge's request log, with the limiter's window
shortened to 1 s (`core.judge.rate_limit.DEFAULT_WINDOW_S`) so that a run takes seconds."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy
from cli_helpers import JUDGED, items_file, judge_calls_per_item

from core import JudgeConfig, PromptStep, Scorer, create_scorer
from core.cli import main
from core.judge import rate_limit
from core.records import ExperimentConfig, RateLimit, ScorerSpec
from core.scorers import PREBUILT, PrebuiltScorer
from core.service import ExperimentConfigError, Service
from core.storage.tables import ExperimentRow, ScoreRow
from core.testing import FakeJudge
from core.testing.fake_judge import answer_from_schema

WINDOW = 1
"""The limiter's window in these tests, in seconds."""


ARRIVAL_JITTER_S = 0.35
"""How much later than its grant a request may reach the fake judge: the limiter grants by its
own clock, then litellm builds and sends the request (0.23 s once, on a loaded CI machine), so
a window's first requests can arrive late and the next window's on time."""


def busiest_window(times: list[float]) -> int:
    """The most requests any span of `WINDOW` less `ARRIVAL_JITTER_S` seconds (from any
    arrival) holds: a limiter that keeps to its rate never lets more than its rate through in
    one, whatever each request's way to the server; without one, every request is in one."""
    times = sorted(times)
    span = WINDOW - ARRIVAL_JITTER_S
    return max(
        (sum(1 for t in times[i:] if t < start + span) for i, start in enumerate(times)),
        default=0,
    )


@pytest.fixture(autouse=True)
def short_windows(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(rate_limit, "DEFAULT_WINDOW_S", WINDOW)
    rate_limit.install_limiter(None)
    yield
    rate_limit.install_limiter(None)


def judged(model: JudgeConfig, options: dict[str, Any] | None = None) -> Scorer:
    judge = model.model_copy(update={"instructions": "You are a strict grader."})
    return create_scorer(id="judged", description="judge score", judge=judge).generate_score(
        PromptStep(description="Score", create_prompt=lambda ctx: f"Score: {ctx.run.output}")
    )


CATALOG = {**PREBUILT, "judged": PrebuiltScorer("judged", "Judged", "An LLM judge", judged, True)}


@pytest.fixture
def service(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Service]:
    monkeypatch.setenv("SCORELAB_JUDGE_API_KEY", "test-key")
    service = Service(f"sqlite:///{tmp_path / 'db.sqlite'}", catalog=CATALOG)
    yield service
    for experiment_id in service.running_experiments():
        service.cancel(experiment_id, abort_in_flight=True)
        service.wait(experiment_id, timeout=30)
    service.store.close()


def start(service: Service, judge: FakeJudge, items: int, **fields: Any) -> str:
    rows = "".join(f"q{n},answer {n}\n" for n in range(items))
    dataset = service.import_dataset("items.csv", ("question,answer\n" + rows).encode())
    return service.start_experiment(
        ExperimentConfig(
            dataset_id=dataset.id,
            scorers=[ScorerSpec(scorer_id="judged")],
            judge_model="openai/fake-judge",
            api_base=judge.url,
            judge_settings={"num_retries": 0},
            concurrency=8,
            **fields,
        )
    )


def test_an_experiment_runs_under_its_rate_limit_and_only_while_it_runs(
    service: Service, judge_server: FakeJudge
) -> None:
    seen: list[object] = []

    def answer(request: dict[str, Any]) -> Any:
        seen.append(rate_limit.current_limiter())  # what judge calls ask while the run goes
        return answer_from_schema(request)

    judge_server.responder = answer
    experiment_id = start(service, judge_server, 1)  # warms litellm's client up
    assert service.wait(experiment_id, timeout=60).status == "completed"
    assert seen == [None]  # a model at another API base has no default limit
    judge_server.reset()

    limit = RateLimit(requests_per_minute=3)
    experiment_id = start(service, judge_server, 8, rate_limit=limit)
    assert service.wait(experiment_id, timeout=60).status == "completed"
    arrivals = [entry["at"] for entry in judge_server.stats()["log"]]
    assert len(arrivals) == 8
    assert busiest_window(arrivals) <= 3 + 1  # within one request
    assert max(arrivals) - min(arrivals) >= 2 * WINDOW  # 8 at 3 a window: three windows
    limiter = seen[-1]
    assert isinstance(limiter, rate_limit.LocalLimiter)
    assert limiter.window_seconds == WINDOW
    assert rate_limit.current_limiter() is None  # taken away when the experiment ended


def test_an_experiment_without_a_judge_model_is_not_limited(service: Service) -> None:
    rows = b"question,answer\nq,a\n"
    dataset = service.import_dataset("items.csv", rows)
    limit = RateLimit(requests_per_minute=1)
    experiment_id = service.start_experiment(
        ExperimentConfig(
            dataset_id=dataset.id,
            scorers=[ScorerSpec(scorer_id="tone-scorer")],
            rate_limit=limit,
        )
    )
    assert service.wait(experiment_id, timeout=60).status == "completed"
    assert rate_limit.current_limiter() is None


# ---- scorelab run --rpm/--tpm ----


@pytest.mark.parametrize("option", ["--rpm", "--tpm"])
@pytest.mark.parametrize("value", ["0", "-3", "1.5", "ten"])
def test_a_bad_rate_is_a_usage_error_naming_the_option(
    option: str, value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["run", "data.csv", "--scorer", "x", option, value])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith(
        f"scorelab: error: argument {option}: expected a whole number per minute above 0"
    )
    assert f"got {value!r}" in err
    assert len(err.strip().splitlines()) == 1


def test_scorelab_run_rpm_limits_the_judge_requests(
    tmp_path: Path, judge_server: FakeJudge, monkeypatch: pytest.MonkeyPatch
) -> None:
    # In this process (main, not the console script), so that the window is 1 s.
    monkeypatch.setenv("SCORELAB_DATABASE_URL", f"sqlite:///{tmp_path / 'cli.db'}")
    monkeypatch.setenv("SCORELAB_JUDGE_CACHE", str(tmp_path / "judge-cache"))
    judge_server.responder = answer_from_schema
    common = [
        "--scorer", JUDGED, "--judge-model", "openai/fake-judge", "--api-base", judge_server.url,
        "--judge-setting", "num_retries=0", "--no-progress", "--concurrency", "8",
    ]  # fmt: skip
    assert main(["run", str(items_file(tmp_path, ["warm"])), *common]) == 0  # litellm warmed
    judge_server.reset()

    data = items_file(tmp_path, [f"answer {n}" for n in range(6)])
    out = tmp_path / "out.json"
    assert (
        main(["run", str(data), *common, "--rpm", "4", "--tpm", "100000", "--json", str(out)]) == 0
    )
    arrivals = [entry["at"] for entry in judge_server.stats()["log"]]
    summary = json.loads(out.read_text())["summary"]
    assert summary["judgeAttempts"] == len(arrivals) > 4
    assert busiest_window(arrivals) <= 4 + 1  # within one request
    assert max(arrivals) - min(arrivals) >= WINDOW  # more requests than one window holds


# ---- the rate limit kept with the experiment (issue 22, point 6) ----


def stopped_part_way(service: Service, experiment_id: str, items: list[str]) -> None:
    """As if it had been cancelled before these items were stored."""
    results = ScoreRow.__table__
    experiments = ExperimentRow.__table__
    with service.store.engine.begin() as connection:
        connection.execute(sqlalchemy.delete(results).where(results.c.item_id.in_(items)))
        connection.execute(
            sqlalchemy.update(experiments)
            .where(experiments.c.id == experiment_id)
            .values(status="cancelled")
        )


def limits_seen(judge: FakeJudge) -> list[RateLimit | None]:
    """Makes the fake judge note the limit its callers' limiter holds for the model."""
    seen: list[RateLimit | None] = []

    def answer(request: dict[str, Any]) -> Any:
        limiter = rate_limit.current_limiter()
        held = limiter.limits if isinstance(limiter, rate_limit.LocalLimiter) else {}
        seen.append(held.get("openai/fake-judge"))
        return answer_from_schema(request)

    judge.responder = answer
    return seen


def test_a_resume_keeps_the_stored_rate_limit_and_one_given_replaces_it_stored(
    service: Service, judge_server: FakeJudge
) -> None:
    seen = limits_seen(judge_server)
    started = RateLimit(requests_per_minute=3, tokens_per_minute=90_000)
    experiment_id = start(service, judge_server, 8, rate_limit=started)
    assert service.wait(experiment_id, timeout=60).status == "completed"
    assert service.get_experiment(experiment_id).rate_limit == started  # stored with it
    assert set(seen) == {started}

    stopped_part_way(service, experiment_id, [str(n) for n in range(1, 8)])
    seen.clear()
    judge_server.reset()
    service.resume_experiment(experiment_id)  # no limit given: the stored one
    assert service.wait(experiment_id, timeout=60).status == "completed"
    arrivals = [entry["at"] for entry in judge_server.stats()["log"]]
    assert len(arrivals) == 7 and set(seen) == {started}
    assert busiest_window(arrivals) <= 3 + 1  # the stored limit held the resumed run back
    assert max(arrivals) - min(arrivals) >= WINDOW

    stopped_part_way(service, experiment_id, ["1", "2"])
    seen.clear()
    service.resume_experiment(experiment_id, rate_limit=RateLimit(requests_per_minute=5))
    assert service.wait(experiment_id, timeout=60).status == "completed"
    changed = RateLimit(requests_per_minute=5, tokens_per_minute=90_000)  # tpm kept
    assert set(seen) == {changed} and len(seen) == 2
    assert service.get_experiment(experiment_id).rate_limit == changed  # stored for the next


def test_a_refused_resume_leaves_the_stored_rate_limit_alone(
    service: Service, judge_server: FakeJudge
) -> None:
    experiment_id = start(service, judge_server, 1, rate_limit=RateLimit(requests_per_minute=3))
    assert service.wait(experiment_id, timeout=60).status == "completed"
    with pytest.raises(ExperimentConfigError, match="is completed"):
        service.resume_experiment(experiment_id, rate_limit=RateLimit(requests_per_minute=9))
    assert service.get_experiment(experiment_id).rate_limit == RateLimit(requests_per_minute=3)


def test_scorelab_resume_rpm_tpm_change_the_stored_limit(
    tmp_path: Path, judge_server: FakeJudge, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    monkeypatch.setenv("SCORELAB_DATABASE_URL", url)
    monkeypatch.setenv("SCORELAB_JUDGE_CACHE", str(tmp_path / "judge-cache"))
    seen = limits_seen(judge_server)
    calls = judge_calls_per_item()
    data = items_file(tmp_path, [f"answer {n}" for n in range(4)])
    common = ["--no-progress"]
    run = [
        "run", str(data), "--scorer", JUDGED, "--judge-model", "openai/fake-judge",
        "--api-base", judge_server.url, "--judge-setting", "num_retries=0", "--rpm", "40",
    ]  # fmt: skip
    assert main([*run, *common]) == 0
    service = Service(url)
    try:
        (info,) = service.list_experiments()
        assert info.rate_limit == RateLimit(requests_per_minute=40)  # `run --rpm` stored
        stopped_part_way(service, info.id, ["i2", "i3"])
        seen.clear()
        assert main(["resume", info.id, "--tpm", "50000", *common]) == 0
        both = RateLimit(requests_per_minute=40, tokens_per_minute=50_000)
        assert set(seen) == {both} and len(seen) == 2 * calls
        assert service.get_experiment(info.id).rate_limit == both
        stopped_part_way(service, info.id, ["i3"])
        seen.clear()
        assert main(["resume", info.id, "--rpm", "7", *common]) == 0
        seven = RateLimit(requests_per_minute=7, tokens_per_minute=50_000)
        assert set(seen) == {seven} and len(seen) == calls
        assert service.get_experiment(info.id).rate_limit == seven
    finally:
        service.store.close()


def test_scorelab_resume_refuses_a_bad_rate_naming_the_option(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["resume", "0123", "--rpm", "0"]) == 2
    err = capsys.readouterr().err
    assert "argument --rpm: expected a whole number per minute above 0" in err
