"""Transport retries of judge requests, in our own loop so that every request is an attempt.

litellm and the OpenAI client each retry by themselves, invisibly: with `num_retries=2` one HTTP
500 became five requests at the server and one attempt in the judge record. The judge call
switches both off (`num_retries=0`, `max_retries=0`) and retries here instead; the caller counts
and records each request.

Retried: HTTP 408, 429 and 5xx, timeouts and connection errors. Not retried: other 4xx (a bad
request, a wrong key or an unknown model fails the same way again) and format errors (those take
the structured-output fallback instead). The wait is the server's `Retry-After` (or
`retry-after-ms`), capped at `RETRY_AFTER_CAP_S`, else an exponential backoff; both with jitter so
that concurrent runs told to wait do not come back in step.
"""

from __future__ import annotations

import asyncio
import email.utils
import logging
import math
import random
import time
from collections.abc import Callable, Coroutine, Mapping
from typing import Any, TypeVar

__all__ = [
    "BACKOFF_INITIAL_S",
    "BACKOFF_MAX_S",
    "DEFAULT_RETRIES",
    "JITTER_S",
    "RETRY_AFTER_CAP_S",
    "backoff_seconds",
    "is_retryable",
    "pause_seconds",
    "retry_after_seconds",
    "retry_budget",
    "sleep",
    "status_of",
    "with_retries",
]

logger = logging.getLogger(__name__)

T = TypeVar("T")

DEFAULT_RETRIES = 2
"""Retries when `model_settings` sets neither `num_retries` nor `max_retries`: the default of
the OpenAI client (which litellm used for OpenAI-compatible judges) and of Mastra's AI SDK."""
BACKOFF_INITIAL_S = 0.5
"""The first backoff, doubled on each retry."""
BACKOFF_MAX_S = 8.0
"""The longest backoff."""
JITTER_S = 0.5
"""Up to this much random time is added to every wait."""
RETRY_AFTER_CAP_S = 60.0
"""The longest `Retry-After` honoured: a server asking for more still gets a retry after this."""

_RETRY_SETTINGS = ("num_retries", "max_retries")


async def sleep(seconds: float) -> None:
    """Wait between attempts. Tests replace this module attribute to skip the real wait."""
    await asyncio.sleep(seconds)


def retry_budget(settings: Mapping[str, Any] | None) -> int:
    """How many retries the user asked for: `num_retries`, else `max_retries` (litellm's two
    names for it), else `DEFAULT_RETRIES`. `JudgeConfig` has already checked the value."""
    for key in _RETRY_SETTINGS:
        value = (settings or {}).get(key)
        if value is not None:
            return int(value)
    return DEFAULT_RETRIES


def is_retryable(error: BaseException) -> bool:
    """True for errors a later identical request may not hit: 408, 429, 5xx, timeouts and
    connection errors."""
    if not isinstance(error, Exception):  # cancellation, interrupts: never retried
        return False
    status = _status(error)
    if status is not None:
        return status in (408, 429) or status >= 500
    if isinstance(error, TimeoutError | ConnectionError):
        return True
    from openai import APIConnectionError  # already imported by litellm when we get here

    return isinstance(error, APIConnectionError)  # timeouts are a subclass


def status_of(error: BaseException) -> int | None:
    """The HTTP status of an error, when it carries one."""
    return _status(error)


def _status(error: BaseException) -> int | None:
    status = getattr(error, "status_code", None)
    if isinstance(status, str) and status.isdigit():
        return int(status)
    if isinstance(status, int) and not isinstance(status, bool):
        return status
    return None


def retry_after_seconds(error: BaseException, now: float | None = None) -> float | None:
    """The wait the server asked for in the error response's `retry-after-ms` or `Retry-After`
    header (seconds or an HTTP date), or None when there is no usable one.

    litellm keeps the provider's response headers on `litellm_response_headers` (and, for
    status errors, on `response.headers`)."""
    headers = getattr(error, "litellm_response_headers", None)
    if not headers:
        headers = getattr(getattr(error, "response", None), "headers", None)
    if not headers:
        return None
    milliseconds = _number(_header(headers, "retry-after-ms"))
    if milliseconds is not None:
        return milliseconds / 1000
    value = _header(headers, "retry-after")
    seconds = _number(value)
    if seconds is not None or value is None:
        return seconds
    try:
        date = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(date.timestamp() - (time.time() if now is None else now), 0.0)


def _header(headers: Any, name: str) -> str | None:
    try:
        value = headers.get(name)  # httpx.Headers is case-insensitive
        if value is None and isinstance(headers, Mapping):
            value = next((v for k, v in headers.items() if str(k).lower() == name), None)
    except Exception:  # headers of an unexpected type: as if there were none
        return None
    return None if value is None else str(value).strip()


def _number(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) and value >= 0 else None


def backoff_seconds(retry: int, error: BaseException) -> float:
    """The wait before retry number `retry` (1 for the first) after `error`."""
    return pause_seconds(retry, error) + random.uniform(0, JITTER_S)


def pause_seconds(retry: int, error: BaseException) -> float:
    """How long a 429 pauses every caller of the model (`core.judge.rate_limit`): the wait the
    server asked for (capped), else the backoff of retry number `retry`; no jitter, the
    callers' own waits have theirs."""
    asked = retry_after_seconds(error)
    if asked is not None:
        return min(asked, RETRY_AFTER_CAP_S)
    doublings: int = max(retry, 1) - 1
    return min(BACKOFF_INITIAL_S * float(2**doublings), BACKOFF_MAX_S)


async def with_retries(
    retries: int, request: Callable[..., Coroutine[Any, Any, T]], *arguments: Any
) -> T:
    """`await request(*arguments)`, again after each retryable error, at most `retries` more
    times; the last error propagates. `request` must be a coroutine function.

    A plain loop, not tenacity's `AsyncRetrying`: the rules above are four lines here, and
    tenacity's per-call machinery (a retry state, coroutine checks of every hook) cost a
    third of the judge step's own CPU on a call that needs no retry (docs/core.md, "The judge
    call's own cost"). The wait goes through this module's `sleep`, looked up at each wait so that
    tests can swap it.
    """
    attempt = 0
    while True:
        attempt += 1
        try:
            return await request(*arguments)
        except BaseException as error:
            if attempt > retries or not is_retryable(error):
                raise
            delay = backoff_seconds(attempt, error)
            status = _status(error)
            # The class and status only: a message could echo a prompt or a key.
            logger.warning(
                "Judge request failed (%s%s); retry %d of %d in %.1f s",
                type(error).__name__,
                f", HTTP {status}" if status else "",
                attempt,
                retries,
                delay,
            )
        await sleep(delay)
