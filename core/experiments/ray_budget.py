"""The judge spend cap of an experiment on Ray: one Ray actor holds its `JudgeBudget`
(core/judge/budget.py) and every worker's judge calls reserve from it and settle with it.

The driver makes the actor when the run starts (`budget_holder`: owned by the driver, so it
goes with it; no CPU). A chunk's worker runs the engine under a `RayBudgetProxy`, the budget
its judge calls see: before a request, `reserve_tokens` asks the actor (a blocking call: the
request waits for the answer, so the cap is decided in one place for the whole cluster); after
it, `settle` is sent without waiting (Ray runs one caller's calls of an actor in order, so a
worker's next reservation is decided after its last settlement). Once the actor refused one
request it refuses every later one, so no run on any worker starts a judge call after the cap
was reached; the driver reads the actor's figures as it goes (the progress shows the spend)
and, once the cap is reached, sends no further chunk (docs/scale.md, The spend cap).

Only this module and its neighbours `ray_backend` and `ray_limiter` import Ray (lazily).
"""

from __future__ import annotations

import threading
from typing import Any

from core.judge.budget import BudgetReached, JudgeBudget

__all__ = ["BudgetActor", "RayBudgetProxy", "budget_holder"]


class BudgetActor:
    """The cluster's budget of one experiment (a Ray actor, one call at a time)."""

    def __init__(self, max_cost_usd: float) -> None:
        self._budget = JudgeBudget(max_cost_usd)
        self._refusal: str | None = None

    def reserve(
        self, model: str, input_tokens: int, output_tokens: int | None
    ) -> tuple[float | None, str]:
        """(the reservation, "") or (None, why it was refused)."""
        if self._refusal is not None:
            return None, self._refusal
        try:
            return self._budget.reserve_tokens(model, input_tokens, output_tokens), ""
        except BudgetReached as refused:
            self._refusal = str(refused)
            return None, self._refusal

    def settle(self, reserved: float, cost_usd: float | None, output_tokens: int | None) -> None:
        self._budget.settle(reserved, cost_usd, output_tokens)

    def figures(self) -> tuple[float, float, int]:
        """(spent USD, in flight USD, refused calls)."""
        return self._budget.figures()


class RayBudgetProxy(JudgeBudget):
    """The budget a worker's judge calls ask (`JudgeBudget.active`): each reservation and
    settlement is the actor's; this object counts only what its own calls were refused."""

    def __init__(self, actor: Any, max_cost_usd: float) -> None:
        super().__init__(max_cost_usd)
        self.actor = actor
        self._refused_here = 0
        self._count_lock = threading.Lock()

    @property
    def reached(self) -> bool:
        """True once one of this worker's requests was refused (the engine starts no run)."""
        with self._count_lock:
            return self._refused_here > 0

    def reserve_tokens(self, model: str, input_tokens: int, output_tokens: int | None) -> float:
        import ray

        reserved, refusal = ray.get(self.actor.reserve.remote(model, input_tokens, output_tokens))
        if reserved is None:
            with self._count_lock:
                self._refused_here += 1
            raise BudgetReached(refusal)
        return float(reserved)

    def settle(
        self, reserved: float, cost_usd: float | None, output_tokens: int | None = None
    ) -> None:
        self.actor.settle.remote(reserved, cost_usd, output_tokens)

    def flush(self) -> None:
        """Wait until the actor has taken every settlement sent (a chunk's end)."""
        import ray

        ray.get(self.actor.figures.remote())


def budget_holder(max_cost_usd: float) -> Any:
    """A new budget actor for one run on Ray, owned by this driver; returns its handle."""
    import ray

    actor_class: Any = ray.remote(BudgetActor)
    return actor_class.options(num_cpus=0, max_restarts=0).remote(max_cost_usd)
