"""Shared fixtures: one fake OpenAI-compatible judge server for the whole session.

The environment variable must be set before litellm is imported anywhere, otherwise litellm
tries to download its price table at import time (there is no network here).
"""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from collections.abc import Iterator

import pytest

from core import JudgeConfig
from core.testing import FakeJudge

JUDGE_INSTRUCTIONS = "You are a strict grader."
JUDGE_MODEL = "openai/fake-judge"
JUDGE_API_KEY = "test-key"


@pytest.fixture(scope="session")
def fake_judge() -> Iterator[FakeJudge]:
    """The fake judge server, started once per session."""
    server = FakeJudge().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def judge_server(fake_judge: FakeJudge) -> Iterator[FakeJudge]:
    """The session's fake judge with an empty script, no recorded requests and the default
    responder (restored after the test, in case the test replaced it)."""
    default_responder = fake_judge.responder
    fake_judge.reset()
    try:
        yield fake_judge
    finally:
        fake_judge.responder = default_responder
        fake_judge.reset()


@pytest.fixture
def judge_config(judge_server: FakeJudge) -> JudgeConfig:
    """A scorer-level judge pointed at the fake server. `num_retries: 0` because, without an
    explicit value, the judge retries transport errors twice (with real waits)."""
    return JudgeConfig(
        model=JUDGE_MODEL,
        instructions=JUDGE_INSTRUCTIONS,
        api_base=judge_server.url,
        api_key=JUDGE_API_KEY,
        model_settings={"num_retries": 0},
    )


@pytest.fixture
def retry_waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The judge's waits between transport retries, recorded instead of slept (from any
    thread: the service runs its experiments in a worker thread)."""
    waits: list[float] = []

    async def record(seconds: float) -> None:
        waits.append(seconds)

    monkeypatch.setattr("core.judge.retry.sleep", record)
    return waits


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Run the browser tests last: Playwright's sync API keeps an event loop running in the main
    thread for as long as the browser lives, which async tests after it cannot share."""
    items.sort(key=lambda item: "tests/browser/" in item.nodeid.replace("\\", "/"))
