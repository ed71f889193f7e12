"""The spend cap's holder on Ray (core/experiments/ray_budget.py), as a plain object: the
cluster-wide run is tested on a real cluster in tests/ray."""

from __future__ import annotations

import pytest

from core.experiments.ray_budget import BudgetActor
from core.judge.budget import JudgeBudget
from core.judge.pricing import unit_prices

MODEL = "openai/gpt-4o-mini"


def test_the_holder_refuses_past_the_cap_and_every_request_after_the_first_refusal() -> None:
    prices = unit_prices(MODEL)
    assert prices is not None
    one = 1_000 * prices[0] + 100 * prices[1]  # a request of 1,000 prompt, 100 answer tokens
    holder = BudgetActor(2.5 * one)
    first, why = holder.reserve(MODEL, 1_000, 100)
    assert first == pytest.approx(one) and why == ""
    second, _ = holder.reserve(MODEL, 1_000, 100)
    assert second == pytest.approx(one)
    assert holder.figures() == pytest.approx((0.0, 2 * one, 0))  # both in flight
    refused, why = holder.reserve(MODEL, 1_000, 100)  # a third would pass the cap
    assert refused is None and "spend cap" in why and "reached" in why
    holder.settle(first, 0.5 * one, 100)  # cheaper than reserved: room again...
    tiny, again = holder.reserve(MODEL, 10, 1)
    assert tiny is None and again == why  # ...but once refused, no request starts anywhere
    assert holder.figures() == pytest.approx((0.5 * one, one, 1))


def test_an_unpriced_model_is_refused_by_name_and_a_mirror_shows_the_holders_figures() -> None:
    holder = BudgetActor(1.0)
    refused, why = holder.reserve("openai/no-such-model", 10, 10)
    assert refused is None and "'openai/no-such-model'" in why
    shown = JudgeBudget(1.0)
    assert not shown.reached
    shown.mirror(*holder.figures())
    assert shown.reached and shown.refused_calls == 1 and shown.spent_usd == 0.0
