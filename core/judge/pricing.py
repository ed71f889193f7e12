"""Estimated judge cost from litellm's bundled price table: an estimate, never a bill.

The prices are read straight from the table litellm ships in its package
(`model_prices_and_context_window_backup.json`, the one litellm itself loads when
`LITELLM_LOCAL_MODEL_COST_MAP` is set, as scorelab always sets it), without importing litellm
(seconds): an export or a page that prices judge usage never pays for that import. The table is
read once per process, on the first price asked for. The lookup follows litellm's own rule for a
per-token price (a name, its `alias_of` row, a `<provider>/` prefix dropped when the entry is that
provider's; tests/judge/test_pricing.py checks it against `litellm.cost_per_token` for every
priced model of the table); the long-context tiers, off-peak hours and cache discounts litellm
also knows are ignored: this is an estimate.
"""

from __future__ import annotations

import json
from functools import cache, lru_cache
from importlib.util import find_spec
from pathlib import Path
from typing import TypeGuard

__all__ = ["canonical_model", "estimate_cost_usd"]

_DEFAULT_PROVIDER = "openai"
"""litellm's provider for a bare model name: `gpt-4o-mini` is `openai/gpt-4o-mini`."""

_PRICE_TABLE = "model_prices_and_context_window_backup.json"
"""The price table litellm ships inside its package (the file its `LITELLM_LOCAL_MODEL_COST_MAP`
mode loads)."""

Prices = tuple[float, float]
"""(USD per input token, USD per output token)."""


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
def unit_prices(model: str) -> Prices | None:
    """(USD per input token, USD per output token) for `model`; None when litellm's price table
    has no per-token input and output price for it.

    The name is looked up as written (case and all, as litellm does); a name missing from the
    table is looked up without its leading `<provider>/` when the entry left belongs to that
    provider (`anthropic/claude-sonnet-4-5` is the table's `claude-sonnet-4-5`).
    """
    table = _price_table()
    found = table.get(model)
    if found is None and "/" in model:
        prefix, _slash, rest = model.partition("/")
        entry = table.get(rest)
        if entry is not None and entry[0] == prefix:
            found = entry
    return None if found is None else found[1]


_Entry = tuple[str | None, Prices | None]
"""A model's provider (`litellm_provider`) and its per-token prices (None without both)."""


@cache
def _price_table() -> dict[str, _Entry]:
    """Every model of litellm's bundled table, its `alias_of` rows and `aliases` lists served as
    their model (as litellm serves them; a canonical row wins a clash); empty without litellm."""
    rows = _table_rows()
    table = {name: _prices(row) for name, row in rows.items() if "alias_of" not in row}
    for name, row in rows.items():
        target = row.get("alias_of")
        if isinstance(target, str) and target in table:
            table.setdefault(name, table[target])
    for name, row in rows.items():
        aliases = row.get("aliases")
        if name in table and isinstance(aliases, list):
            for alias in aliases:
                if isinstance(alias, str):
                    table.setdefault(alias, table[name])
    return table


def _table_rows() -> dict[str, dict[str, object]]:
    # find_spec locates the installed package without running its (slow) __init__.
    spec = find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return {}
    for folder in spec.submodule_search_locations:
        path = Path(folder) / _PRICE_TABLE
        if path.is_file():
            loaded = json.loads(path.read_bytes())
            return {
                name: row
                for name, row in loaded.items()
                if isinstance(row, dict) and name not in _NOT_MODELS
            }
    return {}


_NOT_MODELS = frozenset({"sample_spec", "fallback_generalizations"})
"""Top-level keys of the table that are not models (litellm skips them too)."""


def _prices(row: dict[str, object]) -> _Entry:
    provider = row.get("litellm_provider")
    input_price, output_price = row.get("input_cost_per_token"), row.get("output_cost_per_token")
    prices = None
    if _is_price(input_price) and _is_price(output_price):
        prices = (float(input_price), float(output_price))
    return (provider if isinstance(provider, str) else None, prices)


def _is_price(value: object) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)
