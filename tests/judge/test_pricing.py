"""Estimated judge cost from litellm's bundled price table, read without importing litellm, and
checked against litellm's own `cost_per_token` (LITELLM_LOCAL_MODEL_COST_MAP is set by
tests/conftest.py, so litellm loads that same bundled table and nothing is downloaded)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from functools import cache
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import pytest

from core.judge._litellm import litellm
from core.judge.pricing import estimate_cost_usd, unit_prices

ROOT = Path(__file__).resolve().parents[2]


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


@cache
def bundled_table() -> dict[str, dict[str, Any]]:
    """litellm's shipped price table, read here on its own (not through the code under test)."""
    spec = find_spec("litellm")
    assert spec is not None and spec.submodule_search_locations
    path = Path(next(iter(spec.submodule_search_locations))) / (
        "model_prices_and_context_window_backup.json"
    )
    rows = json.loads(path.read_bytes())
    skipped = {"sample_spec", "fallback_generalizations"}  # not models (litellm skips them)
    return {k: v for k, v in rows.items() if isinstance(v, dict) and k not in skipped}


def table_row(name: str) -> dict[str, Any]:
    rows = bundled_table()
    row = rows[name]
    return rows[row["alias_of"]] if isinstance(row.get("alias_of"), str) else row


def token_prices(row: dict[str, Any]) -> tuple[float, float] | None:
    prices = row.get("input_cost_per_token"), row.get("output_cost_per_token")
    if all(isinstance(p, int | float) and not isinstance(p, bool) for p in prices):
        return float(prices[0]), float(prices[1])
    return None


def litellm_prices(model: str) -> tuple[float, float] | None:
    """litellm's per-token prices, probed at 1,000 tokens (the rule this module used to call)."""
    try:
        cost_in, cost_out = litellm().cost_per_token(
            model=model, prompt_tokens=1_000, completion_tokens=1_000
        )
    except Exception:  # litellm's router refuses the name (or the table has no price)
        return None
    return float(cost_in) / 1_000, float(cost_out) / 1_000


def same(one: tuple[float, float] | None, two: tuple[float, float] | None) -> bool:
    if one is None or two is None:
        return one is two
    return all(
        math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-18) for a, b in zip(one, two, strict=True)
    )


def priced_names() -> dict[str, dict[str, Any]]:
    """Every model of the table with an input and an output price per token, under its own
    name (bare or provider-qualified, aliases included) and, for a bare one, provider-qualified
    as a judge record names it (`<litellm_provider>/<name>`)."""
    names: dict[str, dict[str, Any]] = {}
    for name in bundled_table():
        row = table_row(name)
        if token_prices(row) is None:
            continue
        names[name] = row
        if "/" not in name:
            names.setdefault(f"{row['litellm_provider']}/{name}", row)
    return names


_LOGS_IN = frozenset({"github_copilot", "chatgpt", "gigachat"})
"""Providers whose routing in litellm logs in to the provider (an OAuth device code) before it
prices anything: no network in tests, so their models are checked against the table only."""


def test_table_lookup_is_litellms_price_for_every_priced_model() -> None:
    """One price rule: for every priced model the lookup gives litellm's `cost_per_token`
    figure. Two kinds of names are told apart, each checked for what it is: a name litellm's
    router refuses (an unknown provider prefix, a bare name it cannot place) gets the table's
    own price instead of none; a model with off-peak hours gets its standard price, litellm
    the price of the hour it is asked at (one of the two)."""
    agreed, refused, off_peak = [], [], []
    for name, row in priced_names().items():
        ours, listed = unit_prices(name), token_prices(row)
        if _LOGS_IN.intersection((row["litellm_provider"], name.partition("/")[0])):
            assert same(ours, listed), name  # litellm is not asked: it would go online
            continue
        theirs = litellm_prices(name)
        if theirs is None:
            assert same(ours, listed), name
            refused.append(name)
        elif "off_peak_pricing" in row:
            hours = row["off_peak_pricing"]
            cheap = (hours.get("input_cost_per_token"), hours.get("output_cost_per_token"))
            assert same(ours, listed), name
            assert same(theirs, listed) or same(theirs, cheap), name  # type: ignore[arg-type]
            off_peak.append(name)
        else:
            assert same(ours, theirs), (name, ours, theirs)
            agreed.append(name)
    assert len(agreed) > 5 * (len(refused) + len(off_peak)), (len(agreed), len(refused))
    judges = (
        "gpt-4o-mini",
        "openai/gpt-4o-mini",
        "claude-sonnet-4-5",
        "anthropic/claude-sonnet-4-5",
    )
    for name in judges:
        assert name in agreed, name


@pytest.mark.parametrize(
    "model",
    ["gpt-4o-mini", "openai/gpt-4o-mini", "anthropic/claude-sonnet-4-5", "claude-sonnet-4-5",
     "azure/gpt-4o-mini", "gemini/gemini-2.5-flash"],
)  # fmt: skip
def test_names_judges_use_are_priced_as_litellm_prices_them(model: str) -> None:
    theirs = litellm_prices(model)
    assert theirs is not None, model  # a name litellm prices, so the check means something
    assert same(unit_prices(model), theirs), model


@pytest.mark.parametrize(
    "model",
    ["no-such-model-xyz", "openai/no-such-model", "hosted_vllm/some-local-model", "GPT-4o-MINI",
     "OpenAI/gpt-4o-mini"],
)  # fmt: skip
def test_unknown_models_have_no_price(model: str) -> None:
    """Unknown models, and known ones spelt in another case (litellm's table is case-sensitive)."""
    assert unit_prices(model) is None
    assert litellm_prices(model) in (None, (0.0, 0.0))  # litellm has no price either


def test_pricing_never_imports_litellm() -> None:
    child = (
        "import sys; from core.judge.pricing import estimate_cost_usd;"
        "cost = estimate_cost_usd('openai/gpt-4o-mini', 1000, 100);"
        "print(cost is not None and cost > 0, 'litellm' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", child], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert done.stdout.split() == ["True", "False"]
