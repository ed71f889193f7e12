"""The judge configuration of a scorer or of one prompt step."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, SecretStr, field_validator

__all__ = ["JudgeConfig"]

# These are set by the judge call itself; accepting them in model_settings would silently
# override the prompt, the schema or the endpoint.
_RESERVED_SETTINGS = {
    "model": "JudgeConfig.model",
    "messages": "the step's create_prompt",
    "response_format": "the step's output_schema",
    "api_base": "JudgeConfig.api_base",
    "base_url": "JudgeConfig.api_base",
    "api_key": "JudgeConfig.api_key",
    # These would make litellm send requests the judge record cannot see or count.
    "retry_policy": "num_retries (every retry is then a recorded attempt)",
    "fallbacks": "a step-level JudgeConfig(model=...) (each model call is a recorded attempt)",
}
_RETRY_SETTINGS = ("num_retries", "max_retries")


class JudgeConfig(BaseModel):
    """Which model judges, with which instructions and call settings.

    Every field is optional so that a step-level judge can override a single field of the
    scorer-level one: each field resolves to the step's value when set, else the scorer's.
    """

    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        protected_namespaces=(),
        use_attribute_docstrings=True,
        hide_input_in_errors=True,
    )

    model: str | None = None
    """Any litellm model string, e.g. `openai/gpt-4o-mini`."""
    instructions: str | None = None
    """The judge's system prompt."""
    json_prompt_injection: bool | Literal["auto"] | None = None
    """Unset or `"auto"`: provider structured output where litellm says it is supported, else the
    schema goes into the prompt; True: always in the prompt; False: never in the prompt."""
    model_settings: dict[str, Any] | None = None
    """litellm call settings (temperature, max_tokens, timeout, ...), passed as given, except
    `num_retries` (or its synonym `max_retries`): how many times a request failing with a
    timeout, a connection error, HTTP 408, 429 or 5xx is retried (default 2). The judge runs
    those retries itself, each one a recorded attempt, rather than litellm or the OpenAI
    client."""
    api_base: str | None = None
    """Base URL of an OpenAI-compatible server (vLLM, Ollama, a proxy)."""
    api_key: SecretStr | None = None
    """API key for that server; never shown in reprs or records. When None, the provider's key
    from the environment (OPENAI_API_KEY, ...) is used only if `api_base` is unset, the
    provider's own endpoint, or listed in SCORELAB_TRUSTED_API_BASES; any other base gets the
    placeholder `no-key` (docs/deploy.md, Judge keys)."""
    cache: bool | None = None
    """True: an identical request (model, API base, messages, output schema, the settings that
    change the answer) is answered from the judge cache when it was answered before, and a
    validated answer is stored there (core/judge/cache.py, docs/core.md). Unset or False: the
    cache is neither read nor written."""

    @field_validator("model_settings")
    @classmethod
    def _no_reserved_settings(cls, settings: dict[str, Any] | None) -> dict[str, Any] | None:
        for key, value in (settings or {}).items():
            if key in _RESERVED_SETTINGS:
                raise ValueError(
                    f"model_settings may not set {key!r}: use {_RESERVED_SETTINGS[key]} instead"
                )
            retries_ok = isinstance(value, int) and not isinstance(value, bool) and value >= 0
            if key in _RETRY_SETTINGS and value is not None and not retries_ok:
                raise ValueError(
                    f"model_settings[{key!r}] must be a whole number of retries (0 or more), "
                    f"not {value!r}"
                )
        return settings

    def over(self, base: JudgeConfig | None) -> JudgeConfig:
        """This config with every unset field taken from `base` (field by field)."""
        if base is None:
            return self
        merged = {
            name: getattr(self, name) if getattr(self, name) is not None else getattr(base, name)
            for name in type(self).model_fields
        }
        return JudgeConfig.model_construct(**merged)
