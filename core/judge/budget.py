"""A spend cap on judge calls: the guard every judge request asks before it is sent.

An experiment with `max_cost` runs under a `JudgeBudget` (`with budget.active():` around the
engine's tasks; a context variable carries it to every judge call, so nothing is threaded
through the scorers). Before each request, the judge call `reserve`s the request's estimated
cost; the guard refuses (raises `BudgetReached`) when the spend so far plus every reservation in
flight plus this one would pass the cap. When the response comes back, `settle` replaces the
reservation with what litellm priced the response at (its `response_cost`, else its price table
times the usage). So the spend passes the cap only when calls in flight cost more than they were
estimated at, and then by no more than that difference (docs/core.md, Cost estimate and spend
cap).

Cache hits cost nothing and reserve nothing. A model litellm has no price for cannot be bounded:
its calls are refused (the service refuses such a cap before the experiment starts).
"""

from __future__ import annotations

import contextvars
import math
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from core.judge.pricing import unit_prices

__all__ = [
    "DEFAULT_OUTPUT_TOKENS",
    "BudgetReached",
    "JudgeBudget",
    "active_budget",
    "budget_refusal",
    "estimated_input_tokens",
    "requested_output_tokens",
]

DEFAULT_OUTPUT_TOKENS = 256
"""Output tokens a request is reserved at before any answer was seen (and no `max_tokens`)."""
CHARS_PER_TOKEN = 3
"""Characters per token for a reservation: fewer than the usual ~4, so a reservation errs high
(litellm's exact counter costs milliseconds per prompt, too much for every call)."""

_ACTIVE: contextvars.ContextVar[JudgeBudget | None] = contextvars.ContextVar(
    "scorelab_judge_budget", default=None
)


class BudgetReached(Exception):
    """A judge request was not sent: it would have taken the spend past the cap."""


class JudgeBudget:
    """The spend of one experiment's judge calls against its cap (USD); thread-safe."""

    def __init__(self, max_cost_usd: float) -> None:
        if (
            isinstance(max_cost_usd, bool)
            or not isinstance(max_cost_usd, int | float)
            or not math.isfinite(max_cost_usd)
            or max_cost_usd <= 0
        ):
            raise ValueError(f"max_cost must be a number of USD above 0, got {max_cost_usd!r}")
        self.max_cost_usd = float(max_cost_usd)
        self._lock = threading.Lock()
        self._spent = 0.0
        self._in_flight = 0.0
        self._calls = 0
        self._refused = 0
        self._largest_output = 0

    # ---- reading ----

    @property
    def spent_usd(self) -> float:
        """What the finished judge requests cost (litellm's prices)."""
        with self._lock:
            return self._spent

    @property
    def in_flight_usd(self) -> float:
        """The estimated cost of the requests sent and not answered yet."""
        with self._lock:
            return self._in_flight

    @property
    def reached(self) -> bool:
        """True once a request was refused: no more runs should start."""
        with self._lock:
            return self._refused > 0

    @property
    def refused_calls(self) -> int:
        """Judge requests refused so far."""
        with self._lock:
            return self._refused

    # ---- the guard ----

    def reserve(self, arguments: Mapping[str, Any]) -> float:
        """Reserve the estimated cost of the request `arguments` (litellm's, as the judge call
        builds them) and return it; raises `BudgetReached` when it would pass the cap."""
        return self.reserve_tokens(
            str(arguments.get("model") or ""),
            estimated_input_tokens(arguments),
            requested_output_tokens(arguments),
        )

    def reserve_tokens(self, model: str, input_tokens: int, output_tokens: int | None) -> float:
        """`reserve` of a request already counted: `input_tokens` estimated, `output_tokens`
        its `max_tokens` (None: the largest answer seen so far, else DEFAULT_OUTPUT_TOKENS).
        What a budget kept in another process is asked (docs/scale.md, The spend cap)."""
        prices = unit_prices(model) if model else None
        with self._lock:
            if prices is None:
                self._refused += 1
                raise BudgetReached(
                    f"litellm has no price for the judge model {model!r}: a spend cap cannot "
                    "bound its calls"
                )
            input_price, output_price = prices
            output = output_tokens or self._largest_output or DEFAULT_OUTPUT_TOKENS
            estimate = input_tokens * input_price + output * output_price
            if self._spent + self._in_flight + estimate > self.max_cost_usd:
                self._refused += 1
                raise BudgetReached(
                    f"the judge spend cap of ${self.max_cost_usd:.4f} is reached (spent "
                    f"${self._spent:.4f}, ${self._in_flight:.4f} in flight)"
                )
            self._in_flight += estimate
            return estimate

    def settle(
        self, reserved: float, cost_usd: float | None, output_tokens: int | None = None
    ) -> None:
        """A reserved request ended: `cost_usd` is what it cost (None when unknown: the
        reservation is kept as its cost; 0 for a request that got no response)."""
        with self._lock:
            self._in_flight = max(self._in_flight - reserved, 0.0)
            self._spent += reserved if cost_usd is None else max(cost_usd, 0.0)
            self._calls += 1
            if output_tokens:
                self._largest_output = max(self._largest_output, output_tokens)

    def figures(self) -> tuple[float, float, int]:
        """(spent USD, in flight USD, refused calls), read at once."""
        with self._lock:
            return self._spent, self._in_flight, self._refused

    def mirror(self, spent_usd: float, in_flight_usd: float, refused_calls: int) -> None:
        """Show these `figures` of the budget that really holds the cap (kept in another
        process: a Ray actor), so whoever reads this one (the progress) sees the spend."""
        with self._lock:
            self._spent, self._in_flight, self._refused = spent_usd, in_flight_usd, refused_calls

    @contextmanager
    def active(self) -> Iterator[JudgeBudget]:
        """Judge calls made in this context (and in tasks created in it) ask this budget."""
        token = _ACTIVE.set(self)
        try:
            yield self
        finally:
            _ACTIVE.reset(token)


def active_budget() -> JudgeBudget | None:
    """The budget judge calls of the current context answer to, if any."""
    return _ACTIVE.get()


def estimated_input_tokens(arguments: Mapping[str, Any]) -> int:
    """Prompt tokens of a request, estimated from its characters (messages and schema)."""
    chars = sum(len(str(message.get("content") or "")) for message in arguments.get("messages", []))
    response_format = arguments.get("response_format")
    if response_format:
        chars += len(str(response_format))
    return math.ceil(chars / CHARS_PER_TOKEN) + 8  # + the chat template's few tokens a message


def requested_output_tokens(arguments: Mapping[str, Any]) -> int | None:
    """The answer tokens a request asks for at most (`max_tokens`), if it says."""
    for name in ("max_tokens", "max_completion_tokens"):
        limit = arguments.get(name)
        if isinstance(limit, int) and not isinstance(limit, bool) and limit > 0:
            return limit
    return None


def budget_refusal(error: BaseException | None) -> BudgetReached | None:
    """The `BudgetReached` behind `error` (a scorer run's error wraps the step's), if any."""
    seen = 0
    while error is not None and seen < 16:
        if isinstance(error, BudgetReached):
            return error
        error = getattr(error, "cause", None) or error.__cause__
        seen += 1
    return None
