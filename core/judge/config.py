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
}


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
    """litellm call settings (temperature, max_tokens, timeout, num_retries, ...), as given."""
    api_base: str | None = None
    """Base URL of an OpenAI-compatible server (vLLM, Ollama, a proxy)."""
    api_key: SecretStr | None = None
    """API key for that server; never shown in reprs or records."""

    @field_validator("model_settings")
    @classmethod
    def _no_reserved_settings(cls, settings: dict[str, Any] | None) -> dict[str, Any] | None:
        for key in settings or {}:
            if key in _RESERVED_SETTINGS:
                raise ValueError(
                    f"model_settings may not set {key!r}: use {_RESERVED_SETTINGS[key]} instead"
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
