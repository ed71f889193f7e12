"""A provider key that must never leak, and a judge that echoes whatever key it receives: in an
error body, in a malformed answer and in a reason (scorelab issue 11, points 1 and 7)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from core.testing import Fault, Reply
from core.testing.fake_judge import KEY_ECHO, Answer, answer_from_schema

CANARY = "sk-canary-0f1e2d3c4b5a69788796a5b4"
"""The value of OPENAI_API_KEY in these tests."""

ROWS = (
    b"id,question,answer\n"
    b"a,What is Python?,Python is a programming language.\n"
    b"b,What is HTTP?,HTTP is a protocol.\n"
    b"c,What is SQL?,SQL queries databases.\n"
)
"""Three items, scored with `SCORER` one after the other (concurrency 1)."""

SCORER = "toxicity-scorer"
"""analyze (a judge call answering a schema), then generateReason (a judge call answering text)."""

KEY_VARIABLES = (
    "OPENAI_API_KEY",
    "OPENAI_API_BASE",
    "OPENAI_BASE_URL",
    "SCORELAB_JUDGE_API_KEY",
    "SCORELAB_TRUSTED_API_BASES",
)


def echoing_judge() -> Callable[[dict[str, Any]], Answer]:
    """A responder for a run of `SCORER` over `ROWS` with concurrency 1 and no retries: item a
    succeeds with a reason quoting the key; item b fails with a malformed answer quoting it
    (twice: the fallback asks again); item c fails with a 401 whose body quotes it."""
    script: list[Answer | Callable[[dict[str, Any]], Answer]] = [
        answer_from_schema,
        Reply(f"The reason quotes the key {KEY_ECHO}"),
        Reply(f"not JSON, but the key {KEY_ECHO}"),
        Reply(f"still not JSON, still the key {KEY_ECHO}"),
        Fault(401, f"Incorrect API key provided: {KEY_ECHO}"),
    ]

    def respond(request: dict[str, Any]) -> Answer:
        answer = script.pop(0) if script else answer_from_schema
        return answer(request) if callable(answer) else answer

    return respond
