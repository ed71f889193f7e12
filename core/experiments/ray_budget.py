"""The judge spend cap of an experiment on Ray: one Ray actor holds the cap, and each worker
spends a slice of it granted ahead, so a judge call rarely waits for the actor.

The driver makes the actor when the run starts (`budget_holder`: owned by the driver, so it
goes with it; no CPU). A chunk's worker runs the engine under a `RayBudgetProxy`, the budget
its judge calls see. The actor grants a worker a slice of the cap (enough for a few
concurrency's worth of calls at the worker's current estimate), counted as held by that worker
until the worker settles it or gives it back. A judge call's reservation comes out of the
worker's slice (no call of the actor); when the slice runs low, the next one is asked for
ahead, without waiting; a call waits for the actor only when its slice is empty and no grant
is on the way. Settlements (what each call cost, from litellm's prices) go to the actor in
batches, without waiting; at a chunk's end the worker gives back what it did not spend
(without waiting: the driver waits at the run's end until every slice is back), and its next
chunk of the run asks for a slice ahead as it starts.

The actor grants only what the cap leaves: the spend so far plus every slice held never passes
the cap, so the spend passes it only by what calls cost beyond their estimates, as in-process
(docs/scale.md, The spend cap across the cluster). When what the cap leaves cannot cover a
call a worker must make, the actor refuses it: that worker starts no further run, and the
driver, which reads the actor's refusals, sends no further chunk; the other workers spend what
their slices hold, then are refused in turn.

Only this module and its neighbours `ray_backend` and `ray_limiter` import Ray (lazily).
"""

from __future__ import annotations

import time
import uuid
from typing import Any

from core.judge.budget import DEFAULT_OUTPUT_TOKENS, BudgetReached, JudgeBudget
from core.judge.pricing import unit_prices

__all__ = ["CALLS_AHEAD", "BudgetActor", "RayBudgetProxy", "budget_holder", "settled_figures"]

CALLS_AHEAD = 16
"""A slice covers at least this many calls at the worker's estimate (more: 2 × concurrency)."""
_SETTLE_EVERY_S = 0.2
"""Settlements wait at most this long in a worker before they go to the actor."""


class BudgetActor:
    """The cluster's budget of one experiment (a Ray actor, one call at a time): the spend
    settled so far and what each worker (`holder`) holds of the cap, granted and not settled."""

    def __init__(self, max_cost_usd: float) -> None:
        JudgeBudget(max_cost_usd)  # the same check of the cap
        self._cap = float(max_cost_usd)
        self._spent = 0.0
        self._held: dict[str, float] = {}
        self._blocked: str | None = None
        self._refused = 0

    def grant(self, holder: str, need: float, want: float) -> tuple[float, str]:
        """(a slice, "") of at least `need` (0: as much as is left, up to `want`), or (0.0, why)
        when what the cap leaves cannot cover `need`."""
        held = sum(self._held.values())
        left = max(self._cap - self._spent - held, 0.0)
        if self._blocked is not None or need > left:
            if need <= 0:
                return 0.0, self._blocked or ""
            self._refused += 1
            return 0.0, self._blocked or (
                f"the judge spend cap of ${self._cap:.4f} is reached (spent "
                f"${self._spent:.4f}, ${held:.4f} held by the workers for their calls)"
            )
        # Near the end, a share of what is left: the slices other workers hold unspent when
        # the cap is reached stay small.
        sharing = 1 + sum(1 for other, part in self._held.items() if part > 0 and other != holder)
        size = min(want, max(need, left / (2 * sharing)), left)
        self._held[holder] = self._held.get(holder, 0.0) + size
        return size, ""

    def settle(self, holder: str, reserved: float, cost_usd: float, returned: float = 0.0) -> None:
        """`holder`'s calls that ended: `reserved` of its slice cost `cost_usd`; `returned`: the
        part of its slice it gives back."""
        held = self._held.get(holder, 0.0) - reserved - returned
        if held > 1e-12:
            self._held[holder] = held
        else:
            self._held.pop(holder, None)
        self._spent += max(cost_usd, 0.0)

    def refuse(self, reason: str) -> None:
        """No grant ever again (a worker found a call the cap cannot bound: a model without a
        price)."""
        self._refused += 1
        self._blocked = self._blocked or reason

    def figures(self) -> tuple[float, float, int]:
        """(spent USD, held by the workers USD, refused requests)."""
        return self._spent, sum(self._held.values()), self._refused


class RayBudgetProxy(JudgeBudget):
    """The budget a worker's judge calls ask (`JudgeBudget.active`): reservations come out of
    the slice the actor granted this worker; `reached` is this worker's own refusal."""

    def __init__(self, actor: Any, max_cost_usd: float, concurrency: int = 1) -> None:
        super().__init__(max_cost_usd)
        self.actor = actor
        self.holder = uuid.uuid4().hex
        self._calls_ahead = max(CALLS_AHEAD, 2 * concurrency)
        self._free = 0.0
        self._asked: Any = None  # the grant on the way (a concurrent future), one at a time
        self._asked_need = 0.0  # what it must cover (0: asked ahead)
        self._refusal: str | None = None
        self._unsent_reserved = 0.0
        self._unsent_cost = 0.0
        self._unsent_calls = 0
        self._sent_at = time.monotonic()
        self._estimate = 0.0
        self._run_key = str(getattr(actor, "_ray_actor_id", id(actor)))

    @property
    def reached(self) -> bool:
        """True once one of this worker's requests was refused (the engine starts no run)."""
        with self._lock:
            return self._refusal is not None

    @property
    def free_usd(self) -> float:
        """What this worker holds of the cap and has not reserved for a call."""
        with self._lock:
            return self._free

    def reserve_tokens(self, model: str, input_tokens: int, output_tokens: int | None) -> float:
        prices = unit_prices(model) if model else None
        if prices is None:
            reason = (
                f"litellm has no price for the judge model {model!r}: a spend cap cannot "
                "bound its calls"
            )
            self._refused_here(reason)
            self.actor.refuse.remote(reason)
            raise BudgetReached(reason)
        with self._lock:
            output = output_tokens or self._largest_output or DEFAULT_OUTPUT_TOKENS
        estimate = input_tokens * prices[0] + output * prices[1]
        self._estimate = estimate
        while True:
            with self._lock:
                self._take_arrived()
                # What the slice holds is spent first, refused or not: it was granted.
                if self._free >= estimate:
                    self._free -= estimate
                    self._in_flight += estimate
                    if self._free < estimate * self._calls_ahead / 2:
                        self._ask_ahead(estimate)
                    return estimate
                if self._refusal is not None:
                    raise BudgetReached(self._refusal)
                if self._asked is None:
                    self._ask_now(estimate)
                asked = self._asked
            asked.result()  # the one grant on the way; then look again

    def settle(
        self, reserved: float, cost_usd: float | None, output_tokens: int | None = None
    ) -> None:
        with self._lock:
            self._in_flight = max(self._in_flight - reserved, 0.0)
            self._spent += reserved if cost_usd is None else max(cost_usd, 0.0)
            self._calls += 1
            if output_tokens:
                self._largest_output = max(self._largest_output, output_tokens)
            self._unsent_reserved += reserved
            self._unsent_cost += reserved if cost_usd is None else max(cost_usd, 0.0)
            self._unsent_calls += 1
            due = (
                self._unsent_calls >= self._calls_ahead // 2
                or time.monotonic() - self._sent_at >= _SETTLE_EVERY_S
            )
            if due:
                self._send_settled(returned=0.0)

    def prime(self) -> None:
        """At a chunk's start: ask for a slice at the estimate this process's last chunk of the
        same run ended with, without waiting (its first call then seldom waits)."""
        with self._lock:
            estimate = _last_estimates.get(self._run_key)
            if estimate:
                self._ask_ahead(estimate)

    def flush(self, wait: bool = False) -> None:
        """At a chunk's end: every settlement sent and the unspent slice given back (`wait`:
        and taken by the actor; the driver waits for the slices at the run's end instead,
        `settled_figures`)."""
        import ray

        with self._lock:
            asked = self._asked
        if asked is not None:
            asked.result()
        with self._lock:
            self._take_arrived()
            returned, self._free = self._free, 0.0
            reference = self._send_settled(returned)
            if self._estimate:
                if len(_last_estimates) > 64:
                    _last_estimates.clear()  # runs long gone
                _last_estimates[self._run_key] = self._estimate
        if wait:
            ray.get(reference)

    # ---- under `_lock` ----

    def _take_arrived(self) -> None:
        """Add the grant asked for to the slice, if it has come; a refused request for a call
        (`_ask_now`) is this worker's refusal."""
        if self._asked is None or not self._asked.done():
            return
        size, blocked = self._asked.result()  # a refusal (`blocked`) grants nothing
        needed = self._asked_need
        self._asked, self._asked_need = None, 0.0
        self._free += size
        if blocked and (needed > 0 or self._free <= 0):
            self._refused += 1
            self._refusal = self._refusal or blocked

    def _ask_ahead(self, estimate: float) -> None:
        if self._asked is None:
            want = estimate * self._calls_ahead
            self._asked = self.actor.grant.remote(self.holder, 0.0, want).future()

    def _ask_now(self, estimate: float) -> None:
        """Ask for a slice for this call at least (the slice is short of it, nothing is on the
        way). One request at a time: a second caller's, asked before the first's grant came,
        would ask for too much and be refused while the two together fit the cap."""
        self._asked_need = max(estimate - self._free, 0.0)
        self._send_settled(returned=0.0)  # what ended first: the cap may cover more then
        want = estimate * self._calls_ahead
        self._asked = self.actor.grant.remote(self.holder, self._asked_need, want).future()

    def _send_settled(self, returned: float) -> Any:
        reference = self.actor.settle.remote(
            self.holder, self._unsent_reserved, self._unsent_cost, returned
        )
        self._unsent_reserved = self._unsent_cost = 0.0
        self._unsent_calls = 0
        self._sent_at = time.monotonic()
        return reference

    def _refused_here(self, reason: str) -> None:
        with self._lock:
            self._refused += 1
            self._refusal = self._refusal or reason


_last_estimates: dict[str, float] = {}
"""A worker process's last call estimate per run (budget actor), for the next chunk's `prime`."""


def settled_figures(actor: Any, timeout_s: float = 5.0) -> tuple[float, float, int]:
    """The actor's `figures` once every chunk's slice has come back (nothing held: every
    settlement sent before it taken too), or as they are after `timeout_s` (a worker that died
    holding a slice never gives it back)."""
    import ray

    deadline = time.monotonic() + timeout_s
    while True:
        spent, held, refused = ray.get(actor.figures.remote())
        if held <= 1e-12 or time.monotonic() >= deadline:
            return spent, held, refused
        time.sleep(0.01)


def budget_holder(max_cost_usd: float) -> Any:
    """A new budget actor for one run on Ray, owned by this driver; returns its handle."""
    import ray

    actor_class: Any = ray.remote(BudgetActor)
    return actor_class.options(num_cpus=0, max_restarts=0).remote(max_cost_usd)
