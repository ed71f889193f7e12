"""Experiments with the judge cache, the cost estimate and the spend cap (docs/core.md): a
re-run with the cache costs no request; the estimate sends none; the cap stops new judge calls
near the cap, keeps every finished result, and refuses a model without a price."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy

from core import JudgeConfig, PromptStep, Scorer, create_scorer
from core.judge import cache as judge_cache_module
from core.judge.cache import CACHE_ENV
from core.records import ExperimentConfig, ScorerSpec
from core.scorers import PREBUILT, PrebuiltScorer
from core.service import ExperimentConfigError, Service
from core.storage.tables import ExperimentRow
from core.testing import FakeJudge, Reply

PRICED_MODEL = "openai/gpt-4o-mini"
"""A model in litellm's bundled price table (pointed at the fake judge by its API base)."""
PROMPT_TOKENS, COMPLETION_TOKENS = 1_000, 500
"""What the fake judge reports for every answer (its `usage`)."""


def judged(model: JudgeConfig, options: dict[str, Any] | None = None) -> Scorer:
    judge = model.model_copy(update={"instructions": "You are a strict grader."})
    return (
        create_scorer(id="judged", description="judge score and reason", judge=judge)
        .generate_score(
            PromptStep(description="Score", create_prompt=lambda ctx: f"Score: {ctx.run.output}")
        )
        .generate_reason(
            PromptStep(description="Why", create_prompt=lambda ctx: f"Why: {ctx.run.output}")
        )
    )


CATALOG = {**PREBUILT, "judged": PrebuiltScorer("judged", "Judged", "An LLM judge", judged, True)}


def answers(request: dict[str, Any]) -> Reply:
    text = request["messages"][-1]["content"]
    content = "Because." if text.startswith("Why") else '{"score": 0.5}'
    return Reply(content, prompt_tokens=PROMPT_TOKENS, completion_tokens=COMPLETION_TOKENS)


@pytest.fixture
def service(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Service]:
    monkeypatch.setenv("SCORELAB_JUDGE_API_KEY", "test-key")
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    judge_cache_module._store.cache_clear()
    service = Service(f"sqlite:///{tmp_path / 'db.sqlite'}", catalog=CATALOG)
    yield service
    for experiment_id in service.running_experiments():
        service.cancel(experiment_id, abort_in_flight=True)
        service.wait(experiment_id, timeout=30)
    service.store.close()
    judge_cache_module._store.cache_clear()


@pytest.fixture
def priced_judge(judge_server: FakeJudge) -> FakeJudge:
    judge_server.responder = answers
    return judge_server


def dataset(service: Service, outputs: list[str]) -> str:
    rows = "".join(f"q{n},{output}\n" for n, output in enumerate(outputs))
    return service.import_dataset("items.csv", ("question,answer\n" + rows).encode()).id


def config(dataset_id: str, judge: FakeJudge, **fields: Any) -> ExperimentConfig:
    settings = fields.pop("judge_settings", {"num_retries": 0})
    return ExperimentConfig(
        dataset_id=dataset_id,
        scorers=[ScorerSpec(scorer_id="judged")],
        judge_model=fields.pop("judge_model", PRICED_MODEL),
        api_base=judge.url,
        judge_settings=settings,
        **fields,
    )


def run(service: Service, experiment: ExperimentConfig) -> str:
    experiment_id = service.start_experiment(experiment)
    assert service.wait(experiment_id, timeout=60).finished
    return experiment_id


def call_cost() -> float:
    """What one fake answer costs in litellm's price table (its own figure, not ours)."""
    from core.judge.pricing import estimate_cost_usd

    cost = estimate_cost_usd(PRICED_MODEL, PROMPT_TOKENS, COMPLETION_TOKENS)
    assert cost is not None and cost > 0
    return cost


# ---- the judge cache ----


def test_a_rerun_with_the_cache_costs_no_request(service: Service, priced_judge: FakeJudge) -> None:
    dataset_id = dataset(service, [f"answer {n}" for n in range(5)])
    first = service.get_experiment(run(service, config(dataset_id, priced_judge, cache=True)))
    assert priced_judge.call_count == 10  # 5 items x 2 prompt steps
    assert (first.counts.judge_calls, first.counts.cached_calls) == (10, 0)

    experiment_id = service.start_experiment(config(dataset_id, priced_judge, cache=True))
    progress = service.wait(experiment_id, timeout=60)
    assert priced_judge.call_count == 10  # nothing new reached the judge
    assert progress.status == "completed"
    assert progress.counts.cached_calls == 10
    assert (progress.counts.judge_calls, progress.counts.judge_attempts) == (0, 0)
    assert progress.counts.usage.is_empty()  # nothing paid for
    info = service.get_experiment(experiment_id)  # from the database
    assert (info.counts.cached_calls, info.counts.judge_calls) == (10, 0)
    assert info.cache and info.max_cost is None
    detail = service.load_experiment(experiment_id)
    assert [r.score for r in detail.results] == [0.5] * 5
    executions = [
        e for r in detail.results for s in r.result["judge"].values() for e in s["executions"]
    ]
    assert all(e["cached"] is True and e["attemptCount"] == 0 for e in executions)


def test_a_changed_temperature_misses_and_the_cache_off_is_never_read(
    service: Service, priced_judge: FakeJudge
) -> None:
    dataset_id = dataset(service, ["a", "b"])
    run(service, config(dataset_id, priced_judge, cache=True))
    assert priced_judge.call_count == 4
    warmer = {"num_retries": 0, "temperature": 0.9}
    run(service, config(dataset_id, priced_judge, cache=True, judge_settings=warmer))
    assert priced_judge.call_count == 8
    off = service.get_experiment(run(service, config(dataset_id, priced_judge)))
    assert priced_judge.call_count == 12
    assert off.counts.cached_calls == 0


# ---- the estimate ----


def test_the_estimate_counts_the_real_prompts_and_sends_nothing(
    service: Service, priced_judge: FakeJudge
) -> None:
    outputs = ["short", "a much longer answer " * 40, "medium length answer " * 5]
    dataset_id = dataset(service, outputs)
    estimate = service.estimate_cost(config(dataset_id, priced_judge))
    assert priced_judge.call_count == 0
    assert estimate.is_estimate and estimate.priced
    assert (estimate.items, estimate.sample_size, estimate.judge_calls) == (3, 3, 6)
    assert 0 < estimate.input_tokens_low < estimate.input_tokens_typical
    assert estimate.input_tokens_typical < estimate.input_tokens_high
    # The longest answer is 40 times "a much longer answer ": its two prompts alone hold
    # hundreds of tokens, so every item priced like it is far above the shortest.
    assert estimate.input_tokens_high > 3 * 2 * 160
    assert estimate.output_tokens_low <= estimate.output_tokens_typical
    assert estimate.output_tokens_typical <= estimate.output_tokens_high
    assert estimate.cost_usd_low is not None and estimate.cost_usd_high is not None
    assert 0 < estimate.cost_usd_low < estimate.cost_usd_typical < estimate.cost_usd_high

    one = service.estimate_cost(config(dataset_id, priced_judge), sample_size=1)
    assert one.sample_size == 1
    assert one.input_tokens_low == one.input_tokens_high  # one item: no range
    assert one.input_tokens_high < estimate.input_tokens_high  # the first item is the shortest


def test_the_estimate_of_a_model_without_a_price_has_tokens_and_no_dollars(
    service: Service, priced_judge: FakeJudge
) -> None:
    dataset_id = dataset(service, ["a", "b"])
    estimate = service.estimate_cost(config(dataset_id, priced_judge, judge_model="openai/fake"))
    assert not estimate.priced
    assert estimate.input_tokens_typical > 0
    assert (estimate.cost_usd_low, estimate.cost_usd_typical, estimate.cost_usd_high) == (
        None,
        None,
        None,
    )
    with pytest.raises(ExperimentConfigError, match="sample size"):
        service.estimate_cost(config(dataset_id, priced_judge), sample_size=0)


# ---- the cap ----


@pytest.mark.parametrize("concurrency", [1, 4])
def test_the_cap_stops_new_judge_calls_and_keeps_finished_results(
    service: Service, priced_judge: FakeJudge, concurrency: int
) -> None:
    dataset_id = dataset(service, [f"answer {n}" for n in range(40)])
    cost = call_cost()
    cap = 12.5 * cost  # room for about six runs of two calls each
    experiment_id = run(
        service, config(dataset_id, priced_judge, max_cost=cap, concurrency=concurrency)
    )
    progress = service.progress(experiment_id)
    assert progress.status == "budget_reached"
    info = service.get_experiment(experiment_id)
    assert info.status == "budget_reached" and info.max_cost == cap and not info.cache
    spent = priced_judge.stats()["byStatus"]["200"] * cost  # what the provider answered
    assert spent <= cap + concurrency * cost  # past the cap by the calls in flight at most
    assert spent >= cap - 3 * cost  # and it did use the budget, not stop at once
    assert progress.spent_usd == pytest.approx(spent)  # litellm's figure, live in the progress
    counts = progress.counts
    assert counts.skipped > 0 and counts.failed == 0
    detail = service.load_experiment(experiment_id)
    assert len(detail.results) == counts.succeeded > 0  # every finished result kept
    assert all(r.score == 0.5 for r in detail.results)


def test_a_cap_on_a_model_without_a_price_refuses_to_start(
    service: Service, priced_judge: FakeJudge
) -> None:
    dataset_id = dataset(service, ["a"])
    unpriced = config(dataset_id, priced_judge, judge_model="openai/fake-judge", max_cost=1.0)
    with pytest.raises(ExperimentConfigError, match="'openai/fake-judge'"):
        service.start_experiment(unpriced)
    with pytest.raises(ExperimentConfigError, match="above"):
        service.start_experiment(config(dataset_id, priced_judge, max_cost=0))
    assert service.list_experiments() == []  # nothing stored
    assert priced_judge.call_count == 0


def test_a_cache_that_cannot_be_opened_refuses_the_experiment(
    service: Service, priced_judge: FakeJudge, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    dataset_id = dataset(service, ["a"])
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder should be")
    monkeypatch.setenv(CACHE_ENV, str(blocker))
    with pytest.raises(ExperimentConfigError, match=r"judge cache file .* cannot be opened"):
        service.start_experiment(config(dataset_id, priced_judge, cache=True))
    assert service.list_experiments() == []
    run(service, config(dataset_id, priced_judge))  # the cache off is never opened
    assert priced_judge.call_count == 2


# ---- a capped experiment resumed ----


def test_a_capped_experiment_resumes_with_what_is_left_of_a_higher_cap(
    service: Service, priced_judge: FakeJudge
) -> None:
    dataset_id = dataset(service, [f"answer {n}" for n in range(12)])
    cost = call_cost()
    experiment_id = run(service, config(dataset_id, priced_judge, max_cost=6.5 * cost))
    stopped = service.get_experiment(experiment_id)
    assert stopped.status == "budget_reached" and 0 < stopped.counts.succeeded < 12
    sent_before = priced_judge.call_count

    # A cap below what the stored runs spent leaves nothing to spend.
    with pytest.raises(ExperimentConfigError, match="higher max_cost"):
        service.resume_experiment(experiment_id, max_cost=2 * cost)
    assert service.get_experiment(experiment_id).status == "budget_reached"  # untouched

    # A cap for every item: the rest runs, and the whole spend stays under it.
    service.resume_experiment(experiment_id, max_cost=24.5 * cost)
    assert service.wait(experiment_id, timeout=60).finished
    info = service.get_experiment(experiment_id)
    assert info.status == "completed"
    assert info.counts.succeeded == 12
    new_calls = priced_judge.call_count - sent_before
    assert new_calls == 2 * (12 - stopped.counts.succeeded)  # only the missing runs
    # The cap bounds the spend of the stored runs (calls of runs the first cap cut short
    # were paid but left no result: they are not counted; docs/core.md).
    assert 2 * info.counts.succeeded * cost <= 24.5 * cost
    assert info.counts.usage.input_tokens == 2 * 12 * PROMPT_TOKENS


def test_a_resume_refuses_a_cap_on_a_model_without_a_price(
    service: Service, priced_judge: FakeJudge
) -> None:
    dataset_id = dataset(service, ["a", "b"])
    unpriced = config(dataset_id, priced_judge, judge_model="openai/fake-judge")
    experiment_id = run(service, unpriced)
    table = ExperimentRow.__table__
    with service.store.engine.begin() as connection:  # as if it had been cancelled
        connection.execute(
            sqlalchemy.update(table).where(table.c.id == experiment_id).values(status="cancelled")
        )
    with pytest.raises(ExperimentConfigError, match="'openai/fake-judge'"):
        service.resume_experiment(experiment_id, max_cost=1.0)
