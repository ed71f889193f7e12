"""Judge-bound throughput: N items × one prompt-step scorer against a loopback fake judge, next to
raw `litellm.acompletion` calls at the same concurrency.

    python bench/judge_throughput.py [--items 300] [--concurrency 1 8 32]

The fake judge (core.testing.fake_judge) runs in its own process, as a real provider would, and
answers instantly, so the figures measure the client side: litellm plus our pipeline. Target:
the scorer pipeline reaches at least 80% of the raw calls/s at each concurrency.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import _loopback_judge as loopback

from core import JudgeConfig, PromptStep, create_scorer, run_evals

MODEL, INSTRUCTIONS = loopback.MODEL, loopback.INSTRUCTIONS
start_fake_judge = loopback.start_fake_judge


def prompt_for(index: int) -> str:
    return f"Score this answer from 0 to 1.\nQuestion {index}: what is 2+2?\nAnswer: 4"


async def raw_calls(url: str, items: int, concurrency: int) -> float:
    return await loopback.raw_calls(url, items, concurrency, prompt_for)


async def scorer_calls(url: str, items: int, concurrency: int) -> float:
    judge = JudgeConfig(
        model=MODEL,
        instructions=INSTRUCTIONS,
        api_base=url,
        api_key="bench",
        model_settings={"num_retries": 0},
    )
    scorer = create_scorer(id="judge-score", description="One prompt step", judge=judge)
    scorer = scorer.generate_score(
        PromptStep(description="Score", create_prompt=lambda ctx: prompt_for(ctx.run.input))
    )
    data = [{"input": i, "output": "4"} for i in range(items)]
    started = time.perf_counter()
    result = await run_evals(data=data, scorers=[scorer], concurrency=concurrency)
    elapsed = time.perf_counter() - started
    assert result.summary.total_items == items and result.scores == {"judge-score": 1}
    return items / elapsed


async def measure(url: str, items: int, levels: list[int]) -> None:
    await raw_calls(url, 20, 4)  # warm-up: imports, connection pool
    await scorer_calls(url, 20, 4)
    print(f"{items} items per measurement; fake judge at {url}")
    print(f"{'concurrency':>11} {'raw calls/s':>12} {'scorer runs/s':>14} {'ratio':>7}")
    for level in levels:
        # Best of two, interleaved, so that a hiccup of the machine does not decide the ratio.
        raw = scored = 0.0
        for _ in range(2):
            raw = max(raw, await raw_calls(url, items, level))
            scored = max(scored, await scorer_calls(url, items, level))
        print(f"{level:>11} {raw:>12.1f} {scored:>14.1f} {scored / raw:>6.0%}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=300)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 8, 32])
    arguments = parser.parse_args()
    process, url = start_fake_judge()
    try:
        asyncio.run(measure(url, arguments.items, arguments.concurrency))
    finally:
        process.terminate()
        process.wait()


if __name__ == "__main__":
    main()
