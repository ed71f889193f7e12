"""The judge cache and the spend-cap guard: what a cached answer costs next to a provider call,
and what the cost estimate takes.

    python bench/judge_cache.py [--items 300]

N items × one prompt-step scorer against a loopback fake judge (its own process, answering at
once, so the provider call is the client's own cost: litellm and HTTP), three ways: the cache
off, the cache on and empty (every call paid and stored), the cache on and full (every answer
from the SQLite file). Then the same scorer under a spend cap it never reaches (the guard's
cost per call), and `Service.estimate_cost`'s dry run over a 20-item sample.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import _loopback_judge as loopback

from core import JudgeConfig, PromptStep, Scorer, create_scorer, run_evals
from core.experiments.engine import run_experiment
from core.experiments.estimate import sample_judge_requests
from core.judge import cache as judge_cache
from core.judge.budget import JudgeBudget
from core.judge.estimate import cost_estimate
from core.records import DatasetItem

PRICED = "openai/gpt-4o-mini"  # priced in litellm's table; the fake judge answers for it


def scorer(url: str, cache: bool, model: str = loopback.MODEL) -> Scorer:
    judge = JudgeConfig(
        model=model,
        instructions=loopback.INSTRUCTIONS,
        api_base=url,
        api_key="bench",
        model_settings={"num_retries": 0},
        cache=cache or None,
    )
    step = PromptStep(description="Score", create_prompt=lambda ctx: f"Score {ctx.run.input}")
    return create_scorer(id="judge-score", description="One step", judge=judge).generate_score(step)


async def per_call_us(url: str, items: int, cache: bool) -> float:
    data = [{"input": i, "output": "4"} for i in range(items)]
    started = time.perf_counter()
    await run_evals(data=data, scorers=[scorer(url, cache)], concurrency=1)
    return (time.perf_counter() - started) / items * 1e6


async def capped_us(url: str, items: int, cap: float | None) -> float:
    runs = [DatasetItem(id=str(i), input=i, output="4") for i in range(items)]
    budget = None if cap is None else JudgeBudget(cap)
    started = time.perf_counter()
    summary = await run_experiment(
        items=runs, scorers=[scorer(url, False, PRICED)], concurrency=1, budget=budget
    )
    assert summary.status == "completed"
    return (time.perf_counter() - started) / items * 1e6


async def measure(url: str, items: int) -> None:
    await per_call_us(url, 20, False)  # warm-up: imports, connection pool
    print(f"{items} items, concurrency 1, fake judge at {url}")
    off = await per_call_us(url, items, False)
    filling = await per_call_us(url, items, True)
    full = await per_call_us(url, items, True)
    print(f"  cache off          {off:9.0f} µs per scorer run (a provider call)")
    print(f"  cache on, empty    {filling:9.0f} µs per run (provider call + lookup + store)")
    print(f"  cache on, full     {full:9.0f} µs per run (answered from the cache)")
    store = judge_cache.judge_cache()
    key = judge_cache.cache_key({"model": "m", "messages": [{"role": "user", "content": "x"}]})
    await store.put(key, {"content": '{"score": 1}'})
    started = time.perf_counter()
    for _ in range(2_000):
        await store.get(key)
    print(f"  one cache lookup   {(time.perf_counter() - started) / 2_000 * 1e6:9.1f} µs (SQLite)")
    # Twice each, alternating, the best kept: the loopback's noise is larger than the guard.
    free = min([await capped_us(url, items, None), await capped_us(url, items, None)])
    guarded = min([await capped_us(url, items, 1_000.0), await capped_us(url, items, 1_000.0)])
    print(f"  no cap             {free:9.0f} µs per run ({PRICED})")
    print(f"  under a cap        {guarded:9.0f} µs per run (reserve + settle per call)")
    sample = [DatasetItem(id=str(i), input=i, output="4 " * i) for i in range(20)]
    started = time.perf_counter()
    requests = await sample_judge_requests([scorer(url, False, PRICED)], sample)
    estimate = cost_estimate(PRICED, requests, 10_000)
    print(
        f"  estimate, 20 items {(time.perf_counter() - started) * 1e3:9.0f} ms "
        f"(for 10,000 items: ${estimate.cost_usd_low:.4f}–${estimate.cost_usd_high:.4f})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=300)
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        os.environ[judge_cache.CACHE_ENV] = folder
        process, url = loopback.start_fake_judge()
        try:
            asyncio.run(measure(url, arguments.items))
        finally:
            process.terminate()
            process.wait()


if __name__ == "__main__":
    main()
