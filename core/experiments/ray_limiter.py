"""The judge rate limit of a whole Ray cluster: one named Ray actor holds a `local_limiter`
(core/judge/rate_limit.py) and every worker installs a proxy `Limiter` that asks it.

So the requests and tokens per minute of a judge model are counted once for all the workers,
and a 429 one worker sees (`slow_down`) pauses every worker's calls of that model. Ray is
imported lazily (only `ray_backend` and this module, its helper, use it; docs/scale.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.judge.rate_limit import (
    LocalLimiter,
    RateLimit,
    current_limiter,
    install_limiter,
    local_limiter,
)

__all__ = ["ACTOR_NAME", "LimiterActor", "RayLimiterProxy", "install_proxy", "shared_limiter"]

ACTOR_NAME = "scorelab-judge-rate-limiter"
"""The actor's name in the `scorelab` namespace: one per cluster, shared by every driver."""

_WAITERS = 10_000
"""Calls the actor serves at once: each waiting `acquire` holds one."""


class LimiterActor:
    """The cluster's limiter (an async Ray actor): a `LocalLimiter` behind three methods."""

    def __init__(self, limits: Mapping[str, RateLimit], window_seconds: int) -> None:
        self._limiter: LocalLimiter = local_limiter(limits, window_seconds=window_seconds)

    def set_limits(self, limits: Mapping[str, RateLimit]) -> None:
        """Limit these models from now on (a driver starting an experiment)."""
        for model, limit in limits.items():
            self._limiter.set_limit(model, limit)

    def limits(self) -> dict[str, RateLimit]:
        """The limits it holds."""
        return self._limiter.limits

    async def acquire(self, model: str, tokens: int) -> None:
        await self._limiter.acquire(model, tokens)

    async def settle(self, model: str, estimated: int, used: int) -> None:
        await self._limiter.settle(model, estimated, used)

    async def slow_down(self, model: str, seconds: float) -> None:
        await self._limiter.slow_down(model, seconds)


class RayLimiterProxy:
    """The `Limiter` a worker installs: each call is a call of the cluster's actor."""

    def __init__(self, actor: Any) -> None:
        self.actor = actor

    async def acquire(self, model: str, tokens: int) -> None:
        await self.actor.acquire.remote(model, tokens)

    async def settle(self, model: str, estimated: int, used: int) -> None:
        await self.actor.settle.remote(model, estimated, used)

    async def slow_down(self, model: str, seconds: float) -> None:
        await self.actor.slow_down.remote(model, seconds)


def shared_limiter(limits: Mapping[str, RateLimit], window_seconds: int = 60) -> Any:
    """The cluster's limiter actor (made by the first driver that needs it), holding `limits`
    from now on; returns its handle, for the tasks to take to their workers."""
    import ray

    actor_class: Any = ray.remote(LimiterActor)
    remote = actor_class.options(
        name=ACTOR_NAME,
        namespace="scorelab",
        get_if_exists=True,
        lifetime="detached",  # outlives a driver: another may be running on the same limits
        num_cpus=0,  # waiting is all it does: it must not take a worker's slot
        max_concurrency=_WAITERS,
        max_restarts=-1,
    )
    actor = remote.remote(dict(limits), window_seconds)
    ray.get(actor.set_limits.remote(dict(limits)))
    return actor


def install_proxy(actor: Any) -> None:
    """In a worker: judge calls of this process ask `actor` (once per process)."""
    installed = current_limiter()
    if isinstance(installed, RayLimiterProxy) and installed.actor == actor:
        return
    install_limiter(RayLimiterProxy(actor))
