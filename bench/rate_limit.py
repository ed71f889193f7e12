"""The judge rate limit (core/judge/rate_limit.py): what the local limiter costs per request,
and how close to its limit it runs.

    python bench/rate_limit.py [--seconds 6]

1. Overhead: `acquire` + `settle` of a model whose limit is never reached (requests and
   tokens), per call, on one event loop: the price every judge request pays under a limit.
2. Pacing: 50 concurrent callers against a limit of 40 requests per 1 s window (the same code
   with a minute's window, scaled down) for `--seconds`: the busiest window (must not pass the
   limit) and the achieved rate as a share of the limit (the arrival margin, a quarter of a
   1 s window here and 1/60 of a minute in production, costs part of it).
3. The same with a tokens-per-window limit (callers of 100 tokens, 2,000 per window).
"""

from __future__ import annotations

import argparse
import asyncio
import time

from core.judge.rate_limit import RateLimit, local_limiter


async def overhead(calls: int) -> float:
    """Microseconds per acquire + settle under a limit never reached."""
    limit = RateLimit(requests_per_minute=10**9, tokens_per_minute=10**9)
    limiter = local_limiter({"m": limit})
    started = time.perf_counter()
    for _ in range(calls):
        await limiter.acquire("m", 400)
        await limiter.settle("m", 400, 350)
    return (time.perf_counter() - started) / calls * 1e6


def busiest(times: list[float], weights: list[int], window: float) -> int:
    pairs = sorted(zip(times, weights, strict=True))
    best, j, total = 0, 0, 0
    for i, (start, _w) in enumerate(pairs):
        while j < len(pairs) and pairs[j][0] < start + window:
            total += pairs[j][1]
            j += 1
        best = max(best, total)
        total -= pairs[i][1]
    return best


async def pacing(limit: RateLimit, tokens: int, seconds: float) -> tuple[int, float, int]:
    """(busiest window, admitted per window on average, admitted) over `seconds`."""
    limiter = local_limiter({"m": limit}, window_seconds=1)
    admitted: list[float] = []
    deadline = time.time() + seconds

    async def caller() -> None:
        while time.time() < deadline:
            await limiter.acquire("m", tokens)
            admitted.append(time.time())

    await asyncio.gather(*(caller() for _ in range(50)))
    span = max(admitted) - min(admitted)
    per_window = (len(admitted) - 1) / span if span else float(len(admitted))
    weights = [tokens] * len(admitted)
    return busiest(admitted, weights, 1.0), per_window, len(admitted)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=6.0)
    parser.add_argument("--calls", type=int, default=20_000)
    arguments = parser.parse_args()

    micros = asyncio.run(overhead(arguments.calls))
    print(f"overhead: {micros:.1f} µs per acquire + settle ({arguments.calls:,} calls)")

    rpm = RateLimit(requests_per_minute=40)
    top, rate, count = asyncio.run(pacing(rpm, 1, arguments.seconds))
    print(
        f"requests: limit 40 per 1 s window, busiest window {top}, "
        f"{rate:.1f} per second achieved ({rate / 40:.0%} of the limit), {count} admitted"
    )
    tpm = RateLimit(tokens_per_minute=2_000)
    top, rate, count = asyncio.run(pacing(tpm, 100, arguments.seconds))
    print(
        f"tokens: limit 2,000 per 1 s window, busiest window {top} tokens, "
        f"{rate * 100:.0f} tokens per second achieved ({rate * 100 / 2000:.0%}), {count} admitted"
    )


if __name__ == "__main__":
    main()
