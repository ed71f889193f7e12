"""The judge call settings an experiment may store: an allow-list.

An experiment's judge settings are stored with it and shown with it, and litellm takes many
keyword arguments that carry credentials (`api_key`, `vertex_credentials`, `aws_secret_access_key`,
`extra_headers`, `extra_body`, ...) or change where the request goes (`base_url`, `api_version`).
A block-list of such names can never be complete, so only the settings below are accepted,
each with its values checked; any other is refused by name, never silently dropped
(docs/deploy.md, Judge keys).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from core.judge.endpoints import JudgeSetupError

__all__ = ["ALLOWED_JUDGE_SETTINGS", "check_judge_settings"]

_REASONING_EFFORTS = ("none", "minimal", "low", "medium", "high")


def _number(low: float | None = None, high: float | None = None) -> Callable[[Any], bool]:
    def check(value: Any) -> bool:
        if isinstance(value, bool) or not isinstance(value, int | float):
            return False
        if not math.isfinite(value):
            return False
        return (low is None or value >= low) and (high is None or value <= high)

    return check


def _whole(low: int) -> Callable[[Any], bool]:
    return lambda value: isinstance(value, int) and not isinstance(value, bool) and value >= low


def _stop(value: Any) -> bool:
    if isinstance(value, str):
        return bool(value)
    return (
        isinstance(value, list)
        and 0 < len(value) <= 4
        and all(isinstance(item, str) and item for item in value)
    )


ALLOWED_JUDGE_SETTINGS: dict[str, tuple[str, Callable[[Any], bool]]] = {
    "temperature": ("a number from 0 to 2", _number(0, 2)),
    "top_p": ("a number from 0 to 1", _number(0, 1)),
    "max_tokens": ("a whole number of tokens (1 or more)", _whole(1)),
    "max_completion_tokens": ("a whole number of tokens (1 or more)", _whole(1)),
    "timeout": ("seconds, a number above 0", lambda v: _number(0)(v) and v > 0),
    "num_retries": ("a whole number of retries (0 or more)", _whole(0)),
    "max_retries": ("a whole number of retries (0 or more)", _whole(0)),
    "seed": ("a whole number", _whole(-(2**63))),
    "stop": ("a text, or a list of 1 to 4 texts", _stop),
    "presence_penalty": ("a number from -2 to 2", _number(-2, 2)),
    "frequency_penalty": ("a number from -2 to 2", _number(-2, 2)),
    "reasoning_effort": (
        f"one of {', '.join(_REASONING_EFFORTS)}",
        lambda v: v in _REASONING_EFFORTS,
    ),
}
"""Setting -> (the values it takes, in words; their check). `response_format`, `api_base`,
`api_key` and the like are never settings: the step's schema and the judge's endpoint and key
set them."""

_SET_BY_SCORELAB = {
    "model": "the judge model",
    "messages": "the scorer's prompt",
    "response_format": "the step's output schema",
    "api_base": "the API base",
    "base_url": "the API base",
}


def check_judge_settings(settings: Mapping[str, Any] | None) -> dict[str, Any]:
    """`settings` as they may be stored; raises JudgeSetupError naming the first setting that
    is not allowed (and listing the allowed ones) or a value out of range."""
    checked: dict[str, Any] = {}
    for name, value in (settings or {}).items():
        if not isinstance(name, str) or name not in ALLOWED_JUDGE_SETTINGS:
            raise JudgeSetupError(_refusal(str(name)))
        what, accepts = ALLOWED_JUDGE_SETTINGS[name]
        if not accepts(value):
            raise JudgeSetupError(f"Judge setting {name!r} must be {what}, not {_shown(value)}")
        checked[name] = value
    return checked


def _shown(value: Any) -> str:
    # A number as given; any other value by its type only: a setting is no place for a key,
    # but one typed there must not come back in an error message.
    if isinstance(value, int | float) and not isinstance(value, bool):
        return repr(value)
    return f"a value of type {type(value).__name__}"


def _refusal(name: str) -> str:
    allowed = ", ".join(ALLOWED_JUDGE_SETTINGS)
    if name in _SET_BY_SCORELAB:
        why = f"scorelab sets it from {_SET_BY_SCORELAB[name]}"
    else:
        why = (
            "judge settings are stored with the experiment, so only settings known to hold no "
            "credential are accepted (keys come from the environment, or are typed for one "
            "experiment and never stored)"
        )
    return f"Judge setting {name!r} is not allowed: {why}. Allowed: {allowed}"
