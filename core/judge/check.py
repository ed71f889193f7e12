"""Checking a judge model before an experiment starts, so a typo or a missing key is one clear
message instead of a failure on every item."""

from __future__ import annotations

from core.judge import _litellm

__all__ = ["judge_problems"]


def judge_problems(model: str, api_base: str | None, has_api_key: bool) -> list[str]:
    """What stops `model` from answering: an unroutable model string, or provider keys missing
    from the environment (not checked when an API base or an explicit key is given)."""
    try:
        _litellm.resolve_model(model, api_base)
    except Exception:  # litellm raises BadRequestError with a long generic text
        return [
            f"litellm cannot route the judge model {model!r}: write it as provider/model, "
            "e.g. openai/gpt-4o-mini, anthropic/claude-3-5-haiku-latest or ollama/llama3"
        ]
    if api_base or has_api_key:
        return []
    try:
        found = _litellm.litellm().validate_environment(model=model)
    except Exception:  # an unknown provider to validate: let the first call speak
        return []
    # Base URLs have defaults (Ollama's localhost, for one); only credentials are required.
    missing = [key for key in found.get("missing_keys") or [] if not key.endswith("_API_BASE")]
    if missing:
        return [
            f"The judge model {model!r} needs {', '.join(missing)} in the environment of the "
            "process running scorelab (keys are never stored)"
        ]
    return []
