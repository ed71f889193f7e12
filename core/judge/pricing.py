"""Estimated judge cost from litellm's local price table: an estimate, never a bill.

litellm is imported only when a price is first looked up (and the caller only looks one up when
there are judge tokens to price), so a page without judge usage never pays for the import.
"""

from __future__ import annotations

from functools import lru_cache

from core.judge._litellm import litellm

__all__ = ["estimate_cost_usd"]

_PROBE_TOKENS = 1_000
"""Tokens priced once per model to get per-token prices: far below the long-context tiers some
models have (priced above 128k or 200k prompt tokens), and large enough to avoid the rounding of
per-character prices."""


def estimate_cost_usd(model: str | None, input_tokens: int, output_tokens: int) -> float | None:
    """The estimated USD cost of `input_tokens` prompt and `output_tokens` completion tokens on
    `model` (a litellm model string, e.g. `gpt-4o-mini` or `openai/gpt-4o-mini`).

    None when there is no model, no token, or litellm's price table does not know the model.
    Long-context price tiers and cache discounts are ignored: this is an estimate.
    """
    input_tokens, output_tokens = max(int(input_tokens or 0), 0), max(int(output_tokens or 0), 0)
    if not model or input_tokens + output_tokens == 0:
        return None
    prices = unit_prices(model)
    if prices is None:
        return None
    input_price, output_price = prices
    return input_tokens * input_price + output_tokens * output_price


@lru_cache(maxsize=256)
def unit_prices(model: str) -> tuple[float, float] | None:
    """(USD per input token, USD per output token) for `model`; None when litellm has no price.

    Cached per model: litellm's lookup is slow next to the arithmetic done per judge execution.
    """
    try:
        input_cost, output_cost = litellm().cost_per_token(
            model=model, prompt_tokens=_PROBE_TOKENS, completion_tokens=_PROBE_TOKENS
        )
    except Exception:  # litellm raises several unrelated types for an unmapped model
        return None
    return float(input_cost) / _PROBE_TOKENS, float(output_cost) / _PROBE_TOKENS
