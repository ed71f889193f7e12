"""Connecting to an existing Ray cluster: the one retry of a Ray Client server that failed to
start this connection's own server (core/experiments/ray_backend.py `_init_at`), with a fake
`ray` module; the real cluster's connections are in tests/ray."""

from __future__ import annotations

from typing import Any

import pytest

from core.experiments import ray_backend
from core.experiments.ray_backend import ray_target

SERVER_DIED = ConnectionAbortedError(
    "Initialization failure from server:\nTraceback (most recent call last):\n"
    "RuntimeError: Starting Ray client server failed. See ray_client_server_23000.err for "
    "detailed logs."
)


class FakeRay:
    """`ray.init` failing with the given errors, in turn, then connecting."""

    def __init__(self, *failures: BaseException) -> None:
        self.failures = list(failures)
        self.inits: list[str] = []
        self.shutdowns = 0

    def init(self, address: str, **settings: Any) -> None:
        self.inits.append(address)
        if self.failures:
            raise self.failures.pop(0)

    def shutdown(self) -> None:
        self.shutdowns += 1


@pytest.fixture(autouse=True)
def _no_pause(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ray_backend, "_CLIENT_SERVER_RETRY_PAUSE_S", 0.0)


def connect(ray: FakeRay, address: str) -> None:
    target = ray_target(address, {})
    assert target is not None
    ray_backend._init(ray, target)


START_RAISED = ConnectionAbortedError(
    "Initialization failure from server:\nTraceback (most recent call last):\n"
    '  File "ray/util/client/server/proxier.py", line 765, in Datapath\n'
    "    if not self.proxy_manager.start_specific_server(\n"
    "TimeoutError: timed out"
)
NO_BACKEND = ConnectionAbortedError(
    "Initialization failure from server:\nTraceback (most recent call last):\n"
    "RuntimeError: Proxy failed to Connect to backend! Check `ray_client_server.err`"
)


@pytest.mark.parametrize("failure", [SERVER_DIED, START_RAISED, NO_BACKEND])
def test_a_client_server_that_failed_to_start_is_asked_once_more(
    caplog: pytest.LogCaptureFixture, failure: BaseException
) -> None:
    ray = FakeRay(failure)
    connect(ray, "ray://head:10001")
    assert ray.inits == ["ray://head:10001", "ray://head:10001"]
    assert ray.shutdowns == 1  # what the failed connection left, before the second
    assert "asking once more" in caplog.text


def test_a_second_failure_is_the_callers(caplog: pytest.LogCaptureFixture) -> None:
    ray = FakeRay(SERVER_DIED, SERVER_DIED)
    with pytest.raises(ConnectionAbortedError, match="client server failed"):
        connect(ray, "ray://head:10001")
    assert len(ray.inits) == 2


@pytest.mark.parametrize(
    ("address", "error"),
    [
        ("ray://head:10001", ConnectionAbortedError("Initialization failure: bad version")),
        ("ray://head:10001", RuntimeError("something else")),
        ("head:6379", RuntimeError("Starting Ray client server failed")),  # no client here
        ("ray://head:10001", ValueError("Starting Ray client server failed")),
    ],
)
def test_other_failures_are_not_retried(address: str, error: BaseException) -> None:
    ray = FakeRay(error)
    with pytest.raises(type(error)):
        connect(ray, address)
    assert len(ray.inits) == 1
