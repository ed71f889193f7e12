"""The judge rate limit (scorelab issue 15, point 3): requests and tokens per window per judge
model, measured on the fake judge's request log (its arrival times), and a 429 that pauses
every caller of the model. Windows are 1 s long (`local_limiter(window_seconds=1)`) so that the
tests stay fast; a limit then counts per window instead of per minute."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from pydantic import ValidationError

from core import JudgeConfig, PromptStep, Scorer, create_scorer
from core.judge import rate_limit, retry
from core.judge.rate_limit import (
    PROVIDER_DEFAULTS,
    LocalLimiter,
    RateLimit,
    current_limiter,
    experiment_rate_limit,
    install_limiter,
    local_limiter,
    rate_limited,
)
from core.records import ExperimentConfig, ScorerSpec
from core.testing import FakeJudge, Fault, Reply

WINDOW = 1.0
"""Seconds per window in these tests."""


def busiest_window(times: Sequence[float], weights: Sequence[int] | None = None) -> int:
    """The most any window of `WINDOW` seconds (starting at any arrival) holds: requests, or
    the sum of `weights` (tokens) of the requests in it."""
    weights = [1] * len(times) if weights is None else weights
    pairs = sorted(zip(times, weights, strict=True))
    best = 0
    for i, (start, _weight) in enumerate(pairs):
        # A window is half-open: an arrival exactly WINDOW later is in the next one.
        best = max(best, sum(w for t, w in pairs[i:] if t < start + WINDOW - 1e-3))
    return best


@pytest.fixture(autouse=True)
def no_limiter() -> Iterator[None]:
    """Every test starts and ends with no limiter installed."""
    install_limiter(None)
    yield
    install_limiter(None)


def score_scorer(judge: JudgeConfig) -> Scorer:
    step = PromptStep(description="Score", create_prompt=lambda ctx: "score this")
    return create_scorer(id="judged", description="d", judge=judge).generate_score(step)


async def warmed(judge: JudgeConfig, server: FakeJudge) -> Scorer:
    """A scorer whose first call (litellm's client set-up, up to a second on a loaded machine,
    between the limiter's turn and the request's arrival) has been made, and the log reset."""
    scorer = score_scorer(judge)
    await scorer.run(output="warm-up")
    server.reset()
    return scorer


def log_of(judge: FakeJudge) -> list[dict[str, Any]]:
    log: list[dict[str, Any]] = judge.stats()["log"]
    return log


# ---- the record and its errors -------------------------------------------------------------


@pytest.mark.parametrize("bad", [0, -5, 1.5, "60", True])
@pytest.mark.parametrize("field", ["requests_per_minute", "tokens_per_minute"])
def test_a_bad_figure_is_refused_naming_the_field(field: str, bad: object) -> None:
    with pytest.raises(ValidationError) as caught:
        RateLimit.model_validate({field: bad})
    assert field in str(caught.value)


def test_a_bad_rate_limit_refuses_the_experiment_config() -> None:
    with pytest.raises(ValidationError) as caught:
        ExperimentConfig(
            dataset_id="d",
            scorers=[ScorerSpec(scorer_id="s")],
            rate_limit={"requestsPerMinute": 0},
        )
    assert "rate_limit.requestsPerMinute" in str(caught.value)
    assert "greater than 0" in str(caught.value)


def test_the_record_speaks_camel_case() -> None:
    limit = RateLimit(requests_per_minute=10, tokens_per_minute=2000)
    assert limit.model_dump() == {"requestsPerMinute": 10, "tokensPerMinute": 2000}
    assert RateLimit.model_validate_json('{"requestsPerMinute": 10}').requests_per_minute == 10


@pytest.mark.parametrize("bad", [0, -1, 1.5, True])
def test_a_bad_window_is_refused(bad: Any) -> None:
    with pytest.raises((TypeError, ValueError), match="window_seconds"):
        local_limiter({}, window_seconds=bad)


# ---- defaults per provider -----------------------------------------------------------------


def test_a_provider_model_gets_its_default_and_the_experiment_overrides_each_figure() -> None:
    default = PROVIDER_DEFAULTS["openai"]
    assert experiment_rate_limit("openai/gpt-4o-mini", None, None) == default
    own_endpoint = experiment_rate_limit("openai/gpt-4o-mini", "https://api.openai.com/v1", None)
    assert own_endpoint == default
    mine = experiment_rate_limit("openai/gpt-4o-mini", None, RateLimit(requests_per_minute=7))
    assert mine == RateLimit(requests_per_minute=7, tokens_per_minute=default.tokens_per_minute)
    anthropic = experiment_rate_limit("anthropic/claude-3-5-haiku-latest", None, None)
    assert anthropic == PROVIDER_DEFAULTS["anthropic"]


def test_a_model_at_another_api_base_or_unknown_has_no_default(judge_server: FakeJudge) -> None:
    assert experiment_rate_limit("openai/fake", judge_server.url, None) is None
    assert experiment_rate_limit("ollama/llama3", None, None) is None
    assert experiment_rate_limit(None, None, RateLimit(requests_per_minute=5)) is None
    given = RateLimit(tokens_per_minute=900)
    assert experiment_rate_limit("openai/fake", judge_server.url, given) == given


def test_a_request_counts_its_prompt_and_its_longest_answer() -> None:
    messages = [{"role": "user", "content": "x" * 300}]
    bare = rate_limit.request_tokens({"messages": messages})
    capped = rate_limit.request_tokens({"messages": messages, "max_tokens": 40})
    assert bare - capped == rate_limit.DEFAULT_OUTPUT_TOKENS - 40
    assert capped > 300 // 3 + 40  # the prompt errs high (3 characters a token)
    longer = rate_limit.request_tokens({"messages": [{"content": "x" * 600}], "max_tokens": 40})
    assert longer - capped == 100


# ---- the local limiter alone ---------------------------------------------------------------


async def test_no_window_admits_more_requests_than_the_limit() -> None:
    limiter = local_limiter({"m": RateLimit(requests_per_minute=4)}, window_seconds=1)
    admitted: list[float] = []

    async def one() -> None:
        await limiter.acquire("m", 1)
        admitted.append(time.time())

    started = time.time()
    await asyncio.gather(*(one() for _ in range(10)))
    assert busiest_window(admitted) == 4
    # 10 requests at 4 a window: the last two waited for the third window.
    assert max(admitted) - started >= 2 * WINDOW - 0.05


async def test_no_window_admits_more_tokens_than_the_limit() -> None:
    limiter = local_limiter({"m": RateLimit(tokens_per_minute=100)}, window_seconds=1)
    admitted: list[float] = []

    async def one() -> None:
        await limiter.acquire("m", 30)
        admitted.append(time.time())

    await asyncio.gather(*(one() for _ in range(7)))
    assert busiest_window(admitted, [30] * 7) <= 100
    assert busiest_window(admitted) == 3  # 3 x 30 fit, a fourth does not


async def test_other_models_are_not_held_back() -> None:
    limiter = local_limiter({"slow": RateLimit(requests_per_minute=1)}, window_seconds=1)
    await limiter.acquire("slow", 1)
    started = time.perf_counter()
    await asyncio.gather(*(limiter.acquire("other", 1_000_000) for _ in range(50)))
    assert time.perf_counter() - started < WINDOW / 2


async def test_tokens_used_beyond_the_estimate_are_charged_to_the_next_request() -> None:
    limiter = local_limiter({"m": RateLimit(tokens_per_minute=50)}, window_seconds=1)
    await limiter.acquire("m", 10)
    await limiter.settle("m", estimated=10, used=45)  # 35 more than counted
    started = time.perf_counter()
    await limiter.acquire("m", 10)  # 10 + 35 owed: 55 in the window, over 50
    assert time.perf_counter() - started >= WINDOW - 0.1


async def test_tokens_estimated_beyond_use_offset_what_is_owed_only() -> None:
    limiter = local_limiter({"m": RateLimit(tokens_per_minute=50)}, window_seconds=1)
    await limiter.acquire("m", 10)
    await limiter.settle("m", estimated=10, used=40)  # 30 owed
    await limiter.settle("m", estimated=30, used=5)  # 25 over-counted: 5 owed
    started = time.perf_counter()
    await limiter.acquire("m", 30)  # 10 + 30 + 5 = 45: fits
    assert time.perf_counter() - started < WINDOW / 2


async def test_a_large_token_limit_counts_in_units_without_rounding_each_request_up() -> None:
    # 200,000 tokens a window are counted in 10,000 units of 20 tokens; requests of 55 tokens
    # (2.75 units) carry their part of a unit to the next one instead of counting 3.
    limiter = local_limiter({"m": RateLimit(tokens_per_minute=200_000)}, window_seconds=1)
    started = time.perf_counter()
    for _ in range(3_636):  # 3,636 x 55 = 199,980 tokens: all in the first window
        await limiter.acquire("m", 55)
    assert time.perf_counter() - started < WINDOW / 2
    await limiter.acquire("m", 55)  # 200,035: over the limit, waits for the next window
    assert time.perf_counter() - started >= WINDOW - 0.1


async def test_a_request_larger_than_the_token_limit_waits_for_an_empty_window() -> None:
    limiter = local_limiter({"m": RateLimit(tokens_per_minute=100)}, window_seconds=1)
    await limiter.acquire("m", 1_000)  # alone in its window: admitted
    started = time.perf_counter()
    await limiter.acquire("m", 1)
    assert time.perf_counter() - started >= WINDOW - 0.1


class FakeClock:
    """A clock that moves only when someone sleeps on it."""

    def __init__(self) -> None:
        self.now = 100.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds
        await asyncio.sleep(0)


async def test_slow_down_pauses_every_caller_of_the_model_and_keeps_the_longest_pause() -> None:
    clock = FakeClock()
    limiter = LocalLimiter({}, clock=clock, sleep=clock.sleep)
    await limiter.slow_down("m", 5.0)
    await limiter.slow_down("m", 2.0)  # shorter: the 5 s pause stays
    await asyncio.gather(*(limiter.acquire("m", 1) for _ in range(3)))
    assert clock.now == pytest.approx(105.0)
    await limiter.acquire("other", 1)  # another model was never paused
    assert clock.now == pytest.approx(105.0)
    await limiter.slow_down("m", 0)  # nothing to wait
    await limiter.acquire("m", 1)
    assert clock.now == pytest.approx(105.0)


async def test_a_pause_extended_while_waiting_is_waited_whole() -> None:
    clock = FakeClock()
    limiter = LocalLimiter({}, clock=clock, sleep=clock.sleep)
    await limiter.slow_down("m", 1.0)
    waiter = asyncio.create_task(limiter.acquire("m", 1))
    await asyncio.sleep(0)  # the waiter sleeps its first second
    await limiter.slow_down("m", 3.0)  # from t=100 + (up to) 1: until about 104
    await waiter
    assert clock.now >= 103.0


# ---- installed for a run -------------------------------------------------------------------


def test_rate_limited_installs_a_limiter_for_its_model_and_takes_it_away() -> None:
    assert current_limiter() is None
    outer = RateLimit(requests_per_minute=100, tokens_per_minute=5000)
    inner = RateLimit(requests_per_minute=40)
    with rate_limited("m", outer):
        limiter = current_limiter()
        assert isinstance(limiter, LocalLimiter)
        assert limiter.limits == {"m": outer}
        with rate_limited("m", inner):  # two experiments on one model: the strictest of each
            assert limiter.limits == {
                "m": RateLimit(requests_per_minute=40, tokens_per_minute=5000)
            }
        assert limiter.limits == {"m": outer}
    assert current_limiter() is None
    with rate_limited("m", None):
        assert current_limiter() is None


def test_rate_limited_leaves_a_limiter_of_another_kind_alone() -> None:
    class Proxy:
        async def acquire(self, model: str, tokens: int) -> None: ...
        async def settle(self, model: str, estimated: int, used: int) -> None: ...
        async def slow_down(self, model: str, seconds: float) -> None: ...

    proxy = Proxy()
    assert isinstance(proxy, rate_limit.Limiter)
    install_limiter(proxy)
    with rate_limited("m", RateLimit(requests_per_minute=1)):
        assert current_limiter() is proxy
    assert current_limiter() is proxy


# ---- the judge call path, measured at the fake judge ---------------------------------------


async def test_judge_requests_respect_the_request_limit(
    judge_server: FakeJudge, judge_config: JudgeConfig
) -> None:
    scorer = await warmed(judge_config, judge_server)
    install_limiter(
        local_limiter(
            {judge_config.model or "": RateLimit(requests_per_minute=3)}, window_seconds=1
        )
    )
    started = time.time()
    results = await asyncio.gather(*(scorer.run(output=f"o{i}") for i in range(8)))
    arrivals = [entry["at"] for entry in log_of(judge_server)]
    assert len(arrivals) == 8
    assert busiest_window(arrivals) <= 3 + 1  # within one request (arrival jitter)
    assert max(arrivals) - started >= 2 * WINDOW - 0.1  # 8 at 3 a window: three windows
    # The wait for the limit is not the judge's duration: every step was answered at once.
    durations = [r.judge["generateScore"].executions[0].duration_ms for r in results if r.judge]
    assert len(durations) == 8 and max(durations) < 900


async def test_judge_tokens_respect_the_token_limit(
    judge_server: FakeJudge, judge_config: JudgeConfig
) -> None:
    # Each answer reports 200 tokens; a request is counted at its prompt plus the longest
    # answer it may get (256 without max_tokens) until its usage comes back.
    judge_server.responder = lambda _request: Reply(
        '{"score": 1}', prompt_tokens=10, completion_tokens=190, total_tokens=200
    )
    limit = 1100  # three requests a window (each counted at ~340 until it returns)
    scorer = await warmed(judge_config, judge_server)
    install_limiter(
        local_limiter(
            {judge_config.model or "": RateLimit(tokens_per_minute=limit)}, window_seconds=1
        )
    )
    await asyncio.gather(*(scorer.run(output=f"o{i}") for i in range(8)))
    log = log_of(judge_server)
    assert len(log) == 8
    times = [entry["at"] for entry in log]
    tokens = [entry["totalTokens"] for entry in log]
    assert busiest_window(times, tokens) <= limit + 200  # within one request
    assert max(times) - min(times) >= 2 * WINDOW - 0.1  # 1,600 tokens: three windows


async def test_a_429_seen_by_one_caller_delays_every_other(
    judge_server: FakeJudge, judge_config: JudgeConfig, retry_waits: list[float]
) -> None:
    install_limiter(local_limiter({}, window_seconds=1))  # no limit: only the 429 pauses
    judge_server.script(Fault(429, "slow down", retry_after="1"))
    scorer = score_scorer(judge_config.model_copy(update={"model_settings": {"num_retries": 2}}))

    async def later(i: int) -> Any:
        await asyncio.sleep(0.2)  # after the 429 came back
        return await scorer.run(output=f"later{i}")

    await asyncio.gather(scorer.run(output="first"), *(later(i) for i in range(3)))
    log = log_of(judge_server)
    assert [entry["status"] for entry in log].count(429) == 1
    refused_at = next(entry["at"] for entry in log if entry["status"] == 429)
    others = [entry["at"] for entry in log if entry["status"] == 200]
    assert len(others) == 4  # the three later callers and the retry of the first
    assert min(others) >= refused_at + 1.0 - 0.05
    assert retry_waits  # the first caller's own retry wait (recorded, not slept)


async def test_without_a_limiter_a_429_delays_only_its_caller(
    judge_server: FakeJudge, judge_config: JudgeConfig, retry_waits: list[float]
) -> None:
    judge_server.script(Fault(429, "slow down", retry_after="1"))
    scorer = score_scorer(judge_config.model_copy(update={"model_settings": {"num_retries": 2}}))

    async def later() -> Any:
        await asyncio.sleep(0.2)
        return await scorer.run(output="later")

    await asyncio.gather(scorer.run(output="first"), later())
    log = log_of(judge_server)
    refused_at = next(entry["at"] for entry in log if entry["status"] == 429)
    assert min(e["at"] for e in log if e["status"] == 200) < refused_at + 0.9


async def test_every_retry_asks_the_limiter(
    judge_server: FakeJudge, judge_config: JudgeConfig, retry_waits: list[float]
) -> None:
    calls: list[tuple[str, Any]] = []

    class Recorder:
        async def acquire(self, model: str, tokens: int) -> None:
            calls.append(("acquire", tokens))

        async def settle(self, model: str, estimated: int, used: int) -> None:
            calls.append(("settle", used))

        async def slow_down(self, model: str, seconds: float) -> None:
            calls.append(("slow_down", seconds))

    install_limiter(Recorder())
    judge_server.script(Fault(500), Fault(429, retry_after="3"), '{"score": 1}')
    scorer = score_scorer(judge_config.model_copy(update={"model_settings": {"num_retries": 2}}))
    await scorer.run(output="o")
    kinds = [kind for kind, _value in calls]
    assert kinds == [
        "acquire", "settle",  # the 500: no pause, nothing used
        "acquire", "slow_down", "settle",  # the 429: every caller pauses 3 s
        "acquire", "settle",  # the answer: its 30 tokens
    ]  # fmt: skip
    assert calls[3] == ("slow_down", 3.0)
    assert calls[1] == ("settle", 0) and calls[-1] == ("settle", 30)
    estimate = calls[0][1]
    assert isinstance(estimate, int) and estimate > 0
    assert retry.pause_seconds(1, Exception()) == retry.BACKOFF_INITIAL_S
