"""Estimated judge cost from litellm's local price table: an estimate, never a bill.

litellm is imported only when a price is first looked up (and the caller only looks one up when
there are judge tokens to price), so a page without judge usage never pays for the import.
"""

from __future__ import annotations

from functools import lru_cache

from core.judge._litellm import litellm

__all__ = ["canonical_model", "estimate_cost_usd"]

_DEFAULT_PROVIDER = "openai"
"""litellm's provider for a bare model name: `gpt-4o-mini` is `openai/gpt-4o-mini`."""

_PROBE_TOKENS = 1_000
"""Tokens priced once per model to get per-token prices: far below the long-context tiers some
models have (priced above 128k or 200k prompt tokens), and large enough to avoid the rounding of
per-character prices."""


def canonical_model(model: str, provider: str | None = None) -> str:
    """One name per model: `model` without a leading `<provider>/` when that is the judge's
    `provider` or litellm's default (`openai`), so `openai/gpt-4o-mini` and `gpt-4o-mini` (a
    judge record names the model and its provider apart) are one model. Other prefixes stay
    (`anthropic/claude-3-haiku`, `ollama/llama3`)."""
    name = model.strip()
    prefix, slash, rest = name.partition("/")
    if slash and rest and prefix.lower() in {_DEFAULT_PROVIDER, (provider or "").lower()}:
        return rest
    return name


def estimate_cost_usd(
    model: str | None, input_tokens: int, output_tokens: int, provider: str | None = None
) -> float | None:
    """The estimated USD cost of `input_tokens` prompt and `output_tokens` completion tokens on
    `model` (a litellm model string, e.g. `gpt-4o-mini` or `openai/gpt-4o-mini`), the one price
    rule of every page, export and the CLI: the model's `canonical_model` name is priced
    provider-qualified first (`<provider>/<name>`, the more specific), then bare.

    None when there is no model, no token, or litellm's price table does not know the model.
    Long-context price tiers and cache discounts are ignored: this is an estimate.
    """
    input_tokens, output_tokens = max(int(input_tokens or 0), 0), max(int(output_tokens or 0), 0)
    if not model or input_tokens + output_tokens == 0:
        return None
    for candidate in _price_names(model, provider):
        prices = unit_prices(candidate)
        if prices is not None:
            input_price, output_price = prices
            return input_tokens * input_price + output_tokens * output_price
    return None


def _price_names(model: str, provider: str | None) -> tuple[str, ...]:
    name = canonical_model(model, provider)
    if "/" in name:  # another provider's prefix, kept
        return (name,)
    return tuple(dict.fromkeys((f"{provider or _DEFAULT_PROVIDER}/{name}", name)))


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
