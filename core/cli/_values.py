"""The values of the command's options, read from their text: argparse `type=` functions
(an `argparse.ArgumentTypeError` becomes a usage error naming the option) and the parsers of
repeatable KEY=VALUE options (a `CliError` naming the option and the text given)."""

from __future__ import annotations

import argparse
import json
import math
import os
import sys

from pydantic import SecretStr

from core.cli._errors import CliError
from core.records import RateLimit, ScorerSpec

__all__ = [
    "concurrency",
    "judge_setting",
    "max_cost",
    "per_minute",
    "rate_limit",
    "retry_count",
    "scorer_spec",
    "share",
    "threshold",
    "typed_key",
]

JsonValue = object
"""A value read from JSON text (the judge settings are checked by the service)."""


def share(text: str) -> float:
    """A share between 0 and 1 (`--max-failure-rate`)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(
            f"expected a share between 0 and 1 (0.05 for 5%), got {text!r}"
        )
    return value


def concurrency(text: str) -> int:
    """Scorer runs at once, 1 to the engine's cap (`--concurrency`)."""
    from core.service.terminal import MAX_CONCURRENCY

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    if value > MAX_CONCURRENCY:
        raise argparse.ArgumentTypeError(
            f"at most {MAX_CONCURRENCY} runs at once, got {value:,} (each run in flight holds "
            "memory, and a judge server is better served with fewer)"
        )
    return value


def max_cost(text: str) -> float:
    """A spend cap in USD, a finite number above 0 (`--max-cost`)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(
            f"expected an amount of USD above 0, e.g. 2.50, got {text!r}"
        )
    return value


def per_minute(text: str) -> int:
    """A judge rate, a whole number above 0 per minute (`--rpm`, `--tpm`)."""
    try:
        value = int(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a whole number per minute above 0, e.g. 500, got {text!r}"
        ) from None
    if value < 1:
        raise argparse.ArgumentTypeError(
            f"expected a whole number per minute above 0, e.g. 500, got {text!r}"
        )
    return value


def rate_limit(rpm: int | None, tpm: int | None) -> RateLimit | None:
    """The experiment's judge rate limit from `--rpm` and `--tpm` (None: the provider's
    defaults; a figure not given keeps its default)."""
    if rpm is None and tpm is None:
        return None
    return RateLimit(requests_per_minute=rpm, tokens_per_minute=tpm)


def retry_count(text: str) -> int:
    """How many times failed runs are run again, a whole number of at least 1
    (`--retry-failed`)."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(
            f"expected a whole number of times, at least 1, got {text!r}"
        )
    return value


def scorer_spec(text: str) -> ScorerSpec:
    """`ID` or `ID={"option": value}` (`--scorer`)."""
    scorer_id, _, raw = text.partition("=")
    scorer_id = scorer_id.strip()
    if not scorer_id:
        raise CliError(f"--scorer {text!r}: the scorer id is missing")
    if not raw:
        return ScorerSpec(scorer_id=scorer_id)
    try:
        options = json.loads(raw)
    except json.JSONDecodeError as error:
        raise CliError(f"--scorer {text!r}: the options are not valid JSON ({error.msg})") from None
    if not isinstance(options, dict):
        raise CliError(f"--scorer {text!r}: the options must be a JSON object")
    return ScorerSpec(scorer_id=scorer_id, options=options)


def threshold(text: str) -> tuple[str, float]:
    """`ID=MIN`, MIN in [0, 1] (`--threshold`)."""
    scorer_id, separator, raw = text.rpartition("=")
    if not separator or not scorer_id.strip():
        raise CliError(f"--threshold {text!r}: expected ID=MIN, e.g. tone-scorer=0.7")
    try:
        minimum = float(raw)
    except ValueError:
        raise CliError(f"--threshold {text!r}: {raw!r} is not a number") from None
    if not math.isfinite(minimum) or not 0 <= minimum <= 1:
        raise CliError(f"--threshold {text!r}: the minimum must be between 0 and 1")
    return scorer_id.strip(), minimum


def judge_setting(text: str) -> tuple[str, JsonValue]:
    """`KEY=VALUE`, VALUE as JSON when it is JSON, else a plain string (`--judge-setting`)."""
    key, separator, raw = text.partition("=")
    if not separator or not key.strip():
        raise CliError(f"--judge-setting {text!r}: expected KEY=VALUE, e.g. temperature=0")
    value: JsonValue
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        value = raw  # a plain string
    return key.strip(), value


def typed_key(
    *,
    key_env: str | None,
    key_stdin: bool,
    judge_model: str | None,
    no_model: str = "a judge key needs --judge-model",
) -> SecretStr | None:
    """The key given for this run (--api-key-env or --api-key-stdin), or None; it never
    appears on the command line, and it is never stored. `no_model`: what to say when there is
    no judge to give it to."""
    if key_env is None and not key_stdin:
        return None
    option = "--api-key-stdin" if key_stdin else f"--api-key-env {key_env}"
    if not judge_model:
        raise CliError(f"{option}: {no_model}")
    if key_stdin and sys.stdin.isatty():
        import getpass

        value = getpass.getpass("Judge API key (not shown): ").strip()
    elif key_stdin:
        value = sys.stdin.readline().strip()
        if not value:
            raise CliError(f"{option}: standard input holds no key (one line expected)")
    else:
        value = os.environ.get(key_env or "", "").strip()
        if not value:
            raise CliError(f"{option}: that environment variable is not set or is empty")
    return SecretStr(value)
