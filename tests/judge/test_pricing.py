"""Estimated judge cost from litellm's local price table (LITELLM_LOCAL_MODEL_COST_MAP is set
by tests/conftest.py, so nothing is downloaded)."""

from __future__ import annotations

import pytest

from core.judge._litellm import litellm
from core.judge.pricing import estimate_cost_usd, unit_prices


def test_known_model_costs_in_proportion_to_tokens() -> None:
    one = estimate_cost_usd("gpt-4o-mini", 1_000, 100)
    two = estimate_cost_usd("gpt-4o-mini", 2_000, 200)
    assert one is not None and one > 0
    assert two == pytest.approx(2 * one)


def test_input_and_output_prices_add_up() -> None:
    both = estimate_cost_usd("gpt-4o-mini", 500, 70)
    only_in = estimate_cost_usd("gpt-4o-mini", 500, 0)
    only_out = estimate_cost_usd("gpt-4o-mini", 0, 70)
    assert None not in (both, only_in, only_out)
    assert both == pytest.approx(only_in + only_out)
    assert only_out / 70 > only_in / 500  # output tokens cost more


def test_matches_litellm_cost_per_token() -> None:
    prompt_cost, completion_cost = litellm().cost_per_token(
        model="openai/gpt-4o-mini", prompt_tokens=1234, completion_tokens=56
    )
    estimate = estimate_cost_usd("openai/gpt-4o-mini", 1234, 56)
    assert estimate == pytest.approx(prompt_cost + completion_cost)


@pytest.mark.parametrize(
    "model", ["openai/fake-judge", "fake-judge", "hosted_vllm/some-local-model", "", None]
)
def test_unknown_model_gives_none(model: str | None) -> None:
    assert estimate_cost_usd(model, 1_000, 100) is None


def test_zero_tokens_give_none() -> None:
    assert estimate_cost_usd("gpt-4o-mini", 0, 0) is None


def test_price_lookups_are_cached_per_model() -> None:
    estimate_cost_usd("gpt-4o-mini", 10, 1)
    before = unit_prices.cache_info()
    estimate_cost_usd("gpt-4o-mini", 20, 2)
    estimate_cost_usd("gpt-4o-mini", 30, 3)
    after = unit_prices.cache_info()
    assert after.hits == before.hits + 2 and after.misses == before.misses
