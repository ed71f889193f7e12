"""The judge of an experiment: its model checked before anything runs, its key from the
environment only, its default call settings.

A typo in the model or a missing key is one clear message before the first item instead of a
failure on every item, and no credential ever reaches a stored experiment: keys come from the
environment (the provider's usual variable, or `SCORELAB_JUDGE_API_KEY`), never from the
settings the experiment records.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

from core.errors import ExperimentConfigError
from core.judge import _litellm
from core.judge.config import JudgeConfig

__all__ = [
    "DEFAULT_JUDGE_SETTINGS",
    "JUDGE_API_KEY_ENV",
    "NO_KEY",
    "JudgeSetupError",
    "experiment_judge",
    "judge_problems",
]

JUDGE_API_KEY_ENV = "SCORELAB_JUDGE_API_KEY"
"""Optional key for the judge server (else litellm reads the provider's usual variable)."""

DEFAULT_JUDGE_SETTINGS: dict[str, Any] = {"num_retries": 2}
"""The judge retries (with backoff, each retry a recorded attempt) rate-limited and failed
judge requests; settings given per experiment override these."""

NO_KEY = "no-key"
"""The key given to an OpenAI-compatible server when the environment has none: such servers
(vLLM, Ollama, proxies) often need no key, but the OpenAI client refuses to start without one."""

_CREDENTIAL_SETTING = re.compile(r"key|token|secret|password|authorization|header", re.I)


class JudgeSetupError(ExperimentConfigError):
    """A judge that cannot work: an unroutable model, a missing key, a credential in the
    settings, or settings the judge refuses."""


def experiment_judge(model: str, api_base: str | None, settings: Mapping[str, Any]) -> JudgeConfig:
    """The judge an experiment calls: `model` routed by litellm (once), the key from the
    environment, `settings` over `DEFAULT_JUDGE_SETTINGS`. Raises JudgeSetupError naming the
    problem."""
    for key in settings:
        if _CREDENTIAL_SETTING.search(key):
            raise JudgeSetupError(
                f"judge_settings may not hold {key!r}: credentials come from the environment "
                f"(the provider's usual variable, or {JUDGE_API_KEY_ENV}) and are never stored"
            )
    api_key = os.environ.get(JUDGE_API_KEY_ENV) or None
    provider = _provider(model, api_base)
    if api_key is None and not api_base:
        problems = _missing_keys(model)
        if problems:
            raise JudgeSetupError("; ".join(problems))
    if api_base and api_key is None and not os.environ.get(_key_variable(provider)):
        api_key = NO_KEY
    try:
        return JudgeConfig(
            model=model,
            api_base=api_base or None,
            api_key=api_key,
            model_settings={**DEFAULT_JUDGE_SETTINGS, **settings},
        )
    except ValueError as error:
        raise JudgeSetupError(f"Invalid judge settings: {error}") from error


def judge_problems(model: str, api_base: str | None, has_api_key: bool) -> list[str]:
    """What stops `model` from answering: an unroutable model string, or provider keys missing
    from the environment (not checked when an API base or an explicit key is given)."""
    try:
        _provider(model, api_base)
    except JudgeSetupError as error:
        return [str(error)]
    return [] if api_base or has_api_key else _missing_keys(model)


def _provider(model: str, api_base: str | None) -> str:
    """The provider litellm routes `model` to; raises JudgeSetupError when it cannot."""
    try:
        return _litellm.resolve_model(model, api_base)[1]
    except Exception:  # litellm raises BadRequestError with a long generic text
        raise JudgeSetupError(
            f"litellm cannot route the judge model {model!r}: write it as provider/model, "
            "e.g. openai/gpt-4o-mini, anthropic/claude-3-5-haiku-latest or ollama/llama3"
        ) from None


def _missing_keys(model: str) -> list[str]:
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


def _key_variable(provider: str) -> str:
    """The provider's usual key variable, e.g. OPENAI_API_KEY."""
    return f"{provider.upper().replace('-', '_')}_API_KEY"
