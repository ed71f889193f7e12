"""Per-run overhead of the scorer pipeline: a 4-step function scorer, in µs per run.

    python bench/pipeline_overhead.py [--runs 50000]

Prints µs per `run_sync` and per `await run` (sequential awaits inside one event loop), and for
reference the cost of calling the four step functions directly.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from typing import Any

from core import create_scorer


def preprocess(ctx: Any) -> dict[str, int]:
    return {"words": len(ctx.run.output.split())}


def analyze(ctx: Any) -> dict[str, bool]:
    return {"long_enough": ctx.results.preprocess_step_result["words"] > 5}


def score(ctx: Any) -> float:
    return 1.0 if ctx.results.analyze_step_result["long_enough"] else 0.0


def reason(ctx: Any) -> str:
    return f"Score {ctx.score}: {ctx.results.preprocess_step_result['words']} words."


SCORER = (
    create_scorer(id="four-steps", description="A four-step function scorer")
    .preprocess(preprocess)
    .analyze(analyze)
    .generate_score(score)
    .generate_reason(reason)
)
INPUT = "What is machine learning?"
OUTPUT = "Machine learning is a field of AI in which systems learn patterns from data."


def per_run_us(function: Any, runs: int) -> float:
    for _ in range(min(runs // 10, 2000)):  # warm-up
        function()
    started = time.perf_counter()
    for _ in range(runs):
        function()
    return (time.perf_counter() - started) / runs * 1e6


async def awaited_us(runs: int) -> float:
    for _ in range(min(runs // 10, 2000)):
        await SCORER.run(input=INPUT, output=OUTPUT)
    started = time.perf_counter()
    for _ in range(runs):
        await SCORER.run(input=INPUT, output=OUTPUT)
    return (time.perf_counter() - started) / runs * 1e6


class _Bag:
    """The cheapest possible stand-in for the step context, for the baseline."""

    __slots__ = (
        "analyze_step_result",
        "output",
        "preprocess_step_result",
        "results",
        "run",
        "score",
    )


def _ctx() -> _Bag:
    ctx, run, results = _Bag(), _Bag(), _Bag()
    run.output = OUTPUT
    ctx.run, ctx.results, ctx.score = run, results, None
    return ctx


def bare_steps() -> None:
    ctx = _ctx()
    ctx.results.preprocess_step_result = preprocess(ctx)
    ctx.results.analyze_step_result = analyze(ctx)
    ctx.score = score(ctx)
    reason(ctx)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50_000)
    runs = parser.parse_args().runs
    assert SCORER.run_sync(input=INPUT, output=OUTPUT).score == 1.0
    sync_us = per_run_us(lambda: SCORER.run_sync(input=INPUT, output=OUTPUT), runs)
    async_us = asyncio.run(awaited_us(runs))
    bare_us = per_run_us(bare_steps, runs)
    print(f"4-step function scorer, {runs} runs each")
    print(f"  run_sync      {sync_us:8.1f} µs/run  ({1e6 / sync_us:,.0f} runs/s)")
    print(f"  await run     {async_us:8.1f} µs/run  ({1e6 / async_us:,.0f} runs/s)")
    print(f"  bare steps    {bare_us:8.1f} µs/run  (the four functions called directly)")
    print(f"  overhead      {sync_us - bare_us:8.1f} µs/run over the bare steps (run_sync)")


if __name__ == "__main__":
    main()
