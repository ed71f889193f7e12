"""The judge rate limit: requests and tokens per minute per judge model, for every caller of a
process (or, through a Ray actor holding a `local_limiter`, of a whole cluster).

The judge call path (`core.judge.call`) asks the installed `Limiter` before every provider
request, retries included (`acquire`), tells it what the request really used (`settle`), and
reports a 429 (`slow_down`) so that every caller of that model waits, not only the one that saw
it. No limiter installed (`install_limiter(None)`, the default) means no limit.

The local limiter counts on the `limits` library's moving window (a log of the hits of the last
window, so no window of that length ever admits more than the limit, unlike a fixed window or a
leaky bucket, which admit up to twice the limit across a boundary). Its synchronous in-memory
storage is thread-safe, so one limiter serves experiments running on several event loops of a
process. docs/core.md, "Judge rate limits", says what a user sees.
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from core.judge import _litellm
from core.judge.budget import DEFAULT_OUTPUT_TOKENS, estimated_input_tokens
from core.judge.endpoints import is_provider_endpoint
from core.records import RateLimit

if TYPE_CHECKING:
    from limits import RateLimitItem

    from core.judge.credentials import RoutedJudge

__all__ = [
    "DEFAULT_OUTPUT_TOKENS",
    "DEFAULT_WINDOW_S",
    "PROVIDER_DEFAULTS",
    "Limiter",
    "LocalLimiter",
    "RateLimit",
    "current_limiter",
    "experiment_rate_limit",
    "install_limiter",
    "judge_rate_limit",
    "local_limiter",
    "provider_default",
    "rate_limited",
    "request_tokens",
]

DEFAULT_WINDOW_S = 60
"""The window the limits are counted over: a minute (the providers' RPM and TPM)."""
_TOKEN_ENTRIES = 10_000
"""At most this many entries hold a tokens-per-minute window: the library keeps one entry per
unit hit, so a large limit is counted in units of several tokens (the part of a unit a request
leaves is carried to the next one, so a window may pass the limit by at most one unit, a
10,000th of it)."""
MAX_MARGIN_S = 1.0
"""The arrival margin: a turn is given for a window this much longer than the limit's (at most
a quarter of it), because the provider counts a request when it arrives, and requests given
their turn together reach it a few milliseconds apart (more on a busy machine or network):
without it, a batch admitted on the dot of a window's end could land in one provider window
with the end of the batch before."""
_MIN_WAIT_S = 0.005
"""The shortest sleep between two tries of a full window (the reset time is exact to the µs)."""


PROVIDER_DEFAULTS: dict[str, RateLimit] = {
    "openai": RateLimit(requests_per_minute=500, tokens_per_minute=30_000),
    "azure": RateLimit(requests_per_minute=300, tokens_per_minute=30_000),
    "anthropic": RateLimit(requests_per_minute=50, tokens_per_minute=20_000),
    "gemini": RateLimit(requests_per_minute=150, tokens_per_minute=1_000_000),
    "vertex_ai": RateLimit(requests_per_minute=150, tokens_per_minute=1_000_000),
    "mistral": RateLimit(requests_per_minute=60, tokens_per_minute=500_000),
    "groq": RateLimit(requests_per_minute=30, tokens_per_minute=6_000),
}
"""Conservative defaults per provider (as litellm routes the model): about the lowest paid tier
of each provider's strictest common model, so that a new account is not answered 429 over and
over. Raise them (`ExperimentConfig.rate_limit`, `scorelab run --rpm/--tpm`) to your account's
limits. A model served elsewhere (a local or OpenAI-compatible server at an `api_base` that is
not the provider's own) has no default: it is not limited unless the user says so."""


@runtime_checkable
class Limiter(Protocol):
    """What the judge call path asks before and after each provider request."""

    async def acquire(self, model: str, tokens: int) -> None:
        """Wait until one request of about `tokens` tokens (estimated before the call) may go
        to `model`."""

    async def settle(self, model: str, estimated: int, used: int) -> None:
        """After the call: correct the token count by what the provider reported."""

    async def slow_down(self, model: str, seconds: float) -> None:
        """A 429 (with its Retry-After or the backoff) was seen: every caller of `model`
        waits."""


_installed: Limiter | None = None
_install_lock = threading.Lock()


def install_limiter(limiter: Limiter | None) -> None:
    """Make `limiter` the one every judge call of this process asks (None: no limit)."""
    global _installed
    with _install_lock:
        _installed = limiter


def current_limiter() -> Limiter | None:
    """The limiter judge calls of this process ask, if any."""
    return _installed


@dataclass(slots=True)
class _ModelWindows:
    """The `limits` items of one model and its token units."""

    requests: RateLimitItem | None
    tokens: RateLimitItem | None
    token_unit: int


class LocalLimiter:
    """An in-process `Limiter` over the `limits` library's moving window (thread-safe; usable
    from any event loop).

    `limits` maps a judge model (the litellm model string of the experiment) to its limit; a
    model not in it is not limited, but a 429 still pauses its callers. `clock` and `sleep`
    drive the pauses (tests inject fake ones); the windows themselves run on `time.time`.
    """

    def __init__(
        self,
        limits: Mapping[str, RateLimit],
        *,
        window_seconds: int | None = None,
        margin_seconds: float | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        from limits.storage import MemoryStorage  # imported here: `import core` stays light
        from limits.strategies import MovingWindowRateLimiter

        if window_seconds is None:
            window_seconds = DEFAULT_WINDOW_S  # read now: tests shorten it for a whole service
        if isinstance(window_seconds, bool) or not isinstance(window_seconds, int):
            raise TypeError(f"window_seconds must be a whole number, not {window_seconds!r}")
        if window_seconds <= 0:
            raise ValueError(f"window_seconds must be above 0, not {window_seconds}")
        self.window_seconds = window_seconds
        self.margin_seconds = (
            min(MAX_MARGIN_S, window_seconds / 4) if margin_seconds is None else margin_seconds
        )
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        self._strategy = MovingWindowRateLimiter(MemoryStorage())
        self._limits: dict[str, RateLimit] = {}
        self._windows: dict[str, _ModelWindows] = {}
        self._debt: dict[str, int] = {}
        self._paused_until: dict[str, float] = {}
        for model, limit in limits.items():
            self.set_limit(model, limit)

    @property
    def limits(self) -> dict[str, RateLimit]:
        """The limit of each limited model (a copy)."""
        with self._lock:
            return dict(self._limits)

    def set_limit(self, model: str, limit: RateLimit | None) -> None:
        """Limit `model` to `limit` from now on (None or an unlimited one: no limit). What was
        counted in the current window under an earlier limit of the same size is kept."""
        with self._lock:
            if limit is None or limit.is_unlimited():
                self._limits.pop(model, None)
                self._windows.pop(model, None)
                return
            self._limits[model] = limit
            rpm, tpm = limit.requests_per_minute, limit.tokens_per_minute
            unit = max(1, math.ceil(tpm / _TOKEN_ENTRIES)) if tpm else 1
            seconds = self.window_seconds + self.margin_seconds
            window = _window_class()
            self._windows[model] = _ModelWindows(
                requests=None if rpm is None else window(rpm, seconds, "requests"),
                tokens=None if tpm is None else window(tpm // unit, seconds, "tokens"),
                token_unit=unit,
            )

    async def acquire(self, model: str, tokens: int) -> None:
        """Wait for any pause of `model` to end, then for room in its windows for one request
        and `tokens` tokens (plus what earlier requests used beyond their estimate). A request
        estimated above the whole tokens-per-minute limit waits for an empty window."""
        await self._wait_pause(model)
        while True:
            wait = self._try_hit(model, max(int(tokens), 0))
            if wait is None:
                return
            await self._sleep(wait)
            await self._wait_pause(model)

    async def settle(self, model: str, estimated: int, used: int) -> None:
        """Tokens used beyond the estimate are charged to the model's next request; tokens
        estimated beyond use are taken off that charge (never below nothing: what a window
        counted stays counted)."""
        with self._lock:
            balance = self._debt.get(model, 0) + int(used) - int(estimated)
            self._debt[model] = max(balance, 0)

    async def slow_down(self, model: str, seconds: float) -> None:
        """Pause every caller of `model` for `seconds` from now (a longer pause already set
        stays)."""
        if not math.isfinite(seconds) or seconds <= 0:
            return
        with self._lock:
            until = self._clock() + seconds
            self._paused_until[model] = max(self._paused_until.get(model, until), until)

    async def _wait_pause(self, model: str) -> None:
        while True:
            with self._lock:
                left = self._paused_until.get(model, 0.0) - self._clock()
            if left <= 0:
                return
            await self._sleep(left)

    def _try_hit(self, model: str, tokens: int) -> float | None:
        """Count one request of `tokens` if both windows have room (None); else the seconds
        until the fuller one may have."""
        with self._lock:
            windows = self._windows.get(model)
            if windows is None:
                return None
            # What earlier requests used beyond their count, and the part of a unit they left.
            tokens += self._debt.get(model, 0)
            units, left = divmod(tokens, windows.token_unit)
            hits = [(windows.requests, 1)] if windows.requests is not None else []
            if windows.tokens is not None and units > 0:
                if units > windows.tokens.amount:  # larger than the limit: an empty window
                    units, left = windows.tokens.amount, 0
                hits.append((windows.tokens, units))
            waits = [self._wait_for(item, cost, model) for item, cost in hits]
            if any(w is not None for w in waits):
                return max(w for w in waits if w is not None)
            for item, cost in hits:
                self._strategy.hit(item, model, cost=cost)
            self._debt[model] = left if windows.tokens is not None else 0
            return None

    def _wait_for(self, item: RateLimitItem, cost: int, model: str) -> float | None:
        if self._strategy.test(item, model, cost=cost):
            return None
        reset, _remaining = self._strategy.get_window_stats(item, model)
        return max(reset - time.time(), _MIN_WAIT_S)


@cache
def _window_class() -> Callable[[int, float, str], RateLimitItem]:
    """A `limits` item whose window is any number of seconds (the library's are whole ones;
    its in-memory moving window computes with float timestamps)."""
    from limits import RateLimitItemPerSecond

    class Window(RateLimitItemPerSecond):
        __slots__ = ("seconds",)

        def __init__(self, amount: int, seconds: float, namespace: str) -> None:
            super().__init__(amount, 1, namespace)
            self.seconds = seconds

        def get_expiry(self) -> int:
            return self.seconds  # type: ignore[return-value]  # a float works, see above

    return Window


def local_limiter(
    limits: Mapping[str, RateLimit],
    *,
    window_seconds: int | None = None,
    margin_seconds: float | None = None,
) -> LocalLimiter:
    """An in-process limiter holding `limits` (model -> limit), counted over windows of
    `window_seconds` (default `DEFAULT_WINDOW_S`, a minute; tests use shorter ones, the limits
    then count per window) plus the arrival margin (default: a quarter of the window, at most
    `MAX_MARGIN_S`)."""
    return LocalLimiter(limits, window_seconds=window_seconds, margin_seconds=margin_seconds)


_registered: dict[str, list[RateLimit]] = {}
_owned: LocalLimiter | None = None
"""The limiter `rate_limited` installed, uninstalled when its last experiment ends."""


@contextmanager
def rate_limited(model: str, limit: RateLimit | None) -> Iterator[None]:
    """While the block runs, judge calls of `model` in this process respect `limit`: a
    `LocalLimiter` is installed when none is, and `limit` is set on it (the strictest of the
    limits of the experiments running on `model`). A limiter of another kind (a Ray proxy) is
    left alone: it holds its own limits. None or an unlimited limit changes nothing."""
    if limit is None or limit.is_unlimited():
        yield
        return
    global _installed, _owned
    with _install_lock:
        if _installed is None:
            _installed = _owned = LocalLimiter({})
        limiter = _installed
        if isinstance(limiter, LocalLimiter):
            _registered.setdefault(model, []).append(limit)
            limiter.set_limit(model, _strictest(_registered[model]))
    try:
        yield
    finally:
        if isinstance(limiter, LocalLimiter):
            with _install_lock:
                active = _registered.get(model, [])
                if limit in active:
                    active.remove(limit)
                if not active:
                    _registered.pop(model, None)
                limiter.set_limit(model, _strictest(active) if active else None)
                if not _registered and _installed is _owned:
                    _installed = _owned = None


def _strictest(limits: list[RateLimit]) -> RateLimit:
    def lowest(values: list[int | None]) -> int | None:
        given = [v for v in values if v is not None]
        return min(given) if given else None

    return RateLimit(
        requests_per_minute=lowest([limit.requests_per_minute for limit in limits]),
        tokens_per_minute=lowest([limit.tokens_per_minute for limit in limits]),
    )


def request_tokens(arguments: Mapping[str, Any]) -> int:
    """The tokens a request is counted at before it is sent: its prompt (estimated from its
    characters, erring high) plus the longest answer it may get (`max_tokens`, else
    `DEFAULT_OUTPUT_TOKENS`). Erring high keeps the calls in flight, whose usage is not known
    yet, inside the limit; what a request used beyond it is charged to the next one."""
    answer = DEFAULT_OUTPUT_TOKENS
    for name in ("max_tokens", "max_completion_tokens"):
        value = arguments.get(name)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            answer = value
            break
    return estimated_input_tokens(arguments) + answer


def provider_default(model: str, api_base: str | None = None) -> RateLimit | None:
    """The conservative default for `model` (`PROVIDER_DEFAULTS`, by the provider litellm
    routes it to), or None: an unroutable model, a provider without a default, or a model
    served at an API base that is not the provider's own endpoint (a local server, a proxy)."""
    try:
        _model_id, provider = _litellm.resolve_model(model, api_base)
    except Exception:  # unroutable: the judge call itself will say so
        return None
    if api_base and not is_provider_endpoint(model, provider, api_base):
        return None
    return PROVIDER_DEFAULTS.get(provider)


def experiment_rate_limit(
    model: str | None,
    api_base: str | None,
    given: RateLimit | None,
    routed: RoutedJudge | None = None,
) -> RateLimit | None:
    """The limit an experiment's judge model runs under: each figure of `given` (the
    experiment's `rate_limit`) that is set, else the provider's default (read from `routed`,
    the model routed once, when given); None when nothing limits it (no judge model, or
    neither figure from either)."""
    if not model:
        return None
    if routed is None:
        default = provider_default(model, api_base)
    else:
        default = PROVIDER_DEFAULTS.get(routed.provider) if routed.own_endpoint else None
    limit = given.over(default) if given is not None else default
    return None if limit is None or limit.is_unlimited() else limit


def judge_rate_limit(
    model: str | None,
    api_base: str | None,
    given: RateLimit | None,
    routed: RoutedJudge | None = None,
) -> tuple[str, RateLimit] | None:
    """(model, limit) for `rate_limited`, as an experiment's job takes it; None: no limit."""
    limit = experiment_rate_limit(model, api_base, given, routed)
    return None if limit is None or not model else (model, limit)
