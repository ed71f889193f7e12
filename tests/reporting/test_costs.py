"""One model name per model and one cost per experiment (issue 21): `openai/gpt-4o-mini` and
`gpt-4o-mini` are one model in the usage tables, and the experiment's cost is the same figure on
every surface that shows it (home table, HTML report, Compare's usage table, the CLI)."""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime

import pytest

from core.exchange.html import experiment_html
from core.judge.pricing import canonical_model, estimate_cost_usd
from core.records import ExperimentDetail, ExperimentInfo, RunCounts, ScorerOutcome
from core.reporting import experiment_cost, experiments_frame, judge_usage_frame
from core.reporting.compare import compare_experiments, usage_side_by_side
from core.run_results import JudgeUsage

MODEL = "gpt-4o-mini"


@pytest.mark.parametrize(
    ("model", "provider", "name"),
    [
        ("openai/gpt-4o-mini", None, "gpt-4o-mini"),
        ("gpt-4o-mini", "openai", "gpt-4o-mini"),
        ("OpenAI/gpt-4o-mini", None, "gpt-4o-mini"),
        ("azure/my-deployment", "azure", "my-deployment"),
        ("anthropic/claude-3-haiku", None, "anthropic/claude-3-haiku"),
        ("ollama/llama3", "openai", "ollama/llama3"),
    ],
)
def test_canonical_model_names(model: str, provider: str | None, name: str) -> None:
    assert canonical_model(model, provider) == name


def test_both_spellings_of_a_model_have_one_price() -> None:
    bare = estimate_cost_usd(MODEL, 1000, 500)
    assert bare is not None and bare > 0
    assert estimate_cost_usd(f"openai/{MODEL}", 1000, 500) == bare
    assert estimate_cost_usd(MODEL, 1000, 500, provider="openai") == bare
    assert estimate_cost_usd("no-such-model-xyz", 1000, 500) is None


def outcome(item: str, model: str, provider: str | None, tokens: tuple[int, int]) -> ScorerOutcome:
    execution = {
        "status": "success",
        "judgeModelId": model,
        "judgeProvider": provider,
        "attemptCount": 1,
        "modelCallCount": 1,
        "usage": {"inputTokens": tokens[0], "outputTokens": tokens[1]},
    }
    result = {"score": 1.0, "judge": {"analyze": {"executions": [execution]}}}
    return ScorerOutcome(
        item_id=item, scorer_id="judge", status="success", score=1.0, result=result
    )


def test_the_usage_table_names_one_model() -> None:
    frame = judge_usage_frame(
        [
            outcome("a", f"openai/{MODEL}", None, (100, 10)),
            outcome("b", MODEL, "openai", (200, 20)),
        ]
    )
    assert set(frame["model"]) == {MODEL}
    assert frame["est_cost_usd"].notna().all()


def info_of(name: str, tokens: tuple[int, int]) -> ExperimentInfo:
    usage = JudgeUsage(input_tokens=tokens[0], output_tokens=tokens[1], total_tokens=sum(tokens))
    return ExperimentInfo(
        id=name,
        name=name,
        dataset_id="d",
        dataset_fingerprint="fp",
        scorer_ids=["judge"],
        judge_model=f"openai/{MODEL}",
        counts=RunCounts(total=2, done=2, succeeded=2, usage=usage),
        created_at=datetime(2026, 3, 1, tzinfo=UTC),
    )


def test_every_surface_shows_the_experiment_cost() -> None:
    # The stored runs hold fewer tokens than the experiment counted (a failed run's tokens are
    # in the counts only): the card summed the stored runs, the Judge usage page everything.
    info = info_of("e", (300_000, 40_000))
    cost = experiment_cost(info)
    assert cost == pytest.approx(estimate_cost_usd(MODEL, 300_000, 40_000))
    detail = ExperimentDetail(
        info=info,
        items=[],
        results=[outcome("a", MODEL, "openai", (100, 10))],
        failures=[],
        failures_in_memory=True,
    )
    assert experiments_frame([info]).loc[0, "est_cost_usd"] == pytest.approx(cost)
    report = experiment_html(detail)
    shown = re.search(r"Estimated cost \(an estimate, not a bill\)</th><td>\$([\d.,]+)", report)
    assert shown is not None and float(shown.group(1)) == pytest.approx(cost, abs=5e-5)
    other = ExperimentDetail(
        info=info_of("f", (0, 0)), items=[], results=[], failures=[], failures_in_memory=True
    )
    table = usage_side_by_side(compare_experiments(detail, [other]))
    row = table.loc["estimated cost (USD, an estimate)"]
    assert row.iloc[0] == pytest.approx(cost) and math.isnan(row.iloc[1])
