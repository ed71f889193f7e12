"""The spend-cap guard (core/judge/budget.py): reservations in flight count against the cap, a
settled call counts at its real cost, a model without a price is refused."""

from __future__ import annotations

import pytest

from core.judge.budget import BudgetReached, JudgeBudget, budget_refusal, estimated_input_tokens
from core.judge.pricing import unit_prices

MODEL = "openai/gpt-4o-mini"


def request(text: str = "x" * 300, **settings: object) -> dict[str, object]:
    return {"model": MODEL, "messages": [{"role": "user", "content": text}], **settings}


def test_calls_in_flight_count_against_the_cap_until_settled() -> None:
    one = JudgeBudget(1.0).reserve(request(max_tokens=100))
    budget = JudgeBudget(2.5 * one)
    first = budget.reserve(request(max_tokens=100))
    second = budget.reserve(request(max_tokens=100))
    assert first == second == one and budget.in_flight_usd == pytest.approx(2 * one)
    with pytest.raises(BudgetReached, match="spend cap"):
        budget.reserve(request(max_tokens=100))  # a third in flight would pass the cap
    assert budget.reached and budget.refused_calls == 1
    budget.settle(first, 0.1 * one)  # it cost less than reserved: room again
    assert budget.spent_usd == pytest.approx(0.1 * one)
    assert budget.reserve(request(max_tokens=100)) == one
    budget.settle(second, None)  # cost unknown: the reservation counts as spent
    assert budget.spent_usd == pytest.approx(1.1 * one)


def test_the_reservation_grows_with_the_prompt_and_the_answers_seen() -> None:
    prices = unit_prices(MODEL)
    assert prices is not None
    budget = JudgeBudget(100.0)
    short = budget.reserve(request("x" * 30))
    long = budget.reserve(request("x" * 3_000))
    assert long - short == pytest.approx(
        (estimated_input_tokens(request("x" * 3_000)) - estimated_input_tokens(request("x" * 30)))
        * prices[0]
    )
    budget.settle(short, 0.0, output_tokens=5_000)  # a long answer was seen
    assert budget.reserve(request("x" * 30)) > short


def test_a_model_without_a_price_is_refused_and_bad_caps_are_errors() -> None:
    budget = JudgeBudget(1.0)
    with pytest.raises(BudgetReached, match="'openai/fake-judge'"):
        budget.reserve({"model": "openai/fake-judge", "messages": []})
    for cap in (0, -1, float("nan"), float("inf"), True):
        with pytest.raises(ValueError, match="max_cost"):
            JudgeBudget(cap)  # type: ignore[arg-type]


def test_the_refusal_is_found_behind_wrapping_errors() -> None:
    refusal = BudgetReached("cap")
    try:
        try:
            raise refusal
        except BudgetReached as error:
            raise RuntimeError("step failed") from error
    except RuntimeError as wrapped:
        assert budget_refusal(wrapped) is refusal
    assert budget_refusal(ValueError("other")) is None
    assert budget_refusal(None) is None
