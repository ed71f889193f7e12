"""Thresholds, gates and the verdict of `run_evals` (scorer-core.md §6.6 and §7 case 39).

Not applicable: per-turn gates and thresholds (`turns`, `turnResults`) are out of scope.
"""

from __future__ import annotations

import logging
import math
import re
from typing import Any

import pytest

from core import MastraError, Scorer, Threshold, create_scorer, not_scorable, run_evals

ONE_ITEM = [{"input": "q", "output": "a"}]


def constant(scorer_id: str, value: Any) -> Scorer:
    return create_scorer(id=scorer_id, description=f"always {value}").generate_score(
        lambda ctx: value
    )


def by_input(scorer_id: str, scores: dict[Any, Any]) -> Scorer:
    def score(ctx: Any) -> Any:
        return scores[ctx.run.input]

    return create_scorer(id=scorer_id, description="lookup").generate_score(score)


def raising(scorer_id: str) -> Scorer:
    def score(ctx: Any) -> float:
        raise RuntimeError("gate blew up")

    return create_scorer(id=scorer_id, description="raises").generate_score(score)


# ---- gates ---------------------------------------------------------------------------------


async def test_gate_at_one_passes() -> None:
    result = await run_evals(
        data=ONE_ITEM, scorers=[constant("s", 0.5)], gates=[constant("g", 1.0)]
    )
    assert result.verdict == "passed"
    assert result.gate_results is not None
    assert [gate.model_dump() for gate in result.gate_results] == [
        {"id": "g", "passed": True, "score": 1.0}
    ]
    assert result.to_dict()["gateResults"] == [{"id": "g", "passed": True, "score": 1.0}]


async def test_gate_below_one_fails() -> None:
    result = await run_evals(data=ONE_ITEM, scorers=[constant("s", 1)], gates=[constant("g", 0.5)])
    assert result.verdict == "failed"
    assert result.gate_results is not None
    assert result.gate_results[0].passed is False
    assert result.gate_results[0].score == 0.5


async def test_gate_scores_are_not_in_scores() -> None:
    result = await run_evals(data=ONE_ITEM, scorers=[constant("s", 0.5)], gates=[constant("g", 1)])
    assert result.scores == {"s": 0.5}


async def test_raising_gate_scores_zero_fails_and_logs_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING):
        result = await run_evals(
            data=ONE_ITEM, scorers=[constant("s", 1)], gates=[raising("exploding-gate")]
        )
    assert result.verdict == "failed"
    assert result.gate_results is not None
    assert result.gate_results[0].score == 0
    assert result.gate_results[0].passed is False
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("exploding-gate" in message and "0" in message for message in warnings)
    assert result.summary.total_items == 1  # a raising gate does not fail the item


async def test_raising_gate_counts_as_zero_in_the_gate_mean() -> None:
    def score(ctx: Any) -> float:
        if ctx.run.input == 0:
            raise RuntimeError("gate blew up on item 0")
        return 1.0

    gate = create_scorer(id="flaky-gate", description="d").generate_score(score)
    data = [{"input": 0, "output": "o"}, {"input": 1, "output": "o"}]
    result = await run_evals(data=data, scorers=[constant("s", 1)], gates=[gate])
    assert result.gate_results is not None
    assert result.gate_results[0].score == 0.5  # (0 + 1) / 2: the raise is a 0, not a skip
    assert result.verdict == "failed"


async def test_gate_averaging_one_zero_one_fails() -> None:
    data = [{"input": i, "output": "o"} for i in range(3)]
    result = await run_evals(
        data=data, scorers=[constant("s", 1)], gates=[by_input("g", {0: 1, 1: 0, 2: 1})]
    )
    assert result.gate_results is not None
    assert result.gate_results[0].score == pytest.approx(2 / 3)
    assert result.verdict == "failed"


async def test_not_scorable_gate_results_are_left_out_of_the_gate_mean() -> None:
    data = [{"input": i, "output": "o"} for i in range(2)]
    result = await run_evals(
        data=data, scorers=[constant("s", 1)], gates=[by_input("g", {0: 1, 1: not_scorable()})]
    )
    assert result.gate_results is not None
    assert result.gate_results[0].score == 1
    assert result.verdict == "passed"


async def test_gate_that_never_scores_averages_zero_and_fails() -> None:
    result = await run_evals(
        data=ONE_ITEM, scorers=[constant("s", 1)], gates=[constant("g", not_scorable())]
    )
    assert result.gate_results is not None
    assert result.gate_results[0].score == 0
    assert result.verdict == "failed"


# ---- thresholds --------------------------------------------------------------------------


async def test_gate_passing_with_a_failing_threshold_gives_scored() -> None:
    result = await run_evals(
        data=ONE_ITEM,
        scorers=[{"scorer": constant("quality", 0.3), "threshold": 0.7}],
        gates=[constant("g", 1.0)],
    )
    assert result.verdict == "scored"
    assert result.threshold_results is not None
    first = result.threshold_results[0]
    assert (first.id, first.passed, first.average_score) == ("quality", False, 0.3)
    assert first.threshold == Threshold(min=0.7)
    assert result.to_dict()["thresholdResults"] == [
        {
            "id": "quality",
            "passed": False,
            "averageScore": 0.3,
            "threshold": {"min": 0.7},
            "failedRuns": 0,
            "totalRuns": 1,
        }
    ]


async def test_number_threshold_is_an_inclusive_minimum() -> None:
    result = await run_evals(
        data=ONE_ITEM, scorers=[{"scorer": constant("quality", 0.7), "threshold": 0.7}]
    )
    assert result.verdict == "passed"
    assert result.threshold_results is not None
    assert result.threshold_results[0].passed is True


@pytest.mark.parametrize(
    ("score", "threshold", "verdict"),
    [
        (0.9, {"max": 0.3}, "scored"),
        (0.1, {"max": 0.3}, "passed"),
        (0.3, {"max": 0.3}, "passed"),
        (0.5, {"min": 0.3, "max": 0.7}, "passed"),
        (0.9, {"min": 0.3, "max": 0.7}, "scored"),
        (0.2, {"min": 0.3, "max": 0.7}, "scored"),
        (0.6, {"min": 0.6}, "passed"),
    ],
)
async def test_range_thresholds(score: float, threshold: dict[str, float], verdict: str) -> None:
    result = await run_evals(
        data=ONE_ITEM, scorers=[{"scorer": constant("s", score), "threshold": threshold}]
    )
    assert result.verdict == verdict


async def test_threshold_is_checked_against_the_mean_over_items() -> None:
    data = [{"input": i, "output": "o"} for i in range(2)]
    result = await run_evals(
        data=data, scorers=[{"scorer": by_input("s", {0: 0.2, 1: 1.0}), "threshold": 0.6}]
    )
    assert result.threshold_results is not None
    assert result.threshold_results[0].average_score == pytest.approx(0.6)
    assert result.threshold_results[0].passed is True


async def test_threshold_whose_scorer_has_no_numeric_score_fails() -> None:
    result = await run_evals(
        data=ONE_ITEM,
        scorers=[
            {"scorer": constant("never", not_scorable("n/a")), "threshold": 0.1},
            constant("other", 1),
        ],
    )
    assert result.scores == {"other": 1}
    assert result.threshold_results is not None
    (never,) = result.threshold_results
    assert never.id == "never"
    assert never.passed is False
    assert never.average_score is None
    assert result.verdict == "scored"


async def test_only_scorers_with_a_threshold_get_threshold_results() -> None:
    result = await run_evals(
        data=ONE_ITEM,
        scorers=[constant("plain", 0.1), {"scorer": constant("checked", 0.9), "threshold": 0.5}],
    )
    assert result.threshold_results is not None
    assert [t.id for t in result.threshold_results] == ["checked"]
    assert result.gate_results is None
    assert "gateResults" not in result.to_dict()


async def test_threshold_entry_without_threshold_is_a_plain_scorer() -> None:
    result = await run_evals(data=ONE_ITEM, scorers=[{"scorer": constant("s", 0.4)}])
    assert result.scores == {"s": 0.4}
    assert result.verdict is None


# ---- verdict precedence and absence ------------------------------------------------------


@pytest.mark.parametrize(
    ("gate_score", "scorer_score", "verdict"),
    [(0.0, 0.1, "failed"), (0.0, 0.9, "failed"), (1.0, 0.1, "scored"), (1.0, 0.9, "passed")],
)
async def test_verdict_precedence_failed_over_scored_over_passed(
    gate_score: float, scorer_score: float, verdict: str
) -> None:
    result = await run_evals(
        data=ONE_ITEM,
        scorers=[{"scorer": constant("s", scorer_score), "threshold": 0.5}],
        gates=[constant("g", gate_score)],
    )
    assert result.verdict == verdict


async def test_no_verdict_keys_without_gates_or_thresholds() -> None:
    result = await run_evals(data=ONE_ITEM, scorers=[constant("s", 0.5)])
    assert (result.verdict, result.gate_results, result.threshold_results) == (None, None, None)
    data = result.to_dict()
    assert set(data) == {"scores", "summary"}
    assert not {"verdict", "gateResults", "thresholdResults"} & set(data)


async def test_verdict_key_present_with_a_threshold() -> None:
    result = await run_evals(
        data=ONE_ITEM, scorers=[{"scorer": constant("s", 0.5), "threshold": 0.4}]
    )
    data = result.to_dict()
    assert data["verdict"] == "passed"
    assert "gateResults" not in data


# ---- invalid thresholds ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "threshold",
    [1.5, -0.1, math.nan, math.inf, {"min": 1.2}, {"max": -0.5}, {"min": math.nan}],
    ids=["1.5", "-0.1", "nan", "inf", "min-1.2", "max--0.5", "min-nan"],
)
async def test_out_of_range_threshold_is_rejected(threshold: Any) -> None:
    scorer = constant("s", 0.5)
    with pytest.raises(MastraError) as caught:
        await run_evals(data=ONE_ITEM, scorers=[{"scorer": scorer, "threshold": threshold}])
    assert caught.value.id == "INVALID_SCORER_THRESHOLD"
    assert "between 0 and 1" in str(caught.value)
    assert caught.value.details["scorerId"] == "s"


async def test_min_greater_than_max_is_rejected() -> None:
    with pytest.raises(MastraError) as caught:
        await run_evals(
            data=ONE_ITEM,
            scorers=[{"scorer": constant("s", 0.5), "threshold": {"min": 0.8, "max": 0.3}}],
        )
    assert caught.value.id == "INVALID_SCORER_THRESHOLD"
    assert re.search(r"min .*greater than max", str(caught.value))


@pytest.mark.parametrize(
    "threshold",
    [True, False, "0.5", [0.5], {"minimum": 0.5}, {"min": 0.2, "maximum": 0.9}, {}],
    ids=["true", "false", "string", "list", "unknown-key", "extra-key", "empty-dict"],
)
async def test_malformed_threshold_is_rejected(threshold: Any) -> None:
    with pytest.raises(MastraError) as caught:
        await run_evals(
            data=ONE_ITEM, scorers=[{"scorer": constant("s", 0.5), "threshold": threshold}]
        )
    assert caught.value.id == "INVALID_SCORER_THRESHOLD"


async def test_invalid_threshold_is_rejected_before_any_item_runs() -> None:
    runs: list[Any] = []

    def score(ctx: Any) -> float:
        runs.append(ctx.run.input)
        return 1.0

    first = create_scorer(id="first", description="d").generate_score(score)
    with pytest.raises(MastraError):
        await run_evals(
            data=ONE_ITEM,
            scorers=[first, {"scorer": constant("s", 0.5), "threshold": 2}],
        )
    assert runs == []


@pytest.mark.parametrize("threshold", [0, 1, 0.0, 1.0, {"min": 0, "max": 1}])
async def test_boundary_thresholds_are_valid(threshold: Any) -> None:
    result = await run_evals(
        data=ONE_ITEM, scorers=[{"scorer": constant("s", 0.5), "threshold": threshold}]
    )
    assert result.threshold_results is not None
    assert len(result.threshold_results) == 1


# ---- failures (a mean leaves failed runs out, so the gate must see them) --------------------

HALF_FAILING = [{"input": f"q{i}", "output": "a"} for i in range(12)]


def failing_on_odd_items(scorer_id: str) -> Scorer:
    def score(ctx: Any) -> float:
        if int(ctx.run.input[1:]) % 2:
            raise RuntimeError("judge down")
        return 1.0

    return create_scorer(id=scorer_id, description="fails on odd items").generate_score(score)


async def test_threshold_fails_when_half_the_runs_failed_even_with_a_perfect_mean() -> None:
    result = await run_evals(
        data=HALF_FAILING,
        scorers=[{"scorer": failing_on_odd_items("s"), "threshold": 0.9}],
        on_error="record",
    )
    assert result.scores == {"s": 1.0}  # the survivors' mean looks perfect
    assert result.summary.failed_items == 6
    assert result.threshold_results is not None
    threshold = result.threshold_results[0]
    assert (threshold.passed, threshold.failed_runs, threshold.total_runs) == (False, 6, 12)
    assert result.verdict == "failed"


async def test_one_failure_fails_the_verdict_by_default() -> None:
    data = [*[{"input": f"q{i}", "output": "a"} for i in range(0, 40, 2)], {"input": "q1"}]
    data[-1]["output"] = "a"
    result = await run_evals(
        data=data,
        scorers=[{"scorer": failing_on_odd_items("s"), "threshold": 0.5}],
        on_error="record",
    )
    assert result.summary.failed_items == 1
    assert result.verdict == "failed"


@pytest.mark.parametrize(
    ("allowed", "expected"), [(0.5, "passed"), (0.49, "failed"), (1, "passed")]
)
async def test_max_failure_rate_allows_a_share_of_failed_runs(
    allowed: float, expected: str
) -> None:
    result = await run_evals(
        data=HALF_FAILING,
        scorers=[{"scorer": failing_on_odd_items("s"), "threshold": 0.9}],
        on_error="record",
        max_failure_rate=allowed,
    )
    assert result.verdict == expected
    assert result.threshold_results is not None
    assert result.threshold_results[0].passed is (expected == "passed")


async def test_failures_fail_the_verdict_of_gates_too() -> None:
    result = await run_evals(
        data=HALF_FAILING,
        scorers=[failing_on_odd_items("s")],
        gates=[constant("g", 1.0)],
        on_error="record",
    )
    assert result.gate_results is not None and result.gate_results[0].passed
    assert result.verdict == "failed"


@pytest.mark.parametrize("bad", [-0.1, 1.5, math.nan, "5%", True, None])
async def test_invalid_max_failure_rate_is_rejected_before_any_item_runs(bad: Any) -> None:
    ran: list[str] = []

    def score(ctx: Any) -> float:
        ran.append(ctx.run.input)
        return 1.0

    scorer = create_scorer(id="s", description="d").generate_score(score)
    with pytest.raises(MastraError) as raised:
        await run_evals(data=ONE_ITEM, scorers=[scorer], max_failure_rate=bad)
    assert raised.value.id == "INVALID_MAX_FAILURE_RATE"
    assert ran == []


async def test_the_mean_of_huge_finite_scores_stays_finite() -> None:
    huge = 1.5e308
    result = await run_evals(
        data=[{"input": "a", "output": "x"}, {"input": "b", "output": "x"}],
        scorers=[{"scorer": by_input("s", {"a": huge, "b": huge}), "threshold": 0.5}],
    )
    assert result.scores["s"] == pytest.approx(huge) and math.isfinite(result.scores["s"])
