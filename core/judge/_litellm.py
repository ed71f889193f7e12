"""The one place that imports litellm, lazily: `import core` must stay light (litellm costs
seconds to import)."""

from __future__ import annotations

import os
from functools import cache, lru_cache
from types import ModuleType

__all__ = ["litellm", "resolve_model", "routed_model", "supports_response_schema"]


@cache
def litellm() -> ModuleType:
    """The litellm module, imported on first use and quietened."""
    # Without this, importing litellm tries to download its price table (no network here).
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm as module

    module.suppress_debug_info = True
    return module


def resolve_model(model: str, api_base: str | None) -> tuple[str, str]:
    """(model id, provider) as litellm routes the model string; raises on an unknown provider."""
    model_id, provider, _key, _base = litellm().get_llm_provider(model, api_base=api_base)
    return model_id, provider


@lru_cache(maxsize=256)
def routed_model(model: str, api_base: str | None) -> tuple[str, str]:
    """`resolve_model`, once per (model, API base) for the life of the process: the judge call
    asks it for every prompt step, and litellm's routing reads only the model string, the base
    and its own provider tables. An unknown provider raises and is asked again next time."""
    return resolve_model(model, api_base)


@lru_cache(maxsize=256)
def supports_response_schema(model_id: str, provider: str) -> bool:
    """Whether litellm says this provider takes a JSON schema as `response_format`."""
    try:
        return bool(
            litellm().supports_response_schema(model=model_id, custom_llm_provider=provider)
        )
    except Exception:  # litellm raises for models missing from its table: treat as unsupported
        return False
