"""The spend cap on Ray (core/experiments/ray_budget.py): slices of the cap granted to the
workers ahead, the cap held exactly by callers on both nodes at once, unspent slices given
back at a chunk's end (and then spendable by another worker)."""

from __future__ import annotations

import sys
import threading
import time
from typing import Any

import pytest
from conftest import Cluster

from core.experiments.ray_budget import RayBudgetProxy, budget_holder, settled_figures
from core.judge.budget import BudgetReached
from core.judge.pricing import estimate_cost_usd, unit_prices

PRICED = "openai/gpt-4o-mini"
"""A model in litellm's bundled price table."""
PROMPT, ANSWER = 1_000, 500
"""The tokens of every call here: each is reserved at exactly what it is settled at."""


def call_cost() -> float:
    cost = estimate_cost_usd(PRICED, PROMPT, ANSWER)
    assert cost
    return cost


@pytest.fixture
def ray_connected(ray_cluster: Cluster) -> Any:
    import ray

    if not ray.is_initialized():  # an experiment's connection may be open still
        ray.init(address=ray_cluster.address, namespace="scorelab", log_to_driver=False)
    return ray


class Gate:
    """Where the workers wait for each other (a Ray actor)."""

    def __init__(self) -> None:
        self.count = 0

    def arrive(self) -> None:
        self.count += 1

    def arrived(self) -> int:
        return self.count


def spend_until_refused(proxy: RayBudgetProxy, threads: int, pause_s: float) -> int:
    """Calls made by `threads` callers at once on `proxy`, each reserving, waiting `pause_s`
    (the call in flight) and settling at its reservation, until the budget refuses them."""
    made = [0] * threads

    def caller(index: int) -> None:
        while True:
            try:
                reserved = proxy.reserve_tokens(PRICED, PROMPT, ANSWER)
            except BudgetReached:
                return
            time.sleep(pause_s)
            proxy.settle(reserved, reserved, ANSWER)
            made[index] += 1

    running = [threading.Thread(target=caller, args=(n,)) for n in range(threads)]
    for thread in running:
        thread.start()
    for thread in running:
        thread.join()
    proxy.flush()
    return sum(made)


def test_the_cap_holds_exactly_with_callers_on_both_nodes_at_once(ray_connected: Any) -> None:
    ray = ray_connected
    cost = call_cost()
    cap = 300.5 * cost
    actor = budget_holder(cap)
    # The workers cannot import this test module: its functions travel by value.
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])

    gate = ray.remote(Gate).options(num_cpus=0).remote()

    @ray.remote(num_cpus=1)
    def worker(actor: Any, cap: float, gate: Any) -> tuple[int, float, bool]:
        unit_prices(PRICED)  # litellm imported (seconds) before the gate, not after
        ray.get(gate.arrive.remote())
        while ray.get(gate.arrived.remote()) < 2:  # both spend at once
            time.sleep(0.01)
        proxy = RayBudgetProxy(actor, cap, concurrency=8)
        made = spend_until_refused(proxy, threads=8, pause_s=0.002)
        return made, proxy.free_usd, proxy.reached

    try:
        # One worker on each node (one CPU each), eight callers each.
        results = ray.get([worker.remote(actor, cap, gate), worker.remote(actor, cap, gate)])
        spent, held, refused = settled_figures(actor)
    finally:
        ray.kill(actor)
        ray.kill(gate)
    made = sum(count for count, _, _ in results)
    assert all(count > 0 for count, _, _ in results), results  # both nodes, one cap
    assert made * cost <= cap  # never past it: each call cost what it reserved
    # Used to the end: what is left is less than one call per worker, plus the one refused.
    assert made >= 300 - 2
    assert spent == pytest.approx(made * cost)
    assert held == pytest.approx(0.0, abs=1e-12)  # every unspent slice came back
    assert all(free == 0.0 and reached for _, free, reached in results)
    assert refused >= 2


def test_a_worker_gives_back_its_unspent_slice_for_another_to_spend(ray_connected: Any) -> None:
    ray = ray_connected
    cost = call_cost()
    cap = 10.5 * cost
    actor = budget_holder(cap)
    try:
        first = RayBudgetProxy(actor, cap, concurrency=4)
        reserved = first.reserve_tokens(PRICED, PROMPT, ANSWER)
        assert reserved == pytest.approx(cost)
        spent, held, _ = ray.get(actor.figures.remote())
        assert spent == 0.0 and held > 2 * cost  # a slice ahead, more than the call
        first.settle(reserved, reserved, ANSWER)

        # While the first holds its slice, a second worker gets only what is left.
        second = RayBudgetProxy(actor, cap, concurrency=4)
        while_held = spend_until_refused(second, threads=1, pause_s=0.0)
        assert while_held * cost <= cap - held

        first.flush()  # its chunk ended: the unspent part of its slice goes back
        spent, held, _ = ray.get(actor.figures.remote())
        assert held == pytest.approx(0.0, abs=1e-12)
        assert spent == pytest.approx((1 + while_held) * cost)

        # The next chunk's worker spends what came back, to the cap.
        third = RayBudgetProxy(actor, cap, concurrency=4)
        assert spend_until_refused(third, threads=3, pause_s=0.001) == 9 - while_held
        spent, held, refused = ray.get(actor.figures.remote())
        assert spent == pytest.approx(10 * cost) and spent <= cap  # ten calls of 10.5 in all
        assert held == pytest.approx(0.0, abs=1e-12) and refused >= 2
    finally:
        ray.kill(actor)


def test_a_model_without_a_price_is_refused_for_every_worker(ray_connected: Any) -> None:
    ray = ray_connected
    actor = budget_holder(1.0)
    try:
        proxy = RayBudgetProxy(actor, 1.0)
        with pytest.raises(BudgetReached, match="no price for the judge model 'openai/unpriced'"):
            proxy.reserve_tokens("openai/unpriced", 10, 10)
        other = RayBudgetProxy(actor, 1.0)
        with pytest.raises(BudgetReached, match="no price"):
            other.reserve_tokens(PRICED, PROMPT, ANSWER)
        assert proxy.reached and other.reached
        assert ray.get(actor.figures.remote())[2] >= 2
    finally:
        ray.kill(actor)
